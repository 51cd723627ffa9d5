// Treefix on every backend: validation of parent arrays, the CSR and Euler-tour
// conversions against host oracles, and both methods against the sequential
// reference (exactly on integers, within rounding-error bounds on floats) on
// every generated shape, n = 1 and n = 2 included.
#include "execution_spaces.hpp"

#include <treetrav/treefix/generators.hpp>
#include <treetrav/treefix/sequential.hpp>
#include <treetrav/treefix/treefix.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Host = Kokkos::DefaultHostExecutionSpace;
using HostTree = RootedTree<Kokkos::HostSpace>;
template <class T>
using HostVector = Kokkos::View<T*, Kokkos::HostSpace>;

template <class T>
HostVector<T> host_vector(std::vector<T> const& values) {
  HostVector<T> view("test::values", values.size());
  std::copy(values.begin(), values.end(), view.data());
  return view;
}

template <class T>
std::vector<T> to_std(Kokkos::View<T*, Kokkos::HostSpace> const& view) {
  return {view.data(), view.data() + view.extent(0)};
}

template <class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

// The same tree with its vertices renamed by a random permutation, so that no
// method can rely on parents having smaller indices or the root being 0.
HostVector<Index> relabelled(HostVector<Index> const& parents, std::uint64_t seed) {
  Index const n = parents.extent(0);
  std::vector<Index> name(n);
  std::iota(name.begin(), name.end(), 0);
  std::shuffle(name.begin(), name.end(), std::mt19937_64(seed));
  HostVector<Index> renamed("test::relabelled", n);
  for (Index v = 0; v < n; ++v)
    renamed(name[v]) = parents(v) == no_parent ? no_parent : name[parents(v)];
  return renamed;
}

struct NamedTree {
  std::string name;
  HostTree tree;
};

// Every generated shape at sizes 1, 2, 3 and a few larger ones, and relabelled
// copies of the irregular ones.
std::vector<NamedTree> test_trees(std::vector<Index> const& sizes) {
  std::vector<NamedTree> trees;
  auto add = [&](std::string name, HostVector<Index> const& parents) {
    trees.push_back({std::move(name), HostTree(Host{}, parents)});
  };
  for (TreeShape shape : tree_shapes())
    for (Index n : sizes) {
      auto const parents = generate_tree(Host{}, shape, n, 7, 3);
      std::string const name = to_string(shape) + "-" + std::to_string(n);
      add(name, parents);
      if (n > 2 && shape != TreeShape::star)
        add(name + "-relabelled", relabelled(parents, n));
    }
  return trees;
}

std::vector<Index> const small_sizes{1, 2, 3, 5, 64, 1000};

// ---------------------------------------------------------------- validation

template <class Space>
class TreefixValidation : public ::testing::Test {};
TYPED_TEST_SUITE(TreefixValidation, test::ExecutionSpaces, test::SpaceName);

// Validates on TypeParam and returns the InputError's message ("" if none).
template <class Space>
std::string validation_error(std::vector<Index> const& parents) {
  auto const device_parents = Kokkos::create_mirror_view_and_copy(Space{}, host_vector(parents));
  try {
    RootedTree<typename Space::memory_space>(Space{}, device_parents);
  } catch (InputError const& error) {
    return error.what();
  }
  return "";
}

bool mentions(std::string const& message, std::string const& part) {
  return message.find(part) != std::string::npos;
}

TYPED_TEST(TreefixValidation, FindsRootAndHeight) {
  auto const describe = [](std::vector<Index> const& parents) {
    auto const device_parents =
        Kokkos::create_mirror_view_and_copy(TypeParam{}, host_vector(parents));
    RootedTree<typename TypeParam::memory_space> const tree(TypeParam{}, device_parents);
    return std::make_pair(tree.root(), tree.height());
  };
  EXPECT_EQ(describe({-1}), std::make_pair(0, 0));
  EXPECT_EQ(describe({1, -1}), std::make_pair(1, 1));
  EXPECT_EQ(describe({2, 3, 4, 5, -1, 4}),
            std::make_pair(4, 3)); // 0 -> 2 -> 4 and 1 -> 3 -> 5 -> 4
}

