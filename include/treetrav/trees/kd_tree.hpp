#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/top_down_builder.hpp>
#include <treetrav/trees/topology.hpp>

namespace treetrav {

// kd-tree: median split on the widest dimension of each node's points, leaves
// of at most `leaf_size` points, a tight bounding box per node. For PC, NN, kNN.
template <class MemorySpace>
struct KdTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "KdTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  using box_view = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace>;
  static constexpr char const* name = "kd";

  TreeTopology<2, MemorySpace> topology;
  TreePoints<MemorySpace> points;
  box_view box_min;  // (nodes, d)
  box_view box_max;

  KdTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  KdTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference, int leaf_size = 8);

  // Lower bound of the squared distance from query q to any point of `node`.
  // Summed in the order distance2() sums, so it never exceeds the distance to
  // a point on the box (exact pruning).
  template <class Queries>
  KOKKOS_FUNCTION Coordinate min_distance2(Index node, Queries const& queries, Index q) const {
    Coordinate sum = 0;
    for (int k = 0; k < points.points.dimension(); ++k) {
      Coordinate const x = queries(q, k);
      Coordinate const lo = box_min(node, k), hi = box_max(node, k);
      sum = detail::add_square(sum, x < lo ? lo - x : (x > hi ? x - hi : Coordinate(0)));
    }
    return sum;
  }

  template <class F>
  void for_each_node_field(F&& f) {
    topology.for_each_node_field(f);
    f(box_min);
    f(box_max);
  }
};

template <class ExecutionSpace, class MemorySpace>
KdTree<typename ExecutionSpace::memory_space> copy_tree(ExecutionSpace const& space, KdTree<MemorySpace> const& src) {
  KdTree<typename ExecutionSpace::memory_space> dst;
  dst.topology = detail::copy_topology(space, src.topology);
  dst.points = detail::copy_tree_points(space, src.points);
  dst.box_min = detail::copy_view(space, src.box_min);
  dst.box_max = detail::copy_view(space, src.box_max);
  return dst;
}

namespace detail {

struct NoNodeData {};

template <class ExecutionSpace>
KdTree<Kokkos::HostSpace> build_kd_tree(ExecutionSpace const& space, PointSet<Kokkos::HostSpace> const& points,
                                        int leaf_size) {
  check_build_arguments("kd-tree", points.size(), leaf_size, points.dimension());
  Kokkos::Profiling::pushRegion("treetrav::KdTree::build");
  auto coords = points.coordinates;
  int const dimension = points.dimension();
  auto build = build_top_down<2>(
      space, "treetrav::KdTree", points.size(), NoNodeData{},
      [=](NoNodeData&, int depth, Index* perm, Index begin, Index end, Index* child_end, NoNodeData*) {
        if (end - begin <= leaf_size || depth >= max_tree_depth - 1) return 0;
        int widest = 0;
        Coordinate widest_extent = -1;
        for (int k = 0; k < dimension; ++k) {
          Coordinate lo = coords(perm[begin], k), hi = lo;
          for (Index i = begin + 1; i < end; ++i) {
            lo = std::min(lo, coords(perm[i], k));
            hi = std::max(hi, coords(perm[i], k));
          }
          if (hi - lo > widest_extent) widest_extent = hi - lo, widest = k;
        }
        child_end[0] = split_at_median(perm, begin, end, [&](Index p) { return coords(p, widest); });
        child_end[1] = end;
        return 2;
      });
  KdTree<Kokkos::HostSpace> tree;
  tree.topology = build.topology;
  tree.points = gather_tree_points(space, "treetrav::KdTree", points, build.permutation);
  Index const nodes = tree.topology.size();
  tree.box_min = allocate_like_nodes<typename KdTree<Kokkos::HostSpace>::box_view>("treetrav::KdTree::box_min",
                                                                                   nodes, dimension);
  tree.box_max = allocate_like_nodes<typename KdTree<Kokkos::HostSpace>::box_view>("treetrav::KdTree::box_max",
                                                                                   nodes, dimension);
  auto t = tree;
  Kokkos::parallel_for(
      "treetrav::KdTree::boxes", Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, nodes),
      [=](Index node) {
        auto const& x = t.points.points.coordinates;
        for (int k = 0; k < dimension; ++k) {
          Coordinate lo = x(t.topology.point_begin(node), k), hi = lo;
          for (Index i = t.topology.point_begin(node) + 1; i < t.topology.point_end(node); ++i) {
            lo = std::min(lo, x(i, k));
            hi = std::max(hi, x(i, k));
          }
          t.box_min(node, k) = lo;
          t.box_max(node, k) = hi;
        }
      });
  space.fence();
  Kokkos::Profiling::popRegion();
  return tree;
}

}  // namespace detail

template <class MemorySpace>
template <class ExecutionSpace, class PointMemorySpace>
KdTree<MemorySpace>::KdTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference, int leaf_size) {
  *this = detail::build_on_host_for<MemorySpace>(space, [&](auto const& host) {
    return detail::build_kd_tree(host, detail::host_points(reference), leaf_size);
  });
}

}  // namespace treetrav
