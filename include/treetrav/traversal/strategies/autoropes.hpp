#pragma once

#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

namespace treetrav {

// Autoropes (Goldfarb et al.): the recursion replaced by an explicit stack of
// "ropes" (nodes still to visit); children are pushed in reverse visiting
// order, so pops follow the recursive order exactly.
struct Autoropes {
  static constexpr char const* name = "autoropes";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  static constexpr bool placeable = true;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = true;
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = true;
  static constexpr bool warp_based = false;
  bool records_metrics() const { return false; }

  Workspace* workspace = nullptr;

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const&, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const&, Workspace&,
              Launcher const& launcher) const {
    launcher.run_items(topology, visitor, order,
                       detail::AutoropesKernel<Topology, Visitor>{topology, visitor, order},
                       detail::work_count(visitor, order), 1);
  }
};

} // namespace treetrav