TYPED_TEST(TreefixValidation, RejectsMalformedParentArraysNamingTheVertex) {
  auto const empty = validation_error<TypeParam>({});
  EXPECT_TRUE(mentions(empty, "empty")) << empty;

  auto const out_of_range = validation_error<TypeParam>({-1, 0, 7, 0});
  EXPECT_TRUE(mentions(out_of_range, "vertex 2 has parent 7, outside [-1, 4)")) << out_of_range;
  auto const below = validation_error<TypeParam>({-1, -3});
  EXPECT_TRUE(mentions(below, "vertex 1 has parent -3")) << below;

  auto const rootless = validation_error<TypeParam>({1, 2, 0});
  EXPECT_TRUE(mentions(rootless, "no root")) << rootless;

  auto const two_roots = validation_error<TypeParam>({-1, 0, 0, -1, 3});
  EXPECT_TRUE(mentions(two_roots, "2 roots: vertices 0 and 3")) << two_roots;

  // 1 -> 3 -> 4 -> 3: vertex 1 only leads into the cycle {3, 4}, which is named.
  auto const cycle = validation_error<TypeParam>({-1, 3, 0, 4, 3});
  EXPECT_TRUE(mentions(cycle, "vertex 3 is on a cycle") ||
              mentions(cycle, "vertex 4 is on a cycle"))
      << cycle;
  EXPECT_TRUE(mentions(cycle, "root 0")) << cycle;

  auto const self_loop = validation_error<TypeParam>({-1, 0, 2});
  EXPECT_TRUE(mentions(self_loop, "vertex 2 is on a cycle")) << self_loop;
}

TYPED_TEST(TreefixValidation, AcceptsEveryGeneratedShape) {
  for (auto const& named : test_trees({1, 2, 1000})) {
    auto const& [name, tree] = named;
    auto const device_parents = Kokkos::create_mirror_view_and_copy(TypeParam{}, tree.parents());
    RootedTree<typename TypeParam::memory_space> const device_tree(TypeParam{}, device_parents);
    EXPECT_EQ(device_tree.root(), tree.root()) << name;
    EXPECT_EQ(device_tree.height(), tree.height()) << name;
  }
}

// ---------------------------------------------------------------- generators

TEST(TreefixGenerators, ShapesHaveTheirHeights) {
  auto const height = [](TreeShape shape, Index n, int arity = 2) {
    return HostTree(Host{}, generate_tree(Host{}, shape, n, 1, arity)).height();
  };
  EXPECT_EQ(height(TreeShape::star, 1), 0);
  EXPECT_EQ(height(TreeShape::star, 5000), 1);
  EXPECT_EQ(height(TreeShape::caterpillar, 5000), 4999);
  EXPECT_EQ(height(TreeShape::kary, 15), 3);
  EXPECT_EQ(height(TreeShape::kary, 16), 4);
  EXPECT_EQ(height(TreeShape::kary, 1 + 8 + 64, 8), 2);
  // A 20^3 grid searched from one vertex: at most the longest Manhattan distance.
  EXPECT_LE(height(TreeShape::grid, 8000), 57);
  EXPECT_GE(height(TreeShape::grid, 8000), 29);
  // Random recursive trees are shallow, geometric ones about 1/radius deep.
  EXPECT_LT(height(TreeShape::random_recursive, 100000), 60);
  EXPECT_LT(height(TreeShape::random_geometric, 100000), 200);
}

