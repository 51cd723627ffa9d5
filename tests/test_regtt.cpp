// REGTT's pieces against independent references: the stable sort by
// multi-word keys, the top tree's numbering, the visiting order of each query
// (visit counts of a guided search against regtt_reference.hpp), lockstep
// visit counts, chunking under a memory budget, the automatic depth, the depth
// model, and argument errors. Every application's results against brute force
// and direct summation are checked in test_search_apps and test_barnes_hut.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "regtt_reference.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/schedule/regtt.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <algorithm>
#include <numeric>
#include <random>

namespace {

using namespace treetrav;

template <class Space>
class RegttParts : public ::testing::Test {};
TYPED_TEST_SUITE(RegttParts, test::ExecutionSpaces, test::SpaceName);

template <class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

// Keys of `bits` bits as REGTT lays them out (position 0 = bit 63 of word 0;
// the bits past `bits` stay 0), drawn from a few prototypes so that many rows
// tie, each prototype sometimes flipped at one position.
detail::RegttKeys<Kokkos::HostSpace> random_keys(Index rows, std::int64_t bits,
                                                 std::uint64_t seed) {
  int const words = static_cast<int>((bits + 63) / 64);
  detail::RegttKeys<Kokkos::HostSpace> keys("test::keys", rows, words);
  std::mt19937_64 random(seed);
  std::vector<std::vector<std::uint64_t>> prototypes(40, std::vector<std::uint64_t>(words));
  for (auto& prototype : prototypes)
    for (auto& word : prototype)
      word = random();
  for (Index r = 0; r < rows; ++r) {
    auto row = prototypes[random() % prototypes.size()];
    if (random() % 3 == 0) {
      std::int64_t const position = static_cast<std::int64_t>(random() % bits);
      row[position / 64] ^= detail::regtt_bit(static_cast<Index>(position % 64));
    }
    for (int w = 0; w < words; ++w) {
      std::int64_t const used = std::min<std::int64_t>(64, bits - 64 * w);
      keys(r, w) = used == 64 ? row[w] : row[w] & ~(~std::uint64_t(0) >> used);
    }
  }
  return keys;
}

TYPED_TEST(RegttParts, SortOrdersKeysAsIntegersStably) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Index const rows = 6000, items = 5000; // rows past `items` must be ignored
  // One word (a radix sort on CUDA), a few words (radix passes), many (comparison sort).
  for (std::int64_t bits : {std::int64_t(7), std::int64_t(64), std::int64_t(150), std::int64_t(380),
                            std::int64_t(1100)}) {
    auto host_keys = random_keys(rows, bits, static_cast<std::uint64_t>(bits));
    auto keys = Kokkos::create_mirror_view_and_copy(space, host_keys);
    Kokkos::View<Index*, Memory> sorted("test::sorted", rows);
    detail::RegttSorter<TypeParam> sorter;
    sorter.sort(space, keys, items, bits, sorted);
    auto got = to_host(sorted);
    std::vector<Index> expected(items);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](Index a, Index b) {
      for (std::size_t w = 0; w < host_keys.extent(1); ++w)
        if (host_keys(a, w) != host_keys(b, w))
          return host_keys(a, w) < host_keys(b, w);
      return false;
    });
    int mismatches = 0;
    for (Index i = 0; i < items; ++i)
      mismatches += got(i) != expected[i];
    EXPECT_EQ(mismatches, 0) << bits << " bits";
  }
}

// top_node against a breadth-first walk that numbers children arity * p + 1 + slot.
template <class Space, class Tree>
void expect_heap_numbering(Space const& space, Tree const& tree, int depth) {
  constexpr int arity = decltype(tree.topology)::arity;
  Index const positions = static_cast<Index>(regtt_top_positions(arity, depth + 1));
  Kokkos::View<Index*, typename Space::memory_space> top_node("test::top_node", positions);
  Kokkos::parallel_for(Kokkos::RangePolicy<Space>(space, 0, positions),
                       detail::RegttTopNodes<decltype(tree.topology)>{tree.topology, top_node});
  auto got = to_host(top_node);
  auto const topology = detail::host_topology(tree.topology);
  std::vector<Index> expected(positions, -1);
  expected[0] = 0;
  int holes = 0;
  for (Index p = 0; p < positions; ++p) {
    holes += expected[p] < 0;
    if (expected[p] < 0)
      continue;
    for (int slot = 0; slot < arity; ++slot)
      if (Index const child = arity * p + 1 + slot; child < positions)
        expected[child] = topology.is_leaf(expected[p]) ? -1 : topology.child(expected[p], slot);
  }
  for (Index p = 0; p < positions; ++p)
    ASSERT_EQ(got(p), expected[p]) << "position " << p;
  if (arity == 8)
    EXPECT_GT(holes, 0) << "the octree should have empty octants";
}

