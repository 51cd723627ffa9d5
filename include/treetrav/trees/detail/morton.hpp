#pragma once

#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/point_set.hpp>

#include <cstdint>
#include <string>

namespace treetrav::detail {

// Per-dimension extent of a point set: box(k).min_val, box(k).max_val.
template <class MemorySpace>
using BoundingBox = Kokkos::View<Kokkos::MinMaxScalar<Coordinate>*, MemorySpace>;

template <class MemorySpace>
struct ColumnMinMax {
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  int column;
  KOKKOS_FUNCTION void operator()(Index i, Kokkos::MinMaxScalar<Coordinate>& extent) const {
    Coordinate const x = coordinates(i, column);
    if (x < extent.min_val)
      extent.min_val = x;
    if (x > extent.max_val)
      extent.max_val = x;
  }
};

// The bounding box of `points`, computed in `space` without a host round trip
// (each reduction writes straight into device memory).
template <class ExecutionSpace, class MemorySpace>
BoundingBox<MemorySpace> bounding_box(ExecutionSpace const& space,
                                      PointSet<MemorySpace> const& points,
                                      std::string const& label) {
  int const dimension = points.dimension();
  BoundingBox<MemorySpace> box(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::bounding_box"), dimension);
  using Result =
      Kokkos::View<Kokkos::MinMaxScalar<Coordinate>, MemorySpace, Kokkos::MemoryUnmanaged>;
  for (int k = 0; k < dimension; ++k)
    Kokkos::parallel_reduce(label + "::bounding_box",
                            Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                            ColumnMinMax<MemorySpace>{points.coordinates, k},
                            Kokkos::MinMax<Coordinate, MemorySpace>(Result(box.data() + k)));
  return box;
}

// Morton (Z-order) codes over a box: `bits` bits per dimension, interleaved
// from the most significant, dimension 0 first. Coordinates outside the box
// are clamped to it (queries may lie outside the reference points' box).
// Float arithmetic without contractible multiply-adds, so host and device
// compute the same codes.
template <class MemorySpace>
struct MortonEncoder {
  BoundingBox<MemorySpace> box;
  int dimension;
  int bits;

  static int bits_per_dimension(int dimension) {
    return dimension > 21 ? 1 : 63 / dimension > 21 ? 21 : 63 / dimension;
  }
  int key_bits() const { return bits * dimension; }

  template <class Coordinates>
  KOKKOS_FUNCTION std::uint64_t operator()(Coordinates const& x, Index i) const {
    Coordinate const top = static_cast<Coordinate>((std::uint32_t(1) << bits) - 1);
    std::uint32_t cell[max_dimension];
    for (int k = 0; k < dimension; ++k) {
      Coordinate const lo = box(k).min_val, extent = box(k).max_val - box(k).min_val;
      Coordinate const scaled = extent > 0 ? (x(i, k) - lo) / extent * top : Coordinate(0);
      cell[k] = static_cast<std::uint32_t>(scaled < 0     ? Coordinate(0)
                                           : scaled > top ? top
                                                          : scaled);
    }
    std::uint64_t code = 0;
    for (int b = bits - 1; b >= 0; --b)
      for (int k = 0; k < dimension; ++k)
        code = code << 1 | (cell[k] >> b & 1u);
    return code;
  }
};

template <class MemorySpace>
struct MortonCodes {
  MortonEncoder<MemorySpace> encode;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  Kokkos::View<std::uint64_t*, MemorySpace> codes;
  KOKKOS_FUNCTION void operator()(Index i) const { codes(i) = encode(coordinates, i); }
};

// The permutation that orders `points` along the Morton curve of `box`; ties
// (equal codes) keep index order, the same on every backend.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace>
morton_permutation(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
                   BoundingBox<MemorySpace> const& box, std::string const& label) {
  int const dimension = points.dimension();
  MortonEncoder<MemorySpace> encode{box, dimension,
                                    MortonEncoder<MemorySpace>::bits_per_dimension(dimension)};
  Kokkos::View<std::uint64_t*, MemorySpace> codes(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::morton_codes"),
      points.size());
  Kokkos::parallel_for(label + "::morton_codes",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                       MortonCodes<MemorySpace>{encode, points.coordinates, codes});
  return sort_permutation(space, codes, encode.key_bits(), label);
}

} // namespace treetrav::detail
