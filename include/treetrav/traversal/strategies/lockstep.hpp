#pragma once

#include <treetrav/traversal/detail/launch.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

namespace treetrav {

// Lockstep (Goldfarb et al.): a warp walks the tree together, lanes that
// truncate are carried along masked, the mask saved with each stack entry;
// guided traversals take the children in the order most lanes prefer.
// `warp_size` is the emulated warp on host backends (CUDA warps are 32).
struct Lockstep {
  static constexpr char const* name = "lockstep";
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
    detail::launch_lockstep<false>(launcher, topology, visitor, warp_size, order, metrics);
  }
};

} // namespace treetrav
