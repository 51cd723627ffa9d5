// Structural invariants of every tree, and relayout preserving the tree.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/bvh.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/trees/relayout.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace treetrav;

template <class Space>
class Trees : public ::testing::Test {};
TYPED_TEST_SUITE(Trees, test::HostExecutionSpaces, test::SpaceName);

template <class Space>
class TreeBuilds : public ::testing::Test {};
TYPED_TEST_SUITE(TreeBuilds, test::ExecutionSpaces, test::SpaceName);

// Children partition their parent's point range in slot order, leaves hold at
// most `leaf_size` points, every point sits in exactly one leaf, and the
// layout is depth-first pre-order (a child follows its parent) or, for the
// octree's Morton build, breadth-first (a node's children are numbered
// consecutively, after it).
template <class Topology>
void expect_valid_topology(Topology const& t, Index point_count, int leaf_size, std::string const& what,
                           bool depth_first = true) {
  ASSERT_GT(t.size(), 0) << what;
  EXPECT_EQ(t.parent(0), -1) << what;
  EXPECT_EQ(t.point_begin(0), 0) << what;
  EXPECT_EQ(t.point_end(0), point_count) << what;
  Index covered = 0;
  for (Index node = 0; node < t.size(); ++node) {
    if (t.is_leaf(node)) {
      EXPECT_LE(t.point_end(node) - t.point_begin(node), leaf_size) << what << " leaf " << node;
      EXPECT_GT(t.point_end(node), t.point_begin(node)) << what << " empty leaf " << node;
      covered += t.point_end(node) - t.point_begin(node);
      continue;
    }
    Index cursor = t.point_begin(node);
    for (int slot = 0; slot < Topology::arity && t.child(node, slot) >= 0; ++slot) {
      Index const child = t.child(node, slot);
      EXPECT_EQ(t.parent(child), node) << what;
      EXPECT_EQ(t.point_begin(child), cursor) << what << " child " << child;
      cursor = t.point_end(child);
    }
    EXPECT_EQ(cursor, t.point_end(node)) << what << " node " << node;
    if (depth_first) {
      EXPECT_EQ(t.child(node, 0), node + 1) << what << ": not depth-first at node " << node;
    } else {
      EXPECT_GT(t.child(node, 0), node) << what << ": not breadth-first at node " << node;
      for (int slot = 1; slot < Topology::arity && t.child(node, slot) >= 0; ++slot)
        EXPECT_EQ(t.child(node, slot), t.child(node, 0) + slot) << what << ": children apart at node " << node;
    }
  }
  EXPECT_EQ(covered, point_count) << what;
}

// The implicit complete binary shape: heap order, children halve their
// parent's range, the leaves (all at one depth) hold at most `leaf_size`
// points and only more leaves than points leaves some empty, and leaf_of()
// finds the leaf of every point.
template <class MemorySpace>
void expect_valid_implicit(ImplicitBinaryTopology<MemorySpace> const& t, Index n, int leaf_size,
                           std::string const& what) {
  EXPECT_EQ(t.size(), 2 * t.leaf_count() - 1) << what;
  EXPECT_EQ(t.point_begin(0), 0) << what;
  EXPECT_EQ(t.point_end(0), n) << what;
  EXPECT_TRUE(t.levels == 0 || (std::int64_t(leaf_size) << (t.levels - 1)) < n)
      << what << ": too deep";
  for (Index node = 0; node < t.size(); ++node) {
    Index const size = t.point_end(node) - t.point_begin(node);
    if (t.is_leaf(node)) {
      EXPECT_EQ(t.child(node, 0), -1) << what;
      EXPECT_LE(size, leaf_size) << what << " leaf " << node;
      if (t.leaf_count() <= n)
        EXPECT_GT(size, 0) << what << " empty leaf " << node;
      for (Index p = t.point_begin(node); p < t.point_end(node); ++p)
        ASSERT_EQ(t.leaf_of(p), node) << what;
      continue;
    }
    Index const left = t.child(node, 0), right = t.child(node, 1);
    EXPECT_EQ(left, 2 * node + 1) << what;
    EXPECT_EQ(t.parent(left), node) << what;
    EXPECT_EQ(t.parent(right), node) << what;
    EXPECT_EQ(t.point_begin(left), t.point_begin(node)) << what;
    EXPECT_EQ(t.point_end(left), t.point_begin(right)) << what;
    EXPECT_EQ(t.point_end(right), t.point_end(node)) << what;
    EXPECT_LE(std::abs((t.point_end(left) - t.point_begin(left)) -
                       (t.point_end(right) - t.point_begin(right))),
              1)
        << what << ": unbalanced node " << node;
  }
}