TEST(TreefixGenerators, AreDeterministicInTheSeed) {
  for (TreeShape shape : tree_shapes()) {
    auto const a = to_std(generate_tree(Host{}, shape, 3000, 11));
    EXPECT_EQ(a, to_std(generate_tree(Host{}, shape, 3000, 11))) << to_string(shape);
    bool const random = shape == TreeShape::random_recursive || shape == TreeShape::grid ||
                        shape == TreeShape::random_geometric;
    EXPECT_EQ(a != to_std(generate_tree(Host{}, shape, 3000, 12)), random) << to_string(shape);
  }
  EXPECT_EQ(to_std(uniform_weights<double>(Host{}, 100, 3)),
            to_std(uniform_weights<double>(Host{}, 100, 3)));
}

TEST(TreefixGenerators, RejectBadArguments) {
  EXPECT_THROW(generate_tree(Host{}, TreeShape::star, 0, 1), InputError);
  EXPECT_THROW(generate_tree(Host{}, TreeShape::kary, 10, 1, 0), InputError);
}

TEST(TreefixMethodChoice, PrefersBfsForTheRootfixOfWideTreesOnly) {
  auto const method = [](TreeShape shape, Index n, Treefix kind) {
    return choose_method(HostTree(Host{}, generate_tree(Host{}, shape, n, 1)), kind);
  };
  // A star has two levels: bfs once the leaves' level alone is wide enough.
  EXPECT_EQ(method(TreeShape::star, 2 * min_average_level_width, Treefix::rootfix),
            TreefixMethod::bfs);
  EXPECT_EQ(method(TreeShape::star, 2 * min_average_level_width, Treefix::leaffix),
            TreefixMethod::euler);
  EXPECT_EQ(method(TreeShape::star, min_average_level_width, Treefix::rootfix),
            TreefixMethod::euler);
  EXPECT_EQ(method(TreeShape::caterpillar, 5000, Treefix::rootfix), TreefixMethod::euler);
}

// ---------------------------------------------------------------- conversions

template <class Space>
class TreefixConversions : public ::testing::Test {};
TYPED_TEST_SUITE(TreefixConversions, test::ExecutionSpaces, test::SpaceName);

TYPED_TEST(TreefixConversions, CsrListsEachVertexsChildrenInIncreasingOrder) {
  TypeParam space;
  for (auto const& named : test_trees(small_sizes)) {
    auto const& name = named.name;
    auto const& tree = named.tree;
    auto const csr = children_csr(space, copy_tree(space, tree));
    auto const offsets = to_host(csr.offsets);
    auto const children = to_host(csr.children);
    Index const n = tree.size();
    ASSERT_EQ(children.extent(0), std::size_t(n - 1)) << name;
    std::vector<std::vector<Index>> expected(n);
    for (Index v = 0; v < n; ++v)
      if (v != tree.root())
        expected[tree.parents()(v)].push_back(v);
    EXPECT_EQ(offsets(0), 0) << name;
    for (Index v = 0; v < n; ++v) {
      std::vector<Index> const listed(children.data() + offsets(v),
                                      children.data() + offsets(v + 1));
      ASSERT_EQ(listed, expected[v]) << name << ", vertex " << v;
    }
  }
}

