#pragma once

#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/point_set.hpp>

#include <cstdint>
#include <string>

namespace treetrav::detail {

// Per-dimension extent of a point set: box(k) the least coordinate k,
// box(dimension + k) the greatest.
template <class MemorySpace>
using BoundingBox = Kokkos::View<Coordinate*, MemorySpace>;

// The extremes of every dimension as one array reduction over the points
// (minima, then maxima): a GPU block reduces in shared memory, blocks
// combine in the kernel, and the result lands in device memory without a
// host round trip. Exact: minima and maxima do not depend on the order.
template <class MemorySpace>
struct BoxReduction {
  using value_type = Coordinate[];
  using size_type = int;
  int value_count; // 2 * dimension
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;

  KOKKOS_FUNCTION void init(value_type bounds) const {
    for (int k = 0; k < value_count / 2; ++k) {
      bounds[k] = infinity;
      bounds[value_count / 2 + k] = -infinity;
    }
  }
  KOKKOS_FUNCTION void join(TREETRAV_JOIN_ARGUMENT value_type bounds,
                            TREETRAV_JOIN_ARGUMENT value_type const other) const {
    for (int k = 0; k < value_count / 2; ++k) {
      int const hi = value_count / 2 + k;
      bounds[k] = other[k] < bounds[k] ? other[k] : bounds[k];
      bounds[hi] = other[hi] > bounds[hi] ? other[hi] : bounds[hi];
    }
  }
  KOKKOS_FUNCTION void operator()(Index i, value_type bounds) const {
    for (int k = 0; k < value_count / 2; ++k) {
      Coordinate const x = coordinates(i, k);
      int const hi = value_count / 2 + k;
      bounds[k] = x < bounds[k] ? x : bounds[k];
      bounds[hi] = x > bounds[hi] ? x : bounds[hi];
    }
  }
};

// The bounding box of `points`, computed in `space` without a host round trip.
template <class ExecutionSpace, class MemorySpace>
BoundingBox<MemorySpace> bounding_box(ExecutionSpace const& space,
                                      PointSet<MemorySpace> const& points,
                                      std::string const& label) {
  int const dimension = points.dimension();
  BoundingBox<MemorySpace> box(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::bounding_box"),
      2 * dimension);
  Kokkos::parallel_reduce(label + "::bounding_box",
                          Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                          BoxReduction<MemorySpace>{2 * dimension, points.coordinates}, box);
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
  int bits; // per dimension; bits * coded() <= 64

  // A 64-bit code holds one bit of at most 64 coordinates: the first 64 are
  // coded, further ones would not refine it.
  static constexpr int max_coded = 64;

  static int bits_per_dimension(int dimension) {
    return dimension > 21 ? 1 : 63 / dimension > 21 ? 21 : 63 / dimension;
  }
  KOKKOS_FUNCTION int coded() const { return dimension < max_coded ? dimension : max_coded; }
  int key_bits() const { return bits * coded(); }

  template <class Coordinates>
  KOKKOS_FUNCTION std::uint64_t operator()(Coordinates const& x, Index i) const {
    Coordinate const top = static_cast<Coordinate>((std::uint32_t(1) << bits) - 1);
    // Bit b of coordinate k's cell goes to bit b * n + (n - 1 - k) (no
    // per-dimension array: one indexed at run time lives in local memory).
    int const n = coded();
    std::uint64_t code = 0;
    for (int k = 0; k < n; ++k) {
      Coordinate const lo = box(k), extent = box(dimension + k) - lo;
      Coordinate const scaled = extent > 0 ? (x(i, k) - lo) / extent * top : Coordinate(0);
      std::uint32_t const cell = static_cast<std::uint32_t>(scaled < 0     ? Coordinate(0)
                                                            : scaled > top ? top
                                                                           : scaled);
      for (int b = 0; b < bits; ++b)
        code |= std::uint64_t(cell >> b & 1u) << (b * n + (n - 1 - k));
    }
    return code;
  }
};

template <class MemorySpace, class Key>
struct MortonCodes {
  MortonEncoder<MemorySpace> encode;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  Kokkos::View<Key*, MemorySpace> codes;
  KOKKOS_FUNCTION void operator()(Index i) const {
    codes(i) = static_cast<Key>(encode(coordinates, i));
  }
};

// The permutation that orders `points` along the Morton curve of `box` at
// `bits` per dimension; ties (equal codes) keep index order, the same on
// every backend. Codes of up to 32 bits are sorted as 32-bit keys.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace>
morton_permutation(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
                   BoundingBox<MemorySpace> const& box, int bits, std::string const& label) {
  MortonEncoder<MemorySpace> encode{box, points.dimension(), bits};
  auto sorted = [&](auto key) {
    using Key = decltype(key);
    Kokkos::View<Key*, MemorySpace> codes(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::morton_codes"),
        points.size());
    Kokkos::parallel_for(label + "::morton_codes",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                         MortonCodes<MemorySpace, Key>{encode, points.coordinates, codes});
    return sort_permutation(space, codes, encode.key_bits(), label);
  };
  return encode.key_bits() <= 32 ? sorted(std::uint32_t{}) : sorted(std::uint64_t{});
}

} // namespace treetrav::detail
