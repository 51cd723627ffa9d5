// treetrav-studies bench: the papers' comparison matrix on the default execution
// space (the GPU in a CUDA build): applications x inputs x {autoropes, lockstep, fsm} x
// {unsorted, sorted}. Median of --repeats timed runs after one warm-up; one
// extra run with metrics for nodes visited per warp and idle lanes; hybrid on
// the unsorted input and, with --sweep-depths, its profiling-depth sweep; every
// result checked against the unsorted autoropes run. Search apps also run
// brute force, and --strategy auto's pick is compared with the best fixed
// strategy. Writes matrix.csv, matrix.md, depth-sweep.csv, auto.csv and
// auto.md into --out.
// With --regtt, Zhang et al.'s REGTT study instead: the baselines (autoropes,
// lockstep, Morton-sorted lockstep, hybrid), REGTT in both modes at the
// model's depth, without reordering (Table III), with the BFS-top layout
// (octrees), and the exhaustive depth sweep (Figure 5); writes regtt.csv,
// regtt.md and regtt-sweep.csv.
#include "studies.hpp"

// The CLI's, through treetrav_cli_common.
#include <treetrav/apps/automatic.hpp>
#include "common.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/schedule/regtt.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/relayout.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <ostream>
#include <variant>
#include <vector>

namespace treetrav::cli {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Order = Kokkos::View<Index const*, Memory>;
using Metrics = TraversalMetrics<Memory>;
// The strategies the bench runs (the recursive reference is host-only; brute
// force: search apps only).
using BenchStrategy = std::variant<Autoropes, Lockstep, FsmLockstep, Hybrid, Regtt, BruteForce>;

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
  // REGTT only: its mode and variant ("nonlockstep", "lockstep/no-reorder",
  // "lockstep/bfs-layout", ...; no commas: it is a CSV field), median phase times (ms; model: the
  // automatic depth's probes, run once, not inside median_ms) and query chunks.
  std::string variant;
  double model_ms = 0, bft_ms = 0, sort_ms = 0, dft_ms = 0;
  int chunks = 0;
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
  std::vector<int> sweep_depths;   // hybrid depth sweep (Liu et al. Figures 14-15)
  bool regtt = false;              // Zhang et al.'s REGTT study instead of the matrix
  std::vector<std::string> inputs; // inputs to run; empty: all
  bool wants_input(std::string const& input) const {
    return inputs.empty() || std::find(inputs.begin(), inputs.end(), input) != inputs.end();
  }
  AnyPlacement placement; // every row's (Wu et al.); the plan is made once per input and reused
};


// --strategy auto on one search app and input: its pick, that pick's time in
// the matrix, and the best fixed strategy's.
struct AutoRow {
  std::string app, input, pick, best;
  double pick_ms, best_ms, probe_ms;
  std::string reason;
};
std::vector<AutoRow> auto_rows;

// A run of one (application, order, strategy); returns a host copy of its
// results flattened to doubles, for the comparison with the reference run.
using Runner = std::function<std::vector<double>(Order, Metrics const&, BenchStrategy const&)>;

