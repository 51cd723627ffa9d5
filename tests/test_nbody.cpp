// N-body simulation, per backend: the Morton octree built on the execution
// space, the potential diagnostic, the leapfrog (a circular two-body orbit, the
// energy drift of a Plummer sphere), continuation from a checkpoint bit for bit,
// and loud failure on a diverging integration.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/core/progress.hpp>
#include <treetrav/nbody/checkpoint.hpp>
#include <treetrav/nbody/potential.hpp>
#include <treetrav/nbody/simulation.hpp>
#include <treetrav/trees/octree.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace treetrav;
namespace fs = std::filesystem;

template <class Space>
class MortonOctree : public ::testing::Test {};
TYPED_TEST_SUITE(MortonOctree, test::ExecutionSpaces, test::SpaceName);

template <class Space>
class NBody : public ::testing::Test {};
TYPED_TEST_SUITE(NBody, test::ExecutionSpaces, test::SpaceName);

using HostMasses = Kokkos::View<Coordinate*, Kokkos::HostSpace>;

HostMasses equal_masses(Index n) {
  HostMasses masses("test::masses", n);
  Kokkos::deep_copy(masses, Coordinate(1) / n);
  return masses;
}

// A deep, lopsided input: a tight clump far from a wide one, and a lone body.
test::HostPoints clumps() {
  auto wide = generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 300, 3, 5);
  test::HostPoints out = allocate_points<Kokkos::HostSpace>("test::clumps", 601, 3);
  for (Index i = 0; i < 300; ++i)
    for (int k = 0; k < 3; ++k) {
      out.coordinates(i, k) = wide.coordinates(i, k);
      out.coordinates(300 + i, k) = 100 + 1e-4f * wide.coordinates(i, k);
    }
  for (int k = 0; k < 3; ++k) out.coordinates(600, k) = -50;
  return out;
}

struct TreeCase {
  std::string name;
  test::HostPoints bodies;
  int leaf_size;
};

std::vector<TreeCase> tree_cases() {
  auto const plummer = test::plummer_positions(3000, 3);
  return {{"plummer-3000", plummer, 8},
          {"one-body", test::first_points(plummer, 1), 8},
          {"nine-bodies-leaf8", test::first_points(plummer, 9), 8},
          {"identical-64", test::repeated(test::first_points(plummer, 1), 64), 8},
          {"clumps", clumps(), 4}};
}

template <class Space>
LevelledOctree<typename Space::memory_space> build(Space const& space, test::HostPoints const& bodies,
                                                   HostMasses const& masses, int leaf_size) {
  auto const device_bodies = copy_points(space, bodies, "test::bodies");
  auto const device_masses = Kokkos::create_mirror_view_and_copy(space, masses);
  auto built = build_morton_octree_cells(space, device_bodies, device_masses, leaf_size);
  compute_octree_moments(space, built);
  return built;
}

TYPED_TEST(MortonOctree, IsAValidOctreeWithExactMoments) {
  TypeParam space;
  for (auto const& c : tree_cases()) {
    SCOPED_TRACE(c.name);
    Index const n = c.bodies.size();
    auto const masses = equal_masses(n);
    auto const built = build(space, c.bodies, masses, c.leaf_size);
    auto const to_host = [](auto const& view) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view); };
    auto const children = to_host(built.tree.topology.children);
    auto const parent = to_host(built.tree.topology.parent);
    auto const begin = to_host(built.tree.topology.point_begin);
    auto const end = to_host(built.tree.topology.point_end);
    auto const center = to_host(built.tree.cell_center);
    auto const size = to_host(built.tree.cell_size);
    auto const mass = to_host(built.tree.mass);
    auto const com = to_host(built.tree.center_of_mass);
    auto const original = to_host(built.tree.points.original_index);
    auto const sorted = to_host(built.tree.points.points.coordinates);
    Index const nodes = built.tree.topology.size();

    // Bodies in tree order: a permutation of the input.
    std::vector<int> seen(n, 0);
    for (Index i = 0; i < n; ++i) {
      ASSERT_TRUE(original(i) >= 0 && original(i) < n);
      ++seen[original(i)];
      for (int k = 0; k < 3; ++k) ASSERT_EQ(sorted(i, k), c.bodies.coordinates(original(i), k));
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n);

    // Breadth-first levels: each node's children lie in the next level.
    auto const level_begin = octree_levels(built);
    ASSERT_EQ(level_begin.front(), 0);
    ASSERT_EQ(level_begin.back(), nodes);
    std::vector<int> level_of(nodes);
    for (std::size_t level = 0; level + 1 < level_begin.size(); ++level)
      for (Index node = level_begin[level]; node < level_begin[level + 1]; ++node) level_of[node] = level;

    EXPECT_EQ(parent(0), -1);
    EXPECT_EQ(begin(0), 0);
    EXPECT_EQ(end(0), n);
    float const finest = size(0) / float(1 << 21);
    for (Index node = 0; node < nodes; ++node) {
      Index cursor = begin(node);
      int slot = 0;
      for (; slot < 8 && children(node, slot) >= 0; ++slot) {
        Index const child = children(node, slot);
        ASSERT_EQ(parent(child), node);
        ASSERT_EQ(level_of[child], level_of[node] + 1);
        ASSERT_EQ(begin(child), cursor);  // children partition the node's bodies, in order
        ASSERT_LT(begin(child), end(child));
        cursor = end(child);
        ASSERT_EQ(size(child), size(node) / 2);
        for (int k = 0; k < 3; ++k) ASSERT_NEAR(std::abs(center(child, k) - center(node, k)), size(node) / 4, 1e-6f * size(0));
      }
      for (int s = slot; s < 8; ++s) ASSERT_LT(children(node, s), 0);
      if (slot > 0) {
        ASSERT_EQ(cursor, end(node));
      } else {
        // A leaf holds at most leaf_size bodies unless it cannot split further.
        EXPECT_TRUE(end(node) - begin(node) <= c.leaf_size || size(node) <= 2 * finest)
            << "node " << node << " holds " << end(node) - begin(node);
        for (Index i = begin(node); i < end(node); ++i)
          for (int k = 0; k < 3; ++k)
            ASSERT_LE(std::abs(sorted(i, k) - center(node, k)), size(node) / 2 * (1 + 1e-5f) + 1e-6f * size(0))
                << "body " << original(i) << " outside its leaf " << node;
      }
      // Moments against a direct double sum over the node's bodies.
      double m = 0, moment[3] = {0, 0, 0};
      for (Index i = begin(node); i < end(node); ++i) {
        m += masses(original(i));
        for (int k = 0; k < 3; ++k) moment[k] += double(masses(original(i))) * sorted(i, k);
      }
      ASSERT_NEAR(mass(node), m, 1e-6 * m);
      for (int k = 0; k < 3; ++k) ASSERT_NEAR(com(node, k), moment[k] / m, 1e-6 * (std::abs(moment[k] / m) + size(node)));
    }
  }
}

