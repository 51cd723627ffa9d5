#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/trees/node_ref.hpp>

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
//
// Keyed visitors (static constexpr bool keyed = true) also let a kernel walk
// by node references and keys, reading each node once:
//     KOKKOS_FUNCTION NodeRef root() const;
//     // An inner node's children and a key for each (a lower bound on the
//     // distance, say), from one read of the node's record.
//     KOKKOS_FUNCTION void child_keys(NodeRef inner, Index query, state_type const&,
//                                     NodeRef (&children)[arity], Coordinate (&keys)[arity]) const;
//     KOKKOS_FUNCTION bool prune(Coordinate key, state_type const&) const;  // truncate on a key alone
//     KOKKOS_FUNCTION void process_leaf(NodeRef leaf, Index query, state_type&) const;
// Such a kernel keeps each key on the stack beside its node, drops a popped
// node on its key without reading it, and pushes only surviving children;
// visit() stays what every other kernel calls.

// (NodeRef, a node as a keyed walk carries it: trees/node_ref.hpp.)
// The group interface (GroupWalk), for visitors whose queries are the tree's
// own points and whose per-node work splits into a test and interactions:
//
//     static constexpr bool group_walk = true;
//     using group_type = ...;    // what a group's walk tests nodes against
//     using node_record_type = ...;   // an accepted node's data, staged in scratch
//     using point_record_type = ...;  // a point of an opened leaf, staged in scratch
//     using query_record_type = ...;  // a query as its lane holds it
//     KOKKOS_FUNCTION bool active(Index query) const;  // walk this query?
//     // The group of the tree's points [first, last) (tree positions).
//     KOKKOS_FUNCTION group_type group(Index first, Index last) const;
//     // True: every query of the group takes the node whole (its record);
//     // false: the walk opens it (children, or a leaf's points one by one).
//     KOKKOS_FUNCTION bool accept(Index node, group_type const&) const;
//     // Optional: true drops the node for every query of the group (tested
//     // before accept()).
//     KOKKOS_FUNCTION bool skip(Index node, group_type const&) const;
//     KOKKOS_FUNCTION node_record_type node_record(Index node) const;
//     KOKKOS_FUNCTION point_record_type point_record(Index position) const;
//     KOKKOS_FUNCTION query_record_type query_record(Index query, Index position) const;
//     KOKKOS_FUNCTION void interact(node_record_type const&, query_record_type const&, state_type&) const;
//     KOKKOS_FUNCTION void interact(point_record_type const&, query_record_type const&, state_type&) const;
//
// with initialize and finalize as above. accept() must open every node that
// contains a point of the group if the point's own contribution is to be
// excluded; interact(point_record_type, ...) sees the query's own point too.
// Optionally, state too large for registers (a histogram, say) can live in
// the warp's scratch memory, laid out by lane so that the lanes of a warp,
// whatever each of them indexes, touch distinct banks. A lane holds up to
// group_walk_slots queries of the group (slot 0 first: a lane with a query
// in slot 1 has one in slot 0); initialize and finalize then take the warp's
// state and the query's lane and slot:
//
//     using warp_state_type = ...;  // one per warp, in scratch; void: none
//     KOKKOS_FUNCTION void initialize(Index query, state_type&, warp_state_type&, int lane, int slot) const;
//     KOKKOS_FUNCTION void finalize(Index query, state_type const&, warp_state_type&, int lane, int slot) const;
//
// Optionally, when states sum (an acceleration, a count: a query's state from
// part of a list joined with its state from the rest equals its state from
// the whole list, up to rounding), a visitor without warp state says so:
//
//     KOKKOS_FUNCTION void join(state_type&, state_type const&) const;
//
// Then the queries past a warp's worth in a group each have several lanes,
// every lane summing part of each list, joined before finalize: a group of
// 40 queries costs 1.25 passes over its lists instead of 2.

// A warp of the group walk: its lanes, and the queries each holds at once.
inline constexpr int group_walk_lanes = 32;
inline constexpr int group_walk_slots = 2;

namespace detail {

// Slot of the child visited in position `rank` when `first` goes first.
KOKKOS_FORCEINLINE_FUNCTION int child_slot(int rank, int first) {
  return rank == 0 ? first : (rank - 1 < first ? rank - 1 : rank);
}

}  // namespace detail
}  // namespace treetrav
