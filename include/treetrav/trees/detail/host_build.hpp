#pragma once

#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <string>
#include <type_traits>

namespace treetrav::detail {

// Trees are built in a host execution space: `space` itself when it can reach
// host memory, the default host space otherwise (then copied to the device).
template <class ExecutionSpace>
auto host_space_for(ExecutionSpace const& space) {
  if constexpr (Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible)
    return space;
  else
    return Kokkos::DefaultHostExecutionSpace{};
}

// Every tree's constructor: build in a host space, then copy the tree to the
// execution space's memory (a no-op for host spaces).
template <class MemorySpace, class ExecutionSpace, class Build>
auto build_on_host_for(ExecutionSpace const& space, Build const& build) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  return copy_tree(space, build(host_space_for(space)));
}

template <class MemorySpace>
PointSet<Kokkos::HostSpace> host_points(PointSet<MemorySpace> const& points) {
  return PointSet<Kokkos::HostSpace>(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, points.coordinates),
                                     Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, points.ids));
}

inline void check_build_arguments(std::string const& tree, Index point_count, int leaf_size, int dimension) {
  if (point_count < 1) throw InputError(tree + ": the reference point set is empty");
  if (leaf_size < 1)
    throw InputError("leaf_size", " must be >= 1 (got " + std::to_string(leaf_size) + ") for the " + tree + " tree");
  if (dimension > max_tree_dimension)
    throw InputError(tree + ": the points have " + std::to_string(dimension) + " dimensions, trees take at most " +
                     std::to_string(max_tree_dimension) +
                     "; the brute-force strategy (brute, or auto) searches at any dimension");
}

template <class View>
View allocate_like_nodes(std::string const& label, Index nodes, int columns = 0) {
  if constexpr (View::rank == 1)
    return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), nodes);
  else
    return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), nodes, columns);
}

}  // namespace treetrav::detail
