#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/traversal/detail/group_kernels.hpp>
#include <treetrav/traversal/detail/host_kernels.hpp>
#include <treetrav/traversal/detail/lockstep_kernels.hpp>
#include <treetrav/traversal/metrics.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/traversal/visitor.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

namespace treetrav {

namespace detail {

template <class ExecutionSpace, class Topology, class Visitor, bool Fsm, bool Measure>
void launch_lockstep(ExecutionSpace const& space, std::string const& label, Topology const& topology,
                     Visitor const& visitor, int warp_size,
                     Kokkos::View<Index const*, typename Topology::memory_space> order,
                     TraversalMetrics<typename Topology::memory_space> const& metrics) {
  LockstepKernel<Topology, Visitor, Fsm, Measure> kernel{topology, visitor, order, metrics};
  Index const queries = work_count(visitor, order);
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Index const warps = (queries + 31) / 32;
    Kokkos::parallel_for(label, as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, warps * 32)),
                         CudaWarpLaunch<decltype(kernel)>{kernel});
#endif
  } else {
    if (warp_size < 1 || warp_size > HostWarp::max_size)
      throw std::invalid_argument("lockstep warp size must be in [1, 32]");
    Index const warps = (queries + warp_size - 1) / warp_size;
    Kokkos::parallel_for(
        label, as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, warps)),
        HostWarpLaunch<decltype(kernel)>{kernel, warp_size});
  }
}

// Defined in schedule/detail/hybrid_traverse.hpp (it runs the driver itself).
template <class ExecutionSpace, class Topology, class Visitor>
void traverse_hybrid(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                     Hybrid const& strategy, TraversalMetrics<typename Topology::memory_space> const& metrics);

// Defined in schedule/detail/regtt_traverse.hpp.
template <class ExecutionSpace, class Topology, class Visitor>
void traverse_regtt(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                    Regtt const& strategy, Kokkos::View<Index const*, typename Topology::memory_space> order,
                    TraversalMetrics<typename Topology::memory_space> const& metrics);

}  // namespace detail

// The number of warps a lockstep strategy forms for `queries` queries on `space`.
template <class ExecutionSpace, class Strategy>
Index warp_count(Strategy const& strategy, Index queries) {
  int size = 32;
  if constexpr ((is_lockstep_v<Strategy> || std::is_same_v<Strategy, Regtt>) && !is_cuda_space_v<ExecutionSpace>)
    size = strategy.warp_size;
  return (queries + size - 1) / size;
}

// The one driver: every query of `visitor` walks `topology` under `strategy`,
// in parallel over queries in `space`. `order` (optional) maps work items to
// queries: work item i serves query order(i); results stay in the caller's
// order. It may name a subset of the queries (only those are walked), except
// under Hybrid, whose schedule replaces it, and GroupWalk, where it maps
// every tree position to its query (the visitor's active() picks a subset).
// `metrics`, when allocated, receives visit counts (lockstep strategies and
// REGTT's lockstep mode; kernels without it are instantiated separately, so
// timed runs pay nothing).
template <class ExecutionSpace, class Topology, class Visitor, class Strategy>
void traverse(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor, Strategy strategy,
              Kokkos::View<Index const*, typename Topology::memory_space> order = {},
              TraversalMetrics<typename Topology::memory_space> const& metrics = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, typename Topology::memory_space>::accessible,
                "the execution space must reach the tree's memory space");
  std::string const label = std::string("treetrav::traverse::") + Strategy::name;
  Kokkos::Profiling::pushRegion(label);
  // Queries differ widely in work: hand them out dynamically on the host.
  auto const policy = detail::as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
      space, 0, detail::work_count(visitor, order)));
  if constexpr (std::is_same_v<Strategy, Recursive>) {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                  "the recursive reference strategy runs on host execution spaces only");
    Kokkos::parallel_for(label, policy, detail::RecursiveKernel<Topology, Visitor>{topology, visitor, order});
  } else if constexpr (std::is_same_v<Strategy, Autoropes>) {
    Kokkos::parallel_for(label, policy, detail::AutoropesKernel<Topology, Visitor>{topology, visitor, order});
  } else if constexpr (std::is_same_v<Strategy, Lockstep> || std::is_same_v<Strategy, FsmLockstep>) {
    constexpr bool fsm = std::is_same_v<Strategy, FsmLockstep>;
    if (metrics.enabled())
      detail::launch_lockstep<ExecutionSpace, Topology, Visitor, fsm, true>(space, label, topology, visitor,
                                                                            strategy.warp_size, order, metrics);
    else
      detail::launch_lockstep<ExecutionSpace, Topology, Visitor, fsm, false>(space, label, topology, visitor,
                                                                             strategy.warp_size, order, metrics);
  } else if constexpr (std::is_same_v<Strategy, Hybrid>) {
    // The schedule replaces any order the caller gave.
    detail::traverse_hybrid(space, topology, visitor, strategy, metrics);
  } else if constexpr (std::is_same_v<Strategy, GroupWalk>) {
    if (metrics.enabled()) throw std::invalid_argument("the group walk records no traversal metrics");
    detail::traverse_groups(space, label, topology, visitor, strategy, order);
  } else if constexpr (std::is_same_v<Strategy, Regtt>) {
    // Its sort permutes the caller's order (ties keep it).
    detail::traverse_regtt(space, topology, visitor, strategy, order, metrics);
  } else {
    static_assert(sizeof(Strategy) == 0, "unknown traversal strategy");
  }
  Kokkos::Profiling::popRegion();
}

}  // namespace treetrav

#include <treetrav/schedule/detail/hybrid_traverse.hpp>
#include <treetrav/schedule/detail/regtt_traverse.hpp>
