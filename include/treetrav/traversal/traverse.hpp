#pragma once

#include <treetrav/traversal/detail/host_kernels.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/traversal/visitor.hpp>

#include <string>
#include <variant>

namespace treetrav {

// The one driver: every query of `visitor` walks `topology` under `strategy`,
// in parallel over queries in `space`. `order` (optional) is a permutation:
// work item i serves query order(i); results stay in the caller's order.
template <class ExecutionSpace, class Topology, class Visitor, class Strategy>
void traverse(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor, Strategy,
              Kokkos::View<Index const*, typename Topology::memory_space> order = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename Topology::memory_space>::accessible,
                "the execution space must reach the tree's memory space");
  std::string const label = std::string("treetrav::traverse::") + Strategy::name;
  Kokkos::Profiling::pushRegion(label);
  // Queries differ widely in work: hand them out dynamically on the host.
  Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>> policy(space, 0, visitor.query_count());
  if constexpr (std::is_same_v<Strategy, Recursive>) {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                  "the recursive reference strategy runs on host execution spaces only");
    Kokkos::parallel_for(label, policy, detail::RecursiveKernel<Topology, Visitor>{topology, visitor, order});
  } else if constexpr (std::is_same_v<Strategy, Autoropes>) {
    Kokkos::parallel_for(label, policy, detail::AutoropesKernel<Topology, Visitor>{topology, visitor, order});
  } else {
    static_assert(sizeof(Strategy) == 0, "unknown traversal strategy");
  }
  Kokkos::Profiling::popRegion();
}

}  // namespace treetrav
