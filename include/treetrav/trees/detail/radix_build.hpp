#pragma once

#include <treetrav/core/detail/bits.hpp>
#include <treetrav/trees/detail/morton.hpp>
#include <treetrav/trees/detail/pack.hpp>
#include <treetrav/trees/packed_points.hpp>
#include <treetrav/trees/radix_topology.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace treetrav::detail {

// Karras' construction: each internal node finds its range and split from the
// sorted codes alone (codes tied are told apart by position), in parallel.
template <class MemorySpace>
struct RadixNodes {
  RadixTopology<MemorySpace> topology;
  Kokkos::View<std::uint64_t*, MemorySpace> codes;

  // Length of the common prefix of the keys (code, position) of i and j; -1
  // when j is out of range.
  KOKKOS_FUNCTION int prefix(Index i, Index j) const {
    if (j < 0 || j >= topology.points)
      return -1;
    std::uint64_t const a = codes(i), b = codes(j);
    return a == b ? 64 + leading_zeros(static_cast<std::uint32_t>(i ^ j)) : leading_zeros(a ^ b);
  }

  KOKKOS_FUNCTION void operator()(Index i) const {
    using T = RadixTopology<MemorySpace>;
    int const direction = prefix(i, i + 1) - prefix(i, i - 1) > 0 ? 1 : -1;
    int const minimum = prefix(i, i - direction);
    Index span = 2;
    while (prefix(i, i + span * direction) > minimum)
      span *= 2;
    Index length = 0;
    for (Index step = span / 2; step >= 1; step /= 2)
      if (prefix(i, i + (length + step) * direction) > minimum)
        length += step;
    Index const j = i + length * direction;
    int const node_prefix = prefix(i, j);
    Index split = 0;
    for (Index step = (length + 1) / 2;; step = (step + 1) / 2) {
      if (prefix(i, i + (split + step) * direction) > node_prefix)
        split += step;
      if (step == 1)
        break;
    }
    Index const gamma = i + split * direction + (direction < 0 ? -1 : 0);
    Index const first = i < j ? i : j, last = i < j ? j : i;
    topology.internal(i, T::first_point) = first;
    topology.internal(i, T::last_point) = last;
    topology.internal(i, T::split_point) = gamma;
    if (i == 0)
      topology.internal(i, T::parent_node) = -1;
    for (int slot = 0; slot < 2; ++slot) {
      Index const child = topology.child_of(first, last, gamma, slot);
      if (topology.is_internal(child))
        topology.internal(child, T::parent_node) = i;
      else
        topology.point_parent(child - (topology.points - 1)) = i;
    }
  }
};

// Bottom-up over the internal nodes without levels: each point climbs from its
// parent; at every node the first of the two children to arrive stops and
// the second combines both (their values are complete by then). Combine reads
// children written by other threads: through volatile loads, past the GPU's
// non-coherent L1.
template <class MemorySpace, class Combine>
struct BottomUp {
  RadixTopology<MemorySpace> topology;
  Kokkos::View<int*, MemorySpace> arrivals;
  Combine combine;
  KOKKOS_FUNCTION void operator()(Index p) const {
    for (Index node = topology.point_parent(p); node >= 0;
         node = topology.internal(node, RadixTopology<MemorySpace>::parent_node)) {
      Kokkos::memory_fence();
      if (Kokkos::atomic_fetch_add(&arrivals(node), 1) == 0)
        return;
      Kokkos::memory_fence();
      combine(node);
    }
  }
};

template <class ExecutionSpace, class MemorySpace, class Combine>
void bottom_up(ExecutionSpace const& space, RadixTopology<MemorySpace> const& topology,
               Combine const& combine, std::string const& label) {
  if (topology.points < 2)
    return;
  Kokkos::View<int*, MemorySpace> arrivals(Kokkos::view_alloc(space, label + "::arrivals"),
                                           topology.internal_count());
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, topology.points),
                       BottomUp<MemorySpace, Combine>{topology, arrivals, combine});
}

// Per internal node: its box, a row of lower bounds then a row of upper bounds.
template <class MemorySpace>
using NodeBoxes = Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace>;

