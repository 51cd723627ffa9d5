// One query suite over every tree type and strategy, with brute force as the
// reference: NN, kNN (BVH), VP (vantage-point tree), BT (ball tree), PC.
#include "execution_spaces.hpp"
#include "neighbor_checks.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/batch.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

namespace {

using namespace treetrav;
using test::HostPoints;

template <class Space>
class SearchApps : public ::testing::Test {};
TYPED_TEST_SUITE(SearchApps, test::ExecutionSpaces, test::SpaceName);

template <class Space, class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

template <class Tree, class Space>
void check_neighbors(Space const& space, test::SearchCase const& c, int k, bool self) {
  if (k > c.reference.size() - (self ? 1 : 0))
    return;
  HostPoints const& queries = self ? c.reference : c.queries;
  auto expected = test::brute_force_neighbors(c.reference, queries, k, self);
  Tree tree(space, c.reference, c.leaf_size);
  auto device_queries = copy_points(space, queries, "test::queries");
  test::for_each_strategy<Space>([&](auto strategy) {
    auto results = find_neighbors(space, tree, device_queries, NeighborOptions{k, self}, strategy);
    test::expect_equal_to_brute_force(results, expected,
                                c.name + " " + Tree::name + "-tree k=" + std::to_string(k) +
                                    (self ? " self " : " ") + test::strategy_name(strategy));
  });
}

TYPED_TEST(SearchApps, NearestNeighborsEqualBruteForce) {
  TypeParam space;
  for (auto const& whole : test::search_cases())
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      check_neighbors<Bvh<typename TypeParam::memory_space>>(space, c, 1, self); // NN
      check_neighbors<VpTree<typename TypeParam::memory_space>>(space, c, 1, self); // VP
      for (int k : {8, 10, 20}) { // capacities 8 and 10 exactly; 20 in 32 (autoropes)
        check_neighbors<Bvh<typename TypeParam::memory_space>>(space, c, k, self);   // kNN
        check_neighbors<BallTree<typename TypeParam::memory_space>>(space, c, k, self); // BT
      }
    }
}

TYPED_TEST(SearchApps, PointCorrelationEqualsBruteForce) {
  TypeParam space;
  for (auto const& whole : test::search_cases())
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      HostPoints const& queries = self ? c.reference : c.queries;
      for (Coordinate radius : {c.radius, 2 * c.radius}) {
        auto expected = test::brute_force_counts(c.reference, queries, radius, self);
        Bvh<typename TypeParam::memory_space> tree(space, c.reference, c.leaf_size);
        auto device_queries = copy_points(space, queries, "test::queries");
        test::for_each_strategy<TypeParam>([&](auto strategy) {
          auto counts = Kokkos::create_mirror_view_and_copy(
              Kokkos::HostSpace{},
              count_within(space, tree, device_queries, RangeCountOptions{radius, self}, strategy));
          int mismatches = 0;
          for (Index q = 0; q < queries.size(); ++q)
            mismatches += counts(q) != expected[q];
          EXPECT_EQ(mismatches, 0) << c.name << " r=" << radius << (self ? " self " : " ")
                                   << test::strategy_name(strategy);
        });
      }
    }
}

// Radius lists equal brute force exactly, in its order (nearest first, ties
// by index), whether the lists fit the first walk's slots or not.
TYPED_TEST(SearchApps, RadiusListsEqualBruteForce) {
  TypeParam space;
  for (auto const& whole : test::search_cases())
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      HostPoints const& queries = self ? c.reference : c.queries;
      auto const expected = test::brute_force_lists(c.reference, queries, 2 * c.radius, self);
      Bvh<typename TypeParam::memory_space> tree(space, c.reference, c.leaf_size);
      auto device_queries = copy_points(space, queries, "test::queries");
      test::for_each_strategy<TypeParam>([&](auto strategy) {
        // Slots for none, one or three neighbours in the first walk, in the
        // caller's order and sorted (each order with lists that overflow).
        for (auto [capacity, order] : {std::pair{Index(0), QueryOrder::none},
                                       std::pair{Index(1), QueryOrder::sfc},
                                       std::pair{Index(3), QueryOrder::none},
                                       std::pair{Index(3), QueryOrder::sfc}}) {
          RadiusSearchOptions options{{2 * c.radius, self, order}, capacity};
          auto lists = find_within(space, tree, device_queries, options, strategy);
          std::string const what =
              c.name + (self ? " self " : " ") + test::strategy_name(strategy) + " capacity " +
              std::to_string(capacity) + (order == QueryOrder::sfc ? " sorted" : "");
          auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.offsets);
          auto indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.indices);
          auto distances =
              Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.distances);
          ASSERT_EQ(std::vector<std::int64_t>(offsets.data(), offsets.data() + offsets.extent(0)),
                    expected.offsets)
              << what;
          EXPECT_EQ(std::vector<Index>(indices.data(), indices.data() + indices.extent(0)),
                    expected.indices)
              << what;
          EXPECT_EQ(
              std::vector<Coordinate>(distances.data(), distances.data() + distances.extent(0)),
              expected.distances)
              << what;
        }
      });
    }
}