TYPED_TEST(TreefixConversions, EulerTourWalksEveryEdgeDownAndUpOnce) {
  TypeParam space;
  for (auto const& named : test_trees(small_sizes)) {
    auto const& name = named.name;
    auto const& tree = named.tree;
    Index const n = tree.size();
    auto const device_tree = copy_tree(space, tree);
    auto const tour = euler_tour(space, device_tree, children_csr(space, device_tree));
    auto const open = to_host(tour.open);
    auto const close = to_host(tour.close);
    // Step sequence: vertex v entered (v, true) or left (v, false).
    std::vector<std::pair<Index, bool>> steps(2 * n, {-1, false});
    for (Index v = 0; v < n; ++v) {
      ASSERT_TRUE(open(v) >= 0 && open(v) < 2 * n && close(v) >= 0 && close(v) < 2 * n) << name;
      ASSERT_EQ(steps[open(v)].first, -1) << name << ": position " << open(v) << " used twice";
      steps[open(v)] = {v, true};
      ASSERT_EQ(steps[close(v)].first, -1) << name << ": position " << close(v) << " used twice";
      steps[close(v)] = {v, false};
    }
    ASSERT_EQ(open(tree.root()), 0) << name;
    ASSERT_EQ(close(tree.root()), 2 * n - 1) << name;
    // The step -> vertex array is the inverse of (open, close).
    auto const tour_steps = to_host(tour.steps);
    ASSERT_EQ(tour_steps.extent(0), std::size_t(2 * n)) << name;
    for (Index position = 0; position < 2 * n; ++position) {
      ASSERT_EQ(step_vertex(tour_steps(position)), steps[position].first) << name;
      ASSERT_EQ(opens(tour_steps(position)), steps[position].second) << name;
    }
    // Between the root's steps lie the 2(n - 1) edge steps; each moves along a
    // tree edge from where the walk stands, children in increasing order.
    auto const& parents = tree.parents();
    Index here = tree.root();
    Index last_left = -1; // the child just returned from, to check sibling order
    for (Index position = 1; position < 2 * n - 1; ++position) {
      auto const [v, enters] = steps[position];
      if (enters) {
        ASSERT_EQ(parents(v), here) << name << ": step " << position << " jumps to " << v;
        ASSERT_TRUE(last_left == -1 || last_left < v)
            << name << ": children out of order at " << position;
        here = v;
        last_left = -1;
      } else {
        ASSERT_EQ(v, here) << name << ": step " << position << " leaves " << v << " from " << here;
        here = parents(v);
        last_left = v;
      }
    }
    EXPECT_EQ(here, tree.root()) << name;
  }
}

// ---------------------------------------------------------------- treefix

template <class Space>
class TreefixMethods : public ::testing::Test {};
TYPED_TEST_SUITE(TreefixMethods, test::ExecutionSpaces, test::SpaceName);

// Runs both kinds with both methods of one tree on Space and hands each host
// result to check(kind, method name, results).
template <class Space>
struct BothMethods {
  using Memory = typename Space::memory_space;
  Space space;
  LevelSynchronousTreefix<Memory> bfs;
  EulerTourTreefix<Memory> euler;

  explicit BothMethods(HostTree const& tree)
      : bfs(space, copy_tree(space, tree)), euler(space, copy_tree(space, tree)) {}

  template <class Operation, class Weights, class Check>
  void run(Operation const& op, Weights const& host_weights, Check const& check) {
    auto const weights = Kokkos::create_mirror_view_and_copy(space, host_weights);
    Kokkos::View<typename Operation::value_type*, Memory> results("test::results",
                                                                  host_weights.extent(0));
    for (Treefix kind : {Treefix::rootfix, Treefix::leaffix}) {
      treefix(space, kind, bfs, op, weights, results);
      check(kind, "bfs", to_host(results));
      treefix(space, kind, euler, op, weights, results);
      check(kind, "euler", to_host(results));
    }
  }
};

template <class T>
HostVector<T> random_integers(Index n, T low, T high, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<T> draw(low, high);
  HostVector<T> values("test::weights", n);
  for (Index v = 0; v < n; ++v)
    values(v) = draw(random);
  return values;
}

TYPED_TEST(TreefixMethods, EqualTheSequentialReferenceExactlyOnIntegers) {
  for (auto const& named : test_trees(small_sizes)) {
    auto const& name = named.name;
    auto const& tree = named.tree;
    BothMethods<TypeParam> methods(tree);
    auto const expect_exact = [&](auto const& op, auto const& weights) {
      methods.run(op, weights, [&](Treefix kind, std::string const& method, auto const& results) {
        auto const expected = sequential_treefix(kind, tree, op, weights);
        for (Index v = 0; v < tree.size(); ++v)
          ASSERT_EQ(results(v), expected(v))
              << name << " " << to_string(kind) << " " << method << ", vertex " << v;
      });
    };
    Index const n = tree.size();
    expect_exact(Sum<std::int64_t>{}, random_integers<std::int64_t>(n, -1000, 1000, n));
    expect_exact(BitwiseXor<std::uint32_t>{}, random_integers<std::uint32_t>(n, 0, ~0u, n + 1));
    expect_exact(Sum<int>{}, random_integers<int>(n, -50, 50, n + 2));
  }
}

