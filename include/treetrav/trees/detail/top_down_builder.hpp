#pragma once

#include <treetrav/trees/detail/layout.hpp>
#include <treetrav/trees/topology.hpp>

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace treetrav::detail {

// A tree built top-down, level by level, over a permutation of n points. Every
// tree type shares this skeleton and differs only in how it splits a node.
template <int Arity, class NodeData>
struct TopDownBuild {
  TreeTopology<Arity, Kokkos::HostSpace> topology;  // depth-first layout
  std::vector<NodeData> node_data;                  // per node, same order
  Kokkos::View<Index*, Kokkos::HostSpace> permutation;  // tree point -> caller's point
};

// split(data, depth, permutation, begin, end, child_end, child_data) may reorder
// permutation[begin, end) and returns the number of children c (0: a leaf);
// child i then owns [i == 0 ? begin : child_end[i - 1], child_end[i]) and
// starts with child_data[i]. `data` may be updated (e.g. a vantage point).
// Nodes of one level are split in parallel in `space`.
template <int Arity, class NodeData, class ExecutionSpace, class Split>
TopDownBuild<Arity, NodeData> build_top_down(ExecutionSpace const& space, std::string const& label,
                                             Index point_count, NodeData const& root_data, Split const& split) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "trees are built in a host execution space");
  Kokkos::View<Index*, Kokkos::HostSpace> permutation(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::original_index"), point_count);
  std::iota(permutation.data(), permutation.data() + point_count, 0);

  // Breadth-first node arrays, grown one level at a time.
  std::vector<Index> begin{0}, end{point_count}, parent{-1};
  std::vector<std::array<Index, Arity>> children;
  std::vector<NodeData> data{root_data};
  Index level_first = 0;
  for (int depth = 0; level_first < static_cast<Index>(begin.size()); ++depth) {
    Index const level_size = static_cast<Index>(begin.size()) - level_first;
    std::vector<int> child_count(level_size);
    std::vector<std::array<Index, Arity>> child_end(level_size);
    std::vector<std::array<NodeData, Arity>> child_data(level_size);
    Index* perm = permutation.data();
    Kokkos::parallel_for(
        label + "::split_level",
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, level_size),
        [&](Index i) {
          Index const node = level_first + i;
          child_count[i] = split(data[node], depth, perm, begin[node], end[node], child_end[i].data(),
                                 child_data[i].data());
        });
    space.fence();
    children.resize(begin.size());
    Index const next_first = static_cast<Index>(begin.size());
    for (Index i = 0; i < level_size; ++i) {
      Index const node = level_first + i;
      children[node].fill(-1);
      for (int c = 0; c < child_count[i]; ++c) {
        children[node][c] = static_cast<Index>(begin.size());
        begin.push_back(c == 0 ? begin[node] : child_end[i][c - 1]);
        end.push_back(child_end[i][c]);
        parent.push_back(node);
        data.push_back(child_data[i][c]);
      }
    }
    level_first = next_first;
  }

  // Depth-first layout by default (relayout() changes it later if asked).
  Index const node_count = static_cast<Index>(begin.size());
  auto new_index = layout_order(node_count, Arity, [&](Index node, int slot) { return children[node][slot]; }, 0);
  TopDownBuild<Arity, NodeData> build;
  auto& topology = build.topology;
  auto uninitialized = [&](std::string const& member) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::" + member);
  };
  topology.children = decltype(topology.children)(uninitialized("children"), node_count, Arity);
  topology.parent = decltype(topology.parent)(uninitialized("parent"), node_count);
  topology.point_begin = decltype(topology.point_begin)(uninitialized("point_begin"), node_count);
  topology.point_end = decltype(topology.point_end)(uninitialized("point_end"), node_count);
  build.node_data.resize(node_count);
  for (Index node = 0; node < node_count; ++node) {
    Index const at = new_index[node];
    for (int c = 0; c < Arity; ++c)
      topology.children(at, c) = children[node][c] < 0 ? -1 : new_index[children[node][c]];
    topology.parent(at) = parent[node] < 0 ? -1 : new_index[parent[node]];
    topology.point_begin(at) = begin[node];
    topology.point_end(at) = end[node];
    build.node_data[at] = data[node];
  }
  build.permutation = permutation;
  return build;
}

// The tree's own copy of the points, in tree order.
template <class ExecutionSpace>
TreePoints<Kokkos::HostSpace> gather_tree_points(ExecutionSpace const& space, std::string const& label,
                                                 PointSet<Kokkos::HostSpace> const& points,
                                                 Kokkos::View<Index*, Kokkos::HostSpace> permutation) {
  TreePoints<Kokkos::HostSpace> tree_points;
  tree_points.points = allocate_points<Kokkos::HostSpace>(label + "::points", points.size(),
                                                          points.dimension(), points.has_ids());
  tree_points.original_index = permutation;
  auto src = points;
  auto dst = tree_points.points;
  Kokkos::parallel_for(
      label + "::gather_points", Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()), [=](Index i) {
        Index const from = permutation(i);
        for (int k = 0; k < src.dimension(); ++k) dst.coordinates(i, k) = src.coordinates(from, k);
        if (src.has_ids()) dst.ids(i) = src.ids(from);
      });
  space.fence();
  return tree_points;
}

// Partitions permutation[begin, end) around its median by (key, index): the
// lower half [begin, mid) holds the floor((end - begin) / 2) smallest keys.
// Ties are broken by point index so the split is deterministic.
template <class Key>
Index split_at_median(Index* permutation, Index begin, Index end, Key const& key) {
  using KeyType = decltype(key(Index{}));
  std::vector<std::pair<KeyType, Index>> keyed(end - begin);
  for (Index i = begin; i < end; ++i) keyed[i - begin] = {key(permutation[i]), permutation[i]};
  Index const half = (end - begin) / 2;
  std::nth_element(keyed.begin(), keyed.begin() + half, keyed.end());
  for (Index i = begin; i < end; ++i) permutation[i] = keyed[i - begin].second;
  return begin + half;
}

}  // namespace treetrav::detail
