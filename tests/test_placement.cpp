// SM-centric placement (Wu et al. ICS15): every job chunk runs exactly once
// whatever the (simulated or real) hardware scheduler does and however the
// workers of an SM race for its chunks, plans keep their chunks on their SMs
// when every SM has a worker, and every application gives identical results
// under every placement and strategy.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/traversal/traverse.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <numeric>
#include <random>

namespace {

using namespace treetrav;

using Sets = Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;

template <class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

// The same values, bit for bit.
template <class A, class B>
bool same(A const& a, B const& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a.data()[i] != b.data()[i])
      return false;
  return true;
}

// Row r holds bits [first, first + width) (of 256).
void set_range(Sets sets, Index row, int first, int width) {
  for (int b = first; b < first + width; ++b)
    sets(row, b / 32) |= std::uint32_t(1) << (b % 32);
}

void expect_equal_sizes(std::vector<int> const& cluster, int clusters) {
  std::vector<int> size(clusters, 0);
  for (int c : cluster) {
    ASSERT_GE(c, 0);
    ASSERT_LT(c, clusters);
    ++size[c];
  }
  auto const [small, large] = std::minmax_element(size.begin(), size.end());
  EXPECT_LE(*large - *small, 1);
}

TEST(AffinityClusters, SeparateFamiliesStayTogether) {
  // Two families of chunks touching disjoint node ranges, interleaved.
  Sets sets("sets", 40, 8);
  for (Index c = 0; c < 40; ++c)
    set_range(sets, c, c % 2 == 0 ? 10 + c % 5 : 140 + c % 7, 20);
  auto const cluster = affinity_clusters(sets, 2);
  expect_equal_sizes(cluster, 2);
  for (Index c = 2; c < 40; ++c)
    EXPECT_EQ(cluster[c], cluster[c % 2]) << c;
  EXPECT_NE(cluster[0], cluster[1]);
  EXPECT_DOUBLE_EQ(jaccard(sets, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(jaccard(sets, 0, 0), 1.0);
}

TEST(AffinityClusters, EqualSizesAndEveryChunkOnce) {
  std::mt19937 random(3);
  Sets sets("sets", 1001, 8);
  for (Index c = 0; c < 1001; ++c)
    set_range(sets, c, random() % 200, 1 + random() % 40);
  for (int clusters : {1, 7, 132, 1001, 1500}) {
    auto const cluster = affinity_clusters(sets, clusters, 0.05, 9);
    ASSERT_EQ(cluster.size(), 1001u);
    if (clusters <= 1001)
      expect_equal_sizes(cluster, clusters);
    else
      for (int c : cluster)
        EXPECT_TRUE(c >= 0 && c < clusters);
  }
  // A chain of overlapping chunks: clusters are runs of neighbours.
  Sets chain("chain", 64, 8);
  for (Index c = 0; c < 64; ++c)
    set_range(chain, c, 3 * c, 12);
  auto const cluster = affinity_clusters(chain, 4, 0.05, 1);
  expect_equal_sizes(cluster, 4);
  int changes = 0;
  for (Index c = 1; c < 64; ++c)
    changes += cluster[c] != cluster[c - 1];
  EXPECT_LE(changes, 8); // 4 runs would be 3 changes; growth from seeds may split a few
  EXPECT_THROW(affinity_clusters(chain, 0), std::invalid_argument);
}

TEST(HillClimb, StopsAtTheFirstSlowdown) {
  std::vector<std::pair<int, double>> trace;
  // Fastest at 5 workers.
  int const best = hill_climb_workers(
      8, [](int n) { return (n - 5) * (n - 5) + 1.0; }, &trace);
  EXPECT_EQ(best, 5);
  ASSERT_EQ(trace.size(), 5u); // 8, 7, 6, 5, then 4 is slower
  EXPECT_EQ(trace.back().first, 4);
  EXPECT_EQ(hill_climb_workers(3, [](int n) { return double(n); }), 1);
  EXPECT_EQ(hill_climb_workers(3, [](int n) { return -double(n); }), 3);
}

template <class Space>
class Placement : public ::testing::Test {};
TYPED_TEST_SUITE(Placement, test::ExecutionSpaces, test::SpaceName);

template <class MemorySpace>
struct CountRuns {
  Kokkos::View<int*, MemorySpace> runs;
  KOKKOS_FUNCTION void operator()(Index i) const { Kokkos::atomic_add(&runs(i), 1); }
};

// Every work item runs once under `sm_of_chunk` for the given workers.
template <class Space>
void expect_each_once(Space const& space, PlacementOptions options,
                      std::vector<int> const& sm_of_chunk, int chunk_items, Index extent,
                      bool persistent, std::string const& what, Index* moved = nullptr) {
  using Memory = typename Space::memory_space;
  Workspace workspace;
  int const sms = detail::sm_partition(space, options, workspace).second;
  auto plan = detail::make_plan<Space, Memory>(space, sm_of_chunk, sms, chunk_items, extent);
  Index const chunks = static_cast<Index>(sm_of_chunk.size());
  // Three times with the same plan: the last worker resets the counters.
  for (int launch = 0; launch < 3; ++launch) {
    Kokkos::View<int*, Memory> runs("runs", extent);
    plan.chunk_runs = Kokkos::View<int*, Memory>("chunk_runs", chunks);
    plan.chunk_sm = Kokkos::View<int*, Memory>("chunk_sm", chunks);
    detail::launch_workers(space, "test::placement", CountRuns<Memory>{runs}, plan, options,
                           persistent, workspace);
    auto host_runs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, runs);
    auto chunk_runs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.chunk_runs);
    auto chunk_sm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.chunk_sm);
    int wrong = 0;
    for (Index i = 0; i < extent; ++i)
      if (host_runs(i) != 1 && ++wrong <= 3)
        ADD_FAILURE() << what << ": item " << i << " ran " << host_runs(i);
    for (Index c = 0; c < chunks; ++c)
      EXPECT_EQ(chunk_runs(c), 1) << what << " chunk " << c;
    auto counters = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.counters);
    for (std::size_t s = 0; s < counters.extent(0); ++s)
      EXPECT_EQ(counters(s), 0u) << what << " counter " << s;
    if (moved) {
      *moved = 0;
      for (Index c = 0; c < chunks; ++c)
        *moved += chunk_sm(c) != sm_of_chunk[c];
    }
  }
}

