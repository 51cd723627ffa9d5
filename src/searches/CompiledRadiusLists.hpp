#pragma once

// The compiled definitions of the radius lists (apps/detail/compiled.hpp). Only
// the translation units CMake generates from instantiate.cpp.in for CompiledRadiusLists
// include this (one per tree, backend and part): nothing else sees these
// definitions, so nothing else can instantiate them again, and a change to
// one application recompiles its own units only.
#include <treetrav/apps/radius_search.hpp>

namespace treetrav::detail {

template <class ExecutionSpace, class Tree, int Part>
RadiusResults<typename Tree::memory_space> CompiledRadiusLists<ExecutionSpace, Tree, Part>::run(
    ExecutionSpace const& space, Tree const& tree, PointSet<memory_space> const& queries,
    RadiusSearchOptions const& options, CompiledStrategy const& strategy) {
  return visit_compiled<ExecutionSpace, RadiusResults<memory_space>, Part>(
      strategy, [&](auto const& tag) {
        return find_within_with(space, tree, queries, options, tag);
      });
}

} // namespace treetrav::detail
