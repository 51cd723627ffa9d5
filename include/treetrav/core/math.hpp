#pragma once

#include <Kokkos_Core.hpp>

namespace treetrav::math {

// Kokkos moved its math functions out of Experimental in 3.7.
#if KOKKOS_VERSION >= 30700
using Kokkos::sqrt;
#else
using Kokkos::Experimental::sqrt;
#endif

// 1 / sqrt(x) in float: the GPU's reciprocal square root instruction (within
// 2 ulp), a division of the correctly rounded sqrt on host backends.
KOKKOS_FORCEINLINE_FUNCTION float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / sqrt(x);
#endif
}

}  // namespace treetrav::math
