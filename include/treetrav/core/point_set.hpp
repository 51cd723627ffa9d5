#pragma once

#include <treetrav/core/allocate.hpp>
#include <treetrav/core/config.hpp>

#include <string>

namespace treetrav {

// A set of n points in d dimensions, structure-of-arrays: coordinates(i, k) is
// coordinate k of point i and each coordinate is contiguous (LayoutLeft).
// Optional ids (extent 0 when absent) travel with the points through I/O.
template <class MemorySpace>
struct PointSet {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "PointSet's template argument must be a Kokkos memory space");
  using memory_space = MemorySpace;
  using coordinates_view = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace>;
  using ids_view = Kokkos::View<ParticleId*, MemorySpace>;

  coordinates_view coordinates;
  ids_view ids;

  PointSet() = default;
  PointSet(coordinates_view coords, ids_view point_ids = {})
      : coordinates(std::move(coords)), ids(std::move(point_ids)) {}

  KOKKOS_FUNCTION Index size() const { return static_cast<Index>(coordinates.extent(0)); }
  KOKKOS_FUNCTION int dimension() const { return static_cast<int>(coordinates.extent(1)); }
  KOKKOS_FUNCTION bool has_ids() const { return ids.extent(0) != 0; }
  KOKKOS_FUNCTION Coordinate operator()(Index i, int k) const { return coordinates(i, k); }
};

// Allocates an uninitialised point set of n points in d dimensions.
template <class MemorySpace>
PointSet<MemorySpace> allocate_points(std::string const& label, Index n, int dimension,
                                      bool with_ids = false) {
  using Set = PointSet<MemorySpace>;
  return Set(allocate_view<typename Set::coordinates_view>(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::coordinates"), n,
                 dimension),
             allocate_view<typename Set::ids_view>(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::ids"),
                 with_ids ? n : 0));
}

// Deep-copies a point set into the memory space of `space`.
template <class ExecutionSpace, class SourceMemorySpace>
PointSet<typename ExecutionSpace::memory_space> copy_points(ExecutionSpace const& space,
                                                            PointSet<SourceMemorySpace> const& src,
                                                            std::string const& label) {
  auto dst = allocate_points<typename ExecutionSpace::memory_space>(label, src.size(),
                                                                    src.dimension(), src.has_ids());
  Kokkos::deep_copy(space, dst.coordinates, src.coordinates);
  if (src.has_ids()) Kokkos::deep_copy(space, dst.ids, src.ids);
  space.fence();
  return dst;
}

}  // namespace treetrav
