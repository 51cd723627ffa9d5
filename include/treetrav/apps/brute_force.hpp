#pragma once

// Brute-force search (the BruteForce strategy): PC, NN and kNN of every query
// against every reference point, at any dimension and without a tree.
//
// Tiles of -2 q'.r' (the points shifted by the references' mean) come from
// Kokkos Kernels' GEMM (cuBLAS on the GPU); with the squared norms they give
// each pair's squared distance up to a proven rounding bound. A screening
// pass keeps, per query, every reference that the bound cannot rule out of
// the answer; distance2 (the function every tree strategy and the oracles
// use) then ranks or counts those exactly, ties by index, so the results are
// bit-identical to the trees' and to brute force in float. Memory: the tiles
// and per-query state, sized from BruteForce::tile_bytes or the free memory,
// never n_queries x n_reference.
#include <treetrav/apps/detail/brute_force.hpp>
#include <treetrav/apps/detail/compiled.hpp>

namespace treetrav {

namespace detail {

// The brute-force searches, instantiated here (compiled.hpp).
template <class ExecutionSpace, class MemorySpace>
NeighborResults<MemorySpace>
find_neighbors_brute(ExecutionSpace const& space, PointSet<MemorySpace> const& reference,
                     PointSet<MemorySpace> const& queries, NeighborOptions const& options,
                     BruteForce const& strategy) {
  detail::check_neighbor_arguments(reference.size(), reference.dimension(), queries, options);
  Kokkos::Profiling::pushRegion("treetrav::BruteForce::find_neighbors");
  auto results = detail::allocate_neighbor_results<MemorySpace>(space, queries.size(), options.k);
  dispatch_k<BruteForce>(options.k, [&](auto k_max) {
    detail::brute_force_neighbors<decltype(k_max)::value>(
        space, reference.coordinates, queries.coordinates, options, strategy, results);
  });
  Kokkos::Profiling::popRegion();
  return results;
}

template <class ExecutionSpace, class MemorySpace>
Kokkos::View<std::int64_t*, MemorySpace>
count_within_brute(ExecutionSpace const& space, PointSet<MemorySpace> const& reference,
                   PointSet<MemorySpace> const& queries, RangeCountOptions const& options,
                   BruteForce const& strategy) {
  detail::check_range_count_arguments(reference.size(), reference.dimension(), queries, options);
  Kokkos::Profiling::pushRegion("treetrav::BruteForce::count_within");
  Kokkos::View<std::int64_t*, MemorySpace> counts(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::RangeCount::counts"),
      queries.size());
  detail::brute_force_counts(space, reference.coordinates, queries.coordinates, options, strategy,
                             counts);
  Kokkos::Profiling::popRegion();
  return counts;
}

// The brute-force searches on the backends treetrav::searches compiles
// (compiled.hpp); their definitions are there (src/searches/).
template <class ExecutionSpace>
struct CompiledBruteForce {
  using memory_space = typename ExecutionSpace::memory_space;
  static NeighborResults<memory_space> neighbors(ExecutionSpace const& space,
                                                 PointSet<memory_space> const& reference,
                                                 PointSet<memory_space> const& queries,
                                                 NeighborOptions const& options,
                                                 BruteForce const& strategy);
  static Kokkos::View<std::int64_t*, memory_space> counts(ExecutionSpace const& space,
                                                          PointSet<memory_space> const& reference,
                                                          PointSet<memory_space> const& queries,
                                                          RangeCountOptions const& options,
                                                          BruteForce const& strategy);
};

template <class ExecutionSpace, class MemorySpace>
void check_brute_force_spaces() {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<MemorySpace, typename ExecutionSpace::memory_space>,
                "the points must live in the execution space's memory space");
}

} // namespace detail

// The k nearest reference points of every query, ties broken by index. The
// searches take an `order` where the tree walks do, and ignore it (as
// options.order): tiles of the distance matrix need no query order.
template <class ExecutionSpace, class MemorySpace>
NeighborResults<MemorySpace>
find_neighbors(ExecutionSpace const& space, PointSet<MemorySpace> const& reference,
               PointSet<MemorySpace> const& queries, NeighborOptions const& options,
               BruteForce const& strategy, Kokkos::View<Index const*, MemorySpace> = {}) {
  detail::check_brute_force_spaces<ExecutionSpace, MemorySpace>();
  if (options.box.periodic()) {
    detail::check_neighbor_arguments(reference.size(), reference.dimension(), queries, options);
    detail::check_periodic_search(space, reference.coordinates, detail::SameRow{},
                                  reference.dimension(), queries,
                                  options.box);
    auto const results =
        detail::allocate_neighbor_results<MemorySpace>(space, queries.size(), options.k);
    auto const search = [&](PointSet<MemorySpace> const& points, NeighborOptions const& open) {
      return find_neighbors(space, reference, points, open, strategy);
    };
    detail::periodic_neighbors(
        space, reference.size(), queries, options, NeighborOutputs<MemorySpace>(results),
        [&](PointSet<MemorySpace> const& points, NeighborOptions const& open,
            NeighborOutputs<MemorySpace> const& into) {
          auto const found = search(points, open);
          Kokkos::deep_copy(space, into.indices, found.indices);
          Kokkos::deep_copy(space, into.distances, found.distances);
        },
        search);
    return results;
  }
  if constexpr (detail::compiled_space_v<ExecutionSpace>)
    return detail::CompiledBruteForce<ExecutionSpace>::neighbors(space, reference, queries, options,
                                                                 strategy);
  else
    return detail::find_neighbors_brute(space, reference, queries, options, strategy);
}

// Per query, the number of reference points within options.radius (inclusive).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<std::int64_t*, MemorySpace>
count_within(ExecutionSpace const& space, PointSet<MemorySpace> const& reference,
             PointSet<MemorySpace> const& queries, RangeCountOptions const& options,
             BruteForce const& strategy, Kokkos::View<Index const*, MemorySpace> = {}) {
  detail::check_brute_force_spaces<ExecutionSpace, MemorySpace>();
  if (options.box.periodic()) {
    detail::check_range_count_arguments(reference.size(), reference.dimension(), queries, options);
    detail::check_periodic_search(space, reference.coordinates, detail::SameRow{},
                                  reference.dimension(), queries,
                                  options.box);
    return detail::periodic_counts(space, queries, options,
                                   [&](PointSet<MemorySpace> const& points,
                                       RangeCountOptions const& open, bool) {
                                     return count_within(space, reference, points, open, strategy);
                                   });
  }
  if constexpr (detail::compiled_space_v<ExecutionSpace>)
    return detail::CompiledBruteForce<ExecutionSpace>::counts(space, reference, queries, options,
                                                              strategy);
  else
    return detail::count_within_brute(space, reference, queries, options, strategy);
}

} // namespace treetrav
