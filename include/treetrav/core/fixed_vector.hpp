#pragma once

#include <Kokkos_Core.hpp>

namespace treetrav {

// N numbers as one value, usable on the device (a View of Kokkos::Array
// would be a rank-2 View).
template <class T, int N>
struct FixedVector {
  T component[N];
  KOKKOS_FUNCTION T& operator[](int i) { return component[i]; }
  KOKKOS_FUNCTION T const& operator[](int i) const { return component[i]; }
};

}  // namespace treetrav
