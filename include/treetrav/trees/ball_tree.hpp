#pragma once

#include <treetrav/core/math.hpp>
#include <treetrav/trees/detail/radix_build.hpp>

namespace treetrav {

namespace detail {

// Safety margin on sqrt-based bounds: float rounding in the bound must never
// prune a node that holds an exact neighbour.
inline constexpr Coordinate bound_slack = 1e-5f;

// Rounded without an FMA, so that every backend builds the same bounds (the
// GPU built other vp shells and ball radii than the host, in the last bit).
KOKKOS_FORCEINLINE_FUNCTION Coordinate round_up_radius(Coordinate r) {
  return multiply_then_add(r, 1 + bound_slack, bound_slack);
}
KOKKOS_FORCEINLINE_FUNCTION Coordinate round_down_radius(Coordinate r) {
  return multiply_then_add(r, 1 - bound_slack, -bound_slack);
}

// Ball of each internal node, bottom-up: centre = the centre of the node's
// box, radius = the largest distance to one of its children's balls (a single
// point is a ball of radius 0), rounded up.
template <int W, class MemorySpace>
struct BallOfChildren {
  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> centers;
  Kokkos::View<Coordinate*, MemorySpace> radius;

  KOKKOS_FUNCTION void operator()(Index node) const {
    Coordinate center[W];
    for (int k = 0; k < W; ++k)
      center[k] = (boxes(node, k) + boxes(node, row_stride(W) + k)) * Coordinate(0.5);
    store_row<W>(&centers(node, 0), center);
    Coordinate r = 0;
    for (int slot = 0; slot < 2; ++slot) {
      Index const child = topology.child_of(topology.internal(node, 0), topology.internal(node, 1),
                                            topology.internal(node, 2), slot);
      Coordinate row[W], reach = 0;
      if (topology.is_internal(child)) {
        Coordinate const volatile* other = &centers(child, 0);
        for (int k = 0; k < W; ++k)
          row[k] = other[k];
        reach = *static_cast<Coordinate const volatile*>(&radius(child));
      } else {
        for (int k = 0; k < W; ++k)
          row[k] = points.rows(child - (topology.points - 1), k);
      }
      Coordinate const d = math::sqrt(row_distance2<W>(row, center)) + reach;
      r = d > r ? d : r;
    }
    radius(node) = round_up_radius(r);
  }
};

} // namespace detail

// Ball tree for BT (kNN): the BVH's skeleton (a binary radix tree over
// Morton-sorted points), each internal node bounded by a ball instead of a
// box. Built in the execution space that uses it, the same on every backend.
template <class MemorySpace>
struct BallTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "BallTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "ball";

  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> centers; // (internal nodes, W)
  Kokkos::View<Coordinate*, MemorySpace> radius;                        // (internal nodes)

  BallTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  BallTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
           int leaf_size = default_leaf_size) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "the tree lives in the execution space's memory space");
    Kokkos::Profiling::pushRegion("treetrav::BallTree::build");
    std::string const label = "treetrav::BallTree";
    auto skeleton = detail::build_radix_skeleton(space, reference, leaf_size, "ball tree", label);
    topology = skeleton.topology;
    points = skeleton.points;
    auto const alloc = [&](std::string const& member) {
      return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::" + member);
    };
    centers = decltype(centers)(alloc("centers"), topology.internal_count(), points.width());
    radius = decltype(radius)(alloc("radius"), topology.internal_count());
    dispatch_width(points.width(), [&](auto width) {
      detail::bottom_up(space, topology,
                        detail::BallOfChildren<decltype(width)::value, MemorySpace>{
                            topology, points, skeleton.boxes, centers, radius},
                        label + "::balls");
    });
    Kokkos::Profiling::popRegion();
  }

  KOKKOS_FUNCTION int width() const { return points.width(); }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate min_distance2(Index node, Coordinate const (&q)[W]) const {
    if (!topology.is_internal(node))
      return points.template distance2<W>(node - (topology.points - 1), q);
    Coordinate center[W];
    detail::load_row<W>(&centers(node, 0), center);
    Coordinate const gap = math::sqrt(detail::row_distance2<W>(center, q)) - radius(node);
    return gap > 0 ? gap * gap : Coordinate(0);
  }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void child_bounds(Index node, Coordinate const (&q)[W],
                                                NodeRef (&children)[2],
                                                Coordinate (&bounds)[2]) const {
    for (int slot = 0; slot < 2; ++slot) {
      Index const child = topology.child(node, slot);
      children[slot] = topology.ref(child);
      bounds[slot] = min_distance2<W>(child, q);
    }
  }

  template <class F>
  void for_each_field(F&& f) {
    f(topology.internal);
    f(topology.point_parent);
    points.for_each_field(f);
    f(centers);
    f(radius);
  }
};

} // namespace treetrav
