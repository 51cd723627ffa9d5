#pragma once

// The compiled definitions of the range counts (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledRangeCount
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/range_count.hpp>

namespace treetrav::detail {

template <class ExecutionSpace, class Tree, int Part>
Kokkos::View<std::int64_t*, typename Tree::memory_space>
CompiledRangeCount<ExecutionSpace, Tree, Part>::run(ExecutionSpace const& space, Tree const& tree,
                                              PointSet<memory_space> const& queries,
                                              RangeCountOptions const& options,
                                              CompiledStrategy const& strategy,
                                              Kokkos::View<Index const*, memory_space> order,
                                              TraversalMetrics<memory_space> const& metrics) {
  return visit_compiled<ExecutionSpace, Kokkos::View<std::int64_t*, memory_space>, Part>(
      strategy, [&](auto const& tag) {
        return count_within_with(space, tree, queries, options, tag, order, metrics);
      });
}

} // namespace treetrav::detail