// A batch in chunks (host queries moved a chunk at a time, results consumed
// on a host thread) gives the answers of one call, whatever the chunk size.
TYPED_TEST(SearchApps, ChunkedBatchesEqualOneCall) {
  TypeParam space;
  auto const c = test::search_cases()[2];  // clustered 7-D
  Bvh<typename TypeParam::memory_space> tree(space, c.reference, c.leaf_size);
  NeighborOptions const options{5, false, QueryOrder::sfc};
  auto whole = find_neighbors(space, tree, copy_points(space, c.queries, "test::queries"), options, Autoropes{});
  auto expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, whole.indices);
  for (Index chunk : {1, 37, 299, 300, 1000}) {
    EXPECT_EQ(chunk_size(space, c.queries.size(), BatchOptions{chunk}, 64), std::min(chunk, c.queries.size()));
    std::vector<Index> got(c.queries.size() * 5, -1);
    Index chunks = 0, last_done = 0;
    for_each_chunk(
        space, c.queries, chunk,
        [&](PointSet<typename TypeParam::memory_space> const& queries) {
          return Kokkos::create_mirror_view_and_copy(
              Kokkos::HostSpace{}, find_neighbors(space, tree, queries, options, Autoropes{}).indices);
        },
        [&](Index first, auto const& indices) {
          ++chunks;
          for (std::size_t q = 0; q < indices.extent(0); ++q)
            for (int j = 0; j < 5; ++j) got[(first + q) * 5 + j] = indices(q, j);
        },
        [&](Index done, Index total) {
          EXPECT_GT(done, last_done);
          EXPECT_EQ(total, c.queries.size());
          last_done = done;
        });
    EXPECT_EQ(chunks, (c.queries.size() + chunk - 1) / chunk) << chunk;
    EXPECT_EQ(last_done, c.queries.size());
    EXPECT_EQ(got, std::vector<Index>(expected.data(), expected.data() + expected.size())) << "chunk " << chunk;
  }
  EXPECT_THROW(chunk_size(space, 10, BatchOptions{-1}, 64), InputError);
}

TYPED_TEST(SearchApps, BadArgumentsAreInputErrors) {
  TypeParam space;
  auto reference = generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 50, 3, 1);
  auto queries2d =
      copy_points(space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 5, 2, 2), "q2");
  auto queries =
      copy_points(space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 5, 3, 2), "q3");
  Bvh<typename TypeParam::memory_space> tree(space, reference, 8);
  EXPECT_THROW(find_neighbors(space, tree, queries, NeighborOptions{0, false}, Autoropes{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, tree, queries, NeighborOptions{51, false}, Autoropes{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, tree, queries, NeighborOptions{50, true}, Autoropes{}),
               InputError);
  EXPECT_THROW(find_neighbors(space, tree, queries2d, NeighborOptions{1, false}, Autoropes{}),
               InputError);
  EXPECT_THROW(count_within(space, tree, queries, RangeCountOptions{0.0f, false}, Autoropes{}),
               InputError);
  EXPECT_THROW(count_within(space, tree, queries, RangeCountOptions{-1.0f, false}, Autoropes{}),
               InputError);
  EXPECT_THROW(
      count_within(space, tree, queries, RangeCountOptions{std::nanf(""), false}, Autoropes{}),
      InputError);
  HostPoints empty(HostPoints::coordinates_view("empty", 0, 3));
  EXPECT_THROW((Bvh<typename TypeParam::memory_space>(space, empty, 8)), InputError);
  EXPECT_THROW((Bvh<typename TypeParam::memory_space>(space, reference, 0)), InputError);
}

} // namespace
