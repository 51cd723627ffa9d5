#pragma once

// The accuracy study of §IV-B (Figure 10): float treefix against an exact
// reference on sums of prescribed condition number, for the level-synchronous
// and vectorial methods and two ways of taking the vectorial method's extra
// cancellation error back out (float-float and double accumulators).
#include <treetrav/treefix/generators.hpp>
#include <treetrav/treefix/sequential.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace treetrav {

namespace detail {

inline constexpr Purpose ill_conditioned_draw{20};

// For each vertex, where it stands in the order the sums build up: its depth
// for rootfix, its height above the deepest leaf below it for leaffix.
inline std::vector<Index> construction_levels(RootedTree<Kokkos::HostSpace> const& tree,
                                              Treefix kind, std::vector<Index> const& order) {
  auto const& parents = tree.parents();
  std::vector<Index> level(tree.size(), 0);
  if (kind == Treefix::rootfix) {
    for (Index v : order)
      if (v != tree.root())
        level[v] = level[parents(v)] + 1;
  } else {
    for (auto v = order.rbegin(); v != order.rend(); ++v)
      if (*v != tree.root())
        level[parents(*v)] = std::max(level[parents(*v)], level[*v] + 1);
  }
  return level;
}

} // namespace detail

// Float weights on which treefix is ill-conditioned, with condition numbers
// rising to about `condition`: the generator of Ogita, Rump and Oishi (GenSum,
// "Accurate sum and dot product", 2005) run along every root-to-leaf path
// (rootfix) or over every subtree (leaffix). Vertices in the first half of the
// construction (by depth for rootfix, by height for leaffix) get positive
// weights m 2^e, m in [1/2, 1) and e uniform in [0, log2 condition]. Each
// later vertex subtracts the exact sum accumulated before it (its ancestors',
// or its children's subtrees') and adds a random +-m 2^e, e chosen so that its
// result is about the magnitudes summed divided by condition^f, f rising
// linearly to 1 at the end of the construction.
inline Kokkos::View<float*, Kokkos::HostSpace>
ill_conditioned_weights(RootedTree<Kokkos::HostSpace> const& tree, Treefix kind, double condition,
                        std::uint64_t seed) {
  if (!(condition >= 1))
    throw InputError("the condition number must be >= 1");
  auto const& parents = tree.parents();
  auto const order = parents_first_order(tree);
  auto const level = detail::construction_levels(tree, kind, order);
  Index const height = tree.height();
  Index const half = height / 2;
  double const bits = std::log2(condition);
  CompensatedSum<double> const exact;
  // What each vertex's weight is added to: the exact sum and its magnitude.
  std::vector<Compensated<double>> before(tree.size(), exact.identity());
  std::vector<double> before_magnitude(tree.size(), 0);
  Kokkos::View<float*, Kokkos::HostSpace> weights(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::ill_conditioned_weights"),
      tree.size());
  auto const draw = [&](Index v) {
    detail::RandomStream random(seed, detail::ill_conditioned_draw, v);
    float const mantissa = 0.5f + 0.5f * random.uniform_float();
    if (level[v] <= half) {
      weights(v) = std::ldexp(mantissa, static_cast<int>(std::lround(random.uniform() * bits)));
    } else {
      double const fraction = double(level[v] - half) / (height - half);
      int const exponent =
          static_cast<int>(std::lround(std::log2(before_magnitude[v]) - fraction * bits));
      double const target = std::ldexp(random.uniform() < 0.5 ? -mantissa : mantissa, exponent);
      weights(v) = static_cast<float>(
          exact.lower(exact.combine(exact.lift(target), exact.inverse(before[v]))));
    }
    return std::make_pair(exact.combine(before[v], exact.lift(weights(v))),
                          before_magnitude[v] + std::abs(weights(v)));
  };
  if (kind == Treefix::rootfix) {
    std::vector<std::pair<Compensated<double>, double>> sums(tree.size());
    for (Index v : order) {
      if (v != tree.root())
        std::tie(before[v], before_magnitude[v]) = sums[parents(v)];
      sums[v] = draw(v);
    }
  } else {
    for (auto v = order.rbegin(); v != order.rend(); ++v) {
      if (*v == tree.root())
        break; // last in this order; its weight changes no other
      auto const [sum, magnitude] = draw(*v);
      before[parents(*v)] = exact.combine(before[parents(*v)], sum);
      before_magnitude[parents(*v)] += magnitude;
    }
    draw(tree.root());
  }
  return weights;
}

