#pragma once

#include <treetrav/apps/barnes_hut.hpp>

#include <string>

namespace treetrav::nbody {

// Gravitational potential phi_i = -G sum_j m_j / sqrt(r_ij^2 + eps^2) of every
// body (self excluded), by a Barnes-Hut walk with BarnesHutVisitor's opening
// rule: a cell containing the body always opens, so theta = 0 is exact direct
// summation. Terms in float like the forces, each body's sum in double (the
// total energy is compared across snapshots to 1e-6 and better).
template <class MemorySpace>
struct PotentialVisitor {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "PotentialVisitor needs a Kokkos memory space");
  using memory_space = MemorySpace;
  struct state_type {
    double potential;
  };
  static constexpr bool guided = false;

  Octree<MemorySpace> tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> bodies;
  Coordinate theta2;
  Coordinate softening2;
  double gravity;
  Kokkos::View<double*, MemorySpace> potentials;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(bodies.extent(0)); }
  KOKKOS_FUNCTION void initialize(Index, state_type& s) const { s.potential = 0; }

  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3], Coordinate m) const {
    Coordinate const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
    s.potential -= gravity * m / math::sqrt(double(r2));
  }

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
      add(s, dx, tree.mass(node));
      return false;
    }
    if (!tree.topology.is_leaf(node)) return true;
    auto const& x = tree.points.points.coordinates;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      if (tree.points.original_index(i) == body) continue;
      Coordinate const dxi[3] = {x(i, 0) - bodies(body, 0), x(i, 1) - bodies(body, 1), x(i, 2) - bodies(body, 2)};
      add(s, dxi, tree.body_mass(i));
    }
    return false;
  }

  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const { potentials(body) = s.potential; }
};

// Potentials (bodies) in the caller's order of `bodies`, the octree's own bodies.
// `order` as in traverse(): which work item serves which body.
template <class ExecutionSpace, class MemorySpace, class Strategy>
Kokkos::View<double*, MemorySpace> gravitational_potentials(ExecutionSpace const& space,
                                                            Octree<MemorySpace> const& tree,
                                                            PointSet<MemorySpace> const& bodies,
                                                            BarnesHutOptions const& options, Strategy strategy,
                                                            Kokkos::View<Index const*, typename Octree<MemorySpace>::memory_space> order = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  if (!(options.theta >= 0) || !(options.softening >= 0))
    throw InputError("potential: theta and softening must be >= 0");
  if (bodies.size() != tree.points.size() || bodies.dimension() != 3)
    throw InputError("potential: the bodies must be the octree's own 3-D bodies");
  Kokkos::View<double*, MemorySpace> potentials(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Potential::potentials"),
      bodies.size());
  PotentialVisitor<MemorySpace> visitor{tree,
                                        bodies.coordinates,
                                        options.theta * options.theta,
                                        options.softening * options.softening,
                                        options.gravity,
                                        potentials};
  traverse(space, tree.topology, visitor, strategy, order);
  return potentials;
}

}  // namespace treetrav::nbody