TYPED_TEST(MortonOctree, BuildIsDeterministic) {
  TypeParam space;
  auto const bodies = test::plummer_positions(5000, 4);
  auto const masses = equal_masses(bodies.size());
  auto const first = build(space, bodies, masses, 8);
  auto const second = build(space, bodies, masses, 8);
  ASSERT_EQ(octree_levels(first), octree_levels(second));
  auto const same = [](auto const& a, auto const& b) {
    auto const ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
    auto const hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
    return ha.span() == hb.span() && std::equal(ha.data(), ha.data() + ha.span(), hb.data());
  };
  EXPECT_TRUE(same(first.tree.topology.children, second.tree.topology.children));
  EXPECT_TRUE(same(first.tree.points.original_index, second.tree.points.original_index));
  EXPECT_TRUE(same(first.tree.center_of_mass, second.tree.center_of_mass));
  EXPECT_TRUE(same(first.tree.mass, second.tree.mass));
}

// sqrt(sum |a - a_ref|^2 / sum |a_ref|^2) and the worst body's relative error.
template <class Host>
std::pair<double, double> acceleration_errors(Host const& acc, std::vector<double> const& reference) {
  double error = 0, norm = 0, worst = 0;
  for (std::size_t i = 0; i < acc.extent(0); ++i) {
    double body_error = 0, body_norm = 0;
    for (int k = 0; k < 3; ++k) {
      double const diff = acc(i, k) - reference[i * 3 + k];
      body_error += diff * diff;
      body_norm += reference[i * 3 + k] * reference[i * 3 + k];
    }
    error += body_error;
    norm += body_norm;
    worst = std::max(worst, std::sqrt(body_error / body_norm));
  }
  return {std::sqrt(error / norm), worst};
}

TYPED_TEST(MortonOctree, BarnesHutOverItMatchesDirectSummation) {
  TypeParam space;
  auto const bodies = test::plummer_positions(2000, 6);
  auto const masses = equal_masses(bodies.size());
  std::vector<double> const masses_double(bodies.size(), double(masses(0)));
  auto const device_bodies = copy_points(space, bodies, "test::bodies");
  auto const tree = build_morton_octree(space, device_bodies, Kokkos::create_mirror_view_and_copy(space, masses), 4);
  for (Coordinate softening : {0.0f, 0.01f}) {
    auto const reference = test::direct_accelerations(bodies, masses_double, softening, 1.0);
    test::for_each_strategy<TypeParam, 8>([&](auto strategy) {
      auto const exact = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, device_bodies, {0.0f, softening, 1.0f}, strategy));
      auto const approximate = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, device_bodies, {0.5f, softening, 1.0f}, strategy));
      // theta = 0: float rounding only; theta = 0.5: the host octree's accuracy.
      EXPECT_LT(acceleration_errors(exact, reference).second, 2e-5) << test::strategy_name(strategy);
      EXPECT_LT(acceleration_errors(approximate, reference).first, 1e-2) << test::strategy_name(strategy);
    });
  }
}

// A build in a workspace gives the same bits as one in arrays of its own,
// whether the workspace's buffers grow, shrink or keep their size, and a
// repeated build reuses the last one's arrays (overwriting its octree).
TYPED_TEST(MortonOctree, BuildsInAWorkspaceReuseItsArraysToTheSameBits) {
  TypeParam space;
  auto const to_host = [](auto const& view) {
    auto copy = Kokkos::create_mirror(Kokkos::HostSpace{}, view);
    Kokkos::deep_copy(copy, view);
    return copy;
  };
  auto const same = [&](auto const& a, auto const& b) {
    auto const x = to_host(a), y = to_host(b);
    return x.extent(0) == y.extent(0) && x.span() == y.span() &&
           std::equal(x.data(), x.data() + x.span(), y.data(), [](auto p, auto q) { return p == q; });
  };
  auto const cases = tree_cases();
  Workspace workspace;
  // The clumps (the most nodes), the largest set twice, the smaller ones, the clumps again.
  std::vector<std::size_t> const turns = {4, 0, 0, 1, 2, 3, 4, 4};
  void const* last_children = nullptr;
  void const* last_bodies = nullptr;
  for (std::size_t t = 0; t < turns.size(); ++t) {
    auto const& c = cases[turns[t]];
    SCOPED_TRACE(c.name + " (turn " + std::to_string(t) + ")");
    auto const bodies = copy_points(space, c.bodies, "test::bodies");
    auto const masses = Kokkos::create_mirror_view_and_copy(space, equal_masses(c.bodies.size()));
    auto own = build_morton_octree_cells(space, bodies, masses, c.leaf_size);
    compute_octree_multipoles(space, own, true);
    auto kept = build_morton_octree_cells(space, bodies, masses, c.leaf_size, &workspace);
    compute_octree_multipoles(space, kept, true);
    EXPECT_EQ(kept.workspace, &workspace);
    EXPECT_EQ(own.workspace, nullptr);
    auto const& a = own.tree;
    auto const& b = kept.tree;
    EXPECT_TRUE(same(a.topology.children, b.topology.children));
    EXPECT_TRUE(same(a.topology.parent, b.topology.parent));
    EXPECT_TRUE(same(a.topology.point_begin, b.topology.point_begin));
    EXPECT_TRUE(same(a.topology.point_end, b.topology.point_end));
    EXPECT_TRUE(same(a.points.points.coordinates, b.points.points.coordinates));
    EXPECT_TRUE(same(a.points.original_index, b.points.original_index));
    EXPECT_TRUE(same(a.body_mass, b.body_mass));
    EXPECT_TRUE(same(a.cell_center, b.cell_center));
    EXPECT_TRUE(same(a.cell_size, b.cell_size));
    EXPECT_TRUE(same(a.mass, b.mass));
    EXPECT_TRUE(same(a.center_of_mass, b.center_of_mass));
    EXPECT_TRUE(same(a.quadrupole, b.quadrupole));
    EXPECT_EQ(octree_levels(own), octree_levels(kept));
    // The same case again: the same arrays (no allocation).
    if (t > 0 && turns[t] == turns[t - 1]) {
      EXPECT_EQ(static_cast<void const*>(b.topology.children.data()), last_children);
      EXPECT_EQ(static_cast<void const*>(b.points.points.coordinates.data()), last_bodies);
    }
    last_children = b.topology.children.data();
    last_bodies = b.points.points.coordinates.data();
  }
}

