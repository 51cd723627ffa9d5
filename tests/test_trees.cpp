// Structural invariants of every tree, and relayout preserving the tree.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/trees/relayout.hpp>
#include <treetrav/trees/vp_tree.hpp>

#include <set>

namespace {

using namespace treetrav;

template <class Space>
class Trees : public ::testing::Test {};
TYPED_TEST_SUITE(Trees, test::HostExecutionSpaces, test::SpaceName);

// Children partition their parent's point range in slot order, leaves hold at
// most `leaf_size` points, every point sits in exactly one leaf, and the
// layout is depth-first pre-order (a child follows its parent).
template <class Topology>
void expect_valid_topology(Topology const& t, Index point_count, int leaf_size, std::string const& what) {
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
    EXPECT_EQ(t.child(node, 0), node + 1) << what << ": not depth-first at node " << node;
  }
  EXPECT_EQ(covered, point_count) << what;
}

template <class Tree>
void expect_permutation(Tree const& tree, Index n, std::string const& what) {
  std::set<Index> seen;
  for (Index i = 0; i < n; ++i) seen.insert(tree.points.original_index(i));
  EXPECT_EQ(seen.size(), std::size_t(n)) << what;
  EXPECT_EQ(*seen.begin(), 0) << what;
  EXPECT_EQ(*seen.rbegin(), n - 1) << what;
}

TYPED_TEST(Trees, BinaryTreesAreValidAndBoundTheirPoints) {
  TypeParam space;
  for (auto const& c : test::search_cases()) {
    Index const n = c.reference.size();
    KdTree<Kokkos::HostSpace> kd(space, c.reference, c.leaf_size);
    expect_valid_topology(kd.topology, n, c.leaf_size, c.name + " kd");
    expect_permutation(kd, n, c.name + " kd");
    BallTree<Kokkos::HostSpace> ball(space, c.reference, c.leaf_size);
    expect_valid_topology(ball.topology, n, c.leaf_size, c.name + " ball");
    VpTree<Kokkos::HostSpace> vp(space, c.reference, c.leaf_size);
    expect_valid_topology(vp.topology, n, c.leaf_size, c.name + " vp");
    expect_permutation(vp, n, c.name + " vp");
    // Every node's bound holds for each of its points: box, ball and shell.
    for (Index node = 0; node < kd.topology.size(); ++node)
      for (Index i = kd.topology.point_begin(node); i < kd.topology.point_end(node); ++i) {
        ASSERT_EQ(kd.min_distance2(node, kd.points.points.coordinates, i), 0) << c.name << " kd box " << node;
        ASSERT_EQ(ball.min_distance2(node, ball.points.points.coordinates, i), 0) << c.name << " ball " << node;
      }
    for (Index node = 0; node < vp.topology.size(); ++node)
      for (Index i = vp.topology.point_begin(node); i < vp.topology.point_end(node); ++i)
        ASSERT_EQ(vp.min_distance2(node, vp.points.points.coordinates, i), 0) << c.name << " vp shell " << node;
  }
}

TYPED_TEST(Trees, OctreeCellsHoldTheirBodiesAndMass) {
  TypeParam space;
  Index const n = 5000;
  auto bodies = test::plummer_positions(n, 3);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("masses", n);
  Kokkos::deep_copy(masses, 1.0f / n);
  Octree<Kokkos::HostSpace> tree(space, bodies, masses, 8);
  expect_valid_topology(tree.topology, n, 8, "octree");
  expect_permutation(tree, n, "octree");
  EXPECT_NEAR(tree.mass(0), 1.0, 1e-5);
  for (Index node = 0; node < tree.topology.size(); ++node) {
    float const half = tree.cell_size(node) / 2;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i)
      for (int k = 0; k < 3; ++k)
        ASSERT_LE(std::abs(tree.points.points.coordinates(i, k) - tree.cell_center(node, k)), half * 1.0001f)
            << "body outside its cell " << node;
    EXPECT_NEAR(tree.mass(node), float(tree.topology.point_end(node) - tree.topology.point_begin(node)) / n, 1e-5);
    for (int slot = 0; slot < 8 && tree.topology.child(node, slot) >= 0; ++slot)
      EXPECT_FLOAT_EQ(tree.cell_size(tree.topology.child(node, slot)), tree.cell_size(node) / 2);
  }
}

TYPED_TEST(Trees, RelayoutKeepsTheTreeAndItsAnswers) {
  TypeParam space;
  auto reference = generators::uniform(space, 3000, 3, 5);
  auto queries = generators::uniform(space, 200, 3, 6);
  KdTree<Kokkos::HostSpace> tree(space, reference, 8);
  auto before = find_neighbors(space, tree, queries, NeighborOptions{5, false}, Autoropes{});
  for (int depth : {1, 3, 6, 64}) {
    KdTree<Kokkos::HostSpace> relaid(space, reference, 8);
    relayout(space, relaid, depth);
    // Nodes above `depth` are breadth-first: their depths never decrease.
    std::vector<int> node_depth(relaid.topology.size(), 0);
    for (Index node = 1; node < relaid.topology.size(); ++node)
      node_depth[node] = node_depth[relaid.topology.parent(node)] + 1;
    Index top = 0;
    while (top < relaid.topology.size() && node_depth[top] < depth) ++top;
    for (Index node = 1; node < top; ++node) EXPECT_GE(node_depth[node], node_depth[node - 1]) << depth;
    for (Index node = 0; node < relaid.topology.size(); ++node) {
      if (relaid.topology.is_leaf(node)) continue;
      for (int slot = 0; slot < 2; ++slot)
        EXPECT_EQ(relaid.topology.parent(relaid.topology.child(node, slot)), node);
    }
    auto after = find_neighbors(space, relaid, queries, NeighborOptions{5, false}, Autoropes{});
    for (Index q = 0; q < queries.size(); ++q)
      for (int j = 0; j < 5; ++j) ASSERT_EQ(after.indices(q, j), before.indices(q, j)) << "depth " << depth;
  }
}

}  // namespace
