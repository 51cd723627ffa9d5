#pragma once

#include <treetrav/core/config.hpp>

namespace treetrav {

// A node as a keyed walk carries it: an inner node by its id (count < 0), a
// leaf by the range of tree points it holds, [first, first + count).
struct NodeRef {
  Index index;  // inner: node id; leaf: first point
  Index count;  // inner: -1; leaf: number of points (0: an empty leaf)
  KOKKOS_FORCEINLINE_FUNCTION bool is_leaf() const { return count >= 0; }
  KOKKOS_FORCEINLINE_FUNCTION static NodeRef inner(Index node) { return {node, -1}; }
  KOKKOS_FORCEINLINE_FUNCTION static NodeRef leaf(Index first, Index count) { return {first, count}; }
};

} // namespace treetrav
