#pragma once

#include <treetrav/core/config.hpp>

namespace treetrav {

// Squared Euclidean distance between row i of `a` and row j of `b` (both
// n x d SoA views). Every strategy and the brute-force oracles call this one
// function, so equal inputs give bit-equal distances and tie-breaking by index
// is exact across strategies.
template <class ViewA, class ViewB>
KOKKOS_FORCEINLINE_FUNCTION Coordinate distance2(ViewA const& a, Index i, ViewB const& b, Index j) {
  Coordinate sum = 0;
  int const dimension = static_cast<int>(a.extent(1));
  for (int k = 0; k < dimension; ++k) {
    Coordinate const diff = a(i, k) - b(j, k);
    sum += diff * diff;
  }
  return sum;
}

}  // namespace treetrav
