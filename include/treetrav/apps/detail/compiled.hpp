#pragma once

// The searches compiled once, in the library treetrav::searches, for every
// enabled backend (Serial, OpenMP, Cuda) and the trees the command line
// searches (src/searches/: one translation unit per application, tree and
// backend). A search of one of those trees under a strategy of
// ApplicationStrategy and a placement of AnyPlacement then calls into the
// library instead of instantiating its kernels: one call site otherwise
// instantiates every capacity of k x row width x strategy x placement, and
// the command line and every test that searched paid that again.
//
// TREETRAV_COMPILED_SEARCHES is set by linking treetrav::searches. Without it
// (the headers alone, or another backend, tree or strategy: the tests' own
// strategy, say) the search is instantiated where it is called, as before.
#include <treetrav/core/backends.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace treetrav {

template <class MemorySpace>
struct Bvh;
template <class MemorySpace>
struct VpTree;
template <class MemorySpace>
struct BallTree;

namespace detail {

// A strategy of Variant and its placement, as the compiled searches take
// them (the searches: ApplicationStrategy; Barnes-Hut: BarnesHutStrategy).
template <class Variant>
struct CompiledStrategyOf {
  Variant strategy;
  AnyPlacement placement;
};
using CompiledStrategy = CompiledStrategyOf<ApplicationStrategy>;
using CompiledForceStrategy = CompiledStrategyOf<BarnesHutStrategy>;

template <class T, class Variant>
struct is_alternative : std::false_type {};
template <class T, class... A>
struct is_alternative<T, std::variant<A...>> : std::bool_constant<(std::is_same_v<T, A> || ...)> {};

// The position of T among the alternatives of Variant.
template <class T, class Variant>
struct alternative_index;
template <class T, class First, class... Rest>
struct alternative_index<T, std::variant<First, Rest...>>
    : std::integral_constant<int, std::is_same_v<T, First>
                                      ? 0
                                      : 1 + alternative_index<T, std::variant<Rest...>>::value> {};
template <class T>
struct alternative_index<T, std::variant<>> : std::integral_constant<int, 0> {};

template <class Strategy>
using placement_t = std::decay_t<decltype(placement_of(std::declval<Strategy const&>()))>;

// How one compiled search is split into translation units (parts).
// On Cuda, by strategy: ptxas takes seconds to minutes a kernel, and one
// search's GPU kernels (its strategies x placements x capacities x row
// widths) kept one unit busy for over a quarter of an hour; the strategies
// are dealt to TREETRAV_CUDA_SEARCH_PARTS units (set by treetrav::searches)
// by their position in the strategy variant.
// On host backends, by placement: part 0 the hardware's, compiled for speed;
// part 1 the software placements, which on a host only simulate SMs (for
// tests and studies), compiled for build time (src/searches/: -O1): they
// were half of each search's compile time.
template <class ExecutionSpace, class Strategy, class Variant = ApplicationStrategy>
constexpr int compiled_part() {
#ifdef TREETRAV_CUDA_SEARCH_PARTS
  if constexpr (is_cuda_space_v<ExecutionSpace>)
    return alternative_index<strategy_t<Strategy>, Variant>::value % TREETRAV_CUDA_SEARCH_PARTS;
  else
#endif
    return is_software_placement_v<placement_t<Strategy>> ? 1 : 0;
}

// The part that compiles Strategy (a tag of Variant, possibly placed).
template <class ExecutionSpace, class Strategy, class Variant = ApplicationStrategy>
inline constexpr int compiled_part_v = compiled_part<ExecutionSpace, Strategy, Variant>();

// Whether treetrav::searches holds the searches for ExecutionSpace.
template <class ExecutionSpace>
inline constexpr bool compiled_space_v =
#ifdef TREETRAV_COMPILED_SEARCHES
#ifdef TREETRAV_ENABLE_SERIAL
    std::is_same_v<ExecutionSpace, Kokkos::Serial> ||
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    std::is_same_v<ExecutionSpace, Kokkos::OpenMP> ||
#endif
#ifdef KOKKOS_ENABLE_CUDA
    std::is_same_v<ExecutionSpace, Kokkos::Cuda> ||
#endif
#endif
    false;

// The trees compiled: the kNN searches' three, the radius searches' one.
template <class Tree, class MemorySpace>
inline constexpr bool neighbor_tree_v =
    std::is_same_v<Tree, Bvh<MemorySpace>> || std::is_same_v<Tree, VpTree<MemorySpace>> ||
    std::is_same_v<Tree, BallTree<MemorySpace>>;
template <class Tree, class MemorySpace>
inline constexpr bool radius_tree_v = std::is_same_v<Tree, Bvh<MemorySpace>>;

// Whether traverse() takes Tag under Placement on ExecutionSpace (its
// static_asserts): the combinations the compiled searches hold.
template <class ExecutionSpace, class Tag, class Placement>
inline constexpr bool traversal_runs_v = runs_on_v<Tag, ExecutionSpace> &&
                                         placement_applies_v<Tag, Placement> &&
                                         placement_runs_on_v<Placement, ExecutionSpace>;

// Whether a search of Tree under Strategy on ExecutionSpace is compiled
// (TreeCompiled: neighbor_tree_v or radius_tree_v of the application;
// Variant: the strategies compiled).
template <class ExecutionSpace, bool TreeCompiled, class Strategy,
          class Variant = ApplicationStrategy>
inline constexpr bool compiled_search_v =
    compiled_space_v<ExecutionSpace> && TreeCompiled &&
    is_alternative<strategy_t<Strategy>, Variant>::value &&
    is_alternative<placement_t<Strategy>, AnyPlacement>::value &&
    traversal_runs_v<ExecutionSpace, strategy_t<Strategy>, placement_t<Strategy>>;

template <class Variant = ApplicationStrategy, class Strategy>
CompiledStrategyOf<Variant> compiled_strategy(Strategy const& strategy) {
  return {strategy_of(strategy), placement_of(strategy)};
}

// In the compiled searches: f(the strategy, placed) with its own types, for
// the strategies of part Part and the combinations traverse() takes on
// ExecutionSpace (the callers' templates reject the others before any call).
template <class ExecutionSpace, class Result, int Part, class Variant, class F>
Result visit_compiled(CompiledStrategyOf<Variant> const& compiled, F const& f) {
  return std::visit(
      [&](auto const& tag, auto const& placement) -> Result {
        using Tag = std::decay_t<decltype(tag)>;
        using Placement = std::decay_t<decltype(placement)>;
        if constexpr (compiled_part_v<ExecutionSpace, Placed<Tag, Placement>, Variant> == Part &&
                      traversal_runs_v<ExecutionSpace, Tag, Placement>)
          return f(placed(tag, placement));
        else
          throw std::logic_error(std::string("strategy ") + Tag::name +
                                 " does not run under this placement or backend");
      },
      compiled.strategy, compiled.placement);
}

} // namespace detail
} // namespace treetrav
