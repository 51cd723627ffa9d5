#pragma once

#include <treetrav/trees/detail/layout.hpp>

namespace treetrav {

// Reorders a host tree's nodes in place: the nodes above depth `bfs_depth`
// breadth-first, every subtree below depth-first (REGTT's layout; 0 restores
// the default depth-first layout). The tree's points are untouched.
template <class ExecutionSpace, class Tree>
void relayout(ExecutionSpace const& space, Tree& tree, int bfs_depth) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "relayout runs in a host execution space");
  Kokkos::Profiling::pushRegion("treetrav::relayout");
  auto const& topology = tree.topology;
  auto order = detail::layout_order(
      topology.size(), topology.arity, [&](Index node, int slot) { return topology.children(node, slot); },
      bfs_depth);
  Kokkos::View<Index*, Kokkos::HostSpace> new_index("treetrav::relayout::new_index", order.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_index(i) = order[i];
  tree.for_each_node_field([&](auto& field) { field = detail::permute_rows(space, field, new_index); });
  // Node indices stored in the topology now refer to old positions: renumber.
  auto children = tree.topology.children;
  auto parent = tree.topology.parent;
  Kokkos::parallel_for(
      "treetrav::relayout::renumber", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.topology.size()),
      [=](Index node) {
        for (std::size_t slot = 0; slot < children.extent(1); ++slot)
          if (children(node, slot) >= 0) children(node, slot) = new_index(children(node, slot));
        if (parent(node) >= 0) parent(node) = new_index(parent(node));
      });
  space.fence();
  Kokkos::Profiling::popRegion();
}

}  // namespace treetrav