// A refit keeps the octree's cells and body order: unmoved bodies change no
// bit; moved ones are gathered into tree order, every cube moves (and grows
// only past its built side) until it holds its bodies, the moments are those a fresh pass sums
// over the moved bodies, and Barnes-Hut over it stays as accurate.
TYPED_TEST(MortonOctree, RefitHoldsTheMovedBodiesWithTheMomentsOfAFreshPass) {
  TypeParam space;
  auto const to_host = [](auto const& view) {
    auto copy = Kokkos::create_mirror(Kokkos::HostSpace{}, view); // never an alias: the tree changes
    Kokkos::deep_copy(copy, view);
    return copy;
  };
  auto const same = [](auto const& a, auto const& b) {
    return a.span() == b.span() &&
           std::equal(a.data(), a.data() + a.span(), b.data(), [](auto x, auto y) { return x == y; });
  };
  for (auto const& c : tree_cases()) {
    SCOPED_TRACE(c.name);
    Index const n = c.bodies.size();
    auto const masses = equal_masses(n);
    auto const device_bodies = copy_points(space, c.bodies, "test::bodies");
    auto built = build_morton_octree_cells(space, device_bodies, Kokkos::create_mirror_view_and_copy(space, masses),
                                           c.leaf_size);
    compute_octree_multipoles(space, built, true);
    auto const built_size = to_host(built.tree.cell_size);
    auto const built_center = to_host(built.tree.cell_center);
    auto const built_mass = to_host(built.tree.mass);
    auto const built_com = to_host(built.tree.center_of_mass);
    auto const built_quadrupole = to_host(built.tree.quadrupole);

    EXPECT_EQ(refit_octree(space, built, device_bodies, true), 0.0);
    EXPECT_TRUE(same(to_host(built.tree.cell_size), built_size));
    EXPECT_TRUE(same(to_host(built.tree.cell_center), built_center));
    EXPECT_TRUE(same(to_host(built.tree.mass), built_mass));
    EXPECT_TRUE(same(to_host(built.tree.center_of_mass), built_com));
    EXPECT_TRUE(same(to_host(built.tree.quadrupole), built_quadrupole));

    // Each body moves by up to a tenth of the root cell.
    test::HostPoints moved = allocate_points<Kokkos::HostSpace>("test::moved", n, 3);
    for (Index i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k)
        moved.coordinates(i, k) = c.bodies.coordinates(i, k) + 0.1f * built_size(0) * float(std::sin(1.7 * i + k));
    auto const device_moved = copy_points(space, moved, "test::moved");
    double const growth = refit_octree(space, built, device_moved, true);
    auto const size = to_host(built.tree.cell_size);
    auto const center = to_host(built.tree.cell_center);
    auto const mass = to_host(built.tree.mass);
    auto const com = to_host(built.tree.center_of_mass);
    auto const quadrupole = to_host(built.tree.quadrupole);
    auto const begin = to_host(built.tree.topology.point_begin);
    auto const end = to_host(built.tree.topology.point_end);
    auto const original = to_host(built.tree.points.original_index);
    auto const sorted = to_host(built.tree.points.points.coordinates);
    Index const nodes = built.tree.topology.size();
    for (Index i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) ASSERT_EQ(sorted(i, k), moved.coordinates(original(i), k));
    double expected_growth = 0;
    for (Index node = 0; node < nodes; ++node) {
      ASSERT_GE(size(node), built_size(node));
      double m = 0, moment[3] = {0, 0, 0};
      for (Index i = begin(node); i < end(node); ++i) {
        for (int k = 0; k < 3; ++k) // within the build's own rounding (refit_octree)
          ASSERT_LE(std::abs(double(sorted(i, k)) - center(node, k)),
                    double(size(node)) / 2 + (double(built_size(0)) + std::abs(center(node, k))) / (1 << 21))
              << "body " << original(i) << " outside node " << node;
        m += masses(original(i));
        for (int k = 0; k < 3; ++k) moment[k] += double(masses(original(i))) * sorted(i, k);
      }
      ASSERT_NEAR(mass(node), m, 1e-6 * m);
      for (int k = 0; k < 3; ++k)
        ASSERT_NEAR(com(node, k), moment[k] / m, 1e-6 * (std::abs(moment[k] / m) + size(node)));
      double const ratio = double(size(node)) / built_size(node);
      expected_growth += std::min(8.0, ratio * ratio * ratio - 1);
    }
    EXPECT_NEAR(growth, expected_growth / nodes, 1e-4);
    if (c.name == "plummer-3000" || c.name == "clumps") {
      EXPECT_GT(growth, 0.01);
    }

    // The moments of one pass over the moved bodies in the same cells, bit for bit.
    compute_octree_multipoles(space, built, true);
    EXPECT_TRUE(same(to_host(built.tree.mass), mass));
    EXPECT_TRUE(same(to_host(built.tree.center_of_mass), com));
    EXPECT_TRUE(same(to_host(built.tree.quadrupole), quadrupole));

    if (c.name == "plummer-3000") {
      std::vector<double> const masses_double(n, double(masses(0)));
      auto const reference = test::direct_accelerations(moved, masses_double, 0.0f, 1.0);
      auto const refitted = to_host(barnes_hut_accelerations(space, built.tree, device_moved, {0.5f, 0.0f, 1.0f},
                                                             Autoropes{}));
      EXPECT_LT(acceleration_errors(refitted, reference).first, 1e-2);
    }
  }
}

