#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <string>

namespace treetrav {

// Rows a tree stores its points in: a point set of dimension d is stored in
// rows of the smallest width that holds it, padded with zeros. A row of 4
// floats holds up to 3 coordinates: one 16-byte load, and kernels compare the
// 3 coordinates alone (a register and a term per distance less than with the
// padding). Padding adds exact
// zeros to every sum, so distances are bit-identical to distance2() over the
// d real coordinates.
inline constexpr int packed_widths[] = {4, 8, 16};
static_assert(packed_widths[2] == max_tree_dimension, "the widest row holds a tree's points");

// The coordinates a row of `width` floats holds, and the row that holds W.
KOKKOS_INLINE_FUNCTION constexpr int row_capacity(int width) {
  return width == 4 ? 3 : width;
}
KOKKOS_INLINE_FUNCTION constexpr int row_stride(int coordinates) {
  return coordinates <= 3 ? 4 : (coordinates + 3) / 4 * 4;
}

inline int packed_width(int dimension) {
  for (int width : packed_widths)
    if (dimension <= row_capacity(width))
      return width;
  throw InputError("trees take at most " + std::to_string(max_tree_dimension) +
                   " dimensions (got " + std::to_string(dimension) +
                   "); the brute-force strategy (brute, or auto) searches at any dimension");
}

// Calls f(std::integral_constant<int, W>) with the coordinates W a row of
// `width` holds (3, 8 or 16), so the kernels see them at compile time. Every
// kernel reads and writes rows of row_stride(W) floats.
template <class F>
decltype(auto) dispatch_width(int width, F&& f) {
  switch (width) {
  case 4:
    return f(std::integral_constant<int, row_capacity(4)>{});
  case 8:
    return f(std::integral_constant<int, 8>{});
  case 16:
    return f(std::integral_constant<int, 16>{});
  default:
    throw std::logic_error("unsupported packed row width " + std::to_string(width));
  }
}

namespace detail {

// Where a row load reads from: the read-only cache (data no thread of the
// running kernel writes), or L2 past the GPU's non-coherent L1 (a row another
// thread of the same kernel wrote, after a fence said it is complete).
enum class RowCache { read_only, coherent };

// A row's W coordinates into registers: 16-byte loads of the whole row on
// the GPU (rows are 16-byte aligned: row_stride(W) is a multiple of 4 and
// Views are 64-byte aligned).
template <int W, RowCache Cache = RowCache::read_only>
KOKKOS_FORCEINLINE_FUNCTION void load_row(Coordinate const* row, Coordinate (&out)[W]) {
#if defined(__CUDA_ARCH__)
  constexpr int stride = row_stride(W);
#pragma unroll
  for (int j = 0; j < stride / 4; ++j) {
    float4 const* const at = reinterpret_cast<float4 const*>(row) + j;
    float4 const v = Cache == RowCache::read_only ? __ldg(at) : __ldcg(at);
    float const lanes[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (4 * j + i < W)
        out[4 * j + i] = lanes[i];
  }
#else
  Coordinate const volatile* source = row; // coherent: re-read, never cached
  for (int k = 0; k < W; ++k)
    out[k] = Cache == RowCache::read_only ? row[k] : source[k];
#endif
}

// Stores W coordinates as a whole row, zeros after them, as float4s on the
// GPU: one 16-byte store per four values instead of four scattered 4-byte ones.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void store_row(Coordinate* row, Coordinate const (&in)[W]) {
  constexpr int stride = row_stride(W);
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (int j = 0; j < stride / 4; ++j) {
    float lanes[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      lanes[i] = 4 * j + i < W ? in[4 * j + i] : Coordinate(0);
    reinterpret_cast<float4*>(row)[j] = make_float4(lanes[0], lanes[1], lanes[2], lanes[3]);
  }
#else
  for (int k = 0; k < stride; ++k)
    row[k] = k < W ? in[k] : Coordinate(0);
#endif
}

// distance2() over padded rows: the same sum, in the same order (its first
// term starts from the square itself, which 0 + square equals exactly).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION Coordinate row_distance2(Coordinate const (&a)[W],
                                                     Coordinate const (&b)[W]) {
  Coordinate sum = square(a[0] - b[0]);
#pragma unroll
  for (int k = 1; k < W; ++k)
    sum = add_square(sum, a[k] - b[k]);
  return sum;
}

// The query's row: its d coordinates, then zeros.
template <int W, class Coordinates>
KOKKOS_FORCEINLINE_FUNCTION void load_query(Coordinates const& x, Index i, Coordinate (&q)[W]) {
  int const dimension = static_cast<int>(x.extent(1));
#pragma unroll
  for (int k = 0; k < W; ++k)
    q[k] = k < dimension ? x(i, k) : Coordinate(0);
}

} // namespace detail

// The search trees' (BVH, ball, vp) leaf size unless the caller names one: the
// fastest kNN of the leaf-size sweeps on the GPU and on host cores
// (perf/results/search/README.md).
inline constexpr int default_leaf_size = 40;

// A tree's own copy of its points, in tree order, one zero-padded row of
// `width()` coordinates per point (what a leaf visit reads is contiguous);
// original_index maps a row back to the caller's point.
template <class MemorySpace>
struct PackedPoints {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "PackedPoints needs a Kokkos memory space");
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> rows; // (n, width)
  Kokkos::View<Index*, MemorySpace> original_index;
  int dimension = 0;

  KOKKOS_FUNCTION Index size() const { return static_cast<Index>(rows.extent(0)); }
  KOKKOS_FUNCTION int width() const { return static_cast<int>(rows.extent(1)); }

  // Rows are row_stride(W) apart (W: what dispatch_width() gave for width()):
  // the compile-time stride saves the 64-bit multiply by the View's stride.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate distance2(Index p, Coordinate const (&q)[W]) const {
    Coordinate row[W];
    detail::load_row<W>(rows.data() + std::size_t(p) * row_stride(W), row);
    return detail::row_distance2<W>(row, q);
  }

  template <class F>
  void for_each_field(F&& f) {
    f(rows);
    f(original_index);
  }
};

} // namespace treetrav
