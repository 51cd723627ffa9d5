#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/top_down_builder.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/topology.hpp>

#include <cmath>

namespace treetrav {

// Ball tree: the kd-tree's median split on the widest dimension, with each
// node bounded by a ball (centroid, radius) instead of a box. For BT (kNN).
template <class MemorySpace>
struct BallTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "BallTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "ball";

  TreeTopology<2, MemorySpace> topology;
  TreePoints<MemorySpace> points;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> center;  // (nodes, d) centroid
  Kokkos::View<Coordinate*, MemorySpace> radius;                       // (nodes)

  BallTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  BallTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference, int leaf_size = 8);

  // Lower bound of the squared distance from query q to any point of `node`.
  // The radius is rounded up at build time, so the bound never prunes a point.
  template <class Queries>
  KOKKOS_FUNCTION Coordinate min_distance2(Index node, Queries const& queries, Index q) const {
    Coordinate const gap = math::sqrt(distance2(center, node, queries, q)) - radius(node);
    return gap > 0 ? gap * gap : Coordinate(0);
  }

  template <class F>
  void for_each_node_field(F&& f) {
    topology.for_each_node_field(f);
    f(center);
    f(radius);
  }
};

template <class ExecutionSpace, class MemorySpace>
BallTree<typename ExecutionSpace::memory_space> copy_tree(ExecutionSpace const& space,
                                                          BallTree<MemorySpace> const& src) {
  BallTree<typename ExecutionSpace::memory_space> dst;
  dst.topology = detail::copy_topology(space, src.topology);
  dst.points = detail::copy_tree_points(space, src.points);
  dst.center = detail::copy_view(space, src.center);
  dst.radius = detail::copy_view(space, src.radius);
  return dst;
}

namespace detail {

// Safety margin on sqrt-based bounds: float rounding in the bound must never
// prune a node that holds an exact neighbour.
inline constexpr Coordinate bound_slack = 1e-5f;

template <class ExecutionSpace>
BallTree<Kokkos::HostSpace> build_ball_tree(ExecutionSpace const& space, PointSet<Kokkos::HostSpace> const& points,
                                            int leaf_size) {
  check_build_arguments("ball tree", points.size(), leaf_size, points.dimension());
  Kokkos::Profiling::pushRegion("treetrav::BallTree::build");
  // Same skeleton and split as the kd-tree; only the node bounds differ.
  auto kd = build_kd_tree(space, points, leaf_size);
  BallTree<Kokkos::HostSpace> tree;
  tree.topology = kd.topology;
  tree.points = kd.points;
  Index const nodes = tree.topology.size();
  int const dimension = points.dimension();
  tree.center = allocate_like_nodes<decltype(tree.center)>("treetrav::BallTree::center", nodes, dimension);
  tree.radius = allocate_like_nodes<decltype(tree.radius)>("treetrav::BallTree::radius", nodes);
  auto t = tree;
  Kokkos::parallel_for(
      "treetrav::BallTree::balls",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, nodes), [=](Index node) {
        auto const& x = t.points.points.coordinates;
        Index const begin = t.topology.point_begin(node), end = t.topology.point_end(node);
        for (int k = 0; k < dimension; ++k) {
          double sum = 0;
          for (Index i = begin; i < end; ++i) sum += x(i, k);
          t.center(node, k) = static_cast<Coordinate>(sum / (end - begin));
        }
        Coordinate farthest = 0;
        for (Index i = begin; i < end; ++i) farthest = std::max(farthest, distance2(x, i, t.center, node));
        t.radius(node) = std::sqrt(farthest) * (1 + bound_slack) + bound_slack;
      });
  space.fence();
  Kokkos::Profiling::popRegion();
  return tree;
}

}  // namespace detail

template <class MemorySpace>
template <class ExecutionSpace, class PointMemorySpace>
BallTree<MemorySpace>::BallTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
                                int leaf_size) {
  *this = detail::build_on_host_for<MemorySpace>(space, [&](auto const& host) {
    return detail::build_ball_tree(host, detail::host_points(reference), leaf_size);
  });
}

}  // namespace treetrav