TYPED_TEST(Placement, EveryJobRunsOnceUnderUnevenWorkers) {
  TypeParam space;
  Workspace sm_table; // the GPU's SM table, probed once
  Index const extent = 1003; // not a multiple of the chunk
  constexpr bool cuda = is_cuda_space_v<TypeParam>;
  int const chunk_items = cuda ? 64 : 7;
  Index const chunks = (extent + chunk_items - 1) / chunk_items;
  std::mt19937 random(5);
  auto random_sms = [&](int sms) {
    std::vector<int> sm(chunks);
    for (auto& s : sm)
      s = static_cast<int>(random() % sms);
    return sm;
  };
  auto contiguous = [&](int sms) {
    std::vector<int> sm(chunks);
    for (Index c = 0; c < chunks; ++c)
      sm[c] = static_cast<int>(std::int64_t(c) * sms / chunks);
    return sm;
  };
  if constexpr (!cuda) {
    // A simulated hardware scheduler: 6 SMs; worker w lands on SM workers[w].
    PlacementOptions options;
    options.host_sms = 6;
    options.workers_per_sm = 3;
    struct Case {
      std::string name;
      std::vector<int> workers;
      bool honoured; // every SM has a worker: no chunk leaves its SM
    };
    std::vector<Case> const cases{
        {"filled", {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}, true},
        {"filled, extra workers retreat",
         {5, 4, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0, 3, 3, 3},
         true},
        {"uneven, every SM one to five", {0, 0, 0, 0, 0, 1, 2, 3, 3, 4, 5, 5, 1, 0}, true},
        {"uneven", {0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 3, 4, 4}, false},
        {"one SM", {2, 2}, false},
        {"a single worker", {4}, false},
        {"no worker on any SM", {-1, 7, 9}, false},
    };
    // Stealing moves only chunks whose SM had workers of its own busy; without
    // it (the paper's binding) an SM with workers keeps every chunk.
    for (bool steal : {false, true}) {
      options.steal = steal;
      std::string const binding = steal ? ", stealing" : ", bound";
      for (auto const& c : cases)
        for (bool shuffled : {false, true}) {
          options.simulated_sms = c.workers;
          Index moved = 0;
          expect_each_once(space, options, shuffled ? random_sms(6) : contiguous(6), chunk_items,
                           extent, false, c.name + binding, &moved);
          if (c.honoured && !steal)
            EXPECT_EQ(moved, 0) << c.name;
        }
      // A co-run partition: SMs 2..4 of 6; workers elsewhere retreat at once
      // and none steals from outside its partition.
      options.first_sm = 2;
      options.sms = 3;
      options.simulated_sms = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
      Index moved = 0;
      expect_each_once(space, options, random_sms(3), chunk_items, extent, false,
                       "partition" + binding, &moved);
      if (!steal)
        EXPECT_EQ(moved, 0);
      options.simulated_sms = {0, 1, 5, 5}; // none lands in the partition
      expect_each_once(space, options, random_sms(3), chunk_items, extent, false,
                       "partition, no worker inside" + binding);
      options.first_sm = 0;
      options.sms = 0;
    }
    // Many workers racing for one SM's cursor (concurrently on threaded
    // backends), some SMs with no worker, more workers than chunks.
    options = PlacementOptions{};
    options.host_sms = 3;
    options.workers_per_sm = 48;
    options.simulated_sms = std::vector<int>(64, 1);
    expect_each_once(space, options, random_sms(3), chunk_items, extent, false,
                     "48 workers on one SM");
    expect_each_once(space, options, {2, 1, 1}, chunk_items, 20, false,
                     "48 workers on one SM, 3 chunks");
    // Persistent threads: one worker per SM, one queue.
    options = PlacementOptions{};
    options.host_sms = 4;
    expect_each_once(space, options, random_sms(4), chunk_items, extent, true, "persistent");
    // The threads themselves as SMs, any number of workers each.
    for (int per_sm : {1, 2, 5}) {
      options = PlacementOptions{};
      options.workers_per_sm = per_sm;
      int const sms = detail::hardware_sms(space, options, sm_table);
      expect_each_once(space, options, random_sms(sms), chunk_items, extent, false,
                       "threads as SMs, " + std::to_string(per_sm) + " per SM");
    }
  } else {
    // The hardware's own scheduling: all SMs, one to a few workers per SM, a
    // co-run's halves; counted on the GPU.
    for (int per_sm : {0, 1, 3})
      for (bool steal : {false, true}) {
        PlacementOptions options;
        options.workers_per_sm = per_sm;
        options.steal = steal;
        int const sms = detail::hardware_sms(space, options, sm_table);
        Index moved = 0;
        expect_each_once(space, options, random_sms(sms), chunk_items, extent, false,
                         "all SMs, " + std::to_string(per_sm) + " per SM", &moved);
        std::printf("[ placement ] %d SMs, %d workers per SM%s: %d of %d chunks ran off their SM\n",
                    sms, per_sm, steal ? ", stealing" : "", int(moved), int(chunks));
        options.sms = sms / 2;
        expect_each_once(space, options, random_sms(sms / 2), chunk_items, extent, false,
                         "first half");
        options.first_sm = sms / 2;
        options.sms = sms - sms / 2;
        expect_each_once(space, options, random_sms(sms - sms / 2), chunk_items, extent, false,
                         "second half");
      }
    PlacementOptions options;
    expect_each_once(space, options, random_sms(detail::hardware_sms(space, options, sm_table)), chunk_items,
                     extent, true, "persistent");
  }
}

