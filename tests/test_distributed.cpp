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
#include <treetrav/distributed/nbody_domain.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <fmt/core.h>
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

// N bodies with rows 0..n-1: clumps with repeated positions (equal Morton
// codes: ties by row), costs from 0 to `heavy` (0: cost 1 as domain_of weighs it).
nbody::BodyStates some_bodies(std::size_t n, std::int64_t heavy) {
  io::Snapshot state = io::allocate_snapshot(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u;
    for (int k = 0; k < 3; ++k) {
      h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
      double const clump = double(i % 5) * (k == 0 ? 3.0 : 0.5);
      state.coordinates(i, k) = i % 4 == 0 ? clump : clump + double(h % 1000) * 1e-3;
      state.velocities(i, k) = double(h % 77) - 38;
    }
    state.masses(i) = 1.0 + double(i % 3);
    state.ids(i) = std::int64_t(5000 + 3 * i);
  }
  nbody::BodyStates all = nbody::bodies_of(state);
  for (std::size_t i = 0; i < n; ++i) {
    all.costs(i) = heavy == 0 ? 0 : Index((i * 7919) % std::size_t(heavy));
    all.bins(i) = std::int8_t(i % 3);
    for (int k = 0; k < 3; ++k)
      all.accelerations(i, k) = float(i) * 0.5f - float(k);
  }
  return all;
}

// The bodies of `all` whose rank by `holder` is `rank`, in a scrambled order.
nbody::BodyStates held_by(nbody::BodyStates const& all, int rank, int (*holder)(std::size_t, int), int ranks) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (holder(i, ranks) == rank)
      rows.push_back(i);
  std::reverse(rows.begin(), rows.end());
  io::Snapshot state = io::allocate_snapshot(rows.size());
  nbody::BodyStates held = nbody::bodies_of(state);
  if (all.domains.extent(0) == all.size()) {
    held.domains = decltype(held.domains)("test::domains", rows.size());
    held.domain_ranks = all.domain_ranks;
  }
  for (std::size_t j = 0; j < rows.size(); ++j) {
    std::size_t const i = rows[j];
    for (int k = 0; k < 3; ++k) {
      held.state.coordinates(j, k) = all.state.coordinates(i, k);
      held.state.velocities(j, k) = all.state.velocities(i, k);
      held.accelerations(j, k) = all.accelerations(i, k);
    }
    held.state.masses(j) = all.state.masses(i);
    held.state.ids(j) = all.state.ids(i);
    held.costs(j) = all.costs(i);
    held.bins(j) = all.bins(i);
    held.rows(j) = all.rows(i);
    if (held.domains.extent(0) != 0)
      held.domains(j) = all.domains(i);
  }
  return held;
}

void expect_same_bodies(nbody::BodyStates const& got, nbody::BodyStates const& expected, std::string const& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got.rows(i), expected.rows(i)) << what << " body " << i;
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(got.state.coordinates(i, k), expected.state.coordinates(i, k)) << what;
      ASSERT_EQ(got.state.velocities(i, k), expected.state.velocities(i, k)) << what;
      ASSERT_EQ(got.accelerations(i, k), expected.accelerations(i, k)) << what;
    }
    ASSERT_EQ(got.state.masses(i), expected.state.masses(i)) << what;
    ASSERT_EQ(got.state.ids(i), expected.state.ids(i)) << what;
    ASSERT_EQ(got.costs(i), expected.costs(i)) << what;
    ASSERT_EQ(got.bins(i), expected.bins(i)) << what;
  }
  EXPECT_EQ(got.domains.extent(0), 0u) << what;
}

