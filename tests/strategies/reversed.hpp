#pragma once

// A strategy that lives in the tests alone, to show what a new strategy
// takes: this header (options, traits, launch) and one entry in the tests'
// list (test_inputs.hpp's for_each_strategy). It walks like autoropes but
// serves the work items last to first, so every application's answers must
// come out as under any other strategy.
#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

namespace treetrav::test {

struct Reversed {
  static constexpr char const* name = "reversed";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  static constexpr bool placeable = true;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = true;
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = false;
  bool records_metrics() const { return false; }

  Workspace* workspace = nullptr;

  // Work item i serves what item n - 1 - i would have.
  template <class MemorySpace>
  struct ReverseOrder {
    Kokkos::View<Index const*, MemorySpace> order;
    Kokkos::View<Index*, MemorySpace> reversed;
    Index n;
    KOKKOS_FUNCTION void operator()(Index i) const {
      reversed(i) = detail::query_at(order, n - 1 - i);
    }
  };

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const&, Workspace&,
              Launcher const& launcher) const {
    using MemorySpace = typename Topology::memory_space;
    Index const n = detail::work_count(visitor, order);
    Kokkos::View<Index*, MemorySpace> reversed("test::Reversed::order", n);
    Kokkos::parallel_for("test::Reversed::order", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                         ReverseOrder<MemorySpace>{order, reversed, n});
    Kokkos::View<Index const*, MemorySpace> const walked = reversed;
    launcher.run_items(topology, visitor, walked,
                       detail::AutoropesKernel<Topology, Visitor>{topology, visitor, walked}, n, 1);
  }
};

} // namespace treetrav::test
