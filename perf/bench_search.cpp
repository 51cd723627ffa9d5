// treetrav's side of the search benchmark (perf/peers/compare.py runs it
// beside the peers on the same data): each phase of a batch kNN / radius job
// on the default execution space, medians over repeats after warm-ups.
//
//   bench_search --reference ref.f32 --queries q.f32 --dimension 3 -k 10 --radius 1.336 \
//                --repeats 20 --json out.json --dump out-prefix
//
// Inputs are raw little-endian float32, row-major (n x d), as numpy's tofile()
// writes them, or treetrav HDF5 point files. Phases:
//   build            Bvh construction from points already in device memory
//   sort             Morton order of the queries (device radix sort)
//   knn_sorted       sort + kNN (the sort inside the call, counted)
//   knn_presorted    kNN alone, queries in a Morton order computed beforehand
//   knn_unsorted     kNN, queries in input order
//   end_to_end       build + sort + kNN
//   radius_count     radius counts, sort counted; radius_count_unsorted
//   radius_search    neighbour lists (CSR), sort counted
// --dump writes the answers (prefix.knn_indices.i32 (n x k), .knn_distances.f32,
// .counts.i64, .list_offsets.i64, .list_indices.i32) for the cross-checks.
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/trees/bvh.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

io::HostPointSet read_input(std::string const& path, int dimension) {
  if (path.size() < 4 || path.substr(path.size() - 4) != ".f32")
    return io::read_points(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  auto const bytes = static_cast<std::size_t>(in.tellg());
  if (dimension < 1 || bytes % (sizeof(float) * dimension) != 0)
    throw std::runtime_error(path + ": size is not a multiple of --dimension rows");
  Index const n = static_cast<Index>(bytes / (sizeof(float) * dimension));
  std::vector<float> rows(std::size_t(n) * dimension);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(rows.data()), static_cast<std::streamsize>(bytes));
  auto points = allocate_points<Kokkos::HostSpace>("bench::input", n, dimension);
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < dimension; ++k)
      points.coordinates(i, k) = rows[std::size_t(i) * dimension + k];
  return points;
}

template <class View>
void dump(std::string const& path, View const& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  std::ofstream out(path, std::ios::binary);
  out.write(
      reinterpret_cast<char const*>(host.data()),
      static_cast<std::streamsize>(host.span() * sizeof(typename decltype(host)::value_type)));
}

struct Timing {
  std::vector<double> seconds;
  double median() const {
    auto sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? 0 : sorted[sorted.size() / 2];
  }
};

// Runs `phase` warmup + repeats times, the device fenced around each run.
Timing time_phase(int warmup, int repeats, std::function<void()> const& phase) {
  Space space;
  Timing timing;
  for (int r = 0; r < warmup + repeats; ++r) {
    space.fence();
    Kokkos::Timer timer;
    phase();
    space.fence();
    if (r >= warmup)
      timing.seconds.push_back(timer.seconds());
  }
  return timing;
}

