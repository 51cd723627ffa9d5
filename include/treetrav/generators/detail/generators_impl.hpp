#pragma once
// What the generators of <treetrav/generators/generators.hpp> are made of:
// argument checks, the cluster mixture, Plummer and Hernquist sampling, the
// clustered box's hierarchy, deterministic sums.
//
// The fills run as Kokkos::parallel_for over host execution spaces only, with
// plain C++ lambdas (not KOKKOS_LAMBDA) so a CUDA build compiles them as host
// code. Every point owns a counter-based random stream keyed by (seed, purpose,
// point index): the output is a pure function of the arguments, identical for
// any host space and thread count.

#include <treetrav/core/detail/random.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/io/snapshot.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace treetrav::generators {
namespace detail {

using treetrav::detail::pi;
using treetrav::detail::Purpose;
using treetrav::detail::RandomStream;
using treetrav::detail::require_host_space;

inline void require_point_count(Index n) {
  if (n < 1) throw InputError("n must be >= 1 (got " + std::to_string(n) + ")");
}

inline void require_dimension(int dimension) {
  if (dimension < 1 || dimension > max_dimension)
    throw InputError("dimension must be in [1, " + std::to_string(max_dimension) + "] (got " +
                     std::to_string(dimension) + ")");
}

inline void require_cluster_shape(int clusters, double width) {
  if (clusters < 1)
    throw InputError("clusters must be >= 1 (got " + std::to_string(clusters) + ")");
  if (!(width > 0.0 && std::isfinite(width)))
    throw InputError("width must be positive and finite (got " + std::to_string(width) + ")");
}

// The mixture's components, drawn serially (there are few) from their own streams.
struct Mixture {
  std::vector<double> centres;            // (clusters, dimension), row-major
  std::vector<double> widths;             // (clusters)
  std::vector<double> cumulative_weight;  // (clusters), last entry 1
};

inline Mixture draw_mixture(int dimension, int clusters, double width, std::uint64_t seed) {
  constexpr double narrowest_width_fraction = 0.2;
  Mixture mixture;
  mixture.centres.resize(static_cast<std::size_t>(clusters) * dimension);
  mixture.widths.resize(clusters);
  mixture.cumulative_weight.resize(clusters);
  double total_weight = 0.0;
  for (int c = 0; c < clusters; ++c) {
    RandomStream random(seed, Purpose::cluster, c);
    for (int k = 0; k < dimension; ++k)
      mixture.centres[static_cast<std::size_t>(c) * dimension + k] = random.uniform();
    mixture.widths[c] = width * std::pow(narrowest_width_fraction, random.uniform());
    // Gamma(1/2) variates normalised give Dirichlet(1/2) weights: a few heavy
    // clusters and a long tail of light ones, like real data.
    double const z = random.normal();
    total_weight += z * z;
    mixture.cumulative_weight[c] = total_weight;
  }
  for (double& w : mixture.cumulative_weight) w /= total_weight;
  mixture.cumulative_weight.back() = 1.0;
  return mixture;
}

// One sampled body of a sphere in G = M = a = 1 units.
struct SampledBody {
  double position[3];
  double velocity[3];
};

inline void random_direction(RandomStream& random, double magnitude, double (&out)[3]) {
  double const cos_theta = 2.0 * random.uniform() - 1.0;
  double const sin_theta = std::sqrt(1.0 - cos_theta * cos_theta);
  double const phi = 2.0 * pi * random.uniform();
  out[0] = magnitude * sin_theta * std::cos(phi);
  out[1] = magnitude * sin_theta * std::sin(phi);
  out[2] = magnitude * cos_theta;
}

// Aarseth, Henon & Wielen (1974): radius from the inverted cumulative mass,
// speed by von Neumann rejection from the isotropic distribution function.
inline SampledBody sample_plummer_body(RandomStream& random) {
  // Beyond 99.9% of the mass radii grow without bound (r > 38 a); redraw those.
  constexpr double largest_enclosed_mass = 0.999;
  double enclosed_mass = random.uniform_open();
  while (enclosed_mass > largest_enclosed_mass) enclosed_mass = random.uniform_open();
  double const radius = 1.0 / std::sqrt(std::pow(enclosed_mass, -2.0 / 3.0) - 1.0);

  // q = v / v_escape has density proportional to q^2 (1 - q^2)^(7/2), whose maximum is < 0.1.
  double q = 0.0;
  for (;;) {
    q = random.uniform();
    double const height = 0.1 * random.uniform();
    if (height < q * q * std::pow(1.0 - q * q, 3.5)) break;
  }
  double const speed = q * std::sqrt(2.0) * std::pow(1.0 + radius * radius, -0.25);

  SampledBody body;
  random_direction(random, radius, body.position);
  random_direction(random, speed, body.velocity);
  return body;
}

// The Hernquist (1990) sphere, G = M = a = 1: density 1 / (2 pi r (1 + r)^3),
// enclosed mass r^2 / (1 + r)^2, relative potential 1 / (1 + r). Its
// isotropic distribution function of the relative energy e = q^2 (eq. 17;
// the constant factor left out, rejection needs none), zero where rounding
// makes it negative (e near 0, where its terms cancel).
inline double hernquist_distribution(double e) {
  if (!(e > 0.0)) return 0.0;
  if (e >= 1.0) return std::numeric_limits<double>::infinity();
  double const q = std::sqrt(e), q2 = e;
  double const value = (3.0 * std::asin(q) + q * std::sqrt(1.0 - q2) * (1.0 - 2.0 * q2) *
                                                 (8.0 * q2 * q2 - 8.0 * q2 - 3.0)) /
                       std::pow(1.0 - q2, 2.5);
  return value > 0.0 ? value : 0.0;
}

// The density of s = v / v_escape at radius r: s^2 f(psi (1 - s^2)).
inline double hernquist_speed_density(double radius, double s) {
  double const psi = 1.0 / (1.0 + radius);
  return s * s * hernquist_distribution(psi * (1.0 - s * s));
}

// Beyond 99.9% of the mass (r > 1998 a) radii grow without bound: redrawn.
inline constexpr double hernquist_largest_enclosed_mass = 0.999;

// The speed density's maximum over s, found on a grid dense near s = 0
// (its peak sits at s ~ sqrt(r) in the cusp), for radii on a log grid: the
// envelope of the speeds' rejection, 1.25 x the larger of the two radii
// around a body's (the maximum grows as r^-3/2 inside, by at most 14%
// from one grid radius to the next).
struct HernquistEnvelope {
  static constexpr int radii = 256;
  static constexpr double smallest = 1e-6;
  double largest = 0.0, log_step = 0.0;
  std::vector<double> peak = std::vector<double>(radii);

