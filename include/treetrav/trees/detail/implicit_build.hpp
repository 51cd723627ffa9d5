#pragma once

#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/morton.hpp>
#include <treetrav/trees/implicit_topology.hpp>
#include <treetrav/trees/packed_points.hpp>

#include <string>
#include <type_traits>

namespace treetrav::detail {

// The reference points in the memory of `space`: the caller's View when it
// is already there (points on the device never round-trip through the host).
template <class ExecutionSpace, class PointMemorySpace>
PointSet<typename ExecutionSpace::memory_space> points_for(ExecutionSpace const& space,
                                                           PointSet<PointMemorySpace> const& points,
                                                           std::string const& label) {
  if constexpr (std::is_same_v<PointMemorySpace, typename ExecutionSpace::memory_space>)
    return points;
  else
    return copy_points(space, points, label + "::input");
}

// Row p of the packed points is the caller's point permutation(p).
template <class MemorySpace>
struct GatherRows {
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> source;
  Kokkos::View<Index*, MemorySpace> permutation;
  PackedPoints<MemorySpace> packed;
  KOKKOS_FUNCTION void operator()(Index p) const {
    Index const from = permutation(p);
    for (int k = 0; k < packed.width(); ++k)
      packed.rows(p, k) = k < packed.dimension ? source(from, k) : 0;
    packed.original_index(p) = from;
  }
};

template <class ExecutionSpace, class MemorySpace>
PackedPoints<MemorySpace>
pack_points(ExecutionSpace const& space, PointSet<MemorySpace> const& points,
            Kokkos::View<Index*, MemorySpace> permutation, std::string const& label) {
  PackedPoints<MemorySpace> packed;
  packed.dimension = points.dimension();
  packed.rows = decltype(packed.rows)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::rows"), points.size(),
      packed_width(points.dimension()));
  packed.original_index = permutation;
  Kokkos::parallel_for(label + "::pack_points",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                       GatherRows<MemorySpace>{points.coordinates, permutation, packed});
  return packed;
}

// Per-node axis-aligned boxes of an implicit tree: row node + 1 holds the
// node's W lower bounds, then its W upper bounds (rows shifted by one so that
// the two children of a node, rows 2i + 2 and 2i + 3, share one aligned
// 2-row block). An empty leaf's box is empty (+inf lower, -inf upper).
template <class MemorySpace>
using NodeBoxes = Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace>;

template <class MemorySpace>
struct LeafBoxes {
  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
  KOKKOS_FUNCTION void operator()(Index j) const {
    Index const node = topology.first_leaf() + j;
    int const width = points.width();
    for (int k = 0; k < width; ++k) {
      Coordinate lo = infinity, hi = -infinity;
      for (Index p = topology.level_point(topology.levels, j);
           p < topology.level_point(topology.levels, j + 1); ++p) {
        Coordinate const x = points.rows(p, k);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
      boxes(node + 1, k) = lo;
      boxes(node + 1, width + k) = hi;
    }
  }
};

template <class MemorySpace>
struct UnionOfChildren {
  NodeBoxes<MemorySpace> boxes;
  Index level_first;
  int width;
  KOKKOS_FUNCTION void operator()(Index j) const {
    Index const node = level_first + j, left = 2 * node + 2, right = left + 1;
    for (int k = 0; k < width; ++k) {
      Coordinate const lo_a = boxes(left, k), lo_b = boxes(right, k);
      Coordinate const hi_a = boxes(left, width + k), hi_b = boxes(right, width + k);
      boxes(node + 1, k) = lo_b < lo_a ? lo_b : lo_a;
      boxes(node + 1, width + k) = hi_b > hi_a ? hi_b : hi_a;
    }
  }
};

// What the kd-tree and the ball tree share: the points sorted along the
// Morton curve of their bounding box, cut evenly into 2^levels leaves of at
// most `leaf_size` points, and a tight box per node. Built entirely in
// `space` by the same code on every backend, and deterministic (sort ties by
// index; boxes are exact minima and maxima), so every backend builds the same
// tree.
template <class MemorySpace>
struct MortonSkeleton {
  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
};

template <class ExecutionSpace, class MemorySpace>
MortonSkeleton<MemorySpace> build_morton_skeleton(ExecutionSpace const& space,
                                                  PointSet<MemorySpace> const& points,
                                                  int leaf_size, std::string const& label) {
  MortonSkeleton<MemorySpace> skeleton;
  skeleton.topology = ImplicitBinaryTopology<MemorySpace>(
      points.size(), ImplicitBinaryTopology<MemorySpace>::levels_for(points.size(), leaf_size));
  auto const box = bounding_box(space, points, label);
  auto const permutation = morton_permutation(space, points, box, label);
  skeleton.points = pack_points(space, points, permutation, label);
  int const width = skeleton.points.width();
  auto const& topology = skeleton.topology;
  // Zero-filled: row 0 is never a node's, and every byte of a tree is defined.
  skeleton.boxes = NodeBoxes<MemorySpace>(Kokkos::view_alloc(space, label + "::boxes"),
                                          topology.size() + 1, 2 * width);
  Kokkos::parallel_for(label + "::leaf_boxes",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, topology.leaf_count()),
                       LeafBoxes<MemorySpace>{topology, skeleton.points, skeleton.boxes});
  for (int level = topology.levels - 1; level >= 0; --level)
    Kokkos::parallel_for(
        label + "::union_boxes", Kokkos::RangePolicy<ExecutionSpace>(space, 0, Index(1) << level),
        UnionOfChildren<MemorySpace>{skeleton.boxes, (Index(1) << level) - 1, width});
  return skeleton;
}

} // namespace treetrav::detail
