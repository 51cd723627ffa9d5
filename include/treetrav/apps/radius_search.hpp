#pragma once

#include <treetrav/apps/detail/periodic_images.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/detail/host_staging.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/math.hpp>

#include <cstdint>

namespace treetrav {

// Neighbour lists of a radius search in compressed sparse row form: query q's
// neighbours are entries [offsets(q), offsets(q + 1)) of indices/distances,
// nearest first, ties by index (the order brute force sorts them in).
template <class MemorySpace>
struct RadiusResults {
  Kokkos::View<std::int64_t*, MemorySpace> offsets; // (queries + 1)
  Kokkos::View<Index*, MemorySpace> indices;        // caller's rows of the reference set
  Kokkos::View<Coordinate*, MemorySpace> distances;
};

namespace detail {
// `found` in new host arrays, through `staging` (host_staging.hpp).
template <class ExecutionSpace, class MemorySpace>
RadiusResults<Kokkos::HostSpace> host_copy(ExecutionSpace const& space,
                                           RadiusResults<MemorySpace> const& found,
                                           HostStaging<typename ExecutionSpace::memory_space>& staging) {
  return {host_copy(space, found.offsets, staging), host_copy(space, found.indices, staging),
          host_copy(space, found.distances, staging)};
}
} // namespace detail

struct RadiusSearchOptions {
  RangeCountOptions radius;
  // Neighbours per query written in the first walk; a query with more is
  // walked once more on its own. 0: automatic.
  Index capacity = 0;
  // Squared distances in the lists (the values the search compared).
  bool squared_distances = false;
};

namespace detail {

template <class MemorySpace>
struct ExclusiveOffsets {
  Kokkos::View<std::int64_t*, MemorySpace> counts, offsets;
  KOKKOS_FUNCTION void operator()(Index q, std::int64_t& sum, bool final) const {
    if (final)
      offsets(q) = sum;
    sum += counts(q);
    if (final && q + 1 == static_cast<Index>(counts.extent(0)))
      offsets(q + 1) = sum;
  }
};

// Positions of the queries with more neighbours than the first walk kept.
template <class MemorySpace>
struct OverflowList {
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  Index capacity;
  Kokkos::View<Index*, MemorySpace> overflowed;
  KOKKOS_FUNCTION void operator()(Index q, Index& position, bool final) const {
    if (counts(q) <= capacity)
      return;
    if (final)
      overflowed(position) = q;
    ++position;
  }
};

// The CSR range of each overflowed query: the segments the sort orders.
template <class MemorySpace>
struct OverflowSegments {
  Kokkos::View<Index*, MemorySpace> overflowed;
  Kokkos::View<std::int64_t*, MemorySpace> offsets, begins, ends;
  KOKKOS_FUNCTION void operator()(Index i) const {
    begins(i) = offsets(overflowed(i));
    ends(i) = offsets(overflowed(i) + 1);
  }
};

// Every query's list into its CSR range, nearest first. A list that fit its
// slots is ordered in place of a sort: each key goes to the position its
// rank among the query's keys names (keys are distinct: they carry the
// index). At most `capacity` squared comparisons, in the read-only cache;
// copying every list into CSR keys and a segmented sort of them all cost a
// fifth of the search.
// Longer lists come sorted in `sorted_keys`.
template <class MemorySpace>
struct UnpackNeighbors {
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  Kokkos::View<std::uint64_t**, Kokkos::LayoutLeft, MemorySpace> slots;
  Kokkos::View<std::uint64_t*, MemorySpace> sorted_keys;
  RadiusResults<MemorySpace> results;
  bool squared;
  KOKKOS_FUNCTION void write(std::int64_t at, std::uint64_t key) const {
    results.indices(at) = neighbor_key_index(key);
    Coordinate const d2 = neighbor_key_distance2(key);
    results.distances(at) = squared ? d2 : math::sqrt(d2);
  }
  KOKKOS_FUNCTION void operator()(Index q) const {
    std::int64_t const size = counts(q), first = results.offsets(q);
    if (size > static_cast<std::int64_t>(slots.extent(1))) {
      for (std::int64_t j = 0; j < size; ++j)
        write(first + j, sorted_keys(first + j));
      return;
    }
    for (std::int64_t j = 0; j < size; ++j) {
      std::uint64_t const key = slots(q, j);
      std::int64_t rank = 0;
      for (std::int64_t i = 0; i < size; ++i)
        rank += slots(q, i) < key;
      write(first + rank, key);
    }
  }
};

} // namespace detail

namespace detail {

template <class ExecutionSpace, class Tree, class Strategy>
RadiusResults<typename Tree::memory_space>
find_within_with(ExecutionSpace const& space, Tree const& tree,
                 PointSet<typename Tree::memory_space> const& queries,
                 RadiusSearchOptions const& options, Strategy strategy) {
  detail::check_radius_search(tree, queries, options.radius);
  if (options.capacity < 0)
    throw InputError("radius search capacity must be >= 0");
  using MemorySpace = typename Tree::memory_space;
  Kokkos::Profiling::pushRegion("treetrav::find_within");
  Index const n = queries.size();
  Index const capacity = options.capacity > 0 ? options.capacity : 32;
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                              "treetrav::RadiusSearch::" + member);
  };
  // The sort first: the counts and slots are allocated while the device sorts.
  auto const order = detail::resolve_order(space, queries, options.radius.order, {});
  Kokkos::View<std::int64_t*, MemorySpace> counts(alloc("counts"), n);
  Kokkos::View<std::uint64_t**, Kokkos::LayoutLeft, MemorySpace> slots(alloc("slots"), n, capacity);
  detail::radius_walk(space, tree, queries, options.radius, strategy,
                      WriteNeighbors<MemorySpace>{capacity, slots, {}, {}}, counts, order, {});