TYPED_TEST(RegttParts, TopNodesFollowTheHeapNumbering) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto bodies = test::plummer_positions(300, 3);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("test::masses", 300);
  Kokkos::deep_copy(masses, 1.0f);
  expect_heap_numbering(space, Octree<Memory>(space, bodies, masses, 4), 3);
  // Deeper than the trees: leaves end every path (the radix tree's point
  // nodes and ranges, the implicit tree's last level).
  auto const points = generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 300, 3, 5);
  expect_heap_numbering(space, Bvh<Memory>(space, points, 8), 7);
  expect_heap_numbering(space, Bvh<Memory>(space, points, 1), 12);
  expect_heap_numbering(space, BallTree<Memory>(space, points, 8), 7);
  expect_heap_numbering(space, VpTree<Memory>(space, points, 8), 8);
}

// Wraps a visitor to count each query's visits: for a guided search the count
// depends on the order the query walks in.
template <class Visitor>
struct CountingVisitor {
  using memory_space = typename Visitor::memory_space;
  struct state_type {
    typename Visitor::state_type inner;
    std::int64_t visits;
  };
  static constexpr bool guided = Visitor::guided;
  Visitor inner;
  Kokkos::View<std::int64_t*, memory_space> counts;

  KOKKOS_FUNCTION Index query_count() const { return inner.query_count(); }
  KOKKOS_FUNCTION void initialize(Index query, state_type& s) const {
    inner.initialize(query, s.inner);
    s.visits = 0;
  }
  KOKKOS_FUNCTION bool visit(Index node, Index query, state_type& s) const {
    ++s.visits;
    return inner.visit(node, query, s.inner);
  }
  KOKKOS_FUNCTION int first_child(Index node, Index query, state_type const& s) const {
    return inner.first_child(node, query, s.inner);
  }
  KOKKOS_FUNCTION void finalize(Index query, state_type const& s) const {
    inner.finalize(query, s.inner);
    counts(query) = s.visits;
  }
};

// Not keyed: every kernel walks it through visit(), as REGTT does.
template <int KMax, class Tree, class Memory>
auto counting_knn(Tree const& tree, PointSet<Memory> const& queries, int k) {
  using Inner = NeighborSearchVisitor<Tree, KMax, 4>; // 3-D points, one packed width
  Index const n = queries.size();
  return CountingVisitor<Inner>{
      Inner{tree, queries.coordinates, k, false,
            Kokkos::View<Index**, Kokkos::LayoutRight, Memory>("test::indices", n, k),
            Kokkos::View<Coordinate**, Kokkos::LayoutRight, Memory>("test::distances", n, k)},
      Kokkos::View<std::int64_t*, Memory>("test::counts", n)};
}

template <template <class> class Tree, class Space>
void expect_reference_order(Space const& space) {
  using Memory = typename Space::memory_space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = generators::clustered(host, 4000, 3, 10, 0.05, 7);
  auto queries = generators::uniform(host, 700, 3, 8);
  Tree<Kokkos::HostSpace> host_tree(host, reference, 8);
  Tree<Memory> tree(space, reference, 8);
  auto device_queries = copy_points(space, queries, "test::queries");
  for (int depth : {0, 1, 4, 7}) {
    auto expected_visitor = counting_knn<16>(host_tree, queries, 5);
    test::regtt_reference(host_tree.topology, expected_visitor, depth);
    auto const& expected = expected_visitor.counts;
    // Unsorted, sorted, in chunks, sorted with order bits: which thread serves
    // a query never changes its walk.
    for (auto strategy :
         {Regtt{depth, RegttMode::nonlockstep, 32, false}, Regtt{depth, RegttMode::nonlockstep},
          Regtt{depth, RegttMode::nonlockstep, 32, true, 40000},
          Regtt{depth, RegttMode::nonlockstep, 32, true, 0, nullptr, true}}) {
      auto visitor = counting_knn<16>(tree, device_queries, 5);
      traverse(space, tree.topology, visitor, strategy);
      auto got = to_host(visitor.counts);
      int mismatches = 0;
      for (Index q = 0; q < queries.size(); ++q)
        mismatches += got(q) != expected(q);
      EXPECT_EQ(mismatches, 0) << Tree<Memory>::name << " " << test::strategy_name(strategy);
    }
  }
}

