#pragma once

#include <treetrav/trees/detail/implicit_build.hpp>

namespace treetrav {

namespace detail {

// Squared distance from q to the box [lo, hi], summed in the order distance2()
// sums: rounding is monotonic, so it never exceeds the distance to a point in
// the box (exact pruning).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION Coordinate box_distance2(Coordinate const (&q)[W],
                                                     Coordinate const (&lo)[W],
                                                     Coordinate const (&hi)[W]) {
  Coordinate sum = 0;
#pragma unroll
  for (int k = 0; k < W; ++k)
    sum = add_square(sum,
                     q[k] < lo[k] ? lo[k] - q[k] : (q[k] > hi[k] ? q[k] - hi[k] : Coordinate(0)));
  return sum;
}

} // namespace detail

// kd-tree for PC, NN, kNN and radius searches: the reference points sorted
// along a Morton curve and cut evenly into 2^levels leaves (an implicit,
// complete binary tree: no child links), each node bounded by the tight box
// of its points. Built in the execution space that uses it (on the GPU in
// CUDA runs) by the same code on every backend, so every backend builds the
// same tree. A node's record is its box, one row of 2W floats; a visit reads
// nothing else.
template <class MemorySpace>
struct KdTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "KdTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  using topology_type = ImplicitBinaryTopology<MemorySpace>;
  static constexpr char const* name = "kd";

  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  detail::NodeBoxes<MemorySpace> boxes; // row node + 1: W lower bounds, then W upper bounds

  KdTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  KdTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
         int leaf_size = 8) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "the tree lives in the execution space's memory space");
    detail::check_build_arguments("kd-tree", reference.size(), leaf_size);
    packed_width(reference.dimension());
    Kokkos::Profiling::pushRegion("treetrav::KdTree::build");
    auto skeleton = detail::build_morton_skeleton(
        space, detail::points_for(space, reference, "treetrav::KdTree"), leaf_size,
        "treetrav::KdTree");
    topology = skeleton.topology;
    points = skeleton.points;
    boxes = skeleton.boxes;
    Kokkos::Profiling::popRegion();
  }

  KOKKOS_FUNCTION int width() const { return points.width(); }

  // Lower bound of the squared distance from the query row q to any point of `node`.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate min_distance2(Index node, Coordinate const (&q)[W]) const {
    Coordinate lo[W], hi[W];
    detail::load_row<W>(&boxes(node + 1, 0), lo);
    detail::load_row<W>(&boxes(node + 1, W), hi);
    return detail::box_distance2<W>(q, lo, hi);
  }

  // The bounds of both children of an internal node (one aligned 2-row block).
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void child_min_distance2(Index node, Coordinate const (&q)[W],
                                                       Coordinate (&bounds)[2]) const {
    bounds[0] = min_distance2<W>(2 * node + 1, q);
    bounds[1] = min_distance2<W>(2 * node + 2, q);
  }

  template <class F>
  void for_each_field(F&& f) {
    points.for_each_field(f);
    f(boxes);
  }
};

} // namespace treetrav
