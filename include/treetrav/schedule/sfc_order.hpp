#pragma once

#include <treetrav/trees/detail/morton.hpp>

#include <algorithm>

namespace treetrav {

// Which order the queries of a search walk in: as given, or along a
// space-filling curve (neighbouring work items then walk similar paths).
enum class QueryOrder { none, sfc };

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
  auto const box = detail::bounding_box(space, points, "treetrav::morton_order");
  // Locality is all an order needs: a coarse curve orders as well as a fine
  // one, and at most 24 bits take three radix-sort passes instead of four
  // (16.7M cells: a few queries per cell at 10M queries).
  int const bits = std::max(1, std::min(12, 24 / points.dimension()));
  auto order = detail::morton_permutation(space, points, box, bits, "treetrav::morton_order");
  Kokkos::Profiling::popRegion();
  return order;
}

} // namespace treetrav
