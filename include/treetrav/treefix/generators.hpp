#pragma once

// Deterministic trees for treefix (parent arrays, root's parent -1) and their
// weights. Like the point generators, each takes a host execution space first,
// fills in parallel there where the shape allows, and returns the same arrays
// for the same arguments on any host space and thread count.
#include <treetrav/core/detail/random.hpp>
#include <treetrav/treefix/rooted_tree.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

namespace treetrav {

enum class TreeShape {
  star,             // the root and n - 1 leaves: one level (the paper's best case for BFS)
  caterpillar,      // a path, parent(v) = v - 1: n levels (its worst case)
  random_recursive, // parent(v) uniform in [0, v): height about e ln n
  kary,             // balanced, parent(v) = (v - 1) / arity
  grid,             // BFS spanning tree of a 3-D grid graph, from a random vertex
  random_geometric, // BFS spanning tree of a 3-D random geometric graph
};

inline std::vector<TreeShape> const& tree_shapes() {
  static std::vector<TreeShape> const shapes{
      TreeShape::star, TreeShape::caterpillar, TreeShape::random_recursive,
      TreeShape::kary, TreeShape::grid,        TreeShape::random_geometric};
  return shapes;
}

// The CLI's names: star, caterpillar, random, kary, grid, rgg.
inline std::string to_string(TreeShape shape) {
  switch (shape) {
  case TreeShape::star:
    return "star";
  case TreeShape::caterpillar:
    return "caterpillar";
  case TreeShape::random_recursive:
    return "random";
  case TreeShape::kary:
    return "kary";
  case TreeShape::grid:
    return "grid";
  case TreeShape::random_geometric:
    return "rgg";
  }
  return "?";
}

inline std::string describe(TreeShape shape) {
  switch (shape) {
  case TreeShape::star:
    return "the root and n - 1 leaves (height 1)";
  case TreeShape::caterpillar:
    return "a path: parent(v) = v - 1 (height n - 1)";
  case TreeShape::random_recursive:
    return "random recursive tree: parent(v) uniform in [0, v)";
  case TreeShape::kary:
    return "balanced k-ary tree: parent(v) = (v - 1) / k (--arity)";
  case TreeShape::grid:
    return "BFS spanning tree of a 3-D grid graph (a mesh), from a random vertex";
  case TreeShape::random_geometric:
    return "BFS spanning tree of a 3-D random geometric graph (mean degree 12)";
  }
  return "?";
}

namespace detail {

// Streams of their own, apart from the point generators' purposes.
inline constexpr Purpose tree_parent_draw{16};
inline constexpr Purpose tree_root_draw{17};
inline constexpr Purpose tree_point_draw{18};
inline constexpr Purpose tree_weight_draw{19};

inline constexpr Index unvisited = -2;

// Uniform in [0, bound) without the rounding up that uniform() * bound risks.
inline Index uniform_below(RandomStream& random, Index bound) {
  return static_cast<Index>((random.next_bits() >> 32) * static_cast<std::uint64_t>(bound) >> 32);
}

using HostParents = Kokkos::View<Index*, Kokkos::HostSpace>;

template <class ExecutionSpace, class ParentOf>
HostParents parents_by_formula(ExecutionSpace const& space, Index n, ParentOf parent_of) {
  HostParents parents(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::generate_tree::parents"), n);
  Kokkos::parallel_for("treetrav::generate_tree", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                       [=](Index v) { parents(v) = v == 0 ? no_parent : parent_of(v); });
  space.fence();
  return parents;
}

// Breadth-first spanning tree of an implicit graph: neighbours(v, visit) calls
// visit(u) for each neighbour u. Vertices the graph leaves unreachable start
// new searches, their lowest vertex hung under the root.
template <class Neighbours>
HostParents breadth_first_spanning_tree(Index n, Index root, Neighbours const& neighbours) {
  HostParents parents(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::generate_tree::parents"), n);
  for (Index v = 0; v < n; ++v)
    parents(v) = unvisited;
  std::deque<Index> queue;
  auto const search_from = [&](Index start, Index parent) {
    parents(start) = parent;
    queue.push_back(start);
    for (; !queue.empty(); queue.pop_front()) {
      Index const v = queue.front();
      neighbours(v, [&](Index u) {
        if (parents(u) != unvisited)
          return;
        parents(u) = v;
        queue.push_back(u);
      });
    }
  };
  search_from(root, no_parent);
  for (Index v = 0; v < n; ++v)
    if (parents(v) == unvisited)
      search_from(v, root);
  return parents;
}

// The first n vertices of an s x s x s grid (s = ceil(cbrt n)), x fastest: a
// connected box of full planes, full rows and one partial row.
inline HostParents grid_tree(Index n, std::uint64_t seed) {
  std::int64_t side = 1;
  while (side * side * side < n)
    ++side;
  RandomStream random(seed, tree_root_draw, 0);
  Index const root = uniform_below(random, n);
  return breadth_first_spanning_tree(n, root, [&](Index v, auto const& visit) {
    std::array<std::int64_t, 3> const at{v % side, v / side % side, v / (side * side)};
    std::int64_t const stride[3] = {1, side, side * side};
    for (int axis = 0; axis < 3; ++axis)
      for (int step : {-1, 1}) {
        std::int64_t const moved = at[axis] + step;
        std::int64_t const u = v + step * stride[axis];
        if (moved >= 0 && moved < side && u < n)
          visit(static_cast<Index>(u));
      }
  });
}

// n points uniform in the unit cube, joined when closer than the radius that
// gives 12 neighbours on average; cells of side >= radius bin them so that
// each point's neighbours lie in its 27 surrounding cells.
template <class ExecutionSpace>
HostParents random_geometric_tree(ExecutionSpace const& space, Index n, std::uint64_t seed) {
  constexpr double mean_degree = 12;
  double const radius = std::cbrt(3 * mean_degree / (4 * pi * n));
  auto const cells_per_side = std::max<std::int64_t>(1, static_cast<std::int64_t>(1 / radius));
  Kokkos::View<double* [3], Kokkos::HostSpace> points(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::generate_tree::points"), n);
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> cell_of(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::generate_tree::cells"), n);
  auto const cell_coordinate = [=](double x) {
    return std::min(cells_per_side - 1, static_cast<std::int64_t>(x * cells_per_side));
  };
  Kokkos::parallel_for("treetrav::generate_tree::points",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), [=](Index v) {
                         RandomStream random(seed, tree_point_draw, v);
                         for (int k = 0; k < 3; ++k)
                           points(v, k) = random.uniform();
                         cell_of(v) =
                             cell_coordinate(points(v, 0)) +
                             cells_per_side * (cell_coordinate(points(v, 1)) +
                                               cells_per_side * cell_coordinate(points(v, 2)));
                       });
  space.fence();
  // Counting sort of the points by cell.
  std::vector<Index> cell_begin(cells_per_side * cells_per_side * cells_per_side + 1, 0);
  for (Index v = 0; v < n; ++v)
    ++cell_begin[cell_of(v) + 1];
  for (std::size_t c = 1; c < cell_begin.size(); ++c)
    cell_begin[c] += cell_begin[c - 1];
  std::vector<Index> by_cell(n);
  {
    std::vector<Index> next(cell_begin.begin(), cell_begin.end() - 1);
    for (Index v = 0; v < n; ++v)
      by_cell[next[cell_of(v)]++] = v;
  }
  double const radius_squared = radius * radius;
  return breadth_first_spanning_tree(n, 0, [&](Index v, auto const& visit) {
    std::int64_t const cx = cell_coordinate(points(v, 0)), cy = cell_coordinate(points(v, 1)),
                       cz = cell_coordinate(points(v, 2));
    for (std::int64_t z = std::max<std::int64_t>(cz - 1, 0);
         z <= std::min(cz + 1, cells_per_side - 1); ++z)
      for (std::int64_t y = std::max<std::int64_t>(cy - 1, 0);
           y <= std::min(cy + 1, cells_per_side - 1); ++y)
        for (std::int64_t x = std::max<std::int64_t>(cx - 1, 0);
             x <= std::min(cx + 1, cells_per_side - 1); ++x) {
          std::int64_t const cell = x + cells_per_side * (y + cells_per_side * z);
          for (Index i = cell_begin[cell]; i < cell_begin[cell + 1]; ++i) {
            Index const u = by_cell[i];
            double distance_squared = 0;
            for (int k = 0; k < 3; ++k)
              distance_squared += (points(u, k) - points(v, k)) * (points(u, k) - points(v, k));
            if (distance_squared < radius_squared)
              visit(u);
          }
        }
  });
}

} // namespace detail

// The parent array of an n-vertex tree of the given shape, rooted at vertex 0
// except for grid (a random root). `seed` matters for random, grid and rgg;
// `arity` for kary only. Throws InputError for n outside [1, max_tree_vertices]
// or arity < 1.
template <class ExecutionSpace>
Kokkos::View<Index*, Kokkos::HostSpace> generate_tree(ExecutionSpace const& space, TreeShape shape,
                                                      Index n, std::uint64_t seed, int arity = 2) {
  detail::require_host_space<ExecutionSpace>();
  if (n < 1 || n > max_tree_vertices)
    throw InputError("n must be in [1, " + std::to_string(max_tree_vertices) + "] (got " +
                     std::to_string(n) + ")");
  if (arity < 1)
    throw InputError("arity must be >= 1 (got " + std::to_string(arity) + ")");
  switch (shape) {
  case TreeShape::star:
    return detail::parents_by_formula(space, n, [](Index) { return Index{0}; });
  case TreeShape::caterpillar:
    return detail::parents_by_formula(space, n, [](Index v) { return v - 1; });
  case TreeShape::random_recursive:
    return detail::parents_by_formula(space, n, [=](Index v) {
      detail::RandomStream random(seed, detail::tree_parent_draw, v);
      return detail::uniform_below(random, v);
    });
  case TreeShape::kary:
    return detail::parents_by_formula(space, n, [=](Index v) { return (v - 1) / arity; });
  case TreeShape::grid:
    return detail::grid_tree(n, seed);
  case TreeShape::random_geometric:
    return detail::random_geometric_tree(space, n, seed);
  }
  throw InputError("unknown tree shape");
}

// Weights uniform in [0, 1), one stream per vertex.
template <class T, class ExecutionSpace>
Kokkos::View<T*, Kokkos::HostSpace> uniform_weights(ExecutionSpace const& space, Index n,
                                                    std::uint64_t seed) {
  static_assert(std::is_floating_point_v<T>, "uniform weights are floating-point");
  detail::require_host_space<ExecutionSpace>();
  Kokkos::View<T*, Kokkos::HostSpace> weights(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::uniform_weights"), n);
  Kokkos::parallel_for("treetrav::uniform_weights",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), [=](Index v) {
                         detail::RandomStream random(seed, detail::tree_weight_draw, v);
                         if constexpr (std::is_same_v<T, float>)
                           weights(v) = random.uniform_float();
                         else
                           weights(v) = static_cast<T>(random.uniform());
                       });
  space.fence();
  return weights;
}

} // namespace treetrav
