#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/traversal/detail/launch.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/kernels/visitor.hpp>
#include <treetrav/core/workspace.hpp>

#include <string>
#include <type_traits>

namespace treetrav {

// The number of warps a strategy forms for `queries` queries on `space`
// (the size of its TraversalMetrics).
template <class ExecutionSpace, class Strategy>
Index warp_count(Strategy const& strategy, Index queries) {
  int size = 32;
  if constexpr (strategy_t<Strategy>::warp_based && !is_cuda_space_v<ExecutionSpace>)
    size = strategy_of(strategy).warp_size;
  return (queries + size - 1) / size;
}

// The one driver: every query of `visitor` walks `topology` under `strategy`,
// in parallel over queries in `space`. `order` (optional) maps work items to
// queries: work item i serves query order(i); results stay in the caller's
// order. It may name a subset of the queries (only those are walked), except
// where the strategy makes its own order (takes_order) or walks the tree's
// own points (group_walk: it maps every tree position to its query).
// `metrics`, when allocated, receives visit counts (strategies whose
// records_metrics() says so).
// `strategy` may be placed on SMs: placed(strategy, placement) (placement.hpp),
// where its `placeable` trait allows.
template <class ExecutionSpace, class Topology, class Visitor, class Strategy>
void traverse(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Strategy const& strategy,
              Kokkos::View<Index const*, typename Topology::memory_space> order = {},
              TraversalMetrics<typename Topology::memory_space> const& metrics = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: a Kokkos execution space");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Topology::memory_space>::accessible,
      "the execution space must reach the tree's memory space");
  using Tag = strategy_t<Strategy>;
  using Placement = std::decay_t<decltype(placement_of(strategy))>;
  static_assert(Tag::walks_tree, "traverse() takes a tree-walking strategy");
  static_assert(!Tag::host_only ||
                    Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "this strategy runs on host execution spaces only");
  static_assert(placement_applies_v<Tag, Placement>,
                "this strategy runs under the hardware placement only");
  static_assert(placement_runs_on_v<Placement, ExecutionSpace>,
                "software placements run on parallel backends, on the GPU in GPU builds "
                "(placement_refusal)");
  auto const& tag = strategy_of(strategy);
  Workspace own;
  Workspace& workspace = tag.workspace != nullptr ? *tag.workspace : own;
  detail::Launcher<ExecutionSpace, Placement> const launcher{
      space, placement_of(strategy), &workspace, detail::traversal_label<Placement>(Tag::name)};
  Kokkos::Profiling::pushRegion(launcher.label);
  tag.launch(space, topology, visitor, order, metrics, workspace, launcher);
  Kokkos::Profiling::popRegion();
}

} // namespace treetrav
