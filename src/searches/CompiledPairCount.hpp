#pragma once

// The compiled definitions of the pair counts in bins (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledPairCount
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/pair_count.hpp>
#include <stdexcept>

namespace treetrav::detail {

template <class ExecutionSpace, class Tree, int Part>
void CompiledPairCount<ExecutionSpace, Tree, Part>::run(
    ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
    PairCountOptions const& options, CompiledStrategy const& strategy,
    Kokkos::View<double const*, memory_space> edges2,
    Kokkos::View<double const*, memory_space> weight_prefix,
    Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
    Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums) {
  visit_compiled<ExecutionSpace, void, Part>(strategy, [&](auto const& tag) {
    count_pairs_with(space, tree, queries, options, tag, edges2, weight_prefix, counts, sums);
  });
}

template <class ExecutionSpace, class Tree, int Part>
void CompiledPairCount<ExecutionSpace, Tree, Part>::run_groups(
    ExecutionSpace const& space, Tree const& tree, PairCountOptions const& options,
    GroupWalk const& strategy, Kokkos::View<double const*, memory_space> edges2,
    Kokkos::View<double const*, memory_space> weight_prefix,
    Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
    Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums) {
  if constexpr (Part == 0)
    count_pair_groups(space, tree, options, strategy, edges2, weight_prefix, counts, sums);
  else
    throw std::logic_error("the pair counts' group walk is compiled in part 0");
}

} // namespace treetrav::detail