// Every backend builds the same tree, so the host's reference walk is the device's.
TYPED_TEST(RegttParts, EachQueryWalksInTheReferenceOrder) {
  expect_reference_order<Bvh>(TypeParam{});
  expect_reference_order<BallTree>(TypeParam{});
  expect_reference_order<VpTree>(TypeParam{});
}

// Unguided visitors visit the same nodes in any order: per query, REGTT's
// lockstep lane visits (breadth-first top + depth-first rest) equal the
// lockstep kernel's; its warps walk at least as many nodes as their busiest lane.
template <class Space, class Run>
void expect_lockstep_visits(Space const&, Index queries, Run const& run, int warp_size,
                            std::string const& what) {
  using Memory = typename Space::memory_space;
  auto plain = allocate_metrics<Memory>(queries, warp_count<Space>(Lockstep{warp_size}, queries));
  run(Lockstep{warp_size}, plain);
  auto expected = to_host(plain.query_visits);
  for (int depth : {1, 2, 3, 5}) {
    Regtt strategy{depth, RegttMode::lockstep, warp_size};
    auto metrics = allocate_metrics<Memory>(queries, warp_count<Space>(strategy, queries));
    run(strategy, metrics);
    auto visits = to_host(metrics.query_visits);
    auto warps = to_host(metrics.warp_visits);
    int mismatches = 0;
    double lanes = 0, steps = 0;
    for (Index q = 0; q < queries; ++q) {
      mismatches += visits(q) != expected(q);
      lanes += visits(q);
    }
    for (std::size_t w = 0; w < warps.extent(0); ++w)
      steps += warps(w);
    EXPECT_EQ(mismatches, 0) << what << " depth " << depth;
    EXPECT_GT(lanes, 0) << what;
    EXPECT_LE(lanes, steps * (is_cuda_space_v<Space> ? 32 : warp_size))
        << what << " depth " << depth;
  }
}

TYPED_TEST(RegttParts, LockstepVisitsEqualTheLockstepKernels) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Kokkos::DefaultHostExecutionSpace host;
  auto queries = copy_points(space, generators::uniform(host, 1000, 3, 3), "test::queries");
  Bvh<Memory> tree(space, generators::uniform(host, 5000, 3, 4), 8);
  auto bodies_host = test::plummer_positions(2000, 5);
  auto bodies = copy_points(space, bodies_host, "test::bodies");
  Kokkos::View<Coordinate*, Memory> masses("test::masses", 2000);
  Kokkos::deep_copy(masses, Coordinate(1.0 / 2000));
  Octree<Memory> octree(space, bodies, masses, 8);
  for (int warp_size : {32, 5}) {
    if (is_cuda_space_v<TypeParam> && warp_size != 32)
      continue;
    expect_lockstep_visits(
        space, 1000,
        [&](auto strategy, auto const& metrics) {
          count_within(space, tree, queries, {0.05f, false}, strategy, {}, metrics);
        },
        warp_size, "pc");
    expect_lockstep_visits(
        space, 2000,
        [&](auto strategy, auto const& metrics) {
          barnes_hut_accelerations(space, octree, bodies, {0.5f, 0.01f, 1.0f}, strategy, {},
                                   metrics);
        },
        warp_size, "bh");
  }
}

TYPED_TEST(RegttParts, ChunksGiveTheSameResults) {
  TypeParam space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = generators::uniform(host, 3000, 3, 11);
  auto queries = generators::uniform(host, 1000, 3, 12);
  Bvh<typename TypeParam::memory_space> tree(space, reference, 8);
  auto device_queries = copy_points(space, queries, "test::queries");
  auto expected_knn = test::brute_force_neighbors(reference, queries, 8, false);
  auto expected_counts = test::brute_force_counts(reference, queries, 0.08f, false);
  for (auto mode : {RegttMode::lockstep, RegttMode::nonlockstep})
    for (int warp_size : {32, 5}) {
      if (is_cuda_space_v<TypeParam> && warp_size != 32)
        continue;
      // Room for about 300 queries per chunk (a kNN query keeps its 16 best
      // candidates, a count 8 bytes).
      RegttTimings timings;
      Regtt strategy{6, mode, warp_size, true, 60000, &timings};
      auto neighbors = find_neighbors(space, tree, device_queries, {8, false}, strategy);
      EXPECT_GT(timings.chunks, 2) << test::strategy_name(strategy);
      auto indices = to_host(neighbors.indices);
      int mismatches = 0;
      for (Index q = 0; q < queries.size(); ++q)
        for (int j = 0; j < 8; ++j)
          mismatches += indices(q, j) != expected_knn.indices[std::size_t(q) * 8 + j];
      EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy);
      strategy.memory_budget = 12000;
      auto counts = to_host(count_within(space, tree, device_queries, {0.08f, false}, strategy));
      EXPECT_GT(timings.chunks, 2);
      mismatches = 0;
      for (Index q = 0; q < queries.size(); ++q)
        mismatches += counts(q) != expected_counts[q];
      EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy);
    }
}

