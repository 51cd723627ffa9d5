// Brute-force search (GEMM screening + exact re-ranking) against the oracle
// and the trees: identical indices, distances and counts on the search inputs,
// on near-ties built to defeat a screening without a rounding bound, across
// tile shapes, and at 64, 128 and 784 dimensions.
#include "execution_spaces.hpp"
#include "neighbor_checks.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/trees/bvh.hpp>

#include <algorithm>
#include <numeric>
#include <random>

namespace {

using namespace treetrav;
using test::HostPoints;

template <class Space>
class BruteForceSearch : public ::testing::Test {};
TYPED_TEST_SUITE(BruteForceSearch, test::ExecutionSpaces, test::SpaceName);

std::string describe(BruteForce const& strategy) {
  return strategy.tile_bytes == 0 ? "automatic tiles"
                                  : std::to_string(strategy.tile_bytes) + "-byte tiles";
}

template <class Space>
void expect_neighbors_exact(Space const& space, std::string const& name,
                            HostPoints const& reference, HostPoints const& query_set, int k,
                            bool self, BruteForce strategy) {
  if (k > reference.size() - (self ? 1 : 0))
    return;
  HostPoints const& queries = self ? reference : query_set;
  auto const expected = test::brute_force_neighbors(reference, queries, k, self);
  auto const device_reference = copy_points(space, reference, "test::reference");
  auto const device_queries = copy_points(space, queries, "test::queries");
  auto const results =
      find_neighbors(space, device_reference, device_queries, NeighborOptions{k, self}, strategy);
  std::string const what =
      name + " k=" + std::to_string(k) + (self ? " self, " : ", ") + describe(strategy);
  test::expect_equal_to_brute_force(results, expected, what);
}

template <class Space>
void expect_counts_exact(Space const& space, std::string const& name, HostPoints const& reference,
                         HostPoints const& query_set, Coordinate radius, bool self,
                         BruteForce strategy) {
  HostPoints const& queries = self ? reference : query_set;
  auto const expected = test::brute_force_counts(reference, queries, radius, self);
  auto const counts = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, count_within(space, copy_points(space, reference, "test::reference"),
                                        copy_points(space, queries, "test::queries"),
                                        RangeCountOptions{radius, self}, strategy));
  int mismatches = 0;
  for (Index q = 0; q < queries.size(); ++q)
    mismatches += counts(q) != expected[q];
  EXPECT_EQ(mismatches, 0) << name << " r=" << radius << (self ? " self, " : ", ")
                           << describe(strategy);
}

TYPED_TEST(BruteForceSearch, NeighborsEqualOracleOnTheSearchInputs) {
  TypeParam space;
  for (auto const& c : test::search_cases())
    for (bool self : {false, true})
      for (int k : {1, 8, 20})
        expect_neighbors_exact(space, c.name, c.reference, c.queries, k, self, BruteForce{});
}

TYPED_TEST(BruteForceSearch, CountsEqualOracleOnTheSearchInputs) {
  TypeParam space;
  for (auto const& c : test::search_cases())
    for (bool self : {false, true})
      for (Coordinate radius : {c.radius, 2 * c.radius})
        expect_counts_exact(space, c.name, c.reference, c.queries, radius, self, BruteForce{});
}

// Many ragged query and reference tiles, several threads per query, and
// several query tiles sharing the per-query state: the same answers.
TYPED_TEST(BruteForceSearch, SmallTilesGiveTheSameAnswers) {
  TypeParam space;
  BruteForceStatistics statistics;
  BruteForce const small{std::size_t(64) << 10, 3, &statistics};
  for (auto const& c : test::search_cases()) {
    if (c.name != "uniform3-1200" && c.name != "clustered7-1500")
      continue;
    statistics = {};
    expect_neighbors_exact(space, c.name, c.reference, c.queries, 8, false, small);
    EXPECT_LT(statistics.plan_queries, c.queries.size()) << c.name;
    EXPECT_LT(statistics.plan_references, c.reference.size()) << c.name;
    EXPECT_EQ(statistics.segments, 3);
    expect_counts_exact(space, c.name, c.reference, c.queries, c.radius, false, small);
  }
}

