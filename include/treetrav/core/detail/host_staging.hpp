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

// Values a staged copy moves at a time: the staging stays at most 256 MiB
// however large the array (page-locked memory is memory the host cannot
// page out, on top of the new array itself).
template <class T>
inline constexpr std::size_t staged_values = (std::size_t(256) << 20) / sizeof(T);

// A new host array holding `view` (contiguous, in `space`'s memory): off the
// host, copied into `staging` a piece at a time, each piece then into the
// new array by the host's threads, which fault its pages in side by side.
// On the host, `view` itself.
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
    auto const staged = staging.template get<T>(space, std::min(n, staged_values<T>));
    constexpr std::size_t block = 1 << 14; // values a host thread copies at a time
    using Threads = Kokkos::DefaultHostExecutionSpace;
    for (std::size_t first = 0; first < n; first += staged.extent(0)) {
      std::size_t const count = std::min(n - first, std::size_t(staged.extent(0)));
      Kokkos::deep_copy(space, Kokkos::subview(staged, Kokkos::make_pair(std::size_t(0), count)),
                        Kokkos::View<T const*, MemorySpace, Kokkos::MemoryUnmanaged>(
                            view.data() + first, count));
      space.fence();
      T* const to = host.data() + first;
      T const* const from = staged.data();
      Kokkos::parallel_for(
          "treetrav::host_copy", Kokkos::RangePolicy<Threads>(0, (count + block - 1) / block),
          [=](std::size_t b) {
            std::copy(from + b * block, from + std::min(count, (b + 1) * block), to + b * block);
          });
      Threads().fence();
    }
    return host;
  }
}

} // namespace treetrav::detail