TYPED_TEST(RegttParts, AutomaticDepthComesFromTheModelsRange) {
  TypeParam space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = generators::clustered(host, 20000, 2, 30, 0.02, 13);
  auto queries = generators::clustered(host, 20000, 2, 30, 0.02, 14);
  Bvh<typename TypeParam::memory_space> tree(space, reference, 8);
  auto device_queries = copy_points(space, queries, "test::queries");
  auto expected = test::brute_force_counts(reference, queries, 0.01f, false);
  for (auto mode : {RegttMode::lockstep, RegttMode::nonlockstep}) {
    RegttTimings timings;
    Regtt const strategy{Regtt::automatic, mode, 32, true, 0, &timings};
    auto counts = to_host(count_within(space, tree, device_queries, {0.01f, false}, strategy));
    EXPECT_GE(timings.depth, 1);
    EXPECT_LE(timings.depth, regtt_model_max_depth(2, tree.topology.size()));
    EXPECT_GT(timings.model, 0);
    int mismatches = 0;
    for (Index q = 0; q < queries.size(); ++q)
      mismatches += counts(q) != expected[q];
    EXPECT_EQ(mismatches, 0) << to_string(mode) << " at depth " << timings.depth;
  }
  // A guided search, and an octree (whose model stops at a shallower depth).
  auto const few = test::first_points(queries, 4000);
  auto expected_knn = test::brute_force_neighbors(reference, few, 4, false);
  RegttTimings timings;
  auto neighbors =
      to_host(find_neighbors(space, tree, copy_points(space, few, "test::few"), {4, false},
                             Regtt{Regtt::automatic, RegttMode::lockstep, 32, true, 0, &timings})
                  .indices);
  EXPECT_GE(timings.depth, 1);
  int mismatches = 0;
  for (Index q = 0; q < few.size(); ++q)
    for (int j = 0; j < 4; ++j)
      mismatches += neighbors(q, j) != expected_knn.indices[std::size_t(q) * 4 + j];
  EXPECT_EQ(mismatches, 0) << "knn at depth " << timings.depth;
  auto bodies_host = test::plummer_positions(2000, 15);
  auto bodies = copy_points(space, bodies_host, "test::bodies");
  Kokkos::View<Coordinate*, typename TypeParam::memory_space> masses("test::masses", 2000);
  Kokkos::deep_copy(masses, Coordinate(1.0 / 2000));
  Octree<typename TypeParam::memory_space> octree(space, bodies, masses, 8);
  auto direct =
      to_host(barnes_hut_accelerations(space, octree, bodies, {0.0f, 0.01f, 1.0f}, Autoropes{}));
  auto automatic = to_host(barnes_hut_accelerations(
      space, octree, bodies, {0.0f, 0.01f, 1.0f},
      Regtt{Regtt::automatic, RegttMode::nonlockstep, 32, true, 0, &timings}));
  EXPECT_GE(timings.depth, 1);
  EXPECT_LE(timings.depth, regtt_model_max_depth(8, octree.topology.size()));
  double worst = 0;
  for (Index i = 0; i < 2000; ++i)
    for (int k = 0; k < 3; ++k)
      worst = std::max(worst, std::abs(double(automatic(i, k)) - direct(i, k)) /
                                  (std::abs(direct(i, k)) + 1e-3));
  EXPECT_LT(worst, 1e-4) << "bh at depth " << timings.depth;
}