// Ranks holding any split of the bodies (blocks of rows, a hash, all on the
// last rank) get exactly domain_of's pieces of all of them: by measured
// costs (none, light, one body outweighing the rest), with repeated
// positions, as few bodies as ranks; and the decomposition the bodies carry
// when it is for as many ranks.
TEST(NbodyPartition, EqualsTheOneProcessCutOfAllBodies) {
  distributed::Communicator const world;
  distributed::NbodyDomain const domain(world);
  int const p = world.size();
  int (*const holders[])(std::size_t, int) = {
      [](std::size_t i, int ranks) { return int(i * std::size_t(ranks) / 1000); },
      [](std::size_t i, int ranks) { return int((i * 2654435761u >> 7) % std::size_t(ranks)); },
      [](std::size_t, int ranks) { return ranks - 1; }};
  for (std::size_t n : {std::size_t(p), std::size_t(37), std::size_t(1000)})
    for (std::int64_t heavy : {0, 50, 100000}) {
      nbody::BodyStates all = some_bodies(n, heavy);
      if (heavy == 100000)
        all.costs(n / 2) = 1000000000;
      nbody::BodyStates const expected = nbody::domain_of(all, world.rank(), p);
      for (auto holder : holders) {
        std::string const what = fmt::format("n {} heavy {} holder {}", n, heavy, &holder - holders);
        expect_same_bodies(domain.partition(held_by(all, world.rank(), holder, p)), expected, what);
      }
      // A decomposition carried for these ranks is kept.
      all.domains = decltype(all.domains)("test::domains", n);
      all.domain_ranks = p;
      for (std::size_t i = 0; i < n; ++i)
        all.domains(i) = std::int32_t((i * 31) % std::size_t(p));
      nbody::BodyStates const kept = nbody::domain_of(all, world.rank(), p);
      expect_same_bodies(domain.partition(held_by(all, world.rank(), holders[1], p)), kept,
                         fmt::format("n {} carried", n));
    }
}

TEST(NbodyPartition, RepeatedIdsAcrossRanksAreFoundOnEveryRank) {
  distributed::Communicator const world;
  int const p = world.size(), r = world.rank();
  Kokkos::View<ParticleId*, Kokkos::HostSpace> ids("test::ids", 100);
  for (int i = 0; i < 100; ++i)
    ids(i) = ParticleId(i) * p + r;
  EXPECT_NO_THROW(distributed::require_unique_ids(world, ids, "test ids"));
  if (r == p - 1)
    ids(17) = 42 * p; // rank 0's id 42 * p (its row 42)
  if (p == 1)
    ids(18) = ids(3);
  try {
    distributed::require_unique_ids(world, ids, "test ids");
    ADD_FAILURE() << "a repeated id was not found";
  } catch (InputError const& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("test ids: particle id {} appears more than once", p == 1 ? 3 : 42 * p)),
              std::string::npos) << e.what();
  }
}

