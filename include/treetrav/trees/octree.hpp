#pragma once

// The Barnes-Hut octree (the Octree type: trees/detail/octree_type.hpp) and its
// one builder, the Morton octree, built on the execution space itself (the GPU
// in a GPU run): build_morton_octree, and Octree's constructor at the end.
//
//   1. Morton codes: each body's cell at the finest level (21 bits per axis)
//      of the cube around all bodies, the three axes' bits interleaved;
//   2. a stable sort by code: every cell's bodies become contiguous;
//   3. the hierarchy, one level at a time: a cell holding more than
//      `leaf_capacity` bodies splits into its non-empty octants, found by
//      binary search of the sorted codes; children numbered by a prefix scan.
//   4. (separately, so it can be timed) mass and centre of mass of every cell,
//      bottom-up, one level at a time: leaves sum their bodies, parents their
//      children, in double (the sums of treefix/octree.hpp's leaffix by the
//      level-synchronous method, bit for bit; this loop reuses the build's
//      levels where the treefix would first rebuild them from the parents).
//   5. (optional, after 4) quadrupole moments about the float centres of
//      mass, bottom-up in double by the parallel-axis theorem.
//
// Everything is a pure function of the float positions and masses: codes,
// ties (by body index), node numbering and summation orders are fixed, so equal
// inputs give bit-identical trees on every run and thread count.
#include <treetrav/core/allocate.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/morton.hpp>
#include <treetrav/trees/detail/octree_type.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>


namespace treetrav {

// An octree and where its levels lie: nodes are numbered breadth-first, level
// L holds nodes [level_begin[L], level_begin[L + 1]).
template <class MemorySpace>
struct LevelledOctree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "LevelledOctree needs a Kokkos memory space");
  Octree<MemorySpace> tree;
  std::vector<Index> level_begin;
};

namespace detail {

inline constexpr int morton_levels = 21;  // bits per axis: 3 x 21 fit a 64-bit code

// Bit i of x moves to bit 3i (x < 2^21).
KOKKOS_INLINE_FUNCTION std::uint64_t spread_by_3(std::uint64_t x) {
  x &= 0x1fffffu;
  x = (x | x << 32) & 0x1f00000000ffffu;
  x = (x | x << 16) & 0x1f0000ff0000ffu;
  x = (x | x << 8) & 0x100f00f00f00f00fu;
  x = (x | x << 4) & 0x10c30c30c30c30c3u;
  x = (x | x << 2) & 0x1249249249249249u;
  return x;
}

// The inverse: bit 3i of x moves to bit i.
KOKKOS_INLINE_FUNCTION std::uint64_t compact_by_3(std::uint64_t x) {
  x &= 0x1249249249249249u;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3u;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00fu;
  x = (x ^ (x >> 8)) & 0x1f0000ff0000ffu;
  x = (x ^ (x >> 16)) & 0x1f00000000ffffu;
  x = (x ^ (x >> 32)) & 0x1fffffu;
  return x;
}

// The root cell: the host builder's cube (centred on the bodies' bounding box,
// slightly larger than its longest side, never empty).
struct RootCube {
  double corner[3];
  double side;
};

// The cube around the box [lo, hi] (distributed runs: of every rank's bodies).
inline RootCube cube_around(Coordinate const (&lo)[3], Coordinate const (&hi)[3]) {
  double half = 0;
  for (int k = 0; k < 3; ++k) half = std::max(half, 0.5 * (double(hi[k]) - lo[k]));
  half = half > 0 ? half * (1 + 1e-6) : 1.0;
  RootCube cube{};
  for (int k = 0; k < 3; ++k) cube.corner[k] = 0.5 * (double(lo[k]) + hi[k]) - half;
  cube.side = 2 * half;
  return cube;
}

// The Morton code of the finest cell of `cube` holding x (clamped into the cube).
KOKKOS_INLINE_FUNCTION std::uint64_t morton_code(RootCube const& cube, Coordinate x0, Coordinate x1, Coordinate x2) {
  double const cells_per_side = double(std::uint64_t(1) << morton_levels);
  Coordinate const x[3] = {x0, x1, x2};
  std::uint64_t code = 0;
  for (int k = 0; k < 3; ++k) {
    double const cell = (double(x[k]) - cube.corner[k]) / cube.side * cells_per_side;
    double const clamped = cell < 0 ? 0 : (cell > cells_per_side - 1 ? cells_per_side - 1 : cell);
    code |= spread_by_3(static_cast<std::uint64_t>(clamped)) << k;
  }
  return code;
}

// The cube around the bodies: their box as one reduction over the three
// columns (a kernel and one read back on a GPU; minima and maxima are exact,
// so every backend finds the same cube).
template <class ExecutionSpace, class MemorySpace>
RootCube root_cube(ExecutionSpace const& space,
                   Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> const& x) {
  Coordinate bounds[6];
  Kokkos::parallel_reduce("treetrav::MortonOctree::root_cube",
                          as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, x.extent(0))),
                          BoxReduction<MemorySpace>{6, x},
                          Kokkos::View<Coordinate*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(bounds, 6));
  Coordinate const lo[3] = {bounds[0], bounds[1], bounds[2]}, hi[3] = {bounds[3], bounds[4], bounds[5]};
  return cube_around(lo, hi);
}