TYPED_TEST(RegttParts, BadArgumentsAreErrors) {
  TypeParam space;
  Kokkos::DefaultHostExecutionSpace host;
  auto reference = generators::uniform(host, 500, 3, 1);
  auto queries = copy_points(space, generators::uniform(host, 100, 3, 2), "test::queries");
  Bvh<typename TypeParam::memory_space> tree(space, reference, 8);
  auto bodies = copy_points(space, test::plummer_positions(100, 3), "test::bodies");
  Kokkos::View<Coordinate*, typename TypeParam::memory_space> masses("test::masses", 100);
  Octree<typename TypeParam::memory_space> octree(space, bodies, masses, 8);
  RangeCountOptions const pc{0.1f, false};
  EXPECT_THROW(count_within(space, tree, queries, pc, Regtt{regtt_max_depth(2) + 1}), InputError);
  EXPECT_THROW(count_within(space, tree, queries, pc, Regtt{-2}), InputError);
  EXPECT_THROW(barnes_hut_accelerations(space, octree, bodies, {0.5f, 0.0f, 1.0f},
                                        Regtt{regtt_max_depth(8) + 1}),
               InputError);
  // Constraint (9): not even one warp's keys fit.
  EXPECT_THROW(
      count_within(space, tree, queries, pc, Regtt{8, RegttMode::nonlockstep, 32, true, 100}),
      InputError);
  if constexpr (!is_cuda_space_v<TypeParam>)
    EXPECT_THROW(count_within(space, tree, queries, pc, Regtt{3, RegttMode::lockstep, 33}),
                 std::invalid_argument);
  EXPECT_THROW(parse_regtt_mode("sideways"), InputError);
  EXPECT_THROW(parse_strategy<ApplicationStrategy>("regt"), InputError);
  EXPECT_EQ(std::get<Regtt>(parse_strategy<ApplicationStrategy>("regtt")).depth, Regtt::automatic);
  EXPECT_THROW(parse_strategy<ForceStrategy>("regtt"), InputError); // not offered to nbody
}

TEST(RegttNumbering, TopTreeSizes) {
  EXPECT_EQ(regtt_top_positions(2, 0), 0);
  EXPECT_EQ(regtt_top_positions(2, 3), 7);
  EXPECT_EQ(regtt_top_positions(8, 2), 9);
  EXPECT_EQ(regtt_key_words(2, 6), 1);
  EXPECT_EQ(regtt_key_words(2, 7), 2);
  EXPECT_EQ(regtt_key_words(8, 3), 2);
  EXPECT_EQ(regtt_max_depth(2), 23);
  EXPECT_EQ(regtt_max_depth(8), 7);
  EXPECT_EQ(regtt_model_max_depth(2, 1000000), 14);
  EXPECT_EQ(regtt_model_max_depth(2, 100), 6);
  EXPECT_EQ(regtt_model_max_depth(8, 1000000000), 5);
  EXPECT_EQ(regtt_probe_depths(14), (std::vector<int>{1, 4, 8, 11, 14}));
  EXPECT_EQ(regtt_probe_depths(3), (std::vector<int>{1, 2, 3}));
}

// Probes drawn from a model of the paper's form are fitted back exactly, and
// the predicted best depth is the true one.
TEST(RegttDepthModel, RecoversAModelOfItsOwnForm) {
  int const arity = 2;
  std::int64_t const nodes = 60000;
  auto truth = [&](int d, double& bft, double& sort, double& dft) {
    double const top = static_cast<double>(regtt_top_positions(arity, d)), rest = nodes - top;
    bft = top * (2e-8 * d * d - 1e-8 * d + 3e-7);
    sort = 4e-8 * top + 2e-4;
    dft = rest * (3e-8 * d * d - 6e-7 * d + 5e-6);
  };
  std::vector<RegttProbe> probes;
  for (int d : regtt_probe_depths(14)) {
    RegttProbe probe{d};
    truth(d, probe.bft, probe.sort, probe.dft);
    probes.push_back(probe);
  }
  RegttDepthModel const model(arity, nodes, probes);
  int best = 1;
  double best_time = 1e300;
  for (int d = 1; d <= 14; ++d) {
    double bft, sort, dft;
    truth(d, bft, sort, dft);
    EXPECT_NEAR(model.predict(d), bft + sort + dft, 1e-6 * (bft + sort + dft)) << "depth " << d;
    if (bft + sort + dft < best_time)
      best = d, best_time = bft + sort + dft;
  }
  EXPECT_EQ(model.best_depth(1, 14), best);
  EXPECT_GT(best, 1);
  EXPECT_LT(best, 14);
  // Two probes determine a per-node cost linear in d.
  RegttDepthModel const linear(arity, nodes, {{3, 7.0, 1.0, 9.0}, {5, 31.0, 1.0, 12.0}});
  double const top4 = 15, rest3 = nodes - 7.0, rest5 = nodes - 31.0, rest4 = nodes - 15.0;
  EXPECT_NEAR(linear.predict(4),
              top4 * 1.0 + 1.0 + rest4 * (9.0 / rest3 + (12.0 / rest5 - 9.0 / rest3) / 2), 1e-9);
}

} // namespace