TYPED_TEST(TreefixMethods, UnitWeightsGiveDepthsAndSubtreeSizes) {
  Index const n = 777;
  HostTree const path(Host{}, generate_tree(Host{}, TreeShape::caterpillar, n, 1));
  HostVector<Index> ones("test::ones", n);
  Kokkos::deep_copy(ones, 1);
  BothMethods<TypeParam>(path).run(
      Sum<Index>{}, ones, [&](Treefix kind, std::string const& method, auto const& results) {
        for (Index v = 0; v < n; ++v)
          ASSERT_EQ(results(v), kind == Treefix::rootfix ? v + 1 : n - v)
              << to_string(kind) << " " << method;
      });
}

// gamma_k of Higham: a sum of k + 1 terms in any order is off by at most
// gamma_k times the sum of their magnitudes.
double gamma(std::int64_t k) {
  double const ku = k * std::numeric_limits<float>::epsilon() / 2;
  return ku / (1 - ku);
}

TYPED_TEST(TreefixMethods, StayWithinRoundingErrorBoundsOnFloats) {
  double const u = std::numeric_limits<float>::epsilon() / 2;
  for (auto const& named : test_trees({1, 2, 3, 64, 300})) {
    auto const& name = named.name;
    auto const& tree = named.tree;
    Index const n = tree.size();
    std::mt19937_64 random(n);
    std::uniform_real_distribution<float> draw(-1, 1);
    HostVector<float> weights("test::weights", n);
    HostVector<double> exact_weights("test::exact_weights", n), magnitudes("test::magnitudes", n);
    HostVector<Index> ones("test::ones", n);
    for (Index v = 0; v < n; ++v) {
      weights(v) = draw(random);
      exact_weights(v) = weights(v);
      magnitudes(v) = std::abs(weights(v));
      ones(v) = 1;
    }
    // Where each vertex sits in the tour, and the magnitudes summed up to each step.
    EulerTourTreefix<Kokkos::HostSpace> const host_tour(Host{}, tree);
    auto const& open = host_tour.tour().open;
    auto const& close = host_tour.tour().close;
    std::vector<double> step_magnitude(2 * n);
    for (Index v = 0; v < n; ++v)
      step_magnitude[open(v)] = step_magnitude[close(v)] = magnitudes(v);
    std::partial_sum(step_magnitude.begin(), step_magnitude.end(), step_magnitude.begin());

    // Per kind: the exact results, the magnitudes summed, and how many terms.
    struct Reference {
      HostVector<double> exact, magnitude;
      HostVector<Index> terms; // path length (rootfix) or subtree size (leaffix)
    };
    std::map<Treefix, Reference> references;
    for (Treefix kind : {Treefix::rootfix, Treefix::leaffix})
      references[kind] = {sequential_treefix(kind, tree, CompensatedSum<double>{}, exact_weights),
                          sequential_treefix(kind, tree, Sum<double>{}, magnitudes),
                          sequential_treefix(kind, tree, Sum<Index>{}, ones)};
    auto const bound = [&](Treefix kind, std::string const& method, Index v) {
      auto const& reference = references.at(kind);
      if (method == "bfs")
        return gamma(reference.terms(v) - 1) * reference.magnitude(v);
      if (kind == Treefix::rootfix)
        return gamma(open(v)) * step_magnitude[open(v)];
      return gamma(close(v) + 2) *
             (step_magnitude[close(v)] + step_magnitude[open(v)] + std::abs(reference.exact(v)));
    };
    BothMethods<TypeParam> methods(tree);
    methods.run(Sum<float>{}, weights,
                [&](Treefix kind, std::string const& method, auto const& results) {
                  auto const& exact = references.at(kind).exact;
                  for (Index v = 0; v < n; ++v)
                    ASSERT_LE(std::abs(results(v) - exact(v)), bound(kind, method, v))
                        << name << " " << to_string(kind) << " " << method << ", vertex " << v;
                });
    // More precise accumulators leave only the final rounding to float.
    auto const check_precise = [&](double accumulator_error) {
      return [&, accumulator_error](Treefix kind, std::string const& method, auto const& results) {
        auto const& exact = references.at(kind).exact;
        for (Index v = 0; v < n; ++v)
          ASSERT_LE(std::abs(results(v) - exact(v)),
                    u * std::abs(exact(v)) + accumulator_error * 4 * n * n)
              << name << " " << to_string(kind) << " " << method << ", vertex " << v;
      };
    };
    methods.run(CompensatedSum<float>{}, weights, check_precise(3 * u * u));
    methods.run(WidenedSum<float, double>{}, weights,
                check_precise(std::numeric_limits<double>::epsilon()));
  }
}

