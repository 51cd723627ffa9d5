#pragma once

#include <treetrav/traversal/detail/launch.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

namespace treetrav {

// FSM lockstep (Liu et al. §5): as Lockstep, but the stack holds nodes only;
// each lane keeps a traversing/truncated flag and the stack depth at which it
// truncated, in registers, and rejoins when the stack returns there.
struct FsmLockstep {
  static constexpr char const* name = "fsm";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  static constexpr bool placeable = true;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = true;
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = true;
  bool records_metrics() const { return true; }

  int warp_size = 32;
  Workspace* workspace = nullptr;

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const&, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const& metrics, Workspace&,
              Launcher const& launcher) const {
    detail::launch_lockstep<true>(launcher, topology, visitor, warp_size, order, metrics);
  }
};

} // namespace treetrav
