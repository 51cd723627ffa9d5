#pragma once

// The list of strategies: how each query walks the tree. A strategy is a
// policy object, one header each in traversal/strategies/, carrying its
// options, its traits and its own launch(); traverse() makes one call to it.
// Callers ask a strategy's traits, never its type:
//   name               what the command line and the results files call it
//   walks_tree         a tree walk (false: brute force, auto)
//   host_only          walks with host recursion: host execution spaces only
//   placeable          runs under a software placement (schedule/placement.hpp)
//   group_walk         walks a group of the tree's own points at a time (the
//                      visitor's group interface) rather than one query alone
//   takes_order        follows the caller's query order (hybrid makes its own)
//   tree_order         visits each query's nodes in the recursive reference's
//                      order, so its answers (sums included) equal it bit for bit
//   fast_path          the engine's tuned walk: kNN instantiates finer
//                      candidate-list capacities for it, auto times it first
//   warp_based         its `warp_size` sets the emulated warp on host backends
//   records_metrics()  a run fills TraversalMetrics (per warp visits)
//   timings_type       (where present) what its `timings` pointer receives;
//                      its record(sink) writes it as sink.set(name, value)
// and every strategy has `workspace`: the caller's Workspace, where it keeps
// what repeated calls reuse (none: each call its own).
// A new strategy is one header and its entry in `Strategies` below.
#include <treetrav/core/error.hpp>
#include <treetrav/traversal/strategies/automatic.hpp>
#include <treetrav/traversal/strategies/autoropes.hpp>
#include <treetrav/traversal/strategies/brute_force.hpp>
#include <treetrav/traversal/strategies/fsm.hpp>
#include <treetrav/traversal/strategies/group_walk.hpp>
#include <treetrav/traversal/strategies/hybrid.hpp>
#include <treetrav/traversal/strategies/lockstep.hpp>
#include <treetrav/traversal/strategies/recursive.hpp>
#include <treetrav/traversal/strategies/regtt.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <variant>

namespace treetrav {

template <class... Ts>
struct type_list {};

// Every strategy, in the order help texts list them.
using Strategies = type_list<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid, Regtt, GroupWalk,
                             BruteForce, Automatic>;

namespace detail {
template <template <class> class Keep, class List, class... Kept>
struct variant_where;
template <template <class> class Keep, class... Kept>
struct variant_where<Keep, type_list<>, Kept...> {
  using type = std::variant<Kept...>;
};
template <template <class> class Keep, class First, class... Rest, class... Kept>
struct variant_where<Keep, type_list<First, Rest...>, Kept...>
    : std::conditional_t<Keep<First>::value, variant_where<Keep, type_list<Rest...>, Kept..., First>,
                         variant_where<Keep, type_list<Rest...>, Kept...>> {};

template <class S>
struct keeps_search : std::bool_constant<!S::group_walk> {};
template <class S>
struct keeps_per_query_walk : std::bool_constant<S::walks_tree && !S::group_walk> {};
template <class S>
struct keeps_walk : std::bool_constant<S::walks_tree> {};
template <class S>
struct keeps_restartable_force
    : std::bool_constant<S::walks_tree && (S::tree_order || S::group_walk)> {};
} // namespace detail

// The strategies of `List` for which Keep<S>::value holds, as a variant.
template <template <class> class Keep, class List = Strategies>
using strategies_where = typename detail::variant_where<Keep, List>::type;

// What the search applications take (pc, nn, knn, vp, bt): every strategy but
// the group walk, brute force and auto included.
using SearchStrategy = strategies_where<detail::keeps_search>;
// Tree walks of one query at a time (radius lists, distributed searches).
using ApplicationStrategy = strategies_where<detail::keeps_per_query_walk>;
// Every tree walk (Barnes-Hut forces: the group interface too).
using BarnesHutStrategy = strategies_where<detail::keeps_walk>;
// Pair counts: every tree walk; the group walk pairs one set's own points.
using PairCountStrategy = strategies_where<detail::keeps_walk>;
// N-body runs, whose restarts may switch between the per-query walks
// (bit-identical forces) and the group walk.
using ForceStrategy = strategies_where<detail::keeps_restartable_force>;

// A trait of the strategy a variant holds, asked at run time:
// trait_of(strategy, [](auto s) { return decltype(s)::group_walk; }).
template <class Variant, class Trait>
bool trait_of(Variant const& strategy, Trait const& trait) {
  return std::visit([&](auto const& tag) { return bool(trait(tag)); }, strategy);
}

namespace detail {
template <class... S>
std::string names_of(std::variant<S...> const*) {
  std::string names;
  ((names += (names.empty() ? "" : ", ") + std::string(S::name)), ...);
  return names;
}
template <class Variant, class... S>
std::optional<Variant> named(std::string const& name, std::variant<S...> const*) {
  std::optional<Variant> strategy;
  ((strategy = !strategy && name == S::name ? std::optional<Variant>(S{}) : strategy), ...);
  return strategy;
}
} // namespace detail

// Whether Strategy can run on execution space Space (host_only strategies
// walk with host recursion).
template <class Strategy, class Space>
inline constexpr bool runs_on_v =
    !Strategy::host_only || Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

// The optional parts of a strategy: its timings, the choice auto makes.
template <class Strategy, class = void>
struct has_timings : std::false_type {};
template <class Strategy>
struct has_timings<Strategy, std::void_t<typename Strategy::timings_type>> : std::true_type {};
template <class Strategy>
inline constexpr bool has_timings_v = has_timings<Strategy>::value;
// The type a strategy's `timings` receives (an empty record without one).
template <class Strategy, class = void>
struct timings_of {
  struct type {
    template <class Sink>
    void record(Sink&) const {}
  };
};
template <class Strategy>
struct timings_of<Strategy, std::void_t<typename Strategy::timings_type>> {
  using type = typename Strategy::timings_type;
};
template <class Strategy, class = void>
struct chooses_strategy : std::false_type {};
template <class Strategy>
struct chooses_strategy<Strategy, std::void_t<decltype(Strategy::choice)>> : std::true_type {};
// Whether Strategy picks another strategy per job (auto).
template <class Strategy>
inline constexpr bool chooses_strategy_v = chooses_strategy<Strategy>::value;

// "recursive, autoropes, ...": the names a variant of strategies holds.
template <class Variant>
std::string strategy_names() {
  return detail::names_of(static_cast<Variant const*>(nullptr));
}

// The strategy of `Variant` called `name`; InputError naming the value and
// the names accepted otherwise.
template <class Variant>
Variant parse_strategy(std::string const& name) {
  auto const strategy = detail::named<Variant>(name, static_cast<Variant const*>(nullptr));
  if (!strategy)
    throw InputError("strategy",
                     ": unknown strategy '" + name + "' (known: " + strategy_names<Variant>() + ")");
  return *strategy;
}

} // namespace treetrav