// A copy of the first `rows` rows of `source` (fewer if it has fewer), with
// `rows` rows. Copies on `space`, not on Kokkos' default space as Kokkos::resize
// would (a serial run must not wake the OpenMP threads).
template <class ExecutionSpace, class View>
View copy_rows(ExecutionSpace const& space, View const& source, Index rows) {
  auto const kept = std::make_pair(std::size_t(0), std::min<std::size_t>(rows, source.extent(0)));
  if constexpr (View::rank == 1) {
    auto const target = allocate_view<View>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, source.label()), rows);
    Kokkos::deep_copy(space, Kokkos::subview(target, kept), Kokkos::subview(source, kept));
    return target;
  } else {
    auto const target = allocate_view<View>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, source.label()),
                                            rows, source.extent(1));
    Kokkos::deep_copy(space, Kokkos::subview(target, kept, Kokkos::ALL), Kokkos::subview(source, kept, Kokkos::ALL));
    return target;
  }
}

// The node arrays while the levels are built; their capacity grows by doubling.
template <class MemorySpace>
struct OctreeNodes {
  Kokkos::View<Index**, Kokkos::LayoutLeft, MemorySpace> children;
  Kokkos::View<Index*, MemorySpace> parent, point_begin, point_end;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> cell_center;
  Kokkos::View<Coordinate*, MemorySpace> cell_size;

  template <class ExecutionSpace>
  OctreeNodes(ExecutionSpace const& space, Index capacity)
      : children(allocate<decltype(children)>(space, "children", capacity, 8)),
        parent(allocate<decltype(parent)>(space, "parent", capacity)),
        point_begin(allocate<decltype(point_begin)>(space, "point_begin", capacity)),
        point_end(allocate<decltype(point_end)>(space, "point_end", capacity)),
        cell_center(allocate<decltype(cell_center)>(space, "cell_center", capacity, 3)),
        cell_size(allocate<decltype(cell_size)>(space, "cell_size", capacity)) {}

  // Allocations by layout: no read back of the label (allocate_view).
  template <class View, class ExecutionSpace, class... Extents>
  static View allocate(ExecutionSpace const& space, char const* member, Extents... extents) {
    return allocate_view<View>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("treetrav::MortonOctree::") + member),
        extents...);
  }

  Index capacity() const { return static_cast<Index>(parent.extent(0)); }
  // Keeps the first min(size, capacity) nodes.
  template <class ExecutionSpace>
  void resize(ExecutionSpace const& space, Index size) {
    children = copy_rows(space, children, size);
    parent = copy_rows(space, parent, size);
    point_begin = copy_rows(space, point_begin, size);
    point_end = copy_rows(space, point_end, size);
    cell_center = copy_rows(space, cell_center, size);
    cell_size = copy_rows(space, cell_size, size);
  }
};

// One level of the hierarchy, as a prefix scan over the level's nodes: every
// node counts its non-empty octants (none when it stays a leaf); the final pass
// numbers the children consecutively, links them and sets the node's geometry.
template <class MemorySpace>
struct OctreeLevelBuild {
  using value_type = Index;

