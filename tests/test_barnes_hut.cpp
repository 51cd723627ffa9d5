// Barnes-Hut accelerations against direct O(N^2) summation on a Plummer sphere.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "regtt_reference.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/core/workspace.hpp>
#include <treetrav/traversal/strategies/group_walk.hpp>

#include <algorithm>
#include <array>
#include <vector>

namespace {

using namespace treetrav;

template <class Space>
class BarnesHut : public ::testing::Test {};
TYPED_TEST_SUITE(BarnesHut, test::ExecutionSpaces, test::SpaceName);

struct Bodies {
  test::HostPoints positions;
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses;
  std::vector<double> masses_double;
};

Bodies plummer_bodies(Index n) {
  auto snapshot = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, n, 42);
  Bodies b{test::plummer_positions(n, 42), Kokkos::View<Coordinate*, Kokkos::HostSpace>("test::masses", n), {}};
  for (Index i = 0; i < n; ++i) {
    b.masses(i) = static_cast<Coordinate>(snapshot.masses(i));
    b.masses_double.push_back(b.masses(i));
  }
  return b;
}

// sqrt(sum |a - a_ref|^2 / sum |a_ref|^2)
template <class Host>
double relative_rms_error(Host const& acc, std::vector<double> const& reference) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < acc.extent(0); ++i)
    for (int k = 0; k < 3; ++k) {
      double const diff = acc(i, k) - reference[i * 3 + k];
      error += diff * diff;
      norm += reference[i * 3 + k] * reference[i * 3 + k];
    }
  return std::sqrt(error / norm);
}

template <class Space, class Strategy>
auto accelerations(Space const& space, Bodies const& b, Coordinate theta, Coordinate softening, Strategy strategy,
                   int leaf_capacity = 8) {
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<typename Space::memory_space> tree(space, bodies, masses, leaf_capacity);
  return Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, bodies, {theta, softening, 1.0f}, strategy));
}

TYPED_TEST(BarnesHut, AccuracyImprovesAsThetaShrinks) {
  TypeParam space;
  auto b = plummer_bodies(5000);
  Coordinate const softening = 0.01f;
  auto reference = test::direct_accelerations(b.positions, b.masses_double, softening, 1.0);
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    double const error_05 = relative_rms_error(accelerations(space, b, 0.5f, softening, strategy), reference);
    double const error_03 = relative_rms_error(accelerations(space, b, 0.3f, softening, strategy), reference);
    EXPECT_LT(error_05, 1e-2) << test::strategy_name(strategy);
    EXPECT_LT(error_03, error_05) << test::strategy_name(strategy);
  });
}

TYPED_TEST(BarnesHut, ThetaZeroIsDirectSummation) {
  TypeParam space;
  auto b = plummer_bodies(2000);
  auto reference = test::direct_accelerations(b.positions, b.masses_double, 0.0, 1.0);
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    auto acc = accelerations(space, b, 0.0f, 0.0f, strategy, 4);
    // Only float rounding separates the tree's sum from the double reference.
    for (std::size_t i = 0; i < acc.extent(0); ++i) {
      double norm = 0, diff = 0;
      for (int k = 0; k < 3; ++k) {
        norm += reference[i * 3 + k] * reference[i * 3 + k];
        diff += (acc(i, k) - reference[i * 3 + k]) * (acc(i, k) - reference[i * 3 + k]);
      }
      ASSERT_LT(std::sqrt(diff / norm), 2e-5) << "body " << i << " " << test::strategy_name(strategy);
    }
  });
}

// REGTT's breadth-first top changes the order in which a body's pulls are
// summed: from reorder depth 2 on it must equal, bit for bit, the order
// regtt_reference.hpp writes down independently (on host spaces; on the GPU,
// where compilers may contract differently, its own unsorted non-lockstep run:
// modes, warp sizes, chunks and sorting change which lane serves a body, never
// its order). At depths 0 and 1 that order is autoropes'.
template <class Space>
auto regtt_expected(Space const& space, Bodies const& b, int depth) {
  if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
    Octree<Kokkos::HostSpace> tree(Kokkos::DefaultHostExecutionSpace{}, b.positions, b.masses, 8);
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> acc("test::regtt_acc", b.positions.size(), 3);
    BarnesHutOptions const options{0.5f, 0.01f, 1.0f};
    auto const visitor = detail::make_barnes_hut_walk<Multipole::monopole>(
        Kokkos::DefaultHostExecutionSpace{}, tree, b.positions.coordinates, options,
        detail::Acceleration<Kokkos::HostSpace>{0.01f * 0.01f, 1.0f, acc}, {});
    test::regtt_reference(tree.topology, visitor, depth);
    return acc;
  } else {
    return accelerations(space, b, 0.5f, 0.01f, Regtt{depth, RegttMode::nonlockstep, 32, false});
  }
}

