#pragma once

#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/packed_points.hpp>

#include <string>
#include <type_traits>

namespace treetrav::detail {

// The reference points in the memory of `space`: the caller's View when it
// is already there (points on the device never round-trip through the host).
template <class ExecutionSpace, class PointMemorySpace>
PointSet<typename ExecutionSpace::memory_space> points_for(ExecutionSpace const& space,
                                                           PointSet<PointMemorySpace> const& points,
                                                           std::string const& label) {
  if constexpr (std::is_same_v<PointMemorySpace, typename ExecutionSpace::memory_space>)
    return points;
  else
    return copy_points(space, points, label + "::input");
}

// Row p of the packed points is the caller's point permutation(p).
template <class MemorySpace>
struct GatherRows {
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> source;
  Kokkos::View<Index*, MemorySpace> permutation;
  PackedPoints<MemorySpace> packed;
  KOKKOS_FUNCTION void operator()(Index p) const {
    Index const from = permutation(p);
    for (int k = 0; k < packed.width(); ++k)
      packed.rows(p, k) = k < packed.dimension ? source(from, k) : 0;
    packed.original_index(p) = from;
  }
};

template <class ExecutionSpace, class MemorySpace>
PackedPoints<MemorySpace>
pack_points(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
            Kokkos::View<Index*, MemorySpace> permutation, std::string const& label) {
  PackedPoints<MemorySpace> packed;
  packed.dimension = points.dimension();
  packed.rows = decltype(packed.rows)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::rows"), points.size(),
      packed_width(points.dimension()));
  packed.original_index = permutation;
  Kokkos::parallel_for(label + "::pack_points",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                       GatherRows<MemorySpace>{points.coordinates, permutation, packed});
  return packed;
}

} // namespace treetrav::detail