  Kokkos::View<std::uint64_t const*, MemorySpace> codes;
  OctreeNodes<MemorySpace> nodes;
  RootCube cube;
  double cell_side;  // of this level's cells
  int level;
  int leaf_capacity;
  Index level_begin;
  Index next_level_begin;

  // The first position in [first, last) whose code is >= key.
  KOKKOS_FUNCTION Index lower_bound(Index first, Index last, std::uint64_t key) const {
    while (first < last) {
      Index const middle = first + (last - first) / 2;
      if (codes(middle) < key) first = middle + 1;
      else last = middle;
    }
    return first;
  }

  KOKKOS_FUNCTION void operator()(Index i, Index& children_before, bool final) const {
    Index const node = level_begin + i;
    Index const first = nodes.point_begin(node), last = nodes.point_end(node);
    // bounds[d]..bounds[d + 1]: the bodies in octant d (the next level's digit d).
    Index bounds[9];
    int child_count = 0;
    bool const split = last - first > leaf_capacity && level < morton_levels;
    if (split) {
      int const shift = 3 * (morton_levels - level - 1);
      std::uint64_t const cell_prefix = codes(first) >> (shift + 3) << (shift + 3);
      bounds[0] = first;
      bounds[8] = last;
      for (int d = 1; d < 8; ++d) bounds[d] = lower_bound(bounds[d - 1], last, cell_prefix | std::uint64_t(d) << shift);
      for (int d = 0; d < 8; ++d) child_count += bounds[d + 1] > bounds[d] ? 1 : 0;
    }
    if (final) {
      int slot = 0;
      if (split)
        for (int d = 0; d < 8; ++d) {
          if (bounds[d + 1] == bounds[d]) continue;
          Index const child = next_level_begin + children_before + slot;
          nodes.children(node, slot++) = child;
          nodes.parent(child) = node;
          nodes.point_begin(child) = bounds[d];
          nodes.point_end(child) = bounds[d + 1];
        }
      for (; slot < 8; ++slot) nodes.children(node, slot) = -1;
      // All the node's bodies share its cell's code prefix; take the first's.
      for (int k = 0; k < 3; ++k) {
        auto const cell = compact_by_3(codes(first) >> k) >> (morton_levels - level);
        nodes.cell_center(node, k) = static_cast<Coordinate>(cube.corner[k] + (double(cell) + 0.5) * cell_side);
      }
      nodes.cell_size(node) = static_cast<Coordinate>(cell_side);
    }
    children_before += child_count;
  }
};

}  // namespace detail

