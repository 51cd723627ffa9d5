// Distributed searches (distributed/distributed_search.hpp) on every backend,
// run by ctest on 3 ranks: the Morton partition holds every reference row
// once, and each rank's answers for its block of the queries equal brute
// force over all the reference points (ties by row) for kNN on kd, ball and
// vp trees (with and without self-exclusion), PC and radius lists, for every
// strategy on the BVH. The inputs are those of the single-tree tests: one point
// (ranks without points), a leaf's worth, duplicates, identical points.
#include "execution_spaces.hpp"
#include "neighbor_checks.hpp"
#include "test_inputs.hpp"

#include <treetrav/distributed/distributed_search.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace treetrav {
namespace {

using test::HostPoints;

// Rows [block.begin, block.end) of `points`.
HostPoints rows_of(HostPoints const& points, distributed::Block block) {
  HostPoints out = allocate_points<Kokkos::HostSpace>("test::block", Index(block.end - block.begin),
                                                      points.dimension(), points.has_ids());
  for (Index i = 0; i < out.size(); ++i) {
    for (int k = 0; k < points.dimension(); ++k)
      out.coordinates(i, k) = points.coordinates(Index(block.begin) + i, k);
    if (points.has_ids())
      out.ids(i) = points.ids(Index(block.begin) + i);
  }
  return out;
}

TEST(MortonPartition, HoldsEveryRowOnceInIncreasingOrderWithBalancedPieces) {
  distributed::Communicator const world;
  for (auto const& c : test::search_cases()) {
    auto const local = distributed::morton_partition(c.reference, world.rank(), world.size());
    auto const block = distributed::block_of(c.reference.size(), world.rank(), world.size());
    EXPECT_EQ(local.global_index.size(), block.end - block.begin) << c.name;
    EXPECT_TRUE(std::is_sorted(local.global_index.begin(), local.global_index.end())) << c.name;
    for (Index i = 0; i < local.points.size(); ++i)
      for (int k = 0; k < c.reference.dimension(); ++k)
        ASSERT_EQ(local.points.coordinates(i, k), c.reference.coordinates(local.global_index[i], k))
            << c.name;
    auto all = distributed::gather(world, local.global_index);
    if (world.rank() == 0) {
      std::sort(all.begin(), all.end());
      std::vector<Index> rows(c.reference.size());
      std::iota(rows.begin(), rows.end(), 0);
      EXPECT_EQ(all, rows) << c.name;
    }
  }
}

// Every rank reading its own rows (uneven: rank r of p reads rows
// [n r^2 / p^2, n (r+1)^2 / p^2), the first maybe none) and sorting them
// among the ranks gets the piece, coordinates and ids of the whole set's
// partition, exactly.
TEST(MortonPartition, CollectiveEqualsTheWholeSetsPartition) {
  distributed::Communicator const world;
  auto cases = test::search_cases();
  auto with_ids = cases.front();
  with_ids.name += "-with-ids";
  with_ids.reference = allocate_points<Kokkos::HostSpace>(
      "test::with_ids", cases.front().reference.size(), cases.front().reference.dimension(), true);
  for (Index i = 0; i < with_ids.reference.size(); ++i) {
    for (int k = 0; k < with_ids.reference.dimension(); ++k)
      with_ids.reference.coordinates(i, k) = cases.front().reference.coordinates(i, k);
    with_ids.reference.ids(i) = 1000 + 7 * i;
  }
  cases.push_back(with_ids);
  for (auto const& c : cases) {
    auto const expected = distributed::morton_partition(c.reference, world.rank(), world.size());
    std::size_t const n = c.reference.size(), p = world.size(), r = world.rank();
    distributed::Block const mine{n * r * r / (p * p), n * (r + 1) * (r + 1) / (p * p)};
    auto const got = distributed::morton_partition(world, rows_of(c.reference, mine), Index(mine.begin));
    ASSERT_EQ(got.global_index, expected.global_index) << c.name;
    ASSERT_EQ(got.points.size(), expected.points.size()) << c.name;
    ASSERT_EQ(got.points.has_ids(), c.reference.has_ids()) << c.name;
    for (Index i = 0; i < got.points.size(); ++i) {
      for (int k = 0; k < c.reference.dimension(); ++k)
        ASSERT_EQ(got.points.coordinates(i, k), expected.points.coordinates(i, k)) << c.name;
      if (c.reference.has_ids())
        ASSERT_EQ(got.points.ids(i), expected.points.ids(i)) << c.name;
    }
  }
}

template <class Space>
struct Distributed : ::testing::Test {};
TYPED_TEST_SUITE(Distributed, test::ExecutionSpaces, test::SpaceName);

// A query goes to rank r when this hash says so (about one rank in three,
// none for some queries, all for others).
struct SomeRanks {
  KOKKOS_FUNCTION bool operator()(Index q, int r) const {
    std::uint32_t h = std::uint32_t(q) * 2654435761u ^ std::uint32_t(r) * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return q % 11 == 0 || (q % 7 != 0 && h % 3 == 0);
  }
};

// route() lists each rank's queries in increasing order, as asking every
// query about every rank would, for rank counts within, at and past a word
// of bits.
TYPED_TEST(Distributed, RoutesListEachRanksQueriesInOrder) {
  TypeParam space;
  for (int ranks : {1, 3, 64, 65, 130})
    for (Index m : {0, 1, 1000}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(m) + " queries");
      auto const routes = distributed::detail::route(space, m, ranks, SomeRanks{});
      auto const query = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, routes.query);
      ASSERT_EQ(routes.count.size(), std::size_t(ranks));
      ASSERT_EQ(routes.offset.size(), std::size_t(ranks + 1));
      EXPECT_EQ(routes.offset[0], 0);
      std::size_t slot = 0;
      for (int r = 0; r < ranks; ++r) {
        std::vector<Index> expected, got;
        for (Index q = 0; q < m; ++q)
          if (SomeRanks{}(q, r))
            expected.push_back(q);
        ASSERT_EQ(routes.offset[r], int(slot));
        for (int i = 0; i < routes.count[r]; ++i)
          got.push_back(query(slot++));
        EXPECT_EQ(got, expected) << "rank " << r;
      }
      EXPECT_EQ(routes.offset[ranks], int(slot));
      EXPECT_EQ(query.extent(0), slot);
    }
}

