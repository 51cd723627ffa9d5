#pragma once

#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/traverse.hpp>
#include <treetrav/trees/octree.hpp>

#include <cmath>
#include <string>

namespace treetrav {

struct BarnesHutOptions {
  Coordinate theta = 0.5f;     // opening angle: a cell of side s at distance d is
                               // used whole when s < theta * d
  Coordinate softening = 0.0f; // Plummer softening length epsilon
  Coordinate gravity = 1.0f;   // G
};

namespace detail {

// The Barnes-Hut walk, shared by every quantity summed over it: which cells a
// body takes whole (centre of mass) and which bodies one by one. The queries
// are the bodies, in the caller's order. Unguided. A cell that contains the
// body is always opened, so a body never feels itself through a cell's centre
// of mass; at theta = 0 every cell opens and the sum is direct summation.
// `Interaction` says what a pull of mass m at offset dx adds to the body's
// state (initialize, add, finalize).
template <class MemorySpace, class Interaction>
struct BarnesHutWalk {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "BarnesHutWalk needs a Kokkos memory space");
  using memory_space = MemorySpace;
  using state_type = typename Interaction::state_type;
  static constexpr bool guided = false;

  Octree<MemorySpace> tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> bodies;
  Coordinate theta2;
  Interaction interaction;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(bodies.extent(0)); }
  KOKKOS_FUNCTION void initialize(Index, state_type& s) const { interaction.initialize(s); }

  KOKKOS_FUNCTION bool visit(Index node, Index body, state_type& s) const {
    Coordinate const dx[3] = {tree.center_of_mass(node, 0) - bodies(body, 0),
                              tree.center_of_mass(node, 1) - bodies(body, 1),
                              tree.center_of_mass(node, 2) - bodies(body, 2)};
    Coordinate const d2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
    Coordinate const size = tree.cell_size(node);
    bool inside = true;
    for (int k = 0; k < 3; ++k) {
      Coordinate const offset = bodies(body, k) - tree.cell_center(node, k);
      inside = inside && offset <= size / 2 && -offset <= size / 2;
    }
    if (!inside && size * size < theta2 * d2) {
      interaction.add(s, dx, tree.mass(node));
      return false;
    }
    if (!tree.topology.is_leaf(node))
      return true;
    auto const& x = tree.points.points.coordinates;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      if (tree.points.original_index(i) == body)
        continue;
      Coordinate const dxi[3] = {x(i, 0) - bodies(body, 0), x(i, 1) - bodies(body, 1),
                                 x(i, 2) - bodies(body, 2)};
      interaction.add(s, dxi, tree.body_mass(i));
    }
    return false;
  }

  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const {
    interaction.finalize(body, s);
  }
};

// Gravitational acceleration, Plummer-softened, summed in float.
template <class MemorySpace>
struct Acceleration {
  struct state_type {
    Coordinate acceleration[3];
  };
  Coordinate softening2;
  Coordinate gravity;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations;

  KOKKOS_FUNCTION void initialize(state_type& s) const {
    for (int k = 0; k < 3; ++k)
      s.acceleration[k] = 0;
  }
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3], Coordinate m) const {
    Coordinate const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
    Coordinate const inv_r = 1 / math::sqrt(r2);
    Coordinate const factor = gravity * m * inv_r * inv_r * inv_r;
    for (int k = 0; k < 3; ++k)
      s.acceleration[k] += factor * dx[k];
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const {
    for (int k = 0; k < 3; ++k)
      accelerations(body, k) = s.acceleration[k];
  }
};

} // namespace detail

// Barnes-Hut gravitational acceleration of every body.
template <class MemorySpace>
using BarnesHutVisitor = detail::BarnesHutWalk<MemorySpace, detail::Acceleration<MemorySpace>>;

// Accelerations (bodies, 3) of the bodies the octree was built over, given in
// the caller's order in `bodies`.
template <class ExecutionSpace, class MemorySpace, class Strategy>
Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace>
barnes_hut_accelerations(ExecutionSpace const& space, Octree<MemorySpace> const& tree,
                         PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options,
                         Strategy strategy, Kokkos::View<Index const*, MemorySpace> order = {},
                         TraversalMetrics<MemorySpace> const& metrics = {}) {
  if (!(options.theta >= 0) || !std::isfinite(options.theta))
    throw InputError("--theta must be >= 0 (got " + std::to_string(options.theta) + ")");
  if (!(options.softening >= 0) || !std::isfinite(options.softening))
    throw InputError("--softening must be >= 0 (got " + std::to_string(options.softening) + ")");
  if (bodies.size() != tree.points.size() || bodies.dimension() != 3)
    throw InputError("Barnes-Hut: the bodies must be the octree's own 3-D bodies");
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BarnesHut::accelerations"),
      bodies.size(), 3);
  BarnesHutVisitor<MemorySpace> visitor{
      tree, bodies.coordinates, options.theta * options.theta,
      detail::Acceleration<MemorySpace>{options.softening * options.softening, options.gravity,
                                        accelerations}};
  traverse(space, tree.topology, visitor, strategy, order, metrics);
  return accelerations;
}

} // namespace treetrav
