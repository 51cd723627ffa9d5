// Treefix on the default execution space (the GPU in a CUDA build), after
// Defour and Marin (ICCS 2013):
//   Figure 7: star and caterpillar trees of 2^min..2^max vertices;
//   Figure 4: real-world-like trees (grid and random geometric graph spanning
//             trees, random recursive, binary);
//   Figure 10: the accuracy study, with the compensated variants added.
// Per tree and method: host-to-device transfer, validation and build (CSR,
// Euler tour), compute (median of --repeats fenced runs after a warm-up) and
// device-to-host transfer, each timed apart; the kernels' bytes per second
// against a device-to-device copy of the same bytes; the sequential host
// baseline. Writes performance.csv/.md and accuracy.csv/.md into --out.
#include <treetrav/core/backends.hpp>
#include <treetrav/treefix/accuracy.hpp>
#include <treetrav/treefix/generators.hpp>
#include <treetrav/treefix/sequential.hpp>
#include <treetrav/treefix/treefix.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Host = Kokkos::DefaultHostExecutionSpace;

struct Settings {
  int min_log2 = 15;
  int max_log2 = 24;
  std::vector<int> real_world_log2{20, 22, 24};
  int repeats = 5;
  Index bfs_max_height = Index{1} << 20;
  std::vector<std::string> treefixes{"rootfix", "leaffix"};
  std::vector<std::string> shapes{"star", "caterpillar", "grid", "rgg", "random", "binary"};
  double long_run_seconds = 1;
  int accuracy_trials = 10;
  Index accuracy_vertices = 10000;
  std::string out = "perf/results/treefix";
};

struct Row {
  std::string figure, shape;
  Index n = 0, height = 0;
  std::string treefix, method;
  double transfer_in_ms = 0, validate_ms = 0, build_ms = 0, compute_ms = 0, compute_min_ms = 0,
         transfer_out_ms = 0;
  int runs = 0;
  double kernel_bytes = 0, copy_gbs = 0;
  bool skipped = false; // bfs beyond --bfs-max-height

  double kernel_gbs() const { return kernel_bytes / (compute_ms * 1e6); }
};

template <class F>
double fenced_ms(F&& f) {
  Space().fence();
  Kokkos::Timer timer;
  f();
  Space().fence();
  return timer.seconds() * 1e3;
}

struct Timing {
  double median_ms, min_ms;
  int runs;
};

// A first run that warms up (or, when it takes longer than long_run_seconds,
// is the only measurement: a caterpillar's bfs takes minutes), then the median.
template <class F>
Timing time_runs(Settings const& settings, int repeats, F&& f) {
  double const first = fenced_ms(f);
  if (first > settings.long_run_seconds * 1e3)
    return {first, first, 1};
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r)
    times.push_back(fenced_ms(f));
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front(), repeats};
}

// Bytes the method's kernels move between the GPU and its memory per call,
// from their access patterns, with I = index, V = weight and result, A =
// accumulator sizes; each array element read or written once per pass counts
// once (a re-read that the implementation arranges to hit in cache, such as
// the step the scan's output re-reads inside its tile, does not count).
// Euler (fused, euler_tour_treefix.hpp): rootfix is one scan over the 2n steps
// reading the step -> vertex array (2n I) and gathering the weight at both of
// each vertex's steps (2n V), writing the result where the vertex opens (n V):
// its accumulators never reach memory. Leaffix's scan reads the steps (2n I)
// and the weights at closing steps (n V) and scatters both prefixes by vertex
// (2n A); a second pass reads them (2n A) and writes the results (n V).
// Bfs, a model of its data: per vertex one frontier scan entry (queue, two
// offsets, a slot), one expansion (slot search, parent, offset, child, queue
// write), parent's accumulator, weight and result; leaffix adds the traversal
// without accumulators and the bottom-up pass. Sequential: parents, weights and
// results once.
double kernel_bytes(std::string const& method, Treefix kind, std::size_t accumulator, Index n) {
  double const I = sizeof(Index), V = sizeof(float), A = static_cast<double>(accumulator);
  double per_vertex = I + 2 * V;
  if (method.rfind("euler", 0) == 0)
    per_vertex = kind == Treefix::rootfix ? 2 * I + 3 * V : 2 * I + 2 * V + 4 * A;
  else if (method == "bfs")
    per_vertex = kind == Treefix::rootfix ? 9 * I + V + 2 * A : 18 * I + V + 4 * A;
  return per_vertex * n;
}

