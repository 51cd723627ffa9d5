#pragma once
// Template implementations of <treetrav/generators/generators.hpp>.
//
// The fills run as Kokkos::parallel_for over host execution spaces only, with
// plain C++ lambdas (not KOKKOS_LAMBDA) so a CUDA build compiles them as host
// code. Every point owns a counter-based random stream keyed by (seed, purpose,
// point index): the output is a pure function of the arguments, identical for
// any host space and thread count.

#include <treetrav/core/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace treetrav::generators {
namespace detail {

inline constexpr double pi = 3.14159265358979323846;

template <class ExecutionSpace>
constexpr void require_host_space() {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "treetrav generators fill host memory: pass a host execution space");
}

// The SplitMix64 output function: a bijective 64-bit mixer with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Separates the streams of different draws made from one seed.
enum class Purpose : std::uint64_t { point = 1, cluster = 2, body = 3 };

// Draw k of stream (seed, purpose, index) is mix64(key + (k + 1) * gamma): a
// SplitMix64 sequence started at a key hashed from the triple, so any point's
// numbers can be computed without the others'.
class RandomStream {
 public:
  RandomStream(std::uint64_t seed, Purpose purpose, std::uint64_t index)
      : state_(mix64(mix64(seed ^ mix64(static_cast<std::uint64_t>(purpose))) + index)) {}

  std::uint64_t next_bits() { return mix64(state_ += gamma); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_bits() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1): safe to take the logarithm of.
  double uniform_open() { return (static_cast<double>(next_bits() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform in [0, 1) with 24 random bits: a float that never rounds up to 1.
  float uniform_float() { return static_cast<float>(next_bits() >> 40) * 0x1.0p-24f; }
  // Standard normal by Box-Muller; the second variate of each pair is kept for the next call.
  double normal() {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return spare_normal_;
    }
    double const radius = std::sqrt(-2.0 * std::log(uniform_open()));
    double const angle = 2.0 * pi * uniform();
    spare_normal_ = radius * std::sin(angle);
    has_spare_normal_ = true;
    return radius * std::cos(angle);
  }

 private:
  static constexpr std::uint64_t gamma = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio
  std::uint64_t state_;
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

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

Preset const& find_preset(std::string const& name);

}  // namespace detail

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

// One sampled Plummer body in G = M = a = 1 units.
struct PlummerBody {
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
inline PlummerBody sample_plummer_body(RandomStream& random) {
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

  PlummerBody body;
  random_direction(random, radius, body.position);
  random_direction(random, speed, body.velocity);
  return body;
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

template <class ExecutionSpace>
io::Snapshot plummer(ExecutionSpace const& space, Index n, std::uint64_t seed) {
  detail::require_host_space<ExecutionSpace>();
  detail::require_point_count(n);
  // Henon units (E = -1/4) from G = M = a = 1: lengths x 3 pi / 16, speeds x sqrt(16 / (3 pi)).
  double const length_scale = 3.0 * detail::pi / 16.0;
  double const speed_scale = std::sqrt(16.0 / (3.0 * detail::pi));
  io::Snapshot snapshot = io::allocate_snapshot(static_cast<std::size_t>(n));
  snapshot.time = 0.0;
  snapshot.box_size = 0.0;
  auto const coordinates = snapshot.coordinates;
  auto const velocities = snapshot.velocities;
  auto const masses = snapshot.masses;
  auto const ids = snapshot.ids;
  Kokkos::parallel_for(
      "treetrav::generators::plummer", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      [=](Index i) {
        detail::RandomStream random(seed, detail::Purpose::body, i);
        auto const body = detail::sample_plummer_body(random);
        for (int k = 0; k < 3; ++k) {
          coordinates(i, k) = length_scale * body.position[k];
          velocities(i, k) = speed_scale * body.velocity[k];
        }
        masses(i) = 1.0 / n;
        ids(i) = i;
      });
  space.fence();
  detail::remove_mean_motion(space, snapshot);
  return snapshot;
}

}  // namespace treetrav::generators
