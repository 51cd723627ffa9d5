#pragma once

// The Barnes-Hut octree (the Octree type: trees/detail/octree_type.hpp) and its
// one builder, the Morton octree, built on the execution space itself (the GPU
// in a GPU run): build_morton_octree, and Octree's constructor at the end.
//
//   1. Morton codes: each body's cell at the finest level (21 bits per axis)
//      of the cube around all bodies, the three axes' bits interleaved;
//   2. a stable sort by code: every cell's bodies become contiguous;
//   3. the hierarchy from the sorted codes at once (NodeLevels): the nodes
//      each body begins, keyed by (level, body), sorted into breadth-first
//      order, then linked by binary searches; a cell holding more than
//      `leaf_capacity` bodies splits into its non-empty octants.
//   4. (separately, so it can be timed) mass and centre of mass of every cell,
//      bottom-up in one launch (OctreeUpward): leaves sum their bodies,
//      parents their children, in double (the sums of treefix/octree.hpp's
//      leaffix by the level-synchronous method, bit for bit, without the
//      rooted tree and levels the treefix first rebuilds from the parents).
//   5. (optional, after 4 or in the same pass) quadrupole moments about the
//      float centres of mass, bottom-up in double by the parallel-axis theorem.
//   Between builds, refit_octree moves the bodies in the same cells and redoes
//   4 and 5 in one pass.
//
// Everything is a pure function of the float positions and masses: codes,
// ties (by body index), node numbering and summation orders are fixed, so equal
// inputs give bit-identical trees on every run and thread count.
#include <treetrav/core/allocate.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/scan.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
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

namespace detail {
// Mass, dipole and second moments of a node's bodies about the node's float
// centre of mass c: sum m, sum m (x - c), sum m (x - c)(x - c)^T (xx, yy, zz,
// xy, xz, yz). The dipole is not zero: c is the rounded centre of mass.
struct SecondMoments {
  double mass, dipole[3], second[6];
};
// A node's bodies' box: low[3], high[3].
struct alignas(8) OctreeBox {
  Coordinate low[3], high[3];
};
}  // namespace detail

// An octree, where its levels lie (nodes are numbered breadth-first, level L
// holds nodes [level_begin(L), level_begin(L + 1)); past the deepest level
// the node count; octree_levels reads them), and what its upward passes keep
// between calls (the caller's: it holds the octree).
template <class MemorySpace>
struct LevelledOctree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "LevelledOctree needs a Kokkos memory space");
  Octree<MemorySpace> tree;
  // The caller's workspace its arrays live in (build_morton_octree_cells),
  // its upward passes' too; none: arrays of its own.
  Workspace* workspace = nullptr;
  Kokkos::View<Index*, MemorySpace> level_begin; // (morton_levels + 3)
  // Each node's children that have reported to it in an upward pass: zero
  // before and after every pass.
  Kokkos::View<int*, MemorySpace> arrivals;
  Kokkos::View<MassMoments*, MemorySpace> moments;
  Kokkos::View<detail::SecondMoments*, MemorySpace> second_moments;
  // A refit's: the cubes as built (tree.cell_size and cell_center then hold
  // the refitted ones) and each node's box of bodies.
  Kokkos::View<Coordinate*, MemorySpace> built_cell_size;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> built_cell_center;
  Kokkos::View<detail::OctreeBox*, MemorySpace> boxes;
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

// The bodies' box, bounds[0, 3) the minima and bounds[3, 6) the maxima, in
// one pass (minima and maxima are exact, so every backend finds the same
// box), then one read back. On a GPU morton_sort's box kernel: Kokkos'
// reduction over a runtime-sized array was the build's slowest part in a
// profile (perf/results/nbody/issue35/).
template <class ExecutionSpace, class MemorySpace>
void bounding_box(ExecutionSpace const& space, Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> const& x,
                  Coordinate (&bounds)[6], Workspace* workspace = nullptr) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    using Launch = MortonBoxLaunch<MemorySpace>;
    int const blocks = Launch::blocks(static_cast<Index>(x.extent(0)));
    Scratch<MemorySpace, 3> scratch(WorkspaceArrays<ExecutionSpace>(space, workspace), "treetrav::MortonOctree::root_cube",
                                    {sizeof bounds, std::size_t(blocks) * sizeof bounds, sizeof(unsigned)});
    auto* const box = static_cast<Coordinate*>(scratch.part(0));
    auto* const arrivals = static_cast<unsigned*>(scratch.part(2));
    cudaStream_t const stream = space.cuda_stream();
    launch_morton_box(stream, x, blocks, static_cast<Coordinate*>(scratch.part(1)), arrivals, box);
    check_cuda(cudaMemcpyAsync(bounds, box, sizeof bounds, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#endif
  } else {
    Kokkos::parallel_reduce("treetrav::MortonOctree::root_cube",
                            as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, x.extent(0))),
                            BoxReduction<MemorySpace>{6, x},
                            Kokkos::View<Coordinate*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(bounds, 6));
  }
}

