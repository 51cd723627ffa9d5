#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <string>

namespace treetrav {

// Row widths the search kernels are compiled for: a point set of dimension d
// is stored in rows of the smallest width >= d, padded with zeros. Padding
// adds exact zeros to every sum, so distances are bit-identical to distance2()
// over the d real coordinates.
inline constexpr int packed_widths[] = {4, 8, 16};
static_assert(packed_widths[2] == max_tree_dimension, "the widest row holds a tree's points");

inline int packed_width(int dimension) {
  for (int width : packed_widths)
    if (dimension <= width)
      return width;
  throw InputError("trees take at most " + std::to_string(max_tree_dimension) +
                   " dimensions (got " + std::to_string(dimension) +
                   "); use --strategy brute (or auto)");
}

// Calls f(std::integral_constant<int, W>) for the packed width W of `width`,
// so the kernels see the row width at compile time.
template <class F>
decltype(auto) dispatch_width(int width, F&& f) {
  switch (width) {
  case 4:
    return f(std::integral_constant<int, 4>{});
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

// A row of W coordinates into registers: 16-byte loads on the GPU (rows are
// 16-byte aligned: W is a multiple of 4 and Views are 64-byte aligned).
template <int W, RowCache Cache = RowCache::read_only>
KOKKOS_FORCEINLINE_FUNCTION void load_row(Coordinate const* row, Coordinate (&out)[W]) {
#if defined(__CUDA_ARCH__)
  static_assert(W % 4 == 0, "rows are loaded as float4");
#pragma unroll
  for (int j = 0; j < W / 4; ++j) {
    float4 const* const at = reinterpret_cast<float4 const*>(row) + j;
    float4 const v = Cache == RowCache::read_only ? __ldg(at) : __ldcg(at);
    out[4 * j] = v.x;
    out[4 * j + 1] = v.y;
    out[4 * j + 2] = v.z;
    out[4 * j + 3] = v.w;
  }
#else
  Coordinate const volatile* source = row; // coherent: re-read, never cached
  for (int k = 0; k < W; ++k)
    out[k] = Cache == RowCache::read_only ? row[k] : source[k];
#endif
}

// Stores a row of W coordinates, as float4s on the GPU: one 16-byte store
// per four values instead of four scattered 4-byte ones.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void store_row(Coordinate* row, Coordinate const (&in)[W]) {
#if defined(__CUDA_ARCH__)
  static_assert(W % 4 == 0, "rows are stored as float4");
#pragma unroll
  for (int j = 0; j < W / 4; ++j)
    reinterpret_cast<float4*>(row)[j] =
        make_float4(in[4 * j], in[4 * j + 1], in[4 * j + 2], in[4 * j + 3]);
#else
  for (int k = 0; k < W; ++k)
    row[k] = in[k];
#endif
}

// distance2() over padded rows: the same sum, in the same order.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION Coordinate row_distance2(Coordinate const (&a)[W],
                                                     Coordinate const (&b)[W]) {
  Coordinate sum = 0;
#pragma unroll
  for (int k = 0; k < W; ++k)
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

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate distance2(Index p, Coordinate const (&q)[W]) const {
    Coordinate row[W];
    detail::load_row<W>(&rows(p, 0), row);
    return detail::row_distance2<W>(row, q);
  }

  template <class F>
  void for_each_field(F&& f) {
    f(rows);
    f(original_index);
  }
};

} // namespace treetrav
