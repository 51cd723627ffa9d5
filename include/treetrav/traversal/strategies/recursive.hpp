#pragma once

#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

namespace treetrav {

// Reference: plain recursion, one query per host thread (host spaces only).
struct Recursive {
  static constexpr char const* name = "recursive";
  // Traits (traversal/strategies.hpp says what each means).
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = true;
  static constexpr bool placeable = true;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = true;
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = false;
  bool records_metrics() const { return false; }

  Workspace* workspace = nullptr;

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const&, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const&, Workspace&,
              Launcher const& launcher) const {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                  "the recursive reference strategy runs on host execution spaces only");
    launcher.run_items(topology, visitor, order,
                       detail::RecursiveKernel<Topology, Visitor>{topology, visitor, order},
                       detail::work_count(visitor, order), 1);
  }
};

} // namespace treetrav
