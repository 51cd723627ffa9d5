// Group walks (GroupWalk) and quadrupole moments, per backend: at theta = 0
// the group walk is direct summation; at theta > 0 it equals (to float
// rounding) a per-body walk that applies the same group criterion, summed in
// double by a recursive host oracle; quadrupole forces converge faster than
// monopole forces; subsets of active bodies; the potential over group walks.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/nbody/potential.hpp>
#include <treetrav/trees/octree.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace treetrav;

template <class Space>
class GroupWalkTest : public ::testing::Test {};
TYPED_TEST_SUITE(GroupWalkTest, test::ExecutionSpaces, test::SpaceName);

using HostMasses = Kokkos::View<Coordinate*, Kokkos::HostSpace>;

template <class View>
auto to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

struct Bodies {
  test::HostPoints positions;
  HostMasses masses;
  std::vector<double> masses_double;
};

// Plummer positions with unequal masses (so that centres of mass sit off the
// cells' centres and quadrupoles are not symmetric by accident).
Bodies plummer_bodies(Index n, std::uint64_t seed) {
  Bodies b{test::plummer_positions(n, seed), HostMasses("test::masses", n), {}};
  for (Index i = 0; i < n; ++i) {
    b.masses(i) = Coordinate(0.5 + (i % 7) / 6.0) / n;
    b.masses_double.push_back(b.masses(i));
  }
  return b;
}

// A tight clump far from a wide one, a lone body, and 40 bodies at one point.
Bodies clumped_bodies() {
  auto wide = test::plummer_positions(500, 21);
  Index const n = 500 + 300 + 1 + 40;
  Bodies b{
      allocate_points<Kokkos::HostSpace>("test::clumps", n, 3), HostMasses("test::masses", n), {}};
  for (Index i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      Coordinate const w = wide.coordinates(i % 500, k);
      b.positions.coordinates(i, k) = i < 500    ? w
                                      : i < 800  ? 20 + 1e-3f * w
                                      : i == 800 ? -30.0f
                                                 : 0.25f;
    }
    b.masses(i) = Coordinate(1) / n;
    b.masses_double.push_back(b.masses(i));
  }
  return b;
}

template <class Space>
struct DeviceTree {
  PointSet<typename Space::memory_space> bodies;
  Octree<typename Space::memory_space> tree;
};

template <class Space>
DeviceTree<Space> build(Space const& space, Bodies const& b, int leaf_size) {
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto const masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  return {bodies, build_morton_octree(space, bodies, masses, leaf_size, /*with_quadrupoles=*/true)};
}

template <class Space, class Strategy>
auto accelerations(Space const& space, DeviceTree<Space> const& t, BarnesHutOptions const& options,
                   Strategy strategy) {
  return to_host(barnes_hut_accelerations(space, t.tree, t.bodies, options, strategy,
                                          t.tree.points.original_index));
}

// The group walks host backends can run: the CUDA warp, and emulated warps
// of 32 and 5 lanes with groups up to twice their width.
template <class Space, class F>
void for_each_group_walk(F&& f) {
  for (int group_size : {64, 32, 13, 1})
    f(GroupWalk{group_size});
  if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible)
    for (int group_size : {10, 7, 1})
      f(GroupWalk{group_size, 5});
}

std::string name(GroupWalk const& g) {
  return "group-" + std::to_string(g.group_size) + "-w" + std::to_string(g.warp_size) +
         (g.pack_siblings ? "" : "-unpacked");
}

template <class Host>
double worst_relative_error(Host const& acc, std::vector<double> const& reference) {
  double worst = 0;
  for (std::size_t i = 0; i < acc.extent(0); ++i) {
    double diff = 0, norm = 0;
    for (int k = 0; k < 3; ++k) {
      diff += (acc(i, k) - reference[i * 3 + k]) * (acc(i, k) - reference[i * 3 + k]);
      norm += reference[i * 3 + k] * reference[i * 3 + k];
    }
    worst = std::max(worst, std::sqrt(diff / norm));
  }
  return worst;
}

