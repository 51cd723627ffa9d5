#pragma once

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/nbody/configuration.hpp>
#include <treetrav/nbody/morton_octree.hpp>
#include <treetrav/nbody/potential.hpp>

#include <fmt/core.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace treetrav::nbody {

// Seconds spent per phase, summed over the run; every timer stops after a
// fence, so device work is charged to the phase that launched it.
struct PhaseTimes {
  double tree_build = 0;      // Morton codes, sort, hierarchy, bodies in tree order
  double center_of_mass = 0;  // cell masses and centres of mass
  double forces = 0;          // barnes_hut_accelerations
  double integration = 0;     // kicks and drifts
  double diagnostics = 0;     // potentials for the snapshots
  double io = 0;              // device-to-host copies and snapshot/checkpoint writes
  std::int64_t force_evaluations = 0;
};

namespace detail {

// False for NaN and +-infinity (without <cmath>, which device code may lack).
KOKKOS_INLINE_FUNCTION bool is_finite(double value) { return value - value == 0; }

// bodies = float(positions); returns how many bodies do not fit a float.
template <class ExecutionSpace, class Positions, class Bodies>
Index cast_positions(ExecutionSpace const& space, Positions const& positions, Bodies const& bodies) {
  Index non_finite = 0;
  Kokkos::parallel_reduce(
      "treetrav::nbody::Simulation::cast_positions",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, positions.extent(0)), KOKKOS_LAMBDA(Index i, Index & count) {
        bool finite = true;
        for (int k = 0; k < 3; ++k) {
          bodies(i, k) = static_cast<Coordinate>(positions(i, k));
          finite = finite && is_finite(bodies(i, k));
        }
        count += finite ? 0 : 1;
      },
      non_finite);
  return non_finite;
}

}  // namespace detail

// The state of an N-body system on an execution space, advanced by
// kick-drift-kick leapfrog with a fixed dt: positions and velocities in
// double; the tree and the forces in float (positions cast every step), as
// barnes_hut_accelerations takes and returns them.
//
// Every operation is a pure function of the state: the octree is rebuilt from
// the positions alone, each body's forces are summed in tree order, and the
// kicks and drifts are element-wise, so a run resumed from a checkpoint of
// (positions, velocities, accelerations) continues bit-for-bit.
template <class ExecutionSpace, class Strategy>
class Simulation {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "a Kokkos execution space");

 public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Vectors = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  using Accelerations = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space>;
  using HostAccelerations = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

  // The system `state` (positions, velocities, masses, ids; its time is
  // ignored: step s is at configuration.time_at(s)) at step `step`. Before the
  // first step, compute_accelerations() or set_accelerations().
  Simulation(ExecutionSpace const& space, Strategy strategy, Configuration const& configuration,
             io::Snapshot const& state, std::int64_t step);

  // Rebuilds the octree over the current positions and evaluates the forces.
  void compute_accelerations();
  // The accelerations of the current state, from a checkpoint.
  void set_accelerations(HostAccelerations const& accelerations);
  // One kick-drift-kick step. Throws InputError if a body's position or
  // velocity stops being finite (nothing of that step is kept).
  void step();

  std::int64_t current_step() const { return step_; }
  double time() const { return configuration_.time_at(step_); }
  Index size() const { return bodies_.size(); }
  PhaseTimes& times() { return times_; }

  // Copies of the current state on the host, with each body's potential when
  // asked (computed over the octree of the last force evaluation).
  io::Snapshot state(bool with_potentials);
  HostAccelerations host_accelerations();

 private:
  // Throws InputError unless 1 <= bodies <= the largest Index.
  static Index body_count(io::Snapshot const& state) {
    if (state.size() < 1 || state.size() > static_cast<std::size_t>(std::numeric_limits<Index>::max()))
      throw InputError(fmt::format("nbody: {} bodies; need 1 to {}", state.size(), std::numeric_limits<Index>::max()));
    return static_cast<Index>(state.size());
  }
  void check_finite(Index non_finite, char const* what) const;
  Kokkos::View<Index const*, memory_space> tree_order() const { return tree_.points.original_index; }
  // Never an alias (the state moves on); uninitialised, so that a Serial run
  // starts no OpenMP work.
  template <class View>
  typename View::HostMirror host_copy(View const& view) const;

  ExecutionSpace space_;
  Strategy strategy_;
  Configuration configuration_;
  std::int64_t step_;
  Vectors positions_;
  Vectors velocities_;
  PointSet<memory_space> bodies_;                  // float positions: the tree's and traversal's bodies
  Kokkos::View<Coordinate*, memory_space> masses_;  // float, for the tree
  Kokkos::View<double*, Kokkos::HostSpace> host_masses_;
  Kokkos::View<ParticleId*, Kokkos::HostSpace> host_ids_;
  Accelerations accelerations_;
  Octree<memory_space> tree_;  // of the last force evaluation
  PhaseTimes times_;
};

