#pragma once

#include <treetrav/core/config.hpp>

namespace treetrav {

// The one traversal interface. An application is a small visitor type:
//
//   struct MyVisitor {
//     using state_type = ...;               // per-query state (e.g. k best)
//     static constexpr bool guided = ...;   // does the query choose child order?
//     KOKKOS_FUNCTION Index query_count() const;
//     KOKKOS_FUNCTION void initialize(Index query, state_type&) const;
//     // Does the work of (node, query) and returns whether to descend into
//     // the node's children; false truncates the traversal below `node`.
//     KOKKOS_FUNCTION bool visit(Index node, Index query, state_type&) const;
//     // Guided visitors only: the child slot to visit first; the other
//     // children follow in slot order.
//     KOKKOS_FUNCTION int first_child(Index node, Index query, state_type const&) const;
//     KOKKOS_FUNCTION void finalize(Index query, state_type const&) const;
//   };
//
// Queries are identified by their index in the caller's order; a query order
// (a permutation) only changes which thread/lane takes which query.

namespace detail {

// Slot of the child visited in position `rank` when `first` goes first.
KOKKOS_FORCEINLINE_FUNCTION int child_slot(int rank, int first) {
  return rank == 0 ? first : (rank - 1 < first ? rank - 1 : rank);
}

}  // namespace detail
}  // namespace treetrav
