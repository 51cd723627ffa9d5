#pragma once

#include <treetrav/trees/topology.hpp>

#include <vector>

namespace treetrav::detail {

// The node order that stores nodes above `bfs_depth` breadth-first and every
// subtree rooted at depth `bfs_depth` depth-first (pre-order, children in slot
// order) after them. bfs_depth = 0 gives a pure depth-first layout.
// Returns new_index[old node] (host, sequential: O(nodes)).
template <class ChildOf>
std::vector<Index> layout_order(Index node_count, int arity, ChildOf const& child_of, int bfs_depth) {
  std::vector<Index> order;
  order.reserve(node_count);
  std::vector<Index> frontier{0};
  for (int depth = 0; depth < bfs_depth && !frontier.empty(); ++depth) {
    std::vector<Index> next;
    for (Index node : frontier) {
      order.push_back(node);
      for (int slot = 0; slot < arity && child_of(node, slot) >= 0; ++slot)
        next.push_back(child_of(node, slot));
    }
    frontier.swap(next);
  }
  std::vector<Index> stack;
  for (Index subtree_root : frontier) {
    stack.push_back(subtree_root);
    while (!stack.empty()) {
      Index node = stack.back();
      stack.pop_back();
      order.push_back(node);
      int count = 0;
      while (count < arity && child_of(node, count) >= 0) ++count;
      for (int slot = count - 1; slot >= 0; --slot) stack.push_back(child_of(node, slot));
    }
  }
  std::vector<Index> new_index(node_count, -1);
  for (Index position = 0; position < static_cast<Index>(order.size()); ++position)
    new_index[order[position]] = position;
  return new_index;
}

// dst(new_index[i], ...) = src(i, ...) for a rank-1 or rank-2 host View.
template <class ExecutionSpace, class View>
View permute_rows(ExecutionSpace const& space, View const& src, Kokkos::View<Index*, Kokkos::HostSpace> new_index) {
  View dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, src.label()), src.layout());
  Kokkos::parallel_for(
      "treetrav::relayout::permute_rows",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<Index>(src.extent(0))), [=](Index i) {
        if constexpr (View::rank == 1) {
          dst(new_index(i)) = src(i);
        } else {
          for (std::size_t k = 0; k < src.extent(1); ++k) dst(new_index(i), k) = src(i, k);
        }
      });
  space.fence();
  return dst;
}

}  // namespace treetrav::detail
