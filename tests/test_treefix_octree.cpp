// Treefix on the engine's octrees, per backend: node depths as a rootfix equal
// the depths exactly, centres of mass as a leaffix equal direct sums over each
// cell's bodies within float bounds (both methods), and the Morton octree's
// moments (computed by the level-synchronous leaffix) equal a host replay of
// the fixed summation order bit for bit.
#include "execution_spaces.hpp"

#include <treetrav/generators/generators.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/treefix/octree.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
using Host = Kokkos::DefaultHostExecutionSpace;
using HostPoints = PointSet<Kokkos::HostSpace>;
using HostMasses = Kokkos::View<Coordinate*, Kokkos::HostSpace>;

template <class Space>
class TreefixOctree : public ::testing::Test {};
TYPED_TEST_SUITE(TreefixOctree, test::ExecutionSpaces, test::SpaceName);

template <class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

// A Plummer sphere and, far away, a tight clump: deep and lopsided.
HostPoints bodies(Index n, std::uint64_t seed) {
  auto const plummer = generators::plummer(Host{}, n, seed);
  HostPoints out = allocate_points<Kokkos::HostSpace>("test::bodies", n + 200, 3);
  for (Index i = 0; i < n + 200; ++i)
    for (int k = 0; k < 3; ++k)
      out.coordinates(i, k) =
          i < n ? static_cast<Coordinate>(plummer.coordinates(i, k))
                : static_cast<Coordinate>(50 + 1e-3 * plummer.coordinates(i - n, k));
  return out;
}

HostMasses random_masses(Index n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> draw(0.5f, 1.5f);
  HostMasses masses("test::masses", n);
  for (Index i = 0; i < n; ++i)
    masses(i) = draw(random) / n;
  return masses;
}

// Depths by walking up the parent array.
std::vector<Index> walked_depths(Kokkos::View<Index*, Kokkos::HostSpace> const& parent) {
  std::vector<Index> depth(parent.extent(0), 0);
  for (std::size_t node = 0; node < depth.size(); ++node)
    for (Index up = parent(node); up >= 0; up = parent(up))
      ++depth[node];
  return depth;
}

// gamma_k in double: a sum of k + 1 terms is off by at most gamma_k times
// the sum of their magnitudes.
double gamma(std::int64_t k) {
  double const ku = k * std::numeric_limits<double>::epsilon() / 2;
  return ku / (1 - ku);
}

TYPED_TEST(TreefixOctree, DepthsAreARootfixOfOnes) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const points = bodies(3000, 1);
  auto const masses = random_masses(points.size(), 2);
  // The Octree constructor's tree (depths by walking the parents) ...
  Octree<Memory> const octree(space, points, masses, 4);
  auto const rooted = rooted_tree(space, octree.topology);
  auto const expected = walked_depths(to_host(octree.topology.parent));
  ASSERT_GT(*std::max_element(expected.begin(), expected.end()), 5);
  LevelSynchronousTreefix<Memory> bfs(space, rooted);
  EulerTourTreefix<Memory> euler(space, rooted);
  auto const check = [&](auto const& depths, std::vector<Index> const& reference,
                         std::string const& what) {
    auto const host = to_host(depths);
    ASSERT_EQ(host.extent(0), reference.size()) << what;
    for (std::size_t node = 0; node < reference.size(); ++node)
      ASSERT_EQ(host(node), reference[node]) << what << ", node " << node;
  };
  check(vertex_depths(space, rooted, bfs), expected, "octree, bfs");
  check(vertex_depths(space, rooted, euler), expected, "octree, euler");

  // ... and the Morton octree, numbered level after level.
  auto const built =
      build_morton_octree_cells(space, copy_points(space, points, "test::bodies"),
                                Kokkos::create_mirror_view_and_copy(space, masses), 4);
  auto const level_begin = octree_levels(built);
  std::vector<Index> levels;
  for (std::size_t level = 0; level + 1 < level_begin.size(); ++level)
    levels.insert(levels.end(), level_begin[level + 1] - level_begin[level], static_cast<Index>(level));
  auto const morton = rooted_tree(space, built.tree.topology);
  EXPECT_EQ(morton.height() + 2, static_cast<Index>(level_begin.size()));
  LevelSynchronousTreefix<Memory> morton_bfs(space, morton);
  EulerTourTreefix<Memory> morton_euler(space, morton);
  check(vertex_depths(space, morton, morton_bfs), levels, "morton octree, bfs");
  check(vertex_depths(space, morton, morton_euler), levels, "morton octree, euler");
}

