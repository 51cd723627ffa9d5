#pragma once

#include <treetrav/core/config.hpp>

namespace treetrav {

namespace detail {

// a * b + c with the product and the sum rounded separately, never
// contracted into an FMA: nvcc contracts a * b + c differently in different
// kernels (and the host not at all), which would change the last bit of a
// distance between strategies and backends and break exact tie-breaking.
KOKKOS_FORCEINLINE_FUNCTION Coordinate multiply_then_add(Coordinate a, Coordinate b, Coordinate c) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a, b), c);
#else
  return a * b + c;  // x86-64 hosts have no FMA unless asked (-mfma)
#endif
}

KOKKOS_FORCEINLINE_FUNCTION Coordinate add_square(Coordinate sum, Coordinate diff) {
  return multiply_then_add(diff, diff, sum);
}

// diff * diff, rounded once: add_square(0, diff) exactly (0 + x is x for
// every x >= 0), one addition fewer for a sum's first term.
KOKKOS_FORCEINLINE_FUNCTION Coordinate square(Coordinate diff) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(diff, diff);
#else
  return diff * diff;
#endif
}

}  // namespace detail

// Squared Euclidean distance between row i of `a` and row j of `b` (both
// n x d SoA views). Every strategy and the brute-force oracles call this one
// function, so equal inputs give bit-equal distances and tie-breaking by index
// is exact across strategies.
template <class ViewA, class ViewB>
KOKKOS_FORCEINLINE_FUNCTION Coordinate distance2(ViewA const& a, Index i, ViewB const& b, Index j) {
  Coordinate sum = 0;
  int const dimension = static_cast<int>(a.extent(1));
  for (int k = 0; k < dimension; ++k) {
    sum = detail::add_square(sum, a(i, k) - b(j, k));
  }
  return sum;
}

}  // namespace treetrav
