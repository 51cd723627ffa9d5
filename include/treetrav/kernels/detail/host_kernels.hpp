#pragma once

#include <treetrav/kernels/visitor.hpp>

#include <type_traits>

namespace treetrav::detail {

// Maps a thread's work item to the query it serves (identity when no order).
template <class OrderView>
KOKKOS_FORCEINLINE_FUNCTION Index query_at(OrderView const& order, Index i) {
  return order.extent(0) == 0 ? i : order(i);
}

// Work items of a traversal: every query, or the ones `order` lists (an
// order may name a subset of the queries, each at most once).
template <class Visitor, class OrderView>
KOKKOS_INLINE_FUNCTION Index work_count(Visitor const& visitor, OrderView const& order) {
  return order.extent(0) == 0 ? visitor.query_count() : static_cast<Index>(order.extent(0));
}

// Keyed visitors (see visitor.hpp) may be walked by references and keys.
// The deepest a tree of this shape can be: Topology::max_depth where the
// shape says, else the builders' max_tree_depth.
template <class Topology, class = void>
struct depth_limit : std::integral_constant<int, max_tree_depth> {};
template <class Topology>
struct depth_limit<Topology, std::void_t<decltype(Topology::max_depth)>>
    : std::integral_constant<int, Topology::max_depth> {};
template <class Topology>
inline constexpr int tree_depth_limit = depth_limit<Topology>::value;

template <class Visitor, class = void>
struct is_keyed : std::false_type {};
template <class Visitor>
struct is_keyed<Visitor, std::enable_if_t<Visitor::keyed>> : std::true_type {};
template <class Visitor>
inline constexpr bool is_keyed_v = is_keyed<Visitor>::value;

template <class Topology, class Visitor>
struct RecursiveKernel {
  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, typename Topology::memory_space> order;

  void walk(Index node, Index query, typename Visitor::state_type& state) const {
    if (!visitor.visit(node, query, state) || topology.is_leaf(node))
      return;
    int const first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
    for (int rank = 0; rank < Topology::arity; ++rank) {
      Index const child = topology.child(node, child_slot(rank, first));
      if (child >= 0)
        walk(child, query, state);
    }
  }

  void operator()(Index i) const {
    Index const query = query_at(order, i);
    typename Visitor::state_type state;
    visitor.initialize(query, state);
    walk(Topology::root(), query, state);
    visitor.finalize(query, state);
  }
};

template <class Topology, class Visitor>
struct AutoropesKernel {
  // Depth-first pushes leave at most arity - 1 siblings per level on the stack.
  static constexpr int stack_capacity = tree_depth_limit<Topology> * (Topology::arity - 1) + 1;

  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, typename Topology::memory_space> order;

  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const query = query_at(order, i);
    typename Visitor::state_type state;
    visitor.initialize(query, state);
    if constexpr (is_keyed_v<Visitor>)
      walk_keyed(visitor.root(), query, state);
    else
      descend(Topology::root(), query, state);
    visitor.finalize(query, state);
  }

  // The walk of the subtree under `root` (REGTT continues from each query's
  // frontier with it).
  KOKKOS_FORCEINLINE_FUNCTION void descend(Index root, Index query, typename Visitor::state_type& state) const {
    Index ropes[stack_capacity];
    int top = 0;
    ropes[top++] = root;
    while (top > 0) {
      Index const node = ropes[--top];
      if (!visitor.visit(node, query, state) || topology.is_leaf(node))
        continue;
      int const first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
      for (int rank = Topology::arity - 1; rank >= 0; --rank) {
        Index const child = topology.child(node, child_slot(rank, first));
        if (child >= 0)
          ropes[top++] = child;
      }
    }
  }

#if defined(__NVCC__)
  // nvcc's front end reads pop()'s by-reference capture of the stacks as a use
  // before they are set (warning 549); pop() reads only entries pushed before.
#pragma nv_diag_suppress 549
#endif
  // The same walk for keyed visitors, in "while-while" form (Aila & Laine
  // 2009): a lane first descends through inner nodes until it holds a leaf
  // (the nearest surviving child taken next without a round trip through the
  // stack, the others waiting there with their keys: guided visitors in key
  // order, others in slot order), and only then scans it, so the lanes of a
  // GPU warp scan their leaves together rather than one branch at a time.
  // `start` is walked whole (REGTT starts at frontier nodes its visit() kept).
  KOKKOS_FORCEINLINE_FUNCTION void walk_keyed(NodeRef start, Index query,
                                              typename Visitor::state_type& state) const {
    constexpr int arity = Topology::arity;
    NodeRef ropes[stack_capacity];
    Coordinate rope_keys[stack_capacity];
    int top = 0;
    // The next surviving node from the stack; false when none is left.
    auto const pop = [&](NodeRef& ref) {
      do {
        if (top == 0)
          return false;
        --top;
      } while (visitor.prune(rope_keys[top], state));
      ref = ropes[top];
      return true;
    };
    NodeRef ref = start;
    while (true) {
      while (!ref.is_leaf()) {
        NodeRef children[arity];
        Coordinate keys[arity];
        visitor.child_keys(ref, query, state, children, keys);
        if constexpr (arity == 2) {
          // Selects rather than an index array, so that children and keys
          // stay in registers (an array indexed at run time goes to local
          // memory: 2 KB of it per kNN query before).
          bool const swap = Visitor::guided && keys[1] < keys[0];
          NodeRef const near = swap ? children[1] : children[0];
          NodeRef const far = swap ? children[0] : children[1];
          Coordinate const near_key = swap ? keys[1] : keys[0];
          Coordinate const far_key = swap ? keys[0] : keys[1];
          if (!visitor.prune(far_key, state)) {
            ropes[top] = far;
            rope_keys[top++] = far_key;
          }
          if (!visitor.prune(near_key, state))
            ref = near;
          else if (!pop(ref))
            return;
        } else {
          int rank_slot[arity];
          for (int slot = 0; slot < arity; ++slot)
            rank_slot[slot] = slot;
          if constexpr (Visitor::guided)
            for (int rank = 1; rank < arity; ++rank) // a stable insertion sort by key
              for (int j = rank; j > 0 && keys[rank_slot[j]] < keys[rank_slot[j - 1]]; --j) {
                int const t = rank_slot[j];
                rank_slot[j] = rank_slot[j - 1];
                rank_slot[j - 1] = t;
              }
          for (int rank = arity - 1; rank > 0; --rank)
            if (!visitor.prune(keys[rank_slot[rank]], state)) {
              ropes[top] = children[rank_slot[rank]];
              rope_keys[top++] = keys[rank_slot[rank]];
            }
          if (!visitor.prune(keys[rank_slot[0]], state))
            ref = children[rank_slot[0]];
          else if (!pop(ref))
            return;
        }
      }
      visitor.process_leaf(ref, query, state);
      if (!pop(ref))
        return;
    }
  }
#if defined(__NVCC__)
#pragma nv_diag_default 549
#endif
};

} // namespace treetrav::detail