TYPED_TEST(TreefixOctree, CentresOfMassEqualDirectSums) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const points = bodies(4000, 3);
  auto const masses = random_masses(points.size(), 4);
  // The host build sums each cell's bodies directly, in double.
  Octree<Kokkos::HostSpace> const direct(Host{}, points, masses, 8);
  Index const nodes = direct.topology.size();
  double total_mass = 0, total_moment[3] = {0, 0, 0};
  for (Index i = 0; i < points.size(); ++i) {
    total_mass += masses(i);
    for (int k = 0; k < 3; ++k)
      total_moment[k] += double(masses(i)) * std::abs(points.coordinates(i, k));
  }
  // Direct per-cell sums of m |x|, which bound the leaffix's cancellations.
  std::vector<double> magnitude(3 * nodes, 0.0);
  for (Index node = 0; node < nodes; ++node)
    for (Index i = direct.topology.point_begin(node); i < direct.topology.point_end(node); ++i)
      for (int k = 0; k < 3; ++k)
        magnitude[3 * node + k] +=
            double(direct.body_mass(i)) * std::abs(direct.points.points.coordinates(i, k));

  Octree<Memory> tree = copy_tree(space, direct);
  auto const rooted = rooted_tree(space, tree.topology);
  auto const check_method = [&](auto method, std::string const& name) {
    tree.mass = typename Octree<Memory>::scalar_view("test::mass", nodes);
    tree.center_of_mass = typename Octree<Memory>::vector_view("test::center_of_mass", nodes, 3);
    octree_moments(space, tree, method);
    auto const mass = to_host(tree.mass);
    auto const com = to_host(tree.center_of_mass);
    // The treefix's double sums may differ from the direct ones by gamma of
    // the terms (bfs: the subtree's; euler: the tour's, with the whole
    // tree's magnitudes), then both round to float.
    double const g = gamma(2 * std::int64_t(nodes) + points.size() + 2);
    double const u = std::numeric_limits<float>::epsilon();
    for (Index node = 0; node < nodes; ++node) {
      double const m = direct.mass(node);
      double const mass_error = g * (2 * total_mass + m);
      ASSERT_NEAR(mass(node), m, u * m + mass_error) << name << ", node " << node;
      for (int k = 0; k < 3; ++k) {
        double const c = direct.center_of_mass(node, k);
        double const moment_error = g * (2 * total_moment[k] + magnitude[3 * node + k]);
        double const tolerance =
            u * std::abs(c) + (moment_error + std::abs(c) * mass_error) / m + 1e-30;
        ASSERT_NEAR(com(node, k), c, tolerance) << name << ", node " << node << ", axis " << k;
      }
    }
  };
  check_method(LevelSynchronousTreefix<Memory>(space, rooted), "bfs");
  check_method(EulerTourTreefix<Memory>(space, rooted), "euler");
}

// The Morton octree's step 4 (compute_octree_moments, one upward pass) and the treefix leaffix octree_moments by the level-synchronous
// method both sum in a fixed order: a leaf its bodies, a parent its children
// by slot, in double, deepest level first, as this host loop does. Float
// products are exact in double, so contraction into FMAs changes nothing and
// every backend must give these bits, by either route.
TYPED_TEST(TreefixOctree, MortonMomentsFollowTheFixedOrderBitForBit) {
  TypeParam space;
  auto const points = bodies(5000, 5);
  auto const masses = random_masses(points.size(), 6);
  auto built = build_morton_octree_cells(space, copy_points(space, points, "test::bodies"),
                                         Kokkos::create_mirror_view_and_copy(space, masses), 8);
  compute_octree_moments(space, built);
  auto const& tree = built.tree;
  auto const children = to_host(tree.topology.children);
  auto const begin = to_host(tree.topology.point_begin);
  auto const end = to_host(tree.topology.point_end);
  auto const body_mass = to_host(tree.body_mass);
  auto const x = to_host(tree.points.points.coordinates);
  auto const cell_center = to_host(tree.cell_center);
  auto const mass = to_host(tree.mass);
  auto const com = to_host(tree.center_of_mass);
  Index const nodes = tree.topology.size();
  std::vector<std::array<double, 4>> moments(nodes);
  for (Index node = nodes - 1; node >= 0; --node) { // children have larger numbers
    std::array<double, 4> sum{0, 0, 0, 0};
    if (children(node, 0) < 0) {
      for (Index i = begin(node); i < end(node); ++i) {
        double const m = body_mass(i);
        sum[0] += m;
        for (int k = 0; k < 3; ++k)
          sum[k + 1] += m * x(i, k);
      }
    } else {
      for (int slot = 0; slot < 8 && children(node, slot) >= 0; ++slot)
        for (int j = 0; j < 4; ++j)
          sum[j] += moments[children(node, slot)][j];
    }
    moments[node] = sum;
    ASSERT_EQ(mass(node), static_cast<Coordinate>(sum[0])) << "node " << node;
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(com(node, k),
                static_cast<Coordinate>(sum[0] > 0 ? sum[k + 1] / sum[0] : cell_center(node, k)))
          << "node " << node << ", axis " << k;
  }
  // The treefix leaffix on the same cells: the same bits.
  auto leaffix = tree;
  using Memory = typename TypeParam::memory_space;
  leaffix.mass = typename Octree<Memory>::scalar_view("test::leaffix_mass", nodes);
  leaffix.center_of_mass = typename Octree<Memory>::vector_view("test::leaffix_com", nodes, 3);
  LevelSynchronousTreefix<Memory> method(space, rooted_tree(space, leaffix.topology));
  octree_moments(space, leaffix, method);
  auto const leaffix_mass = to_host(leaffix.mass);
  auto const leaffix_com = to_host(leaffix.center_of_mass);
  for (Index node = 0; node < nodes; ++node) {
    ASSERT_EQ(leaffix_mass(node), mass(node)) << "leaffix, node " << node;
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(leaffix_com(node, k), com(node, k)) << "leaffix, node " << node << ", axis " << k;
  }
}

} // namespace