// The bounds of a child of an internal node: its box when it is an internal
// node, the point itself when it is a single point.
template <int W, RowCache Cache, class MemorySpace>
KOKKOS_FORCEINLINE_FUNCTION void child_box(RadixTopology<MemorySpace> const& topology,
                                           PackedPoints<MemorySpace> const& points,
                                           NodeBoxes<MemorySpace> const& boxes, Index child,
                                           Coordinate (&lo)[W], Coordinate (&hi)[W]) {
  if (topology.is_internal(child)) {
    load_row<W, Cache>(&boxes(child, 0), lo);
    load_row<W, Cache>(&boxes(child, row_stride(W)), hi);
  } else {
    load_row<W>(&points.rows(child - (topology.points - 1), 0), lo);
#pragma unroll
    for (int k = 0; k < W; ++k)
      hi[k] = lo[k];
  }
}

template <int W, class MemorySpace>
struct UnionOfChildren {
  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
  KOKKOS_FUNCTION void operator()(Index node) const {
    Coordinate lo[W], hi[W];
#pragma unroll
    for (int k = 0; k < W; ++k)
      lo[k] = infinity, hi[k] = -infinity;
    Index const first = topology.internal(node, 0), last = topology.internal(node, 1),
                split = topology.internal(node, 2);
#pragma unroll
    for (int slot = 0; slot < 2; ++slot) {
      Index const child = topology.child_of(first, last, split, slot);
      Coordinate a[W], b[W];
      // Boxes of children are written by other threads of this kernel.
      child_box<W, RowCache::coherent>(topology, points, boxes, child, a, b);
#pragma unroll
      for (int k = 0; k < W; ++k) {
        lo[k] = a[k] < lo[k] ? a[k] : lo[k];
        hi[k] = b[k] > hi[k] ? b[k] : hi[k];
      }
    }
    store_row<W>(&boxes(node, 0), lo);
    store_row<W>(&boxes(node, row_stride(W)), hi);
  }
};

// What the BVH and the ball tree share: the points sorted along the
// Morton curve of their bounding box, the binary radix tree over them and a
// tight box per internal node. Built entirely in `space` by the same code on
// every backend, and deterministic (ties sorted by index; Karras' nodes
// depend on the codes alone; boxes are exact minima and maxima), so every
// backend builds the same tree.
template <class MemorySpace>
struct RadixSkeleton {
  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes; // (internal nodes, 2 row widths)
};

// `what` names the tree in errors; `reference` may live in any memory space
// (it is copied to the execution space's first when it does not).
template <class ExecutionSpace, class PointMemorySpace>
RadixSkeleton<typename ExecutionSpace::memory_space>
build_radix_skeleton(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
                     int leaf_size, char const* what, std::string const& label) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  check_build_arguments(what, reference.size(), leaf_size, reference.dimension());
  auto const points = points_for(space, reference, label);
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::" + member);
  };
  Index const n = points.size();
  int const dimension = points.dimension();
  RadixSkeleton<MemorySpace> skeleton;
  auto& topology = skeleton.topology;
  topology.points = n;
  topology.leaf_size = leaf_size;

  Kokkos::View<std::uint64_t*, MemorySpace> sorted_codes(alloc("sorted_codes"), n);
  auto const permutation = morton_sort<std::uint64_t>(
      space, points, MortonEncoder<MemorySpace>::bits_per_dimension(dimension), label,
      sorted_codes);
  auto& packed = skeleton.points;
  packed = pack_points(space, points, permutation, label);

  topology.internal = decltype(topology.internal)(alloc("internal"), n - 1);
  topology.point_parent = decltype(topology.point_parent)(alloc("point_parent"), n);
  if (n == 1)
    Kokkos::deep_copy(space, topology.point_parent, -1);
  Kokkos::parallel_for(label + "::radix_nodes",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n - 1),
                       RadixNodes<MemorySpace>{topology, sorted_codes});

  skeleton.boxes = NodeBoxes<MemorySpace>(alloc("boxes"), n - 1, 2 * packed.width());
  dispatch_width(packed.width(), [&](auto width) {
    bottom_up(
        space, topology,
        UnionOfChildren<decltype(width)::value, MemorySpace>{topology, packed, skeleton.boxes},
        label + "::boxes");
  });
  return skeleton;
}

} // namespace treetrav::detail
