// Times cudaKDTree (Ingo Wald's header-only CUDA k-d trees) on the data that
// perf/peers/compare.py hands every contender: 3-D float32 rows (.f32).
// This driver is treetrav's own code; cudaKDTree itself is never part of the
// repository: build this file against your checkout, e.g.
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CUDAKDTREE perf/peers/cudakdtree_driver.cu -o cudakdtree_driver
// Phases (medians after warm-ups, CUDA events): build of the left-balanced
// tree (its default) and of the spatial k-d tree; Morton sort of the queries
// (thrust, for the "sorted" runs); kNN (stack-free on the balanced tree,
// stack-based on the spatial one) on queries in input order and sorted;
// radius count (a counting candidate list). Answers are written for the
// cross-check (original point indices, queries in input order).
#include <cukd/builder.h>
#include <cukd/knn.h>

#include <thrust/device_ptr.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t const status = (call);                                                       \
    if (status != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status)); \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

namespace {

constexpr int K = 10;

// A point with its original index in .w, so the balanced tree's in-place
// reordering still names points as the caller numbered them.
struct PointWithIndex {
  using point_t = float3;
  using point_traits = cukd::point_traits<float3>;
  using data_t = float4;
  static inline __host__ __device__ float3 get_point(float4 const& n) { return make_float3(n.x, n.y, n.z); }
  static inline __host__ __device__ float get_coord(float4 const& n, int d) {
    return d == 0 ? n.x : (d == 1 ? n.y : n.z);
  }
  enum { has_explicit_dim = false };
  static inline __host__ __device__ int get_dim(float4 const&) { return -1; }
  static inline __host__ __device__ void set_dim(float4&, int) {}
};

// Counts the candidates within r; the cull distance stays r^2.
struct RadiusCount {
  float radius2;
  int count = 0;
  __device__ float initialCullDist2() const { return radius2; }
  __device__ float processCandidate(int, float dist2) {
    if (dist2 <= radius2) ++count;
    return radius2;
  }
  __device__ float returnValue() const { return radius2; }
};

std::vector<float3> read_rows(std::string const& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    std::exit(2);
  }
  std::size_t const bytes = in.tellg();
  std::vector<float3> rows(bytes / sizeof(float3));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(rows.data()), rows.size() * sizeof(float3));
  return rows;
}

__global__ void add_index(float3 const* points, float4* out, int n) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = make_float4(points[i].x, points[i].y, points[i].z, __int_as_float(i));
}

__device__ unsigned spread(unsigned x) {
  x &= 0x3ff;
  x = (x | x << 16) & 0x30000ff;
  x = (x | x << 8) & 0x300f00f;
  x = (x | x << 4) & 0x30c30c3;
  return (x | x << 2) & 0x9249249;
}

__global__ void morton_codes(float3 const* q, unsigned* codes, int* order, int n, float lo, float scale) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto cell = [&](float x) { return unsigned(fminf(fmaxf((x - lo) * scale, 0.f), 1023.f)); };
  codes[i] = spread(cell(q[i].x)) << 2 | spread(cell(q[i].y)) << 1 | spread(cell(q[i].z));
  order[i] = i;
}

template <class Candidates>
__device__ void write_knn(Candidates const& result, int q, int* indices, float* distances) {
  for (int j = 0; j < K; ++j) {
    indices[q * K + j] = result.get_pointID(j);
    distances[q * K + j] = sqrtf(result.get_dist2(j));
  }
}

__global__ void knn_balanced(float4 const* tree, int n, float3 const* queries, int const* order, int m, int* indices,
                             float* distances) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  int const q = order ? order[i] : i;
  cukd::FixedCandidateList<K> result(INFINITY);
  cukd::stackFree::knn<decltype(result), float4, PointWithIndex>(result, queries[q], tree, n);
  for (int j = 0; j < K; ++j) {
    int const node = result.get_pointID(j);
    indices[q * K + j] = node < 0 ? -1 : __float_as_int(tree[node].w);
    distances[q * K + j] = sqrtf(result.get_dist2(j));
  }
}

__global__ void knn_spatial(cukd::SpatialKDTree<float3> tree, float3 const* queries, int const* order, int m,
                            int* indices, float* distances) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  int const q = order ? order[i] : i;
  cukd::FixedCandidateList<K> result(INFINITY);
  cukd::stackBased::knn<decltype(result), float3>(result, tree, queries[q]);
  write_knn(result, q, indices, distances);
}

__global__ void count_balanced(float4 const* tree, int n, float3 const* queries, int m, float radius2,
                               long long* counts) {
  int const q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= m) return;
  RadiusCount result{radius2};
  cukd::stackFree::knn<RadiusCount, float4, PointWithIndex>(result, queries[q], tree, n);
  counts[q] = result.count;
}

__global__ void count_spatial(cukd::SpatialKDTree<float3> tree, float3 const* queries, int m, float radius2,
                              long long* counts) {
  int const q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= m) return;
  RadiusCount result{radius2};
  cukd::stackBased::knn<RadiusCount, float3>(result, tree, queries[q]);
  counts[q] = result.count;
}

template <class F, class Before>
double median_ms(int warmup, int repeats, F&& f, Before&& before) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> runs;
  for (int r = 0; r < warmup + repeats; ++r) {
    before();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(start));
    f();
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= warmup) runs.push_back(ms);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