  RadiusResults<MemorySpace> results;
  results.offsets = decltype(results.offsets)(alloc("offsets"), n + 1);
  std::int64_t total = 0;
  Kokkos::parallel_scan("treetrav::RadiusSearch::offsets",
                        Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                        detail::ExclusiveOffsets<MemorySpace>{counts, results.offsets}, total);
  if (n == 0)
    Kokkos::deep_copy(space, results.offsets, 0);
  results.indices = decltype(results.indices)(alloc("indices"), total);
  results.distances = decltype(results.distances)(alloc("distances"), total);

  Index overflow_count = 0;
  Kokkos::View<Index*, MemorySpace> overflowed(alloc("overflowed"), n);
  Kokkos::parallel_scan(
      "treetrav::RadiusSearch::overflow", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      detail::OverflowList<MemorySpace>{counts, capacity, overflowed}, overflow_count);
  Kokkos::View<std::uint64_t*, MemorySpace> sorted_keys;
  if (overflow_count > 0) {
    // Lists too long for their slots: walked again, all at once, into their
    // CSR ranges of `keys`, and sorted there.
    Kokkos::View<std::uint64_t*, MemorySpace> keys(alloc("keys"), total);
    Kokkos::View<std::int64_t*, MemorySpace> recount(alloc("recount"), n);
    auto const overflow = Kokkos::subview(overflowed, std::make_pair(Index(0), overflow_count));
    detail::radius_walk(space, tree, queries, options.radius, strategy,
                        WriteNeighbors<MemorySpace>{0, {}, results.offsets, keys}, recount,
                        overflow, {});
    Kokkos::View<std::int64_t*, MemorySpace> begins(alloc("begins"), overflow_count),
        ends(alloc("ends"), overflow_count);
    Kokkos::parallel_for(
        "treetrav::RadiusSearch::segments",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, overflow_count),
        detail::OverflowSegments<MemorySpace>{overflowed, results.offsets, begins, ends});
    sorted_keys = detail::sort_segments(
        space, keys, Kokkos::View<std::int64_t const*, MemorySpace>(begins),
        Kokkos::View<std::int64_t const*, MemorySpace>(ends), "treetrav::RadiusSearch::sort");
  }
  Kokkos::parallel_for("treetrav::RadiusSearch::unpack",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                       detail::UnpackNeighbors<MemorySpace>{counts, slots, sorted_keys, results,
                                                            options.squared_distances});
  Kokkos::Profiling::popRegion();
  return results;
}

// find_within of the trees, backends and strategies that treetrav::searches
// compiles (compiled.hpp); its definition is there (src/searches/).
template <class ExecutionSpace, class Tree, int Part>
struct CompiledRadiusLists {
  using memory_space = typename Tree::memory_space;
  static RadiusResults<memory_space> run(ExecutionSpace const& space, Tree const& tree,
                                         PointSet<memory_space> const& queries,
                                         RadiusSearchOptions const& options,
                                         CompiledStrategy const& strategy);
};

} // namespace detail

// Radius search (scipy's query_ball_point): every reference point within
// distance r of each query (inclusive), as CSR lists. One walk writes up to
// `capacity` neighbours per query into fixed slots; queries with more are
// walked again on their own, writing straight into their CSR range, where a
// segmented sort orders them. Lists that fit their slots are ordered by rank
// as they are copied out: every list by (distance, index).
template <class ExecutionSpace, class Tree, class Strategy>
RadiusResults<typename Tree::memory_space>
find_within(ExecutionSpace const& space, Tree const& tree,
            PointSet<typename Tree::memory_space> const& queries,
            RadiusSearchOptions const& options, Strategy strategy) {
  using MemorySpace = typename Tree::memory_space;
  if (options.radius.box.periodic()) {
    // In a periodic box: the queries' lists merged with their images'
    // (periodic_images.hpp), by squared distance.
    detail::check_radius_search(tree, queries, options.radius);
    detail::check_periodic_search(space, tree.points.rows, tree.points.original_index,
                                  tree.points.dimension, queries,
                                  options.radius.box);
    detail::check_periodic_radius(options.radius);
    RadiusSearchOptions open = options;
    open.radius.box = {};
    open.squared_distances = true;
    auto const own = find_within(space, tree, queries, open, strategy);
    Coordinate const r2 = options.radius.radius * options.radius.radius;
    auto const images =
        detail::query_images(space, queries, options.radius.box, detail::SameReach{r2});
    detail::ImageLists<MemorySpace> merged{own.offsets, own.indices, own.distances};
    if (images.count > 0) {
      open.radius.exclude_self = false; // an image is L or more from its query
      auto const theirs = find_within(space, tree, images.points, open, strategy);
      merged = detail::merge_image_lists(
          space, merged, {theirs.offsets, theirs.indices, theirs.distances}, images);
    }
    if (!options.squared_distances)
      detail::take_list_roots(space, merged.distances);
    return {merged.offsets, merged.indices, merged.distances};
  }
  if constexpr (detail::compiled_search_v<ExecutionSpace, detail::radius_tree_v<Tree, MemorySpace>,
                                          Strategy>)
    return detail::CompiledRadiusLists<ExecutionSpace, Tree,
                                       detail::compiled_part_v<ExecutionSpace, Strategy>>::run(
        space, tree, queries, options, detail::compiled_strategy(strategy));
  else
    return detail::find_within_with(space, tree, queries, options, strategy);
}

} // namespace treetrav
