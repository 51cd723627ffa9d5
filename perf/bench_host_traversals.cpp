// Queries per second of every application under every host strategy, on the
// default host execution space (OpenMP when enabled; threads from
// --kokkos-threads or OMP_NUM_THREADS). Sizes: TREETRAV_BENCH_N reference
// points and as many queries (default 100000); BH uses the same N bodies.
// Medians over repetitions: --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true (the perf/README.md command).
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <functional>
#include <string>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultHostExecutionSpace;
using Memory = Space::memory_space;

Index bench_size() {
  char const* n = std::getenv("TREETRAV_BENCH_N");
  return n ? static_cast<Index>(std::atol(n)) : 100000;
}

// Runs `traversal` once to warm up, then times it per iteration.
void time_queries(benchmark::State& state, Index queries, std::function<void()> const& traversal) {
  traversal();
  for (auto _ : state) {
    traversal();
    Space().fence();
  }
  state.SetItemsProcessed(state.iterations() * queries);
  state.counters["threads"] = Space::concurrency();
  state.counters["queries"] = queries;
}

template <class Strategy>
void register_all(std::string const& input, PointSet<Memory> reference, PointSet<Memory> queries) {
  Space space;
  auto add = [&](std::string const& app, auto make) {
    auto name = app + "/" + Strategy::name + "/" + input;
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
      auto traversal = make();
      time_queries(state, queries.size(), traversal);
    })->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  add("pc", [=] {
    Bvh<Memory> tree(space, reference, 8);
    Coordinate const radius = reference.dimension() == 7 ? 0.2f : 0.02f;
    return std::function<void()>([=] { count_within(space, tree, queries, {radius, false}, Strategy{}); });
  });
  add("nn", [=] {
    Bvh<Memory> tree(space, reference, 8);
    return std::function<void()>([=] { find_neighbors(space, tree, queries, {1, false}, Strategy{}); });
  });
  add("knn", [=] {
    Bvh<Memory> tree(space, reference, 8);
    return std::function<void()>([=] { find_neighbors(space, tree, queries, {8, false}, Strategy{}); });
  });
  add("vp", [=] {
    VpTree<Memory> tree(space, reference, 8);
    return std::function<void()>([=] { find_neighbors(space, tree, queries, {1, false}, Strategy{}); });
  });
  add("bt", [=] {
    BallTree<Memory> tree(space, reference, 8);
    return std::function<void()>([=] { find_neighbors(space, tree, queries, {8, false}, Strategy{}); });
  });
}

template <class Strategy>
void register_barnes_hut(Index n) {
  Space space;
  auto name = std::string("bh/") + Strategy::name + "/plummer";
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    auto snapshot = generators::plummer(space, n, 1);
    auto bodies = allocate_points<Memory>("bench::bodies", n, 3);
    Kokkos::View<Coordinate*, Memory> masses("bench::masses", n);
    for (Index i = 0; i < n; ++i) {
      masses(i) = static_cast<Coordinate>(snapshot.masses(i));
      for (int k = 0; k < 3; ++k) bodies.coordinates(i, k) = static_cast<Coordinate>(snapshot.coordinates(i, k));
    }
    Octree<Memory> tree(space, bodies, masses, 8);
    time_queries(state, n, [=] { barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f}, Strategy{}); });
  })->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  benchmark::Initialize(&argc, argv);
  {
    Space space;
    Index const n = bench_size();
    auto rand7 = generators::uniform(space, n, 7, 1), rand7_queries = generators::uniform(space, n, 7, 2);
    auto covtype = generators::from_preset(space, "covtype7", n, 3);
    auto covtype_queries = generators::from_preset(space, "covtype7", n, 4);
    auto geocity = generators::from_preset(space, "geocity2", n, 5);
    auto geocity_queries = generators::from_preset(space, "geocity2", n, 6);
    register_all<Recursive>("rand7", rand7, rand7_queries);
    register_all<Autoropes>("rand7", rand7, rand7_queries);
    register_all<Recursive>("covtype7", covtype, covtype_queries);
    register_all<Autoropes>("covtype7", covtype, covtype_queries);
    register_all<Recursive>("geocity2", geocity, geocity_queries);
    register_all<Autoropes>("geocity2", geocity, geocity_queries);
    register_barnes_hut<Recursive>(n);
    register_barnes_hut<Autoropes>(n);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::ClearRegisteredBenchmarks();  // their Views must go before Kokkos does
  }
  benchmark::Shutdown();
}