template <class Tree>
void expect_permutation(Tree const& tree, Index n, std::string const& what) {
  std::set<Index> seen;
  for (Index i = 0; i < n; ++i)
    seen.insert(tree.points.original_index(i));
  EXPECT_EQ(seen.size(), std::size_t(n)) << what;
  EXPECT_EQ(*seen.begin(), 0) << what;
  EXPECT_EQ(*seen.rbegin(), n - 1) << what;
}

// The binary radix tree: children partition their parent's points at its
// split, every internal node holds more than one point, parents are
// consistent, and every point is reached from the root exactly once.
template <class MemorySpace>
void expect_valid_radix(RadixTopology<MemorySpace> const& t, Index n, int leaf_size,
                        std::string const& what) {
  EXPECT_EQ(t.size(), 2 * n - 1) << what;
  EXPECT_EQ(t.point_begin(0), 0) << what;
  EXPECT_EQ(t.point_end(0), n) << what;
  EXPECT_EQ(t.parent(0), -1) << what;
  Index covered = 0;
  std::vector<Index> stack{0};
  while (!stack.empty()) {
    Index const node = stack.back();
    stack.pop_back();
    Index const size = t.point_end(node) - t.point_begin(node);
    ASSERT_GT(size, 0) << what << " node " << node;
    if (t.is_leaf(node)) {
      EXPECT_LE(size, leaf_size) << what << " leaf " << node;
      EXPECT_EQ(t.child(node, 0), -1) << what;
      covered += size;
      continue;
    }
    Index const left = t.child(node, 0), right = t.child(node, 1);
    EXPECT_EQ(t.parent(left), node) << what;
    EXPECT_EQ(t.parent(right), node) << what;
    EXPECT_EQ(t.point_begin(left), t.point_begin(node)) << what;
    EXPECT_EQ(t.point_end(left), t.point_begin(right)) << what;
    EXPECT_EQ(t.point_end(right), t.point_end(node)) << what;
    stack.push_back(left);
    stack.push_back(right);
  }
  EXPECT_EQ(covered, n) << what;
}

// The packed rows are the input points (zero-padded) in a permutation.
template <class MemorySpace>
void expect_packed(PackedPoints<MemorySpace> const& packed, test::HostPoints const& input,
                   std::string const& what) {
  Index const n = input.size();
  ASSERT_EQ(packed.size(), n) << what;
  std::set<Index> seen;
  for (Index p = 0; p < n; ++p) {
    Index const from = packed.original_index(p);
    seen.insert(from);
    for (int k = 0; k < packed.width(); ++k)
      ASSERT_EQ(packed.rows(p, k), k < input.dimension() ? input.coordinates(from, k) : 0)
          << what << " row " << p;
  }
  EXPECT_EQ(seen.size(), std::size_t(n)) << what;
  EXPECT_EQ(*seen.begin(), 0) << what;
  EXPECT_EQ(*seen.rbegin(), n - 1) << what;
}

// Every node's bound is 0 for each of its own points (as queries): a box, a
// ball or a shell that holds them.
template <int W, class Tree>
void expect_bounds_hold(Tree const& tree, std::string const& what) {
  for (Index node = 0; node < tree.topology.size(); ++node)
    for (Index p = tree.topology.point_begin(node); p < tree.topology.point_end(node); ++p) {
      Coordinate row[W];
      for (int k = 0; k < W; ++k)
        row[k] = tree.points.rows(p, k);
      ASSERT_EQ(tree.template min_distance2<W>(node, row), 0)
          << what << " node " << node << " point " << p;
    }
}

