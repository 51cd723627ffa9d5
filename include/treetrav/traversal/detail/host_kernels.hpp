#pragma once

#include <treetrav/traversal/strategies.hpp>
#include <treetrav/traversal/visitor.hpp>

namespace treetrav::detail {

// Maps a thread's work item to the query it serves (identity when no order).
template <class OrderView>
KOKKOS_FORCEINLINE_FUNCTION Index query_at(OrderView const& order, Index i) {
  return order.extent(0) == 0 ? i : order(i);
}

template <class Topology, class Visitor>
struct RecursiveKernel {
  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, typename Topology::memory_space> order;

  void walk(Index node, Index query, typename Visitor::state_type& state) const {
    if (!visitor.visit(node, query, state) || topology.is_leaf(node)) return;
    int const first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
    for (int rank = 0; rank < Topology::arity; ++rank) {
      Index const child = topology.child(node, child_slot(rank, first));
      if (child >= 0) walk(child, query, state);
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
  static constexpr int stack_capacity = max_tree_depth * (Topology::arity - 1) + 1;

  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, typename Topology::memory_space> order;

  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const query = query_at(order, i);
    typename Visitor::state_type state;
    visitor.initialize(query, state);
    descend(Topology::root(), query, state);
    visitor.finalize(query, state);
  }

  // The walk of the subtree under `root` (REGTT continues from each query's
  // frontier with it).
  KOKKOS_FUNCTION void descend(Index root, Index query, typename Visitor::state_type& state) const {
    Index ropes[stack_capacity];
    int top = 0;
    ropes[top++] = root;
    while (top > 0) {
      Index const node = ropes[--top];
      if (!visitor.visit(node, query, state) || topology.is_leaf(node)) continue;
      int const first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
      for (int rank = Topology::arity - 1; rank >= 0; --rank) {
        Index const child = topology.child(node, child_slot(rank, first));
        if (child >= 0) ropes[top++] = child;
      }
    }
  }
};

}  // namespace treetrav::detail
