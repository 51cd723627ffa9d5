#pragma once

// The Automatic strategy (auto): picks brute force or a tree strategy and
// query order for one search job by timing each on a sample of its queries.
// The search subcommands' default; the studies in perf/ compare its pick with
// the best fixed strategy.
#include <treetrav/core/backends.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace treetrav {

// One way to run a search: a strategy (never Automatic) and, for trees,
// whether the queries go in Morton order.
namespace detail {
template <class S>
struct keeps_plan : std::bool_constant<!S::group_walk && !chooses_strategy_v<S>> {};
} // namespace detail

// What a plan runs: a search strategy that chooses none itself.
using PlanStrategy = strategies_where<detail::keeps_plan>;

struct SearchPlan {
  PlanStrategy strategy;
  bool sorted = false;
  std::string name() const {
    return std::visit(
        [](auto const& tag) { return std::string(std::decay_t<decltype(tag)>::name); }, strategy);
  }
  std::string label() const { return name() + (sorted ? "/sfc" : ""); }
};

struct SearchChoice {
  SearchPlan plan;
  std::string reason; // the estimates behind the choice, for the log and the metadata
  double probe_s = 0; // wall-clock seconds the probe took
};

namespace detail {
// The tree walks auto compares: those of one query at a time whose answers
// equal the reference walk's bit for bit (REGTT reorders a query's visits and
// probes its own depth; the group walk needs the tree's own points).
template <class S>
struct keeps_auto_candidate
    : std::bool_constant<S::walks_tree && !S::group_walk && S::tree_order> {};

template <class F, class... Strategies>
void for_each_alternative(F const& f, std::variant<Strategies...> const*) {
  (f(Strategies{}), ...);
}
} // namespace detail

// What `auto` may pick on Space: brute force (the strategy that walks no
// tree), and when the points fit a tree, every candidate walk that runs
// there, each in input and in Morton order where it takes an order.
template <class Space>
std::vector<SearchPlan> candidate_plans(bool trees) {
  std::vector<SearchPlan> plans{{BruteForce{}, false}};
  if (!trees)
    return plans;
  auto add = [&](auto tag) {
    using Strategy = decltype(tag);
    if constexpr (runs_on_v<Strategy, Space>) {
      plans.push_back({tag, false});
      if constexpr (Strategy::takes_order)
        plans.push_back({tag, true});
    }
  };
  detail::for_each_alternative(
      add, static_cast<strategies_where<detail::keeps_auto_candidate> const*>(nullptr));
  return plans;
}



namespace detail {

template <class Points, class Rows>
struct GatherQueryRows {
  Points from, to;
  Rows rows;
  Index first;
  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const row = rows.extent(0) == 0 ? first + i : rows(first + i);
    for (int k = 0; k < static_cast<int>(from.extent(1)); ++k)
      to(i, k) = from(row, k);
  }
};

} // namespace detail

// Queries at positions first .. first + count of `order` (input order when
// empty), gathered in that order: a sample as coherent as the whole job.
template <class Space, class MemorySpace>
PointSet<MemorySpace> gather_queries(Space const& space, PointSet<MemorySpace> const& queries,
                                     Kokkos::View<Index*, MemorySpace> const& order, Index first,
                                     Index count) {
  auto sample =
      allocate_points<MemorySpace>("treetrav::auto::probe_sample", count, queries.dimension());
  Kokkos::parallel_for("treetrav::auto::gather_queries", Kokkos::RangePolicy<Space>(space, 0, count),
                       detail::GatherQueryRows<typename PointSet<MemorySpace>::coordinates_view,
                                          Kokkos::View<Index*, MemorySpace>>{
                           queries.coordinates, sample.coordinates, order, first});
  space.fence();
  return sample;
}