TYPED_TEST(Trees, BinaryTreesAreValidAndBoundTheirPoints) {
  TypeParam space;
  for (auto const& c : test::search_cases()) {
    Index const n = c.reference.size();
    Bvh<Kokkos::HostSpace> kd(space, c.reference, c.leaf_size);
    BallTree<Kokkos::HostSpace> ball(space, c.reference, c.leaf_size);
    VpTree<Kokkos::HostSpace> vp(space, c.reference, c.leaf_size);
    expect_valid_radix(kd.topology, n, c.leaf_size, c.name + " kd");
    expect_packed(kd.points, c.reference, c.name + " kd");
    expect_packed(ball.points, c.reference, c.name + " ball");
    expect_valid_implicit(vp.topology, n, c.leaf_size, c.name + " vp");
    expect_packed(vp.points, c.reference, c.name + " vp");
    dispatch_width(kd.width(), [&](auto width) {
      expect_bounds_hold<decltype(width)::value>(kd, c.name + " kd");
      expect_bounds_hold<decltype(width)::value>(ball, c.name + " ball");
      expect_bounds_hold<decltype(width)::value>(vp, c.name + " vp");
    });
    // A vantage-point split puts the nearer half first.
    for (Index node = 0; node < vp.topology.first_leaf(); ++node)
      if (vp.topology.point_begin(2 * node + 2) < vp.topology.point_end(2 * node + 2))
        EXPECT_LE(vp.shells(2 * node + 2, 1), vp.shells(2 * node + 3, 1))
            << c.name << " vp node " << node;
  }
  // Leaf size 1: a vantage-point tree with empty leaves, a BVH down to points.
  auto reference = test::search_cases().front().reference;
  VpTree<Kokkos::HostSpace> fine_vp(space, reference, 1);
  expect_valid_implicit(fine_vp.topology, reference.size(), 1, "vp leaf 1");
  Bvh<Kokkos::HostSpace> fine_kd(space, reference, 1);
  expect_valid_radix(fine_kd.topology, reference.size(), 1, "kd leaf 1");
}

// Every field of a tree as bytes on the host.
template <class Tree>
std::vector<std::vector<char>> tree_bytes(Tree tree) {
  std::vector<std::vector<char>> bytes;
  tree.for_each_field([&](auto const& view) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
    char const* data = reinterpret_cast<char const*>(host.data());
    bytes.emplace_back(data, data + host.span() * sizeof(typename decltype(host)::value_type));
  });
  return bytes;
}

// A tree built in any execution space equals the serial host build byte for
// byte (node for node, point for point), so answers and visit counts are the
// same on every backend.
TYPED_TEST(TreeBuilds, EveryBackendBuildsTheSameTree) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  Kokkos::Serial serial;
  for (auto const& c : test::search_cases()) {
    auto points = copy_points(space, c.reference, "test::reference");
    EXPECT_EQ(tree_bytes(Bvh<Memory>(space, points, c.leaf_size)),
              tree_bytes(Bvh<Kokkos::HostSpace>(serial, c.reference, c.leaf_size)))
        << c.name << " kd";
    EXPECT_EQ(tree_bytes(BallTree<Memory>(space, points, c.leaf_size)),
              tree_bytes(BallTree<Kokkos::HostSpace>(serial, c.reference, c.leaf_size)))
        << c.name << " ball";
    EXPECT_EQ(tree_bytes(VpTree<Memory>(space, points, c.leaf_size)),
              tree_bytes(VpTree<Kokkos::HostSpace>(serial, c.reference, c.leaf_size)))
        << c.name << " vp";
  }
}

TYPED_TEST(Trees, OctreeCellsHoldTheirBodiesAndMass) {
  TypeParam space;
  Index const n = 5000;
  auto bodies = test::plummer_positions(n, 3);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("masses", n);
  Kokkos::deep_copy(masses, 1.0f / n);
  Octree<Kokkos::HostSpace> tree(space, bodies, masses, 8);
  expect_valid_topology(tree.topology, n, 8, "octree", /*depth_first=*/false);
  expect_permutation(tree, n, "octree");
  EXPECT_NEAR(tree.mass(0), 1.0, 1e-5);
  for (Index node = 0; node < tree.topology.size(); ++node) {
    float const half = tree.cell_size(node) / 2;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i)
      for (int k = 0; k < 3; ++k)
        ASSERT_LE(std::abs(tree.points.points.coordinates(i, k) - tree.cell_center(node, k)),
                  half * 1.0001f)
            << "body outside its cell " << node;
    EXPECT_NEAR(tree.mass(node),
                float(tree.topology.point_end(node) - tree.topology.point_begin(node)) / n, 1e-5);
    for (int slot = 0; slot < 8 && tree.topology.child(node, slot) >= 0; ++slot)
      EXPECT_FLOAT_EQ(tree.cell_size(tree.topology.child(node, slot)), tree.cell_size(node) / 2);
  }
}

