#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#endif

namespace treetrav::detail {

#if defined(KOKKOS_ENABLE_CUDA)
inline void check_cuda(cudaError_t status, char const* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
#endif

// Named functors, not lambdas, for kernels in headers: nvcc's wrappers of
// extended lambdas instantiated from several translation units once crashed.
template <class MemorySpace>
struct Iota {
  Kokkos::View<Index*, MemorySpace> values;
  KOKKOS_FUNCTION void operator()(Index i) const { values(i) = i; }
};

// The stable sorting permutation of `keys`: position i of the sorted sequence
// holds keys(permutation(i)); equal keys keep their index order, so every
// backend returns the same permutation. Only bits [0, key_bits) of the keys
// are compared (higher bits must be zero). `keys` may be reordered; when
// `sorted_keys` is allocated (same size), it receives the keys in sorted order.
//   Cuda: CUB's radix sort (stable); host spaces: sorts of (key, index) pairs
//   in parallel chunks, then pairwise merges.
template <class ExecutionSpace, class MemorySpace, class Key>
Kokkos::View<Index*, MemorySpace>
sort_permutation(ExecutionSpace const& space, Kokkos::View<Key*, MemorySpace> keys, int key_bits,
                 std::string const& label, Kokkos::View<Key*, MemorySpace> sorted_keys = {}) {
  static_assert(std::is_unsigned_v<Key>, "sort keys are unsigned integers");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the keys");
  Index const n = static_cast<Index>(keys.extent(0));
  Kokkos::View<Index*, MemorySpace> permutation(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::permutation"), n);
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    if (sorted_keys.extent(0) != std::size_t(n))
      sorted_keys = Kokkos::View<Key*, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::sorted_keys"), n);
    Kokkos::View<Index*, MemorySpace> identity(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::identity"), n);
    Kokkos::parallel_for(label + "::iota", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                         Iota<MemorySpace>{identity});
    std::size_t temp_bytes = 0;
    check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(), sorted_keys.data(),
                                               identity.data(), permutation.data(), n, 0,
                                               std::max(key_bits, 1), space.cuda_stream()),
               "cub::DeviceRadixSort::SortPairs (size query)");
    Kokkos::View<char*, MemorySpace> temp(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::temp"), temp_bytes);
    check_cuda(cub::DeviceRadixSort::SortPairs(
                   temp.data(), temp_bytes, keys.data(), sorted_keys.data(), identity.data(),
                   permutation.data(), n, 0, std::max(key_bits, 1), space.cuda_stream()),
               "cub::DeviceRadixSort::SortPairs");
#endif
  } else {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible);
    using Pair = std::pair<Key, Index>;
    std::vector<Pair> pairs(n), merged(n);
    for (Index i = 0; i < n; ++i)
      pairs[i] = {keys(i), i};
    // Chunks sorted in parallel, then merged pairwise, chunk widths doubling.
    Index chunks = 1;
    while (chunks < space.concurrency() && n / (2 * chunks) >= 4096)
      chunks *= 2;
    Index const width = (n + chunks - 1) / chunks;
    Kokkos::parallel_for(label + "::sort_chunks",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, chunks), [&](Index c) {
                           Index const begin = std::min(n, c * width),
                                       end = std::min(n, begin + width);
                           std::sort(pairs.begin() + begin, pairs.begin() + end);
                         });
    space.fence();
    for (Index run = width; run < n; run *= 2) {
      Index const merges = (n + 2 * run - 1) / (2 * run);
      Kokkos::parallel_for(
          label + "::merge", Kokkos::RangePolicy<ExecutionSpace>(space, 0, merges), [&](Index m) {
            Index const begin = m * 2 * run, middle = std::min(n, begin + run),
                        end = std::min(n, begin + 2 * run);
            std::merge(pairs.begin() + begin, pairs.begin() + middle, pairs.begin() + middle,
                       pairs.begin() + end, merged.begin() + begin);
          });
      space.fence();
      pairs.swap(merged);
    }
    bool const keep_keys = sorted_keys.extent(0) == std::size_t(n);
    for (Index i = 0; i < n; ++i) {
      permutation(i) = pairs[i].second;
      if (keep_keys)
        sorted_keys(i) = pairs[i].first;
    }
  }
  return permutation;
}

template <class MemorySpace>
struct SortSegmentOnHost {
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  Kokkos::View<std::int64_t const*, MemorySpace> offsets;
  void operator()(Index segment) const {
    std::sort(keys.data() + offsets(segment), keys.data() + offsets(segment + 1));
  }
};

// Sorts `keys` ascending within each segment [offsets(s), offsets(s + 1)),
// s < offsets.extent(0) - 1 (offsets ascending, offsets(0) = 0, the last one
// the number of keys). Returns the sorted keys (on Cuda a new View: CUB's
// segmented sort; on host spaces `keys` itself, a std::sort per segment).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<std::uint64_t*, MemorySpace>
sort_segments(ExecutionSpace const& space, Kokkos::View<std::uint64_t*, MemorySpace> keys,
              Kokkos::View<std::int64_t const*, MemorySpace> offsets, std::string const& label) {
  std::int64_t const items = static_cast<std::int64_t>(keys.extent(0));
  std::int64_t const segments = std::max<std::int64_t>(0, std::int64_t(offsets.extent(0)) - 1);
  if (items == 0 || segments == 0)
    return keys;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::View<std::uint64_t*, MemorySpace> sorted(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::sorted"), items);
    std::size_t temp_bytes = 0;
    check_cuda(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, keys.data(), sorted.data(),
                                                  items, segments, offsets.data(),
                                                  offsets.data() + 1, space.cuda_stream()),
               "cub::DeviceSegmentedSort::SortKeys (size query)");
    Kokkos::View<char*, MemorySpace> temp(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::temp"), temp_bytes);
    check_cuda(cub::DeviceSegmentedSort::SortKeys(temp.data(), temp_bytes, keys.data(),
                                                  sorted.data(), items, segments, offsets.data(),
                                                  offsets.data() + 1, space.cuda_stream()),
               "cub::DeviceSegmentedSort::SortKeys");
    return sorted;
#endif
  } else {
    Kokkos::parallel_for(label + "::sort_segments",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, segments),
                         SortSegmentOnHost<MemorySpace>{keys, offsets});
    return keys;
  }
}

} // namespace treetrav::detail
