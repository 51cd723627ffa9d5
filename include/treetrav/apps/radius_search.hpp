#pragma once

#include <treetrav/apps/range_count.hpp>
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

// Copies the lists that fit their slots into the CSR keys (the others were
// written there by the second walk). One work item per query: on the H100 a
// work item per slot was slower (599 vs 306 us at 1M queries, 32 slots each).
template <class MemorySpace>
struct GatherSlots {
  Kokkos::View<std::int64_t*, MemorySpace> counts;
  Kokkos::View<std::uint64_t**, Kokkos::LayoutLeft, MemorySpace> slots;
  Kokkos::View<std::int64_t*, MemorySpace> offsets;
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  KOKKOS_FUNCTION void operator()(Index q) const {
    std::int64_t const size = counts(q);
    if (size > static_cast<std::int64_t>(slots.extent(1)))
      return;
    for (std::int64_t j = 0; j < size; ++j)
      keys(offsets(q) + j) = slots(q, j);
  }
};

// Sorted keys to the lists' indices and distances.
template <class MemorySpace>
struct UnpackNeighbors {
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  RadiusResults<MemorySpace> results;
  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    results.indices(i) = neighbor_key_index(keys(i));
    results.distances(i) = math::sqrt(neighbor_key_distance2(keys(i)));
  }
};

} // namespace detail

// Radius search (scipy's query_ball_point): every reference point within
// distance r of each query (inclusive), as CSR lists. One walk writes up to
// `capacity` neighbours per query into fixed slots; queries with more are
// walked again on their own, writing straight into their CSR range; then one
// segmented sort orders every list by (distance, index).
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
  Kokkos::View<std::uint64_t**, Kokkos::LayoutLeft, MemorySpace> slots(alloc("slots"), n, capacity);
  auto const order = detail::resolve_order(space, queries, options.radius.order, {});
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
  Kokkos::View<std::uint64_t*, MemorySpace> keys(alloc("keys"), total);

  Index overflow_count = 0;
  Kokkos::View<Index*, MemorySpace> overflowed(alloc("overflowed"), n);
  Kokkos::parallel_scan(
      "treetrav::RadiusSearch::overflow", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      detail::OverflowList<MemorySpace>{counts, capacity, overflowed}, overflow_count);
  if (overflow_count > 0) {
    // Lists too long for their slots: walked again, all at once, into CSR.
    Kokkos::View<std::int64_t*, MemorySpace> recount(alloc("recount"), n);
    detail::radius_walk(space, tree, queries, options.radius, strategy,
                        WriteNeighbors<MemorySpace>{0, {}, results.offsets, keys}, recount,
                        Kokkos::subview(overflowed, std::make_pair(Index(0), overflow_count)), {});
  }
  Kokkos::parallel_for("treetrav::RadiusSearch::gather",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                       detail::GatherSlots<MemorySpace>{counts, slots, results.offsets, keys});
  auto const sorted = detail::sort_segments(
      space, keys, Kokkos::View<std::int64_t const*, MemorySpace>(results.offsets),
      "treetrav::RadiusSearch::sort");
  results.indices = decltype(results.indices)(alloc("indices"), total);
  results.distances = decltype(results.distances)(alloc("distances"), total);
  Kokkos::parallel_for("treetrav::RadiusSearch::unpack",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, total),
                       detail::UnpackNeighbors<MemorySpace>{sorted, results});
  Kokkos::Profiling::popRegion();
  return results;
}

} // namespace treetrav