// Steps 1-3 above: the octree's cells, bodies (in tree order) and geometry;
// mass and centre_of_mass are allocated but left for compute_octree_moments.
template <class ExecutionSpace, class MemorySpace>
LevelledOctree<MemorySpace> build_morton_octree_cells(
    ExecutionSpace const& space, PointSet<MemorySpace> const& bodies,
    Kokkos::View<Coordinate const*, typename PointSet<MemorySpace>::memory_space> masses, int leaf_capacity) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  detail::check_build_arguments("octree", bodies.size(), leaf_capacity, bodies.dimension());
  if (bodies.dimension() != 3)
    throw InputError("octree: bodies must be 3-dimensional (got " + std::to_string(bodies.dimension()) + ")");
  if (masses.extent(0) != static_cast<std::size_t>(bodies.size()))
    throw InputError("octree: masses and bodies differ in number");
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::build");
  // Functors as kernel arguments: this builder is instantiated in several
  // translation units of the CLI (see as_kernel_argument).
  auto const Policy = [](ExecutionSpace const& on, Index begin, Index end) {
    return detail::as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(on, begin, end));
  };
  Index const n = bodies.size();
  auto const x = bodies.coordinates;
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::root_cube");
  detail::RootCube const cube = detail::root_cube(space, x);
  Kokkos::Profiling::popRegion();

  using Allocate = detail::OctreeNodes<MemorySpace>;
  using Codes = Kokkos::View<std::uint64_t*, MemorySpace>;
  Codes const unsorted = Allocate::template allocate<Codes>(space, "unsorted_codes", n);
  Codes const codes = Allocate::template allocate<Codes>(space, "codes", n);
  // Room for 1.5 n nodes: a Plummer sphere at leaf size 8 needs about 0.4 n.
  Allocate nodes(space, static_cast<Index>(std::min<std::int64_t>(std::int64_t(n) * 3 / 2 + 64,
                                                                    std::numeric_limits<Index>::max())));
  Kokkos::parallel_for(
      "treetrav::MortonOctree::codes", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
        unsorted(i) = detail::morton_code(cube, x(i, 0), x(i, 1), x(i, 2));
        if (i == 0) {  // the root: all bodies
          nodes.parent(0) = -1;
          nodes.point_begin(0) = 0;
          nodes.point_end(0) = n;
        }
      });
  // A stable sort: equal codes keep index order on every backend.
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::sort");
  Kokkos::View<Index*, MemorySpace> const order =
      detail::sort_permutation(space, unsorted, 3 * detail::morton_levels, "treetrav::MortonOctree", codes);
  Kokkos::Profiling::popRegion();

  LevelledOctree<MemorySpace> built;
  Octree<MemorySpace>& tree = built.tree;
  using Tree = Octree<MemorySpace>;
  tree.points.points = allocate_points<MemorySpace>("treetrav::MortonOctree::bodies", n, 3);
  tree.points.original_index = order;
  tree.body_mass = Allocate::template allocate<typename Tree::scalar_view>(space, "body_mass", n);
  auto const sorted = tree.points.points.coordinates;
  auto const body_mass = tree.body_mass;
  Kokkos::parallel_for(
      "treetrav::MortonOctree::gather", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < 3; ++k) sorted(i, k) = x(order(i), k);
        body_mass(i) = masses(order(i));
      });

  built.level_begin = {0, 1};
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::levels");
  for (int level = 0;; ++level) {
    Index const begin = built.level_begin[level], end = built.level_begin[level + 1];
    if (begin == end) break;
    // At most 8 children per node of this level, and at most one per body.
    Index const needed = end + static_cast<Index>(std::min<std::int64_t>(8 * std::int64_t(end - begin), n));
    if (needed > nodes.capacity()) nodes.resize(space, std::max(needed, 2 * nodes.capacity()));
    detail::OctreeLevelBuild<MemorySpace> const level_build{
        codes, nodes, cube, cube.side / double(std::uint64_t(1) << level), level, leaf_capacity, begin, end};
    Index next_level_size = 0;
    Kokkos::parallel_scan("treetrav::MortonOctree::level", Policy(space, 0, end - begin), level_build,
                          next_level_size);
    built.level_begin.push_back(end + next_level_size);
  }
  built.level_begin.pop_back();  // the empty level that ended the loop
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::shrink");
  nodes.resize(space, built.level_begin.back());
  Kokkos::Profiling::popRegion();

  tree.topology.children = nodes.children;
  tree.topology.parent = nodes.parent;
  tree.topology.point_begin = nodes.point_begin;
  tree.topology.point_end = nodes.point_end;
  tree.cell_center = nodes.cell_center;
  tree.cell_size = nodes.cell_size;
  Index const node_count = tree.topology.size();
  tree.mass = Allocate::template allocate<typename Tree::scalar_view>(space, "mass", node_count);
  tree.center_of_mass =
      Allocate::template allocate<typename Tree::vector_view>(space, "center_of_mass", node_count, 3);
  space.fence();
  Kokkos::Profiling::popRegion();
  return built;
}

namespace detail {

// One level of step 4: a node's (m, m x, m y, m z) from its bodies (a leaf) or
// its children by slot (deeper, done), then its mass and centre of mass.
template <class MemorySpace>
struct OctreeMomentsLevel {
  Octree<MemorySpace> tree;
  Kokkos::View<MassMoments*, MemorySpace> moments;

  KOKKOS_FUNCTION void operator()(Index node) const {
    MassMoments sum{};
    for (int j = 0; j < 4; ++j) sum[j] = 0;
    if (tree.topology.is_leaf(node)) {
      auto const& x = tree.points.points.coordinates;
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        double const m = tree.body_mass(i);
        sum[0] += m;
        for (int k = 0; k < 3; ++k) sum[k + 1] += m * x(i, k);
      }
    } else {
      for (int slot = 0; slot < 8 && tree.topology.child(node, slot) >= 0; ++slot) {
        MassMoments const child = moments(tree.topology.child(node, slot));
        for (int j = 0; j < 4; ++j) sum[j] += child[j];
      }
    }
    moments(node) = sum;
    tree.mass(node) = static_cast<Coordinate>(sum[0]);
    for (int k = 0; k < 3; ++k)
      tree.center_of_mass(node, k) =
          static_cast<Coordinate>(sum[0] > 0 ? sum[k + 1] / sum[0] : tree.cell_center(node, k));
  }
};

}  // namespace detail

