#pragma once

#include <treetrav/core/point_set.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>
#include <thrust/sort.h>
#endif

namespace treetrav {

// The papers' "hand-sorted" baseline for kd/ball/vp applications: queries in
// Morton (Z-curve) order over their bounding box, so that neighbouring work
// items walk similar paths. Returns a permutation for traverse(): position i
// serves query order(i). Ties (equal codes) keep index order, so the order is
// the same on every backend.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace> morton_order(ExecutionSpace const& space, PointSet<MemorySpace> const& points) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the points");
  Kokkos::Profiling::pushRegion("treetrav::morton_order");
  Index const n = points.size();
  int const dimension = points.dimension();
  if (n == 0) {
    Kokkos::Profiling::popRegion();
    return {};
  }
  auto const& x = points.coordinates;
  // Bounding box, one reduction per dimension.
  Kokkos::View<Coordinate*, Kokkos::HostSpace> lo("treetrav::morton_order::lo", dimension),
      scale("treetrav::morton_order::scale", dimension);
  int const bits = std::min(21, 63 / dimension);
  for (int k = 0; k < dimension; ++k) {
    // Coordinates are contiguous per dimension (LayoutLeft): min/max of a column.
    Coordinate const* column = x.data() + std::size_t(k) * x.stride(1);
    std::pair<Coordinate, Coordinate> bounds;
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) {
      space.fence();
      auto const [mn, mx] = thrust::minmax_element(thrust::device, column, column + n);
      bounds = {*thrust::device_ptr<Coordinate const>(mn), *thrust::device_ptr<Coordinate const>(mx)};
    } else
#endif
    {
      auto const [mn, mx] = std::minmax_element(column, column + n);
      bounds = {*mn, *mx};
    }
    lo(k) = bounds.first;
    scale(k) = bounds.second > bounds.first ? ((std::uint64_t(1) << bits) - 1) / (bounds.second - bounds.first) : 0;
  }
  auto lo_device = Kokkos::create_mirror_view_and_copy(space, lo);
  auto scale_device = Kokkos::create_mirror_view_and_copy(space, scale);
  Kokkos::View<std::uint64_t*, MemorySpace> codes(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::morton_order::codes"), n);
  Kokkos::View<Index*, MemorySpace> order(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::morton_order::order"), n);
  Kokkos::parallel_for(
      "treetrav::morton_order::codes", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), KOKKOS_LAMBDA(Index i) {
        std::uint64_t code = 0;
        for (int b = bits - 1; b >= 0; --b)
          for (int k = 0; k < dimension; ++k) {
            auto const cell = static_cast<std::uint64_t>((x(i, k) - lo_device(k)) * scale_device(k));
            code = code << 1 | (cell >> b & 1);
          }
        codes(i) = code;
        order(i) = i;
      });
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) {
    space.fence();
    thrust::stable_sort_by_key(thrust::device, codes.data(), codes.data() + n, order.data());
    Kokkos::Profiling::popRegion();
    return order;
  }
#endif
  space.fence();
  auto host_codes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, codes);
  auto host_order = Kokkos::create_mirror_view(order);
  std::iota(host_order.data(), host_order.data() + n, 0);
  std::stable_sort(host_order.data(), host_order.data() + n,
                   [&](Index a, Index b) { return host_codes(a) < host_codes(b); });
  Kokkos::deep_copy(space, order, host_order);
  space.fence();
  Kokkos::Profiling::popRegion();
  return order;
}

}  // namespace treetrav