// sqrt(sum |a - a_ref|^2 / sum |a_ref|^2)
template <class Host>
double rms_relative_error(Host const& acc, std::vector<double> const& reference) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < acc.extent(0); ++i)
    for (int k = 0; k < 3; ++k) {
      error += (acc(i, k) - reference[i * 3 + k]) * (acc(i, k) - reference[i * 3 + k]);
      norm += reference[i * 3 + k] * reference[i * 3 + k];
    }
  return std::sqrt(error / norm);
}

// The oracle of a group walk: every body walks the tree recursively with its
// group's box and the visitor's own group criterion, and sums the same
// interactions in double. Returns (bodies, 3) accelerations and, per body, the
// sum of the terms' magnitudes (the scale of float rounding).
struct GroupOracle {
  std::vector<double> acceleration;
  std::vector<double> magnitude;
};

template <Multipole Order>
GroupOracle group_oracle(Octree<Kokkos::HostSpace> const& tree, test::HostPoints const& positions,
                         BarnesHutOptions const& options, int group_size, bool pack,
                         Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, Kokkos::HostSpace> previous = {}) {
  Kokkos::DefaultHostExecutionSpace host;
  auto const body_view = copy_points(host, positions, "test::bodies").coordinates;
  auto const walk = detail::make_barnes_hut_walk<Order>(
      host, tree, body_view, options, detail::Acceleration<Kokkos::HostSpace>{}, {}, previous);
  auto const& topology = tree.topology;
  double const eps2 = double(options.softening) * options.softening, g = options.gravity;
  Index const n = positions.size();
  GroupOracle out{std::vector<double>(std::size_t(n) * 3, 0.0), std::vector<double>(n, 0.0)};
  auto add = [&](Index body, double const(&dx)[3], double m, Coordinate const* q) {
    double const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + eps2;
    double const inv_r = 1 / std::sqrt(r2), inv_r2 = inv_r * inv_r, inv_r3 = inv_r * inv_r2,
                 inv_r5 = inv_r3 * inv_r2;
    double a[3];
    for (int k = 0; k < 3; ++k)
      a[k] = g * m * inv_r3 * dx[k];
    if (q != nullptr) {
      double const qdx[3] = {q[0] * dx[0] + q[3] * dx[1] + q[4] * dx[2],
                             q[3] * dx[0] + q[1] * dx[1] + q[5] * dx[2],
                             q[4] * dx[0] + q[5] * dx[1] + q[2] * dx[2]};
      double const dqd = dx[0] * qdx[0] + dx[1] * qdx[1] + dx[2] * qdx[2] - eps2 * q[6];
      for (int k = 0; k < 3; ++k)
        a[k] += g * (2.5 * dqd * inv_r5 * inv_r2 * dx[k] - inv_r5 * qdx[k]);
    }
    for (int k = 0; k < 3; ++k)
      out.acceleration[std::size_t(body) * 3 + k] += a[k];
    out.magnitude[body] += std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  };
  auto const& y = tree.points.points.coordinates;
  std::vector<Index> stack;
  // The groups: nodes of at most group_size bodies under a parent of more,
  // runs of such consecutive siblings holding at most group_size together
  // (packed), and runs of group_size bodies of larger leaves.
  // A run of siblings packs only while its bodies' box overlaps no other
  // non-empty sibling's cell.
  auto const clear_of_siblings = [&](Index first, Index last, Index parent) {
    float low[3], high[3];
    for (int k = 0; k < 3; ++k) {
      low[k] = high[k] = y(first, k);
      for (Index i = first; i < last; ++i) low[k] = std::min(low[k], y(i, k)), high[k] = std::max(high[k], y(i, k));
    }
    for (int slot = 0; slot < 8 && topology.child(parent, slot) >= 0; ++slot) {
      Index const child = topology.child(parent, slot);
      Index const begin = topology.point_begin(child), end = topology.point_end(child);
      if (begin == end || (begin >= first && end <= last)) continue;
      bool overlaps = true;
      for (int k = 0; k < 3; ++k) {
        float const half = tree.cell_size(child) / 2, centre = tree.cell_center(child, k);
        overlaps = overlaps && low[k] < centre + half && high[k] > centre - half;
      }
      if (overlaps) return false;
    }
    return true;
  };
  std::vector<std::pair<Index, Index>> groups;
  for (Index node = 0; node < topology.size(); ++node) {
    Index const begin = topology.point_begin(node), end = topology.point_end(node);
    if (end - begin <= group_size) {
      if (node == 0) groups.emplace_back(begin, end);
      continue;
    }
    if (topology.is_leaf(node)) {
      for (Index first = begin; first < end; first += group_size)
        groups.emplace_back(first, std::min(end, first + group_size));
      continue;
    }
    bool extendable = false;  // the last group is a run of this node's children
    for (int slot = 0; slot < 8 && topology.child(node, slot) >= 0; ++slot) {
      Index const child = topology.child(node, slot);
      Index const first = topology.point_begin(child), last = topology.point_end(child);
      if (last - first > group_size) continue;
      if (pack && extendable && groups.back().second == first && last - groups.back().first <= group_size &&
          clear_of_siblings(groups.back().first, last, node)) {
        groups.back().second = last;
      } else {
        groups.emplace_back(first, last);
        extendable = true;
      }
    }
  }
  std::sort(groups.begin(), groups.end());
  for (std::size_t g = 0; g < groups.size(); ++g)
    EXPECT_EQ(groups[g].first, g == 0 ? 0 : groups[g - 1].second); // they cover every body once
  EXPECT_EQ(groups.back().second, n);
  for (auto const& [first, last] : groups) {
    auto const box = walk.group(first, last);
    for (Index position = first; position < last; ++position) {
      Index const body = tree.points.original_index(position);
      stack.assign(1, 0);
      while (!stack.empty()) {
        Index const at = stack.back();
        stack.pop_back();
        if (walk.accept(at, box)) {
          auto const f = walk.node_record(at);
          double const dx[3] = {double(f.com[0] - y(position, 0)),
                                double(f.com[1] - y(position, 1)),
                                double(f.com[2] - y(position, 2))};
          Coordinate q_and_trace[7];
          Coordinate const* q = nullptr;
          if constexpr (Order == Multipole::quadrupole) {
            for (int j = 0; j < 6; ++j)
              q_and_trace[j] = f.quadrupole[j];
            q_and_trace[6] = f.trace;
            q = q_and_trace;
          }
          add(body, dx, f.mass, q);
        } else if (topology.is_leaf(at)) {
          for (Index i = topology.point_begin(at); i < topology.point_end(at); ++i) {
            if (i == position)
              continue;
            double const dx[3] = {double(y(i, 0) - y(position, 0)),
                                  double(y(i, 1) - y(position, 1)),
                                  double(y(i, 2) - y(position, 2))};
            add(body, dx, tree.body_mass(i), nullptr);
          }
        } else {
          for (int slot = 0; slot < 8 && topology.child(at, slot) >= 0; ++slot)
            stack.push_back(topology.child(at, slot));
        }
      }
    }
  }
  return out;
}

