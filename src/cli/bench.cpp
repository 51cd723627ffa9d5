// treetrav bench: the papers' comparison matrix on the default execution
// space (the GPU in a CUDA build): applications x inputs x {autoropes, lockstep, fsm} x
// {unsorted, sorted}. Median of --repeats timed runs after one warm-up; one
// extra run with metrics for nodes visited per warp and idle lanes; hybrid on
// the unsorted input and, with --sweep-depths, its profiling-depth sweep; every
// result checked against the unsorted autoropes run. Search apps also run
// brute force, and --strategy auto's pick is compared with the best fixed
// strategy. Writes matrix.csv, matrix.md, depth-sweep.csv, auto.csv and
// auto.md into --out.
#include "auto_strategy.hpp"
#include "common.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <ostream>
#include <vector>

namespace treetrav::cli {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Order = Kokkos::View<Index const*, Memory>;
using Metrics = TraversalMetrics<Memory>;

struct Row {
  std::string app, input, strategy, sort;
  Index queries;
  double median_ms, min_ms, nodes_per_warp, idle_fraction, visits_per_query;
  bool matches_reference;
  // Hybrid only: median phase times (ms) and the profiled depth.
  double order_ms =
      0; // making the sorted order (sfc rows); hybrid's own overhead is inside median_ms
  int depth = 0;
  double profile_ms = 0, transfer_ms = 0, schedule_ms = 0, execute_ms = 0;
};

struct Settings {
  Index n = 200000;
  Index bodies = 1000000;
  int repeats = 5;
  std::string out = "perf/results/latest";
  std::vector<std::string> only; // applications to run; empty: all
  bool wants(std::string const& app) const {
    return only.empty() || std::find(only.begin(), only.end(), app) != only.end();
  }
  std::vector<int> sweep_depths; // hybrid depth sweep (Liu et al. Figures 14-15)
};

// Where the hybrid strategy reports its breakdown during a timed run.
HybridTimings last_hybrid;

// --strategy auto on one search app and input: its pick, that pick's time in
// the matrix, and the best fixed strategy's.
struct AutoRow {
  std::string app, input, pick, best;
  double pick_ms, best_ms, probe_ms;
  std::string reason;
};
std::vector<AutoRow> auto_rows;

// A run of one (application, strategy, order); returns a host copy of its
// results flattened to doubles, for the comparison with the reference run.
using Runner = std::function<std::vector<double>(Order, Metrics const&)>;

template <class Strategy>
Row measure(Settings const& s, std::string const& app, std::string const& input, Index queries,
            Runner const& run, Strategy strategy, std::string const& sort, Order order,
            std::vector<double> const& reference, double tolerance) {
  Space space;
  run(order, {}); // warm-up
  std::vector<double> times;
  std::vector<HybridTimings> phases;
  for (int r = 0; r < s.repeats; ++r) {
    space.fence();
    Kokkos::Timer timer;
    auto result = run(order, {});
    space.fence();
    times.push_back(timer.seconds() * 1e3);
    phases.push_back(last_hybrid);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  Row row{app,
          input,
          Strategy::name,
          sort,
          queries,
          median(times),
          *std::min_element(times.begin(), times.end()),
          0,
          0,
          0,
          true};
  if constexpr (std::is_same_v<Strategy, Hybrid>) {
    auto phase = [&](double HybridTimings::*member) {
      std::vector<double> v;
      for (auto const& p : phases)
        v.push_back(p.*member * 1e3);
      return median(v);
    };
    row.depth = phases.front().depth;
    row.profile_ms = phase(&HybridTimings::profile);
    row.transfer_ms = phase(&HybridTimings::transfer);
    row.schedule_ms = phase(&HybridTimings::schedule);
    row.execute_ms = phase(&HybridTimings::execute);
  }
  auto metrics = allocate_metrics<Memory>(queries, warp_count<Space>(strategy, queries));
  auto result = run(order, metrics);
  for (std::size_t i = 0; i < result.size(); ++i) {
    double const scale = std::max(1.0, std::abs(reference[i]));
    if (!(std::abs(result[i] - reference[i]) <= tolerance * scale))
      row.matches_reference = false;
  }
  if constexpr (is_lockstep_v<Strategy>) {
    auto query_visits =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, metrics.query_visits);
    auto warp_visits =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, metrics.warp_visits);
    double const lane_visits =
        std::accumulate(query_visits.data(), query_visits.data() + queries, 0.0);
    double const warp_total =
        std::accumulate(warp_visits.data(), warp_visits.data() + warp_visits.extent(0), 0.0);
    row.nodes_per_warp = warp_total / warp_visits.extent(0);
    row.idle_fraction = 1 - lane_visits / (warp_total * 32);
    row.visits_per_query = lane_visits / queries;
  }
  fmt::print("{:4} {:9} {:9} {:6} {:10.3f} ms  nodes/warp {:10.1f}  idle {:5.3f}  {}", row.app,
             row.input, row.strategy, row.sort, row.median_ms, row.nodes_per_warp,
             row.idle_fraction, row.matches_reference ? "ok" : "MISMATCH");
  if (row.depth > 0)
    fmt::print("  depth {:2}: profile {:.3f} transfer {:.3f} schedule {:.3f} execute {:.3f} ms",
               row.depth, row.profile_ms, row.transfer_ms, row.schedule_ms, row.execute_ms);
  fmt::print("\n");
  return row;
}

