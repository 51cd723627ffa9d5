#pragma once

// Device arrays brought to the host at the bus's speed. A copy into pageable
// host memory runs through the driver's own small page-locked buffer, one
// piece at a time, and a new host array's pages are faulted in by that one
// thread: on the H200 machines 80 MB took 60-85 ms that way, against 2 ms into
// page-locked memory (perf/results/mpi/README.md). Page-locking costs about as
// much as faulting, so the staging is allocated once and kept by the caller.
#include <treetrav/core/detail/growing_buffer.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace treetrav::detail {

// Host memory that copies from and to MemorySpace reach at the bus's speed:
// page-locked for a GPU's memory, the host's own memory otherwise.
template <class MemorySpace>
struct staging_space {
  using type = Kokkos::HostSpace;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct staging_space<Kokkos::CudaSpace> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
template <class MemorySpace>
using staging_space_t = typename staging_space<MemorySpace>::type;

// Staging kept between copies; unused (never allocated) when MemorySpace is
// the host's.
template <class MemorySpace>
using HostStaging = GrowingBuffer<staging_space_t<MemorySpace>>;

template <class MemorySpace>
inline constexpr bool host_reachable_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

// A new host array holding `view` (contiguous, in `space`'s memory): off the
// host, copied into `staging`, then into the new array by the host's
// threads, which fault its pages in side by side. On the host, `view` itself.
template <class ExecutionSpace, class View>
auto host_copy(ExecutionSpace const& space, View const& view,
               HostStaging<typename ExecutionSpace::memory_space>& staging) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using T = typename View::non_const_value_type;
  using Host = Kokkos::View<typename View::non_const_data_type, typename View::array_layout,
                            Kokkos::HostSpace>;
  if constexpr (host_reachable_v<MemorySpace>) {
    return Host(view);
  } else {
    Host host(Kokkos::view_alloc(Kokkos::WithoutInitializing, view.label()), view.layout());
    std::size_t const n = view.span();
    auto const staged = staging.template get<T>(space, n);
    Kokkos::deep_copy(space, staged,
                      Kokkos::View<T const*, MemorySpace, Kokkos::MemoryUnmanaged>(view.data(), n));
    space.fence();
    constexpr std::size_t block = 1 << 14; // values a host thread copies at a time
    T* const to = host.data();
    T const* const from = staged.data();
    using Threads = Kokkos::DefaultHostExecutionSpace;
    Kokkos::parallel_for(
        "treetrav::host_copy", Kokkos::RangePolicy<Threads>(0, (n + block - 1) / block),
        [=](std::size_t b) {
          std::copy(from + b * block, from + std::min(n, (b + 1) * block), to + b * block);
        });
    Threads().fence();
    return host;
  }
}

} // namespace treetrav::detail