// Bytes per second of a device-to-device copy (Kokkos::deep_copy, a
// cudaMemcpy on Cuda) reading `bytes` / 2 and writing `bytes` / 2.
double copy_gbs(Settings const& settings, double bytes) {
  auto const count = static_cast<std::size_t>(bytes / 2 / sizeof(float));
  Kokkos::View<float*, Memory> from("bench::copy_from", count), to("bench::copy_to", count);
  auto const timing =
      time_runs(settings, settings.repeats, [&] { Kokkos::deep_copy(Space(), to, from); });
  return 2.0 * count * sizeof(float) / (timing.median_ms * 1e6);
}

struct Case {
  std::string figure, shape;
  TreeShape tree_shape;
  int arity;
  Index n;
};

void run_case(Settings const& settings, Case const& c, std::map<double, double>& copy_cache,
              std::vector<Row>& rows) {
  Space space;
  auto const host_parents = generate_tree(Host(), c.tree_shape, c.n, 1, c.arity);
  auto const host_weights = uniform_weights<float>(Host(), c.n, 1);
  Kokkos::View<Index*, Memory> parents(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::parents"), c.n);
  Kokkos::View<float*, Memory> weights(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::weights"), c.n);
  Kokkos::View<float*, Memory> results(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "bench::results"), c.n);
  auto host_results = Kokkos::create_mirror_view(results);
  double const transfer_in_ms = fenced_ms([&] {
    Kokkos::deep_copy(space, parents, host_parents);
    Kokkos::deep_copy(space, weights, host_weights);
  });
  std::optional<RootedTree<Memory>> tree;
  double const validate_ms = fenced_ms([&] { tree.emplace(space, parents); });
  // The copy's bandwidth for a row's bytes, measured once per byte count.
  auto const copy_for = [&](double bytes) {
    if (copy_cache.count(bytes) == 0)
      copy_cache[bytes] = copy_gbs(settings, bytes);
    return copy_cache[bytes];
  };

  auto const base_row = [&](std::string const& treefix, std::string const& method) {
    Row row{c.figure, c.shape, c.n, tree->height(), treefix, method};
    row.transfer_in_ms = transfer_in_ms;
    row.validate_ms = validate_ms;
    return row;
  };
  auto const measure = [&](std::string const& method, double build_ms, auto& treefix_method,
                           auto const& op, Treefix kind) {
    Row row = base_row(to_string(kind), method);
    row.build_ms = build_ms;
    auto const timing = time_runs(settings, settings.repeats, [&] {
      treefix(space, kind, treefix_method, op, weights, results);
    });
    row.compute_ms = timing.median_ms;
    row.compute_min_ms = timing.min_ms;
    row.runs = timing.runs;
    row.transfer_out_ms = fenced_ms([&] { Kokkos::deep_copy(space, host_results, results); });
    using Accumulator = typename std::decay_t<decltype(op)>::accumulator_type;
    row.kernel_bytes = kernel_bytes(method, kind, sizeof(Accumulator), c.n);
    row.copy_gbs = copy_for(row.kernel_bytes);
    fmt::print(
        "{:11} {:10} n=2^{:<4.1f} {:7} {:17} build {:9.3f} ms  compute {:10.3f} ms  {:7.1f} GB/s\n",
        c.figure, c.shape, std::log2(c.n), row.treefix, method, build_ms, row.compute_ms,
        row.kernel_gbs());
    rows.push_back(row);
  };

  std::vector<Treefix> kinds;
  for (auto const& name : settings.treefixes)
    kinds.push_back(name == "rootfix" ? Treefix::rootfix : Treefix::leaffix);
  if (tree->height() <= settings.bfs_max_height) {
    std::optional<LevelSynchronousTreefix<Memory>> bfs;
    double const build_ms = fenced_ms([&] { bfs.emplace(space, *tree); });
    for (Treefix kind : kinds)
      measure("bfs", build_ms, *bfs, Sum<float>{}, kind);
  } else {
    for (Treefix kind : kinds) {
      rows.push_back(base_row(to_string(kind), "bfs"));
      rows.back().skipped = true;
    }
  }
  {
    std::optional<EulerTourTreefix<Memory>> euler;
    double const build_ms = fenced_ms([&] { euler.emplace(space, *tree); });
    for (Treefix kind : kinds) {
      measure("euler", build_ms, *euler, Sum<float>{}, kind);
      measure("euler-compensated", build_ms, *euler, CompensatedSum<float>{}, kind);
      measure("euler-widened", build_ms, *euler, WidenedSum<float, double>{}, kind);
    }
  }
  // The paper's baseline: one host thread.
  RootedTree<Kokkos::HostSpace> const host_tree = copy_tree(Host(), *tree);
  for (Treefix kind : kinds) {
    Row row = base_row(to_string(kind), "sequential");
    auto const timing = time_runs(settings, std::min(settings.repeats, 3), [&] {
      sequential_treefix(kind, host_tree, Sum<float>{}, host_weights);
    });
    row.compute_ms = timing.median_ms;
    row.compute_min_ms = timing.min_ms;
    row.runs = timing.runs;
    row.kernel_bytes = kernel_bytes("sequential", kind, sizeof(float), c.n);
    rows.push_back(row);
  }
}


// A skipped bfs's time from the same shape's largest measured bfs: per-level
// time x height (bfs time grows with the height on deep trees).
std::optional<double> bfs_estimate_ms(Row const& row, std::vector<Row> const& rows) {
  Row const* largest = nullptr;
  for (auto const& other : rows)
    if (!other.skipped && other.method == "bfs" && other.shape == row.shape &&
        other.treefix == row.treefix && other.height > 0)
      largest = &other;
  if (largest == nullptr)
    return std::nullopt;
  return largest->compute_ms / largest->height * row.height;
}

// "12.345", or for a skipped bfs "~12346 (est.)" or "skipped".
std::string compute_cell(Row const& row, std::vector<Row> const& rows) {
  if (!row.skipped)
    return fmt::format("{:.3f}", row.compute_ms);
  auto const estimate = bfs_estimate_ms(row, rows);
  return estimate ? fmt::format("~{:.0f} (est.)", *estimate) : "skipped";
}

Row const* find_row(std::vector<Row> const& rows, Row const& like, std::string const& method) {
  for (auto const& row : rows)
    if (row.shape == like.shape && row.n == like.n && row.treefix == like.treefix &&
        row.method == method)
      return &row;
  return nullptr;
}

void write_performance(Settings const& settings, std::vector<Row> const& rows) {
  std::ofstream csv(settings.out + "/performance.csv");
  csv << "figure,shape,n,height,treefix,method,transfer_in_ms,validate_ms,build_ms,compute_ms,"
         "compute_min_ms,"
         "transfer_out_ms,runs,kernel_bytes,kernel_gbs,copy_gbs,fraction_of_copy,skipped\n";
  for (auto const& r : rows)
    csv << fmt::format("{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{},{:.0f},{:."
                       "2f},{:.2f},{:.3f},{}\n",
                       r.figure, r.shape, r.n, r.height, r.treefix, r.method, r.transfer_in_ms,
                       r.validate_ms, r.build_ms, r.compute_ms, r.compute_min_ms, r.transfer_out_ms,
                       r.runs, r.kernel_bytes, r.skipped ? 0 : r.kernel_gbs(), r.copy_gbs,
                       r.skipped || r.copy_gbs <= 0 ? 0 : r.kernel_gbs() / r.copy_gbs, r.skipped);

  std::ofstream md(settings.out + "/performance.md");
  md << fmt::format(
      "# Treefix performance on {}\n\n"
      "Compute: median of {} fenced runs after a warm-up (runs over {} s: that one run), "
      "the tree already on the device and the method built (CSR, level sizes, Euler tour: see "
      "the set-up table). Weights and results float; euler-compensated carries float-float, "
      "euler-widened double partial sums.\n\n"
      "Effective bandwidth (GB/s): the bytes the method's kernels must move to and from GPU "
      "memory, counted from their access patterns (kernel_bytes in bench_treefix.cpp: euler "
      "rootfix 2n indices + 3n floats, leaffix 2n indices + 2n floats + 4n accumulators), "
      "divided by the compute time. Copy: a device-to-device copy (Kokkos::deep_copy) "
      "moving the same number of bytes, half read and half written, timed the same way; "
      "euler / copy is the ratio of the two.\n\n"
      "Bfs is skipped above height {}; its estimate is the same shape's largest measured "
      "time per level x height.\n",
      describe_execution_space<Space>(), settings.repeats, settings.long_run_seconds, settings.bfs_max_height);
  for (std::string const figure : {"figure7", "figure4"}) {
    md << (figure == "figure7" ? "\n## Figure 7: star and caterpillar (compute, ms)\n"
                               : "\n## Figure 4: real-world-like trees (compute, ms)\n");
    md << "\n| shape | n | height | treefix | sequential | bfs | euler | euler-compensated | "
          "euler-widened | "
          "euler / bfs speedup | euler GB/s | copy GB/s | euler / copy |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (auto const& r : rows) {
      if (r.figure != figure || r.method != "euler")
        continue;
      auto const cell = [&](std::string const& method) {
        Row const* other = find_row(rows, r, method);
        return other ? compute_cell(*other, rows) : std::string("-");
      };
      Row const* bfs = find_row(rows, r, "bfs");
      std::string speedup = "-";
      if (bfs && !bfs->skipped)
        speedup = fmt::format("{:.1f}", bfs->compute_ms / r.compute_ms);
      else if (auto const estimate = bfs ? bfs_estimate_ms(*bfs, rows) : std::nullopt)
        speedup = fmt::format("~{:.0f} (est.)", *estimate / r.compute_ms);
      md << fmt::format(
          "| {} | 2^{:.1f} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.0f}% |\n",
          r.shape, std::log2(r.n), r.height, r.treefix, cell("sequential"), cell("bfs"),
          cell("euler"), cell("euler-compensated"), cell("euler-widened"), speedup, r.kernel_gbs(),
          r.copy_gbs, 100 * r.kernel_gbs() / r.copy_gbs);
    }
  }
  md << "\n## Bfs per level on the caterpillar (one level per vertex)\n\n"
        "| treefix | n | bfs ms | us per level | euler ms | euler / bfs speedup |\n"
        "|---|---|---|---|---|---|\n";
  for (auto const& r : rows) {
    if (r.shape != "caterpillar" || r.method != "bfs")
      continue;
    Row const* euler = find_row(rows, r, "euler");
    auto const bfs_ms = r.skipped ? bfs_estimate_ms(r, rows) : std::optional<double>(r.compute_ms);
    if (!bfs_ms || euler == nullptr)
      continue;
    md << fmt::format("| {} | 2^{:.1f} | {} | {:.2f} | {:.3f} | {}{:.0f} |\n", r.treefix,
                      std::log2(r.n), compute_cell(r, rows), 1e3 * *bfs_ms / r.height,
                      euler->compute_ms, r.skipped ? "~" : "", *bfs_ms / euler->compute_ms);
  }
  md << "\n## Data transfer and set-up (ms)\n\nTransfer in: parent array and weights to the "
        "device; validate: "
        "RootedTree's checks on the device; build: CSR + level sizes (bfs) or CSR + Euler tour "
        "(euler); transfer "
        "out: one "
        "result array.\n\n| shape | n | transfer in | validate | bfs build | euler build | "
        "transfer out |\n"
        "|---|---|---|---|---|---|---|\n";
  for (auto const& r : rows) {
    if (r.method != "euler" || r.treefix != rows.front().treefix)
      continue;
    Row const* bfs = find_row(rows, r, "bfs");
    md << fmt::format("| {} | 2^{:.1f} | {:.3f} | {:.3f} | {} | {:.3f} | {:.3f} |\n", r.shape,
                      std::log2(r.n), r.transfer_in_ms, r.validate_ms,
                      bfs && !bfs->skipped ? fmt::format("{:.3f}", bfs->build_ms)
                                           : std::string("-"),
                      r.build_ms, r.transfer_out_ms);
  }
}