  static double scan(double radius) {
    constexpr int points = 2048;
    double most = 0.0;
    for (int j = 1; j <= points; ++j) {
      double const t = double(j) / points;
      most = std::max(most, hernquist_speed_density(radius, t * t));
    }
    return most;
  }
  HernquistEnvelope() {
    double const root = std::sqrt(hernquist_largest_enclosed_mass);
    largest = root / (1.0 - root);
    log_step = std::log(largest / smallest) / (radii - 1);
    for (int i = 0; i < radii; ++i) peak[i] = scan(smallest * std::exp(log_step * i));
  }
  double at(double radius) const {
    if (radius < smallest) return 1.25 * scan(radius);  // never drawn in practice (mass 1e-12)
    double const x = std::log(radius / smallest) / log_step;
    int const i = std::min(radii - 2, int(x));
    return 1.25 * std::max(peak[i], peak[i + 1]);
  }
};

// A Hernquist body in G = M = a = 1: radius from the enclosed mass, speed
// by von Neumann rejection from the isotropic distribution function.
inline SampledBody sample_hernquist_body(RandomStream& random, HernquistEnvelope const& envelope) {
  double enclosed_mass = random.uniform_open();
  while (enclosed_mass > hernquist_largest_enclosed_mass) enclosed_mass = random.uniform_open();
  double const root = std::sqrt(enclosed_mass);
  double const radius = root / (1.0 - root);
  double const ceiling = envelope.at(radius);
  double s = 0.0;
  for (;;) {
    s = random.uniform();
    if (ceiling * random.uniform() < hernquist_speed_density(radius, s)) break;
  }
  double const speed = s * std::sqrt(2.0 / (1.0 + radius));
  SampledBody body;
  random_direction(random, radius, body.position);
  random_direction(random, speed, body.velocity);
  return body;
}

// The clustered box: a Soneira & Peebles (1978) hierarchy. `top_spheres`
// spheres lie in the unit cube; each sphere holds `children` spheres
// `shrink` times smaller, centred uniformly within it, and so on `levels`
// deep; a body sits in one of the deepest spheres.
struct SoneiraPeebles {
  // Fractal dimension log(children) / log(shrink) = log 4 / log 3 = 1.26:
  // between the deepest and the top radii the two-point correlation goes as
  // r^-(3 - 1.26) = r^-1.74, close to the galaxies' r^-1.8 (dimension 1.2).
  // Four children three times smaller fill 4 / 27 of their parent: every
  // level is a clear clump of clumps.
  static constexpr int children = 4;
  static constexpr double shrink = 3.0;
  // A fixed depth, not one grown with n, so a body is a pure function of
  // (seed, its index) as in the other generators: a smaller set is a prefix
  // of a larger one. Eight levels hold 64 x 4^8 = 4.2M deepest spheres, about
  // n / a few for the 1M to 10M bodies of treetrav's runs (fewer bodies
  // sample the same fractal more sparsely), and span 3^8 = 6561 in radius:
  // deepest radii 3e-6 to 3e-5, still over 50 float steps near 1 and over
  // the octree's 2^-21 Morton cells, so clumps stay resolvable.
  static constexpr int levels = 8;
  // Top radii log-uniform over a decade, every top sphere with the same
  // expected share of the bodies: mean densities then differ by 10^3
  // between the smallest and the largest clumps (a mass growing as r^1.26,
  // the hierarchy continued upwards, would give only 10^1.74), which is what
  // makes the octree deep and unbalanced.
  static constexpr int top_spheres = 64;
  static constexpr double smallest_top_radius = 0.02, largest_top_radius = 0.2;
  // The spheres of one top sphere's tree, numbered as a heap (the root 0,
  // the children of sphere s at children * s + 1 ...).
  static constexpr std::uint64_t tree_size() {
    std::uint64_t size = 0, level_size = 1;
    for (int level = 0; level <= levels; ++level, level_size *= children) size += level_size;
    return size;
  }
};

struct Sphere {
  double centre[3];
  double radius;
};

// The stream of sphere `node` of top sphere `top`'s tree: every body whose
// path passes through a sphere finds it at the same place.
inline RandomStream clump_stream(std::uint64_t seed, int top, std::uint64_t node) {
  return RandomStream(seed, Purpose::clump,
                      static_cast<std::uint64_t>(top) * SoneiraPeebles::tree_size() + node);
}

// Uniform in the ball of `radius` about the origin, by rejection from its
// cube (accepted with probability pi / 6).
inline void uniform_in_ball(RandomStream& random, double radius, double (&out)[3]) {
  double squared = 0.0;
  do {
    squared = 0.0;
    for (double& x : out) {
      x = 2.0 * random.uniform() - 1.0;
      squared += x * x;
    }
  } while (squared > 1.0);
  for (double& x : out) x *= radius;
}

// One of `count` choices, uniformly (the guard only matters where count is
// not a power of two and the product rounds up).
inline int uniform_choice(RandomStream& random, int count) {
  return std::min(static_cast<int>(random.uniform() * count), count - 1);
}

// The top spheres, drawn serially (there are few) from their trees' roots' streams.
inline std::vector<Sphere> draw_top_spheres(std::uint64_t seed) {
  std::vector<Sphere> tops(SoneiraPeebles::top_spheres);
  for (int t = 0; t < SoneiraPeebles::top_spheres; ++t) {
    RandomStream random = clump_stream(seed, t, 0);
    for (double& x : tops[t].centre) x = random.uniform();
    tops[t].radius = SoneiraPeebles::largest_top_radius *
                     std::pow(SoneiraPeebles::smallest_top_radius /
                                  SoneiraPeebles::largest_top_radius,
                              random.uniform());
  }
  return tops;
}

// A body of the hierarchy, not yet wrapped into the cube (within 1.5 x 0.2
// of it): a top sphere and a child at every level from the body's own
// stream, each sphere's centre from its own, then uniform in the deepest.
inline void clustered_box_body(RandomStream& random, Sphere const* tops, std::uint64_t seed,
                               double (&position)[3]) {
  int const top = uniform_choice(random, SoneiraPeebles::top_spheres);
  double radius = tops[top].radius;
  for (int k = 0; k < 3; ++k) position[k] = tops[top].centre[k];
  std::uint64_t node = 0;
  for (int level = 1; level <= SoneiraPeebles::levels; ++level) {
    node = SoneiraPeebles::children * node + 1 + uniform_choice(random, SoneiraPeebles::children);
    RandomStream sphere = clump_stream(seed, top, node);
    double offset[3];
    uniform_in_ball(sphere, radius, offset);
    for (int k = 0; k < 3; ++k) position[k] += offset[k];
    radius /= SoneiraPeebles::shrink;
  }
  double offset[3];
  uniform_in_ball(random, radius, offset);  // no two bodies of a sphere coincide
  for (int k = 0; k < 3; ++k) position[k] += offset[k];
}

// x modulo 1, in [0, 1) both as a double and once cast to float (the trees
// take float coordinates): x - floor(x) rounds to 1 for x just below an
// integer, and doubles from 1 - 2^-25 up round to 1.0f, so results from the
// largest float below 1, 1 - 2^-24, up are clamped onto it (a move under
// 6e-8, and not across the box, which open-boundary forces would feel).
inline double wrap_into_unit_interval(double x) {
  constexpr double largest_float_below_one = 1.0 - 0x1.0p-24;
  return std::min(x - std::floor(x), largest_float_below_one);
}

// Sums term(i) (a 3-vector) over [0, n) in fixed blocks, in parallel, then adds
// the block sums in order: the same rounding for every space and thread count.
template <class ExecutionSpace, class Term>
std::array<double, 3> deterministic_sum3(ExecutionSpace const& space, Index n, Term const& term) {
  constexpr std::int64_t block_size = 1024;  // 64-bit: n + block_size may overflow an Index
  Index const blocks = static_cast<Index>((n + block_size - 1) / block_size);
  Kokkos::View<double* [3], Kokkos::HostSpace> block_sums("treetrav::block_sums", blocks);
  Kokkos::parallel_for(
      "treetrav::generators::block_sums", Kokkos::RangePolicy<ExecutionSpace>(space, 0, blocks),
      [=](Index b) {
        auto const end = static_cast<Index>(std::min<std::int64_t>(n, (b + 1) * block_size));
        for (auto i = static_cast<Index>(b * block_size); i < end; ++i) {
          auto const t = term(i);
          for (int k = 0; k < 3; ++k) block_sums(b, k) += t[k];
        }
      });
  space.fence();
  std::array<double, 3> total{0.0, 0.0, 0.0};
  for (Index b = 0; b < blocks; ++b)
    for (int k = 0; k < 3; ++k) total[k] += block_sums(b, k);
  return total;
}

// Moves a snapshot into its centre-of-mass frame (positions and velocities).
template <class ExecutionSpace>
void remove_mean_motion(ExecutionSpace const& space, io::Snapshot& snapshot) {
  Index const n = static_cast<Index>(snapshot.size());
  auto const masses = snapshot.masses;
  double total_mass = 0.0;
  for (Index i = 0; i < n; ++i) total_mass += masses(i);
  for (auto vectors : {snapshot.coordinates, snapshot.velocities}) {
    auto const weighted_sum = deterministic_sum3(space, n, [=](Index i) {
      return std::array<double, 3>{masses(i) * vectors(i, 0), masses(i) * vectors(i, 1),
                                   masses(i) * vectors(i, 2)};
    });
    Kokkos::parallel_for(
        "treetrav::generators::remove_mean", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        [=](Index i) {
          for (int k = 0; k < 3; ++k) vectors(i, k) -= weighted_sum[k] / total_mass;
        });
    space.fence();
  }
}

}  // namespace detail

}  // namespace treetrav::generators
