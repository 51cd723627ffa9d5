#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/trees/node_ref.hpp>

#include <cstdint>

namespace treetrav {

// The shape of a complete binary tree stored implicitly, in heap order: node
// i's children are 2i + 1 and 2i + 2, its parent (i - 1) / 2, and the 2^levels
// leaves share the tree's n points evenly, so node i at depth l (the j-th of
// its level) owns points [floor(j n / 2^l), floor((j + 1) n / 2^l)). No links
// are stored: a visit reads nothing but the node's own record, and siblings
// are neighbours in memory, so both children of a node are read in one go.
// A leaf may be empty only when the tree has more leaves than points.
// The same interface as TreeTopology (root, is_leaf, child, parent, point
// ranges), so every traversal strategy walks both.
template <class MemorySpace>
struct ImplicitBinaryTopology {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "ImplicitBinaryTopology needs a Kokkos memory space");
  using memory_space = MemorySpace; // where the tree's node records live
  static constexpr int arity = 2;
  static constexpr int max_depth = 31;  // leaves at depth <= log2(points) + 1 for 32-bit point counts
  Index points = 0;
  int levels = 0; // depth of the leaves

  ImplicitBinaryTopology() = default;
  ImplicitBinaryTopology(Index point_count, int leaf_depth)
      : points(point_count), levels(leaf_depth) {}

  // The smallest depth whose leaves hold at most `leaf_size` points each.
  static int levels_for(Index point_count, int leaf_size) {
    int levels = 0;
    while ((std::int64_t(leaf_size) << levels) < point_count)
      ++levels;
    return levels;
  }

  KOKKOS_FUNCTION Index size() const { return (Index(2) << levels) - 1; }
  KOKKOS_FUNCTION Index leaf_count() const { return Index(1) << levels; }
  KOKKOS_FUNCTION Index first_leaf() const { return (Index(1) << levels) - 1; }
  KOKKOS_FUNCTION static constexpr Index root() { return 0; }
  KOKKOS_FUNCTION bool is_leaf(Index node) const { return node >= first_leaf(); }
  KOKKOS_FUNCTION Index child(Index node, int slot) const {
    return is_leaf(node) ? -1 : 2 * node + 1 + slot;
  }
  KOKKOS_FUNCTION Index parent(Index node) const { return node == 0 ? -1 : (node - 1) / 2; }
  // How a keyed walk carries `node`.
  KOKKOS_FUNCTION NodeRef ref(Index node) const {
    return is_leaf(node) ? NodeRef::leaf(point_begin(node), point_end(node) - point_begin(node)) : NodeRef::inner(node);
  }
  KOKKOS_FUNCTION static int depth(Index node) {
#if defined(__CUDA_ARCH__)
    return 31 - __clz(node + 1);
#else
    return 31 - __builtin_clz(static_cast<unsigned>(node) + 1);
#endif
  }
  // First point of the j-th node of depth l (j may be 2^l: the end).
  KOKKOS_FUNCTION Index level_point(int l, Index j) const {
    return static_cast<Index>((static_cast<std::int64_t>(j) * points) >> l);
  }
  KOKKOS_FUNCTION Index point_begin(Index node) const {
    int const l = depth(node);
    return level_point(l, node - ((Index(1) << l) - 1));
  }
  KOKKOS_FUNCTION Index point_end(Index node) const {
    int const l = depth(node);
    return level_point(l, node - ((Index(1) << l) - 1) + 1);
  }
  // The leaf that owns sorted point p.
  KOKKOS_FUNCTION Index leaf_of(Index p) const {
    return first_leaf() +
           static_cast<Index>((((static_cast<std::int64_t>(p) + 1) << levels) - 1) / points);
  }
};

namespace detail {

// A copy of a tree's shape that host code can read (nothing to copy here).
template <class MemorySpace>
ImplicitBinaryTopology<Kokkos::HostSpace>
host_topology(ImplicitBinaryTopology<MemorySpace> const& topology) {
  return {topology.points, topology.levels};
}

} // namespace detail
} // namespace treetrav
