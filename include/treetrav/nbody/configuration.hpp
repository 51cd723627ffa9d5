#pragma once

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/io/metadata.hpp>

#include <cstdint>
#include <string>

namespace treetrav::nbody {

// What a trajectory is a function of (with the binary and the backend): a
// checkpoint stores it, and a restart continues only under the same values.
struct Configuration {
  double dt = 0;                   // time step of the leapfrog (block steps: the largest)
  BarnesHutOptions forces;         // theta, softening, G, multipole order, opening criterion
  int leaf_size = 8;               // octree leaf capacity
  // 0: a new octree every force evaluation. Above 0: the octree is refitted
  // to the moved bodies (refit_octree) while its growth, the cells' mean
  // (side / built side)^3 - 1, stays at or below this; then built anew.
  double refit = 0;
  Coordinate potential_theta = 0;  // opening angle of the potential diagnostic; 0: exact
  int group_size = 0;              // group walks (GroupWalk) of this many bodies; 0: per-body walks
  // Block (power-of-two) time steps when eta > 0: body i steps by the largest
  // dt / 2^k (k <= max_bin) not above eta sqrt(softening / |a_i|).
  double eta = 0;
  int max_bin = 0;
  std::string initial_conditions;  // where the bodies came from, e.g. "plummer n=1000 seed=7"
  double initial_time = 0;         // the initial conditions' time; step s is at initial_time + s dt
  std::int64_t bodies = 0;

  double time_at(std::int64_t step) const { return initial_time + static_cast<double>(step) * dt; }
  bool block_steps() const { return eta > 0; }
  // The potential diagnostic's options: the forces' softening and G. The
  // relative criterion's forces have the diagnostic use com-offset: a
  // potential has no previous acceleration to be relative to.
  BarnesHutOptions potential_options() const {
    return {potential_theta, forces.softening, forces.gravity, forces.multipole,
            forces.opening == Opening::relative ? Opening::com_offset : forces.opening};
  }
};

// As attributes: dt, theta, softening, gravity, multipole, opening, alpha, leaf_size,
// refit, potential_theta, group_size, eta, max_bin, initial_conditions,
// initial_time, bodies.
io::Metadata to_metadata(Configuration const& configuration);
// Throws InputError naming `source` and the missing or malformed attribute.
Configuration configuration_from_metadata(io::Metadata const& metadata, std::string const& source);

}  // namespace treetrav::nbody
