#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/schedule/placement.hpp>
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

// Defined in schedule/detail/placement_plan.hpp: body(i) for every work item
// i < extent (each serving `queries_per_item` query slots of `order`) under a
// software placement.
template <class ExecutionSpace, class Topology, class Visitor, class Body, class Placement>
void run_placed(ExecutionSpace const& space, std::string const& label, Topology const& topology,
                Visitor const& visitor,
                Kokkos::View<Index const*, typename Topology::memory_space> order, Body const& body,
                Index extent, int queries_per_item, Placement const& placement);

// body(i) for every work item i < extent: the kernel's own launch (Hardware),
// or the SM-centric transformation of it.
template <class ExecutionSpace, class Topology, class Visitor, class Body, class Placement>
void run_items(ExecutionSpace const& space, std::string const& label, Topology const& topology,
               Visitor const& visitor,
               Kokkos::View<Index const*, typename Topology::memory_space> order, Body const& body,
               Index extent, int queries_per_item, Placement const& placement) {
  if constexpr (std::is_same_v<Placement, Hardware>) {
    // Queries differ widely in work: hand them out dynamically on the host.
    // The functor travels as a kernel argument (Kokkos 3's constant-memory
    // launch of larger functors would serialise kernels on different streams).
    Kokkos::parallel_for(
        label,
        as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
            space, 0, extent)),
        body);
  } else {
    run_placed(space, label, topology, visitor, order, body, extent, queries_per_item, placement);
  }
}

template <class ExecutionSpace, class Topology, class Visitor, bool Fsm, bool Measure,
          class Placement>
void launch_lockstep(ExecutionSpace const& space, std::string const& label,
                     Topology const& topology, Visitor const& visitor, int warp_size,
                     Kokkos::View<Index const*, typename Topology::memory_space> order,
                     TraversalMetrics<typename Topology::memory_space> const& metrics,
                     Placement const& placement) {
  LockstepKernel<Topology, Visitor, Fsm, Measure> kernel{topology, visitor, order, metrics};
  Index const queries = work_count(visitor, order);
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Index const warps = (queries + 31) / 32;
    run_items(space, label, topology, visitor, order, CudaWarpLaunch<decltype(kernel)>{kernel},
              warps * 32, 1, placement);
#endif
  } else {
    if (warp_size < 1 || warp_size > HostWarp::max_size)
      throw std::invalid_argument("lockstep warp size must be in [1, 32]");
    Index const warps = (queries + warp_size - 1) / warp_size;
    run_items(space, label, topology, visitor, order,
              HostWarpLaunch<decltype(kernel)>{kernel, warp_size}, warps, warp_size, placement);
  }
}

// Defined in schedule/detail/hybrid_traverse.hpp (it runs the driver itself).
template <class ExecutionSpace, class Topology, class Visitor, class Placement>
void traverse_hybrid(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                     Hybrid const& strategy,
                     TraversalMetrics<typename Topology::memory_space> const& metrics,
                     Placement const& placement);

// Defined in schedule/detail/regtt_traverse.hpp.
template <class ExecutionSpace, class Topology, class Visitor>
void traverse_regtt(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                    Regtt const& strategy,
                    Kokkos::View<Index const*, typename Topology::memory_space> order,
                    TraversalMetrics<typename Topology::memory_space> const& metrics);

} // namespace detail

// The number of warps a lockstep strategy forms for `queries` queries on `space`.
template <class ExecutionSpace, class Strategy>
Index warp_count(Strategy const& strategy, Index queries) {
  int size = 32;
  if constexpr ((is_lockstep_v<strategy_t<Strategy>> ||
                 std::is_same_v<strategy_t<Strategy>, Regtt>)&&!is_cuda_space_v<ExecutionSpace>)
    size = strategy_of(strategy).warp_size;
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
// `strategy` may be placed on SMs: placed(strategy, placement) (placement.hpp),
// except REGTT and the group walk.
template <class ExecutionSpace, class Topology, class Visitor, class Strategy>
void traverse(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Strategy strategy,
              Kokkos::View<Index const*, typename Topology::memory_space> order = {},
              TraversalMetrics<typename Topology::memory_space> const& metrics = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: a Kokkos execution space");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Topology::memory_space>::accessible,
      "the execution space must reach the tree's memory space");
  using Tag = strategy_t<Strategy>;
  auto const& tag = strategy_of(strategy);
  auto const& placement = placement_of(strategy);
  using Placement = std::decay_t<decltype(placement)>;
  std::string const label =
      std::string("treetrav::traverse::") + Tag::name +
      (std::is_same_v<Placement, Hardware> ? "" : std::string("@") + Placement::name);
  static_assert(placement_applies_v<Tag, Placement>,
                "REGTT and the group walk run under the hardware placement only");
  Kokkos::Profiling::pushRegion(label);
  Index const items = detail::work_count(visitor, order);
  if constexpr (std::is_same_v<Tag, Recursive>) {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                  "the recursive reference strategy runs on host execution spaces only");
    detail::run_items(space, label, topology, visitor, order,
                      detail::RecursiveKernel<Topology, Visitor>{topology, visitor, order}, items,
                      1, placement);
  } else if constexpr (std::is_same_v<Tag, Autoropes>) {
    detail::run_items(space, label, topology, visitor, order,
                      detail::AutoropesKernel<Topology, Visitor>{topology, visitor, order}, items,
                      1, placement);
  } else if constexpr (std::is_same_v<Tag, Lockstep> || std::is_same_v<Tag, FsmLockstep>) {
    constexpr bool fsm = std::is_same_v<Tag, FsmLockstep>;
    if (metrics.enabled())
      detail::launch_lockstep<ExecutionSpace, Topology, Visitor, fsm, true>(
          space, label, topology, visitor, tag.warp_size, order, metrics, placement);
    else
      detail::launch_lockstep<ExecutionSpace, Topology, Visitor, fsm, false>(
          space, label, topology, visitor, tag.warp_size, order, metrics, placement);
  } else if constexpr (std::is_same_v<Tag, Hybrid>) {
    // The schedule replaces any order the caller gave; the placement applies
    // to its execute phase.
    detail::traverse_hybrid(space, topology, visitor, tag, metrics, placement);
  } else if constexpr (std::is_same_v<Tag, GroupWalk>) {
    if (metrics.enabled())
      throw std::invalid_argument("the group walk records no traversal metrics");
    detail::traverse_groups(space, label, topology, visitor, tag, order);
  } else if constexpr (std::is_same_v<Tag, Regtt>) {
    // Its sort permutes the caller's order (ties keep it).
    detail::traverse_regtt(space, topology, visitor, tag, order, metrics);
  } else {
    static_assert(sizeof(Tag) == 0, "unknown traversal strategy");
  }
  Kokkos::Profiling::popRegion();
}

} // namespace treetrav

#include <treetrav/schedule/detail/hybrid_traverse.hpp>
#include <treetrav/schedule/detail/placement_plan.hpp>
#include <treetrav/schedule/detail/regtt_traverse.hpp>