// Step 4: mass and centre of mass of every cell from (m, m x, m y, m z) in
// double, deepest level first, in a fixed order (a leaf's bodies, then a
// parent's children by slot): a pure function of the input, and the same bits
// as octree_moments with LevelSynchronousTreefix (tests), without rebuilding
// the rooted tree and its levels every step (perf/bench_nbody times both).
template <class ExecutionSpace, class MemorySpace>
void compute_octree_moments(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::moments");
  auto const moments = detail::OctreeNodes<MemorySpace>::template allocate<Kokkos::View<MassMoments*, MemorySpace>>(
      space, "moments", built.tree.topology.size());
  detail::OctreeMomentsLevel<MemorySpace> const level_kernel{built.tree, moments};
  for (int level = static_cast<int>(built.level_begin.size()) - 2; level >= 0; --level)
    Kokkos::parallel_for("treetrav::MortonOctree::moments",
                         detail::as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(
                             space, built.level_begin[level], built.level_begin[level + 1])),
                         level_kernel);
  space.fence();
  Kokkos::Profiling::popRegion();
}

namespace detail {

// Mass, dipole and second moments of a node's bodies about the node's float
// centre of mass c: sum m, sum m (x - c), sum m (x - c)(x - c)^T (xx, yy, zz,
// xy, xz, yz). The dipole is not zero: c is the rounded centre of mass.
struct SecondMoments {
  double mass, dipole[3], second[6];
};

template <class MemorySpace>
struct OctreeQuadrupoleLevel {
  Octree<MemorySpace> tree;
  Kokkos::View<SecondMoments*, MemorySpace> moments;

  KOKKOS_FUNCTION static void add_point_mass(SecondMoments& sum, double m, double const (&d)[3]) {
    sum.mass += m;
    for (int k = 0; k < 3; ++k) sum.dipole[k] += m * d[k];
    sum.second[0] += m * d[0] * d[0];
    sum.second[1] += m * d[1] * d[1];
    sum.second[2] += m * d[2] * d[2];
    sum.second[3] += m * d[0] * d[1];
    sum.second[4] += m * d[0] * d[2];
    sum.second[5] += m * d[1] * d[2];
  }

  KOKKOS_FUNCTION void operator()(Index node) const {
    double const c[3] = {tree.center_of_mass(node, 0), tree.center_of_mass(node, 1), tree.center_of_mass(node, 2)};
    SecondMoments sum{0, {0, 0, 0}, {0, 0, 0, 0, 0, 0}};
    if (tree.topology.is_leaf(node)) {
      auto const& x = tree.points.points.coordinates;
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        double const d[3] = {x(i, 0) - c[0], x(i, 1) - c[1], x(i, 2) - c[2]};
        add_point_mass(sum, tree.body_mass(i), d);
      }
    } else {
      // Parallel axes: the child's moments about its own centre c', shifted by s = c' - c.
      for (int slot = 0; slot < 8 && tree.topology.child(node, slot) >= 0; ++slot) {
        Index const child = tree.topology.child(node, slot);
        double const s[3] = {tree.center_of_mass(child, 0) - c[0], tree.center_of_mass(child, 1) - c[1],
                             tree.center_of_mass(child, 2) - c[2]};
        add_child(sum, moments(child), s);
      }
    }
    moments(node) = sum;
    Coordinate q[quadrupole_columns];
    traceless(sum, q);
    for (int k = 0; k < quadrupole_columns; ++k) tree.quadrupole(node, k) = q[k];
  }