// The cube around the bodies' box.
template <class ExecutionSpace, class MemorySpace>
RootCube root_cube(ExecutionSpace const& space, Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> const& x,
                   Workspace* workspace = nullptr) {
  Coordinate bounds[6];
  bounding_box(space, x, bounds, workspace);
  Coordinate const lo[3] = {bounds[0], bounds[1], bounds[2]}, hi[3] = {bounds[3], bounds[4], bounds[5]};
  return cube_around(lo, hi);
}

// The octree's arrays, named after the builder: in the caller's workspace
// when the build was given one (WorkspaceArrays).
template <class View, class ExecutionSpace, class... Extents>
View allocate_octree_array(ExecutionSpace const& space, Workspace* workspace, char const* member,
                           Extents... extents) {
  return WorkspaceArrays<ExecutionSpace>(space, workspace)
      .template make<View>(std::string("treetrav::MortonOctree::") + member, extents...);
}

// The levels (octal digits) two codes share from the top: all 21 when equal.
// The codes fill bits [0, 63): bit 62 is the first level's top bit.
KOKKOS_INLINE_FUNCTION int shared_levels(std::uint64_t a, std::uint64_t b) {
  std::uint64_t const differ = a ^ b;
  return differ == 0 ? morton_levels : (leading_zeros(differ) - 1) / 3;
}

// The octree's nodes straight from the sorted codes, without building it
// level by level (a kernel and a read back per level). A node is a cell whose
// parent cell holds more than leaf_capacity bodies (the root always) and
// lies above the finest level. Body i is the first body of its cell at every
// level deeper than the levels it shares with body i - 1; the cells holding i
// that exceed the capacity are those of the levels up to the deepest that
// some leaf_capacity + 1 consecutive bodies around i share. So body i begins
// a node at each level of [first, last] (none when first > last), and the
// nodes sorted by (level, first body) are the breadth-first numbering, the
// children of a node consecutive and in octant order. Forced splits: a cell
// may also split whatever its count (a distributed run's cells shared by
// several ranks split as the octree of all ranks' bodies splits them, which a
// rank's own bodies do not show); forced(i) is then the level below the
// deepest such cell holding body i (0: none), and the cells above it split.
// They are nested along each body's path, so the nodes stay a tree.
template <class MemorySpace>
struct NodeLevels {
  Kokkos::View<std::uint64_t const*, MemorySpace> codes;
  // shared(j): the levels bodies j and j + leaf_capacity share (ShareLevels).
  Kokkos::View<std::int8_t const*, MemorySpace> shared;
  int leaf_capacity;
  // Each body's levels [first, last], packed first | last << 8, once for the
  // count and the keys.
  Kokkos::View<std::uint16_t*, MemorySpace> levels;
  // Optional (extent 0: none): each body's forced splits, OctreeSplits.
  Kokkos::View<std::int8_t const*, MemorySpace> forced;

  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const n = static_cast<Index>(codes.extent(0));
    int const first = i == 0 ? 0 : shared_levels(codes(i - 1), codes(i)) + 1;
    int over = -1; // the deepest level whose cell holding i exceeds the capacity
    Index const low = i > leaf_capacity ? i - leaf_capacity : 0;
    for (Index j = low; j <= i && j + leaf_capacity < n; ++j) over = shared(j) > over ? shared(j) : over;
    int last = over + 1 < morton_levels ? over + 1 : morton_levels;
    if (forced.extent(0) != 0 && forced(i) > last) last = forced(i);
    levels(i) = static_cast<std::uint16_t>(first | last << 8);
  }
};

// Each window's shared levels once, where every body's window of
// leaf_capacity + 1 would compare them again.
template <class MemorySpace>
struct ShareLevels {
  Kokkos::View<std::uint64_t const*, MemorySpace> codes;
  Kokkos::View<std::int8_t*, MemorySpace> shared;
  int leaf_capacity;
  KOKKOS_FUNCTION void operator()(Index j) const {
    shared(j) = static_cast<std::int8_t>(shared_levels(codes(j), codes(j + leaf_capacity)));
  }
};

// How many nodes each body begins (laid out by lay_out_counts: offsets(i)
// the nodes begun by the bodies before i).
template <class MemorySpace>
struct CountNodeStarts {
  Kokkos::View<std::uint16_t const*, MemorySpace> levels;
  KOKKOS_FUNCTION Index operator()(Index i) const {
    int const first = levels(i) & 0xff, last = levels(i) >> 8;
    return last >= first ? last - first + 1 : 0;
  }
};

// Each node's key: its level, then its first body.
template <class MemorySpace>
struct EmitNodeKeys {
  Kokkos::View<std::uint16_t const*, MemorySpace> levels;
  Kokkos::View<Index const*, MemorySpace> offsets;
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  KOKKOS_FUNCTION void operator()(Index i) const {
    int const first = levels(i) & 0xff, last = levels(i) >> 8;
    for (int level = first; level <= last; ++level)
      keys(offsets(i) + level - first) = std::uint64_t(level) << 32 | std::uint64_t(i);
  }
};

inline constexpr int octree_level_slots = morton_levels + 3; // level_begin(0 .. 23)

