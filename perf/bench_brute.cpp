// Brute force against the trees across dimensions, on the default execution
// space (the GPU in a CUDA build): kNN of n_queries uniform queries against
// n_reference uniform points, per dimension
//   brute force (GEMM screening + exact re-ranking; --tile-mib sweeps its tile memory),
//   every tree strategy x {input, Morton} order on the BVH (up to
//     max_tree_dimension; beyond --full-tree-dimension on a window of
//     --tree-sample queries, the time scaled to all queries),
//   and the pick of --strategy auto (its probe timed too).
// Every tree result is checked against brute force on the same queries
// (indices and distances bit for bit). With --export DIR the points go to raw
// float32 files (row-major) and brute force's first 1000 answers to int32,
// for perf/brute_torch.py to run PyTorch on the same data. Writes sweep.csv
// and sweep.md into --out.
#include <treetrav/apps/automatic.hpp>

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/bvh.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Host = Kokkos::DefaultHostExecutionSpace;
using Points = PointSet<Memory>;

struct Settings {
  Index n_reference = 1000000;
  Index n_queries = 100000;
  int k = 10;
  std::vector<int> dimensions{8, 16, 32, 64, 128, 784};
  std::vector<int> tile_mib;        // brute force tile memory to sweep; empty: automatic only
  std::vector<int> tile_dimensions; // where to sweep it; empty: every dimension
  // Trees time every query up to here. A window of queries underfills a GPU
  // (10,000 threads on 132 SMs): its time, scaled up, overstates a tree's.
  int full_tree_dimension = 16;
  int max_tree_dimension = 32; // timed no further: one tree run there costs minutes
  Index tree_sample = 10000;
  int repeats = 3;
  std::string out = "perf/results/latest-brute";
  std::string export_dir;
};

struct Result {
  int dimension;
  std::string method;
  Index queries_timed;
  double ms;      // median for the queries timed
  double full_ms; // scaled to all queries
  std::string exact;
  std::string note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median of `repeats` fenced runs after one warm-up, in ms.
template <class F>
double time_ms(int repeats, F const& f) {
  Space space;
  f();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    space.fence();
    Kokkos::Timer timer;
    f();
    space.fence();
    times.push_back(timer.seconds() * 1e3);
  }
  return median(times);
}

// Row-major float32 (n, d), as numpy.fromfile reads it.
void export_points(std::string const& path, PointSet<Kokkos::HostSpace> const& points) {
  std::vector<float> row(points.dimension());
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr)
    throw std::runtime_error("cannot write " + path);
  for (Index i = 0; i < points.size(); ++i) {
    for (int k = 0; k < points.dimension(); ++k)
      row[k] = points.coordinates(i, k);
    std::fwrite(row.data(), sizeof(float), row.size(), file);
  }
  std::fclose(file);
}

template <class Results>
std::vector<double> flatten(Results const& results) {
  auto indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.indices);
  auto distances = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.distances);
  std::vector<double> out;
  for (std::size_t q = 0; q < indices.extent(0); ++q)
    for (std::size_t j = 0; j < indices.extent(1); ++j) {
      out.push_back(indices(q, j));
      out.push_back(distances(q, j));
    }
  return out;
}

void write_tables(Settings const& s, std::vector<Result> const& results) {
  std::filesystem::create_directories(s.out);
  std::ofstream csv(s.out + "/sweep.csv");
  csv << "dimension,method,queries_timed,ms,full_ms,exact,note\n";
  for (auto const& r : results)
    csv << fmt::format("{},{},{},{:.3f},{:.3f},{},\"{}\"\n", r.dimension, r.method, r.queries_timed,
                       r.ms, r.full_ms, r.exact, r.note);
  std::ofstream md(s.out + "/sweep.md");
  md << fmt::format("# Brute force and the trees across dimensions on {}\n\nkNN, k = {}, {} "
                    "uniform reference points, {} "
                    "uniform queries in [0, 1)^d; median of {} runs after a warm-up. Full ms: the "
                    "time for all queries (tree "
                    "rows timed on a window of queries are scaled up). Exact: the results equal "
                    "brute force's bit for bit on "
                    "the queries timed.\n\n| d | method | queries timed | ms | full ms | exact | "
                    "note |\n|---:|---|---:|---:|---:|"
                    "---|---|\n",
                    describe_execution_space<Space>(), s.k, s.n_reference, s.n_queries, s.repeats);
  for (auto const& r : results)
    md << fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {} | {} |\n", r.dimension, r.method,
                      r.queries_timed, r.ms, r.full_ms, r.exact, r.note);
}

