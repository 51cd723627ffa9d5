#pragma once

#include <treetrav/apps/barnes_hut.hpp>

#include <string>

namespace treetrav::nbody {

// Gravitational potential phi_i = -G sum_j m_j / sqrt(r_ij^2 + eps^2) of every
// body (self excluded), summed over the Barnes-Hut walk of the forces
// (BarnesHutWalk): a cell containing the body always opens, so theta = 0 is
// exact direct summation. Terms in float like the forces, each body's sum in double (the
// total energy is compared across snapshots to 1e-6 and better).
template <class MemorySpace>
struct Potential {
  struct state_type {
    double potential;
  };
  Coordinate softening2;
  double gravity;
  Kokkos::View<double*, MemorySpace> potentials;

  KOKKOS_FUNCTION void initialize(state_type& s) const { s.potential = 0; }
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3], Coordinate m) const {
    Coordinate const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
    s.potential -= gravity * m / math::sqrt(double(r2));
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const { potentials(body) = s.potential; }
};

template <class MemorySpace>
using PotentialVisitor = treetrav::detail::BarnesHutWalk<MemorySpace, Potential<MemorySpace>>;

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
  PotentialVisitor<MemorySpace> visitor{
      tree, bodies.coordinates, options.theta * options.theta,
      Potential<MemorySpace>{options.softening * options.softening, options.gravity, potentials}};
  traverse(space, tree.topology, visitor, strategy, order);
  return potentials;
}

}  // namespace treetrav::nbody