TYPED_TEST(NBody, PotentialAtThetaZeroIsDirectSummation) {
  TypeParam space;
  auto const bodies = test::plummer_positions(1000, 8);
  auto const masses = equal_masses(bodies.size());
  auto const device_bodies = copy_points(space, bodies, "test::bodies");
  auto const tree = build_morton_octree(space, device_bodies, Kokkos::create_mirror_view_and_copy(space, masses));
  double const softening = 0.05;
  Index const n = bodies.size();
  std::vector<double> reference(n, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      if (i == j) continue;
      double r2 = softening * softening;
      for (int k = 0; k < 3; ++k) {
        double const dx = double(bodies.coordinates(j, k)) - bodies.coordinates(i, k);
        r2 += dx * dx;
      }
      reference[i] -= double(masses(j)) / std::sqrt(r2);
    }
  auto potentials = [&](Coordinate theta) {
    return Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace{},
        nbody::gravitational_potentials(space, tree, device_bodies, {theta, Coordinate(softening), 1.0f}, Autoropes{}));
  };
  auto const exact = potentials(0.0f);
  auto const approximate = potentials(0.5f);
  double worst_exact = 0, mean_approximate = 0;
  for (Index i = 0; i < n; ++i) {
    worst_exact = std::max(worst_exact, std::abs(exact(i) / reference[i] - 1));
    mean_approximate += std::abs(approximate(i) / reference[i] - 1) / n;
  }
  EXPECT_LT(worst_exact, 1e-6);
  EXPECT_LT(mean_approximate, 1e-2);
  EXPECT_GT(mean_approximate, 0);  // theta = 0.5 really approximates
}

nbody::Configuration configuration(double dt, Coordinate theta, Coordinate softening, io::Snapshot const& state) {
  nbody::Configuration c;
  c.dt = dt;
  c.forces = {theta, softening, 1.0f};
  c.potential_theta = 0;
  c.initial_conditions = "test";
  c.bodies = static_cast<std::int64_t>(state.size());
  return c;
}

// Two equal masses (total 1, G = 1) on a circle of separation 1: angular
// velocity 1, period 2 pi.
io::Snapshot circular_binary() {
  io::Snapshot s = io::allocate_snapshot(2);
  for (int b = 0; b < 2; ++b) {
    double const sign = b == 0 ? 1 : -1;
    s.coordinates(b, 0) = 0.5 * sign;
    s.coordinates(b, 1) = s.coordinates(b, 2) = 0;
    s.velocities(b, 1) = 0.5 * sign;
    s.velocities(b, 0) = s.velocities(b, 2) = 0;
    s.masses(b) = 0.5;
    s.ids(b) = b;
  }
  return s;
}

TYPED_TEST(NBody, CircularTwoBodyOrbitStaysCircular) {
  constexpr double pi = 3.14159265358979323846;
  constexpr int periods = 10, steps_per_period = 100;
  auto const initial = circular_binary();
  nbody::Simulation<TypeParam, Autoropes> simulation(
      TypeParam{}, Autoropes{}, configuration(2 * pi / steps_per_period, 0.0f, 0.0f, initial), initial, 0);
  simulation.compute_accelerations();
  double worst_radius_error = 0, final_angle = 0;
  for (int step = 1; step <= periods * steps_per_period; ++step) {
    simulation.step();
    if (step % 10 != 0) continue;
    auto const s = simulation.state(false);
    double d[3];
    for (int k = 0; k < 3; ++k) d[k] = s.coordinates(0, k) - s.coordinates(1, k);
    worst_radius_error = std::max(worst_radius_error, std::abs(std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - 1));
    final_angle = std::atan2(d[1], d[0]);
    ASSERT_NEAR(s.coordinates(0, 2), 0, 1e-12);  // stays in its plane
  }
  // Leapfrog at omega dt = 2 pi / 100: the radius stays within about
  // (omega dt)^2 / 2 = 2.0e-3 of 1 for ever (no secular growth), and the phase
  // lags by about (omega dt)^2 / 3 per radian: 0.083 rad after 10 periods.
  EXPECT_LT(worst_radius_error, 2.5e-3);
  EXPECT_LT(std::abs(final_angle), 0.1);
  EXPECT_EQ(simulation.current_step(), periods * steps_per_period);
  EXPECT_NEAR(simulation.time(), periods * 2 * pi, 1e-9);
}

TYPED_TEST(NBody, PlummerEnergyDriftIsBounded) {
  // 1000 bodies, softening 0.05, dt 0.005 (t = 5, about two crossing times);
  // forces at theta 0.5, energy from exact potentials.
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 1000, 11);
  nbody::Simulation<TypeParam, Autoropes> simulation(TypeParam{}, Autoropes{},
                                                      configuration(0.005, 0.5f, 0.05f, initial), initial, 0);
  simulation.compute_accelerations();
  auto const start = nbody::measure(simulation.state(true));
  for (int step = 0; step < 1000; ++step) simulation.step();
  auto const end = nbody::measure(simulation.state(true));
  auto const drift = nbody::drift(start, end);
  // The bound the README states: |dE/E| < 1e-4 (measured 2.6e-5). Barnes-Hut
  // forces are not pairwise symmetric, so momentum drifts too (measured 3.1e-4
  // of sum m|v|; angular momentum 4.2e-5 of sum m|x cross v|).
  EXPECT_LT(std::abs(drift.energy), 1e-4);
  EXPECT_LT(drift.momentum, 1e-3);
  EXPECT_LT(drift.angular_momentum, 2e-4);
  EXPECT_GT(std::abs(end.kinetic_energy - start.kinetic_energy), 1e-4);  // the bodies did move
}