// Probe sizes: a first sample ranks the candidates within their family, a
// second, larger one times each family's best. On the GPU the first keeps a
// thirty-second of the resident threads busy (enough to rank strategies of
// one kind, not to compare kinds: a small sample is latency-bound, and more
// so for some kinds than others, perf/results/brute), the second fills every
// resident thread once; on the host a few dozen, then a few hundred queries
// per thread.
template <class Space>
std::pair<Index, Index> probe_sizes(Index n_queries) {
  Index const concurrency = Space().concurrency();
  bool const gpu = is_cuda_space_v<Space>;
  Index const first = std::max<Index>(n_queries / 64, gpu ? concurrency / 32 : 32 * concurrency);
  Index const second = std::max<Index>(n_queries / 16, gpu ? concurrency : 128 * concurrency);
  return {std::min(n_queries, first), std::min(n_queries, second)};
}

// The families whose estimates on a small sample compare well among
// themselves but not with each other's (perf/results/brute): brute force,
// trees in input order, trees in Morton order, hybrid (its own order).
inline int plan_family(SearchPlan const& plan) {
  if (!trait_of(plan.strategy, [](auto s) { return decltype(s)::walks_tree; }))
    return 0;
  if (!trait_of(plan.strategy, [](auto s) { return decltype(s)::takes_order; }))
    return 3;
  return plan.sorted ? 2 : 1;
}

// The most dimensions at which auto probes the trees: three quarters of
// log2 n_reference. A kd-tree of n points splits each coordinate about
// log2(n) / d times on a root-to-leaf path; with few splits a query visits
// most leaves, and a single tree query then takes as long as brute force's
// whole job: on uniform points the trees won at d = 8 and lost by far at
// d = 16 (perf/results/brute); the margin up to 0.75 log2 n leaves room for
// clustered data.
inline int probed_tree_dimension(Index n_reference) {
  return static_cast<int>(0.75 * std::log2(std::max<double>(n_reference, 2)));
}