template <class View>
std::vector<double> flatten(View const& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  std::vector<double> out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i)
    out[i] = host.data()[i];
  return out;
}

// Every strategy x {unsorted, sorted} of one application on one input, then
// hybrid on the unsorted input (it makes its own order), then the depth sweep.
void run_matrix(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep,
                std::string const& app, std::string const& input, Index queries,
                std::function<std::vector<double>(Order, Metrics const&, int)> const& run,
                Order sorted, std::string const& sort_name, double sort_ms, double tolerance,
                bool brute);

void write_tables(Settings const& s, std::vector<Row> const& rows, std::vector<Row> const& sweep);

// Calls f(strategy) for strategy 0 = autoropes, 1 = lockstep, 2 = fsm,
// 3 = brute force, hybrid_base + d = hybrid profiling depth d (d = 0: automatic).
constexpr int brute_force = 3;
constexpr int hybrid_base = 100;
template <class F>
auto with_strategy(int which, F const& f) {
  if (which >= hybrid_base)
    return f(Hybrid{which - hybrid_base, 32, &last_hybrid});
  if (which == brute_force)
    return f(BruteForce{});
  if (which == 1)
    return f(Lockstep{});
  if (which == 2)
    return f(FsmLockstep{});
  return f(Autoropes{});
}

void run_matrix(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep,
                std::string const& app, std::string const& input, Index queries,
                std::function<std::vector<double>(Order, Metrics const&, int)> const& run,
                Order sorted, std::string const& sort_name, double sort_ms, double tolerance,
                bool brute) {
  auto reference = run({}, {}, 0);
  auto variant = [&](Settings const& settings, int which, Order order, std::string const& sort) {
    auto once = [&](Order o, Metrics const& m) { return run(o, m, which); };
    return with_strategy(which, [&](auto strategy) {
      return measure(settings, app, input, queries, once, strategy, sort, order, reference,
                     tolerance);
    });
  };
  for (auto const& [order, sort] :
       {std::pair{Order{}, std::string("none")}, std::pair{sorted, sort_name}})
    for (int which : {0, 1, 2}) {
      rows.push_back(variant(s, which, order, sort));
      if (sort != "none")
        rows.back().order_ms = sort_ms;
    }
  rows.push_back(variant(s, hybrid_base, Order{}, "none"));
  if (brute)
    rows.push_back(variant(s, brute_force, Order{}, "none"));
  // The sweep's points take at most 3 timed runs each. An octree's top tree
  // widens eight-fold per level: past depth 4 the bit matrix (bodies x 8^depth
  // bits) outgrows the GPU's memory; binary top trees shallower than 4 tell
  // the scheduler next to nothing.
  Settings sweep_settings = s;
  sweep_settings.repeats = std::min(s.repeats, 3);
  for (int depth : s.sweep_depths)
    if (app == "bh" ? depth <= 4 : depth >= 4)
      sweep.push_back(variant(sweep_settings, hybrid_base + depth, Order{}, "none"));
  // Tables after every application and input, so that a run cut short keeps
  // what it measured.
  write_tables(s, rows, sweep);
}