struct AccuracyStudy {
  Index vertices = 10000; // the paper's trees have 10,000 nodes
  std::vector<double> conditions{1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10};
  int trials = 10; // random recursive trees per condition number (the paper: 100)
  std::uint64_t seed = 1;
};

struct AccuracySample {
  Treefix treefix;
  std::string method; // bfs, euler, euler-compensated (float-float), euler-widened (double)
  double condition;   // prescribed
  int trial;
  double max_relative_error; // over the vertices whose exact result is non-zero
  double condition_at_max;   // the condition number of that vertex's own sum
  double max_condition;      // the largest condition number over the vertices
};

namespace detail {

// One sample from a float result and the exact result / magnitudes (double).
template <class Results>
AccuracySample compare_with_exact(Results const& results,
                                  Kokkos::View<double*, Kokkos::HostSpace> const& exact,
                                  Kokkos::View<double*, Kokkos::HostSpace> const& magnitude) {
  AccuracySample sample{};
  for (std::size_t v = 0; v < exact.extent(0); ++v) {
    if (exact(v) == 0)
      continue;
    double const condition = magnitude(v) / std::abs(exact(v));
    double const error = std::abs(results(v) - exact(v)) / std::abs(exact(v));
    sample.max_condition = std::max(sample.max_condition, condition);
    if (error >= sample.max_relative_error) {
      sample.max_relative_error = error;
      sample.condition_at_max = condition;
    }
  }
  return sample;
}

} // namespace detail

// Runs the study on `space`: for each trial a random recursive tree, for each
// condition number and treefix kind ill-conditioned weights, then every method
// in float against the sequential double-double reference.
template <class ExecutionSpace>
std::vector<AccuracySample> accuracy_study(ExecutionSpace const& space,
                                           AccuracyStudy const& study) {
  using Memory = typename ExecutionSpace::memory_space;
  using Host = Kokkos::DefaultHostExecutionSpace;
  std::vector<AccuracySample> samples;
  for (int trial = 0; trial < study.trials; ++trial) {
    RootedTree<Kokkos::HostSpace> const host_tree(
        Host{},
        generate_tree(Host{}, TreeShape::random_recursive, study.vertices, study.seed + trial));
    auto const tree = copy_tree(space, host_tree);
    LevelSynchronousTreefix<Memory> bfs(space, tree);
    EulerTourTreefix<Memory> euler(space, tree);
    Kokkos::View<float*, Memory> results("treetrav::accuracy_study::results", study.vertices);
    for (double condition : study.conditions)
      for (Treefix kind : {Treefix::rootfix, Treefix::leaffix}) {
        auto const host_weights =
            ill_conditioned_weights(host_tree, kind, condition, study.seed + trial);
        Kokkos::View<double*, Kokkos::HostSpace> magnitudes("treetrav::accuracy_study::magnitudes",
                                                            study.vertices);
        for (Index v = 0; v < study.vertices; ++v)
          magnitudes(v) = std::abs(host_weights(v));
        auto const exact =
            sequential_treefix(kind, host_tree, CompensatedSum<double>{}, host_weights);
        auto const magnitude = sequential_treefix(kind, host_tree, Sum<double>{}, magnitudes);
        auto const weights = Kokkos::create_mirror_view_and_copy(space, host_weights);
        auto const measure = [&](std::string const& method, auto& treefix_method, auto const& op) {
          treefix(space, kind, treefix_method, op, weights, results);
          auto sample = detail::compare_with_exact(
              Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results), exact, magnitude);
          sample.treefix = kind;
          sample.method = method;
          sample.condition = condition;
          sample.trial = trial;
          samples.push_back(sample);
        };
        measure("bfs", bfs, Sum<float>{});
        measure("euler", euler, Sum<float>{});
        measure("euler-compensated", euler, CompensatedSum<float>{});
        measure("euler-widened", euler, WidenedSum<float, double>{});
      }
  }
  return samples;
}

} // namespace treetrav