TYPED_TEST(BarnesHut, StrategiesAgreeBitwise) {
  TypeParam space;
  auto b = plummer_bodies(3000);
  auto autoropes = accelerations(space, b, 0.5f, 0.01f, Autoropes{});
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    auto expected = autoropes;
    if constexpr (std::is_same_v<decltype(strategy), Regtt>) {
      RegttTimings timings;
      strategy.timings = &timings;
      auto acc = accelerations(space, b, 0.5f, 0.01f, strategy);
      if (timings.depth >= 2) expected = regtt_expected(space, b, timings.depth);
      int mismatches = 0;
      for (std::size_t i = 0; i < acc.extent(0); ++i)
        for (int k = 0; k < 3; ++k) mismatches += acc(i, k) != expected(i, k);
      EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy) << " at depth " << timings.depth;
      return;
    }
    auto acc = accelerations(space, b, 0.5f, 0.01f, strategy);
    int mismatches = 0;
    for (std::size_t i = 0; i < acc.extent(0); ++i)
      for (int k = 0; k < 3; ++k) mismatches += acc(i, k) != expected(i, k);
    EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy);
  });
}

// The reference order itself differs from autoropes' once cells above the
// reorder depth are taken whole (so the test above can fail), yet only by
// float rounding.
TYPED_TEST(BarnesHut, RegttOrderDiffersFromDepthFirstByRoundingOnly) {
  TypeParam space;
  auto b = plummer_bodies(3000);
  auto autoropes = accelerations(space, b, 0.5f, 0.01f, Autoropes{});
  auto regtt = accelerations(space, b, 0.5f, 0.01f, Regtt{3, RegttMode::lockstep});
  int differing = 0;
  double worst = 0;
  for (std::size_t i = 0; i < regtt.extent(0); ++i) {
    double diff = 0, norm = 0;
    for (int k = 0; k < 3; ++k) {
      differing += regtt(i, k) != autoropes(i, k);
      diff += (regtt(i, k) - autoropes(i, k)) * double(regtt(i, k) - autoropes(i, k));
      norm += autoropes(i, k) * double(autoropes(i, k));
    }
    worst = std::max(worst, std::sqrt(diff / norm));
  }
  EXPECT_GT(differing, 0);
  EXPECT_LT(worst, 1e-5);
}

// The relative criterion: alpha 0 opens every cell (direct summation), and
// the walk reads each body's previous acceleration from the row it
// overwrites: bodies told that they pull 1000 times harder than they do take
// coarser cells, and err more.
TYPED_TEST(BarnesHut, RelativeCriterionReadsThePreviousAccelerations) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto b = plummer_bodies(2000);
  Index const n = b.positions.size();
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<Memory> tree(space, bodies, masses, 4);
  Coordinate const softening = 0.01f;
  auto const reference = test::direct_accelerations(b.positions, b.masses_double, softening, 1.0);
  BarnesHutOptions options{0.0f, softening, 1.0f};
  options.opening = Opening::relative;
  options.alpha = 0;
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    auto const acc = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, bodies, options, strategy));
    for (Index i = 0; i < n; ++i) {
      double norm = 0, diff = 0;
      for (int k = 0; k < 3; ++k) {
        norm += reference[i * 3 + k] * reference[i * 3 + k];
        diff += (acc(i, k) - reference[i * 3 + k]) * (acc(i, k) - reference[i * 3 + k]);
      }
      ASSERT_LT(std::sqrt(diff / norm), 2e-5) << "body " << i << " " << test::strategy_name(strategy);
    }
  });
  options.alpha = 0.002f;
  test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
    auto const told =
        barnes_hut_accelerations(space, tree, bodies, relative_estimate_options(options), strategy);
    // A copy of its own (a host space's mirror would be the same array).
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> misled("test::misled", n, 3);
    Kokkos::deep_copy(misled, told);
    auto exaggerated = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, misled);
    for (Index i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) exaggerated(i, k) *= 1000;
    Kokkos::deep_copy(misled, exaggerated);
    compute_barnes_hut_accelerations(space, tree, bodies, options, strategy, told);
    compute_barnes_hut_accelerations(space, tree, bodies, options, strategy, misled);
    double const error = relative_rms_error(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, told), reference);
    double const misled_error =
        relative_rms_error(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, misled), reference);
    EXPECT_LT(error, 5e-3) << test::strategy_name(strategy);
    EXPECT_GT(misled_error, 3 * error) << test::strategy_name(strategy);
  });
}

