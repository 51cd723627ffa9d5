#pragma once

// The compiled searches' definitions (apps/detail/compiled.hpp). Only the
// translation units CMake generates from instantiate.cpp.in include this, one
// per application, tree and backend, each instantiating one class; nothing
// else sees these definitions, so nothing else can instantiate them again.
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/pair_count.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>

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

template <class ExecutionSpace, class Tree, int Part>
Kokkos::View<std::int64_t*, typename Tree::memory_space>
CompiledRangeCount<ExecutionSpace, Tree, Part>::run(ExecutionSpace const& space, Tree const& tree,
                                              PointSet<memory_space> const& queries,
                                              RangeCountOptions const& options,
                                              CompiledStrategy const& strategy,
                                              Kokkos::View<Index const*, memory_space> order,
                                              TraversalMetrics<memory_space> const& metrics) {
  return visit_compiled<ExecutionSpace, Kokkos::View<std::int64_t*, memory_space>, Part>(
      strategy, [&](auto const& tag) {
        return count_within_with(space, tree, queries, options, tag, order, metrics);
      });
}

template <class ExecutionSpace, class Tree, int Part>
RadiusResults<typename Tree::memory_space> CompiledRadiusLists<ExecutionSpace, Tree, Part>::run(
    ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
    RadiusSearchOptions const& options, CompiledStrategy const& strategy) {
  return visit_compiled<ExecutionSpace, RadiusResults<memory_space>, Part>(
      strategy, [&](auto const& tag) {
        return find_within_with(space, tree, queries, options, tag);
      });
}

template <class ExecutionSpace, class Tree, int Part>
void CompiledPairCount<ExecutionSpace, Tree, Part>::run(
    ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
    PairCountOptions const& options, CompiledStrategy const& strategy,
    Kokkos::View<double const*, memory_space> edges2,
    Kokkos::View<double const*, memory_space> weight_prefix,
    Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
    Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    count_pairs_with(space, tree, queries, options, tag, edges2, weight_prefix, counts, sums);
  });
}

template <class ExecutionSpace, class Tree, int Part>
void CompiledPairCount<ExecutionSpace, Tree, Part>::run_groups(
    ExecutionSpace const& space, Tree const& tree, PairCountOptions const& options,
    GroupWalk const& strategy, Kokkos::View<double const*, memory_space> edges2,
    Kokkos::View<double const*, memory_space> weight_prefix,
    Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
    Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums) {
  if constexpr (Part == 0)
    count_pair_groups(space, tree, options, strategy, edges2, weight_prefix, counts, sums);
  else
    throw std::logic_error("the pair counts' group walk is compiled in part 0");
}

template <class ExecutionSpace>
NeighborResults<typename ExecutionSpace::memory_space> CompiledBruteForce<ExecutionSpace>::neighbors(
    ExecutionSpace const& space, PointSet<memory_space> const& reference,
    PointSet<memory_space> const& queries, NeighborOptions const& options,
    BruteForce const& strategy) {
  return find_neighbors_brute(space, reference, queries, options, strategy);
}

template <class ExecutionSpace>
Kokkos::View<std::int64_t*, typename ExecutionSpace::memory_space>
CompiledBruteForce<ExecutionSpace>::counts(ExecutionSpace const& space,
                                           PointSet<memory_space> const& reference,
                                           PointSet<memory_space> const& queries,
                                           RangeCountOptions const& options,
                                           BruteForce const& strategy) {
  return count_within_brute(space, reference, queries, options, strategy);
}

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
    Kokkos::View<std::uint8_t const*, memory_space> active_bodies) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    compute_barnes_hut_accelerations_and_costs_with(space, tree, bodies, options, tag,
                                                    accelerations, costs, order, active_bodies);
  });
}

} // namespace treetrav::detail