struct TemporaryDirectory {
  fs::path path;
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "treetrav-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TemporaryDirectory() { fs::remove_all(path); }
  void write(std::string const& name, std::string const& bytes) const {
    std::FILE* file = std::fopen((path / name).c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
  }
};

// What a run writes at `simulation`'s step and a restart reads back: its
// checkpoint, through a file in `directory`.
template <class Simulation>
nbody::Checkpoint through_a_file(Simulation& simulation, nbody::Configuration const& config, std::string backend,
                                 fs::path const& directory) {
  nbody::Checkpoint written;
  written.step = simulation.current_step();
  written.state = simulation.state(false);
  written.accelerations = simulation.host_accelerations();
  written.bins = simulation.host_bins();
  written.tree_positions = simulation.tree_positions();
  written.configuration = config;
  written.backend = std::move(backend);
  std::string const path = nbody::checkpoint_path(directory.string(), written.step);
  nbody::write_checkpoint(path, written);
  return nbody::read_checkpoint(path);
}

// A restart's simulation from `checkpoint`.
template <class Space, class Strategy>
nbody::Simulation<Space, Strategy> resumed_from(nbody::Checkpoint const& checkpoint) {
  nbody::Simulation<Space, Strategy> resumed(Space{}, Strategy{}, checkpoint.configuration, checkpoint.state,
                                             checkpoint.step);
  resumed.set_accelerations(checkpoint.accelerations);
  resumed.set_bins(checkpoint.bins);
  resumed.set_tree_positions(checkpoint.tree_positions);
  return resumed;
}

TYPED_TEST(NBody, CheckpointContinuesBitForBit) {
  TypeParam space;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 500, 12);
  auto const config = configuration(0.01, 0.6f, 0.02f, initial);
  nbody::Simulation<TypeParam, Lockstep> uninterrupted(space, Lockstep{}, config, initial, 0);
  uninterrupted.compute_accelerations();
  for (int step = 0; step < 10; ++step) uninterrupted.step();

  TemporaryDirectory dir;
  auto resumed = resumed_from<TypeParam, Lockstep>(through_a_file(uninterrupted, config, TypeParam::name(), dir.path));
  for (int step = 0; step < 10; ++step) {
    uninterrupted.step();
    resumed.step();
  }
  auto const a = uninterrupted.state(true), b = resumed.state(true);
  auto const acc_a = uninterrupted.host_accelerations(), acc_b = resumed.host_accelerations();
  EXPECT_EQ(resumed.current_step(), 20);
  EXPECT_EQ(a.time, b.time);
  int differences = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differences += a.potentials(i) != b.potentials(i);
    for (int k = 0; k < 3; ++k)
      differences += (a.coordinates(i, k) != b.coordinates(i, k)) + (a.velocities(i, k) != b.velocities(i, k)) +
                     (acc_a(i, k) != acc_b(i, k));
  }
  EXPECT_EQ(differences, 0);
}

TYPED_TEST(NBody, DivergenceIsAnErrorNotAState) {
  // Two bodies at one point without softening: infinite forces.
  io::Snapshot initial = circular_binary();
  for (int k = 0; k < 3; ++k) initial.coordinates(1, k) = initial.coordinates(0, k);
  nbody::Simulation<TypeParam, Autoropes> coincident(TypeParam{}, Autoropes{}, configuration(0.01, 0.5f, 0.0f, initial),
                                                     initial, 0);
  coincident.compute_accelerations();
  EXPECT_THROW(coincident.step(), InputError);
  EXPECT_EQ(coincident.current_step(), 0);
  // A step so large that the bodies leave the float range.
  auto const binary = circular_binary();
  nbody::Simulation<TypeParam, Autoropes> flung(TypeParam{}, Autoropes{}, configuration(1e36, 0.5f, 0.0f, binary),
                                                binary, 0);
  flung.compute_accelerations();
  EXPECT_THROW(flung.step(), InputError);
}

// A fresh temporary directory, removed with the object.

// Positions, velocities and accelerations of two runs, bit for bit.
template <class A, class B>
int state_differences(A& a, B& b) {
  auto const sa = a.state(false), sb = b.state(false);
  auto const aa = a.host_accelerations(), ab = b.host_accelerations();
  int differences = 0;
  for (std::size_t i = 0; i < sa.size(); ++i)
    for (int k = 0; k < 3; ++k)
      differences += (sa.coordinates(i, k) != sb.coordinates(i, k)) + (sa.velocities(i, k) != sb.velocities(i, k)) +
                     (aa(i, k) != ab(i, k));
  return differences;
}

TYPED_TEST(NBody, BlockStepsInTheSmallestBinAreFixedSteps) {
  // eta so small that every body wants a step below dt / 2^3: all sit in bin
  // 3, and 2 steps of dt are 16 fixed steps of dt / 8, bit for bit.
  TypeParam space;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 400, 13);
  auto check = [&](auto strategy, int group_size) {
    auto fixed_config = configuration(0.004, 0.5f, 0.02f, initial);
    fixed_config.forces.multipole = Multipole::quadrupole;
    fixed_config.group_size = group_size;
    auto block_config = fixed_config;
    block_config.dt = 0.032;
    block_config.eta = 1e-6;
    block_config.max_bin = 3;
    using Strategy = decltype(strategy);
    nbody::Simulation<TypeParam, Strategy> fixed(space, strategy, fixed_config, initial, 0);
    nbody::Simulation<TypeParam, Strategy> block(space, strategy, block_config, initial, 0);
    fixed.compute_accelerations();
    block.compute_accelerations();
    for (int step = 0; step < 16; ++step) fixed.step();
    for (int step = 0; step < 2; ++step) block.step();
    auto const bins = block.host_bins();
    EXPECT_EQ(std::count(bins.data(), bins.data() + bins.extent(0), std::int8_t(3)), 400);
    EXPECT_EQ(block.sub_steps(), 16);
    EXPECT_EQ(state_differences(fixed, block), 0) << Strategy::name;
    EXPECT_NEAR(block.time(), fixed.time(), 1e-15);
  };
  check(Autoropes{}, 0);
  check(GroupWalk{}, 64);
}