// Row lookups and times, defined with the tables below.
Row const* find_row(std::vector<Row> const& rows, Row const& like, std::string const& strategy,
                    bool sorted);
double total_ms(Row const& r);

// --strategy auto on one search app and input: the probe's pick (the same
// choose_strategy the CLI runs) against the fastest row of the matrix, each
// with its ordering cost. A pick the matrix has no row for (the recursive
// reference on host backends) is measured here.
template <class RunApp>
void compare_auto(Settings const& s, std::vector<Row>& rows, std::vector<Row> const& sweep,
                  std::string const& app, std::string const& input, PointSet<Memory> const& queries,
                  Index reference_size, Kokkos::View<Index*, Memory> const& morton, double sort_ms,
                  RunApp const& run_app) {
  Space space;
  auto const choice = choose_strategy(
      space, queries, morton, sort_ms / 1e3, reference_size, true,
      [&](auto strategy, auto const& sample) { run_app(strategy, sample, Order{}, Metrics{}); });
  Row like;
  like.app = app;
  like.input = input;
  if (find_row(rows, like, choice.plan.name(), choice.plan.sorted) == nullptr) {
    auto const reference = run_app(Autoropes{}, queries, Order{}, Metrics{});
    Order const order = choice.plan.sorted ? Order(morton) : Order{};
    std::string const sort = choice.plan.sorted ? "sfc" : "none";
    rows.push_back(std::visit(
        [&](auto strategy) -> Row {
          using Strategy = decltype(strategy);
          if constexpr (std::is_same_v<Strategy, Automatic> || !strategy_runs_on<Strategy, Space>) {
            throw std::logic_error("auto picked a strategy that cannot run here");
          } else {
            return measure(
                s, app, input, queries.size(),
                [&](Order o, Metrics const& m) { return run_app(strategy, queries, o, m); },
                strategy, sort, order, reference, 0);
          }
        },
        choice.plan.strategy));
    if (choice.plan.sorted)
      rows.back().order_ms = sort_ms;
  }
  Row const& picked = *find_row(rows, like, choice.plan.name(), choice.plan.sorted);
  Row const* best = nullptr;
  for (auto const& r : rows)
    if (r.app == app && r.input == input && (best == nullptr || total_ms(r) < total_ms(*best)))
      best = &r;
  auto label = [](Row const& r) { return r.strategy + (r.sort == "none" ? "" : "/" + r.sort); };
  auto_rows.push_back({app, input, label(picked), label(*best), total_ms(picked), total_ms(*best),
                       choice.probe_s * 1e3, choice.reason});
  fmt::print("{:4} {:9} auto picked {} ({:.3f} ms), best {} ({:.3f} ms), ratio {:.3f}; probe "
             "{:.1f} ms\n",
             app, input, label(picked), total_ms(picked), label(*best), total_ms(*best),
             total_ms(picked) / total_ms(*best), choice.probe_s * 1e3);
  write_tables(s, rows, sweep);
}

