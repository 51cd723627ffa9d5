#pragma once

#include <treetrav/trees/detail/morton.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace treetrav {

// Which order the queries of a search walk in: as given, or along a
// space-filling curve (neighbouring work items then walk similar paths).
enum class QueryOrder { none, sfc };

namespace detail {

// The bits per dimension of morton_order's cells for n points of dimension
// d. About four queries to a cell of the curve: finer cells order no better
// (a warp's 32 queries are neighbours either way), coarser ones leave them in
// input order within a cell (perf/results/search/README.md). At most 24
// bits: three radix-sort passes.
inline int morton_order_bits(Index n, int dimension) {
  return std::clamp(
      static_cast<int>(std::lround(std::log2(std::max(n / 4.0, 2.0)) / dimension)), 1,
      std::max(1, std::min(12, 24 / dimension)));
}

} // namespace detail

// The papers' "hand-sorted" baseline for kd/ball/vp applications: queries in
// Morton (Z-curve) order over their bounding box, so that neighbouring work
// items walk similar paths. Returns a permutation for traverse(): position i
// serves query order(i). Ties (equal codes) keep index order, so the order is
// the same on every backend. Runs in `space` alone (on the GPU: a radix sort,
// no host round trip).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace> morton_order(ExecutionSpace const& space,
                                               PointSet<MemorySpace> const& points) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the points");
  if (points.size() == 0)
    return {};
  Kokkos::Profiling::pushRegion("treetrav::morton_order");
  int const bits = detail::morton_order_bits(points.size(), points.dimension());
  detail::MortonEncoder<MemorySpace> const encode{{}, points.dimension(), bits};
  auto order =
      encode.key_bits() <= 32
          ? detail::morton_sort<std::uint32_t>(space, points, bits, "treetrav::morton_order")
          : detail::morton_sort<std::uint64_t>(space, points, bits, "treetrav::morton_order");
  Kokkos::Profiling::popRegion();
  return order;
}

// morton_order on each backend's own memory is compiled once, in the library
// (src/schedule/sfc_order.cpp): on the GPU a radix sort's kernels, which every
// search's translation unit compiled again otherwise.
#define TREETRAV_MORTON_ORDER_ON(EXTERN, Space)                                                   \
  EXTERN template Kokkos::View<Index*, Space::memory_space> morton_order<Space, Space::memory_space>( \
      Space const&, PointSet<Space::memory_space> const&);
#ifdef TREETRAV_ENABLE_SERIAL
TREETRAV_MORTON_ORDER_ON(extern, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
TREETRAV_MORTON_ORDER_ON(extern, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
TREETRAV_MORTON_ORDER_ON(extern, Kokkos::Cuda)
#endif

} // namespace treetrav
