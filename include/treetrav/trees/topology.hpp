#pragma once

#include <treetrav/core/point_set.hpp>

#include <string>

namespace treetrav {

// The shape of any tree, as flattened SoA node arrays (no pointers), so one
// traversal driver walks BVHs, vp and ball trees and octrees alike.
//   children(node, slot): child node index or -1; present children fill the
//       first slots, so a node is a leaf iff children(node, 0) < 0.
//   point_begin/point_end: the node's subtree owns the tree's (permuted)
//       points [begin, end); for a leaf these are the points it holds.
//   parent(node): -1 at the root. The root is node 0 in every layout.
template <int Arity, class MemorySpace>
struct TreeTopology {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "TreeTopology's memory space must be a Kokkos memory space");
  static constexpr int arity = Arity;
  using memory_space = MemorySpace;
  using index_view = Kokkos::View<Index*, MemorySpace>;

  Kokkos::View<Index**, Kokkos::LayoutLeft, MemorySpace> children;
  index_view parent;
  index_view point_begin;
  index_view point_end;

  KOKKOS_FUNCTION Index size() const { return static_cast<Index>(parent.extent(0)); }
  KOKKOS_FUNCTION static constexpr Index root() { return 0; }
  KOKKOS_FUNCTION bool is_leaf(Index node) const { return children(node, 0) < 0; }
  KOKKOS_FUNCTION Index child(Index node, int slot) const { return children(node, slot); }

  // Calls f(view) on every node-indexed field (rows = nodes).
  template <class F>
  void for_each_node_field(F&& f) {
    f(children);
    f(parent);
    f(point_begin);
    f(point_end);
  }
};

// The points a tree was built over, permuted so that every subtree's points are
// contiguous; original_index maps back to the caller's row.
template <class MemorySpace>
struct TreePoints {
  PointSet<MemorySpace> points;
  Kokkos::View<Index*, MemorySpace> original_index;

  KOKKOS_FUNCTION Index size() const { return points.size(); }
};

namespace detail {

// A deep copy of `src` in the memory space of `space` (the same View when no
// copy is needed).
template <class ExecutionSpace, class View>
auto copy_view(ExecutionSpace const& space, View const& src) {
  return Kokkos::create_mirror_view_and_copy(space, src);
}

template <class ExecutionSpace, int Arity, class MemorySpace>
TreeTopology<Arity, typename ExecutionSpace::memory_space> copy_topology(
    ExecutionSpace const& space, TreeTopology<Arity, MemorySpace> const& src) {
  TreeTopology<Arity, typename ExecutionSpace::memory_space> dst;
  dst.children = copy_view(space, src.children);
  dst.parent = copy_view(space, src.parent);
  dst.point_begin = copy_view(space, src.point_begin);
  dst.point_end = copy_view(space, src.point_end);
  return dst;
}

// A copy of a tree's shape that host code can read.
template <int Arity, class MemorySpace>
TreeTopology<Arity, Kokkos::HostSpace> host_topology(TreeTopology<Arity, MemorySpace> const& topology) {
  return copy_topology(Kokkos::DefaultHostExecutionSpace{}, topology);
}

template <class ExecutionSpace, class MemorySpace>
TreePoints<typename ExecutionSpace::memory_space> copy_tree_points(
    ExecutionSpace const& space, TreePoints<MemorySpace> const& src) {
  TreePoints<typename ExecutionSpace::memory_space> dst;
  dst.points = PointSet<typename ExecutionSpace::memory_space>(copy_view(space, src.points.coordinates),
                                                               copy_view(space, src.points.ids));
  dst.original_index = copy_view(space, src.original_index);
  return dst;
}

}  // namespace detail
}  // namespace treetrav
