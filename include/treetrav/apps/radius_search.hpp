#pragma once

#include <treetrav/apps/range_count.hpp>
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

struct RadiusSearchOptions {
  RangeCountOptions radius;
  // Neighbours per query written in the first walk; a query with more is
  // walked once more on its own. 0: automatic.
  Index capacity = 0;
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

// Moves each query's list from its fixed-capacity slot range into the CSR
// arrays (lists that overflowed were written there directly), then sorts it
// by (distance, index) in place (heap sort: any list length, no extra memory)
// and turns squared distances into distances.
template <class MemorySpace>
struct FinishLists {
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  Index capacity;
  Kokkos::View<Index*, MemorySpace> slot_indices;
  Kokkos::View<Coordinate*, MemorySpace> slot_distances2;
  RadiusResults<MemorySpace> results;

  KOKKOS_FUNCTION bool before(std::int64_t a, std::int64_t b) const {
    Coordinate const da = results.distances(a), db = results.distances(b);
    return da < db || (da == db && results.indices(a) < results.indices(b));
  }
  KOKKOS_FUNCTION void swap(std::int64_t a, std::int64_t b) const {
    Index const i = results.indices(a);
    results.indices(a) = results.indices(b);
    results.indices(b) = i;
    Coordinate const d = results.distances(a);
    results.distances(a) = results.distances(b);
    results.distances(b) = d;
  }
  KOKKOS_FUNCTION void sift_down(std::int64_t base, std::int64_t root, std::int64_t size) const {
    for (std::int64_t child = 2 * root + 1; child < size; child = 2 * root + 1) {
      if (child + 1 < size && before(base + child, base + child + 1))
        ++child;
      if (!before(base + root, base + child))
        return;
      swap(base + root, base + child);
      root = child;
    }
  }
  KOKKOS_FUNCTION void operator()(Index q) const {
    std::int64_t const base = results.offsets(q), size = counts(q);
    if (size <= capacity)
      for (std::int64_t j = 0; j < size; ++j) {
        results.indices(base + j) = slot_indices(std::int64_t(q) * capacity + j);
        results.distances(base + j) = slot_distances2(std::int64_t(q) * capacity + j);
      }
    for (std::int64_t root = size / 2 - 1; root >= 0; --root)
      sift_down(base, root, size);
    for (std::int64_t end = size - 1; end > 0; --end) {
      swap(base, base + end);
      sift_down(base, 0, end);
    }
    for (std::int64_t j = 0; j < size; ++j)
      results.distances(base + j) = math::sqrt(results.distances(base + j));
  }
};

} // namespace detail

// Radius search (scipy's query_ball_point): every reference point within
// distance r of each query (inclusive), as CSR lists. One walk writes up to
// `capacity` neighbours per query into fixed slots; queries with more are
// walked again on their own, writing straight into their CSR range.
template <class ExecutionSpace, class Tree, class Strategy>
RadiusResults<typename Tree::memory_space>
find_within(ExecutionSpace const& space, Tree const& tree,
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
  Kokkos::View<std::int64_t*, MemorySpace> counts(alloc("counts"), n);
  Kokkos::View<Index*, MemorySpace> slot_indices(alloc("slot_indices"), std::size_t(n) * capacity);
  Kokkos::View<Coordinate*, MemorySpace> slot_distances2(alloc("slot_distances2"),
                                                         std::size_t(n) * capacity);
  auto const order = detail::resolve_order(space, queries, options.radius.order, {});
  detail::radius_walk(space, tree, queries, options.radius, strategy,
                      WriteNeighbors<MemorySpace>{capacity, {}, slot_indices, slot_distances2},
                      counts, order, {});

  RadiusResults<MemorySpace> results;
  results.offsets = decltype(results.offsets)(alloc("offsets"), n + 1);
  std::int64_t total = 0;
  Kokkos::parallel_scan("treetrav::RadiusSearch::offsets",
                        Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                        detail::ExclusiveOffsets<MemorySpace>{counts, results.offsets}, total);
  if (n == 0)
    Kokkos::deep_copy(space, results.offsets, 0);
  results.indices = decltype(results.indices)(alloc("indices"), total);
  Kokkos::View<Coordinate*, MemorySpace> distances2(alloc("distances"), total);
  results.distances = distances2;

  Index overflow_count = 0;
  Kokkos::View<Index*, MemorySpace> overflowed(alloc("overflowed"), n);
  Kokkos::parallel_scan(
      "treetrav::RadiusSearch::overflow", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      detail::OverflowList<MemorySpace>{counts, capacity, overflowed}, overflow_count);
  if (overflow_count > 0) {
    // Lists too long for their slots: walked again, all at once, into CSR.
    Kokkos::View<std::int64_t*, MemorySpace> recount(alloc("recount"), n);
    detail::radius_walk(
        space, tree, queries, options.radius, strategy,
        WriteNeighbors<MemorySpace>{0, results.offsets, results.indices, distances2}, recount,
        Kokkos::subview(overflowed, std::make_pair(Index(0), overflow_count)), {});
  }
  Kokkos::parallel_for(
      "treetrav::RadiusSearch::finish", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      detail::FinishLists<MemorySpace>{counts, capacity, slot_indices, slot_distances2, results});
  Kokkos::Profiling::popRegion();
  return results;
}

} // namespace treetrav
