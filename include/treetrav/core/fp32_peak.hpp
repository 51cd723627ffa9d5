#pragma once

// The GPU's FP32 peak, the bar a force walk's achieved flop rate is set
// against (nbody --count-interactions, perf/bench_nbody).
#include <treetrav/core/backends.hpp>

#include <Kokkos_Core.hpp>

namespace treetrav {

// Flop/s, a fused multiply-add two: its SMs x FP32 lanes an SM (64 up to
// compute capability 8.0, 128 from 8.6 on, Hopper included) x 2 x its clock;
// 0 on host backends, whose vector width and clock are not known here.
template <class ExecutionSpace>
double fp32_peak_flops_per_second(ExecutionSpace const& space) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#ifdef KOKKOS_ENABLE_CUDA
    int const device = space.cuda_device();
    int sms = 0, major = 0, minor = 0, kilohertz = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&kilohertz, cudaDevAttrClockRate, device) != cudaSuccess)
      return 0;
    int const lanes = major > 8 || (major == 8 && minor >= 6) ? 128 : 64;
    return double(sms) * lanes * 2 * double(kilohertz) * 1e3;
#endif
  }
  (void)space;
  return 0;
}

} // namespace treetrav