// The trees answer exactly as brute force does, on the same device data, in
// input and in Morton order.
TYPED_TEST(BruteForceSearch, EqualsTheTreeStrategies) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& c : test::search_cases()) {
    Bvh<Memory> tree(space, c.reference, c.leaf_size);
    auto const reference = copy_points(space, c.reference, "test::reference");
    auto const queries = copy_points(space, c.queries, "test::queries");
    int const k = std::min<Index>(8, c.reference.size());
    auto const brute =
        find_neighbors(space, reference, queries, NeighborOptions{k, false}, BruteForce{});
    auto const brute_indices =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, brute.indices);
    auto const brute_distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, brute.distances);
    auto const brute_counts = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace{},
        count_within(space, reference, queries, RangeCountOptions{c.radius, false}, BruteForce{}));
    for (QueryOrder order : {QueryOrder::none, QueryOrder::sfc})
      test::for_each_strategy<TypeParam>([&](auto strategy) {
        auto const tree_results =
            find_neighbors(space, tree, queries, NeighborOptions{k, false, order}, strategy);
        auto const indices =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree_results.indices);
        auto const distances =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree_results.distances);
        auto const counts = Kokkos::create_mirror_view_and_copy(
            Kokkos::HostSpace{}, count_within(space, tree, queries,
                                              RangeCountOptions{c.radius, false, order}, strategy));
        int mismatches = 0;
        for (Index q = 0; q < queries.size(); ++q) {
          mismatches += counts(q) != brute_counts(q);
          for (int j = 0; j < k; ++j)
            mismatches +=
                indices(q, j) != brute_indices(q, j) || distances(q, j) != brute_distances(q, j);
        }
        EXPECT_EQ(mismatches, 0) << c.name << " " << test::strategy_name(strategy)
                                 << (order == QueryOrder::sfc ? " sfc" : "");
      });
  }
}

// With squared_distances (what distributed searches merge by), brute force
// reports the squared distances the trees report, bit for bit.
TYPED_TEST(BruteForceSearch, SquaredDistancesEqualTheTrees) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& c : test::search_cases()) {
    Bvh<Memory> tree(space, c.reference, c.leaf_size);
    auto const queries = copy_points(space, c.queries, "test::queries");
    NeighborOptions const options{std::min<Index>(8, c.reference.size()), false, QueryOrder::none,
                                  true};
    auto const brute = find_neighbors(space, copy_points(space, c.reference, "test::reference"),
                                      queries, options, BruteForce{});
    auto const walked = find_neighbors(space, tree, queries, options, Autoropes{});
    auto const brute_indices =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, brute.indices);
    auto const brute_distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, brute.distances);
    auto const indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, walked.indices);
    auto const distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, walked.distances);
    int mismatches = 0;
    for (Index q = 0; q < queries.size(); ++q)
      for (int j = 0; j < options.k; ++j)
        mismatches +=
            indices(q, j) != brute_indices(q, j) || distances(q, j) != brute_distances(q, j);
    EXPECT_EQ(mismatches, 0) << c.name;
  }
}

// Points around `centre` at offsets that are permutations (with signs) of one
// vector: their exact distances to the centre are equal, and in float they
// tie exactly (`step` a power of two) or differ by rounding only, far below
// the GEMM's rounding error. Far from the origin, which the shift by the
// reference mean must undo.
HostPoints permuted_shell(int dimension, Index n, double centre, double step, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<int> order(dimension);
  std::iota(order.begin(), order.end(), 1);
  HostPoints points = allocate_points<Kokkos::HostSpace>("test::shell", n, dimension);
  for (Index i = 0; i < n; ++i) {
    std::shuffle(order.begin(), order.end(), random);
    for (int k = 0; k < dimension; ++k) {
      double const sign = (random() & 1) ? 1.0 : -1.0;
      points.coordinates(i, k) = static_cast<Coordinate>(centre + sign * step * order[k]);
    }
  }
  return points;
}