void search_inputs(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep) {
  if (!s.wants("pc") && !s.wants("nn") && !s.wants("knn") && !s.wants("vp") && !s.wants("bt"))
    return;
  Space space;
  Kokkos::DefaultHostExecutionSpace host;
  struct Input {
    std::string name;
    PointSet<Kokkos::HostSpace> reference, queries;
    Coordinate radius;
  };
  std::vector<Input> inputs;
  inputs.push_back(
      {"rand7", generators::uniform(host, s.n, 7, 1), generators::uniform(host, s.n, 7, 2), 0.2f});
  inputs.push_back({"covtype7", generators::from_preset(host, "covtype7", s.n, 1),
                    generators::from_preset(host, "covtype7", s.n, 2), 0.05f});
  inputs.push_back({"geocity2", generators::from_preset(host, "geocity2", s.n, 1),
                    generators::from_preset(host, "geocity2", s.n, 2), 0.005f});
  for (auto const& in : inputs) {
    auto queries = copy_points(space, in.queries, "bench::queries");
    // The hand-sorted baseline's overhead: the Morton sort, median of
    // --repeats after a warm-up (the first call loads its kernels).
    space.fence();
    Order sorted = morton_order(space, queries);
    std::vector<double> sort_times;
    for (int r = 0; r < s.repeats; ++r) {
      space.fence();
      Kokkos::Timer timer;
      sorted = morton_order(space, queries);
      space.fence();
      sort_times.push_back(timer.seconds() * 1e3);
    }
    std::sort(sort_times.begin(), sort_times.end());
    double const sort_ms = sort_times[sort_times.size() / 2];
    auto const morton = morton_order(space, queries);
    auto const reference = copy_points(space, in.reference, "bench::reference");
    KdTree<Memory> kd(space, in.reference, 8);
    VpTree<Memory> vp(space, in.reference, 8);
    BallTree<Memory> ball(space, in.reference, 8);
    // One app as a function of the strategy tag: its results on `q`, flattened.
    auto neighbors = [&](auto const& tree, int k) {
      return [&, k](auto strategy, PointSet<Memory> const& q, Order order, Metrics const& metrics) {
        using Strategy = decltype(strategy);
        if constexpr (std::is_same_v<Strategy, BruteForce>) {
          return flatten(find_neighbors(space, reference, q, {k, false}, strategy).indices);
        } else if constexpr (std::is_same_v<Strategy, Automatic> ||
                             !strategy_runs_on<Strategy, Space>) {
          throw std::logic_error("bench runs concrete strategies");
          return std::vector<double>{};
        } else {
          return flatten(
              find_neighbors(space, tree, q, {k, false}, strategy, order, metrics).indices);
        }
      };
    };
    auto counts = [&](auto strategy, PointSet<Memory> const& q, Order order,
                      Metrics const& metrics) {
      using Strategy = decltype(strategy);
      if constexpr (std::is_same_v<Strategy, BruteForce>) {
        return flatten(count_within(space, reference, q, {in.radius, false}, strategy));
      } else if constexpr (std::is_same_v<Strategy, Automatic> ||
                           !strategy_runs_on<Strategy, Space>) {
        throw std::logic_error("bench runs concrete strategies");
        return std::vector<double>{};
      } else {
        return flatten(count_within(space, kd, q, {in.radius, false}, strategy, order, metrics));
      }
    };
    auto search_app = [&](std::string const& app, auto const& run_app) {
      if (!s.wants(app))
        return;
      run_matrix(
          s, rows, sweep, app, in.name, queries.size(),
          [&](Order order, Metrics const& metrics, int which) {
            return with_strategy(
                which, [&](auto strategy) { return run_app(strategy, queries, order, metrics); });
          },
          sorted, "sfc", sort_ms, 0, true);
      compare_auto(s, rows, sweep, app, in.name, queries, reference.size(), morton, sort_ms,
                   run_app);
    };
    search_app("pc", counts);
    search_app("nn", neighbors(kd, 1));
    search_app("knn", neighbors(kd, 8));
    search_app("vp", neighbors(vp, 1));
    search_app("bt", neighbors(ball, 8));
  }
}

void barnes_hut_inputs(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep) {
  Space space;
  Kokkos::DefaultHostExecutionSpace host;
  auto plummer = generators::plummer(host, s.bodies, 1);
  auto plummer_points = allocate_points<Kokkos::HostSpace>("bench::plummer", s.bodies, 3);
  for (Index i = 0; i < s.bodies; ++i)
    for (int k = 0; k < 3; ++k)
      plummer_points.coordinates(i, k) = static_cast<Coordinate>(plummer.coordinates(i, k));
  for (auto const& [name, host_bodies] :
       {std::pair{std::string("plummer"), plummer_points},
        std::pair{std::string("uniform"), generators::uniform(host, s.bodies, 3, 1)}}) {
    auto bodies = copy_points(space, host_bodies, "bench::bodies");
    Kokkos::View<Coordinate*, Memory> masses("bench::masses", s.bodies);
    Kokkos::deep_copy(masses, Coordinate(1.0 / s.bodies));
    Octree<Memory> tree(space, bodies, masses, 8);
    // The hand-sorted order for Barnes-Hut: bodies in octree leaf order.
    Order leaf_order = tree.points.original_index;
    run_matrix(
        s, rows, sweep, "bh", name, s.bodies,
        [&](Order order, Metrics const& metrics, int which) {
          return with_strategy(which, [&](auto strategy) {
            if constexpr (std::is_same_v<decltype(strategy), BruteForce>) {
              throw std::logic_error("Barnes-Hut has no brute-force strategy");
              return std::vector<double>{};
            } else {
              return flatten(barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f},
                                                      strategy, order, metrics));
            }
          });
        },
        leaf_order, "tree", 0.0, 1e-4, false);
  }
}

