// The papers' comparison matrix on the default execution space (the GPU in a
// CUDA build): applications x inputs x {autoropes, lockstep, fsm} x
// {unsorted, sorted}. Median of --repeats timed runs after one warm-up; one
// extra run with metrics for nodes visited per warp and idle lanes; every
// result checked against the unsorted autoropes run. Writes matrix.csv and
// matrix.md into --out.
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <vector>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Order = Kokkos::View<Index const*, Memory>;
using Metrics = TraversalMetrics<Memory>;

struct Row {
  std::string app, input, strategy, sort;
  Index queries;
  double median_ms, min_ms, nodes_per_warp, idle_fraction, visits_per_query;
  bool matches_reference;
};

struct Settings {
  Index n = 200000;
  Index bodies = 1000000;
  int repeats = 5;
  std::string out = "perf/results";
  std::string only;
};

// A run of one (application, strategy, order); returns a host copy of its
// results flattened to doubles, for the comparison with the reference run.
using Runner = std::function<std::vector<double>(Order, Metrics const&)>;

template <class Strategy>
Row measure(Settings const& s, std::string const& app, std::string const& input, Index queries, Runner const& run,
            Strategy strategy, std::string const& sort, Order order, std::vector<double> const& reference,
            double tolerance) {
  Space space;
  run(order, {});  // warm-up
  std::vector<double> times;
  for (int r = 0; r < s.repeats; ++r) {
    space.fence();
    Kokkos::Timer timer;
    auto result = run(order, {});
    space.fence();
    times.push_back(timer.seconds() * 1e3);
  }
  std::sort(times.begin(), times.end());
  Row row{app, input, Strategy::name, sort, queries, times[times.size() / 2], times.front(), 0, 0, 0, true};
  auto metrics = allocate_metrics<Memory>(queries, warp_count<Space>(strategy, queries));
  auto result = run(order, metrics);
  for (std::size_t i = 0; i < result.size(); ++i) {
    double const scale = std::max(1.0, std::abs(reference[i]));
    if (!(std::abs(result[i] - reference[i]) <= tolerance * scale)) row.matches_reference = false;
  }
  if constexpr (is_lockstep_v<Strategy>) {
    auto query_visits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, metrics.query_visits);
    auto warp_visits = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, metrics.warp_visits);
    double const lane_visits = std::accumulate(query_visits.data(), query_visits.data() + queries, 0.0);
    double const warp_total = std::accumulate(warp_visits.data(), warp_visits.data() + warp_visits.extent(0), 0.0);
    row.nodes_per_warp = warp_total / warp_visits.extent(0);
    row.idle_fraction = 1 - lane_visits / (warp_total * 32);
    row.visits_per_query = lane_visits / queries;
  }
  fmt::print("{:4} {:9} {:9} {:6} {:10.3f} ms  nodes/warp {:10.1f}  idle {:5.3f}  {}\n", row.app, row.input,
             row.strategy, row.sort, row.median_ms, row.nodes_per_warp, row.idle_fraction,
             row.matches_reference ? "ok" : "MISMATCH");
  return row;
}

template <class View>
std::vector<double> flatten(View const& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  std::vector<double> out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) out[i] = host.data()[i];
  return out;
}

// Every strategy x {unsorted, sorted} of one application on one input.
void run_matrix(Settings const& s, std::vector<Row>& rows, std::string const& app, std::string const& input,
                Index queries, std::function<std::vector<double>(Order, Metrics const&, int)> const& run,
                Order sorted, std::string const& sort_name, double tolerance) {
  auto reference = run({}, {}, 0);
  for (auto [order, sort] : {std::pair{Order{}, std::string("none")}, std::pair{sorted, sort_name}}) {
    rows.push_back(measure(s, app, input, queries, [&](Order o, Metrics const& m) { return run(o, m, 0); },
                           Autoropes{}, sort, order, reference, tolerance));
    rows.push_back(measure(s, app, input, queries, [&](Order o, Metrics const& m) { return run(o, m, 1); },
                           Lockstep{}, sort, order, reference, tolerance));
    rows.push_back(measure(s, app, input, queries, [&](Order o, Metrics const& m) { return run(o, m, 2); },
                           FsmLockstep{}, sort, order, reference, tolerance));
  }
}