TYPED_TEST(GroupWalkTest, ThetaZeroIsDirectSummation) {
  TypeParam space;
  auto const b = plummer_bodies(2000, 31);
  for (int leaf_size : {4, 8}) {
    auto const t = build(space, b, leaf_size);
    for (Coordinate softening : {0.0f, 0.01f}) {
      auto const reference =
          test::direct_accelerations(b.positions, b.masses_double, softening, 1.0);
      for_each_group_walk<TypeParam>([&](GroupWalk strategy) {
        for (Multipole order : {Multipole::monopole, Multipole::quadrupole}) {
          BarnesHutOptions options{0.0f, softening, 1.0f, order};
          EXPECT_LT(worst_relative_error(accelerations(space, t, options, strategy), reference),
                    2e-5)
              << name(strategy) << " leaf " << leaf_size << " " << to_string(order);
        }
      });
    }
  }
}

TYPED_TEST(GroupWalkTest, EqualsPerBodyWalksWithTheGroupCriterion) {
  TypeParam space;
  struct Case {
    std::string name;
    Bodies bodies;
    int leaf_size;
  };
  std::vector<Case> const cases = {{"plummer", plummer_bodies(3000, 32), 8},
                                   {"clumps", clumped_bodies(), 4}};
  for (auto const& c : cases) {
    auto const t = build(space, c.bodies, c.leaf_size);
    auto const host_tree = copy_tree(Kokkos::DefaultHostExecutionSpace{}, t.tree);
    for (Opening opening : {Opening::barnes_hut, Opening::com_offset, Opening::relative})
      for (Multipole order : {Multipole::monopole, Multipole::quadrupole})
        for (Coordinate theta : {0.4f, 0.8f}) {
          BarnesHutOptions options{theta, 0.01f, 1.0f, order, opening};
          options.alpha = theta / 100; // relative: 0.004 and 0.008
          for_each_group_walk<TypeParam>([&](GroupWalk strategy) {
            SCOPED_TRACE(c.name + " " + name(strategy) + " " + to_string(order) + " " +
                         to_string(opening) + " theta " + std::to_string(theta));
            // The relative criterion's walk starts from the estimate that
            // barnes_hut_accelerations makes; the oracle reads the same.
            Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> previous;
            if (opening == Opening::relative)
              previous = accelerations(space, t, relative_estimate_options(options), strategy);
            auto const oracle =
                order == Multipole::quadrupole
                    ? group_oracle<Multipole::quadrupole>(host_tree, c.bodies.positions, options,
                                                          strategy.group_size, strategy.pack_siblings, previous)
                    : group_oracle<Multipole::monopole>(host_tree, c.bodies.positions, options, strategy.group_size,
                                                        strategy.pack_siblings, previous);
            auto const acc = accelerations(space, t, options, strategy);
            int worse = 0;
            for (Index i = 0; i < c.bodies.positions.size(); ++i) {
              double diff = 0;
              for (int k = 0; k < 3; ++k) {
                double const d = acc(i, k) - oracle.acceleration[std::size_t(i) * 3 + k];
                diff += d * d;
              }
              // Float rounding of the terms, however they cancel.
              worse += std::sqrt(diff) > 2e-6 * oracle.magnitude[i];
            }
            EXPECT_EQ(worse, 0);
          });
        }
  }
}