// A walk that reuses its workspace hands out last walk's costliest groups
// first (GroupWalkCosts): another order of the same groups, the same sums.
TYPED_TEST(BarnesHut, GroupWalkInCostOrderGivesTheSameSums) {
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto b = plummer_bodies(4000);
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<Memory> tree(space, bodies, masses, 8);
  Workspace workspace;
  GroupWalk walk;
  walk.workspace = &workspace;
  BarnesHutOptions const options{0.5f, 0.01f, 1.0f};
  auto const first = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, bodies, options, walk));
  auto const& history = workspace.get<detail::GroupWalkCosts<Memory>>();
  ASSERT_TRUE(history.recorded);
  auto const costs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, history.costs);
  Index smallest = costs(0), largest = costs(0);
  for (Index i = 0; i < b.positions.size(); ++i) smallest = std::min(smallest, costs(i)), largest = std::max(largest, costs(i));
  EXPECT_GT(smallest, 0);
  EXPECT_GT(largest, smallest); // the order does change
  auto const second = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, bodies, options, walk));
  int mismatches = 0;
  for (std::size_t i = 0; i < first.extent(0); ++i)
    for (int k = 0; k < 3; ++k) mismatches += first(i, k) != second(i, k);
  EXPECT_EQ(mismatches, 0);
}

// Consecutive small siblings pack into one group only when their bodies' box
// keeps clear of every other non-empty sibling: bodies sparse around a dense
// clump (a galaxy's halo around its centre) would otherwise make a box over
// the clump, and their group would sum the clump body by body.
TEST(BarnesHutGroups, PackedSiblingsKeepClearOfOtherSiblings) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  std::vector<std::array<Coordinate, 3>> x = {{0, 0, 0}, {1, 1, 1}}; // the root cube: the unit cube
  for (int i = 0; i < 200; ++i) // a clump in octant 0's child 0
    x.push_back({0.1f + 0.001f * (i % 6), 0.1f + 0.001f * (i / 6 % 6), 0.1f + 0.001f * (i / 36)});
  x.push_back({0.45f, 0.2f, 0.2f});   // octant 0's child 1 (x high)
  x.push_back({0.45f, 0.3f, 0.2f});   // child 3 (x, y high); child 2 stays empty
  x.push_back({0.05f, 0.05f, 0.45f}); // child 4 (z high)
  Index const n = Index(x.size());
  test::HostPoints bodies = allocate_points<Kokkos::HostSpace>("test::bodies", n, 3);
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) bodies.coordinates(i, k) = x[i][k];
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("test::masses", n);
  Kokkos::deep_copy(masses, 1.0f);
  Octree<Kokkos::HostSpace> tree(Host{}, bodies, masses, 8);
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> acc("test::acc", n, 3);
  auto const walk = detail::make_barnes_hut_walk<Multipole::monopole>(
      Host{}, tree, bodies.coordinates, BarnesHutOptions{}, detail::Acceleration<Kokkos::HostSpace>{0, 1, acc}, {});
  Index const octant = tree.topology.child(0, 0);
  auto const& t = tree.topology;
  ASSERT_EQ(t.point_end(octant) - t.point_begin(octant), 204); // the clump, the corner body, three more
  // Its children: the clump's cell, then the cells of digits 1, 3 and 4.
  Index const one = t.child(octant, 1), three = t.child(octant, 2), four = t.child(octant, 3);
  ASSERT_GE(four, 0);
  ASSERT_EQ(t.child(octant, 4), -1);
  for (Index child : {one, three, four}) ASSERT_EQ(t.point_end(child) - t.point_begin(child), 1);
  // Digits 1 and 3: a box at x = 0.45, clear of the clump's cell [0, 0.25]^3.
  EXPECT_TRUE(walk.packs(t.point_begin(one), t.point_end(three), octant));
  // Digits 1 to 4: the box reaches down to (0.05, 0.05) and over the clump.
  EXPECT_FALSE(walk.packs(t.point_begin(one), t.point_end(four), octant));
}

TYPED_TEST(BarnesHut, BadArgumentsAreInputErrors) {
  TypeParam space;
  auto b = plummer_bodies(100);
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<typename TypeParam::memory_space> tree(space, bodies, masses, 8);
  EXPECT_THROW(barnes_hut_accelerations(space, tree, bodies, {-0.1f, 0.0f, 1.0f}, Autoropes{}), InputError);
  EXPECT_THROW(barnes_hut_accelerations(space, tree, bodies, {0.5f, -1.0f, 1.0f}, Autoropes{}), InputError);
  BarnesHutOptions relative{0.5f, 0.0f, 1.0f, Multipole::monopole, Opening::relative};
  relative.alpha = -1;
  EXPECT_THROW(barnes_hut_accelerations(space, tree, bodies, relative, Autoropes{}), InputError);
  EXPECT_THROW(parse_opening("gadget"), InputError);
  auto flat = copy_points(space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 100, 2, 1), "flat");
  EXPECT_THROW((Octree<typename TypeParam::memory_space>(space, flat, masses, 8)), InputError);
}

}  // namespace