TYPED_TEST(NBody, BlockStepsUseSeveralBinsAndConserveEnergy) {
  // A Plummer sphere's centre and halo differ in |a| by orders of magnitude:
  // the bins spread, fewer forces are evaluated than with every body at the
  // smallest step, and the energy stays within what fixed steps give.
  TypeParam space;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 2000, 14);
  auto config = configuration(1.0 / 16, 0.4f, 0.02f, initial);
  config.forces.multipole = Multipole::quadrupole;
  config.forces.opening = Opening::com_offset;
  config.group_size = 32;
  config.eta = 0.1;
  config.max_bin = 4;
  nbody::Simulation<TypeParam, GroupWalk> simulation(space, GroupWalk{}, config, initial, 0);
  simulation.compute_accelerations();
  auto const start = nbody::measure(simulation.state(true));
  auto const first_bins = simulation.host_bins();
  std::vector<int> occupied(config.max_bin + 1, 0);
  for (std::size_t i = 0; i < first_bins.extent(0); ++i) ++occupied[first_bins(i)];
  EXPECT_GE(std::count_if(occupied.begin(), occupied.end(), [](int c) { return c > 0; }), 3);
  for (int step = 0; step < 16; ++step) simulation.step();
  auto const end = nbody::measure(simulation.state(true));
  auto const evaluated = simulation.times().body_forces - 2000;  // less the initial evaluation
  EXPECT_LT(evaluated, 16 * 16 * 2000 / 2);                       // well under all at bin 4
  EXPECT_GE(simulation.sub_steps(), 16 * 4);
  EXPECT_LT(std::abs(nbody::drift(start, end).energy), 1e-3);
}

TYPED_TEST(NBody, BlockStepCheckpointContinuesBitForBit) {
  // Also under the relative criterion, which reads the previous accelerations
  // (the checkpoint's, after the restart).
  for (Opening opening : {Opening::barnes_hut, Opening::relative}) {
  SCOPED_TRACE(to_string(opening));
  TypeParam space;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 600, 15);
  auto config = configuration(1.0 / 32, 0.5f, 0.02f, initial);
  config.forces.multipole = Multipole::quadrupole;
  config.forces.opening = opening;
  config.forces.alpha = 0.004f;
  config.group_size = 64;
  config.eta = 0.2;
  config.max_bin = 3;
  nbody::Simulation<TypeParam, GroupWalk> uninterrupted(space, GroupWalk{}, config, initial, 0);
  uninterrupted.compute_accelerations();
  for (int step = 0; step < 6; ++step) uninterrupted.step();
  TemporaryDirectory dir;
  auto const checkpoint = through_a_file(uninterrupted, config, TypeParam::name(), dir.path);
  EXPECT_EQ(checkpoint.configuration.forces.opening, opening);
  EXPECT_EQ(checkpoint.configuration.forces.alpha, config.forces.alpha);
  auto resumed = resumed_from<TypeParam, GroupWalk>(checkpoint);
  for (int step = 0; step < 6; ++step) {
    uninterrupted.step();
    resumed.step();
  }
  auto const bins_a = uninterrupted.host_bins(), bins_b = resumed.host_bins();
  int bin_differences = 0;
  for (std::size_t i = 0; i < bins_a.extent(0); ++i) bin_differences += bins_a(i) != bins_b(i);
  EXPECT_EQ(bin_differences, 0);
  EXPECT_EQ(state_differences(uninterrupted, resumed), 0);
  }
}

// A run that refits its octree between builds continues bit for bit from a
// checkpoint (which holds the positions of the last build), and its forces
// stay those of a new octree within the criterion's error.
TYPED_TEST(NBody, RefitCheckpointContinuesBitForBit) {
  TypeParam space;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 600, 17);
  auto config = configuration(1.0 / 32, 0.5f, 0.02f, initial);
  config.forces.multipole = Multipole::quadrupole;
  config.group_size = 64;
  config.refit = 0.25;
  nbody::Simulation<TypeParam, GroupWalk> uninterrupted(space, GroupWalk{}, config, initial, 0);
  uninterrupted.compute_accelerations();
  for (int step = 0; step < 5; ++step) uninterrupted.step();
  TemporaryDirectory dir;
  auto const checkpoint = through_a_file(uninterrupted, config, TypeParam::name(), dir.path);
  EXPECT_EQ(checkpoint.configuration.refit, config.refit);
  ASSERT_EQ(checkpoint.tree_positions.extent(0), initial.size());
  auto resumed = resumed_from<TypeParam, GroupWalk>(checkpoint);
  for (int step = 0; step < 15; ++step) {
    uninterrupted.step();
    resumed.step();
  }
  EXPECT_EQ(state_differences(uninterrupted, resumed), 0);
  // Both refitted and built again, across the restart too.
  auto const& times = uninterrupted.times();
  EXPECT_EQ(times.tree_builds + times.refits, 21);
  EXPECT_GT(times.refits, 0);
  EXPECT_GT(times.tree_builds, 2);
  EXPECT_GT(resumed.times().refits, 0);
  EXPECT_GT(resumed.times().tree_builds, 0);

  // The last forces against those over a new octree of the same state.
  auto fresh_config = config;
  fresh_config.refit = 0;
  nbody::Simulation<TypeParam, GroupWalk> fresh(space, GroupWalk{}, fresh_config, uninterrupted.state(false),
                                                uninterrupted.current_step());
  fresh.compute_accelerations();
  auto const refitted = uninterrupted.host_accelerations(), rebuilt = fresh.host_accelerations();
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < refitted.extent(0); ++i)
    for (int k = 0; k < 3; ++k) {
      error += (refitted(i, k) - rebuilt(i, k)) * (refitted(i, k) - rebuilt(i, k));
      norm += rebuilt(i, k) * rebuilt(i, k);
    }
  EXPECT_LT(std::sqrt(error / norm), 5e-3);
}

TYPED_TEST(NBody, CountsItsInteractions) {
  // At theta 0 every body meets every other: no cell, n - 1 bodies a force.
  TypeParam space;
  Index const n = 300;
  auto const initial = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, n, 16);
  auto config = configuration(1.0 / 64, 0.0f, 0.02f, initial);
  config.group_size = 64;
  nbody::Simulation<TypeParam, GroupWalk> exact(space, GroupWalk{}, config, initial, 0);
  exact.count_interactions(true);
  exact.compute_accelerations();
  exact.step();
  EXPECT_EQ(exact.times().body_forces, 2 * n);
  EXPECT_EQ(exact.times().cell_interactions, 0);
  EXPECT_EQ(exact.times().body_interactions, 2 * n * (n - 1));
  // At theta 0.5 cells stand in for bodies: fewer interactions, some cells.
  config.forces.theta = 0.5f;
  nbody::Simulation<TypeParam, GroupWalk> tree(space, GroupWalk{}, config, initial, 0);
  tree.count_interactions(true);
  tree.compute_accelerations();
  EXPECT_GT(tree.times().cell_interactions, 0);
  EXPECT_LT(tree.times().cell_interactions + tree.times().body_interactions, n * (n - 1));
}

