// Times ArborX (Kokkos, linear BVH) on the data that perf/peers/compare.py
// hands every contender: 3-D float32 rows (.f32). This driver is treetrav's
// own code; ArborX and the Kokkos 4 it needs are never part of the
// repository: build this file against your installs, e.g.
//   $KOKKOS/bin/nvcc_wrapper -O3 -std=c++17 -arch=sm_90 --expt-extended-lambda \
//     -I$ARBORX/include -I$KOKKOS/include perf/peers/arborx_driver.cpp -o arborx_driver \
//     -L$KOKKOS/lib -lkokkoscontainers -lkokkoscore -lcuda -ldl
// With CUDA 13, Kokkos develop (4.6.99) built with its default mdspan-based View
// made ArborX's BVH construction write out of bounds (compute-sanitizer: the
// scene's bounding-box reduction); built with -DKokkos_ENABLE_IMPL_VIEW_LEGACY=ON
// -DKokkos_ENABLE_IMPL_MDSPAN=OFF it runs clean. Each phase is named on stderr
// as it starts, so a failure says where.
// Phases (medians after warm-ups, the device fenced around each run):
// BVH construction; kNN with ArborX's own predicate sorting (Morton order
// inside the call) and without; radius count through a callback (sorted and
// not); radius search returning CSR lists. Answers are written for the
// cross-check (queries in input order).
#include <ArborX.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Point = ArborX::Point<3>;

Kokkos::View<Point*, MemorySpace> read_rows(std::string const& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    std::exit(2);
  }
  std::size_t const bytes = in.tellg();
  std::vector<float> values(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), bytes);
  Kokkos::View<Point*, Kokkos::HostSpace> host("points", values.size() / 3);
  for (std::size_t i = 0; i < host.size(); ++i) host(i) = Point{values[3 * i], values[3 * i + 1], values[3 * i + 2]};
  return Kokkos::create_mirror_view_and_copy(MemorySpace{}, host);
}

struct ExtractIndex {
  template <class Predicate, class Value, class Output>
  KOKKOS_FUNCTION void operator()(Predicate const&, Value const& value, Output const& out) const {
    out(value.index);
  }
};

struct CountCallback {
  Kokkos::View<long long*, MemorySpace> counts;
  template <class Query, class Value>
  KOKKOS_FUNCTION void operator()(Query const& query, Value const&) const {
    Kokkos::atomic_inc(&counts(ArborX::getData(query)));
  }
};

template <class F>
double median_ms(int warmup, int repeats, F&& f) {
  ExecutionSpace space;
  std::vector<double> runs;
  for (int r = 0; r < warmup + repeats; ++r) {
    space.fence();
    auto const start = std::chrono::steady_clock::now();
    f();
    space.fence();
    auto const end = std::chrono::steady_clock::now();
    if (r >= warmup) runs.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

template <class View>
void dump(std::string const& path, View const& view) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<char const*>(host.data()), host.size() * sizeof(typename View::value_type));
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s ref.f32 queries.f32 k radius out-prefix [repeats]\n", argv[0]);
    return 2;
  }
  ExecutionSpace space;
  auto const points = read_rows(argv[1]);
  auto const queries = read_rows(argv[2]);
  int const k = std::atoi(argv[3]);
  float const radius = std::atof(argv[4]);
  std::string const prefix = argv[5];
  int const repeats = argc > 6 ? std::atoi(argv[6]) : 20, warmup = 3;
  int const m = queries.size();

  auto const phase = [](char const* name) { std::fprintf(stderr, "arborx_driver: %s\n", name); };
  phase("build");
  double const build = median_ms(warmup, repeats, [&] {
    ArborX::BoundingVolumeHierarchy bvh(space, ArborX::Experimental::attach_indices(points));
  });
  ArborX::BoundingVolumeHierarchy bvh(space, ArborX::Experimental::attach_indices(points));

  Kokkos::View<int*, MemorySpace> indices("indices", 0), offsets("offsets", 0);
  auto const nearest = ArborX::Experimental::make_nearest(queries, k);
  auto const knn = [&](bool sorted) {
    return median_ms(warmup, repeats, [&] {
      ArborX::query(bvh, space, nearest, ExtractIndex{}, indices, offsets,
                    ArborX::Experimental::TraversalPolicy().setPredicateSorting(sorted));
    });
  };
  phase("knn");
  double const knn_unsorted = knn(false), knn_sorted = knn(true);
  dump(prefix + ".knn_indices.i32", indices);
  phase("end_to_end");
  double const end_to_end = median_ms(warmup, repeats, [&] {
    ArborX::BoundingVolumeHierarchy fresh(space, ArborX::Experimental::attach_indices(points));
    ArborX::query(fresh, space, nearest, ExtractIndex{}, indices, offsets);
  });

  Kokkos::View<long long*, MemorySpace> counts("counts", m);
  auto const spheres = ArborX::Experimental::attach_indices<int>(ArborX::Experimental::make_intersects(queries, radius));
  auto const count = [&](bool sorted) {
    return median_ms(warmup, repeats, [&] {
      Kokkos::deep_copy(space, counts, 0);
      bvh.query(space, spheres, CountCallback{counts},
                ArborX::Experimental::TraversalPolicy().setPredicateSorting(sorted));
    });
  };
  phase("radius_count");
  double const count_unsorted = count(false), count_sorted = count(true);
  dump(prefix + ".counts.i64", counts);
  auto const within = ArborX::Experimental::make_intersects(queries, radius);
  phase("radius_search");
  double const search = median_ms(warmup, repeats, [&] {
    ArborX::query(bvh, space, within, ExtractIndex{}, indices, offsets);
  });
  dump(prefix + ".list_offsets.i32", offsets);
  dump(prefix + ".list_indices.i32", indices);

  std::printf(
      "{\"tool\": \"ArborX\", \"n_reference\": %d, \"n_queries\": %d, \"k\": %d, \"radius\": %g,\n"
      " \"phases\": {\"build\": %.4f, \"knn_unsorted\": %.4f, \"knn_sorted\": %.4f, \"end_to_end\": %.4f,\n"
      "  \"radius_count_unsorted\": %.4f, \"radius_count_sorted\": %.4f, \"radius_search\": %.4f}}\n",
      int(points.size()), m, k, radius, build, knn_unsorted, knn_sorted, end_to_end, count_unsorted, count_sorted,
      search);
  return 0;
}
