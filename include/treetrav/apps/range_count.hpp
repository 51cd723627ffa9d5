#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/traverse.hpp>

#include <cmath>
#include <string>

namespace treetrav {

// Point correlation (PC): per query, the number of reference points within
// distance r (inclusive). Unguided: every query visits children in slot order.
template <class Tree>
struct RangeCountVisitor {
  using memory_space = typename Tree::memory_space;
  using state_type = std::int64_t;
  static constexpr bool guided = false;

  Tree tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> queries;
  Coordinate radius2;
  bool exclude_self;
  Kokkos::View<std::int64_t*, memory_space> counts;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(queries.extent(0)); }
  KOKKOS_FUNCTION void initialize(Index, state_type& count) const { count = 0; }

  KOKKOS_FUNCTION bool visit(Index node, Index query, state_type& count) const {
    if (tree.min_distance2(node, queries, query) > radius2) return false;
    if (!tree.topology.is_leaf(node)) return true;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      if (exclude_self && tree.points.original_index(i) == query) continue;
      if (distance2(tree.points.points.coordinates, i, queries, query) <= radius2) ++count;
    }
    return false;
  }

  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  KOKKOS_FUNCTION void finalize(Index query, state_type const& count) const { counts(query) = count; }
};

struct RangeCountOptions {
  Coordinate radius = 0.1f;
  bool exclude_self = false;
};

namespace detail {

// What every range count checks before it runs, whatever its strategy.
template <class MemorySpace>
void check_range_count_arguments(Index reference_size, int reference_dimension, PointSet<MemorySpace> const& queries,
                                 RangeCountOptions const& options) {
  if (!(options.radius > 0) || !std::isfinite(options.radius))
    throw InputError("-r must be a positive finite radius (got " + std::to_string(options.radius) + ")");
  if (queries.dimension() != reference_dimension)
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(reference_dimension));
  if (options.exclude_self && queries.size() != reference_size)
    throw InputError("--self needs the queries to be the reference set");
}

}  // namespace detail

// r is squared once here; the oracle compares distance2 <= r * r in float too.
template <class ExecutionSpace, class Tree, class Strategy>
Kokkos::View<std::int64_t*, typename Tree::memory_space> count_within(
    ExecutionSpace const& space, Tree const& tree, PointSet<typename Tree::memory_space> const& queries,
    RangeCountOptions const& options, Strategy strategy,
    Kokkos::View<Index const*, typename Tree::memory_space> order = {},
    TraversalMetrics<typename Tree::memory_space> const& metrics = {}) {
  detail::check_range_count_arguments(tree.points.size(), tree.points.points.dimension(), queries, options);
  Kokkos::View<std::int64_t*, typename Tree::memory_space> counts(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::RangeCount::counts"), queries.size());
  RangeCountVisitor<Tree> visitor{tree, queries.coordinates, options.radius * options.radius, options.exclude_self,
                                  counts};
  traverse(space, tree.topology, visitor, strategy, order, metrics);
  return counts;
}

}  // namespace treetrav
