#pragma once

#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/detail/warp.hpp>
#include <treetrav/kernels/metrics.hpp>

#include <climits>

namespace treetrav::detail {

template <class Visitor>
struct LaneState {
  Index query;
  bool valid;       // a padding lane past the last query never traverses
  bool traversing;  // FSM: traversing (true) or truncated (false)
  int critical;     // FSM: stack depth at which a truncated lane rejoins
  std::int64_t visits;
  typename Visitor::state_type state;
};

// Lockstep traversal (a warp walks the tree together), in two flavours:
//  - Lockstep (Goldfarb et al.): each stack entry carries the mask of lanes
//    that take part in its subtree; lanes outside it are carried along idle.
//  - FsmLockstep (Liu et al. §5): the stack holds nodes only; each lane keeps
//    a traversing/truncated flag and the critical stack depth at which it
//    truncated, and rejoins once the stack is popped below that depth.
// The warp descends into a node's children when any active lane wants to;
// guided visitors order the children by a ballot majority of those lanes.
// Each lane visits exactly its own non-truncated nodes, so results equal the
// other strategies'.
template <class Topology, class Visitor, bool Fsm, bool Measure>
struct LockstepKernel {
  static_assert(!Visitor::guided || Topology::arity == 2, "the child-order vote is for binary trees");
  static constexpr int stack_capacity = tree_depth_limit<Topology> * (Topology::arity - 1) + 1;
  using memory_space = typename Topology::memory_space;

  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, memory_space> order;
  TraversalMetrics<memory_space> metrics;

  template <class Warp>
  KOKKOS_FUNCTION void walk(Warp const& warp, Index warp_index) const {
    using State = LaneState<Visitor>;
    typename Warp::template PerLane<State> lanes;
    Index const query_count = work_count(visitor, order);
    warp.for_each_lane(lanes, [&](int lane, State& s) {
      Index const i = warp_index * warp.size() + lane;
      s.valid = i < query_count;
      s.query = s.valid ? query_at(order, i) : 0;
      s.visits = 0;
      if (s.valid) visitor.initialize(s.query, s.state);
    });
    LaneMask const valid = warp.ballot(lanes, [](int, State& s) { return s.valid; });
    std::int64_t warp_visits = 0;
    descend(warp, lanes, Topology::root(), valid, warp_visits);
    warp.for_each_lane(lanes, [&](int lane, State& s) {
      if (!s.valid) return;
      visitor.finalize(s.query, s.state);
      if constexpr (Measure) {
        metrics.query_visits(s.query) = s.visits;
        if (lane == 0) metrics.warp_visits(warp_index) = warp_visits;
      }
    });
  }

  // The warp walks the subtree under `root` in lockstep; the lanes in
  // `members` take part, the others idle through it. `lanes` holds a
  // LaneState (or a type derived from it) per lane; REGTT continues from each
  // frontier node with this.
  template <class Warp, class Lanes>
  KOKKOS_FUNCTION void descend(Warp const& warp, Lanes& lanes, Index root, LaneMask members,
                               std::int64_t& warp_visits) const {
    using State = LaneState<Visitor>;
    if constexpr (Fsm)
      warp.for_each_lane(lanes, [&](int lane, State& s) {
        s.traversing = members >> lane & 1;
        s.critical = s.traversing ? INT_MAX : 0;  // a non-member never rejoins in this subtree
      });
    Index stack[stack_capacity];
    LaneMask masks[Fsm ? 1 : stack_capacity];
    int top = 0;
    stack[top] = root;
    if constexpr (!Fsm) masks[top] = members;
    ++top;
    while (top > 0) {
      --top;
      Index const node = stack[top];
      LaneMask const entry_members = Fsm ? 0 : masks[Fsm ? 0 : top];
      bool const leaf = topology.is_leaf(node);
      if constexpr (Measure) ++warp_visits;
      LaneMask const descending = warp.ballot(lanes, [&](int lane, State& s) {
        if constexpr (Fsm) {
          if (!s.traversing && s.valid && top < s.critical) s.traversing = true, s.critical = INT_MAX;
          if (!s.traversing) return false;
        } else {
          if (!(entry_members >> lane & 1)) return false;
        }
        if constexpr (Measure) ++s.visits;
        bool const wants = visitor.visit(node, s.query, s.state);
        if constexpr (Fsm) {
          if (!wants) s.traversing = false, s.critical = top;
        }
        return wants && !leaf;
      });
      if (descending == 0) continue;
      int first = 0;
      if constexpr (Visitor::guided) {
        LaneMask const votes = warp.ballot(lanes, [&](int lane, State& s) {
          return (descending >> lane & 1) && visitor.first_child(node, s.query, s.state) == 1;
        });
        first = 2 * popcount(votes) > popcount(descending) ? 1 : 0;
      }
      for (int rank = Topology::arity - 1; rank >= 0; --rank) {
        Index const child = topology.child(node, child_slot(rank, first));
        if (child < 0) continue;
        if constexpr (!Fsm) masks[top] = descending;
        stack[top++] = child;
      }
    }
  }
};

// Host backends: one work item per warp, its lanes emulated by one thread.
template <class Kernel>
struct HostWarpLaunch {
  Kernel kernel;
  int warp_size;
  void operator()(Index warp_index) const { kernel.walk(HostWarp{warp_size}, warp_index); }
};

#if defined(KOKKOS_ENABLE_CUDA)
// CUDA: one thread per lane. Kokkos' range kernels hand out indices in
// warp-aligned runs (block sizes are multiples of 32), checked here.
template <class Kernel>
struct CudaWarpLaunch {
  Kernel kernel;
  KOKKOS_FUNCTION void operator()(Index i) const {
#if defined(__CUDA_ARCH__)
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    if (lane != (static_cast<unsigned>(i) & 31u)) Kokkos::abort("treetrav: lockstep warp is not aligned");
    kernel.walk(CudaWarp{static_cast<int>(lane), __activemask()}, i / 32);
#else
    (void)i;
#endif
  }
};
#endif

}  // namespace treetrav::detail