// ------------------------------------------------------- host-only pieces

TEST(NBodyDiagnostics, TwoBodies) {
  io::Snapshot s = io::allocate_snapshot(2, true);
  // Body 0: m 1 at (1, 0, 0) moving (0, 2, 0); body 1: m 3 at rest at the origin.
  s.masses(0) = 1;
  s.masses(1) = 3;
  Kokkos::deep_copy(s.coordinates, 0.0);
  Kokkos::deep_copy(s.velocities, 0.0);
  s.coordinates(0, 0) = 1;
  s.velocities(0, 1) = 2;
  s.potentials(0) = -3;  // -G m1 / r
  s.potentials(1) = -1;
  auto const d = nbody::measure(s);
  EXPECT_DOUBLE_EQ(d.kinetic_energy, 2);
  EXPECT_DOUBLE_EQ(d.potential_energy, -3);  // (1 x -3 + 3 x -1) / 2
  EXPECT_DOUBLE_EQ(d.total_energy(), -1);
  EXPECT_DOUBLE_EQ(d.momentum[1], 2);
  EXPECT_DOUBLE_EQ(d.angular_momentum[2], 2);
  EXPECT_DOUBLE_EQ(d.momentum_scale, 2);
  EXPECT_DOUBLE_EQ(d.angular_momentum_scale, 2);
  auto later = d;
  later.kinetic_energy += 0.01;
  later.momentum[0] += 0.02;
  auto const change = nbody::drift(d, later);
  EXPECT_NEAR(change.energy, 0.01, 1e-15);
  EXPECT_NEAR(change.momentum, 0.01, 1e-15);
  EXPECT_EQ(change.angular_momentum, 0);
  EXPECT_EQ(nbody::describe(change, d).find("absolute"), std::string::npos);
  s.potentials(1) = std::nan("");
  EXPECT_FALSE(nbody::measure(s).finite());
}

// Against an initial value or scale of 0 (one body at rest, E0 = 0) the drifts
// are the absolute changes, never NaN, and say so.
TEST(NBodyDiagnostics, DriftsFromZeroAreAbsolute) {
  nbody::Diagnostics const rest{};
  EXPECT_EQ(nbody::drift(rest, rest).energy, 0);
  EXPECT_EQ(nbody::drift(rest, rest).momentum, 0);
  EXPECT_EQ(nbody::drift(rest, rest).angular_momentum, 0);
  auto moved = rest;
  moved.kinetic_energy = 0.5;
  moved.momentum = {0, 3, 4};
  auto const change = nbody::drift(rest, moved);
  EXPECT_EQ(change.energy, 0.5);
  EXPECT_EQ(change.momentum, 5);
  EXPECT_EQ(change.angular_momentum, 0);
  std::string const text = nbody::describe(change, rest);
  EXPECT_NE(text.find("energy drift +5.000e-01 (absolute"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
}

nbody::Checkpoint small_checkpoint(std::int64_t step) {
  nbody::Checkpoint c;
  c.step = step;
  c.state = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, 16, 1);
  c.state.time = 0.125 * step;
  c.accelerations = decltype(c.accelerations)("test::accelerations", 16, 3);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 3; ++k) c.accelerations(i, k) = std::nextafter(float(i - k), 100.0f);
  c.bins = decltype(c.bins)("test::bins", 16);
  for (int i = 0; i < 16; ++i) c.bins(i) = static_cast<std::int8_t>(i % 4);
  c.initial.kinetic_energy = 0.1 + 1e-17;
  c.initial.potential_energy = -0.3;
  c.initial.angular_momentum = {1, 2, 3};
  c.configuration = configuration(1.0 / 3, 0.7f, 1e-3f, c.state);
  c.configuration.initial_time = 0.25;
  c.configuration.forces.multipole = Multipole::quadrupole;
  c.configuration.forces.opening = Opening::com_offset;
  c.configuration.group_size = 48;
  c.configuration.eta = 0.025;
  c.configuration.max_bin = 3;
  c.backend = "serial";
  return c;
}

TEST(NBodyCheckpoint, RoundTripIsExact) {
  TemporaryDirectory dir;
  auto const written = small_checkpoint(40);
  std::string const path = nbody::checkpoint_path(dir.path.string(), 40);
  EXPECT_EQ(fs::path(path).filename(), "checkpoint_000040.h5");
  nbody::write_checkpoint(path, written);
  auto const read = nbody::read_checkpoint(path);
  EXPECT_EQ(read.step, 40);
  EXPECT_EQ(read.state.time, written.state.time);
  EXPECT_EQ(read.backend, "serial");
  EXPECT_EQ(read.configuration.dt, 1.0 / 3);
  EXPECT_EQ(read.configuration.forces.theta, 0.7f);
  EXPECT_EQ(read.configuration.forces.softening, 1e-3f);
  EXPECT_EQ(read.configuration.initial_time, 0.25);
  EXPECT_EQ(read.configuration.initial_conditions, "test");
  EXPECT_EQ(read.configuration.forces.multipole, Multipole::quadrupole);
  EXPECT_EQ(read.configuration.forces.opening, Opening::com_offset);
  EXPECT_EQ(read.configuration.group_size, 48);
  EXPECT_EQ(read.configuration.eta, 0.025);
  EXPECT_EQ(read.configuration.max_bin, 3);
  EXPECT_EQ(read.initial.kinetic_energy, written.initial.kinetic_energy);
  EXPECT_EQ(read.initial.angular_momentum, written.initial.angular_momentum);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(read.state.ids(i), written.state.ids(i));
    EXPECT_EQ(read.state.masses(i), written.state.masses(i));
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(read.state.coordinates(i, k), written.state.coordinates(i, k));
      EXPECT_EQ(read.state.velocities(i, k), written.state.velocities(i, k));
      EXPECT_EQ(read.accelerations(i, k), written.accelerations(i, k));
    }
    EXPECT_EQ(read.bins(i), written.bins(i));
  }
}