void write_accuracy(Settings const& settings, std::vector<AccuracySample> const& samples) {
  std::ofstream csv(settings.out + "/accuracy.csv");
  csv << "treefix,method,condition,trial,max_relative_error,condition_at_max,max_condition\n";
  for (auto const& s : samples)
    csv << fmt::format("{},{},{:.0e},{},{:.6e},{:.6e},{:.6e}\n", to_string(s.treefix), s.method,
                       s.condition, s.trial, s.max_relative_error, s.condition_at_max,
                       s.max_condition);

  // Median over the trials of the maximum relative error, per condition number.
  std::map<std::tuple<std::string, double, std::string>, std::vector<double>> errors;
  std::map<std::pair<std::string, double>, std::vector<double>> conditions;
  std::vector<std::string> methods;
  for (auto const& s : samples) {
    errors[{to_string(s.treefix), s.condition, s.method}].push_back(s.max_relative_error);
    if (s.method == "bfs")
      conditions[{to_string(s.treefix), s.condition}].push_back(s.max_condition);
    if (std::find(methods.begin(), methods.end(), s.method) == methods.end())
      methods.push_back(s.method);
  }
  auto const median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  std::ofstream md(settings.out + "/accuracy.md");
  md << fmt::format("# Treefix accuracy (Figure 10) on {}\n\n{} random recursive trees of {} "
                    "vertices per condition number; "
                    "float weights from the tree-wise Ogita-Rump-Oishi generator; exact reference "
                    "in double-double. Cells: "
                    "median over the trees of the maximum relative error over the vertices; "
                    "measured: median of the largest "
                    "condition number of a vertex's own sum.\n",
                    describe_execution_space<Space>(), settings.accuracy_trials, settings.accuracy_vertices);
  for (std::string const treefix : {"rootfix", "leaffix"}) {
    md << "\n## +" << treefix << "\n\n| condition | measured |";
    for (auto const& m : methods)
      md << " " << m << " |";
    md << "\n|---|---|";
    for (std::size_t m = 0; m < methods.size(); ++m)
      md << "---|";
    md << "\n";
    for (auto const& [key, values] : conditions) {
      if (key.first != treefix)
        continue;
      md << fmt::format("| {:.0e} | {:.1e} |", key.second, median(values));
      for (auto const& m : methods)
        md << fmt::format(" {:.2e} |", median(errors[{treefix, key.second, m}]));
      md << "\n";
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Settings settings;
  CLI::App app{"Treefix benchmark: Figures 4, 7 and 10 of Defour and Marin (ICCS 2013)"};
  app.add_option("--min-log2", settings.min_log2, "Smallest star / caterpillar: 2^k vertices")
      ->check(CLI::Range(1, 29));
  app.add_option("--max-log2", settings.max_log2,
                 "Largest star / caterpillar (and cap of the others)")
      ->check(CLI::Range(1, 29));
  app.add_option("--real-world-log2", settings.real_world_log2,
                 "Sizes of the real-world-like trees (2^k, comma-separated)")
      ->delimiter(',');
  app.add_option("--repeats", settings.repeats, "Timed runs per measurement")
      ->check(CLI::Range(1, 1000));
  app.add_option("--bfs-max-height", settings.bfs_max_height,
                 "Skip bfs on taller trees (a step per level)");
  app.add_option("--shapes", settings.shapes, "Trees to time (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"star", "caterpillar", "grid", "rgg", "random", "binary"}));
  app.add_option("--treefix", settings.treefixes, "rootfix and/or leaffix")
      ->delimiter(',')
      ->check(CLI::IsMember({"rootfix", "leaffix"}));
  app.add_option("--accuracy-trials", settings.accuracy_trials,
                 "Trees per condition number (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--accuracy-vertices", settings.accuracy_vertices, "Vertices per accuracy tree")
      ->check(CLI::Range(2, 1 << 24));
  app.add_option("--out", settings.out, "Output directory");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(settings.out);

  std::vector<Case> cases;
  auto const add_cases = [&](std::string const& figure, TreeShape shape, std::string const& name,
                             std::vector<int> const& sizes) {
    if (std::find(settings.shapes.begin(), settings.shapes.end(), name) == settings.shapes.end())
      return;
    for (int k : sizes)
      cases.push_back({figure, name, shape, 2, Index{1} << k});
  };
  std::vector<int> figure7_sizes;
  for (int k = settings.min_log2; k <= settings.max_log2; ++k)
    figure7_sizes.push_back(k);
  std::vector<int> figure4_sizes;
  for (int k : settings.real_world_log2)
    figure4_sizes.push_back(std::min(k, settings.max_log2));
  std::sort(figure4_sizes.begin(), figure4_sizes.end());
  figure4_sizes.erase(std::unique(figure4_sizes.begin(), figure4_sizes.end()), figure4_sizes.end());
  for (int k : figure7_sizes) { // star and caterpillar side by side, size after size
    add_cases("figure7", TreeShape::star, "star", {k});
    add_cases("figure7", TreeShape::caterpillar, "caterpillar", {k});
  }
  add_cases("figure4", TreeShape::grid, "grid", figure4_sizes);
  add_cases("figure4", TreeShape::random_geometric, "rgg", figure4_sizes);
  add_cases("figure4", TreeShape::random_recursive, "random", figure4_sizes);
  add_cases("figure4", TreeShape::kary, "binary", figure4_sizes);

  std::map<double, double> copy_cache;
  { // Loads every kernel once, so that no measurement pays for it.
    std::vector<Row> ignored;
    run_case(settings, {"warm-up", "random", TreeShape::random_recursive, 2, 1024}, copy_cache,
             ignored);
  }
  std::vector<Row> rows;
  for (auto const& c : cases) {
    run_case(settings, c, copy_cache, rows);
    write_performance(settings, rows); // so far: a run cut short keeps what it measured
  }
  fmt::print("wrote {}/performance.{{csv,md}}\n", settings.out);

  if (settings.accuracy_trials > 0) {
    AccuracyStudy study;
    study.vertices = settings.accuracy_vertices;
    study.trials = settings.accuracy_trials;
    write_accuracy(settings, accuracy_study(Space(), study));
    fmt::print("wrote {}/accuracy.{{csv,md}}\n", settings.out);
  }
  return 0;
}
