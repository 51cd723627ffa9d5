#pragma once

#include <treetrav/core/point_set.hpp>
#include <treetrav/generators/detail/generators_impl.hpp>
#include <treetrav/io/snapshot.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
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

// Hernquist (1990) sphere, the bulge and halo model of galaxy simulations:
// density a / (2 pi r (r + a)^3) for total mass 1 (a 1/r cusp, so a dense
// core and a deep tree), n equal-mass bodies out to 99.9% of the mass,
// a = 1/3 (Henon units: E = -1/4 for the whole sphere), velocities from its
// isotropic distribution function (in equilibrium), centre of mass and mean
// velocity removed. Ids are 0..n-1.
template <class ExecutionSpace>
io::Snapshot hernquist(ExecutionSpace const& space, Index n, std::uint64_t seed);

// A clustered box, the Soneira & Peebles (1978) hierarchy: n equal-mass
// bodies (total mass 1, ids 0..n-1) at rest (a cold start, time 0) in the
// unit cube [0, 1)^3, in 64 clumps with radii log-uniform in [0.02, 0.2],
// each clump four clumps three times smaller, eight levels deep: a fractal of
// dimension log 4 / log 3 = 1.26 (galaxy-like correlations, xi ~ r^-1.74)
// down to radii of 3e-6, with clumps of very different sizes and densities
// (a deep, unbalanced octree). Periodic in that clumps wrap around the cube's
// faces; box_size stays 0 all the same, as the N-body code has no periodic
// gravity: forces on the set are open-boundary. The centre of mass is left
// where it falls (in a periodic box it means nothing). Every coordinate is
// below 1 also as a float.
template <class ExecutionSpace>
io::Snapshot clustered_box(ExecutionSpace const& space, Index n, std::uint64_t seed);

namespace detail {
Preset const& find_preset(std::string const& name);
}  // namespace detail

// The definitions (helpers in detail/generators_impl.hpp).

template <class ExecutionSpace>
HostPointSet uniform(ExecutionSpace const& space, Index n, int dimension, std::uint64_t seed) {
  detail::require_host_space<ExecutionSpace>();
  detail::require_point_count(n);
  detail::require_dimension(dimension);
  auto points = allocate_points<Kokkos::HostSpace>("uniform", n, dimension);
  auto coordinates = points.coordinates;
  Kokkos::parallel_for(
      "treetrav::generators::uniform", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      [=](Index i) {
        detail::RandomStream random(seed, detail::Purpose::point, i);
        for (int k = 0; k < dimension; ++k) coordinates(i, k) = random.uniform_float();
      });
  space.fence();
  return points;
}

template <class ExecutionSpace>
HostPointSet clustered(ExecutionSpace const& space, Index n, int dimension, int clusters,
                       double width, std::uint64_t seed) {
  detail::require_host_space<ExecutionSpace>();
  detail::require_point_count(n);
  detail::require_dimension(dimension);
  detail::require_cluster_shape(clusters, width);
  auto const mixture = detail::draw_mixture(dimension, clusters, width, seed);
  auto points = allocate_points<Kokkos::HostSpace>("clustered", n, dimension);
  auto coordinates = points.coordinates;
  double const* centres = mixture.centres.data();
  double const* widths = mixture.widths.data();
  double const* cumulative_begin = mixture.cumulative_weight.data();
  double const* cumulative_end = cumulative_begin + clusters;
  Kokkos::parallel_for(
      "treetrav::generators::clustered", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      [=](Index i) {
        detail::RandomStream random(seed, detail::Purpose::point, i);
        // The last cumulative weight is exactly 1, above any uniform draw.
        std::ptrdiff_t const c =
            std::upper_bound(cumulative_begin, cumulative_end, random.uniform()) - cumulative_begin;
        for (int k = 0; k < dimension; ++k)
          coordinates(i, k) = static_cast<Coordinate>(centres[c * dimension + k] +
                                                      widths[c] * random.normal());
      });
  space.fence();
  return points;
}