// A group on vectors, as the octree's centres of mass need: leaffix of (m, m x,
// m y, m z) gives every subtree's mass and mass-weighted position.
struct Moments {
  double mass, x, y, z;
};
struct SumOfMoments {
  using value_type = Moments;
  using accumulator_type = Moments;
  KOKKOS_FUNCTION Moments identity() const { return {0, 0, 0, 0}; }
  KOKKOS_FUNCTION Moments combine(Moments a, Moments b) const {
    return {a.mass + b.mass, a.x + b.x, a.y + b.y, a.z + b.z};
  }
  KOKKOS_FUNCTION Moments inverse(Moments a) const { return {-a.mass, -a.x, -a.y, -a.z}; }
  KOKKOS_FUNCTION Moments lift(Moments a) const { return a; }
  KOKKOS_FUNCTION Moments lower(Moments a) const { return a; }
};

TYPED_TEST(TreefixMethods, LeaffixOfMassMomentsGivesSubtreeCentresOfMass) {
  HostTree const tree(Host{}, generate_tree(Host{}, TreeShape::random_geometric, 3000, 5));
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> draw(0, 1);
  HostVector<Moments> moments("test::moments", tree.size());
  for (Index v = 0; v < tree.size(); ++v) {
    double const mass = draw(random);
    moments(v) = {mass, mass * draw(random), mass * draw(random), mass * draw(random)};
  }
  auto const expected = sequential_treefix(Treefix::leaffix, tree, SumOfMoments{}, moments);
  BothMethods<TypeParam>(tree).run(
      SumOfMoments{}, moments, [&](Treefix kind, std::string const& method, auto const& results) {
        if (kind != Treefix::leaffix)
          return;
        for (Index v = 0; v < tree.size(); ++v) {
          double const tolerance = 1e-12 * expected(tree.root()).mass;
          ASSERT_NEAR(results(v).mass, expected(v).mass, tolerance) << method << ", vertex " << v;
          ASSERT_NEAR(results(v).x, expected(v).x, tolerance) << method << ", vertex " << v;
          ASSERT_NEAR(results(v).z, expected(v).z, tolerance) << method << ", vertex " << v;
        }
      });
}

