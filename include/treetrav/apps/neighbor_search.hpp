#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/traverse.hpp>

#include <string>
#include <type_traits>

namespace treetrav {

namespace detail {

// The k best candidates so far, sorted by (squared distance, index): the
// index breaks ties, so the final set does not depend on the visiting order.
template <int KMax>
struct KBest {
  Coordinate distance2[KMax];
  Index index[KMax];
  int count;

  KOKKOS_FUNCTION static bool before(Coordinate d2, Index i, Coordinate other_d2, Index other_i) {
    return d2 < other_d2 || (d2 == other_d2 && i < other_i);
  }
  // Squared distance a node must beat (not tie-lose to) to be worth visiting.
  KOKKOS_FUNCTION Coordinate bound(int k) const {
    return count < k ? infinity : distance2[k - 1];
  }
  KOKKOS_FUNCTION void insert(int k, Coordinate d2, Index i) {
    if (count == k && !before(d2, i, distance2[k - 1], index[k - 1])) return;
    int position = count < k ? count++ : k - 1;
    for (; position > 0 && before(d2, i, distance2[position - 1], index[position - 1]); --position) {
      distance2[position] = distance2[position - 1];
      index[position] = index[position - 1];
    }
    distance2[position] = d2;
    index[position] = i;
  }
};

}  // namespace detail

// k-nearest-neighbour search over any tree that bounds the distance from a
// query to a node's points (kd: NN, kNN; vp: VP; ball: BT). Guided: the child
// with the smaller bound goes first. A node is pruned only when its bound
// exceeds the current k-th best, so results equal brute force exactly.
template <class Tree, int KMax>
struct NeighborSearchVisitor {
  using memory_space = typename Tree::memory_space;
  using state_type = detail::KBest<KMax>;
  using matrix = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space>;
  static constexpr bool guided = true;

  Tree tree;
  matrix queries;
  int k;
  bool exclude_self;
  Kokkos::View<Index**, Kokkos::LayoutLeft, memory_space> indices;
  matrix distances;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(queries.extent(0)); }
  KOKKOS_FUNCTION void initialize(Index, state_type& best) const { best.count = 0; }

  KOKKOS_FUNCTION bool visit(Index node, Index query, state_type& best) const {
    if (tree.min_distance2(node, queries, query) > best.bound(k)) return false;
    if (!tree.topology.is_leaf(node)) return true;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      Index const original = tree.points.original_index(i);
      if (exclude_self && original == query) continue;
      best.insert(k, distance2(tree.points.points.coordinates, i, queries, query), original);
    }
    return false;
  }

  KOKKOS_FUNCTION int first_child(Index node, Index query, state_type const&) const {
    Index const near = tree.topology.child(node, 0), far = tree.topology.child(node, 1);
    return tree.min_distance2(far, queries, query) < tree.min_distance2(near, queries, query) ? 1 : 0;
  }

  KOKKOS_FUNCTION void finalize(Index query, state_type const& best) const {
    for (int j = 0; j < k; ++j) {
      indices(query, j) = best.index[j];
      distances(query, j) = math::sqrt(best.distance2[j]);
    }
  }
};

template <class MemorySpace>
struct NeighborResults {
  Kokkos::View<Index**, Kokkos::LayoutLeft, MemorySpace> indices;        // (queries, k), caller's rows
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> distances;  // (queries, k), ascending
};

struct NeighborOptions {
  int k = 8;
  bool exclude_self = false;  // queries are the reference set: skip each query itself
};

// The largest k a search supports (its candidate list lives in registers).
inline constexpr int max_neighbors = 128;

namespace detail {

// What every k-nearest search checks before it runs, whatever its strategy.
template <class MemorySpace>
void check_neighbor_arguments(Index reference_size, int reference_dimension, PointSet<MemorySpace> const& queries,
                              NeighborOptions const& options) {
  Index const available = reference_size - (options.exclude_self ? 1 : 0);
  if (options.k < 1) throw InputError("-k must be >= 1 (got " + std::to_string(options.k) + ")");
  if (options.k > available)
    throw InputError("-k " + std::to_string(options.k) + " exceeds the " + std::to_string(available) +
                     " reference points available");
  if (options.k > max_neighbors)
    throw InputError("-k must be <= " + std::to_string(max_neighbors) + " (got " + std::to_string(options.k) + ")");
  if (queries.dimension() != reference_dimension)
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(reference_dimension));
  if (options.exclude_self && queries.size() != reference_size)
    throw InputError("--self needs the queries to be the reference set");
}

// Calls f(std::integral_constant<int, KMax>) with the candidate-list capacity
// for k: a few capacities keep registers small for small k.
template <class F>
void with_candidate_capacity(int k, F const& f) {
  if (k == 1)
    f(std::integral_constant<int, 1>{});
  else if (k <= 16)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, max_neighbors>{});
}

}  // namespace detail

// The k nearest reference points of every query, ties broken by index.
template <class ExecutionSpace, class Tree, class Strategy>
NeighborResults<typename Tree::memory_space> find_neighbors(
    ExecutionSpace const& space, Tree const& tree, PointSet<typename Tree::memory_space> const& queries,
    NeighborOptions const& options, Strategy strategy,
    Kokkos::View<Index const*, typename Tree::memory_space> order = {},
    TraversalMetrics<typename Tree::memory_space> const& metrics = {}) {
  detail::check_neighbor_arguments(tree.points.size(), tree.points.points.dimension(), queries, options);
  using MemorySpace = typename Tree::memory_space;
  NeighborResults<MemorySpace> results;
  results.indices = decltype(results.indices)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::NeighborResults::indices"), queries.size(),
      options.k);
  results.distances = decltype(results.distances)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::NeighborResults::distances"),
      queries.size(), options.k);
  auto run = [&](auto k_max) {
    constexpr int KMax = decltype(k_max)::value;
    NeighborSearchVisitor<Tree, KMax> visitor{tree,          queries.coordinates, options.k, options.exclude_self,
                                              results.indices, results.distances};
    traverse(space, tree.topology, visitor, strategy, order, metrics);
  };
  detail::with_candidate_capacity(options.k, run);
  return results;
}

}  // namespace treetrav