// Calls f(strategy) for strategy 0 = autoropes, 1 = lockstep, 2 = fsm.
template <class F>
auto with_strategy(int which, F const& f) {
  if (which == 1) return f(Lockstep{});
  if (which == 2) return f(FsmLockstep{});
  return f(Autoropes{});
}

void search_inputs(Settings const& s, std::vector<Row>& rows) {
  Space space;
  Kokkos::DefaultHostExecutionSpace host;
  struct Input {
    std::string name;
    PointSet<Kokkos::HostSpace> reference, queries;
    Coordinate radius;
  };
  std::vector<Input> inputs;
  inputs.push_back({"rand7", generators::uniform(host, s.n, 7, 1), generators::uniform(host, s.n, 7, 2), 0.2f});
  inputs.push_back({"covtype7", generators::from_preset(host, "covtype7", s.n, 1),
                    generators::from_preset(host, "covtype7", s.n, 2), 0.05f});
  inputs.push_back({"geocity2", generators::from_preset(host, "geocity2", s.n, 1),
                    generators::from_preset(host, "geocity2", s.n, 2), 0.005f});
  for (auto const& in : inputs) {
    auto queries = copy_points(space, in.queries, "bench::queries");
    Order sorted = morton_order(space, queries);
    KdTree<Memory> kd(space, in.reference, 8);
    VpTree<Memory> vp(space, in.reference, 8);
    BallTree<Memory> ball(space, in.reference, 8);
    auto search = [&](auto const& tree, int k) {
      return [&, k](Order order, Metrics const& metrics, int which) {
        return with_strategy(which, [&](auto strategy) {
          return flatten(find_neighbors(space, tree, queries, {k, false}, strategy, order, metrics).indices);
        });
      };
    };
    auto want = [&](std::string const& app) { return s.only.empty() || s.only.find(app) != std::string::npos; };
    if (want("pc"))
      run_matrix(s, rows, "pc", in.name, queries.size(), [&](Order order, Metrics const& metrics, int which) {
        return with_strategy(which, [&](auto strategy) {
          return flatten(count_within(space, kd, queries, {in.radius, false}, strategy, order, metrics));
        });
      }, sorted, "sfc", 0);
    if (want("nn")) run_matrix(s, rows, "nn", in.name, queries.size(), search(kd, 1), sorted, "sfc", 0);
    if (want("knn")) run_matrix(s, rows, "knn", in.name, queries.size(), search(kd, 8), sorted, "sfc", 0);
    if (want("vp")) run_matrix(s, rows, "vp", in.name, queries.size(), search(vp, 1), sorted, "sfc", 0);
    if (want("bt")) run_matrix(s, rows, "bt", in.name, queries.size(), search(ball, 8), sorted, "sfc", 0);
  }
}

void barnes_hut_inputs(Settings const& s, std::vector<Row>& rows) {
  Space space;
  Kokkos::DefaultHostExecutionSpace host;
  auto plummer = generators::plummer(host, s.bodies, 1);
  auto plummer_points = allocate_points<Kokkos::HostSpace>("bench::plummer", s.bodies, 3);
  for (Index i = 0; i < s.bodies; ++i)
    for (int k = 0; k < 3; ++k) plummer_points.coordinates(i, k) = static_cast<Coordinate>(plummer.coordinates(i, k));
  for (auto const& [name, host_bodies] : {std::pair{std::string("plummer"), plummer_points},
                                          std::pair{std::string("uniform"), generators::uniform(host, s.bodies, 3, 1)}}) {
    auto bodies = copy_points(space, host_bodies, "bench::bodies");
    Kokkos::View<Coordinate*, Memory> masses("bench::masses", s.bodies);
    Kokkos::deep_copy(masses, Coordinate(1.0 / s.bodies));
    Octree<Memory> tree(space, bodies, masses, 8);
    // The hand-sorted order for Barnes-Hut: bodies in octree leaf order.
    Order leaf_order = tree.points.original_index;
    run_matrix(s, rows, "bh", name, s.bodies, [&](Order order, Metrics const& metrics, int which) {
      return with_strategy(which, [&](auto strategy) {
        return flatten(barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f}, strategy, order, metrics));
      });
    }, leaf_order, "tree", 1e-4);
  }
}