TYPED_TEST(GroupWalkTest, AsAccurateAsPerBodyWalks) {
  // A group opens at least what each of its bodies would: never less accurate.
  TypeParam space;
  auto const b = plummer_bodies(5000, 33);
  auto const t = build(space, b, 8);
  auto const reference = test::direct_accelerations(b.positions, b.masses_double, 0.01, 1.0);
  for (Opening opening : {Opening::barnes_hut, Opening::com_offset, Opening::relative})
    for (Multipole order : {Multipole::monopole, Multipole::quadrupole}) {
      BarnesHutOptions options{0.6f, 0.01f, 1.0f, order, opening};
      options.alpha = 0.005f;
      double const per_body =
          rms_relative_error(accelerations(space, t, options, Autoropes{}), reference);
      double const group =
          rms_relative_error(accelerations(space, t, options, GroupWalk{}), reference);
      EXPECT_LT(group, per_body * 1.01) << to_string(order) << " " << to_string(opening);
      EXPECT_LT(per_body, 2e-2) << to_string(order) << " " << to_string(opening);
    }
}

TYPED_TEST(GroupWalkTest, QuadrupolesConvergeFasterThanMonopoles) {
  // Errors at theta = 0.8, 0.4, 0.2 against direct summation; the measured
  // order is the slope of log(error) over log(theta): about 2 for monopoles
  // and 3 for quadrupoles (the next term of the expansion).
  TypeParam space;
  auto const b = plummer_bodies(8000, 34);
  auto const t = build(space, b, 8);
  auto const reference = test::direct_accelerations(b.positions, b.masses_double, 0.01, 1.0);
  std::vector<Coordinate> const thetas = {0.8f, 0.4f, 0.2f};
  for (Opening opening : {Opening::barnes_hut, Opening::com_offset}) {
    std::vector<double> errors[2];
    for (Multipole order : {Multipole::monopole, Multipole::quadrupole})
      for (Coordinate theta : thetas)
        errors[int(order)].push_back(rms_relative_error(
            accelerations(space, t, {theta, 0.01f, 1.0f, order, opening}, Autoropes{}), reference));
    auto slope = [&](std::vector<double> const& e) {
      return std::log(e.front() / e.back()) / std::log(double(thetas.front()) / thetas.back());
    };
    double const monopole_order = slope(errors[0]), quadrupole_order = slope(errors[1]);
    for (std::size_t i = 0; i < thetas.size(); ++i)
      EXPECT_LT(errors[1][i], errors[0][i]) << to_string(opening) << " theta " << thetas[i];
    EXPECT_GT(monopole_order, 1.5) << to_string(opening);
    EXPECT_GT(quadrupole_order, monopole_order + 0.5)
        << to_string(opening) << " monopole " << monopole_order;
    // The same orders through group walks.
    std::vector<double> group_errors;
    for (Coordinate theta : {thetas.front(), thetas.back()})
      group_errors.push_back(rms_relative_error(
          accelerations(space, t, {theta, 0.01f, 1.0f, Multipole::quadrupole, opening},
                        GroupWalk{}),
          reference));
    EXPECT_GT(slope(group_errors), monopole_order + 0.5) << to_string(opening);
  }
}