// This rank's tree over its piece of the case's reference points.
template <class Tree, class Space>
distributed::DistributedTree<Tree> partitioned_tree(Space const& space, test::SearchCase const& c) {
  distributed::Communicator const world;
  return {space, world, distributed::morton_partition(c.reference, world.rank(), world.size()),
          c.leaf_size};
}

template <class Tree, class Space, class Strategy>
void check_neighbors(Space const& space, test::SearchCase const& c, int k, bool self,
                     Strategy strategy) {
  if (k > c.reference.size() - (self ? 1 : 0))
    return;
  distributed::Communicator const world;
  HostPoints const& queries = self ? c.reference : c.queries;
  auto const block = distributed::block_of(queries.size(), world.rank(), world.size());
  auto const tree = partitioned_tree<Tree>(space, c);
  auto const expected = test::brute_force_neighbors(c.reference, queries, k, self);
  auto const got = distributed::find_neighbors(
      space, tree, rows_of(queries, block), NeighborOptions{k, self}, strategy, Index(block.begin));
  test::expect_equal_to_brute_force(got, expected,
                                    c.name + " " + Tree::name + " k=" + std::to_string(k) +
                                        (self ? " self " : " ") + test::strategy_name(strategy),
                                    block.begin);
}

TYPED_TEST(Distributed, NeighborsEqualBruteForce) {
  using Memory = typename TypeParam::memory_space;
  TypeParam space;
  for (auto const& whole : test::search_cases())
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      test::for_each_strategy<TypeParam>(
          [&](auto strategy) { check_neighbors<Bvh<Memory>>(space, c, 8, self, strategy); });
      check_neighbors<Bvh<Memory>>(space, c, 1, self, Autoropes{});
      check_neighbors<VpTree<Memory>>(space, c, 1, self, Autoropes{});
      check_neighbors<BallTree<Memory>>(space, c, 20, self, Autoropes{});
    }
}

