#pragma once

#include <treetrav/core/point_set.hpp>
#include <treetrav/io/snapshot.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace treetrav::generators {

using HostPointSet = PointSet<Kokkos::HostSpace>;

// All generators are deterministic functions of their arguments (the seed
// included), independent of the number of host threads: each point draws from
// its own counter-based random stream.

// Every generator takes a host execution space first and fills in parallel
// there; the result does not depend on which space or how many threads.

// Uniform in the unit cube [0, 1)^d (the papers' Rand_Dim7, Rand_Dim3).
template <class ExecutionSpace>
HostPointSet uniform(ExecutionSpace const& space, Index n, int dimension, std::uint64_t seed);

// A Gaussian mixture: `clusters` centres uniform in [0, 1)^d, isotropic widths
// log-uniform in [0.2, 1] x `width`, cluster weights from a Dirichlet-like draw.
template <class ExecutionSpace>
HostPointSet clustered(ExecutionSpace const& space, Index n, int dimension, int clusters, double width, std::uint64_t seed);

// Named stand-ins for the papers' real inputs (7-D Covtype and MNIST reduced to
// 7 dims, 2-D Geocity): a clustered set with fixed shape parameters.
struct Preset {
  std::string name;
  int dimension;
  int clusters;
  double width;
  std::string description;
};
std::vector<Preset> const& presets();
// Throws InputError naming an unknown preset.
template <class ExecutionSpace>
HostPointSet from_preset(ExecutionSpace const& space, std::string const& name, Index n,
                         std::uint64_t seed);

// Plummer sphere: n equal-mass bodies, total mass 1, G = 1, scale radius
// 3 pi / 16 (Henon units, E = -1/4), velocities drawn from the isotropic
// distribution function (virialised), centre of mass and mean velocity removed.
// Ids are 0..n-1.
template <class ExecutionSpace>
io::Snapshot plummer(ExecutionSpace const& space, Index n, std::uint64_t seed);

}  // namespace treetrav::generators

#include <treetrav/generators/detail/generators_impl.hpp>