TEST(NBodyCheckpoint, RefitRunsKeepTheirTreePositions) {
  TemporaryDirectory dir;
  auto written = small_checkpoint(8);
  written.configuration.refit = 0.125;
  written.tree_positions = decltype(written.tree_positions)("test::tree_positions", 16, 3);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 3; ++k) written.tree_positions(i, k) = std::nextafter(float(k - i), -100.0f);
  std::string const path = nbody::checkpoint_path(dir.path.string(), 8);
  nbody::write_checkpoint(path, written);
  auto const read = nbody::read_checkpoint(path);
  EXPECT_EQ(read.configuration.refit, 0.125);
  ASSERT_EQ(read.tree_positions.extent(0), 16u);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(read.tree_positions(i, k), written.tree_positions(i, k));
  // Without them, a refitting run could not continue bit for bit: refused.
  written.tree_positions = {};
  nbody::write_checkpoint(path, written);
  try {
    nbody::read_checkpoint(path);
    ADD_FAILURE() << "a refitting run's checkpoint without tree positions was read";
  } catch (InputError const& error) {
    EXPECT_NE(std::string(error.what()).find("TreePositions"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
}

TEST(NBodyCheckpoint, RestartTakesTheNewestReadableOne) {
  TemporaryDirectory dir;
  std::string const d = dir.path.string();
  for (std::int64_t step : {10, 20, 30}) nbody::write_checkpoint(nbody::checkpoint_path(d, step), small_checkpoint(step));
  dir.write("checkpoint_000040.h5", "truncated by a crash");  // not HDF5
  dir.write(".checkpoint_000050.h5.tmp.4242", "half written");
  dir.write(".snapshot_000050.h5.tmp.4242", "half written");
  std::vector<std::string> warnings;
  auto const latest =
      *nbody::read_latest_checkpoint(d, [&](std::string const& w) { warnings.push_back(w); });
  EXPECT_EQ(latest.step, 30);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("checkpoint_000040.h5"), std::string::npos);

  EXPECT_EQ(nbody::remove_abandoned_temporaries(d), 2);
  EXPECT_FALSE(fs::exists(dir.path / ".checkpoint_000050.h5.tmp.4242"));
  nbody::remove_old_checkpoints(d, 2);
  EXPECT_FALSE(fs::exists(nbody::checkpoint_path(d, 10)));
  EXPECT_FALSE(fs::exists(nbody::checkpoint_path(d, 20)));
  EXPECT_TRUE(fs::exists(nbody::checkpoint_path(d, 30)));

  TemporaryDirectory empty;
  EXPECT_FALSE(nbody::read_latest_checkpoint(empty.path.string(), [](std::string const&) {}));
  EXPECT_FALSE(
      nbody::read_latest_checkpoint((empty.path / "absent").string(), [](std::string const&) {}));
}

TEST(NBodyRunDirectory, AFreshRunRefusesAnEarlierRunsFilesAndCreatesNothingWhenChecking) {
  TemporaryDirectory dir;
  std::string const run = (dir.path / "a" / "b").string();
  nbody::check_fresh_directory(run, "-o"); // to be created
  EXPECT_FALSE(fs::exists(dir.path / "a"));
  EXPECT_EQ(nbody::prepare_fresh_directory(run), 0); // creates it
  EXPECT_TRUE(fs::is_directory(run));
  nbody::check_fresh_directory(run, "-o"); // still empty: fine
  // Temporaries of interrupted writes and other files do not make it used.
  std::ofstream(fs::path(run) / ".checkpoint_000000.h5.tmp.123") << "partial";
  std::ofstream(fs::path(run) / "notes.txt") << "mine";
  nbody::check_fresh_directory(run, "-o");
  EXPECT_EQ(nbody::prepare_fresh_directory(run), 1);
  EXPECT_TRUE(fs::exists(fs::path(run) / "notes.txt"));
  nbody::write_checkpoint(nbody::checkpoint_path(run, 0), small_checkpoint(0));
  EXPECT_THROW(nbody::check_fresh_directory(run, "-o"), InputError);
  fs::remove(nbody::checkpoint_path(run, 0));
  io::write_snapshot(nbody::snapshot_path(run, 0), small_checkpoint(0).state);
  EXPECT_THROW(nbody::check_fresh_directory(run, "-o"), InputError);
  // A file where the directory would be, or above it.
  std::ofstream(dir.path / "file") << "x";
  EXPECT_THROW(nbody::check_fresh_directory((dir.path / "file").string(), "-o"), InputError);
  EXPECT_THROW(nbody::check_fresh_directory((dir.path / "file" / "run").string(), "-o"),
               InputError);
}

TEST(NBodyRunDirectory, RunFilesAreRecognisedByName) {
  EXPECT_TRUE(nbody::is_run_file("snapshot_000000.h5"));
  EXPECT_TRUE(nbody::is_run_file("checkpoint_1234567.h5"));
  EXPECT_FALSE(nbody::is_run_file("snapshot_0.h5"));
  EXPECT_FALSE(nbody::is_run_file(".checkpoint_000010.h5.tmp.99"));
  EXPECT_FALSE(nbody::is_run_file("timings.json"));
}

std::string contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  return text;
}

TEST(NBodyProgress, PlainLinesWhenNotATerminal) {
  std::FILE* file = std::tmpfile();
  Progress progress(file, true, 1e-9);
  progress.begin(100, 110);
  progress.update(103, "t = 1.5");
  progress.log("a message");
  progress.finish(110, "t = 2.5");
  std::string const text = contents(file);
  std::fclose(file);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("step 103/110 (30.0%)  t = 1.5  "), std::string::npos) << text;
  EXPECT_NE(text.find("steps/s  ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("\na message\n"), std::string::npos) << text;
  EXPECT_NE(text.find("step 110/110 (100.0%)  t = 2.5"), std::string::npos) << text;

  std::FILE* quiet_file = std::tmpfile();
  Progress quiet(quiet_file, false, 1e-9);
  quiet.begin(0, 10);
  quiet.update(5);
  quiet.log("hidden");
  quiet.finish(10);
  EXPECT_EQ(contents(quiet_file), "");
  std::fclose(quiet_file);

  EXPECT_EQ(format_duration(6.71), "6.7s");
  EXPECT_EQ(format_duration(245), "4m05s");
  EXPECT_EQ(format_duration(3723), "1h02m03s");
}

}  // namespace
