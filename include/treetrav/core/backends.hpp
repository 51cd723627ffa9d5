#pragma once

#include <treetrav/core/config.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace treetrav {

// The Kokkos execution spaces a user can pick at run time (--backend).
enum class Backend { serial, openmp, cuda };

std::string to_string(Backend backend);
// Throws InputError naming the value when it is unknown or not enabled in this build.
Backend parse_backend(std::string const& name);
std::vector<Backend> enabled_backends();
// The fastest enabled backend: cuda, else openmp, else serial.
Backend default_backend();

// True for Kokkos::Cuda (false in builds without CUDA).
template <class ExecutionSpace>
inline constexpr bool is_cuda_space_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<ExecutionSpace, Kokkos::Cuda>;
#else
    false;
#endif

// Calls f(ExecutionSpace{}) with the execution space behind `backend`, so a
// run-time choice becomes one template instantiation per enabled space.
template <class F>
decltype(auto) dispatch_backend(Backend backend, F&& f) {
  switch (backend) {
#ifdef KOKKOS_ENABLE_CUDA
    case Backend::cuda: return f(Kokkos::Cuda{});
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case Backend::openmp: return f(Kokkos::OpenMP{});
#endif
#ifdef TREETRAV_ENABLE_SERIAL
    case Backend::serial: return f(Kokkos::Serial{});
#endif
    default: break;
  }
  throw std::invalid_argument("backend " + to_string(backend) + " is not enabled in this build");
}

namespace detail {

// A policy whose kernels take their functor as a kernel argument. Kokkos'
// default on CUDA passes a functor of 512 B to 32 KB through a __constant__
// buffer, one per translation unit: a kernel instantiated in two units of one
// binary (the CLI's bh-force and nbody both walk octrees) may then read the
// other unit's buffer, stale. Functors up to 4 KB fit a kernel argument
// (larger ones go through global memory). No effect on host backends.
template <class Policy>
auto as_kernel_argument(Policy const& policy) {
  return Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

}  // namespace detail

// What results tables name as their machine: the execution space and the GPU
// it runs on, or its thread count on the host.
template <class ExecutionSpace>
std::string describe_execution_space() {
  std::string description = ExecutionSpace::name();
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#ifdef KOKKOS_ENABLE_CUDA
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, ExecutionSpace().cuda_device()) == cudaSuccess)
      description += std::string(" (") + properties.name + ")";
#endif
  } else {
    description += " (" + std::to_string(ExecutionSpace().concurrency()) + " threads)";
  }
  return description;
}

}  // namespace treetrav