TYPED_TEST(GroupWalkTest, ActiveBodiesOnly) {
  // Every third body active: the others' rows stay untouched and the active
  // ones get exactly what a walk of all bodies gives them.
  TypeParam space;
  using Memory = typename TypeParam::memory_space;
  auto const b = plummer_bodies(3000, 35);
  auto const t = build(space, b, 8);
  Index const n = b.positions.size();
  BarnesHutOptions const options{0.5f, 0.01f, 1.0f, Multipole::quadrupole, Opening::com_offset};
  Kokkos::View<std::uint8_t*, Kokkos::HostSpace> active("test::active", n);
  for (Index i = 0; i < n; ++i)
    active(i) = i % 3 == 0;
  auto const device_active = Kokkos::create_mirror_view_and_copy(space, active);
  // The per-body strategies take the active bodies as their work items.
  auto const original = to_host(t.tree.points.original_index);
  std::vector<Index> listed;
  for (Index position = 0; position < n; ++position)
    if (active(original(position)))
      listed.push_back(original(position));
  Kokkos::View<Index*, Kokkos::HostSpace> host_list("test::list", listed.size());
  std::copy(listed.begin(), listed.end(), host_list.data());
  auto const list = Kokkos::create_mirror_view_and_copy(space, host_list);

  auto check = [&](auto strategy, Kokkos::View<Index const*, Memory> order,
                   std::string const& label) {
    auto const full = accelerations(space, t, options, strategy);
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> partial("test::partial", n, 3);
    Kokkos::deep_copy(partial, Coordinate(-7));
    compute_barnes_hut_accelerations(space, t.tree, t.bodies, options, strategy, partial, order,
                                     device_active);
    auto const host = to_host(partial);
    int wrong = 0;
    for (Index i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k)
        wrong += host(i, k) != (active(i) ? full(i, k) : Coordinate(-7));
    EXPECT_EQ(wrong, 0) << label;
  };
  check(GroupWalk{}, t.tree.points.original_index, "group");
  check(Autoropes{}, list, "autoropes");
  check(FsmLockstep{}, list, "fsm");
}