template <class F>
double median_ms(int warmup, int repeats, F&& f) {
  return median_ms(warmup, repeats, f, [] {});
}

template <class T>
void dump(std::string const& path, T const* device, std::size_t count) {
  std::vector<T> host(count);
  CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<char const*>(host.data()), count * sizeof(T));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s ref.f32 queries.f32 radius out-prefix [repeats]\n", argv[0]);
    return 2;
  }
  auto const reference = read_rows(argv[1]);
  auto const queries = read_rows(argv[2]);
  float const radius = std::atof(argv[3]);
  std::string const prefix = argv[4];
  int const repeats = argc > 5 ? std::atoi(argv[5]) : 20, warmup = 3;
  int const n = reference.size(), m = queries.size();
  int const block = 128, grid_n = (n + block - 1) / block, grid_m = (m + block - 1) / block;

  float3 *d_reference, *d_queries;
  float4* d_balanced;
  int *d_indices, *d_order;
  float* d_distances;
  unsigned* d_codes;
  long long* d_counts;
  CHECK(cudaMalloc(&d_reference, n * sizeof(float3)));
  CHECK(cudaMalloc(&d_queries, m * sizeof(float3)));
  CHECK(cudaMalloc(&d_balanced, n * sizeof(float4)));
  CHECK(cudaMalloc(&d_indices, std::size_t(m) * K * sizeof(int)));
  CHECK(cudaMalloc(&d_distances, std::size_t(m) * K * sizeof(float)));
  CHECK(cudaMalloc(&d_order, m * sizeof(int)));
  CHECK(cudaMalloc(&d_codes, m * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_counts, m * sizeof(long long)));
  CHECK(cudaMemcpy(d_reference, reference.data(), n * sizeof(float3), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_queries, queries.data(), m * sizeof(float3), cudaMemcpyHostToDevice));

  // Builds: each run starts from the points in input order.
  double const build_balanced = median_ms(warmup, repeats, [&] {
    add_index<<<grid_n, block>>>(d_reference, d_balanced, n);
    cukd::buildTree<float4, PointWithIndex>(d_balanced, n);
  });
  cukd::SpatialKDTree<float3> spatial{};
  bool built = false;
  double const build_spatial = median_ms(
      warmup, repeats, [&] { cukd::buildTree(spatial, d_reference, n); },
      [&] {
        if (built) cukd::free(spatial);
        built = true;
      });

  float lo = 1e30f, hi = -1e30f;
  for (auto const& q : queries) lo = std::min({lo, q.x, q.y, q.z}), hi = std::max({hi, q.x, q.y, q.z});
  float const scale = 1023.f / (hi - lo);
  double const sort = median_ms(warmup, repeats, [&] {
    morton_codes<<<grid_m, block>>>(d_queries, d_codes, d_order, m, lo, scale);
    thrust::sort_by_key(thrust::device_pointer_cast(d_codes), thrust::device_pointer_cast(d_codes + m),
                        thrust::device_pointer_cast(d_order));
  });

  auto const knn_b = [&](int const* order) {
    return median_ms(warmup, repeats, [&] {
      knn_balanced<<<grid_m, block>>>(d_balanced, n, d_queries, order, m, d_indices, d_distances);
    });
  };
  auto const knn_s = [&](int const* order) {
    return median_ms(warmup, repeats, [&] {
      knn_spatial<<<grid_m, block>>>(spatial, d_queries, order, m, d_indices, d_distances);
    });
  };
  double const knn_balanced_unsorted = knn_b(nullptr), knn_balanced_sorted = knn_b(d_order);
  double const knn_spatial_unsorted = knn_s(nullptr), knn_spatial_sorted = knn_s(d_order);
  dump(prefix + ".knn_indices.i32", d_indices, std::size_t(m) * K);
  dump(prefix + ".knn_distances.f32", d_distances, std::size_t(m) * K);
  double const count_b = median_ms(warmup, repeats, [&] {
    count_balanced<<<grid_m, block>>>(d_balanced, n, d_queries, m, radius * radius, d_counts);
  });
  double const count_s = median_ms(warmup, repeats, [&] {
    count_spatial<<<grid_m, block>>>(spatial, d_queries, m, radius * radius, d_counts);
  });
  dump(prefix + ".counts.i64", d_counts, m);

  std::printf(
      "{\"tool\": \"cudaKDTree\", \"n_reference\": %d, \"n_queries\": %d, \"k\": %d, \"radius\": %g,\n"
      " \"phases\": {\"build_balanced\": %.4f, \"build_spatial\": %.4f, \"sort\": %.4f,\n"
      "  \"knn_balanced_unsorted\": %.4f, \"knn_balanced_sorted\": %.4f,\n"
      "  \"knn_spatial_unsorted\": %.4f, \"knn_spatial_sorted\": %.4f,\n"
      "  \"radius_count_balanced\": %.4f, \"radius_count_spatial\": %.4f}}\n",
      n, m, K, radius, build_balanced, build_spatial, sort, knn_balanced_unsorted, knn_balanced_sorted,
      knn_spatial_unsorted, knn_spatial_sorted, count_b, count_s);
  cukd::free(spatial);
  return 0;
}
