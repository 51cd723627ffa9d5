// The hybrid schedulers always return a permutation, whatever the matrix, and
// group queries that behaved alike; the profile itself is checked through the
// application suites, which run every application under Hybrid.
#include "test_inputs.hpp"

#include <treetrav/schedule/hybrid.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/octree.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

namespace {

using namespace treetrav;

// A function, not a global: Kokkos 4 refuses an execution-space instance made
// before Kokkos::initialize (main's ScopeGuard).
Kokkos::DefaultHostExecutionSpace host() {
  return {};
}

SchedulingMatrix unguided(Index queries, int columns) {
  SchedulingMatrix m;
  m.columns = columns;
  m.reached = decltype(m.reached)("reached", queries, (columns + 31) / 32);
  return m;
}

SchedulingMatrix guided(Index queries, int columns, int length) {
  SchedulingMatrix m;
  m.columns = columns;
  m.sequence = decltype(m.sequence)("sequence", queries, length);
  return m;
}

void set(SchedulingMatrix& m, Index q, int column) {
  m.reached(q, column / 32) |= 1u << (column % 32);
}

void expect_permutation(std::vector<Index> const& order, Index n) {
  ASSERT_EQ(order.size(), std::size_t(n));
  std::set<Index> seen(order.begin(), order.end());
  EXPECT_EQ(seen.size(), std::size_t(n));
  if (n > 0) {
    EXPECT_EQ(*seen.begin(), 0);
    EXPECT_EQ(*seen.rbegin(), n - 1);
  }
}

TEST(SandpileSchedule, AllEmptyRowsKeepTheOriginalOrder) {
  auto m = unguided(100, 40);
  auto order = sandpile_schedule(host(), m);
  expect_permutation(order, 100);
  for (Index i = 0; i < 100; ++i)
    EXPECT_EQ(order[i], i);
}

TEST(SandpileSchedule, IdenticalRowsAndOneGiantBucket) {
  auto m = unguided(1000, 70);
  for (Index q = 0; q < 1000; ++q)
    set(m, q, 65); // everyone in one bucket
  auto order = sandpile_schedule(host(), m);
  expect_permutation(order, 1000);
  for (Index i = 0; i < 1000; ++i)
    EXPECT_EQ(order[i], i); // stable
}

TEST(SandpileSchedule, GroupsQueriesThatReachTheSameColumns) {
  // Queries alternate between two behaviours; the schedule must make each
  // behaviour one contiguous run (the paper's DHAEBCGF example in spirit).
  auto m = unguided(64, 8);
  for (Index q = 0; q < 64; ++q) {
    set(m, q, q % 2 == 0 ? 1 : 5);
    set(m, q, q % 2 == 0 ? 2 : 6);
  }
  auto order = sandpile_schedule(host(), m);
  expect_permutation(order, 64);
  int changes = 0;
  for (Index i = 1; i < 64; ++i)
    changes += order[i] % 2 != order[i - 1] % 2;
  EXPECT_EQ(changes, 1);
}

// Figure 7 literally: one stable partition-join pass per column.
std::vector<Index> partition_join_reference(SchedulingMatrix const& m) {
  std::vector<Index> sandpile(m.reached.extent(0));
  std::iota(sandpile.begin(), sandpile.end(), 0);
  for (int c = 0; c < m.columns; ++c)
    std::stable_partition(sandpile.begin(), sandpile.end(),
                          [&](Index q) { return (m.reached(q, c / 32) >> (c % 32) & 1u) != 0; });
  return sandpile;
}

TEST(SandpileSchedule, EqualsColumnByColumnPartitionJoin) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 40; ++trial) {
    Index const n = 1 + random() % 400;
    int const columns = random() % 90;
    auto m = unguided(n, columns);
    for (Index q = 0; q < n; ++q)
      for (int c = 0; c < columns; ++c)
        if (random() % 3 == 0)
          set(m, q, c);
    ASSERT_EQ(sandpile_schedule(host(), m), partition_join_reference(m)) << "trial " << trial;
  }
}

TEST(SandpileSchedule, EqualsPartitionJoinOnLargeSparseProfiles) {
  // Many queries over a thousand columns, a few reached each and many rows
  // repeated: the shape of a real profile, where segments go through the
  // counting sort and then the comparison sort as they shrink.
  std::mt19937 random(11);
  Index const n = 20000;
  int const columns = 1024;
  auto m = unguided(n, columns);
  for (Index q = 0; q < n; ++q) {
    int const behaviour = random() % 300;
    for (int i = 0; i < 1 + behaviour % 5; ++i)
      set(m, q, (behaviour * 37 + i * 101 + (random() % 4 == 0)) % columns);
  }
  ASSERT_EQ(sandpile_schedule(host(), m), partition_join_reference(m));
}

