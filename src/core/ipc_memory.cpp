// Device memory that CUDA IPC can map (core/detail/ipc_buffer.hpp says why it
// is not Kokkos' own).
#include <treetrav/core/detail/ipc_buffer.hpp>

#include <stdexcept>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace treetrav::detail {

void* allocate_ipc_memory(std::size_t bytes, std::string const& label) {
#if defined(KOKKOS_ENABLE_CUDA)
  void* memory = nullptr;
  cudaError_t const error = cudaMalloc(&memory, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess) {
    cudaGetLastError(); // clears it: the caller sees the exception
    throw std::runtime_error("treetrav: cudaMalloc of " + std::to_string(bytes) + " bytes (" + label +
                             ", device memory MPI maps) failed: " + cudaGetErrorString(error));
  }
  return memory;
#else
  (void)bytes;
  throw std::logic_error("treetrav: " + label + ": this build has no device memory for MPI to share");
#endif
}

void free_ipc_memory(void* memory) noexcept {
#if defined(KOKKOS_ENABLE_CUDA)
  if (memory != nullptr)
    cudaFree(memory); // waits for the device's work on it
#else
  (void)memory;
#endif
}

} // namespace treetrav::detail
