#pragma once

// The compiled definitions of the Barnes-Hut sums (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledBarnesHut
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/barnes_hut.hpp>

namespace treetrav::detail {

template <class ExecutionSpace, int Part>
void CompiledBarnesHut<ExecutionSpace, Part>::accelerations(
    ExecutionSpace const& space, Octree<memory_space> const& tree,
    PointSet<memory_space> const& bodies, BarnesHutOptions const& options,
    CompiledForceStrategy const& strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> accelerations,
    Kokkos::View<Index const*, memory_space> order,
    Kokkos::View<std::uint8_t const*, memory_space> active_bodies,
    TraversalMetrics<memory_space> const& metrics) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    compute_barnes_hut_accelerations_with(space, tree, bodies, options, tag, accelerations, order,
                                          active_bodies, metrics);
  });
}

template <class ExecutionSpace, int Part>
void CompiledBarnesHut<ExecutionSpace, Part>::accelerations_and_costs(
    ExecutionSpace const& space, Octree<memory_space> const& tree,
    PointSet<memory_space> const& bodies, BarnesHutOptions const& options,
    CompiledForceStrategy const& strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> accelerations,
    Kokkos::View<Index*, memory_space> costs, Kokkos::View<Index const*, memory_space> order,
    Kokkos::View<std::uint8_t const*, memory_space> active_bodies,
    Kokkos::View<Index*, memory_space> cell_costs) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    compute_barnes_hut_accelerations_and_costs_with(space, tree, bodies, options, tag,
                                                    accelerations, costs, order, active_bodies,
                                                    cell_costs);
  });
}

} // namespace treetrav::detail