// The row of `strategy` on `sort` for the same application and input, if any.
Row const* find_row(std::vector<Row> const& rows, Row const& like, std::string const& strategy,
                    bool sorted) {
  for (auto const& r : rows)
    if (r.app == like.app && r.input == like.input && r.strategy == strategy &&
        (r.sort != "none") == sorted)
      return &r;
  return nullptr;
}

// Liu et al.'s baseline: the original lockstep kernel on the unsorted input.
double baseline_ms(std::vector<Row> const& rows, Row const& r) {
  auto const* base = find_row(rows, r, Lockstep::name, false);
  return base ? base->median_ms : r.median_ms;
}

// A variant's whole time, ordering included (the Morton sort for sorted rows,
// profiling + transfer + scheduling for hybrid, which are in median_ms), and
// its traversal kernel alone.
double total_ms(Row const& r) {
  return r.median_ms + r.order_ms;
}
double kernel_ms(Row const& r) {
  return r.strategy == std::string(Hybrid::name) ? r.execute_ms : r.median_ms;
}

double geomean(std::vector<double> const& v) {
  double log_sum = 0;
  for (double x : v)
    log_sum += std::log(x);
  return v.empty() ? 0 : std::exp(log_sum / v.size());
}

// Geometric means over (app, input) of the five variants' speedups over the
// baseline, of hybrid over hand-sorted FSM, and of nodes per warp (Table 1).
void write_summary(std::ostream& md, std::vector<Row> const& rows) {
  struct Variant {
    std::string label, strategy;
    bool sorted;
  };
  std::vector<Variant> const variants{{"FSM lockstep, unsorted", FsmLockstep::name, false},
                                      {"original lockstep, sorted", Lockstep::name, true},
                                      {"FSM lockstep, sorted", FsmLockstep::name, true},
                                      {"hybrid + FSM, unsorted", Hybrid::name, false}};
  std::vector<std::string> apps;
  for (auto const& r : rows)
    if (std::find(apps.begin(), apps.end(), r.app) == apps.end())
      apps.push_back(r.app);
  apps.push_back("all");
  auto over = [&](std::string const& app, auto const& ratio) {
    std::vector<double> values;
    for (auto const& r : rows)
      if ((app == "all" || r.app == app) && r.strategy == std::string(Lockstep::name) &&
          r.sort == "none")
        if (auto value = ratio(r); value > 0)
          values.push_back(value);
    return values.empty() ? std::string("-") : fmt::format("{:.2f}", geomean(values));
  };
  md << "\n## Summary: geometric means (Liu et al. Figure 12, Table 1)\n\nSpeedup over the "
        "baseline (original "
        "lockstep, unsorted) counting each variant's ordering overhead, and in brackets its "
        "traversal kernel alone. "
        "Hybrid / sorted FSM: the hand-sorted FSM run (sort included) over the hybrid run (all "
        "phases included). "
        "Nodes/warp: the baseline's over hybrid's (the paper's 7.15x).\n\n| app |";
  for (auto const& v : variants)
    md << " " << v.label << " |";
  md << " hybrid / sorted FSM | nodes/warp cut |\n|---|";
  for (std::size_t i = 0; i < variants.size() + 2; ++i)
    md << "---:|";
  md << "\n";
  for (auto const& app : apps) {
    md << "| " << app << " |";
    for (auto const& v : variants) {
      auto speedup = [&](auto const& time) {
        return over(app, [&](Row const& base) {
          auto const* r = find_row(rows, base, v.strategy, v.sorted);
          return r ? base.median_ms / time(*r) : 0.0;
        });
      };
      md << fmt::format(" {} ({}) |", speedup(total_ms), speedup(kernel_ms));
    }
    md << fmt::format(" {} | {} |\n",
                      over(app,
                           [&](Row const& base) {
                             auto const* hybrid = find_row(rows, base, Hybrid::name, false);
                             auto const* sorted = find_row(rows, base, FsmLockstep::name, true);
                             return hybrid && sorted ? total_ms(*sorted) / total_ms(*hybrid) : 0.0;
                           }),
                      over(app, [&](Row const& base) {
                        auto const* hybrid = find_row(rows, base, Hybrid::name, false);
                        return hybrid && hybrid->nodes_per_warp > 0
                                   ? base.nodes_per_warp / hybrid->nodes_per_warp
                                   : 0.0;
                      }));
  }
}