template <class ExecutionSpace, class Strategy>
Simulation<ExecutionSpace, Strategy>::Simulation(ExecutionSpace const& space, Strategy strategy,
                                                 Configuration const& configuration, io::Snapshot const& state,
                                                 std::int64_t step)
    : space_(space),
      strategy_(strategy),
      configuration_(configuration),
      step_(step),
      positions_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::positions"),
                 body_count(state), 3),
      velocities_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::velocities"),
                  state.size(), 3),
      bodies_(allocate_points<memory_space>("treetrav::nbody::Simulation::bodies", body_count(state), 3)),
      host_masses_(host_copy(state.masses)),
      host_ids_(host_copy(state.ids)) {
  Kokkos::deep_copy(space_, positions_, state.coordinates);
  Kokkos::deep_copy(space_, velocities_, state.velocities);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::masses"), state.size());
  for (std::size_t i = 0; i < state.size(); ++i) masses(i) = static_cast<Coordinate>(state.masses(i));
  masses_ = Kokkos::create_mirror_view_and_copy(space_, masses);
  Index const non_finite = detail::cast_positions(space_, positions_, bodies_.coordinates);
  if (non_finite > 0)
    throw InputError(fmt::format("nbody: {} bodies lie outside the float range of the tree", non_finite));
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::compute_accelerations() {
  Kokkos::Timer timer;
  auto built = build_morton_octree_cells(space_, bodies_, masses_, configuration_.leaf_size);
  space_.fence();
  times_.tree_build += timer.seconds();
  timer.reset();
  compute_octree_moments(space_, built);
  tree_ = built.tree;
  space_.fence();
  times_.center_of_mass += timer.seconds();
  timer.reset();
  // Bodies in tree (Morton) order: neighbouring work items walk similar paths.
  accelerations_ =
      barnes_hut_accelerations(space_, tree_, bodies_, configuration_.forces, strategy_, tree_order());
  space_.fence();
  times_.forces += timer.seconds();
  ++times_.force_evaluations;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::set_accelerations(HostAccelerations const& accelerations) {
  if (accelerations.extent(0) != static_cast<std::size_t>(size()) || accelerations.extent(1) != 3)
    throw std::invalid_argument("nbody: accelerations and bodies differ in shape");
  accelerations_ = Kokkos::create_mirror_view_and_copy(space_, accelerations);
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::step() {
  if (accelerations_.extent(0) != static_cast<std::size_t>(size()))
    throw std::logic_error("nbody: step() before the accelerations of the state are known");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  double const dt = configuration_.dt, half_dt = dt / 2;
  auto const x = positions_;
  auto const v = velocities_;
  auto const bodies = bodies_.coordinates;
  Kokkos::Timer timer;
  {
    auto const a = accelerations_;
    Index non_finite = 0;
    Kokkos::parallel_reduce(
        "treetrav::nbody::Simulation::kick_drift", Policy(space_, 0, size()),
        KOKKOS_LAMBDA(Index i, Index & count) {
          bool finite = true;
          for (int k = 0; k < 3; ++k) {
            v(i, k) += half_dt * a(i, k);
            x(i, k) += dt * v(i, k);
            bodies(i, k) = static_cast<Coordinate>(x(i, k));
            finite = finite && detail::is_finite(bodies(i, k));
          }
          count += finite ? 0 : 1;
        },
        non_finite);
    times_.integration += timer.seconds();
    check_finite(non_finite, "position (or one beyond the float range)");
  }
  compute_accelerations();
  timer.reset();
  {
    auto const a = accelerations_;
    Index non_finite = 0;
    Kokkos::parallel_reduce(
        "treetrav::nbody::Simulation::kick", Policy(space_, 0, size()),
        KOKKOS_LAMBDA(Index i, Index & count) {
          bool finite = true;
          for (int k = 0; k < 3; ++k) {
            v(i, k) += half_dt * a(i, k);
            finite = finite && detail::is_finite(v(i, k));
          }
          count += finite ? 0 : 1;
        },
        non_finite);
    times_.integration += timer.seconds();
    check_finite(non_finite, "acceleration or velocity");
  }
  ++step_;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::check_finite(Index non_finite, char const* what) const {
  if (non_finite > 0)
    throw InputError(fmt::format(
        "step {} (t = {:g}): {} of {} bodies got a non-finite {}; the integration diverged (--dt too large "
        "for --softening {:g}, or bodies at one point without softening); nothing of this step was written",
        step_ + 1, configuration_.time_at(step_ + 1), non_finite, size(), what, configuration_.forces.softening));
}

template <class ExecutionSpace, class Strategy>
template <class View>
typename View::HostMirror Simulation<ExecutionSpace, Strategy>::host_copy(View const& view) const {
  typename View::HostMirror copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, view.label()), view.layout());
  Kokkos::deep_copy(space_, copy, view);
  return copy;
}

template <class ExecutionSpace, class Strategy>
io::Snapshot Simulation<ExecutionSpace, Strategy>::state(bool with_potentials) {
  io::Snapshot snapshot;
  if (with_potentials) {
    if (tree_.topology.size() == 0) throw std::logic_error("nbody: potentials before any force evaluation");
    Kokkos::Timer timer;
    auto const potentials = gravitational_potentials(space_, tree_, bodies_, configuration_.potential_options(),
                                                     strategy_, tree_order());
    space_.fence();
    times_.diagnostics += timer.seconds();
    timer.reset();
    snapshot.potentials = host_copy(potentials);
    space_.fence();
    times_.io += timer.seconds();
  }
  Kokkos::Timer timer;
  snapshot.time = time();
  snapshot.coordinates = host_copy(positions_);
  snapshot.velocities = host_copy(velocities_);
  snapshot.masses = host_copy(host_masses_);
  snapshot.ids = host_copy(host_ids_);
  space_.fence();
  times_.io += timer.seconds();
  return snapshot;
}

template <class ExecutionSpace, class Strategy>
typename Simulation<ExecutionSpace, Strategy>::HostAccelerations
Simulation<ExecutionSpace, Strategy>::host_accelerations() {
  Kokkos::Timer timer;
  HostAccelerations const host = host_copy(accelerations_);
  space_.fence();
  times_.io += timer.seconds();
  return host;
}

}  // namespace treetrav::nbody