HostPoints centres(int dimension, double centre, double jitter) {
  HostPoints points = allocate_points<Kokkos::HostSpace>("test::centres", 3, dimension);
  for (int k = 0; k < dimension; ++k) {
    points.coordinates(0, k) = static_cast<Coordinate>(centre);
    points.coordinates(1, k) = static_cast<Coordinate>(centre + (k == 0 ? jitter : 0.0));
    points.coordinates(2, k) = static_cast<Coordinate>(centre + jitter * (k % 3));
  }
  return points;
}

// How many queries' k nearest a plain GEMM screening would get wrong: ranking
// by |q|^2 + |r|^2 - 2 q.r in float, ties by index, with no rounding bound.
int queries_a_plain_gemm_ranking_gets_wrong(HostPoints const& reference, HostPoints const& queries,
                                            int k) {
  auto const exact = test::brute_force_neighbors(reference, queries, k, false);
  int wrong = 0;
  for (Index q = 0; q < queries.size(); ++q) {
    std::vector<std::pair<Coordinate, Index>> screened;
    for (Index i = 0; i < reference.size(); ++i) {
      Coordinate a = 0, b = 0, dot = 0;
      for (int c = 0; c < reference.dimension(); ++c) {
        a += queries.coordinates(q, c) * queries.coordinates(q, c);
        b += reference.coordinates(i, c) * reference.coordinates(i, c);
        dot += queries.coordinates(q, c) * reference.coordinates(i, c);
      }
      screened.emplace_back((a + b) - 2 * dot, i);
    }
    std::partial_sort(screened.begin(), screened.begin() + k, screened.end());
    for (int j = 0; j < k; ++j)
      if (screened[j].second != exact.indices[std::size_t(q) * k + j]) {
        ++wrong;
        break;
      }
  }
  return wrong;
}

TYPED_TEST(BruteForceSearch, NearTiesThatDefeatAPlainGemmScreening) {
  TypeParam space;
  for (int d : {7, 16, 128}) {
    for (double step : {1.0 / 64, 0.1}) { // exact ties, then ties up to rounding
      auto const reference = permuted_shell(d, 600, 300.0, step, 7 + d);
      auto const queries = centres(d, 300.0, step / 8);
      std::string const name = "shell d=" + std::to_string(d) + " step=" + std::to_string(step);
      ASSERT_GT(queries_a_plain_gemm_ranking_gets_wrong(reference, queries, 5), 0)
          << name << ": not a hard input";
      for (int k : {1, 5, 40})
        expect_neighbors_exact(space, name, reference, queries, k, false, BruteForce{});
      expect_neighbors_exact(space, name, reference, queries, 5, false,
                             BruteForce{std::size_t(64) << 10, 2});
      // The radius of the shell itself: every count decided by rounding.
      Coordinate const radius =
          static_cast<Coordinate>(std::sqrt(d * (d + 1) * (2 * d + 1) / 6.0) * step);
      expect_counts_exact(space, name, reference, queries, radius, false, BruteForce{});
    }
  }
}

// Many references tied within the bound overflow the per-query buffer: the
// query is searched again with a larger one, and the answer is still exact.
TYPED_TEST(BruteForceSearch, OverflowingCandidateBuffersAreSearchedAgain) {
  TypeParam space;
  auto const single =
      test::first_points(generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 1, 5, 3), 1);
  auto const reference = test::repeated(single, 300);
  auto const queries = generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 20, 5, 4);
  BruteForceStatistics statistics;
  expect_neighbors_exact(space, "identical-300", reference, queries, 3, false,
                         BruteForce{0, 0, &statistics});
  EXPECT_GE(statistics.rounds, 2);
  EXPECT_EQ(statistics.requeued, queries.size());
}

