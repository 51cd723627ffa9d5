#pragma once

// Device memory that another process of the node can map (CUDA IPC): the
// arrays a GPU-aware MPI reads and writes. Kokkos' CudaSpace here allocates
// from the stream-ordered pool (cudaMallocAsync,
// cmake/patches/kokkos-3.4.1/0004), as Kokkos 4 did by default until it
// stopped for this reason (kokkos/kokkos#7353): CUDA IPC cannot map the
// pool's blocks, and UCX then pipelines them through buffers of its own, at a
// fifth of the speed it moves cudaMalloc'd memory (perf/results/mpi/README.md).
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav::detail {

// `bytes` of device memory of the current GPU that CUDA IPC can map
// (cudaMalloc), and its release; src/core/ipc_memory.cpp. Builds without
// CUDA have none: allocating throws std::logic_error.
void* allocate_ipc_memory(std::size_t bytes, std::string const& label);
void free_ipc_memory(void* memory) noexcept;

// Such memory kept between calls and viewed as whatever element type a call
// needs, growing to the largest request (as GrowingBuffer does with Kokkos'
// allocations).
template <class MemorySpace>
class IpcBuffer {
public:
  template <class T>
  using view = Kokkos::View<T*, MemorySpace, Kokkos::MemoryUnmanaged>;

  explicit IpcBuffer(std::string label) : label_(std::move(label)) {}
  IpcBuffer(IpcBuffer const&) = delete;
  IpcBuffer& operator=(IpcBuffer const&) = delete;
  ~IpcBuffer() { free_ipc_memory(memory_); }

  // `count` uninitialised elements, valid until the next call of get(); a
  // buffer that grows takes an eighth more than asked. Work on `space` that
  // may still use the old memory is waited for before it is released.
  template <class T, class ExecutionSpace>
  view<T> get(ExecutionSpace const& space, std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "the buffer holds raw bytes");
    static_assert(alignof(T) <= 256, "cudaMalloc aligns to 256 bytes");
    std::size_t const bytes = count * sizeof(T);
    if (bytes > capacity_) {
      space.fence();
      free_ipc_memory(memory_);
      memory_ = nullptr, capacity_ = 0;
      memory_ = allocate_ipc_memory(bytes + bytes / 8, label_);
      capacity_ = bytes + bytes / 8;
    }
    return view<T>(static_cast<T*>(memory_), count);
  }

private:
  std::string label_;
  void* memory_ = nullptr;
  std::size_t capacity_ = 0;
};

} // namespace treetrav::detail