template <class ExecutionSpace>
HostPointSet from_preset(ExecutionSpace const& space, std::string const& name, Index n,
                         std::uint64_t seed) {
  Preset const& preset = detail::find_preset(name);
  return clustered(space, n, preset.dimension, preset.clusters, preset.width, seed);
}

namespace detail {
// n equal-mass bodies of a sphere drawn by sample(random) in G = M = a = 1,
// scaled to Henon units (lengths x length_scale, speeds x speed_scale),
// centre of mass and mean velocity removed; ids 0..n-1.
template <class ExecutionSpace, class Sample>
io::Snapshot sample_sphere(ExecutionSpace const& space, std::string const& label, Index n,
                           std::uint64_t seed, double length_scale, double speed_scale,
                           Sample const& sample) {
  require_host_space<ExecutionSpace>();
  require_point_count(n);
  io::Snapshot snapshot = io::allocate_snapshot(static_cast<std::size_t>(n));
  snapshot.time = 0.0;
  snapshot.box_size = 0.0;
  auto const coordinates = snapshot.coordinates;
  auto const velocities = snapshot.velocities;
  auto const masses = snapshot.masses;
  auto const ids = snapshot.ids;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), [=](Index i) {
    RandomStream random(seed, Purpose::body, i);
    auto const body = sample(random);
    for (int k = 0; k < 3; ++k) {
      coordinates(i, k) = length_scale * body.position[k];
      velocities(i, k) = speed_scale * body.velocity[k];
    }
    masses(i) = 1.0 / n;
    ids(i) = i;
  });
  space.fence();
  remove_mean_motion(space, snapshot);
  return snapshot;
}
}  // namespace detail

template <class ExecutionSpace>
io::Snapshot plummer(ExecutionSpace const& space, Index n, std::uint64_t seed) {
  // Henon units (E = -1/4) from G = M = a = 1: lengths x 3 pi / 16, speeds x sqrt(16 / (3 pi)).
  return detail::sample_sphere(space, "treetrav::generators::plummer", n, seed,
                               3.0 * detail::pi / 16.0, std::sqrt(16.0 / (3.0 * detail::pi)),
                               [](detail::RandomStream& random) {
                                 return detail::sample_plummer_body(random);
                               });
}

template <class ExecutionSpace>
io::Snapshot hernquist(ExecutionSpace const& space, Index n, std::uint64_t seed) {
  detail::require_point_count(n); // before the envelope's table
  detail::HernquistEnvelope const envelope;
  detail::HernquistEnvelope const* const shared = &envelope;
  // Henon units (E = -1/4) from G = M = a = 1 (E = -1/12): lengths / 3, speeds x sqrt(3).
  return detail::sample_sphere(space, "treetrav::generators::hernquist", n, seed, 1.0 / 3.0,
                               std::sqrt(3.0), [shared](detail::RandomStream& random) {
                                 return detail::sample_hernquist_body(random, *shared);
                               });
}

template <class ExecutionSpace>
io::Snapshot clustered_box(ExecutionSpace const& space, Index n, std::uint64_t seed) {
  detail::require_host_space<ExecutionSpace>();
  detail::require_point_count(n);
  auto const top_spheres = detail::draw_top_spheres(seed);
  detail::Sphere const* const tops = top_spheres.data();
  io::Snapshot snapshot = io::allocate_snapshot(static_cast<std::size_t>(n));
  snapshot.time = 0.0;
  snapshot.box_size = 0.0;  // open-boundary forces (see the declaration)
  auto const coordinates = snapshot.coordinates;
  auto const velocities = snapshot.velocities;
  auto const masses = snapshot.masses;
  auto const ids = snapshot.ids;
  Kokkos::parallel_for(
      "treetrav::generators::clustered_box", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      [=](Index i) {
        detail::RandomStream random(seed, detail::Purpose::body, i);
        double position[3];
        detail::clustered_box_body(random, tops, seed, position);
        for (int k = 0; k < 3; ++k) {
          coordinates(i, k) = detail::wrap_into_unit_interval(position[k]);
          velocities(i, k) = 0.0;
        }
        masses(i) = 1.0 / n;
        ids(i) = i;
      });
  space.fence();
  return snapshot;
}

}  // namespace treetrav::generators