// Where each level's nodes begin: the first key of the level (past the
// deepest: the node count).
template <class MemorySpace>
struct FindLevels {
  Kokkos::View<std::uint64_t const*, MemorySpace> keys;
  Kokkos::View<Index*, MemorySpace> level_begin;
  KOKKOS_FUNCTION void operator()(int level) const {
    level_begin(level) = lower_bound(keys, 0, static_cast<Index>(keys.extent(0)), std::uint64_t(level) << 32);
  }
};

// A node's links, bodies and geometry from its key.
template <class MemorySpace>
struct FillNodes {
  Kokkos::View<std::uint64_t const*, MemorySpace> codes;
  Kokkos::View<std::uint64_t const*, MemorySpace> keys;
  Kokkos::View<Index const*, MemorySpace> level_begin;
  Kokkos::View<Index**, Kokkos::LayoutLeft, MemorySpace> children;
  Kokkos::View<Index*, MemorySpace> parent, point_begin, point_end;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> cell_center;
  Kokkos::View<Coordinate*, MemorySpace> cell_size;
  RootCube cube;
  int leaf_capacity;
  Kokkos::View<std::int8_t const*, MemorySpace> forced; // as NodeLevels'

  // The end of the cell (codes >> shift == cell) that body i is in:
  // galloping, then halving (cells are mostly small).
  KOKKOS_FUNCTION Index cell_end(Index i, int shift) const {
    Index const n = static_cast<Index>(codes.extent(0));
    std::uint64_t const cell = codes(i) >> shift;
    Index inside = i, step = 1;
    Index outside = i + 1;
    while (outside < n && codes(outside) >> shift == cell) {
      inside = outside;
      step = step < n ? 2 * step : step;
      outside = n - i > step ? i + step : n;
    }
    while (outside - inside > 1) {
      Index const middle = inside + (outside - inside) / 2;
      if (codes(middle) >> shift == cell) inside = middle;
      else outside = middle;
    }
    return outside;
  }
  KOKKOS_FUNCTION void operator()(Index node) const {
    std::uint64_t const key = keys(node);
    int const level = static_cast<int>(key >> 32);
    Index const first = static_cast<Index>(key & 0xffffffffu);
    int const shift = 3 * (morton_levels - level); // codes >> shift: the node's cell
    Index const last = cell_end(first, shift);
    point_begin(node) = first;
    point_end(node) = last;
    // The parent: the node of the level above that begins last at or before
    // `first` (a level's nodes are disjoint cells).
    parent(node) = level == 0 ? Index(-1)
                              : lower_bound(keys, level_begin(level - 1), level_begin(level),
                                            (std::uint64_t(level - 1) << 32 | std::uint64_t(first)) + 1) - 1;
    int count = 0;
    Index child = 0;
    bool const splits = last - first > leaf_capacity || (forced.extent(0) != 0 && forced(first) > level);
    if (splits && level < morton_levels) {
      Index const begin = level_begin(level + 1), end = level_begin(level + 2);
      std::uint64_t const next = std::uint64_t(level + 1) << 32;
      child = lower_bound(keys, begin, end, next | std::uint64_t(first));
      count = static_cast<int>(lower_bound(keys, child, end, next | std::uint64_t(last)) - child);
    }
    for (int slot = 0; slot < 8; ++slot) children(node, slot) = slot < count ? child + slot : Index(-1);
    double const cell_side = cube.side / double(std::uint64_t(1) << level);
    // All the node's bodies share its cell's code prefix; take the first's.
    for (int k = 0; k < 3; ++k) {
      auto const cell = compact_by_3(codes(first) >> k) >> (morton_levels - level);
      cell_center(node, k) = static_cast<Coordinate>(cube.corner[k] + (double(cell) + 0.5) * cell_side);
    }
    cell_size(node) = static_cast<Coordinate>(cell_side);
  }
};

}  // namespace detail

namespace detail {

// Steps 1-2 in `cube`: the bodies and masses in tree order in built.tree
// (points, original_index, body_mass); returns their codes, sorted.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<std::uint64_t*, MemorySpace> sort_octree_bodies(
    ExecutionSpace const& space, LevelledOctree<MemorySpace>& built, PointSet<MemorySpace> const& bodies,
    Kokkos::View<Coordinate const*, typename PointSet<MemorySpace>::memory_space> masses, RootCube const& cube) {
  // Functors as kernel arguments: this builder is instantiated in several
  // translation units of the CLI (see as_kernel_argument).
  auto const Policy = [](ExecutionSpace const& on, Index begin, Index end) {
    return as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(on, begin, end));
  };
  Index const n = bodies.size();
  auto const x = bodies.coordinates;
  Workspace* const workspace = built.workspace;
  using Codes = Kokkos::View<std::uint64_t*, MemorySpace>;
  auto const allocate = [&](auto view, char const* member, auto... extents) {
    return allocate_octree_array<decltype(view)>(space, workspace, member, extents...);
  };
  Codes const unsorted = allocate(Codes{}, "unsorted_codes", n);
  Codes const codes = allocate(Codes{}, "codes", n);
  Kokkos::parallel_for(
      "treetrav::MortonOctree::codes", Policy(space, 0, n),
      KOKKOS_LAMBDA(Index i) { unsorted(i) = morton_code(cube, x(i, 0), x(i, 1), x(i, 2)); });
  // A stable sort: equal codes keep index order on every backend.
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::sort");
  Kokkos::View<Index*, MemorySpace> const order =
      sort_permutation(space, unsorted, 3 * morton_levels, "treetrav::MortonOctree", codes, workspace);
  Kokkos::Profiling::popRegion();

  Octree<MemorySpace>& tree = built.tree;
  using Tree = Octree<MemorySpace>;
  tree.points.points = PointSet<MemorySpace>(
      allocate(typename PointSet<MemorySpace>::coordinates_view{}, "bodies", n, 3));
  tree.points.original_index = order;
  tree.body_mass = allocate(typename Tree::scalar_view{}, "body_mass", n);
  auto const sorted = tree.points.points.coordinates;
  auto const body_mass = tree.body_mass;
  Kokkos::parallel_for(
      "treetrav::MortonOctree::gather", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < 3; ++k) sorted(i, k) = x(order(i), k);
        body_mass(i) = masses(order(i));
      });
  return codes;
}