// The Morton octree as the definition reads, built on the host one level
// at a time: bodies sorted by (code, index), a node of more than
// `leaf_capacity` bodies above the finest level splits into its non-empty
// octants, nodes numbered breadth-first with each node's children
// consecutive in octant order.
struct ReferenceOctree {
  std::vector<Index> order, parent, point_begin, point_end, level;
  std::vector<std::array<Index, 8>> children;
};

// The octree level by level; a cell of `forced` (level, code >> 3 (21 - level))
// splits whatever its count.
ReferenceOctree reference_octree(test::HostPoints const& bodies, int leaf_capacity,
                                 std::set<std::pair<Index, std::uint64_t>> const& forced = {}) {
  Index const n = bodies.size();
  auto const cube = detail::root_cube(Kokkos::Serial{}, bodies.coordinates);
  std::vector<std::pair<std::uint64_t, Index>> keyed(n);
  for (Index i = 0; i < n; ++i)
    keyed[i] = {detail::morton_code(cube, bodies.coordinates(i, 0), bodies.coordinates(i, 1),
                                    bodies.coordinates(i, 2)),
                i};
  std::sort(keyed.begin(), keyed.end());
  ReferenceOctree tree;
  for (auto const& [code, index] : keyed) tree.order.push_back(index);
  auto add = [&](Index parent, Index first, Index last, Index level) {
    tree.parent.push_back(parent), tree.point_begin.push_back(first), tree.point_end.push_back(last);
    tree.level.push_back(level);
    std::array<Index, 8> none;
    none.fill(-1);
    tree.children.push_back(none);
  };
  add(-1, 0, n, 0);
  for (std::size_t node = 0; node < tree.parent.size(); ++node) { // the queue grows as it goes
    Index const first = tree.point_begin[node], last = tree.point_end[node], level = tree.level[node];
    bool const splits = last - first > leaf_capacity ||
                        forced.count({level, keyed[first].first >> 3 * (detail::morton_levels - level)}) > 0;
    if (!splits || level == detail::morton_levels) continue;
    int const shift = 3 * (detail::morton_levels - int(level) - 1);
    int slot = 0;
    for (Index begin = first; begin < last;) {
      std::uint64_t const octant = keyed[begin].first >> shift & 7u;
      Index end = begin;
      while (end < last && (keyed[end].first >> shift & 7u) == octant) ++end;
      tree.children[node][slot++] = Index(tree.parent.size());
      add(Index(node), begin, end, level + 1);
      begin = end;
    }
  }
  return tree;
}

// Uniform, clustered, deep (bodies halving their distance to a corner),
// duplicated (more coincident bodies than a leaf holds: a finest-level leaf
// over capacity) and tiny sets.
std::vector<std::pair<std::string, test::HostPoints>> octree_sets() {
  std::vector<std::pair<std::string, test::HostPoints>> sets;
  sets.emplace_back("plummer", test::plummer_positions(3000, 7));
  test::HostPoints deep = allocate_points<Kokkos::HostSpace>("deep", 400, 3);
  for (Index i = 0; i < 400; ++i)
    for (int k = 0; k < 3; ++k)
      deep.coordinates(i, k) = i < 60 ? std::ldexp(1.0f, -int(i) / 2) * (k + 1) / 3.0f : float((i * (k + 3)) % 97) / 97;
  sets.emplace_back("deep", deep);
  test::HostPoints duplicated = allocate_points<Kokkos::HostSpace>("duplicated", 300, 3);
  for (Index i = 0; i < 300; ++i)
    for (int k = 0; k < 3; ++k) duplicated.coordinates(i, k) = i < 100 ? 0.25f : float((i * (k + 5)) % 89) / 89;
  sets.emplace_back("duplicated", duplicated);
  sets.emplace_back("tiny", test::plummer_positions(5, 3));
  return sets;
}