TEST(SandpileSchedule, EqualsPartitionJoinOnLongSharedPrefixes) {
  // Rows that agree on many of their highest columns (bodies deep inside one
  // octree cell) and differ only far below: the ordering of ties must go on
  // past any fixed number of leading columns.
  std::mt19937 random(3);
  Index const n = 3000;
  int const columns = 300;
  auto m = unguided(n, columns);
  for (Index q = 0; q < n; ++q) {
    int const group = random() % 4;
    for (int c = columns - 1; c > columns - 1 - 10 * (group + 1); c -= 1 + group)
      set(m, q, c);
    for (int c = 0; c < 150; ++c)
      if (random() % 5 == 0)
        set(m, q, c);
    if (q % 7 == 0)
      m.reached(q, 0) = 0; // some rows end early
    if (q % 5 == 0)        // and a fifth are one same row (columns < 288 only)
      for (int w = 0; w < 9; ++w)
        m.reached(q, w) = w == 2 ? 0u : 0x9249249u;
  }
  ASSERT_EQ(sandpile_schedule(host(), m), partition_join_reference(m));
}

TEST(SandpileSchedule, NoQueriesAndNoColumns) {
  EXPECT_TRUE(sandpile_schedule(host(), unguided(0, 5)).empty());
  expect_permutation(sandpile_schedule(host(), unguided(10, 0)), 10);
}

// Figure 9's intent, literally: bucket by the first visit (ended sequences
// first), then each bucket over `cutoff` by the next visit, recursively.
void bucket_reference(SchedulingMatrix const& m, int cutoff, std::vector<Index>& queries,
                      int step) {
  if (queries.size() <= std::size_t(cutoff) || step >= int(m.sequence.extent(1)))
    return;
  std::vector<std::vector<Index>> buckets(m.columns + 1);
  for (Index q : queries)
    buckets[m.sequence(q, step)].push_back(q);
  queries.clear();
  for (int column = 0; column <= m.columns; ++column) {
    if (column != 0)
      bucket_reference(m, cutoff, buckets[column], step + 1);
    queries.insert(queries.end(), buckets[column].begin(), buckets[column].end());
  }
}

TEST(GuidedSchedule, RowsOfDifferentLengthsAndEmptyRows) {
  auto m = guided(500, 16, 6);
  for (Index q = 0; q < 500; ++q) {
    int const length = q % 7; // 0..6 visits, some rows empty
    for (int i = 0; i < length; ++i)
      m.sequence(q, i) = 1 + (q * 31 + i * 7) % 16;
  }
  auto order = guided_schedule(host(), m, 4);
  expect_permutation(order, 500);
  // Empty rows (sequence ended at once) come first, in query order.
  for (Index i = 0; i < 72; ++i)
    EXPECT_EQ(order[i] % 7, 0) << i;
  std::vector<Index> expected(500);
  std::iota(expected.begin(), expected.end(), 0);
  bucket_reference(m, 4, expected, 0);
  EXPECT_EQ(order, expected);
}

TEST(GuidedSchedule, BucketsByFirstVisitedColumn) {
  auto m = guided(300, 3, 4);
  for (Index q = 0; q < 300; ++q)
    m.sequence(q, 0) = 1 + (q * 7) % 3;
  auto order = guided_schedule(host(), m, 32);
  expect_permutation(order, 300);
  // Three buckets, in column order, each contiguous.
  for (Index i = 0; i < 300; ++i)
    EXPECT_EQ(m.sequence(order[i], 0), 1 + i / 100) << i;
}

TEST(GuidedSchedule, EqualsRecursiveBucketing) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 30; ++trial) {
    Index const n = 1 + random() % 3000;
    int const columns = 1 + random() % 1100, length = 1 + random() % 16, cutoff = 1 + random() % 40;
    int const behaviours = 1 + random() % 200;
    auto m = guided(n, columns, length);
    for (Index q = 0; q < n; ++q) {
      int const behaviour = random() % behaviours;
      int const visits = behaviour % (length + 1);
      for (int i = 0; i < visits; ++i)
        m.sequence(q, i) = 1 + (behaviour * 13 + i * (1 + random() % 2)) % columns;
    }
    std::vector<Index> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    bucket_reference(m, cutoff, expected, 0);
    ASSERT_EQ(guided_schedule(host(), m, cutoff), expected) << "trial " << trial;
  }
}

