#pragma once

// The sequential reference (and the paper's CPU baseline): one host thread,
// O(n), in the definitions' order.
#include <treetrav/treefix/rooted_tree.hpp>
#include <treetrav/treefix/treefix.hpp>

#include <vector>

namespace treetrav {

// The vertices in an order where every parent comes before its children.
inline std::vector<Index> parents_first_order(RootedTree<Kokkos::HostSpace> const& tree) {
  auto const& parents = tree.parents();
  std::vector<Index> order;
  order.reserve(tree.size());
  std::vector<bool> placed(tree.size(), false);
  std::vector<Index> unplaced_ancestors;
  for (Index v = 0; v < tree.size(); ++v) {
    for (Index u = v; u != no_parent && !placed[u]; u = parents(u))
      unplaced_ancestors.push_back(u);
    for (; !unplaced_ancestors.empty(); unplaced_ancestors.pop_back()) {
      placed[unplaced_ancestors.back()] = true;
      order.push_back(unplaced_ancestors.back());
    }
  }
  return order;
}

// Rootfix combines from the root down (parent's result, then the vertex's
// weight); leaffix adds each vertex's result into its parent's, leaves first.
template <class Operation, class Weights>
Kokkos::View<typename Operation::value_type*, Kokkos::HostSpace>
sequential_treefix(Treefix treefix, RootedTree<Kokkos::HostSpace> const& tree, Operation const& op,
                   Weights const& weights) {
  static_assert(
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Weights::memory_space>::accessible,
      "the sequential reference reads host weights");
  auto const& parents = tree.parents();
  auto const order = parents_first_order(tree);
  std::vector<typename Operation::accumulator_type> sums(tree.size());
  if (treefix == Treefix::rootfix) {
    for (Index v : order)
      sums[v] = v == tree.root() ? op.lift(weights(v))
                                 : op.combine(sums[parents(v)], op.lift(weights(v)));
  } else {
    for (Index v = 0; v < tree.size(); ++v)
      sums[v] = op.lift(weights(v));
    for (auto v = order.rbegin(); v != order.rend(); ++v)
      if (*v != tree.root())
        sums[parents(*v)] = op.combine(sums[parents(*v)], sums[*v]);
  }
  Kokkos::View<typename Operation::value_type*, Kokkos::HostSpace> results(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::sequential_treefix::results"),
      tree.size());
  for (Index v = 0; v < tree.size(); ++v)
    results(v) = op.lower(sums[v]);
  return results;
}

} // namespace treetrav