TYPED_TEST(GroupWalkTest, PotentialsOverGroupWalks) {
  TypeParam space;
  auto const b = plummer_bodies(1500, 36);
  auto const t = build(space, b, 8);
  Index const n = b.positions.size();
  double const softening = 0.02;
  std::vector<double> reference(n, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      if (i == j)
        continue;
      double r2 = softening * softening;
      for (int k = 0; k < 3; ++k) {
        double const dx = double(b.positions.coordinates(j, k)) - b.positions.coordinates(i, k);
        r2 += dx * dx;
      }
      reference[i] -= b.masses_double[j] / std::sqrt(r2);
    }
  auto potentials = [&](Coordinate theta, Multipole order, auto strategy) {
    return to_host(nbody::gravitational_potentials(
        space, t.tree, t.bodies, {theta, Coordinate(softening), 1.0f, order, Opening::com_offset},
        strategy, t.tree.points.original_index));
  };
  for (Multipole order : {Multipole::monopole, Multipole::quadrupole}) {
    auto const exact = potentials(0.0f, order, GroupWalk{});
    auto const group = potentials(0.5f, order, GroupWalk{});
    auto const per_body = potentials(0.5f, order, Autoropes{});
    double worst_exact = 0, mean_group = 0, mean_per_body = 0;
    for (Index i = 0; i < n; ++i) {
      worst_exact = std::max(worst_exact, std::abs(exact(i) / reference[i] - 1));
      mean_group += std::abs(group(i) / reference[i] - 1) / n;
      mean_per_body += std::abs(per_body(i) / reference[i] - 1) / n;
    }
    EXPECT_LT(worst_exact, 1e-6) << to_string(order);
    EXPECT_GT(mean_group, 0) << to_string(order);
    EXPECT_LT(mean_group, mean_per_body * 1.01) << to_string(order);
  }
}

TYPED_TEST(GroupWalkTest, QuadrupoleMomentsAreExact) {
  // Against a double sum over each cell's bodies about its centre of mass.
  TypeParam space;
  auto const b = clumped_bodies();
  auto const t = build(space, b, 4);
  auto const tree = copy_tree(Kokkos::DefaultHostExecutionSpace{}, t.tree);
  auto const& y = tree.points.points.coordinates;
  double worst = 0;
  for (Index node = 0; node < tree.topology.size(); ++node) {
    // Identical bodies leave only rounding: measure against the cell's scale too.
    double s[7] = {0, 0, 0, 0, 0, 0, 0},
           scale = double(tree.mass(node)) * tree.cell_size(node) * tree.cell_size(node);
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      double d[3];
      for (int k = 0; k < 3; ++k)
        d[k] = double(y(i, k)) - tree.center_of_mass(node, k);
      double const m = tree.body_mass(i);
      double const d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      for (int k = 0; k < 3; ++k)
        s[k] += m * (3 * d[k] * d[k] - d2);
      s[3] += 3 * m * d[0] * d[1];
      s[4] += 3 * m * d[0] * d[2];
      s[5] += 3 * m * d[1] * d[2];
      s[6] += m * d2;
      scale += 3 * m * d2;
    }
    for (int j = 0; j < 7; ++j)
      worst = std::max(worst, std::abs(tree.quadrupole(node, j) - s[j]) / scale);
  }
  EXPECT_LT(worst, 1e-6);
}

TYPED_TEST(GroupWalkTest, BadArguments) {
  TypeParam space;
  auto const b = plummer_bodies(100, 37);
  auto const t = build(space, b, 8);
  BarnesHutOptions const options{0.5f, 0.01f, 1.0f};
  EXPECT_THROW(accelerations(space, t, options, GroupWalk{65}), std::invalid_argument);
  EXPECT_THROW(accelerations(space, t, options, GroupWalk{0}), std::invalid_argument);
  // The group walk's order maps every tree position: a subset is refused.
  auto const partial = Kokkos::subview(t.tree.points.original_index, std::make_pair(0, 50));
  EXPECT_THROW(barnes_hut_accelerations(space, t.tree, t.bodies, options, GroupWalk{}, partial),
               std::invalid_argument);
  // Quadrupoles need the tree's moments.
  auto plain =
      build_morton_octree(space, t.bodies, Kokkos::create_mirror_view_and_copy(space, b.masses), 8);
  BarnesHutOptions quadrupole = options;
  quadrupole.multipole = Multipole::quadrupole;
  EXPECT_THROW(barnes_hut_accelerations(space, plain, t.bodies, quadrupole, GroupWalk{}),
               InputError);
  EXPECT_THROW(parse_multipole("octupole"), InputError);
  EXPECT_THROW(parse_opening("gadget"), InputError);
}

