#pragma once

// The compiled definitions of the neighbour searches (nn, knn) (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledNeighbors
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/neighbor_search.hpp>

namespace treetrav::detail {

template <class ExecutionSpace, class Tree, int Part>
void CompiledNeighbors<ExecutionSpace, Tree, Part>::run(
    ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
    NeighborOptions const& options, CompiledStrategy const& strategy,
    Kokkos::View<Index const*, memory_space> order, TraversalMetrics<memory_space> const& metrics,
    NeighborOutputs<memory_space> const& out) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    find_neighbors_with(space, tree, queries, options, tag, order, metrics, out);
  });
}

} // namespace treetrav::detail