void write_tables(Settings const& s, std::vector<Row> const& rows) {
  std::filesystem::create_directories(s.out);
  std::string device = Space::name();
#if defined(KOKKOS_ENABLE_CUDA)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) device += std::string(" (") + prop.name + ")";
#endif
  std::ofstream csv(s.out + "/matrix.csv");
  csv << fmt::format("app,input,strategy,sort,queries,median_ms,min_ms,nodes_per_warp,idle_lane_fraction,visits_per_query,"
            "matches_reference\n");
  for (auto const& r : rows)
    csv << fmt::format("{},{},{},{},{},{:.4f},{:.4f},{:.2f},{:.4f},{:.2f},{}\n", r.app, r.input, r.strategy, r.sort, r.queries,
              r.median_ms, r.min_ms, r.nodes_per_warp, r.idle_fraction, r.visits_per_query, r.matches_reference);
  std::ofstream md(s.out + "/matrix.md");
  md << fmt::format("# Traversal matrix on {}\n\n{} reference points and queries per search input, {} bodies for BH; median of "
           "{} runs after a warm-up. Speedup: over lockstep unsorted of the same app and input (Liu et al.'s "
           "baseline). Nodes/warp and idle lanes from a separate metrics run (lockstep strategies only).\n\n",
           device, s.n, s.bodies, s.repeats);
  md << fmt::format("| app | input | strategy | sort | median ms | speedup | nodes/warp | idle lanes | visits/query | exact |\n");
  md << fmt::format("|---|---|---|---|---:|---:|---:|---:|---:|---|\n");
  for (auto const& r : rows) {
    double baseline = r.median_ms;
    for (auto const& b : rows)
      if (b.app == r.app && b.input == r.input && b.strategy == std::string("lockstep") && b.sort == "none")
        baseline = b.median_ms;
    md << fmt::format("| {} | {} | {} | {} | {:.3f} | {:.2f} | {} | {} | {} | {} |\n", r.app, r.input, r.strategy, r.sort,
             r.median_ms, baseline / r.median_ms, r.nodes_per_warp > 0 ? fmt::format("{:.0f}", r.nodes_per_warp) : "-",
             r.nodes_per_warp > 0 ? fmt::format("{:.3f}", r.idle_fraction) : "-",
             r.nodes_per_warp > 0 ? fmt::format("{:.0f}", r.visits_per_query) : "-",
             r.matches_reference ? "yes" : "NO");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"treetrav traversal matrix benchmark"};
  app.add_option("--n", s.n, "reference points = queries per search input");
  app.add_option("--bodies", s.bodies, "bodies for Barnes-Hut");
  app.add_option("--repeats", s.repeats, "timed runs per configuration")->check(CLI::PositiveNumber);
  app.add_option("--out", s.out, "output directory");
  app.add_option("--only", s.only, "comma-separated apps to run (pc,nn,knn,vp,bt,bh); default all");
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<Row> rows;
  search_inputs(s, rows);
  if (s.only.empty() || s.only.find("bh") != std::string::npos) barnes_hut_inputs(s, rows);
  write_tables(s, rows);
  bool const all_exact = std::all_of(rows.begin(), rows.end(), [](Row const& r) { return r.matches_reference; });
  fmt::print("{} rows written to {}/matrix.{{csv,md}}; all match the reference: {}\n", rows.size(), s.out,
             all_exact ? "yes" : "NO");
  return all_exact ? 0 : 1;
}