// `built` is `expected` node for node: bodies' order, links, bodies' ranges, levels.
template <class Memory>
void expect_octree(LevelledOctree<Memory> const& built, ReferenceOctree const& expected, std::string const& what) {
  Index const n = built.tree.points.size();
  auto const& t = built.tree.topology;
  auto const parent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t.parent);
  auto const begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t.point_begin);
  auto const end = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t.point_end);
  auto const children = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t.children);
  auto const order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, built.tree.points.original_index);
  ASSERT_EQ(Index(parent.extent(0)), Index(expected.parent.size())) << what;
  for (Index i = 0; i < n; ++i) ASSERT_EQ(order(i), expected.order[i]) << what << " body " << i;
  for (Index node = 0; node < Index(expected.parent.size()); ++node) {
    ASSERT_EQ(parent(node), expected.parent[node]) << what << " node " << node;
    ASSERT_EQ(begin(node), expected.point_begin[node]) << what << " node " << node;
    ASSERT_EQ(end(node), expected.point_end[node]) << what << " node " << node;
    for (int slot = 0; slot < 8; ++slot)
      ASSERT_EQ(children(node, slot), expected.children[node][slot]) << what << " node " << node;
  }
  // The levels: level L's nodes are [level_begin[L], level_begin[L + 1]).
  auto const level_begin = octree_levels(built);
  ASSERT_EQ(level_begin.back(), Index(expected.level.size())) << what;
  for (std::size_t level = 0; level + 1 < level_begin.size(); ++level)
    for (Index node = level_begin[level]; node < level_begin[level + 1]; ++node)
      ASSERT_EQ(expected.level[node], Index(level)) << what << " node " << node;
}

// The octree built from the sorted codes at once (every backend) equals the
// level-by-level definition node for node, on octree_sets().
TYPED_TEST(TreeBuilds, MortonOctreeIsTheLevelByLevelOctree) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const sets = octree_sets();
  for (auto const& [name, bodies] : sets)
    for (int capacity : {1, 8}) {
      std::string const what = name + ", leaf capacity " + std::to_string(capacity);
      ReferenceOctree const expected = reference_octree(bodies, capacity);
      Index const n = bodies.size();
      Kokkos::View<Coordinate*, Memory> masses("masses", n);
      Kokkos::deep_copy(masses, 1.0f);
      auto built = build_morton_octree_cells(space, copy_points(space, bodies, "test::bodies"),
                                             Kokkos::View<Coordinate const*, Memory>(masses), capacity);
      expect_octree(built, expected, what);
    }
}

// Forced splits (a distributed run's cells shared by ranks): the cells on
// the paths of three bodies down to levels 4, 9 and 20 split whatever their
// count, the others as ever; node for node the level-by-level octree with
// those cells split, on every backend, leaves of 1 to 64.
TYPED_TEST(TreeBuilds, ForcedSplitsSplitTheirCellsWhateverTheirCount) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& [name, bodies] : octree_sets()) {
    Index const n = bodies.size();
    auto const cube = detail::root_cube(Kokkos::Serial{}, bodies.coordinates);
    auto const code = [&](Index i) {
      return detail::morton_code(cube, bodies.coordinates(i, 0), bodies.coordinates(i, 1), bodies.coordinates(i, 2));
    };
    std::set<std::pair<Index, std::uint64_t>> forced;
    for (auto [body, depth] : {std::pair<Index, Index>{0, 4}, {n / 2, 9}, {n - 1, 20}})
      for (Index level = 0; level < depth; ++level)
        forced.insert({level, code(body) >> 3 * (detail::morton_levels - level)});
    for (int capacity : {1, 8, 64}) {
      std::string const what = name + ", leaf capacity " + std::to_string(capacity) + ", forced splits";
      ReferenceOctree const expected = reference_octree(bodies, capacity, forced);
      // Each body's forced level, in tree order: below the deepest forced cell holding it.
      Kokkos::View<std::int8_t*, Kokkos::HostSpace> levels("forced", n);
      for (Index i = 0; i < n; ++i) {
        Index level = 0;
        while (level < detail::morton_levels &&
               forced.count({level, code(expected.order[i]) >> 3 * (detail::morton_levels - level)}) > 0)
          ++level;
        levels(i) = static_cast<std::int8_t>(level);
      }
      Kokkos::View<Coordinate*, Memory> masses("masses", n);
      Kokkos::deep_copy(masses, 1.0f);
      LevelledOctree<Memory> built;
      auto const codes = detail::sort_octree_bodies(space, built, copy_points(space, bodies, "test::bodies"),
                                                    Kokkos::View<Coordinate const*, Memory>(masses), cube);
      detail::build_octree_nodes(space, built, Kokkos::View<std::uint64_t const*, Memory>(codes), capacity, cube,
                                 Kokkos::View<std::int8_t const*, Memory>(
                                     Kokkos::create_mirror_view_and_copy(space, levels)));
      expect_octree(built, expected, what);
    }
  }
}

