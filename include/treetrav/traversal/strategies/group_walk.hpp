#pragma once

#include <treetrav/kernels/detail/group_kernels.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

#include <stdexcept>

namespace treetrav {

// Group walk (Barnes, Bonsai, GOTHIC): the queries are the tree's own points;
// the points of each tree node holding at most `group_size` of them (and whose
// parent holds more) form a group, and one warp walks the tree once for the
// whole group: its lanes test up to a warp of nodes at a time against the
// group (the visitor's group-vs-node test), collect the accepted nodes and the
// points of opened leaves in interaction lists in scratch (shared) memory,
// and evaluate those lists for every query of the group. Host backends run
// the same kernel with a team of one thread emulating `warp_size` lanes.
// group_size <= 2 * warp size (each lane serves up to two queries). With
// `pack_siblings`, consecutive sibling nodes small enough together share one
// group (fuller warps, a box spanning a few neighbouring cells). The order
// maps every tree position to its query (the visitor's active() picks a subset).
// Warps take groups from a shared counter; with a workspace kept between walks
// (an N-body run's), the costliest groups of the last walk go first, so that
// no long group starts last and runs on alone.
struct GroupWalk {
  static constexpr char const* name = "group";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  // A warp per tree group, its lists in shared memory.
  static constexpr bool placeable = false;
  static constexpr bool group_walk = true;
  static constexpr bool takes_order = true;
  // Forces summed in list order, cells opened per group.
  static constexpr bool tree_order = false;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = true;
  bool records_metrics() const { return false; }

  int group_size = 64;
  int warp_size = 32;
  Workspace* workspace = nullptr; // the per-warp stacks, tables and cost order, kept between walks
  bool pack_siblings = true;

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const& metrics,
              Workspace& scratch, Launcher const& launcher) const {
    if (metrics.enabled())
      throw std::invalid_argument("the group walk records no traversal metrics");
    detail::traverse_groups(space, launcher.label, topology, visitor,
                            detail::GroupWalkSettings{group_size, warp_size, pack_siblings}, order,
                            scratch);
  }
};

} // namespace treetrav
