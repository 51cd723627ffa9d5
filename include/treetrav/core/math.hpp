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
// 2 ulp), a division of the correctly rounded sqrt on host backends. On the
// GPU without rsqrtf's rescaling of subnormal inputs (a compare and two
// multiplies around each instruction, in the force walk's inner loop): the
// instruction's result is the same for every normal x, and for a subnormal x
// (distances below 1e-19) both overflow a float's 1 / r^3 alike.
KOKKOS_FORCEINLINE_FUNCTION float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / sqrt(x);
#endif
}

}  // namespace treetrav::math