// Each cell's box (octree_boxes, a distributed run's reach): the least box
// holding its bodies, on every set and backend, leaves of 1 and 8.
TYPED_TEST(TreeBuilds, BoxesAreTheirBodiesBoxes) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  for (auto const& [name, bodies] : octree_sets())
    for (int capacity : {1, 8}) {
      Kokkos::View<Coordinate*, Memory> masses("masses", bodies.size());
      Kokkos::deep_copy(masses, 1.0f);
      auto built = build_morton_octree_cells(space, copy_points(space, bodies, "test::bodies"),
                                             Kokkos::View<Coordinate const*, Memory>(masses), capacity);
      Kokkos::View<detail::OctreeBox*, Memory> boxes("boxes", built.tree.topology.size());
      detail::octree_boxes(space, built, boxes);
      auto const box = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, boxes);
      auto const begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, built.tree.topology.point_begin);
      auto const end = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, built.tree.topology.point_end);
      auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, built.tree.points.points.coordinates);
      for (Index node = 0; node < built.tree.topology.size(); ++node)
        for (int k = 0; k < 3; ++k) {
          Coordinate low = x(begin(node), k), high = low;
          for (Index i = begin(node); i < end(node); ++i) low = std::min(low, x(i, k)), high = std::max(high, x(i, k));
          ASSERT_EQ(box(node).low[k], low) << name << ", capacity " << capacity << ", node " << node;
          ASSERT_EQ(box(node).high[k], high) << name << ", capacity " << capacity << ", node " << node;
        }
    }
}

TYPED_TEST(Trees, RelayoutKeepsTheTreeAndItsAnswers) {
  TypeParam space;
  Index const n = 3000;
  auto bodies = test::plummer_positions(n, 5);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("masses", n);
  Kokkos::deep_copy(masses, 1.0f / n);
  BarnesHutOptions const options{0.5f, 0.01f, 1.0f};
  Octree<Kokkos::HostSpace> tree(space, bodies, masses, 8);
  auto before = barnes_hut_accelerations(space, tree, bodies, options, Autoropes{});
  for (int depth : {1, 2, 4, 64}) {
    Octree<Kokkos::HostSpace> relaid(space, bodies, masses, 8);
    relayout(space, relaid, depth);
    // Nodes above `depth` are breadth-first: their depths never decrease.
    std::vector<int> node_depth(relaid.topology.size(), 0);
    for (Index node = 1; node < relaid.topology.size(); ++node)
      node_depth[node] = node_depth[relaid.topology.parent(node)] + 1;
    Index top = 0;
    while (top < relaid.topology.size() && node_depth[top] < depth)
      ++top;
    for (Index node = 1; node < top; ++node)
      EXPECT_GE(node_depth[node], node_depth[node - 1]) << depth;
    for (Index node = 0; node < relaid.topology.size(); ++node)
      for (int slot = 0; slot < 8 && relaid.topology.child(node, slot) >= 0; ++slot)
        EXPECT_EQ(relaid.topology.parent(relaid.topology.child(node, slot)), node);
    auto after = barnes_hut_accelerations(space, relaid, bodies, options, Autoropes{});
    for (Index i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(after(i, k), before(i, k)) << "depth " << depth;
  }
}

} // namespace