template <class Strategy>
void run(CLI::App const&, std::string const& reference_path, std::string const& queries_path,
         int dimension, int k, float radius, int leaf_size, int warmup, int repeats,
         std::string const& dump_prefix, std::vector<std::string> const& phases,
         nlohmann::json& report) {
  Space space;
  auto const host_reference = read_input(reference_path, dimension);
  auto const host_queries = read_input(queries_path, dimension);
  auto const reference = copy_points(space, host_reference, "bench::reference");
  auto const queries = copy_points(space, host_queries, "bench::queries");
  report["device"] = describe_execution_space<Space>();
  report["threads"] = space.concurrency();
  report["n_reference"] = reference.size();
  report["n_queries"] = queries.size();
  report["dimension"] = reference.dimension();
  report["k"] = k;
  report["radius"] = radius;
  report["leaf_size"] = leaf_size;
  report["strategy"] = Strategy::name;
  auto wanted = [&](std::string const& phase) {
    return phases.empty() || std::find(phases.begin(), phases.end(), phase) != phases.end();
  };
  auto record = [&](std::string const& phase, Timing const& timing) {
    report["phases"][phase] = {{"median_ms", 1e3 * timing.median()}, {"runs_ms", timing.seconds}};
    for (auto& s : report["phases"][phase]["runs_ms"])
      s = 1e3 * s.get<double>();
    fmt::print("{:<24} {:9.3f} ms\n", phase, 1e3 * timing.median());
  };

  Bvh<Memory> tree(space, reference, leaf_size);
  if (wanted("build"))
    record("build",
           time_phase(warmup, repeats, [&] { Bvh<Memory> fresh(space, reference, leaf_size); }));
  Kokkos::View<Index*, Memory> order;
  if (wanted("sort"))
    record("sort", time_phase(warmup, repeats, [&] { order = morton_order(space, queries); }));
  if (order.extent(0) == 0)
    order = morton_order(space, queries);
  NeighborOptions const sorted{k, false, QueryOrder::sfc}, unsorted{k, false, QueryOrder::none};
  NeighborResults<Memory> neighbors;
  if (wanted("knn_sorted"))
    record("knn_sorted", time_phase(warmup, repeats, [&] {
             neighbors = find_neighbors(space, tree, queries, sorted, Strategy{});
           }));
  if (wanted("knn_presorted"))
    record("knn_presorted", time_phase(warmup, repeats, [&] {
             neighbors = find_neighbors(space, tree, queries, unsorted, Strategy{}, order);
           }));
  if (wanted("knn_unsorted"))
    record("knn_unsorted", time_phase(warmup, repeats, [&] {
             neighbors = find_neighbors(space, tree, queries, unsorted, Strategy{});
           }));
  if (wanted("end_to_end"))
    record("end_to_end", time_phase(warmup, repeats, [&] {
             Bvh<Memory> fresh(space, reference, leaf_size);
             neighbors = find_neighbors(space, fresh, queries, sorted, Strategy{});
           }));
  Kokkos::View<std::int64_t*, Memory> counts;
  if (wanted("radius_count"))
    record(
        "radius_count", time_phase(warmup, repeats, [&] {
          counts = count_within(space, tree, queries, {radius, false, QueryOrder::sfc}, Strategy{});
        }));
  if (wanted("radius_count_unsorted"))
    record("radius_count_unsorted", time_phase(warmup, repeats, [&] {
             counts =
                 count_within(space, tree, queries, {radius, false, QueryOrder::none}, Strategy{});
           }));
  RadiusResults<Memory> lists;
  if (wanted("radius_search"))
    record("radius_search", time_phase(warmup, repeats, [&] {
             lists = find_within(space, tree, queries, {{radius, false, QueryOrder::sfc}, 0},
                                 Strategy{});
           }));
  if (!dump_prefix.empty()) {
    if (neighbors.indices.extent(0) != 0) {
      dump(dump_prefix + ".knn_indices.i32", neighbors.indices);
      dump(dump_prefix + ".knn_distances.f32", neighbors.distances);
    }
    if (counts.extent(0) != 0)
      dump(dump_prefix + ".counts.i64", counts);
    if (lists.offsets.extent(0) != 0) {
      dump(dump_prefix + ".list_offsets.i64", lists.offsets);
      dump(dump_prefix + ".list_indices.i32", lists.indices);
    }
  }
}

} // namespace

int main(int argc, char* argv[]) {
  CLI::App app{
      "treetrav search benchmark: build, sort, kNN and radius phases on one execution space"};
  std::string reference, queries, json_path, dump_prefix, strategy = "autoropes";
  // The library's leaf size unless --leaf-size names one (default_leaf_size).
  int dimension = 3, k = 10, leaf_size = default_leaf_size, warmup = 3, repeats = 20;
  float radius = 1.0f;
  std::vector<std::string> phases;
  app.add_option("--reference", reference, "Reference points (.f32 raw rows or HDF5)")->required();
  app.add_option("--queries", queries, "Query points (.f32 raw rows or HDF5)")->required();
  app.add_option("--dimension", dimension, "Columns of the .f32 inputs")->capture_default_str();
  app.add_option("-k", k, "Neighbours per query")->capture_default_str();
  app.add_option("--radius", radius, "Radius of the radius phases")->capture_default_str();
  app.add_option("--leaf-size", leaf_size, "Leaf size of the BVH")->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed runs before the timed ones")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed runs (the median is reported)")
      ->capture_default_str();
  app.add_option("--strategy", strategy, "Traversal strategy: autoropes, lockstep or fsm")
      ->capture_default_str();
  app.add_option("--phases", phases, "Phases to time (default: all)");
  app.add_option("--json", json_path, "Write the timings here");
  app.add_option("--dump", dump_prefix, "Write the last answers to files with this prefix");
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  nlohmann::json report;
  try {
    auto const go = [&](auto tag) {
      run<decltype(tag)>(app, reference, queries, dimension, k, radius, leaf_size, warmup, repeats,
                         dump_prefix, phases, report);
    };
    if (strategy == "autoropes")
      go(Autoropes{});
    else if (strategy == "lockstep")
      go(Lockstep{});
    else if (strategy == "fsm")
      go(FsmLockstep{});
    else
      throw std::invalid_argument("--strategy: autoropes, lockstep or fsm (got " + strategy + ")");
  } catch (std::exception const& e) {
    fmt::print(stderr, "bench_search: {}\n", e.what());
    return 2;
  }
  if (!json_path.empty())
    std::ofstream(json_path) << report.dump(2) << "\n";
  return 0;
}