// f(tag under the settings' placement). REGTT and brute force run under the
// hardware placement only (the command rejects --placement with --regtt).
template <class Tag, class F>
auto with_placement(Settings const& s, Tag const& tag, F const& f) {
  return std::visit(
      [&](auto const& placement) {
        if constexpr (placement_applies_v<Tag, std::decay_t<decltype(placement)>> &&
                      placement_runs_on_v<std::decay_t<decltype(placement)>, Space>) {
          return f(placed(tag, placement));
        } else {
          throw std::logic_error(std::string("bench: no placement for ") + Tag::name);
          return f(tag);
        }
      },
      s.placement);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median phases of a strategy's timed runs into its row (one overload
// per timings type).
void add_phases(Row& row, std::vector<HybridTimings> const& phases, std::string const&) {
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
void add_phases(Row& row, std::vector<RegttTimings> const& phases, std::string const& variant) {
  auto phase = [&](double RegttTimings::*member) {
    std::vector<double> v;
    for (auto const& p : phases)
      v.push_back(p.*member * 1e3);
    return median(v);
  };
  row.variant = variant;
  row.depth = phases.front().depth;
  row.chunks = phases.front().chunks;
  row.bft_ms = phase(&RegttTimings::bft);
  row.sort_ms = phase(&RegttTimings::sort);
  row.dft_ms = phase(&RegttTimings::dft);
}

// `run_strategy`: a Runner, or any callable taking the same arguments with
// Strategy's tag in place of a BenchStrategy (auto's pick may be one the
// matrix does not run).
template <class Strategy, class Run>
Row measure(Settings const& s, std::string const& app, std::string const& input, Index queries,
            Run const& run_strategy, Strategy strategy, std::string const& sort, Order order,
            std::vector<double> const& reference, double tolerance,
            std::string const& variant = "") {
  Space space;
  // What the repeats reuse (the placement's plan, REGTT's buffers): made by the warm-up.
  Workspace workspace;
  strategy.workspace = &workspace;
  typename timings_of<Strategy>::type last; // the strategy's breakdown of each timed run
  if constexpr (has_timings_v<Strategy>)
    strategy.timings = &last;
  auto run = [&](Order o, Metrics const& m) { return run_strategy(o, m, strategy); };
  run(order, {}); // warm-up
  std::vector<double> times;
  std::vector<decltype(last)> phases;
  for (int r = 0; r < s.repeats; ++r) {
    space.fence();
    Kokkos::Timer timer;
    auto result = run(order, {});
    space.fence();
    times.push_back(timer.seconds() * 1e3);
    phases.push_back(last);
  }
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
  if constexpr (has_timings_v<Strategy>)
    add_phases(row, phases, variant);
  auto metrics = strategy.records_metrics()
                     ? allocate_metrics<Memory>(queries, warp_count<Space>(strategy, queries))
                     : Metrics{};
  auto result = run(order, metrics);
  for (std::size_t i = 0; i < result.size(); ++i) {
    double const scale = std::max(1.0, std::abs(reference[i]));
    if (!(std::abs(result[i] - reference[i]) <= tolerance * scale))
      row.matches_reference = false;
  }
  if (metrics.enabled()) {
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
  if (row.strategy == std::string(Hybrid::name))
    fmt::print("  depth {:2}: profile {:.3f} transfer {:.3f} schedule {:.3f} execute {:.3f} ms",
               row.depth, row.profile_ms, row.transfer_ms, row.schedule_ms, row.execute_ms);
  if (row.strategy == std::string(Regtt::name))
    fmt::print("  {} depth {:2}: bft {:.3f} sort {:.3f} dft {:.3f} ms, {} chunk(s)", row.variant,
               row.depth, row.bft_ms, row.sort_ms, row.dft_ms, row.chunks);
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

void write_tables(Settings const& s, std::vector<Row> const& rows, std::vector<Row> const& sweep);
void write_regtt_tables(Settings const& s, std::vector<Row> const& rows,
                        std::vector<Row> const& sweep);

// Every strategy x {unsorted, sorted} of one application on one input, then
// hybrid on the unsorted input (it makes its own order), brute force when
// `brute` (search apps), then the depth sweep.
void run_matrix(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep,
                std::string const& app, std::string const& input, Index queries, Runner const& run,
                Order sorted, std::string const& sort_name, double sort_ms, double tolerance,
                bool brute) {
  // The exact reference: brute force where the app has it, which no
  // --placement touches, so a placement's mistakes cannot hide in it.
  auto reference = run({}, {}, brute ? BenchStrategy(BruteForce{}) : BenchStrategy(Autoropes{}));
  auto variant = [&](Settings const& settings, BenchStrategy const& strategy, Order order,
                     std::string const& sort) {
    return std::visit(
        [&](auto tag) {
          return measure(settings, app, input, queries, run, tag, sort, order, reference,
                         tolerance);
        },
        strategy);
  };
  for (auto const& [order, sort] :
       {std::pair{Order{}, std::string("none")}, std::pair{sorted, sort_name}})
    for (BenchStrategy strategy :
         {BenchStrategy{Autoropes{}}, BenchStrategy{Lockstep{}}, BenchStrategy{FsmLockstep{}}}) {
      rows.push_back(variant(s, strategy, order, sort));
      if (sort != "none")
        rows.back().order_ms = sort_ms;
    }
  rows.push_back(variant(s, Hybrid{}, Order{}, "none"));
  if (brute)
    rows.push_back(variant(s, BruteForce{}, Order{}, "none"));
  // The sweep's points take at most 3 timed runs each. An octree's top tree
  // widens eight-fold per level: past depth 4 the bit matrix (bodies x 8^depth
  // bits) outgrows the GPU's memory; binary top trees shallower than 4 tell
  // the scheduler next to nothing.
  Settings sweep_settings = s;
  sweep_settings.repeats = std::min(s.repeats, 3);
  for (int depth : s.sweep_depths)
    if (app == "bh" ? depth <= 4 : depth >= 4)
      sweep.push_back(variant(sweep_settings, Hybrid{depth}, Order{}, "none"));
  // Tables after every application and input, so that a run cut short keeps
  // what it measured.
  write_tables(s, rows, sweep);
}

// Puts a tree into REGTT's layout for reorder depth d (nodes above d
// breadth-first, below depth-first: relayout, on a host copy) until the
// returned function restores the original. Only trees with explicit child
// links have a layout to choose (the octree): the radix kd and ball trees
// number their nodes by their points' Morton positions (children are computed
// from the split, leaves are point ranges), and the vp tree is implicit in heap
// order, breadth-first throughout; their studies pass no layout.
using Layout = std::function<std::function<void()>(int)>;
Layout bfs_top_layout(Octree<Memory>& tree) {
  return [&tree](int depth) -> std::function<void()> {
    Kokkos::DefaultHostExecutionSpace host;
    Octree<Memory> const original = tree;
    auto host_tree = copy_tree(host, tree);
    relayout(host, host_tree, depth);
    tree = copy_tree(Space{}, host_tree);
    return [&tree, original] { tree = original; };
  };
}

// Zhang et al.'s REGTT study of one application on one input: the baselines
// (autoropes and lockstep unsorted, lockstep on the hand-sorted order with
// its sort counted, hybrid), then per mode: the model's depth (its probes run
// once, reported apart), REGTT there with and without reordering and with the
// BFS-top layout (when `layout` is given), and the exhaustive sweep of depths 1..model maximum (at
// most 2 timed runs each), which stops once two depths in a row take over
// 1.5x the best so far; guided searches also with order bits in the key (at
// the model's depth for that key).
void run_regtt(Settings const& s, std::vector<Row>& rows, std::vector<Row>& sweep,
               std::string const& app, std::string const& input, Index queries, Runner const& run,
               Order sorted, std::string const& sort_name, double sort_ms, double tolerance,
               Layout const& layout, int arity, Index tree_nodes, bool guided) {
  auto reference = run({}, {}, Autoropes{});
  auto measured = [&](Settings const& settings, auto strategy, Order order, std::string const& sort,
                      std::string const& variant = "") {
    return measure(settings, app, input, queries, run, strategy, sort, order, reference, tolerance,
                   variant);
  };
  rows.push_back(measured(s, Autoropes{}, Order{}, "none"));
  rows.push_back(measured(s, Lockstep{}, Order{}, "none"));
  rows.push_back(measured(s, Lockstep{}, sorted, sort_name));
  rows.back().order_ms = sort_ms;
  rows.push_back(measured(s, Hybrid{}, Order{}, "none"));
  Settings sweep_settings = s;
  sweep_settings.repeats = std::min(s.repeats, 2);
  for (RegttMode mode : {RegttMode::nonlockstep, RegttMode::lockstep}) {
    std::string const name = to_string(mode);
    RegttTimings model;
    run({}, {}, Regtt{Regtt::automatic, mode, 32, true, 0, &model});
    int const depth = model.depth;
    rows.push_back(measured(s, Regtt{depth, mode}, Order{}, "none", name));
    rows.back().model_ms = model.model * 1e3;
    rows.push_back(
        measured(s, Regtt{depth, mode, 32, false}, Order{}, "none", name + "/no-reorder"));
    if (layout) {
      auto const restore = layout(depth);
      rows.push_back(measured(s, Regtt{depth, mode}, Order{}, "none", name + "/bfs-layout"));
      restore();
    }
    if (guided) {
      RegttTimings ordered;
      run({}, {}, Regtt{Regtt::automatic, mode, 32, true, 0, &ordered, true});
      rows.push_back(measured(s, Regtt{ordered.depth, mode, 32, true, 0, nullptr, true}, Order{},
                              "none", name + "/order-bits"));
      rows.back().model_ms = ordered.model * 1e3;
    }
    double best = std::numeric_limits<double>::infinity();
    int slow = 0;
    for (int d = 1; d <= regtt_model_max_depth(arity, tree_nodes) && slow < 2; ++d) {
      sweep.push_back(measured(sweep_settings, Regtt{d, mode}, Order{}, "none", name));
      sweep.back().model_ms = model.model * 1e3;
      best = std::min(best, sweep.back().median_ms);
      slow = sweep.back().median_ms > 1.5 * best ? slow + 1 : 0;
    }
    write_regtt_tables(s, rows, sweep);
  }
}

// Row lookups and times, defined with the tables below.
Row const* find_row(std::vector<Row> const& rows, Row const& like, std::string const& strategy,
                    bool sorted);
double total_ms(Row const& r);

// --strategy auto on one search app and input: the probe's pick (the same
// choose_strategy the CLI runs) against the fastest row of the matrix, each
// with its ordering cost. A pick the matrix has no row for (the recursive
// reference on host backends) is measured here. run_app(tag, queries, order,
// metrics): the app's flattened results under one strategy.
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
    auto const reference = run_app(BruteForce{}, queries, Order{}, Metrics{}); // as run_matrix's
    Order const order = choice.plan.sorted ? Order(morton) : Order{};
    std::string const sort = choice.plan.sorted ? "sfc" : "none";
    rows.push_back(std::visit(
        [&](auto strategy) -> Row {
          using Strategy = decltype(strategy);
          if constexpr (!runs_on_v<Strategy, Space>) {
            throw std::logic_error("auto picked a strategy that cannot run here");
          } else {
            return measure(
                s, app, input, queries.size(),
                [&](Order o, Metrics const& m, auto tag) { return run_app(tag, queries, o, m); },
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
    if (!s.wants_input(in.name))
      continue;
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
    Bvh<Memory> kd(space, in.reference, 8);
    VpTree<Memory> vp(space, in.reference, 8);
    BallTree<Memory> ball(space, in.reference, 8);
    // One app as a function of the strategy tag: its results on `q`, flattened.
    auto neighbors = [&](auto const& tree, int k) {
      return [&, k](auto strategy, PointSet<Memory> const& q, Order order, Metrics const& metrics) {
        using Strategy = decltype(strategy);
        if constexpr (!Strategy::walks_tree) {
          return flatten(find_neighbors(space, reference, q, {k, false}, strategy).indices);
        } else if constexpr (!runs_on_v<Strategy, Space>) {
          throw std::logic_error("bench runs concrete strategies");
          return std::vector<double>{};
        } else {
          return with_placement(s, strategy, [&](auto tag) {
            return flatten(find_neighbors(space, tree, q, {k, false}, tag, order, metrics).indices);
          });
        }
      };
    };
    auto counts = [&](auto strategy, PointSet<Memory> const& q, Order order,
                      Metrics const& metrics) {
      using Strategy = decltype(strategy);
      if constexpr (!Strategy::walks_tree) {
        return flatten(count_within(space, reference, q, {in.radius, false}, strategy));
      } else if constexpr (!runs_on_v<Strategy, Space>) {
        throw std::logic_error("bench runs concrete strategies");
        return std::vector<double>{};
      } else {
        return with_placement(s, strategy, [&](auto tag) {
          return flatten(count_within(space, kd, q, {in.radius, false}, tag, order, metrics));
        });
      }
    };
    auto study = [&](std::string const& app, auto const& run_app, Index tree_nodes, bool guided) {
      if (!s.wants(app))
        return;
      Runner const run = [&](Order order, Metrics const& metrics, BenchStrategy const& strategy) {
        return std::visit([&](auto tag) { return run_app(tag, queries, order, metrics); },
                          strategy);
      };
      if (s.regtt) {
        run_regtt(s, rows, sweep, app, in.name, queries.size(), run, sorted, "sfc", sort_ms, 0,
                  Layout{}, 2, tree_nodes, guided);
      } else {
        run_matrix(s, rows, sweep, app, in.name, queries.size(), run, sorted, "sfc", sort_ms, 0,
                   true);
        compare_auto(s, rows, sweep, app, in.name, queries, reference.size(), morton, sort_ms,
                     run_app);
      }
    };
    study("pc", counts, kd.topology.size(), false);
    study("nn", neighbors(kd, 1), kd.topology.size(), true);
    study("knn", neighbors(kd, 8), kd.topology.size(), true);
    study("vp", neighbors(vp, 1), vp.topology.size(), true);
    study("bt", neighbors(ball, 8), ball.topology.size(), true);
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
    if (!s.wants_input(name))
      continue;
    auto bodies = copy_points(space, host_bodies, "bench::bodies");
    Kokkos::View<Coordinate*, Memory> masses("bench::masses", s.bodies);
    Kokkos::deep_copy(masses, Coordinate(1.0 / s.bodies));
    Octree<Memory> tree(space, bodies, masses, 8);
    // The hand-sorted order for Barnes-Hut: bodies in octree leaf order.
    Order leaf_order = tree.points.original_index;
    Runner const run = [&](Order order, Metrics const& metrics, BenchStrategy const& strategy) {
      return std::visit(
          [&](auto tag) {
            if constexpr (!decltype(tag)::walks_tree) {
              throw std::logic_error("Barnes-Hut has no brute-force strategy");
              return std::vector<double>{};
            } else {
              return with_placement(s, tag, [&](auto placed_tag) {
                return flatten(barnes_hut_accelerations(space, tree, bodies, {0.5f, 0.01f, 1.0f},
                                                        placed_tag, order, metrics));
              });
            }
          },
          strategy);
    };
    if (s.regtt)
      run_regtt(s, rows, sweep, "bh", name, s.bodies, run, leaf_order, "tree", 0.0, 1e-4,
                bfs_top_layout(tree), 8, tree.topology.size(), false);
    else
      run_matrix(s, rows, sweep, "bh", name, s.bodies, run, leaf_order, "tree", 0.0, 1e-4, false);
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

std::string const csv_header =
    "app,input,strategy,sort,queries,median_ms,min_ms,order_ms,nodes_per_warp,idle_lane_fraction,"
    "visits_per_query,"
    "matches_reference,depth,profile_ms,transfer_ms,schedule_ms,execute_ms,variant,model_ms,bft_"
    "ms,sort_ms,dft_ms,chunks\n";

void write_csv(std::string const& path, std::vector<Row> const& rows) {
  std::ofstream csv(path);
  csv << csv_header;
  for (auto const& r : rows)
    csv << fmt::format("{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.2f},{},{},{:.4f},{:."
                       "4f},{:.4f},{:.4f},{},{:.4f},{:.4f},{:.4f},{:.4f},{}\n",
                       r.app, r.input, r.strategy, r.sort, r.queries, r.median_ms, r.min_ms,
                       r.order_ms, r.nodes_per_warp, r.idle_fraction, r.visits_per_query,
                       r.matches_reference, r.depth, r.profile_ms, r.transfer_ms, r.schedule_ms,
                       r.execute_ms, r.variant, r.model_ms, r.bft_ms, r.sort_ms, r.dft_ms,
                       r.chunks);
}

void write_tables(Settings const& s, std::vector<Row> const& rows, std::vector<Row> const& sweep) {
  std::filesystem::create_directories(s.out);
  std::string const device = describe_execution_space<Space>();
  write_csv(s.out + "/matrix.csv", rows);
  write_csv(s.out + "/depth-sweep.csv", sweep);

  std::ofstream md(s.out + "/matrix.md");
  md << fmt::format("# Traversal matrix on {}\n\n{} reference points and queries per search input, "
                    "{} bodies for BH; median of {} "
                    "runs after a warm-up, placement {}. Speedup: over lockstep on unsorted input "
                    "for the same "
                    "app and input (Liu et al.'s "
                    "baseline), counting each variant's ordering overhead (the Morton sort for sfc "
                    "rows; profiling, transfer and "
                    "scheduling are inside hybrid's time). Nodes/warp, idle lanes and visits/query "
                    "come from a separate metrics "
                    "run (lockstep strategies only). Kernel speedup: the traversal alone (hybrid: "
                    "its execute phase).\n\n",
                    device, s.n, s.bodies, s.repeats, placement_name(s.placement));
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

// The REGTT row of `variant` for the same application and input, if any.
Row const* find_regtt(std::vector<Row> const& rows, Row const& like, std::string const& variant) {
  for (auto const& r : rows)
    if (r.app == like.app && r.input == like.input && r.strategy == std::string(Regtt::name) &&
        r.variant == variant)
      return &r;
  return nullptr;
}

std::string ratio_text(std::vector<double> const& values) {
  return values.empty() ? std::string("-") : fmt::format("{:.2f}", geomean(values));
}

// Zhang et al.'s tables from the REGTT study: every time is the whole call
// (BFT + sort + DFT, allocations included) at the depth the model chose; the
// model's probes are listed apart.
void write_regtt_tables(Settings const& s, std::vector<Row> const& rows,
                        std::vector<Row> const& sweep) {
  std::filesystem::create_directories(s.out);
  write_csv(s.out + "/regtt.csv", rows);
  write_csv(s.out + "/regtt-sweep.csv", sweep);
  std::ofstream md(s.out + "/regtt.md");
  md << fmt::format(
      "# REGTT on {}\n\n{} reference points and queries per search input, {} bodies for BH; median "
      "of {} runs after a warm-up. REGTT times are whole calls (breadth-first top + sort + "
      "depth-first rest, allocations included) at the reorder depth d the model picked; the "
      "model's probes (§III-D2) ran once before and are listed apart. Baselines: autoropes "
      "(non-lockstep) and Goldfarb's lockstep, both on the unsorted input.\n",
      describe_execution_space<Space>(), s.n, s.bodies, s.repeats);
  std::vector<Row const*> bases;
  for (auto const& r : rows)
    if (r.strategy == std::string(Autoropes::name) && r.sort == "none")
      bases.push_back(&r);

  md << "\n## Table II: REGTT against autoropes\n\n| app | input | autoropes ms | REGTT d | REGTT "
        "ms | speedup | lockstep ms | REGTT d | REGTT ms | speedup |\n|---|---|---:|---:|---:|---:|"
        "---:|---:|---:|---:|\n";
  std::vector<double> nonlockstep, lockstep;
  for (auto const* base : bases) {
    auto const* lock = find_row(rows, *base, Lockstep::name, false);
    auto const* re_n = find_regtt(rows, *base, "nonlockstep");
    auto const* re_l = find_regtt(rows, *base, "lockstep");
    auto cells = [](Row const* baseline, Row const* regtt, std::vector<double>& speedups) {
      if (!baseline || !regtt)
        return std::string("- | - | - | -");
      speedups.push_back(baseline->median_ms / regtt->median_ms);
      return fmt::format("{:.3f} | {} | {:.3f} | {:.2f}", baseline->median_ms, regtt->depth,
                         regtt->median_ms, speedups.back());
    };
    md << fmt::format("| {} | {} | {} | {} |\n", base->app, base->input,
                      cells(base, re_n, nonlockstep), cells(lock, re_l, lockstep));
  }
  std::vector<double> all = nonlockstep;
  all.insert(all.end(), lockstep.begin(), lockstep.end());
  md << fmt::format("\nGeometric means: non-lockstep {} (paper 1.98), lockstep {} (paper 1.34), "
                    "both {} (paper 1.66).\n",
                    ratio_text(nonlockstep), ratio_text(lockstep), ratio_text(all));

  md << "\n## Table III: REGTT without reordering, against the same baselines\n\n| app | input | "
        "lockstep | non-lockstep |\n|---|---|---:|---:|\n";
  std::vector<double> lockstep3, nonlockstep3;
  for (auto const* base : bases) {
    auto const* lock = find_row(rows, *base, Lockstep::name, false);
    auto const* re_n = find_regtt(rows, *base, "nonlockstep/no-reorder");
    auto const* re_l = find_regtt(rows, *base, "lockstep/no-reorder");
    auto cell = [](Row const* baseline, Row const* regtt, std::vector<double>& speedups) {
      if (!baseline || !regtt)
        return std::string("-");
      speedups.push_back(baseline->median_ms / regtt->median_ms);
      return fmt::format("{:.2f} (d {})", speedups.back(), regtt->depth);
    };
    md << fmt::format("| {} | {} | {} | {} |\n", base->app, base->input,
                      cell(lock, re_l, lockstep3), cell(base, re_n, nonlockstep3));
  }
  md << fmt::format("\nGeometric means: lockstep {} (paper 1.02), non-lockstep {} (paper 1.01).\n",
                    ratio_text(lockstep3), ratio_text(nonlockstep3));

  md << "\n## Figure 5: predicted against best reorder depth\n\nThe sweep times each depth from 1 "
        "(at most 2 runs) until two depths in a row take over 1.5x the best; gap = T(predicted) / "
        "T(best) - 1, both from the sweep.\n\n| app | input | mode | predicted d | best d | "
        "T(predicted) ms | T(best) ms | gap | model ms "
        "|\n|---|---|---|---:|---:|---:|---:|---:|---:|"
        "\n";
  std::vector<double> gaps;
  for (auto const* base : bases)
    for (std::string mode : {"nonlockstep", "lockstep"}) {
      auto const* predicted = find_regtt(rows, *base, mode);
      Row const* best = nullptr;
      Row const* at_predicted = nullptr;
      for (auto const& r : sweep)
        if (r.app == base->app && r.input == base->input && r.variant == mode) {
          if (!best || r.median_ms < best->median_ms)
            best = &r;
          if (predicted && r.depth == predicted->depth)
            at_predicted = &r;
        }
      if (!predicted || !best)
        continue;
      double const t_predicted = at_predicted ? at_predicted->median_ms : predicted->median_ms;
      gaps.push_back(t_predicted / best->median_ms - 1);
      md << fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {:.1f}% | {:.1f} |\n",
                        base->app, base->input, mode, predicted->depth, best->depth, t_predicted,
                        best->median_ms, 100 * gaps.back(), predicted->model_ms);
    }
  if (!gaps.empty()) {
    double mean = 0;
    for (double g : gaps)
      mean += g / gaps.size();
    md << fmt::format("\nMean gap {:.2f}%, largest {:.2f}% (paper: 1.06%, 8.07%).\n", 100 * mean,
                      100 * *std::max_element(gaps.begin(), gaps.end()));
  }

  md << "\n## REGTT against hybrid and Morton-sorted lockstep\n\nREGTT: the faster of its two "
        "modes at the model's depth. Sorted lockstep counts its Morton sort (BH: octree leaf "
        "order, free); hybrid counts profiling, transfer and scheduling.\n\n| app | input | REGTT "
        "ms (mode) | hybrid ms | sorted lockstep ms | over hybrid | over sorted lockstep | over "
        "autoropes |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
  std::vector<double> over_hybrid, over_sorted, over_autoropes;
  for (auto const* base : bases) {
    auto const* re_n = find_regtt(rows, *base, "nonlockstep");
    auto const* re_l = find_regtt(rows, *base, "lockstep");
    auto const* hybrid = find_row(rows, *base, Hybrid::name, false);
    auto const* sorted = find_row(rows, *base, Lockstep::name, true);
    Row const* best = re_n && (!re_l || re_n->median_ms <= re_l->median_ms) ? re_n : re_l;
    if (!best || !hybrid || !sorted)
      continue;
    over_hybrid.push_back(total_ms(*hybrid) / best->median_ms);
    over_sorted.push_back(total_ms(*sorted) / best->median_ms);
    over_autoropes.push_back(base->median_ms / best->median_ms);
    md << fmt::format("| {} | {} | {:.3f} ({}) | {:.3f} | {:.3f} | {:.2f} | {:.2f} | {:.2f} |\n",
                      base->app, base->input, best->median_ms, best->variant, total_ms(*hybrid),
                      total_ms(*sorted), over_hybrid.back(), over_sorted.back(),
                      over_autoropes.back());
  }
  md << fmt::format(
      "\nGeometric means: over hybrid {}, over sorted lockstep {}, over autoropes {}.\n",
      ratio_text(over_hybrid), ratio_text(over_sorted), ratio_text(over_autoropes));

  md << "\n## Guided searches with order bits (not in the paper)\n\nA guided search's bound is "
        "infinite until it reaches a leaf, so above d it truncates nothing and its truncation "
        "bits are all set; with order bits the key continues with the child each query took "
        "first at each node. Depth: the model's, for that key.\n\n| app | input | mode | d | ms | "
        "over its baseline | over truncation keys | over sorted lockstep |\n|---|---|---|---:|---:|"
        "---:|---:|---:|\n";
  std::vector<double> ordered_speedups;
  for (auto const* base : bases)
    for (std::string mode : {"nonlockstep", "lockstep"}) {
      auto const* ordered = find_regtt(rows, *base, mode + "/order-bits");
      auto const* plain = find_regtt(rows, *base, mode);
      auto const* baseline =
          mode == "lockstep" ? find_row(rows, *base, Lockstep::name, false) : base;
      auto const* sorted = find_row(rows, *base, Lockstep::name, true);
      if (!ordered || !plain || !baseline || !sorted)
        continue;
      ordered_speedups.push_back(baseline->median_ms / ordered->median_ms);
      md << fmt::format("| {} | {} | {} | {} | {:.3f} | {:.2f} | {:.2f} | {:.2f} |\n", base->app,
                        base->input, mode, ordered->depth, ordered->median_ms,
                        ordered_speedups.back(), plain->median_ms / ordered->median_ms,
                        total_ms(*sorted) / ordered->median_ms);
    }
  md << fmt::format("\nGeometric mean over the baselines: {}.\n", ratio_text(ordered_speedups));

  md << "\n## Phases, layout and idle lanes\n\nMedian phase times of the REGTT rows above; layout: "
        "the same run with the tree's nodes above d stored breadth-first, below depth-first "
        "(§III-D4; the octree only: the radix kd and ball trees number their nodes by their "
        "points' Morton positions and the vp tree is implicit in heap order, so they have no "
        "layout to choose); idle lanes (M_TI): lane-visits idle over all lane-visits, Goldfarb "
        "lockstep "
        "unsorted against REGTT lockstep.\n\n| app | input | mode | d | BFT ms | sort ms | DFT ms "
        "| "
        "chunks | BFS-top layout ms | layout speedup | M_TI lockstep | M_TI REGTT "
        "|\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<double> layout_speedups;
  for (auto const* base : bases)
    for (std::string mode : {"nonlockstep", "lockstep"}) {
      auto const* r = find_regtt(rows, *base, mode);
      auto const* layout = find_regtt(rows, *base, mode + "/bfs-layout");
      if (!r)
        continue;
      std::string idle = "- | -";
      if (auto const* lock = find_row(rows, *base, Lockstep::name, false);
          lock && mode == "lockstep")
        idle = fmt::format("{:.3f} | {:.3f}", lock->idle_fraction, r->idle_fraction);
      if (layout)
        layout_speedups.push_back(r->median_ms / layout->median_ms);
      md << fmt::format("| {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {} | {} | {} | {} |\n",
                        r->app, r->input, mode, r->depth, r->bft_ms, r->sort_ms, r->dft_ms,
                        r->chunks, layout ? fmt::format("{:.3f}", layout->median_ms) : "-",
                        layout ? fmt::format("{:.2f}", layout_speedups.back()) : "-", idle);
    }
  md << fmt::format("\nLayout speedup, geometric mean: {}.\n", ratio_text(layout_speedups));
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
  command->add_flag(
      "--regtt", s->regtt,
      "Zhang et al.'s REGTT study instead of the matrix: Tables II and III, Figure 5, "
      "REGTT against hybrid and Morton-sorted lockstep (regtt.{csv,md}, regtt-sweep.csv)");
  command->add_option("--inputs", s->inputs, "inputs to run (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"rand7", "covtype7", "geocity2", "plummer", "uniform"}));
  auto placement = std::make_shared<std::string>(Hardware::name);
  auto workers_per_sm = std::make_shared<int>(0);
  command
      ->add_option("--placement", *placement,
                   "Placement of every row (hardware, smcentric, affinity, persistent; Wu et al. "
                   "ICS15; not with --regtt)")
      ->check(CLI::IsMember({Hardware::name, SmCentric::name, Affinity::name, Persistent::name}))
      ->capture_default_str();
  command
      ->add_option("--workers-per-sm", *workers_per_sm,
                   "software placements: active workers per SM (0: all that fit)")
      ->check(at_least(0))
      ->capture_default_str();
  add_runtime_options(*command, *runtime, false);
  command->callback([s, runtime, placement, workers_per_sm] {
    if (s->regtt && *placement != Hardware::name)
      throw InputError("--placement " + *placement +
                       " does not apply to --regtt (REGTT runs under the hardware placement)");
    KokkosSession session(*runtime);
    s->placement = parse_placement(*placement);
    if (*placement != Hardware::name)
      placement_options(s->placement).workers_per_sm = *workers_per_sm;
    std::vector<Row> rows, sweep;
    // The REGTT study runs Barnes-Hut first: its 1M-body inputs take longest,
    // and the tables, written after every input, then hold them even when a
    // run under a time limit is cut short in the searches.
    if (s->regtt && s->wants("bh"))
      barnes_hut_inputs(*s, rows, sweep);
    search_inputs(*s, rows, sweep);
    if (!s->regtt && s->wants("bh"))
      barnes_hut_inputs(*s, rows, sweep);
    auto exact = [](Row const& r) { return r.matches_reference; };
    bool const all_exact = std::all_of(rows.begin(), rows.end(), exact) &&
                           std::all_of(sweep.begin(), sweep.end(), exact);
    fmt::print("{} rows written to {}/{}.{{csv,md}}; all match the reference: {}\n", rows.size(),
               s->out, s->regtt ? "regtt" : "matrix", all_exact ? "yes" : "NO");
    s->placement = Hardware{}; // its plans hold device memory: gone before Kokkos is
    if (!all_exact)
      throw std::runtime_error("some strategy's results differ from the reference run");
  });
}

} // namespace treetrav::cli