// A cell's softened pull as monopole, quadrupole and trace is the
// second-order expansion of its bodies' softened pulls: halving the cell
// shrinks the error eightfold (third order). Without the trace term a cell a
// softening length away errs at second order (fourfold).
TEST(SoftenedQuadrupole, IsAThirdOrderExpansion) {
  double const eps = 0.1, distance = 0.2;
  std::vector<std::array<double, 4>> clump; // offset from the centre in a unit ball, mass
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  while (clump.size() < 20) {
    std::array<double, 4> b{uniform(random), uniform(random), uniform(random), 1 + uniform(random) / 2};
    if (b[0] * b[0] + b[1] * b[1] + b[2] * b[2] <= 1) clump.push_back(b);
  }
  auto error_at = [&](double size) {
    double mass = 0, c[3] = {0, 0, 0};
    for (auto const& b : clump) {
      mass += b[3];
      for (int k = 0; k < 3; ++k) c[k] += b[3] * size * b[k];
    }
    for (int k = 0; k < 3; ++k) c[k] /= mass;
    detail::FarField<Multipole::quadrupole> f{};
    double exact[3] = {0, 0, 0}, trace = 0, q[6] = {0, 0, 0, 0, 0, 0};
    double const body[3] = {c[0] + distance, c[1] + 0.3 * distance, c[2] - 0.2 * distance};
    for (auto const& b : clump) {
      double d[3], dx[3];
      for (int k = 0; k < 3; ++k) {
        d[k] = size * b[k] - c[k];
        dx[k] = size * b[k] - body[k];
      }
      double const d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      for (int k = 0; k < 3; ++k) q[k] += b[3] * (3 * d[k] * d[k] - d2);
      q[3] += 3 * b[3] * d[0] * d[1];
      q[4] += 3 * b[3] * d[0] * d[2];
      q[5] += 3 * b[3] * d[1] * d[2];
      trace += b[3] * d2;
      double const s2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + eps * eps;
      for (int k = 0; k < 3; ++k) exact[k] += b[3] * dx[k] / (s2 * std::sqrt(s2));
    }
    f.mass = static_cast<Coordinate>(mass);
    for (int j = 0; j < 6; ++j) f.quadrupole[j] = static_cast<Coordinate>(q[j]);
    f.trace = static_cast<Coordinate>(trace);
    // Float throughout the interaction: the body sits at the origin, the cell at c - body.
    Coordinate const dx[3] = {Coordinate(c[0] - body[0]), Coordinate(c[1] - body[1]), Coordinate(c[2] - body[2])};
    detail::Acceleration<Kokkos::HostSpace> const pull{Coordinate(eps * eps), 1.0f, {}};
    detail::Acceleration<Kokkos::HostSpace>::state_type state;
    pull.initialize(state);
    pull.add(state, dx, f);
    double error = 0, norm = 0;
    for (int k = 0; k < 3; ++k) {
      error += (state.acceleration[k] - exact[k]) * (state.acceleration[k] - exact[k]);
      norm += exact[k] * exact[k];
    }
    return std::sqrt(error / norm);
  };
  double const coarse = error_at(0.08), fine = error_at(0.04);
  EXPECT_LT(coarse, 1e-2);
  EXPECT_GT(coarse / fine, 6) << coarse << " " << fine;
}

} // namespace