// Every application's results are identical under every placement and
// strategy (those placements apply to: not REGTT): placement changes where a
// query runs, never what it computes.
template <class Space, class F>
void for_each_placement(Space const& space, F&& f) {
  Workspace sm_table;
  auto with = [&](auto placement, std::string const& what) {
    PlacementReport report;
    report.count_chunks = true;
    placement.options.report = &report;
    f(placement, what, report);
  };
  with(SmCentric{}, "smcentric");
  with(Affinity{}, "affinity");
  Persistent persistent;
  with(persistent, "persistent");
  persistent.affinity = false;
  with(persistent, "persistent, queues in order");
  SmCentric one_per_sm;
  one_per_sm.options.workers_per_sm = 1;
  one_per_sm.options.chunk_queries = 64;
  with(one_per_sm, "smcentric, 1 worker per SM");
  if constexpr (!is_cuda_space_v<Space>) {
    Affinity uneven;
    uneven.options.host_sms = 5;
    uneven.options.simulated_sms = {0, 0, 0, 0, 4, 4, 2};
    with(uneven, "affinity, uneven simulated workers");
  } else {
    Affinity half;
    half.options.sms = detail::hardware_sms(space, half.options, sm_table) / 2;
    with(half, "affinity, half the SMs");
  }
}

template <class Report>
void expect_chunks_once(Report const& report, std::string const& what) {
  ASSERT_EQ(report.chunk_runs.size(), std::size_t(report.chunks)) << what;
  for (std::size_t c = 0; c < report.chunk_runs.size(); ++c)
    EXPECT_EQ(report.chunk_runs[c], 1) << what << " " << c;
}

