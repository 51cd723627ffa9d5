#pragma once

// The compiled definitions of brute force on the points (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledBruteForce
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>

namespace treetrav::detail {

template <class ExecutionSpace>
NeighborResults<typename ExecutionSpace::memory_space> CompiledBruteForce<ExecutionSpace>::neighbors(
    ExecutionSpace const& space, PointSet<memory_space> const& reference,
    PointSet<memory_space> const& queries, NeighborOptions const& options,
    BruteForce const& strategy) {
  return find_neighbors_brute(space, reference, queries, options, strategy);
}

template <class ExecutionSpace>
Kokkos::View<std::int64_t*, typename ExecutionSpace::memory_space>
CompiledBruteForce<ExecutionSpace>::counts(ExecutionSpace const& space,
                                           PointSet<memory_space> const& reference,
                                           PointSet<memory_space> const& queries,
                                           RangeCountOptions const& options,
                                           BruteForce const& strategy) {
  return count_within_brute(space, reference, queries, options, strategy);
}

} // namespace treetrav::detail
