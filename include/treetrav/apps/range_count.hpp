#pragma once

#include <treetrav/apps/detail/compiled.hpp>
#include <treetrav/apps/detail/periodic_images.hpp>
#include <treetrav/apps/detail/search_setup.hpp>
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/traversal/traverse.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace treetrav {

// A neighbour as one sortable key: the bits of its squared distance (a
// non-negative float orders like its bits) above its index, so that sorting
// keys orders neighbours by (distance, index).
KOKKOS_FORCEINLINE_FUNCTION std::uint64_t neighbor_key(Coordinate d2, Index index) {
  return std::uint64_t(detail::float_bits(d2)) << 32 | static_cast<std::uint32_t>(index);
}
KOKKOS_FORCEINLINE_FUNCTION Index neighbor_key_index(std::uint64_t key) {
  return static_cast<Index>(static_cast<std::uint32_t>(key));
}
KOKKOS_FORCEINLINE_FUNCTION Coordinate neighbor_key_distance2(std::uint64_t key) {
  return detail::bits_float(static_cast<std::uint32_t>(key >> 32));
}

// What a radius query keeps of each point within distance r (inclusive) of
// it: PC only counts; a radius search also writes the point's key.
struct CountOnly {
  KOKKOS_FORCEINLINE_FUNCTION void found(Index, Index, Coordinate, std::int64_t) const {}
};

template <class MemorySpace>
struct WriteNeighbors {
  // With capacity > 0, query q writes its first `capacity` neighbours into
  // slots(q, 0 .. capacity - 1) (column-major: the lanes of a warp writing
  // their j-th neighbour write neighbouring words); with capacity 0, all of
  // them into keys from offsets(q) on.
  Index capacity;
  Kokkos::View<std::uint64_t**, Kokkos::LayoutLeft, MemorySpace> slots;
  Kokkos::View<std::int64_t const*, MemorySpace> offsets;
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  KOKKOS_FORCEINLINE_FUNCTION void found(Index query, Index original, Coordinate d2,
                                         std::int64_t count) const {
    if (capacity == 0)
      keys(offsets(query) + count) = neighbor_key(d2, original);
    else if (count < capacity)
      slots(query, count) = neighbor_key(d2, original);
  }
};

// Radius queries (PC and radius search): per query, the reference points
// within distance r, inclusive (distance2 <= r * r in float, as the oracle
// compares). Unguided and keyed: children are visited in slot order, and one
// whose box lies beyond r is never pushed. The query's row and its count stay
// in registers.
template <class Tree, int W, class Sink>
struct RadiusVisitor {
  using memory_space = typename Tree::memory_space;
  struct state_type {
    Coordinate query[W];
    std::int64_t count;
  };
  static constexpr bool guided = false;
  static constexpr bool keyed = true;

  Tree tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> queries;
  Coordinate radius2;
  bool exclude_self;
  Sink sink;
  Kokkos::View<std::int64_t*, memory_space> counts;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(queries.extent(0)); }
  KOKKOS_FORCEINLINE_FUNCTION void initialize(Index query, state_type& s) const {
    detail::load_query<W>(queries, query, s.query);
    s.count = 0;
  }

  KOKKOS_FORCEINLINE_FUNCTION bool prune(Coordinate bound, state_type const&) const {
    return bound > radius2;
  }

  KOKKOS_FORCEINLINE_FUNCTION void process_leaf(NodeRef leaf, Index query, state_type& s) const {
    for (Index p = leaf.index; p < leaf.index + leaf.count; ++p) {
      Coordinate const d2 = tree.points.template distance2<W>(p, s.query);
      if (d2 > radius2)
        continue;
      Index const original = tree.points.original_index(p);
      if (exclude_self && original == query)
        continue;
      sink.found(query, original, d2, s.count);
      ++s.count;
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION bool visit(Index node, Index query, state_type& s) const {
    return detail::visit_by_bound<W>(*this, node, query, s);
  }

  KOKKOS_FORCEINLINE_FUNCTION NodeRef root() const {
    return tree.topology.ref(tree.topology.root());
  }
  KOKKOS_FORCEINLINE_FUNCTION void child_keys(NodeRef inner, Index, state_type const& s,
                                              NodeRef (&children)[2], Coordinate (&keys)[2]) const {
    tree.template child_bounds<W>(inner.index, s.query, children, keys);
  }
  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  KOKKOS_FORCEINLINE_FUNCTION void finalize(Index query, state_type const& s) const {
    counts(query) = s.count;
  }
};

struct RangeCountOptions {
  Coordinate radius = 0.1f;
  bool exclude_self = false;
  QueryOrder order = QueryOrder::none;
  PeriodicBox box; // periodic: distances to the nearest image (radius below L / 2)
};

namespace detail {

// What every range count checks before it runs, whatever its strategy.
template <class MemorySpace>
void check_range_count_arguments(Index reference_size, int reference_dimension,
                                 PointSet<MemorySpace> const& queries,
                                 RangeCountOptions const& options) {
  if (!(options.radius > 0) || !std::isfinite(options.radius))
    throw InputError("radius", " must be a positive finite radius (got " + std::to_string(options.radius) +
                     ")");
  check_queries(reference_size, reference_dimension, queries, options.exclude_self);
}

// A radius in a periodic box: below half its shortest side, so that a point
// is within reach of one image of a query at most.
inline void check_periodic_radius(RangeCountOptions const& options) {
  if (!(options.radius < options.box.shortest() / 2))
    throw InputError("radius", " must be below half the periodic box's shortest side (" +
                                   std::to_string(options.box.shortest() / 2) + "), got " +
                                   std::to_string(options.radius));
}

// Range counts in a periodic box: the queries' counts plus their images'
// (periodic_images.hpp); count(points, options, own) counts in open space
// (own: the queries themselves, not their images).
template <class ExecutionSpace, class MemorySpace, class Count>
Kokkos::View<std::int64_t*, MemorySpace>
periodic_counts(ExecutionSpace const& space, PointSet<MemorySpace> const& queries,
                RangeCountOptions const& options, Count const& count) {
  check_periodic_radius(options);
  RangeCountOptions open = options;
  open.box = {};
  auto counts = count(queries, open, true);
  auto const images = query_images(space, queries, options.box,
                                   SameReach{options.radius * options.radius});
  if (images.count > 0) {
    open.exclude_self = false; // an image is L or more from its query
    add_image_counts(space, counts, count(images.points, open, false), images);
  }
  return counts;
}

template <class Tree, class MemorySpace>
void check_radius_search(Tree const& tree, PointSet<MemorySpace> const& queries,
                         RangeCountOptions const& options) {
  check_range_count_arguments(tree.points.size(), tree.points.dimension, queries, options);
}

// One radius walk of every query (in `order`) with `sink`; counts(q) = the
// number of points within r of query q.
template <class ExecutionSpace, class Tree, class Strategy, class Sink>
void radius_walk(ExecutionSpace const& space, Tree const& tree,
                 PointSet<typename Tree::memory_space> const& queries,
                 RangeCountOptions const& options, Strategy strategy, Sink const& sink,
                 Kokkos::View<std::int64_t*, typename Tree::memory_space> counts,
                 Kokkos::View<Index const*, typename Tree::memory_space> order,
                 TraversalMetrics<typename Tree::memory_space> const& metrics) {
  dispatch_width(tree.width(), [&](auto width) {
    RadiusVisitor<Tree, decltype(width)::value, Sink> visitor{
        tree,  queries.coordinates, options.radius * options.radius, options.exclude_self, sink,
        counts};
    traverse(space, tree.topology, visitor, strategy, order, metrics);
  });
}

} // namespace detail

namespace detail {

// count_within, instantiated here (compiled.hpp).
template <class ExecutionSpace, class Tree, class Strategy>
Kokkos::View<std::int64_t*, typename Tree::memory_space>
count_within_with(ExecutionSpace const& space, Tree const& tree,
                  PointSet<typename Tree::memory_space> const& queries,
                  RangeCountOptions const& options, Strategy strategy,
                  Kokkos::View<Index const*, typename Tree::memory_space> order,
                  TraversalMetrics<typename Tree::memory_space> const& metrics) {
  detail::check_radius_search(tree, queries, options);
  using MemorySpace = typename Tree::memory_space;
  Kokkos::Profiling::pushRegion("treetrav::count_within");
  // The sort first: the counts are allocated while the device sorts.
  auto const walk_order = detail::resolve_order(space, queries, options.order, order);
  Kokkos::View<std::int64_t*, MemorySpace> counts(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::RangeCount::counts"),
      queries.size());
  detail::radius_walk(space, tree, queries, options, strategy, CountOnly{}, counts, walk_order,
                      metrics);
  Kokkos::Profiling::popRegion();
  return counts;
}

// count_within of the trees, backends and strategies that treetrav::searches
// compiles (compiled.hpp); its definition is there (src/searches/).
template <class ExecutionSpace, class Tree, int Part>
struct CompiledRangeCount {
  using memory_space = typename Tree::memory_space;
  static Kokkos::View<std::int64_t*, memory_space>
  run(ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
      RangeCountOptions const& options, CompiledStrategy const& strategy,
      Kokkos::View<Index const*, memory_space> order,
      TraversalMetrics<memory_space> const& metrics);
};

} // namespace detail

// Point correlation (PC): per query, the number of reference points within
// distance r (inclusive). r is squared once here; the oracle compares
// distance2 <= r * r in float too.
template <class ExecutionSpace, class Tree, class Strategy>
Kokkos::View<std::int64_t*, typename Tree::memory_space>
count_within(ExecutionSpace const& space, Tree const& tree,
             PointSet<typename Tree::memory_space> const& queries, RangeCountOptions const& options,
             Strategy strategy, Kokkos::View<Index const*, typename Tree::memory_space> order = {},
             TraversalMetrics<typename Tree::memory_space> const& metrics = {}) {
  using MemorySpace = typename Tree::memory_space;
  if (options.box.periodic()) {
    detail::check_radius_search(tree, queries, options);
    detail::check_periodic_search(space, tree.points.rows, tree.points.original_index,
                                  tree.points.dimension, queries,
                                  options.box);
    return detail::periodic_counts(space, queries, options,
                                   [&](auto const& points, auto const& open, bool own) {
                                     return count_within(space, tree, points, open, strategy,
                                                         own ? order : decltype(order)(),
                                                         own ? metrics : TraversalMetrics<MemorySpace>{});
                                   });
  }
  if constexpr (detail::compiled_search_v<ExecutionSpace, detail::radius_tree_v<Tree, MemorySpace>,
                                          Strategy>)
    return detail::CompiledRangeCount<ExecutionSpace, Tree,
                                      detail::compiled_part_v<ExecutionSpace, Strategy>>::run(
        space, tree, queries, options, detail::compiled_strategy(strategy), order, metrics);
  else
    return detail::count_within_with(space, tree, queries, options, strategy, order, metrics);
}

} // namespace treetrav
