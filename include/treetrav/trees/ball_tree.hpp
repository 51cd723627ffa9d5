#pragma once

#include <treetrav/core/math.hpp>
#include <treetrav/trees/detail/implicit_build.hpp>

namespace treetrav {

namespace detail {

// Safety margin on sqrt-based bounds: float rounding in the bound must never
// prune a node that holds an exact neighbour.
inline constexpr Coordinate bound_slack = 1e-5f;

KOKKOS_FORCEINLINE_FUNCTION Coordinate round_up_radius(Coordinate r) {
  return r * (1 + bound_slack) + bound_slack;
}

// Ball of each node: centre = the centre of the node's box, radius = the
// largest distance to one of its points (leaves), or to one of its children's
// balls (internal nodes), rounded up.
template <int W, class MemorySpace>
struct Balls {
  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> centers;
  Kokkos::View<Coordinate*, MemorySpace> radius;
  Index level_first; // the level this launch computes

  KOKKOS_FUNCTION void operator()(Index j) const {
    Index const node = level_first + j;
    if (topology.point_begin(node) == topology.point_end(node)) {
      for (int k = 0; k < W; ++k)
        centers(node + 1, k) = 0;
      radius(node + 1) = -infinity; // an empty node is infinitely far from any query
      return;
    }
    Coordinate center[W];
    for (int k = 0; k < W; ++k) {
      center[k] = (boxes(node + 1, k) + boxes(node + 1, W + k)) * Coordinate(0.5);
      centers(node + 1, k) = center[k];
    }
    Coordinate r = 0;
    if (topology.is_leaf(node)) {
      for (Index p = topology.point_begin(node); p < topology.point_end(node); ++p) {
        Coordinate const d = math::sqrt(points.template distance2<W>(p, center));
        r = d > r ? d : r;
      }
    } else {
      for (Index child = 2 * node + 1; child <= 2 * node + 2; ++child) {
        if (!(radius(child + 1) >= 0))
          continue;
        Coordinate row[W];
        for (int k = 0; k < W; ++k)
          row[k] = centers(child + 1, k);
        Coordinate const d = math::sqrt(row_distance2<W>(row, center)) + radius(child + 1);
        r = d > r ? d : r;
      }
    }
    radius(node + 1) = round_up_radius(r);
  }
};

} // namespace detail

// Ball tree for BT (kNN): the kd-tree's skeleton (Morton-sorted points in an
// implicit complete binary tree), each node bounded by a ball instead of a
// box. Built in the execution space that uses it, the same on every backend.
template <class MemorySpace>
struct BallTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "BallTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "ball";

  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> centers; // row node + 1
  Kokkos::View<Coordinate*, MemorySpace> radius; // [node + 1]; -inf: empty node

  BallTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  BallTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
           int leaf_size = 8) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "the tree lives in the execution space's memory space");
    detail::check_build_arguments("ball tree", reference.size(), leaf_size);
    packed_width(reference.dimension());
    Kokkos::Profiling::pushRegion("treetrav::BallTree::build");
    std::string const label = "treetrav::BallTree";
    auto skeleton = detail::build_morton_skeleton(
        space, detail::points_for(space, reference, label), leaf_size, label);
    topology = skeleton.topology;
    points = skeleton.points;
    // Zero-filled: row 0 is never a node's, and every byte of a tree is defined.
    centers = decltype(centers)(Kokkos::view_alloc(space, label + "::centers"), topology.size() + 1,
                                points.width());
    radius = decltype(radius)(Kokkos::view_alloc(space, label + "::radius"), topology.size() + 1);
    dispatch_width(points.width(), [&](auto width) {
      for (int level = topology.levels; level >= 0; --level)
        Kokkos::parallel_for(
            label + "::balls", Kokkos::RangePolicy<ExecutionSpace>(space, 0, Index(1) << level),
            detail::Balls<decltype(width)::value, MemorySpace>{
                topology, points, skeleton.boxes, centers, radius, (Index(1) << level) - 1});
    });
    Kokkos::Profiling::popRegion();
  }

  KOKKOS_FUNCTION int width() const { return points.width(); }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate min_distance2(Index node, Coordinate const (&q)[W]) const {
    Coordinate center[W];
    detail::load_row<W>(&centers(node + 1, 0), center);
    Coordinate const gap = math::sqrt(detail::row_distance2<W>(center, q)) - radius(node + 1);
    return gap > 0 ? gap * gap : Coordinate(0);
  }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void child_min_distance2(Index node, Coordinate const (&q)[W],
                                                       Coordinate (&bounds)[2]) const {
    bounds[0] = min_distance2<W>(2 * node + 1, q);
    bounds[1] = min_distance2<W>(2 * node + 2, q);
  }

  template <class F>
  void for_each_field(F&& f) {
    points.for_each_field(f);
    f(centers);
    f(radius);
  }
};

} // namespace treetrav