TYPED_TEST(Placement, IdenticalResultsEveryPlacementAndStrategy) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const cases = test::search_cases();
  for (int which : {0, 2}) { // uniform 3-D, clustered 7-D
    auto const& c = cases[which];
    auto queries = copy_points(space, c.queries, "test::queries");
    Bvh<Memory> kd(space, c.reference, c.leaf_size);
    VpTree<Memory> vp(space, c.reference, c.leaf_size);
    test::for_each_strategy<TypeParam>([&](auto strategy) {
      if constexpr (placement_applies_v<decltype(strategy), SmCentric> &&
                    placement_runs_on_v<SmCentric, TypeParam>) {
        auto const knn = to_host(find_neighbors(space, kd, queries, {8, false}, strategy).indices);
        auto const nn = to_host(find_neighbors(space, vp, queries, {1, false}, strategy).distances);
        auto const pc = to_host(count_within(space, kd, queries, {c.radius, false}, strategy));
        for_each_placement(space, [&](auto const& placement, std::string const& name,
                                      PlacementReport const& report) {
          std::string const what = c.name + " " + test::strategy_name(strategy) + " " + name;
          auto const run = placed(strategy, placement);
          EXPECT_TRUE(
              same(knn, to_host(find_neighbors(space, kd, queries, {8, false}, run).indices)))
              << what;
          expect_chunks_once(report, what + " knn");
          EXPECT_TRUE(
              same(nn, to_host(find_neighbors(space, vp, queries, {1, false}, run).distances)))
              << what;
          expect_chunks_once(report, what + " vp");
          EXPECT_TRUE(same(pc, to_host(count_within(space, kd, queries, {c.radius, false}, run))))
              << what;
          expect_chunks_once(report, what + " pc");
        });
      }
    });
  }
  // Barnes-Hut on the octree (eight children a node).
  auto const bodies_host = test::plummer_positions(1500, 7);
  auto bodies = copy_points(space, bodies_host, "test::bodies");
  Kokkos::View<Coordinate*, Memory> masses("test::masses", bodies_host.size());
  Kokkos::deep_copy(masses, Coordinate(1) / bodies_host.size());
  Octree<Memory> tree(space, bodies, masses, 8);
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    if constexpr (placement_applies_v<decltype(strategy), SmCentric> &&
                  placement_runs_on_v<SmCentric, TypeParam>) {
      auto const expected =
          to_host(barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f}, strategy));
      for_each_placement(space, [&](auto const& placement, std::string const& name,
                                    PlacementReport const& report) {
        auto const got = to_host(barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f},
                                                          placed(strategy, placement)));
        EXPECT_TRUE(same(expected, got)) << "bh " << test::strategy_name(strategy) << " " << name;
        expect_chunks_once(report, "bh " + name);
      });
    }
  });
}

} // namespace
