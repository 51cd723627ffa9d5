#pragma once

#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/kernels/visitor.hpp>
#include <treetrav/trees/packed_points.hpp>

#include <string>

namespace treetrav::detail {

// What every search checks of its queries before any work, against a
// reference set of reference_size points of reference_dimension.
template <class MemorySpace>
void check_queries(Index reference_size, int reference_dimension,
                   PointSet<MemorySpace> const& queries, bool exclude_self) {
  if (queries.dimension() != reference_dimension)
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(reference_dimension));
  if (exclude_self && queries.size() != reference_size)
    throw InputError("exclude_self", " needs the queries to be the reference set");
}

// visit() of a keyed search visitor (kNN, radius) in terms of its keyed
// operations, for the kernels that walk by node ids: a node whose bound
// prunes it is skipped, an inner node descended into, a leaf scanned.
template <int W, class Visitor>
KOKKOS_FORCEINLINE_FUNCTION bool visit_by_bound(Visitor const& visitor, Index node, Index query,
                                                typename Visitor::state_type& state) {
  if (visitor.prune(visitor.tree.template min_distance2<W>(node, state.query), state))
    return false;
  NodeRef const ref = visitor.tree.topology.ref(node);
  if (!ref.is_leaf())
    return true;
  visitor.process_leaf(ref, query, state);
  return false;
}

// The walk order of a search: the caller's permutation when given, else the
// one options ask for (sfc: sorted here, on the device, as part of the call).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index const*, MemorySpace>
resolve_order(ExecutionSpace const& space, PointSet<MemorySpace> const& queries, QueryOrder wanted,
              Kokkos::View<Index const*, MemorySpace> given) {
  if (given.extent(0) != 0 || wanted == QueryOrder::none || queries.size() == 0)
    return given;
  return morton_order(space, queries);
}

} // namespace treetrav::detail