// Step 3 from the sorted `codes` of the bodies in built.tree (sort_octree_bodies),
// with the forced splits `forced` (NodeLevels; extent 0: none).
template <class ExecutionSpace, class MemorySpace>
void build_octree_nodes(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built,
                        Kokkos::View<std::uint64_t const*, MemorySpace> codes, int leaf_capacity, RootCube const& cube,
                        Kokkos::View<std::int8_t const*, MemorySpace> forced = {}) {
  auto const Policy = [](ExecutionSpace const& on, Index begin, Index end) {
    return as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(on, begin, end));
  };
  Index const n = static_cast<Index>(codes.extent(0));
  Workspace* const workspace = built.workspace;
  WorkspaceArrays<ExecutionSpace> const arrays(space, workspace);
  using Codes = Kokkos::View<std::uint64_t*, MemorySpace>;
  auto const allocate = [&](auto view, char const* member, auto... extents) {
    return allocate_octree_array<decltype(view)>(space, workspace, member, extents...);
  };
  Octree<MemorySpace>& tree = built.tree;
  using Tree = Octree<MemorySpace>;
  // The nodes (NodeLevels): counted, keyed by (level, first body), sorted
  // into breadth-first order, then linked; one read back (the node count),
  // however deep the tree.
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::nodes");
  auto const shared = allocate(Kokkos::View<std::int8_t*, MemorySpace>{}, "shared_levels", n);
  if (n > leaf_capacity)
    Kokkos::parallel_for("treetrav::MortonOctree::shared_levels", Policy(space, 0, n - leaf_capacity),
                         ShareLevels<MemorySpace>{codes, shared, leaf_capacity});
  auto const levels = allocate(Kokkos::View<std::uint16_t*, MemorySpace>{}, "node_levels", n);
  Kokkos::parallel_for("treetrav::MortonOctree::node_levels", Policy(space, 0, n),
                       NodeLevels<MemorySpace>{codes, shared, leaf_capacity, levels, forced});
  auto const offsets = allocate(Kokkos::View<Index*, MemorySpace>{}, "node_offsets", n);
  Index const node_count = lay_out_counts(arrays, "treetrav::MortonOctree::count_nodes", n,
                                          CountNodeStarts<MemorySpace>{levels}, PlaceFirst<MemorySpace>{offsets});
  Codes const node_keys = allocate(Codes{}, "node_keys", node_count);
  Codes const keys = allocate(Codes{}, "sorted_node_keys", node_count);
  Kokkos::parallel_for("treetrav::MortonOctree::node_keys", Policy(space, 0, n),
                       EmitNodeKeys<MemorySpace>{levels, offsets, node_keys});
  sort_keys(space, node_keys, 32 + 5, "treetrav::MortonOctree::nodes", keys, workspace);
  auto const level_begin = allocate(Kokkos::View<Index*, MemorySpace>{}, "level_begin", octree_level_slots);
  Kokkos::parallel_for("treetrav::MortonOctree::levels", Policy(space, 0, octree_level_slots),
                       FindLevels<MemorySpace>{keys, level_begin});
  built.level_begin = level_begin;
  tree.topology.children = allocate(decltype(tree.topology.children){}, "children", node_count, 8);
  tree.topology.parent = allocate(decltype(tree.topology.parent){}, "parent", node_count);
  tree.topology.point_begin = allocate(decltype(tree.topology.point_begin){}, "point_begin", node_count);
  tree.topology.point_end = allocate(decltype(tree.topology.point_end){}, "point_end", node_count);
  tree.cell_center = allocate(decltype(tree.cell_center){}, "cell_center", node_count, 3);
  tree.cell_size = allocate(decltype(tree.cell_size){}, "cell_size", node_count);
  Kokkos::parallel_for("treetrav::MortonOctree::fill_nodes", Policy(space, 0, node_count),
                       FillNodes<MemorySpace>{codes, keys, level_begin, tree.topology.children, tree.topology.parent,
                                              tree.topology.point_begin, tree.topology.point_end, tree.cell_center,
                                              tree.cell_size, cube, leaf_capacity, forced});
  Kokkos::Profiling::popRegion();

  tree.mass = allocate(typename Tree::scalar_view{}, "mass", node_count);
  tree.center_of_mass = allocate(typename Tree::vector_view{}, "center_of_mass", node_count, 3);
}

}  // namespace detail

