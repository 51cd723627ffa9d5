#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/trees/node_ref.hpp>

#include <cstdint>

namespace treetrav {

// The shape of a binary radix tree over n Morton-sorted points (Karras 2012):
// every internal node splits its range of points where the Morton codes'
// common prefix ends, i.e. at a spatial midpoint along one axis, so every
// node is a tight cluster of space. Node ids: internal nodes 0 .. n - 2 (the
// root is 0), then the n single points, point p as node n - 1 + p (a
// one-point tree is the point itself, node 0). A node of at most `leaf_size`
// points is a leaf: traversals scan its points and never go below it.
// The same interface as TreeTopology (root, is_leaf, child, parent, point
// ranges), so every traversal strategy walks it.
template <class MemorySpace>
struct RadixTopology {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "RadixTopology needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr int arity = 2;
  // Each level down lengthens the common prefix of the keys (64-bit code,
  // 32-bit position) by at least one bit.
  static constexpr int max_depth = 96;
  enum Field { first_point, last_point, split_point, parent_node, fields };

  Index points = 0;
  int leaf_size = 1;
  // Per internal node: its points [first, last], the split (the last point of
  // its left child) and its parent (-1 at the root).
  Kokkos::View<Index* [fields], Kokkos::LayoutRight, MemorySpace> internal;
  Kokkos::View<Index*, MemorySpace> point_parent; // parent of each single-point node

  KOKKOS_FUNCTION Index size() const { return 2 * points - 1; }
  KOKKOS_FUNCTION static constexpr Index root() { return 0; }
  KOKKOS_FUNCTION Index internal_count() const { return points - 1; }
  KOKKOS_FUNCTION bool is_internal(Index node) const { return node < points - 1; }
  KOKKOS_FUNCTION Index point_node(Index p) const { return points - 1 + p; }

  KOKKOS_FUNCTION Index point_begin(Index node) const {
    return is_internal(node) ? internal(node, first_point) : node - (points - 1);
  }
  KOKKOS_FUNCTION Index point_end(Index node) const {
    return is_internal(node) ? internal(node, last_point) + 1 : node - (points - 2);
  }
  KOKKOS_FUNCTION bool is_leaf(Index node) const {
    return !is_internal(node) ||
           internal(node, last_point) - internal(node, first_point) < leaf_size;
  }
  // Child `slot` of an internal node whose points are [first, last] and
  // split at `split`: the point itself when a side holds one point.
  KOKKOS_FUNCTION Index child_of(Index first, Index last, Index split, int slot) const {
    return slot == 0 ? (first == split ? point_node(split) : split)
                     : (last == split + 1 ? point_node(split + 1) : split + 1);
  }
  KOKKOS_FUNCTION Index child(Index node, int slot) const {
    if (is_leaf(node))
      return -1;
    return child_of(internal(node, first_point), internal(node, last_point),
                    internal(node, split_point), slot);
  }
  // How a keyed walk carries `node`.
  KOKKOS_FUNCTION NodeRef ref(Index node) const {
    return is_leaf(node) ? NodeRef::leaf(point_begin(node), point_end(node) - point_begin(node)) : NodeRef::inner(node);
  }
  KOKKOS_FUNCTION Index parent(Index node) const {
    return is_internal(node) ? internal(node, parent_node) : point_parent(node - (points - 1));
  }
};

namespace detail {

// A copy of a tree's shape that host code can read.
template <class MemorySpace>
RadixTopology<Kokkos::HostSpace> host_topology(RadixTopology<MemorySpace> const& topology) {
  RadixTopology<Kokkos::HostSpace> host;
  host.points = topology.points;
  host.leaf_size = topology.leaf_size;
  host.internal = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, topology.internal);
  host.point_parent =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, topology.point_parent);
  return host;
}

} // namespace detail
} // namespace treetrav