void run_dimension(Settings const& s, int d, std::vector<Result>& results) {
  Space space;
  Host host;
  fmt::print("== d = {}\n", d);
  auto const host_reference = generators::uniform(host, s.n_reference, d, 1);
  auto const host_queries = generators::uniform(host, s.n_queries, d, 2);
  Points const reference = copy_points(space, host_reference, "bench::reference");
  Points const queries = copy_points(space, host_queries, "bench::queries");
  NeighborOptions const options{s.k, false};

  // Brute force: automatic tiles, then the tile sweep.
  BruteForceStatistics statistics;
  std::vector<double> brute_all;
  auto brute_ms = time_ms(s.repeats, [&] {
    brute_all =
        flatten(find_neighbors(space, reference, queries, options, BruteForce{0, 0, &statistics}));
  });
  results.push_back(
      {d, "brute", s.n_queries, brute_ms, brute_ms, "-",
       fmt::format("tiles {} x {}, {} segments, {} round(s), {} queries searched again",
                   statistics.plan_queries, statistics.plan_references, statistics.segments,
                   statistics.rounds / (s.repeats + 1), statistics.requeued / (s.repeats + 1))});
  fmt::print("brute {:.3f} ms ({})\n", brute_ms, results.back().note);
  write_tables(s, results);
  bool const sweep_tiles =
      s.tile_dimensions.empty() ||
      std::find(s.tile_dimensions.begin(), s.tile_dimensions.end(), d) != s.tile_dimensions.end();
  for (int mib : sweep_tiles ? s.tile_mib : std::vector<int>{}) {
    BruteForce const tiled{std::size_t(mib) << 20};
    double const ms =
        time_ms(s.repeats, [&] { find_neighbors(space, reference, queries, options, tiled); });
    results.push_back({d, fmt::format("brute, {} MiB tiles", mib), s.n_queries, ms, ms, "-", ""});
    fmt::print("brute {} MiB {:.3f} ms\n", mib, ms);
    write_tables(s, results);
  }
  if (!s.export_dir.empty()) {
    std::filesystem::create_directories(s.export_dir);
    export_points(fmt::format("{}/reference-{}.f32", s.export_dir, d), host_reference);
    export_points(fmt::format("{}/queries-{}.f32", s.export_dir, d), host_queries);
    std::vector<std::int32_t> first;
    for (std::size_t i = 0; i < std::min<std::size_t>(1000 * s.k, brute_all.size() / 2); ++i)
      first.push_back(static_cast<std::int32_t>(brute_all[2 * i]));
    std::ofstream(fmt::format("{}/brute-indices-{}.i32", s.export_dir, d), std::ios::binary)
        .write(reinterpret_cast<char const*>(first.data()),
               std::streamsize(first.size() * sizeof(std::int32_t)));
  }
  // The trees (where they are timed, or where auto probes them), on all
  // queries or on a window of them in each order.
  bool const time_trees = d <= std::min(s.max_tree_dimension, max_tree_dimension);
  bool const trees =
      time_trees || d <= std::min(probed_tree_dimension(s.n_reference), max_tree_dimension);
  Bvh<Memory> tree;
  Kokkos::View<Index*, Memory> morton;
  double build_ms = 0, morton_s = 0;
  if (trees) {
    Kokkos::Timer build_timer;
    tree = Bvh<Memory>(space, host_reference, 8);
    space.fence();
    build_ms = build_timer.seconds() * 1e3;
    Kokkos::Timer morton_timer;
    morton = morton_order(space, queries);
    space.fence();
    morton_s = morton_timer.seconds();
  }
  if (time_trees) {
    Index const timed =
        d <= s.full_tree_dimension ? s.n_queries : std::min(s.tree_sample, s.n_queries);
    Index const first = (s.n_queries - timed) / 2;
    auto const window = [&](bool sorted) {
      return gather_queries(space, queries, sorted ? morton : Kokkos::View<Index*, Memory>(),
                                 first, timed);
    };
    auto const unsorted_window = window(false);
    auto const sorted_window = window(true);
    // Brute force's answers for each window, to check the trees against.
    auto const expected_unsorted =
        flatten(find_neighbors(space, reference, unsorted_window, options, BruteForce{}));
    auto const expected_sorted =
        flatten(find_neighbors(space, reference, sorted_window, options, BruteForce{}));
    for (auto const& plan : candidate_plans<Space>(true)) {
      if (!trait_of(plan.strategy, [](auto tag) { return decltype(tag)::walks_tree; }))
        continue;
      auto const& sample = plan.sorted ? sorted_window : unsorted_window;
      std::vector<double> got;
      double const ms = std::visit(
          [&](auto strategy) {
            using Strategy = decltype(strategy);
            if constexpr (!Strategy::walks_tree || !runs_on_v<Strategy, Space>) {
              return 0.0; // not a tree candidate here
            } else {
              return time_ms(std::min(s.repeats, 2), [&] {
                got = flatten(find_neighbors(space, tree, sample, options, strategy));
              });
            }
          },
          plan.strategy);
      bool const exact = got == (plan.sorted ? expected_sorted : expected_unsorted);
      double const full = ms * static_cast<double>(s.n_queries) / static_cast<double>(timed);
      results.push_back({d, "kd " + plan.label(), timed, ms, full, exact ? "yes" : "NO",
                         fmt::format("not included: tree build {:.1f} ms, Morton sort {:.1f} ms",
                                     build_ms, morton_s * 1e3)});
      fmt::print("kd {} {:.3f} ms on {} queries, {:.3f} ms for all, exact {}\n", plan.label(), ms,
                 timed, full, exact ? "yes" : "NO");
      write_tables(s, results);
    }
  }

  // --strategy auto's pick, as the search subcommands make it.
  auto const choice =
      choose_strategy(space, queries, morton, morton_s, s.n_reference, trees,
                           [&](auto strategy, auto const& sample) {
                             if constexpr (decltype(strategy)::walks_tree)
                               find_neighbors(space, tree, sample, options, strategy);
                             else
                               find_neighbors(space, reference, sample, options, strategy);
                           });
  results.push_back({d, "auto: " + choice.plan.label(), s.n_queries, choice.probe_s * 1e3,
                     choice.probe_s * 1e3, "-", "ms: the probe; " + choice.reason});
  fmt::print("auto picked {} after a {:.1f} ms probe: {}\n", choice.plan.label(),
             choice.probe_s * 1e3, choice.reason);
  write_tables(s, results);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app("Brute force against the trees across dimensions (kNN)");
  Settings s;
  app.add_option("--n-reference", s.n_reference)->capture_default_str();
  app.add_option("--n-queries", s.n_queries)->capture_default_str();
  app.add_option("-k", s.k)->capture_default_str();
  app.add_option("--dimensions", s.dimensions)->delimiter(',');
  app.add_option("--tile-dimensions", s.tile_dimensions,
                 "dimensions at which to sweep the tile memory (default: all)")
      ->delimiter(',');
  app.add_option("--tile-mib", s.tile_mib, "brute force tile memory to sweep (MiB)")
      ->delimiter(',');
  app.add_option("--full-tree-dimension", s.full_tree_dimension,
                 "trees run on all queries up to this dimension, on --tree-sample queries beyond")
      ->capture_default_str();
  app.add_option("--tree-sample", s.tree_sample)->capture_default_str();
  app.add_option("--max-tree-dimension", s.max_tree_dimension,
                 "no tree is timed beyond this dimension")
      ->capture_default_str();
  app.add_option("--repeats", s.repeats)->capture_default_str();
  app.add_option("--out", s.out)->capture_default_str();
  app.add_option("--export", s.export_dir,
                 "write raw points and brute force's answers here for brute_torch.py");
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  std::vector<Result> results;
  for (int d : s.dimensions)
    run_dimension(s, d, results);
  return 0;
}