// Steps 1-3 above: the octree's cells, bodies (in tree order) and geometry;
// mass and centre_of_mass are allocated but left for compute_octree_moments.
// With a workspace, every array (the octree's and the build's scratch) is the
// workspace's (WorkspaceArrays): a repeated build allocates nothing, and
// overwrites the octree the last build with that workspace returned.
template <class ExecutionSpace, class MemorySpace>
LevelledOctree<MemorySpace> build_morton_octree_cells(
    ExecutionSpace const& space, PointSet<MemorySpace> const& bodies,
    Kokkos::View<Coordinate const*, typename PointSet<MemorySpace>::memory_space> masses, int leaf_capacity,
    Workspace* workspace = nullptr) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  detail::check_build_arguments("octree", bodies.size(), leaf_capacity, bodies.dimension());
  if (bodies.dimension() != 3)
    throw InputError("octree: bodies must be 3-dimensional (got " + std::to_string(bodies.dimension()) + ")");
  if (masses.extent(0) != static_cast<std::size_t>(bodies.size()))
    throw InputError("octree: masses and bodies differ in number");
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::build");
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::root_cube");
  detail::RootCube const cube = detail::root_cube(space, bodies.coordinates, workspace);
  Kokkos::Profiling::popRegion();
  LevelledOctree<MemorySpace> built;
  built.workspace = workspace;
  auto const codes = detail::sort_octree_bodies(space, built, bodies, masses, cube);
  detail::build_octree_nodes(space, built, Kokkos::View<std::uint64_t const*, MemorySpace>(codes), leaf_capacity,
                             cube);
  space.fence();
  Kokkos::Profiling::popRegion();
  return built;
}

// Where the levels of `built` begin, read back: level L holds nodes
// [levels[L], levels[L + 1]), the last entry the node count.
template <class MemorySpace>
std::vector<Index> octree_levels(LevelledOctree<MemorySpace> const& built) {
  auto const begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, built.level_begin);
  Index const nodes = built.tree.topology.size();
  std::vector<Index> levels;
  for (std::size_t level = 0; level < begin.extent(0) && begin(level) < nodes; ++level) levels.push_back(begin(level));
  levels.push_back(nodes);
  return levels;
}

namespace detail {

// A node's children as an upward pass holds them, loaded at once: eight
// independent loads, where a loop that tests each slot before loading the
// next makes a chain of them, and an upward pass's time is its chains'.
struct OctreeChildren {
  Index index[8];
  int count; // 0: a leaf
};

template <class Topology>
KOKKOS_INLINE_FUNCTION OctreeChildren load_children(Topology const& topology, Index node) {
  OctreeChildren c;
  for (int slot = 0; slot < 8; ++slot) c.index[slot] = topology.child(node, slot);
  c.count = 0;
  for (int slot = 0; slot < 8; ++slot) c.count += c.index[slot] >= 0 ? 1 : 0; // the used slots come first
  return c;
}

// Step 4 at one node: its (m, m x, m y, m z) from its bodies (a leaf) or its
// children by slot (done before it), then its mass and centre of mass.
template <class MemorySpace>
struct OctreeMomentsNode {
  Octree<MemorySpace> tree;
  Kokkos::View<MassMoments*, MemorySpace> moments;