TEST(GuidedSchedule, RecursesUntilBucketsFitAWarp) {
  auto m = guided(256, 4, 3);
  for (Index q = 0; q < 256; ++q) {
    m.sequence(q, 0) = 1;         // one giant first bucket
    m.sequence(q, 1) = 1 + q % 4; // split by the second visit
    m.sequence(q, 2) = 1 + q / 64;
  }
  auto order = guided_schedule(host(), m, 32);
  expect_permutation(order, 256);
  for (Index i = 1; i < 256; ++i)
    EXPECT_LE(m.sequence(order[i - 1], 1), m.sequence(order[i], 1)) << i;
  // The identical-row case: all rows equal, all steps used, still a permutation.
  auto same = guided(100, 2, 2);
  for (Index q = 0; q < 100; ++q)
    same.sequence(q, 0) = same.sequence(q, 1) = 2;
  expect_permutation(guided_schedule(host(), same, 8), 100);
}

// The expected column map, recursively: the leaves of the top `depth` levels
// (nodes at that depth and shallower leaves) numbered in pre-order.
template <class Topology>
void number_top_leaves(Topology const& topology, Index node, int depth, std::vector<Index>& column,
                       int& columns) {
  if (depth == 0 || topology.is_leaf(node)) {
    column[node] = columns++;
    return;
  }
  for (int slot = 0; slot < Topology::arity; ++slot)
    if (topology.child(node, slot) >= 0)
      number_top_leaves(topology, topology.child(node, slot), depth - 1, column, columns);
}

// top_tree_columns equals the recursive numbering on a radix tree (whose node
// ids do not list parents first) and on an octree.
TEST(TopTreeColumns, NumberTopLeavesInPreOrder) {
  Bvh<Kokkos::HostSpace> const kd(host(), test::plummer_positions(2000, 1), 4);
  auto const bodies = test::plummer_positions(2000, 1);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("masses", bodies.size());
  Kokkos::deep_copy(masses, Coordinate(1));
  Octree<Kokkos::HostSpace> const octree(host(), bodies, masses, 4);
  auto const check = [](auto const& topology) {
    for (int depth : {0, 1, 3, 5}) {
      std::vector<Index> expected(topology.size(), -1);
      int expected_columns = 0, columns = 0;
      number_top_leaves(topology, topology.root(), depth, expected, expected_columns);
      auto const column = detail::top_tree_columns(topology, depth, columns);
      EXPECT_EQ(columns, expected_columns) << depth;
      for (Index node = 0; node < topology.size(); ++node)
        ASSERT_EQ(column(node), expected[node]) << "node " << node << " depth " << depth;
    }
  };
  check(kd.topology);
  check(octree.topology);
}

// A tree's top-tree column map is computed once per depth and found again by
// the tree's node arrays; another tree or depth gets its own.
TEST(TopTreeColumnCache, ComputesAMapOncePerTreeAndDepth) {
  Bvh<Kokkos::HostSpace> const tree(host(), test::plummer_positions(2000, 1), 4);
  Bvh<Kokkos::HostSpace> const other(host(), test::plummer_positions(2000, 2), 4);
  detail::TopTreeColumnCache<decltype(tree.topology)> cache;
  int columns = 0, again = 0;
  auto const map = cache.get(host(), tree.topology, 3, columns);
  auto const fresh = detail::top_tree_columns(tree.topology, 3, again);
  EXPECT_GT(columns, 1);
  EXPECT_EQ(again, columns);
  ASSERT_EQ(map.extent(0), fresh.extent(0));
  for (std::size_t node = 0; node < map.extent(0); ++node)
    ASSERT_EQ(map(node), fresh(node)) << node;
  EXPECT_EQ(cache.get(host(), tree.topology, 3, again).data(), map.data());
  EXPECT_EQ(again, columns);
  EXPECT_NE(cache.get(host(), tree.topology, 4, again).data(), map.data());
  EXPECT_GT(again, columns);
  EXPECT_NE(cache.get(host(), other.topology, 3, again).data(), map.data());
  EXPECT_EQ(cache.get(host(), tree.topology, 3, again).data(), map.data()); // still cached
}

} // namespace