// The memory the searches' MPI is handed (the binary's --gpu-aware-mpi: the
// GPU cases then exchange device arrays as they are, not staged).
distributed::MpiMemory mpi_memory = distributed::MpiMemory::host;

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
// of bits; its arrays fresh, or one workspace's reused by every call, on
// every backend (as on a GPU).
TYPED_TEST(Distributed, RoutesListEachRanksQueriesInOrder) {
  TypeParam space;
  Workspace workspace;
  for (Workspace* kept : {static_cast<Workspace*>(nullptr), &workspace}) {
    for (int ranks : {1, 3, 64, 65, 130})
      for (Index m : {0, 1, 1000}) {
        SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(m) + " queries" +
                     (kept ? ", workspace" : ""));
        auto const routes = distributed::detail::route(
            space, m, ranks, SomeRanks{}, treetrav::detail::WorkspaceArrays<TypeParam>(space, kept));
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
}

// exchange() hands each rank what every rank sent it, in rank order, its
// own part included: rounds of other sizes through one workspace's arrays
// under one name (as a search's rounds reuse them) and through fresh ones,
// staged or not (the communicator's memory, the tests' --gpu-aware-mpi).
TYPED_TEST(Distributed, ExchangeDeliversEveryRanksValuesInRankOrder) {
  using MemorySpace = typename TypeParam::memory_space;
  TypeParam space;
  distributed::Communicator const world(MPI_COMM_WORLD, mpi_memory);
  int const p = world.size(), me = world.rank();
  // What rank `from` sends rank `to` in round `round`: (from + 2 to + round) % 4
  // values, 900 more in round 2 (the kept array grows, then serves a smaller round).
  auto const count = [](int from, int to, int round) {
    return (from + 2 * to + round) % 4 + (round == 2 ? 900 : 0);
  };
  auto const value = [](int from, int to, int j) { return std::int64_t(from) * 1000000 + to * 10000 + j; };
  Workspace workspace, staged;
  for (Workspace* kept : {static_cast<Workspace*>(nullptr), &workspace})
    for (int round : {0, 1, 2, 3}) {
      SCOPED_TRACE("round " + std::to_string(round) + (kept ? ", workspace" : ""));
      std::vector<int> send_counts(p);
      std::vector<std::int64_t> out;
      for (int r = 0; r < p; ++r) {
        send_counts[r] = count(me, r, round);
        for (int j = 0; j < send_counts[r]; ++j)
          out.push_back(value(me, r, j));
      }
      Kokkos::View<std::int64_t*, MemorySpace> send("test::send", out.size());
      Kokkos::deep_copy(send, Kokkos::View<std::int64_t const*, Kokkos::HostSpace>(out.data(), out.size()));
      std::vector<int> recv_counts;
      auto const received = distributed::detail::exchange(
          space, world, send, send_counts, recv_counts,
          staged.get<distributed::detail::ExchangeStaging<MemorySpace>>(),
          treetrav::detail::WorkspaceArrays<TypeParam>(space, kept), "test::received");
      auto const got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, received);
      std::vector<std::int64_t> expected;
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(recv_counts[r], count(r, me, round)) << "from rank " << r;
        for (int j = 0; j < count(r, me, round); ++j)
          expected.push_back(value(r, me, j));
      }
      EXPECT_EQ(std::vector<std::int64_t>(got.data(), got.data() + got.extent(0)), expected);
    }
}

// This rank's tree over its piece of the case's reference points.
template <class Tree, class Space>
distributed::DistributedTree<Tree> partitioned_tree(Space const& space, test::SearchCase const& c) {
  distributed::Communicator const world(MPI_COMM_WORLD, mpi_memory);
  return {space, world, distributed::morton_partition(c.reference, world.rank(), world.size()),
          c.leaf_size};
}

// (`slice`: queries a rank answers with one local search.)
template <class Tree, class Space, class Strategy>
void check_neighbors(Space const& space, test::SearchCase const& c, int k, bool self,
                     Strategy strategy, Index slice = distributed::detail::answer_slice) {
  if (k > c.reference.size() - (self ? 1 : 0))
    return;
  distributed::Communicator const world;
  HostPoints const& queries = self ? c.reference : c.queries;
  auto const block = distributed::block_of(queries.size(), world.rank(), world.size());
  auto const tree = partitioned_tree<Tree>(space, c);
  auto const expected = test::brute_force_neighbors(c.reference, queries, k, self);
  auto const got =
      slice == distributed::detail::answer_slice
          ? distributed::find_neighbors(space, tree, rows_of(queries, block), NeighborOptions{k, self}, strategy,
                                        Index(block.begin))
          : distributed::detail::find_neighbors_over_ranks(space, tree, rows_of(queries, block),
                                                           NeighborOptions{k, self}, Index(block.begin),
                                                           distributed::detail::local_neighbors(space, tree, strategy),
                                                           nullptr, slice);
  test::expect_equal_to_brute_force(got, expected,
                                    c.name + " " + Tree::name + " k=" + std::to_string(k) +
                                        (self ? " self " : " ") + test::strategy_name(strategy) +
                                        " slices of " + std::to_string(slice),
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
      // A rank's local searches over a few of the queries it received at a
      // time (the last slice shorter).
      check_neighbors<Bvh<Memory>>(space, c, 8, self, Autoropes{}, 7);
      check_neighbors<Bvh<Memory>>(space, c, 8, self, Autoropes{}, 64);
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
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--gpu-aware-mpi")
      treetrav::mpi_memory = treetrav::distributed::MpiMemory::device;
  return RUN_ALL_TESTS();
}