TYPED_TEST(Distributed, PointCorrelationEqualsBruteForce) {
  using Memory = typename TypeParam::memory_space;
  TypeParam space;
  distributed::Communicator const world;
  for (auto const& whole : test::search_cases()) {
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      auto const tree = partitioned_tree<Bvh<Memory>>(space, c);
      HostPoints const& queries = self ? c.reference : c.queries;
      auto const block = distributed::block_of(queries.size(), world.rank(), world.size());
      for (Coordinate radius : {c.radius, 2 * c.radius}) {
        auto const expected = test::brute_force_counts(c.reference, queries, radius, self);
        test::for_each_strategy<TypeParam>([&](auto strategy) {
          auto const counts = distributed::count_within(space, tree, rows_of(queries, block),
                                                        RangeCountOptions{radius, self}, strategy);
          int mismatches = 0;
          for (Index q = 0; q < counts.extent_int(0); ++q)
            mismatches += counts(q) != expected[block.begin + q];
          EXPECT_EQ(mismatches, 0) << c.name << " r=" << radius << (self ? " self " : " ")
                                   << test::strategy_name(strategy);
        });
      }
    }
  }
}


TYPED_TEST(Distributed, RadiusListsEqualBruteForce) {
  using Memory = typename TypeParam::memory_space;
  TypeParam space;
  distributed::Communicator const world;
  for (auto const& whole : test::search_cases()) {
    for (bool self : {false, true}) {
      auto const c = test::searched_case(whole, self);
      auto const tree = partitioned_tree<Bvh<Memory>>(space, c);
      HostPoints const& queries = self ? c.reference : c.queries;
      auto const block = distributed::block_of(queries.size(), world.rank(), world.size());
      auto const expected = test::brute_force_lists(c.reference, queries, 2 * c.radius, self);
      // This rank's block of the expected lists, its offsets from its first entry.
      std::int64_t const first = expected.offsets[block.begin], last = expected.offsets[block.end];
      std::vector<std::int64_t> offsets;
      for (std::size_t q = block.begin; q <= block.end; ++q)
        offsets.push_back(expected.offsets[q] - first);
      std::vector<Index> const indices(expected.indices.begin() + first, expected.indices.begin() + last);
      std::vector<Coordinate> const distances(expected.distances.begin() + first,
                                              expected.distances.begin() + last);
      test::for_each_strategy<TypeParam>([&](auto strategy) {
        for (QueryOrder order : {QueryOrder::none, QueryOrder::sfc}) {
          RadiusSearchOptions const options{{2 * c.radius, self, order}};
          auto const lists = distributed::find_within(space, tree, rows_of(queries, block), options,
                                                      strategy, Index(block.begin));
          std::string const what = c.name + (self ? " self " : " ") + test::strategy_name(strategy) +
                                   (order == QueryOrder::sfc ? " sorted" : "");
          ASSERT_EQ(std::vector<std::int64_t>(lists.offsets.data(),
                                              lists.offsets.data() + lists.offsets.extent(0)),
                    offsets)
              << what;
          EXPECT_EQ(std::vector<Index>(lists.indices.data(), lists.indices.data() + lists.indices.extent(0)),
                    indices)
              << what;
          EXPECT_EQ(std::vector<Coordinate>(lists.distances.data(),
                                            lists.distances.data() + lists.distances.extent(0)),
                    distances)
              << what;
        }
      });
    }
  }
}

} // namespace
} // namespace treetrav

// MPI around Kokkos around the tests (every rank reports what it checked).
int main(int argc, char** argv) {
  treetrav::distributed::Environment mpi(argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