TYPED_TEST(BruteForceSearch, HighDimensionalSetsEqualTheOracleAndTheTrees) {
  TypeParam space;
  Kokkos::DefaultHostExecutionSpace host;
  for (int d : {max_tree_dimension, 64, 128, 784}) {
    auto const uniform = generators::uniform(host, 900, d, 20 + d);
    auto const uniform_queries = generators::uniform(host, 60, d, 21 + d);
    auto const clustered = generators::clustered(host, 900, d, 6, 0.05, 22 + d);
    auto const clustered_queries = generators::clustered(host, 60, d, 6, 0.05, 23 + d);
    for (auto const& [name, reference, queries] :
         {std::tuple{"uniform", uniform, uniform_queries},
          std::tuple{"clustered", clustered, clustered_queries}}) {
      std::string const label = std::string(name) + " d=" + std::to_string(d);
      for (int k : {1, 10})
        for (bool self : {false, true})
          expect_neighbors_exact(space, label, reference, queries, k, self, BruteForce{});
      // A radius that catches a few neighbours: the 5th nearest of query 0.
      auto const fifth = test::brute_force_neighbors(reference, queries, 5, false).distances[4];
      expect_counts_exact(space, label, reference, queries, fifth, false, BruteForce{});
      if (d <= max_tree_dimension) {
        Bvh<typename TypeParam::memory_space> tree(space, reference, 8);
        auto const expected = test::brute_force_neighbors(reference, queries, 10, false);
        auto const results =
            find_neighbors(space, tree, copy_points(space, queries, "test::queries"),
                           NeighborOptions{10, false}, Autoropes{});
        test::expect_equal_to_brute_force(results, expected, label + " bvh");
      }
    }
  }
}

TYPED_TEST(BruteForceSearch, BadArgumentsAreInputErrors) {
  TypeParam space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = copy_points(space, generators::uniform(host, 50, 3, 1), "r");
  auto queries2d = copy_points(space, generators::uniform(host, 5, 2, 2), "q2");
  auto queries = copy_points(space, generators::uniform(host, 5, 3, 2), "q3");
  EXPECT_THROW(find_neighbors(space, reference, queries, NeighborOptions{0, false}, BruteForce{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, reference, queries, NeighborOptions{51, false}, BruteForce{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, reference, queries, NeighborOptions{50, true}, BruteForce{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, reference, queries, NeighborOptions{max_neighbors + 1, false},
                              BruteForce{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, reference, queries2d, NeighborOptions{1, false}, BruteForce{}),
               InputError);
  EXPECT_THROW(
      count_within(space, reference, queries, RangeCountOptions{0.0f, false}, BruteForce{}),
      InputError);
  EXPECT_THROW(count_within(space, reference, queries, RangeCountOptions{std::nanf(""), false},
                            BruteForce{}),
               InputError);
  EXPECT_THROW(
      count_within(space, reference, queries2d, RangeCountOptions{0.5f, false}, BruteForce{}),
      InputError);
}

// No queries, or no reference points to count: empty or zero answers, no tile plan.
TYPED_TEST(BruteForceSearch, EmptySetsGiveEmptyAnswers) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = copy_points(space, generators::uniform(host, 50, 3, 1), "r");
  auto queries = copy_points(space, generators::uniform(host, 5, 3, 2), "q");
  auto const none = allocate_points<Memory>("none", 0, 3);
  EXPECT_EQ(find_neighbors(space, reference, none, NeighborOptions{4, false}, BruteForce{})
                .indices.extent(0),
            0u);
  EXPECT_EQ(
      count_within(space, reference, none, RangeCountOptions{0.5f, false}, BruteForce{}).extent(0),
      0u);
  auto const counts = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{},
      count_within(space, none, queries, RangeCountOptions{0.5f, false}, BruteForce{}));
  ASSERT_EQ(counts.extent(0), 5u);
  for (std::size_t q = 0; q < counts.extent(0); ++q)
    EXPECT_EQ(counts(q), 0);
}

// Trees stop at max_tree_dimension with an error that names the limit and
// the strategy that goes further.
TYPED_TEST(BruteForceSearch, TreesRefuseMoreDimensionsThanTheirLimit) {
  TypeParam space;
  auto const wide =
      generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 20, max_tree_dimension + 1, 5);
  try {
    Bvh<typename TypeParam::memory_space> tree(space, wide, 8);
    ADD_FAILURE() << "a BVH took " << wide.dimension() << " dimensions";
  } catch (InputError const& error) {
    std::string const message = error.what();
    EXPECT_NE(message.find(std::to_string(max_tree_dimension)), std::string::npos) << message;
    EXPECT_NE(message.find("the brute-force strategy (brute"), std::string::npos) << message;
  }
}

} // namespace