  // A child's moments m about its own centre c', shifted by s = c' - c.
  KOKKOS_FUNCTION static void add_child(SecondMoments& sum, SecondMoments const& m, double const (&s)[3]) {
    add_point_mass(sum, m.mass, s);
    for (int k = 0; k < 3; ++k) sum.dipole[k] += m.dipole[k];
    sum.second[0] += m.second[0] + 2 * s[0] * m.dipole[0];
    sum.second[1] += m.second[1] + 2 * s[1] * m.dipole[1];
    sum.second[2] += m.second[2] + 2 * s[2] * m.dipole[2];
    sum.second[3] += m.second[3] + s[0] * m.dipole[1] + s[1] * m.dipole[0];
    sum.second[4] += m.second[4] + s[0] * m.dipole[2] + s[2] * m.dipole[0];
    sum.second[5] += m.second[5] + s[1] * m.dipole[2] + s[2] * m.dipole[1];
  }

  // The packed traceless quadrupole of second moments, then their trace.
  static constexpr int quadrupole_columns = 7;
  KOKKOS_FUNCTION static void traceless(SecondMoments const& sum, Coordinate (&q)[quadrupole_columns]) {
    double const trace = sum.second[0] + sum.second[1] + sum.second[2];
    for (int k = 0; k < 3; ++k) q[k] = static_cast<Coordinate>(3 * sum.second[k] - trace);
    for (int k = 3; k < 6; ++k) q[k] = static_cast<Coordinate>(3 * sum.second[k]);
    q[6] = static_cast<Coordinate>(trace);
  }
};

}  // namespace detail

// Step 5: the quadrupole moment of every cell (Octree::quadrupole) about its
// centre of mass (step 4 first), deepest level first, in double, in a fixed
// order (a leaf's bodies, then a parent's children by slot).
template <class ExecutionSpace, class MemorySpace>
void compute_octree_quadrupoles(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::quadrupoles");
  Index const nodes = built.tree.topology.size();
  using Allocate = detail::OctreeNodes<MemorySpace>;
  built.tree.quadrupole = Allocate::template allocate<typename Octree<MemorySpace>::vector_view>(
      space, "quadrupole", nodes, detail::OctreeQuadrupoleLevel<MemorySpace>::quadrupole_columns);
  auto const moments =
      Allocate::template allocate<Kokkos::View<detail::SecondMoments*, MemorySpace>>(space, "second_moments", nodes);
  detail::OctreeQuadrupoleLevel<MemorySpace> const level_kernel{built.tree, moments};
  for (int level = static_cast<int>(built.level_begin.size()) - 2; level >= 0; --level)
    Kokkos::parallel_for("treetrav::MortonOctree::quadrupoles",
                         detail::as_kernel_argument(
                             Kokkos::RangePolicy<ExecutionSpace>(space, built.level_begin[level], built.level_begin[level + 1])),
                         level_kernel);
  space.fence();
  Kokkos::Profiling::popRegion();
}

// The phases in turn: a complete Octree, built where `space` runs, with
// quadrupole moments when asked.
template <class ExecutionSpace, class MemorySpace>
Octree<MemorySpace> build_morton_octree(
    ExecutionSpace const& space, PointSet<MemorySpace> const& bodies,
    Kokkos::View<Coordinate const*, typename PointSet<MemorySpace>::memory_space> masses, int leaf_capacity = 8,
    bool with_quadrupoles = false) {
  auto built = build_morton_octree_cells(space, bodies, masses, leaf_capacity);
  compute_octree_moments(space, built);
  if (with_quadrupoles) compute_octree_quadrupoles(space, built);
  return built.tree;
}

template <class MemorySpace>
template <class ExecutionSpace, class BodyMemorySpace, class MassView>
Octree<MemorySpace>::Octree(ExecutionSpace const& space, PointSet<BodyMemorySpace> const& bodies,
                            MassView const& masses, int leaf_capacity) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  using BuildMemory = typename ExecutionSpace::memory_space;
  auto const here = copy_points(space, bodies, "treetrav::Octree::bodies");
  auto const here_masses = Kokkos::create_mirror_view_and_copy(space, masses);
  auto built = build_morton_octree(space, here, Kokkos::View<Coordinate const*, BuildMemory>(here_masses),
                                   leaf_capacity);
  if constexpr (std::is_same_v<BuildMemory, MemorySpace>)
    *this = built;
  else
    *this = copy_tree(typename MemorySpace::execution_space{}, built);
}

}  // namespace treetrav
