#pragma once

#include <treetrav/apps/barnes_hut.hpp>

#include <string>

namespace treetrav::nbody {

// Gravitational potential phi_i = -G sum_j m_j / sqrt(r_ij^2 + eps^2) of every
// body (self excluded), summed over the Barnes-Hut walk of the forces
// (BarnesHutWalk, any strategy including GroupWalk, monopole or quadrupole
// cells): a cell containing the body always opens, so theta = 0 is exact
// direct summation. Offsets in float like the forces, each term and body's
// sum in double (the total energy is compared across snapshots to 1e-6 and
// better).
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
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3],
                           treetrav::detail::FarField<Multipole::monopole> const& f) const {
    add(s, dx, f.mass);
  }
  // phi = -G [m / r + (dx.Q dx - eps^2 T) / (2 r^5)] (Acceleration's expansion)
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3],
                           treetrav::detail::FarField<Multipole::quadrupole> const& f) const {
    double const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
    double const inv_r = 1 / math::sqrt(r2);
    treetrav::detail::QuadrupoleTerms const t(f.quadrupole, dx);
    s.potential -= gravity * inv_r *
                   (f.mass + 0.5 * (t.dx_q_dx - double(softening2) * f.trace) * inv_r * inv_r * inv_r * inv_r);
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const { potentials(body) = s.potential; }
};

template <class MemorySpace, Multipole Order = Multipole::monopole>
using PotentialVisitor = treetrav::detail::BarnesHutWalk<MemorySpace, Potential<MemorySpace>, Order>;

// Potentials (bodies) in the caller's order of `bodies`, the octree's own bodies.
// `order` as in traverse(): which work item serves which body (GroupWalk:
// which body sits at each tree position); `active_bodies` as in
// compute_barnes_hut_accelerations (empty: every body walks).
template <class ExecutionSpace, class MemorySpace, class Strategy>
Kokkos::View<double*, MemorySpace> gravitational_potentials(ExecutionSpace const& space,
                                                            Octree<MemorySpace> const& tree,
                                                            PointSet<MemorySpace> const& bodies,
                                                            BarnesHutOptions const& options, Strategy strategy,
                                                            Kokkos::View<Index const*, typename Octree<MemorySpace>::memory_space> order = {},
                                                            Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies = {}) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  treetrav::detail::check_barnes_hut_arguments("potential", tree, bodies, options);
  Kokkos::View<double*, MemorySpace> potentials(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Potential::potentials"),
      bodies.size());
  Potential<MemorySpace> const interaction{options.softening * options.softening, options.gravity, potentials};
  auto const run = [&](auto walk) { traverse(space, tree.topology, walk, strategy, order); };
  if (options.multipole == Multipole::quadrupole)
    run(treetrav::detail::make_barnes_hut_walk<Multipole::quadrupole>(space, tree, bodies.coordinates, options,
                                                                      interaction, active_bodies));
  else
    run(treetrav::detail::make_barnes_hut_walk<Multipole::monopole>(space, tree, bodies.coordinates, options,
                                                                    interaction, active_bodies));
  return potentials;
}

}  // namespace treetrav::nbody