  KOKKOS_FUNCTION void operator()(Index node, OctreeChildren const& children) const {
    MassMoments sum{};
    for (int j = 0; j < 4; ++j) sum[j] = 0;
    if (children.count == 0) {
      auto const& x = tree.points.points.coordinates;
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        double const m = tree.body_mass(i);
        sum[0] += m;
        for (int k = 0; k < 3; ++k) sum[k + 1] += m * x(i, k);
      }
    } else {
      for (int slot = 0; slot < 8; ++slot)
        if (slot < children.count) {
          MassMoments const child = moments(children.index[slot]);
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

template <class MemorySpace>
struct OctreeQuadrupoleNode {
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

  KOKKOS_FUNCTION void operator()(Index node, OctreeChildren const& children) const {
    double const c[3] = {tree.center_of_mass(node, 0), tree.center_of_mass(node, 1), tree.center_of_mass(node, 2)};
    SecondMoments sum{0, {0, 0, 0}, {0, 0, 0, 0, 0, 0}};
    if (children.count == 0) {
      auto const& x = tree.points.points.coordinates;
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        double const d[3] = {x(i, 0) - c[0], x(i, 1) - c[1], x(i, 2) - c[2]};
        add_point_mass(sum, tree.body_mass(i), d);
      }
    } else {
      // Parallel axes: the child's moments about its own centre c', shifted by s = c' - c.
      for (int slot = 0; slot < 8; ++slot)
        if (slot < children.count) {
          Index const child = children.index[slot];
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

// A node's box of its bodies (tree order): a leaf's from its bodies, a
// parent's the hull of its children's.
template <class MemorySpace>
struct OctreeBoxNode {
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> sorted;
  TreeTopology<8, MemorySpace> topology;
  Kokkos::View<OctreeBox*, MemorySpace> boxes;

  KOKKOS_FUNCTION static OctreeBox of_children(Kokkos::View<OctreeBox*, MemorySpace> const& boxes,
                                               OctreeChildren const& children) {
    OctreeBox box = boxes(children.index[0]);
    for (int slot = 1; slot < 8; ++slot)
      if (slot < children.count) {
        OctreeBox const child = boxes(children.index[slot]);
        for (int k = 0; k < 3; ++k) {
          box.low[k] = child.low[k] < box.low[k] ? child.low[k] : box.low[k];
          box.high[k] = child.high[k] > box.high[k] ? child.high[k] : box.high[k];
        }
      }
    return box;
  }

  KOKKOS_FUNCTION void operator()(Index node, OctreeChildren const& children) const {
    if (children.count > 0) {
      boxes(node) = of_children(boxes, children);
      return;
    }
    OctreeBox box;
    Index const begin = topology.point_begin(node);
    for (int k = 0; k < 3; ++k) box.low[k] = box.high[k] = sorted(begin, k);
    for (Index i = begin + 1; i < topology.point_end(node); ++i)
      for (int k = 0; k < 3; ++k) {
        Coordinate const x = sorted(i, k);
        box.low[k] = x < box.low[k] ? x : box.low[k];
        box.high[k] = x > box.high[k] ? x : box.high[k];
      }
    boxes(node) = box;
  }
};

// A refit at one node: a leaf gathers its bodies' new positions into tree
// order; its box is theirs (a parent's, its children's). Its cube follows the
// box: the built side, unless the bodies spread wider, about the centre
// nearest the built one that holds the box. A cube grown about its built
// centre would grow by twice what its bodies moved, and overlap its
// neighbours: a group walk then packs fewer groups and opens more cells
// (perf/results/nbody/issue35/README.md, run 4).
template <class MemorySpace>
struct OctreeRefitNode {
  Octree<MemorySpace> tree;
  Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> positions; // in build order
  Kokkos::View<Coordinate const*, MemorySpace> built_size;
  Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> built_center;
  Kokkos::View<OctreeBox*, MemorySpace> boxes;

  KOKKOS_FUNCTION void operator()(Index node, OctreeChildren const& children) const {
    OctreeBox box;
    auto const& sorted = tree.points.points.coordinates;
    if (children.count == 0) { // a node holds a body at least
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        Index const body = tree.points.original_index(i);
        for (int k = 0; k < 3; ++k) {
          Coordinate const x = positions(body, k);
          sorted(i, k) = x;
          bool const first = i == tree.topology.point_begin(node);
          box.low[k] = first || x < box.low[k] ? x : box.low[k];
          box.high[k] = first || x > box.high[k] ? x : box.high[k];
        }
      }
    } else {
      box = OctreeBoxNode<MemorySpace>::of_children(boxes, children);
    }
    boxes(node) = box;
    double const built = built_size(node);
    // A built cube holds its bodies only to within the Morton codes'
    // resolution (the finest cell's side) and its float centre's rounding:
    // bodies within that slack count as held, so unmoved bodies change nothing.
    double slack = double(built_size(0)) / double(1 << morton_levels);
    double half = built / 2, center[3];
    for (int k = 0; k < 3; ++k) {
      center[k] = built_center(node, k);
      double const rounding = (center[k] < 0 ? -center[k] : center[k]) / double(1 << 21);
      slack = rounding > slack ? rounding : slack;
      double const extent = (double(box.high[k]) - double(box.low[k])) / 2;
      half = extent > half ? extent : half;
    }
    bool held = half == built / 2;
    for (int k = 0; k < 3; ++k) {
      // The centres whose cube holds the box on this axis: [high - half, low + half].
      double const lowest = double(box.high[k]) - half, highest = double(box.low[k]) + half;
      if (center[k] < lowest - slack) center[k] = lowest, held = false;
      else if (center[k] > highest + slack) center[k] = highest, held = false;
    }
    if (held) {
      tree.cell_size(node) = static_cast<Coordinate>(built);
      for (int k = 0; k < 3; ++k) tree.cell_center(node, k) = built_center(node, k);
      return;
    }
    double reach = half; // about the float centre
    for (int k = 0; k < 3; ++k) {
      Coordinate const c = static_cast<Coordinate>(center[k]);
      tree.cell_center(node, k) = c;
      reach = double(box.high[k]) - c > reach ? double(box.high[k]) - c : reach;
      reach = c - double(box.low[k]) > reach ? c - double(box.low[k]) : reach;
    }
    Coordinate side = static_cast<Coordinate>(2 * reach > built ? 2 * reach : built);
    if (double(side) < 2 * reach) side += side * Coordinate(1.0 / (1 << 22)); // rounded up: holds its bodies
    tree.cell_size(node) = side;
  }
};

// A refit's growth: each cell's (side / built side)^3 - 1, at most 8, in
// units of 2^-16, summed (integers: the same sum in every order).
template <class MemorySpace>
struct OctreeGrowth {
  Kokkos::View<Coordinate const*, MemorySpace> size, built_size;

  static constexpr double unit = 65536;
  static constexpr double cap = 8;

  KOKKOS_FUNCTION void operator()(Index node, std::int64_t& sum) const {
    if (size(node) == built_size(node)) return;
    double const ratio = double(size(node)) / double(built_size(node));
    double const growth = ratio * ratio * ratio - 1;
    sum += static_cast<std::int64_t>((growth < cap ? growth : cap) * unit);
  }
};

// The nodes' work of an upward pass, in this order at each node: a refit,
// step 4, step 5 (each part when asked).
template <class MemorySpace, bool Moments, bool Quadrupoles, bool Refit>
struct OctreeUpwardNode {
  OctreeRefitNode<MemorySpace> refit;
  OctreeMomentsNode<MemorySpace> moments;
  OctreeQuadrupoleNode<MemorySpace> quadrupoles;

  KOKKOS_FUNCTION void operator()(Index node, OctreeChildren const& children) const {
    if constexpr (Refit) refit(node, children);
    if constexpr (Moments) moments(node, children);
    if constexpr (Quadrupoles) quadrupoles(node, children);
  }
};

// An upward pass in one launch: a thread per leaf does the leaf, then climbs.
// At each parent only the thread of the child reporting last (a count of
// arrivals) goes on, and does the parent from its children by slot: every
// node is done once, after its children, in the order of a level-by-level
// loop and to the same bits, without a launch and a wait per level (the
// moments were about 40 launches a step at 1M bodies). The fences order a
// child's results before its report, and the reports before the parent's
// reads (Karras 2012, and ArborX's bounding volumes).
template <class MemorySpace, class NodeWork>
struct OctreeUpward {
  TreeTopology<8, MemorySpace> topology;
  NodeWork work;
  Kokkos::View<int*, MemorySpace> arrivals;

  KOKKOS_FUNCTION void operator()(Index node) const {
    if (!topology.is_leaf(node)) return;
    OctreeChildren children;
    children.count = 0;
    for (;;) {
      work(node, children);
      Index const parent = topology.parent(node);
      if (parent < 0) return;
      children = load_children(topology, parent);
      Kokkos::memory_fence();
      if (Kokkos::atomic_fetch_add(&arrivals(parent), 1) != children.count - 1) return;
      Kokkos::memory_fence();
      arrivals(parent) = 0;
      node = parent;
    }
  }
};

// Launches an upward pass of `work` over the built octree (its arrivals
// allocated and zeroed on first use).
template <class ExecutionSpace, class MemorySpace, class NodeWork>
void launch_octree_upward(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built, NodeWork const& work) {
  Index const nodes = built.tree.topology.size();
  if (built.arrivals.extent(0) != std::size_t(nodes)) {
    built.arrivals = allocate_octree_array<decltype(built.arrivals)>(space, built.workspace, "arrivals", nodes);
    Kokkos::deep_copy(space, built.arrivals, 0);
  }
  // A for, not a reduction: Kokkos' reductions hand a thread several nodes
  // in turn, and each climb would wait for the last.
  Kokkos::parallel_for("treetrav::MortonOctree::upward",
                       as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, nodes)),
                       OctreeUpward<MemorySpace, NodeWork>{built.tree.topology, work, built.arrivals});
}

// Runs the pass.
template <bool Moments, bool Quadrupoles, bool Refit, class ExecutionSpace, class MemorySpace>
void octree_upward_pass(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built,
                        Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> positions = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                "the tree lives in the execution space's memory space");
  auto& tree = built.tree;
  Index const nodes = tree.topology.size();
  if (nodes == 0) return;
  auto const allocate = [&](auto& view, char const* member) {
    using View = std::remove_reference_t<decltype(view)>;
    if (view.extent(0) != std::size_t(nodes)) view = allocate_octree_array<View>(space, built.workspace, member, nodes);
  };
  // The tree's views allocated before the parts take their copies of it.
  if (Quadrupoles && tree.quadrupole.extent(0) != std::size_t(nodes))
    tree.quadrupole = allocate_octree_array<typename Octree<MemorySpace>::vector_view>(
        space, built.workspace, "quadrupole", nodes, OctreeQuadrupoleNode<MemorySpace>::quadrupole_columns);
  OctreeUpwardNode<MemorySpace, Moments, Quadrupoles, Refit> work;
  if constexpr (Refit) {
    if (built.built_cell_size.extent(0) != std::size_t(nodes)) {
      // Before the first refit the cubes are the build's.
      allocate(built.built_cell_size, "built_cell_size");
      Kokkos::deep_copy(space, built.built_cell_size, tree.cell_size);
      built.built_cell_center = allocate_octree_array<decltype(built.built_cell_center)>(
          space, built.workspace, "built_cell_center", nodes, 3);
      Kokkos::deep_copy(space, built.built_cell_center, tree.cell_center);
    }
    allocate(built.boxes, "boxes");
    work.refit = {tree, positions, built.built_cell_size, built.built_cell_center, built.boxes};
  }
  if constexpr (Moments) {
    allocate(built.moments, "moments");
    work.moments = {tree, built.moments};
  }
  if constexpr (Quadrupoles) {
    allocate(built.second_moments, "second_moments");
    work.quadrupoles = {tree, built.second_moments};
  }
  launch_octree_upward(space, built, work);
}

// Each node's box of its bodies, into `boxes` (nodes), in one upward pass.
template <class ExecutionSpace, class MemorySpace>
void octree_boxes(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built,
                  Kokkos::View<OctreeBox*, MemorySpace> const& boxes) {
  auto const& tree = built.tree;
  if (tree.topology.size() == 0) return;
  launch_octree_upward(space, built, OctreeBoxNode<MemorySpace>{tree.points.points.coordinates, tree.topology, boxes});
}

}  // namespace detail

// Step 4: mass and centre of mass of every cell from (m, m x, m y, m z) in
// double, children before parents, in a fixed order (a leaf's bodies, then a
// parent's children by slot): a pure function of the input, and the same bits
// as octree_moments with LevelSynchronousTreefix (tests), without rebuilding
// the rooted tree and its levels every step (perf/bench_nbody times both).
template <class ExecutionSpace, class MemorySpace>
void compute_octree_moments(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built) {
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::moments");
  detail::octree_upward_pass<true, false, false>(space, built);
  space.fence();
  Kokkos::Profiling::popRegion();
}

// Step 5: the quadrupole moment of every cell (Octree::quadrupole) about its
// centre of mass (step 4 first), children before parents, in double, in a
// fixed order (a leaf's bodies, then a parent's children by slot).
template <class ExecutionSpace, class MemorySpace>
void compute_octree_quadrupoles(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built) {
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::quadrupoles");
  detail::octree_upward_pass<false, true, false>(space, built);
  space.fence();
  Kokkos::Profiling::popRegion();
}

// Steps 4 and 5 in one pass (the same bits as the two above in turn).
template <class ExecutionSpace, class MemorySpace>
void compute_octree_multipoles(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built,
                               bool with_quadrupoles) {
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::multipoles");
  if (with_quadrupoles) detail::octree_upward_pass<true, true, false>(space, built);
  else detail::octree_upward_pass<true, false, false>(space, built);
  space.fence();
  Kokkos::Profiling::popRegion();
}

// A refit: the octree `built` keeps its shape (cells, the bodies' order,
// cells' centres) while its bodies move to `bodies` (the same bodies in the
// order the octree was built from). Each cube holds its bodies again, moved
// (and grown only when they spread wider than its built side: never below
// it), so the walk's criteria stay conservative; mass, centre of mass and (when asked) the
// quadrupoles are summed anew; all in one pass. Returns the mean over the
// cells of (side / built side)^3 - 1 (each cell's term at most 8): 0 while
// every body stays in its cell, and what a caller weighs against a rebuild
// (the walk's cost grows with the cells' volumes). A pure function of the
// built octree and the positions, on every backend and thread count.
template <class ExecutionSpace, class MemorySpace>
double refit_octree(ExecutionSpace const& space, LevelledOctree<MemorySpace>& built,
                    PointSet<MemorySpace> const& bodies, bool with_quadrupoles) {
  if (bodies.size() != built.tree.points.size() || bodies.dimension() != 3)
    throw InputError("octree refit: " + std::to_string(bodies.size()) + " bodies for an octree of " +
                     std::to_string(built.tree.points.size()));
  Kokkos::Profiling::pushRegion("treetrav::MortonOctree::refit");
  Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> const positions = bodies.coordinates;
  if (with_quadrupoles) detail::octree_upward_pass<true, true, true>(space, built, positions);
  else detail::octree_upward_pass<true, false, true>(space, built, positions);
  Index const nodes = built.tree.topology.size();
  std::int64_t growth = 0;
  using Growth = detail::OctreeGrowth<MemorySpace>;
  Kokkos::parallel_reduce("treetrav::MortonOctree::growth",
                          detail::as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, nodes)),
                          Growth{built.tree.cell_size, built.built_cell_size}, growth);
  Kokkos::Profiling::popRegion();
  return nodes > 0 ? double(growth) / (Growth::unit * double(nodes)) : 0.0;
}

// The phases in turn: a complete Octree, built where `space` runs, with
// quadrupole moments when asked.
template <class ExecutionSpace, class MemorySpace>
Octree<MemorySpace> build_morton_octree(
    ExecutionSpace const& space, PointSet<MemorySpace> const& bodies,
    Kokkos::View<Coordinate const*, typename PointSet<MemorySpace>::memory_space> masses, int leaf_capacity = 8,
    bool with_quadrupoles = false) {
  auto built = build_morton_octree_cells(space, bodies, masses, leaf_capacity);
  compute_octree_multipoles(space, built, with_quadrupoles);
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