TYPED_TEST(TreefixMethods, LevelSynchronousKnowsTheLevelsBeforehand) {
  TypeParam space;
  for (auto const& named : test_trees(small_sizes)) {
    auto const& tree = named.tree;
    LevelSynchronousTreefix<typename TypeParam::memory_space> const bfs(space,
                                                                        copy_tree(space, tree));
    HostVector<Index> ones("test::ones", tree.size());
    Kokkos::deep_copy(ones, 1);
    auto const depths = sequential_treefix(Treefix::rootfix, tree, Sum<Index>{}, ones);
    std::vector<Index> expected(tree.height() + 2, 0); // expected[d + 1]: vertices at depth d
    for (Index v = 0; v < tree.size(); ++v)
      ++expected[depths(v)];
    std::partial_sum(expected.begin(), expected.end(), expected.begin());
    EXPECT_EQ(bfs.level_begin(), expected) << named.name;
  }
}

// The level-synchronous leaffix of a tree with few children per vertex adds,
// level after level from the deepest, each parent's children left to right
// and then that sum to the parent's weight: a fixed order, so float results
// equal this host replay bit for bit on every backend and thread count.
TYPED_TEST(TreefixMethods, LevelSynchronousLeaffixHasAFixedOrderOnBoundedDegreeTrees) {
  TypeParam space;
  for (TreeShape shape : {TreeShape::random_recursive, TreeShape::kary, TreeShape::grid,
                          TreeShape::random_geometric, TreeShape::caterpillar}) {
    HostTree const tree(Host{}, generate_tree(Host{}, shape, 5000, 11, 3));
    Index const n = tree.size();
    std::mt19937_64 random(n);
    std::uniform_real_distribution<float> draw(-1, 1);
    HostVector<float> weights("test::weights", n);
    for (Index v = 0; v < n; ++v)
      weights(v) = draw(random);
    HostVector<Index> ones("test::ones", n);
    Kokkos::deep_copy(ones, 1);
    auto const depth = sequential_treefix(Treefix::rootfix, tree, Sum<Index>{}, ones); // + 1
    std::vector<std::vector<Index>> children(n);
    std::vector<std::vector<Index>> level(tree.height() + 1);
    for (Index v = 0; v < n; ++v) {
      level[depth(v) - 1].push_back(v);
      if (v != tree.root())
        children[tree.parents()(v)].push_back(v);
    }
    std::size_t most_children = 0;
    for (auto const& siblings : children)
      most_children = std::max(most_children, siblings.size());
    ASSERT_LE(most_children, 64u) << to_string(shape) << ": not a bounded-degree tree";
    std::vector<float> expected(weights.data(), weights.data() + n);
    for (Index d = tree.height() - 1; d >= 0; --d)
      for (Index parent : level[d])
        if (!children[parent].empty()) {
          float sum = expected[children[parent][0]];
          for (std::size_t c = 1; c < children[parent].size(); ++c)
            sum += expected[children[parent][c]];
          expected[parent] += sum;
        }
    LevelSynchronousTreefix<typename TypeParam::memory_space> bfs(space, copy_tree(space, tree));
    Kokkos::View<float*, typename TypeParam::memory_space> results("test::results", n);
    bfs.leaffix(space, Sum<float>{}, Kokkos::create_mirror_view_and_copy(space, weights), results);
    auto const host_results = to_host(results);
    for (Index v = 0; v < n; ++v)
      ASSERT_EQ(host_results(v), expected[v]) << to_string(shape) << ", vertex " << v;
  }
}

TYPED_TEST(TreefixMethods, RejectMismatchedViews) {
  TypeParam space;
  HostTree const tree(Host{}, generate_tree(Host{}, TreeShape::star, 10, 1));
  EulerTourTreefix<typename TypeParam::memory_space> euler(space, copy_tree(space, tree));
  LevelSynchronousTreefix<typename TypeParam::memory_space> bfs(space, copy_tree(space, tree));
  Kokkos::View<int*, typename TypeParam::memory_space> ten("test::ten", 10), nine("test::nine", 9);
  EXPECT_THROW(euler.rootfix(space, Sum<int>{}, nine, ten), std::invalid_argument);
  EXPECT_THROW(bfs.leaffix(space, Sum<int>{}, ten, nine), std::invalid_argument);
}

} // namespace