void write_tables(Settings const& s, std::vector<Row> const& rows, std::vector<Row> const& sweep) {
  std::filesystem::create_directories(s.out);
  std::string const device = describe_execution_space<Space>();
  std::ofstream csv(s.out + "/matrix.csv");
  std::string const header =
      "app,input,strategy,sort,queries,median_ms,min_ms,order_ms,nodes_per_warp,idle_lane_fraction,"
      "visits_per_query,"
      "matches_reference,depth,profile_ms,transfer_ms,schedule_ms,execute_ms\n";
  auto csv_row = [](Row const& r) {
    return fmt::format("{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.2f},{},{},{:.4f},{:."
                       "4f},{:.4f},{:.4f}\n",
                       r.app, r.input, r.strategy, r.sort, r.queries, r.median_ms, r.min_ms,
                       r.order_ms, r.nodes_per_warp, r.idle_fraction, r.visits_per_query,
                       r.matches_reference, r.depth, r.profile_ms, r.transfer_ms, r.schedule_ms,
                       r.execute_ms);
  };
  csv << header;
  for (auto const& r : rows)
    csv << csv_row(r);
  std::ofstream sweep_csv(s.out + "/depth-sweep.csv");
  sweep_csv << header;
  for (auto const& r : sweep)
    sweep_csv << csv_row(r);

  std::ofstream md(s.out + "/matrix.md");
  md << fmt::format("# Traversal matrix on {}\n\n{} reference points and queries per search input, "
                    "{} bodies for BH; median of {} "
                    "runs after a warm-up. Speedup: over lockstep on unsorted input for the same "
                    "app and input (Liu et al.'s "
                    "baseline), counting each variant's ordering overhead (the Morton sort for sfc "
                    "rows; profiling, transfer and "
                    "scheduling are inside hybrid's time). Nodes/warp, idle lanes and visits/query "
                    "come from a separate metrics "
                    "run (lockstep strategies only). Kernel speedup: the traversal alone (hybrid: "
                    "its execute phase).\n\n",
                    device, s.n, s.bodies, s.repeats);
  md << "| app | input | strategy | sort | median ms | order ms | speedup | kernel speedup | "
        "nodes/warp | idle lanes | "
        "visits/query | exact |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (auto const& r : rows) {
    bool const warp = r.nodes_per_warp > 0;
    md << fmt::format("| {} | {} | {} | {} | {:.3f} | {} | {:.2f} | {:.2f} | {} | {} | {} | {} |\n",
                      r.app, r.input, r.strategy, r.sort, r.median_ms,
                      r.order_ms > 0 ? fmt::format("{:.3f}", r.order_ms) : "-",
                      baseline_ms(rows, r) / total_ms(r), baseline_ms(rows, r) / kernel_ms(r),
                      warp ? fmt::format("{:.0f}", r.nodes_per_warp) : "-",
                      warp ? fmt::format("{:.3f}", r.idle_fraction) : "-",
                      warp ? fmt::format("{:.0f}", r.visits_per_query) : "-",
                      r.matches_reference ? "yes" : "NO");
  }
  md << "\n## Hybrid breakdown and overhead ratios (Liu et al. Figure 13)\n\nOverhead ratio: "
        "ordering time over "
        "the whole run; hybrid's is profile + transfer + schedule, the sorted FSM's the Morton "
        "sort (none for BH, "
        "whose bodies come in tree order).\n\n| app | input | depth | profile ms | transfer ms | "
        "schedule ms | "
        "execute ms | hybrid overhead ratio | sorted FSM overhead ratio "
        "|\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (auto const& r : rows)
    if (r.strategy == std::string(Hybrid::name)) {
      double const overhead = r.profile_ms + r.transfer_ms + r.schedule_ms;
      auto const* sorted = find_row(rows, r, FsmLockstep::name, true);
      md << fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} |\n",
                        r.app, r.input, r.depth, r.profile_ms, r.transfer_ms, r.schedule_ms,
                        r.execute_ms, overhead / (overhead + r.execute_ms),
                        sorted ? fmt::format("{:.3f}", sorted->order_ms / total_ms(*sorted)) : "-");
    }
  write_summary(md, rows);
  if (!auto_rows.empty()) {
    std::ofstream auto_csv(s.out + "/auto.csv");
    auto_csv << "app,input,pick,pick_ms,best,best_ms,pick_over_best,probe_ms,reason\n";
    std::ofstream auto_md(s.out + "/auto.md");
    auto_md << fmt::format(
        "# --strategy auto against the best fixed strategy on {}\n\nAuto's pick comes from "
        "its probe (the same code as the search subcommands); its time and the best's are the "
        "matrix rows (median of {}, ordering included). Probe: the wall-clock time of the "
        "choice itself, paid once per job.\n\n| app | input | auto's pick | ms | best fixed | "
        "ms | pick / best | probe ms |\n|---|---|---|---:|---|---:|---:|---:|\n",
        device, s.repeats);
    for (auto const& a : auto_rows) {
      auto_csv << fmt::format("{},{},{},{:.4f},{},{:.4f},{:.4f},{:.3f},\"{}\"\n", a.app, a.input,
                              a.pick, a.pick_ms, a.best, a.best_ms, a.pick_ms / a.best_ms,
                              a.probe_ms, a.reason);
      auto_md << fmt::format("| {} | {} | {} | {:.3f} | {} | {:.3f} | {:.3f} | {:.1f} |\n", a.app,
                             a.input, a.pick, a.pick_ms, a.best, a.best_ms, a.pick_ms / a.best_ms,
                             a.probe_ms);
    }
  }
  if (!sweep.empty()) {
    md << "\n## Hybrid depth sweep (Liu et al. Figures 14-15)\n\n| app | input | depth | total ms "
          "| profile ms | "
          "transfer ms | schedule ms | execute ms |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (auto const& r : sweep)
      md << fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", r.app,
                        r.input, r.depth, r.median_ms, r.profile_ms, r.transfer_ms, r.schedule_ms,
                        r.execute_ms);
  }
}

} // namespace

