#pragma once

#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/point_set.hpp>

#include <cstdint>
#include <string>

namespace treetrav::detail {

// Per-dimension extent of a point set: box(k, 0) the least coordinate k,
// box(k, 1) the greatest, both as order-preserving integers (see
// ordered_bits) so that atomic minima and maxima compute them.
template <class MemorySpace>
using BoundingBox = Kokkos::View<std::uint32_t* [2], MemorySpace>;

// The bits of a float as an unsigned integer that orders like the float.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t ordered_bits(Coordinate x) {
  std::uint32_t const bits = float_bits(x);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}
KOKKOS_FORCEINLINE_FUNCTION Coordinate from_ordered_bits(std::uint32_t bits) {
  return bits_float(bits & 0x80000000u ? bits & 0x7fffffffu : ~bits);
}

template <class MemorySpace>
struct EmptyBox {
  BoundingBox<MemorySpace> box;
  KOKKOS_FUNCTION void operator()(int k) const {
    box(k, 0) = ordered_bits(infinity);
    box(k, 1) = ordered_bits(-infinity);
  }
};

// Each work item bounds a run of points, then merges its bounds atomically:
// one pass over the points for all dimensions, and exact (minima and maxima do
// not depend on the order they are taken in).
template <class MemorySpace>
struct GrowBox {
  static constexpr Index run = 256;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  BoundingBox<MemorySpace> box;
  KOKKOS_FUNCTION void operator()(Index chunk) const {
    Index const begin = chunk * run, size = static_cast<Index>(coordinates.extent(0));
    Index const end = size - begin < run ? size : begin + run;
    for (int k = 0; k < static_cast<int>(coordinates.extent(1)); ++k) {
      Coordinate lo = coordinates(begin, k), hi = lo;
      for (Index i = begin + 1; i < end; ++i) {
        Coordinate const x = coordinates(i, k);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
      Kokkos::atomic_fetch_min(&box(k, 0), ordered_bits(lo));
      Kokkos::atomic_fetch_max(&box(k, 1), ordered_bits(hi));
    }
  }
};

// The bounding box of `points`, computed in `space` without a host round trip.
template <class ExecutionSpace, class MemorySpace>
BoundingBox<MemorySpace> bounding_box(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
                                      std::string const& label) {
  int const dimension = points.dimension();
  BoundingBox<MemorySpace> box(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::bounding_box"),
                               dimension);
  Kokkos::parallel_for(label + "::empty_box", Kokkos::RangePolicy<ExecutionSpace>(space, 0, dimension),
                       EmptyBox<MemorySpace>{box});
  Index const chunks = (points.size() + GrowBox<MemorySpace>::run - 1) / GrowBox<MemorySpace>::run;
  Kokkos::parallel_for(label + "::bounding_box", Kokkos::RangePolicy<ExecutionSpace>(space, 0, chunks),
                       GrowBox<MemorySpace>{points.coordinates, box});
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
  int bits;  // per dimension; bits * coded() <= 64

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
    int const n = coded();
    std::uint32_t cell[max_coded];
    for (int k = 0; k < n; ++k) {
      Coordinate const lo = from_ordered_bits(box(k, 0)), extent = from_ordered_bits(box(k, 1)) - lo;
      Coordinate const scaled = extent > 0 ? (x(i, k) - lo) / extent * top : Coordinate(0);
      cell[k] = static_cast<std::uint32_t>(scaled < 0     ? Coordinate(0)
                                           : scaled > top ? top
                                                          : scaled);
    }
    std::uint64_t code = 0;
    for (int b = bits - 1; b >= 0; --b)
      for (int k = 0; k < n; ++k)
        code = code << 1 | (cell[k] >> b & 1u);
    return code;
  }
};

template <class MemorySpace, class Key>
struct MortonCodes {
  MortonEncoder<MemorySpace> encode;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  Kokkos::View<Key*, MemorySpace> codes;
  KOKKOS_FUNCTION void operator()(Index i) const { codes(i) = static_cast<Key>(encode(coordinates, i)); }
};

// The permutation that orders `points` along the Morton curve of `box` at
// `bits` per dimension; ties (equal codes) keep index order, the same on
// every backend. Codes of up to 32 bits are sorted as 32-bit keys.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace> morton_permutation(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
                                                     BoundingBox<MemorySpace> const& box, int bits,
                                                     std::string const& label) {
  MortonEncoder<MemorySpace> encode{box, points.dimension(), bits};
  auto sorted = [&](auto key) {
    using Key = decltype(key);
    Kokkos::View<Key*, MemorySpace> codes(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::morton_codes"),
                                          points.size());
    Kokkos::parallel_for(label + "::morton_codes", Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                         MortonCodes<MemorySpace, Key>{encode, points.coordinates, codes});
    return sort_permutation(space, codes, encode.key_bits(), label);
  };
  return encode.key_bits() <= 32 ? sorted(std::uint32_t{}) : sorted(std::uint64_t{});
}

}  // namespace treetrav::detail