// Picks the plan with the smallest estimated time for all `queries`: each
// candidate runs on a window of the queries in its order (a sample as
// coherent as the whole job), its time scaled to the job. A small sample
// ranks the plans within each family (plan_family): it is latency-bound on a
// GPU, so its estimates compare only within a kind. The finalists, timed on
// the larger sample that decides, are each family's best within 10x of the
// best estimate, brute force, and the search engine's fast path (autoropes in
// Morton order), which a small Morton window misjudges most. Brute force and
// the fast path are timed first; with the fast path over ten times brute
// force, the other trees are not probed (strategies differ by less than
// that); with brute force over 100x the fast path on its small sample (its
// cost per query does not depend on the window; the margin covers a small
// sample's underfilled GPU), it is not timed again (at 10M points it would
// take most of the probe). No tree is probed beyond
// probed_tree_dimension(n_reference).
template <class Space, class MemorySpace, class Run>
SearchChoice choose_strategy(Space const& space, PointSet<MemorySpace> const& queries,
                             Kokkos::View<Index*, MemorySpace> const& morton, double morton_s,
                             Index n_reference, bool trees, Run const& run) {
  Kokkos::Timer probe_timer;
  SearchChoice choice;
  int const d = queries.dimension();
  auto const plans = candidate_plans<Space>(trees && d <= probed_tree_dimension(n_reference));
  Index const n = queries.size();
  if (plans.size() == 1) {
    choice.plan = plans.front();
    choice.reason =
        d > max_tree_dimension
            ? fmt::format("the points have {} dimensions, more than a tree takes ({})", d,
                          max_tree_dimension)
            : fmt::format("{} dimensions are more than trees over {} points prune in ({}); not "
                          "probed",
                          d, n_reference, probed_tree_dimension(n_reference));
    choice.probe_s = probe_timer.seconds();
    return choice;
  }
  // Seconds for all n queries, from a run on `count` of them after a
  // warm-up on a few (no estimate pays for loading a kernel).
  auto time_plan = [&](SearchPlan const& plan, Index count) {
    Index const first = (n - count) / 2;
    auto const order = plan.sorted ? morton : Kokkos::View<Index*, MemorySpace>();
    auto const warm_up = gather_queries(space, queries, order, first, std::min<Index>(count, 64));
    auto const sample = gather_queries(space, queries, order, first, count);
    return std::visit(
        [&](auto tag) {
          using Strategy = decltype(tag);
          if constexpr (!runs_on_v<Strategy, Space>) {
            return 0.0; // never a candidate
          } else {
            run(tag, warm_up);
            space.fence();
            Kokkos::Timer timer;
            run(tag, sample);
            space.fence();
            return timer.seconds() * static_cast<double>(n) / static_cast<double>(count) +
                   (plan.sorted ? morton_s : 0.0);
          }
        },
        plan.strategy);
  };
  auto const sizes = probe_sizes<Space>(n);
  Index const first_size = sizes.first, second_size = sizes.second;
  bool const two_stages = second_size > first_size;
  constexpr double not_probed = -1;
  // ranking: on the small sample; estimates: on the large one (finalists).
  std::vector<double> ranking(plans.size(), not_probed), estimates(plans.size(), not_probed);
  auto decide = [&](std::size_t i) {
    if (estimates[i] == not_probed)
      estimates[i] = two_stages ? time_plan(plans[i], second_size) : ranking[i];
  };
  // plans: brute force, then the tree strategies.
  std::size_t const fast_path =
      std::find_if(plans.begin(), plans.end(),
                   [](SearchPlan const& p) {
                     return p.sorted &&
                            trait_of(p.strategy, [](auto s) { return decltype(s)::fast_path; });
                   }) -
      plans.begin();
  for (std::size_t i : {std::size_t(0), fast_path})
    ranking[i] = time_plan(plans[i], first_size);
  decide(fast_path);
  bool const brute_hopeless = ranking[0] > 100 * estimates[fast_path];
  if (!brute_hopeless)
    decide(0);
  bool const trees_hopeless = !brute_hopeless && estimates[fast_path] > 10 * estimates[0];
  if (!trees_hopeless)
    for (std::size_t i = 1; i < plans.size(); ++i)
      if (i != fast_path)
        ranking[i] = time_plan(plans[i], first_size);
  // The finalists: brute force (unless hopeless), the fast path, and each
  // family's best unless 10x slower than the best.
  double best_first = ranking[0];
  for (double e : ranking)
    if (e != not_probed)
      best_first = std::min(best_first, e);
  constexpr int families = 4;
  std::size_t family_best[families];
  std::fill(family_best, family_best + families, plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::size_t& best = family_best[plan_family(plans[i])];
    if (ranking[i] != not_probed && ranking[i] <= 10 * best_first && !(i == 0 && brute_hopeless) &&
        (best == plans.size() || ranking[i] < ranking[best]))
      best = i;
  }
  std::vector<bool> finalist(plans.size());
  finalist[0] = !brute_hopeless;
  finalist[fast_path] = true;
  for (std::size_t i : family_best)
    if (i != plans.size())
      finalist[i] = true;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (finalist[i])
      decide(i);
  std::string const stages =
      two_stages ? fmt::format("{} queries, then {} for the finalists", first_size, second_size)
                 : fmt::format("{} queries", first_size);
  std::size_t pick = plans.size();
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (finalist[i] && (pick == plans.size() || estimates[i] < estimates[pick]))
      pick = i;
  choice.plan = plans[pick];
  std::string list;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (ranking[i] != not_probed)
      list += fmt::format("{}{} {:.3g} s", list.empty() ? "" : ", ", plans[i].label(),
                          estimates[i] != not_probed ? estimates[i] : ranking[i]);
  choice.reason =
      fmt::format("estimated {:.3g} s for {} queries, the fastest of: {} (probe of {}){}",
                  estimates[pick], n, list, stages,
                  trees_hopeless ? "; the other tree strategies not probed: autoropes in Morton "
                                   "order took over 10x brute force's estimate"
                                 : "");
  choice.probe_s = probe_timer.seconds();
  return choice;
}

} // namespace treetrav