void add_bench_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("bench", "The papers' matrix: apps x inputs x strategies x {unsorted, "
                                  "sorted} + hybrid, on the default "
                                  "execution space (the GPU in a CUDA build); CSV + markdown");
  auto s = std::make_shared<Settings>();
  auto runtime = std::make_shared<RuntimeOptions>();
  command->add_option("--n", s->n, "reference points = queries per search input")
      ->check(at_least(Index{1}))
      ->capture_default_str();
  command->add_option("--bodies", s->bodies, "bodies for Barnes-Hut")
      ->check(at_least(Index{1}))
      ->capture_default_str();
  command->add_option("--repeats", s->repeats, "timed runs per configuration (median reported)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--out", s->out, "output directory")
      ->check(file_name())
      ->capture_default_str();
  command->add_option("--only", s->only, "applications to run (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pc", "nn", "knn", "vp", "bt", "bh"}));
  command
      ->add_option("--sweep-depths", s->sweep_depths,
                   "hybrid profiling depths to sweep (e.g. 2 4 6 8 10 12)")
      ->check(in_range(1, max_tree_depth));
  add_runtime_options(*command, *runtime, false);
  command->callback([s, runtime] {
    KokkosSession session(*runtime);
    std::vector<Row> rows, sweep;
    search_inputs(*s, rows, sweep);
    if (s->wants("bh"))
      barnes_hut_inputs(*s, rows, sweep);
    auto exact = [](Row const& r) { return r.matches_reference; };
    bool const all_exact = std::all_of(rows.begin(), rows.end(), exact) &&
                           std::all_of(sweep.begin(), sweep.end(), exact);
    fmt::print("{} rows written to {}/matrix.{{csv,md}}; all match the reference: {}\n",
               rows.size(), s->out, all_exact ? "yes" : "NO");
    if (!all_exact)
      throw std::runtime_error("some strategy's results differ from the reference run");
  });
}

} // namespace treetrav::cli
