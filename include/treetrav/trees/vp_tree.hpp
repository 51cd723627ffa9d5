#pragma once

#include <treetrav/core/distance.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/top_down_builder.hpp>
#include <treetrav/trees/topology.hpp>

#include <cmath>

namespace treetrav {

// Vantage-point tree: each internal node picks a vantage point and splits its
// points at the median distance to it (slot 0: the nearer half). A child knows
// the shell [shell_min, shell_max] of distances from its parent's vantage
// point to its own points, which bounds the distance from any query. For VP.
template <class MemorySpace>
struct VpTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "VpTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "vp";

  TreeTopology<2, MemorySpace> topology;
  TreePoints<MemorySpace> points;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> vantage;  // (nodes, d); internal nodes
  Kokkos::View<Coordinate*, MemorySpace> shell_min;                      // (nodes)
  Kokkos::View<Coordinate*, MemorySpace> shell_max;

  VpTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  VpTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference, int leaf_size = 8);

  template <class Queries>
  KOKKOS_FUNCTION Coordinate min_distance2(Index node, Queries const& queries, Index q) const {
    Index const parent = topology.parent(node);
    if (parent < 0) return 0;
    Coordinate const d = math::sqrt(distance2(vantage, parent, queries, q));
    Coordinate gap = shell_min(node) - d;
    if (d - shell_max(node) > gap) gap = d - shell_max(node);
    return gap > 0 ? gap * gap : Coordinate(0);
  }

  template <class F>
  void for_each_node_field(F&& f) {
    topology.for_each_node_field(f);
    f(vantage);
    f(shell_min);
    f(shell_max);
  }
};

template <class ExecutionSpace, class MemorySpace>
VpTree<typename ExecutionSpace::memory_space> copy_tree(ExecutionSpace const& space, VpTree<MemorySpace> const& src) {
  VpTree<typename ExecutionSpace::memory_space> dst;
  dst.topology = detail::copy_topology(space, src.topology);
  dst.points = detail::copy_tree_points(space, src.points);
  dst.vantage = detail::copy_view(space, src.vantage);
  dst.shell_min = detail::copy_view(space, src.shell_min);
  dst.shell_max = detail::copy_view(space, src.shell_max);
  return dst;
}

namespace detail {

template <class ExecutionSpace>
VpTree<Kokkos::HostSpace> build_vp_tree(ExecutionSpace const& space, PointSet<Kokkos::HostSpace> const& points,
                                        int leaf_size) {
  check_build_arguments("vantage-point tree", points.size(), leaf_size, points.dimension());
  Kokkos::Profiling::pushRegion("treetrav::VpTree::build");
  auto coords = points.coordinates;
  // Node data: the caller's index of the node's vantage point (-1 for leaves).
  auto build = build_top_down<2>(
      space, "treetrav::VpTree", points.size(), Index(-1),
      [=](Index& vantage, int depth, Index* perm, Index begin, Index end, Index* child_end, Index* child_vantage) {
        if (end - begin <= leaf_size || depth >= max_tree_depth - 1) return 0;
        // The point farthest from the node's first point: a cheap, deterministic
        // stand-in for a spread-maximising vantage point.
        vantage = perm[begin];
        Coordinate farthest = -1;
        for (Index i = begin; i < end; ++i) {
          Coordinate const d = distance2(coords, perm[i], coords, perm[begin]);
          if (d > farthest) farthest = d, vantage = perm[i];
        }
        Index const v = vantage;
        child_end[0] = split_at_median(perm, begin, end, [&](Index p) { return distance2(coords, p, coords, v); });
        child_end[1] = end;
        child_vantage[0] = child_vantage[1] = -1;
        return 2;
      });
  VpTree<Kokkos::HostSpace> tree;
  tree.topology = build.topology;
  tree.points = gather_tree_points(space, "treetrav::VpTree", points, build.permutation);
  Index const nodes = tree.topology.size();
  int const dimension = points.dimension();
  tree.vantage = allocate_like_nodes<decltype(tree.vantage)>("treetrav::VpTree::vantage", nodes, dimension);
  tree.shell_min = allocate_like_nodes<decltype(tree.shell_min)>("treetrav::VpTree::shell_min", nodes);
  tree.shell_max = allocate_like_nodes<decltype(tree.shell_max)>("treetrav::VpTree::shell_max", nodes);
  for (Index node = 0; node < nodes; ++node)
    for (int k = 0; k < dimension; ++k)
      tree.vantage(node, k) = build.node_data[node] < 0 ? Coordinate(0) : coords(build.node_data[node], k);
  auto t = tree;
  Kokkos::parallel_for(
      "treetrav::VpTree::shells",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, nodes), [=](Index node) {
        Index const parent = t.topology.parent(node);
        if (parent < 0) {
          t.shell_min(node) = 0;
          t.shell_max(node) = 0;
          return;
        }
        auto const& x = t.points.points.coordinates;
        Coordinate lo = std::numeric_limits<Coordinate>::max(), hi = 0;
        for (Index i = t.topology.point_begin(node); i < t.topology.point_end(node); ++i) {
          Coordinate const d = std::sqrt(distance2(x, i, t.vantage, parent));
          lo = std::min(lo, d);
          hi = std::max(hi, d);
        }
        t.shell_min(node) = lo * (1 - bound_slack) - bound_slack;
        t.shell_max(node) = hi * (1 + bound_slack) + bound_slack;
      });
  space.fence();
  Kokkos::Profiling::popRegion();
  return tree;
}

}  // namespace detail

template <class MemorySpace>
template <class ExecutionSpace, class PointMemorySpace>
VpTree<MemorySpace>::VpTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference, int leaf_size) {
  *this = detail::build_on_host_for<MemorySpace>(space, [&](auto const& host) {
    return detail::build_vp_tree(host, detail::host_points(reference), leaf_size);
  });
}

}  // namespace treetrav
