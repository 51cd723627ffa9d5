// The input generators: determinism across seeds, spaces and threads, the
// statistics of each distribution, and argument validation.
#include <treetrav/core/error.hpp>
#include <treetrav/generators/generators.hpp>

#include "execution_spaces.hpp"
#include "input_errors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

namespace treetrav::generators {
namespace {

using test::expect_input_error;

// Results on every space must match this one bit for bit.
#ifdef TREETRAV_ENABLE_SERIAL
using ReferenceSpace = Kokkos::Serial;
#else
using ReferenceSpace = Kokkos::DefaultHostExecutionSpace;
#endif

constexpr std::uint64_t seed = 20240611;
constexpr double pi = 3.14159265358979323846;

template <class View>
bool bit_identical(View const& a, View const& b) {
  for (unsigned r = 0; r < View::rank; ++r)
    if (a.extent(r) != b.extent(r)) return false;
  return std::memcmp(a.data(), b.data(), a.span() * sizeof(typename View::value_type)) == 0;
}

bool bit_identical(io::Snapshot const& a, io::Snapshot const& b) {
  return bit_identical(a.coordinates, b.coordinates) && bit_identical(a.velocities, b.velocities) &&
         bit_identical(a.masses, b.masses) && bit_identical(a.ids, b.ids);
}

struct MeanAndVariance {
  double mean;
  double variance;
};

MeanAndVariance column_statistics(HostPointSet const& points, int k) {
  double sum = 0.0, sum_of_squares = 0.0;
  for (Index i = 0; i < points.size(); ++i) sum += points(i, k);
  double const mean = sum / points.size();
  for (Index i = 0; i < points.size(); ++i) sum_of_squares += std::pow(points(i, k) - mean, 2);
  return {mean, sum_of_squares / (points.size() - 1)};
}

// Squared distance from point i to the nearest centre of the mixture.
double squared_distance_to_nearest_centre(HostPointSet const& points, Index i,
                                          detail::Mixture const& mixture) {
  int const d = points.dimension();
  double nearest = std::numeric_limits<double>::max();
  for (std::size_t c = 0; c < mixture.widths.size(); ++c) {
    double squared = 0.0;
    for (int k = 0; k < d; ++k) squared += std::pow(points(i, k) - mixture.centres[c * d + k], 2);
    nearest = std::min(nearest, squared);
  }
  return nearest;
}

double mean_squared_distance_to_nearest_centre(HostPointSet const& points,
                                               detail::Mixture const& mixture) {
  double sum = 0.0;
  for (Index i = 0; i < points.size(); ++i)
    sum += squared_distance_to_nearest_centre(points, i, mixture);
  return sum / points.size();
}

double kinetic_energy(io::Snapshot const& s) {
  double energy = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (int k = 0; k < 3; ++k)
      energy += 0.5 * s.masses(i) * s.velocities(i, k) * s.velocities(i, k);
  return energy;
}

// Direct O(n^2) sum, G = 1.
double potential_energy(io::Snapshot const& s) {
  double energy = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      double squared = 0.0;
      for (int k = 0; k < 3; ++k) squared += std::pow(s.coordinates(i, k) - s.coordinates(j, k), 2);
      energy -= s.masses(i) * s.masses(j) / std::sqrt(squared);
    }
  return energy;
}

template <class Space>
class GeneratorDeterminism : public ::testing::Test {};
TYPED_TEST_SUITE(GeneratorDeterminism, treetrav::test::HostExecutionSpaces,
                 treetrav::test::SpaceName);

TYPED_TEST(GeneratorDeterminism, SameSeedIsBitIdenticalAndOtherSeedDiffers) {
  TypeParam space;
  EXPECT_TRUE(bit_identical(uniform(space, 5000, 7, seed).coordinates,
                            uniform(space, 5000, 7, seed).coordinates));
  EXPECT_FALSE(bit_identical(uniform(space, 5000, 7, seed).coordinates,
                             uniform(space, 5000, 7, seed + 1).coordinates));
  EXPECT_TRUE(bit_identical(clustered(space, 5000, 3, 6, 0.05, seed).coordinates,
                            clustered(space, 5000, 3, 6, 0.05, seed).coordinates));
  EXPECT_FALSE(bit_identical(clustered(space, 5000, 3, 6, 0.05, seed).coordinates,
                             clustered(space, 5000, 3, 6, 0.05, seed + 1).coordinates));
  EXPECT_TRUE(bit_identical(plummer(space, 5000, seed), plummer(space, 5000, seed)));
  EXPECT_FALSE(bit_identical(plummer(space, 5000, seed), plummer(space, 5000, seed + 1)));
  EXPECT_TRUE(bit_identical(hernquist(space, 5000, seed), hernquist(space, 5000, seed)));
  EXPECT_FALSE(bit_identical(hernquist(space, 5000, seed), hernquist(space, 5000, seed + 1)));
  EXPECT_TRUE(bit_identical(clustered_box(space, 5000, seed), clustered_box(space, 5000, seed)));
  EXPECT_FALSE(bit_identical(clustered_box(space, 5000, seed).coordinates,
                             clustered_box(space, 5000, seed + 1).coordinates));
}

TYPED_TEST(GeneratorDeterminism, MatchesReferenceSpaceBitForBit) {
  TypeParam space;
  ReferenceSpace reference;
  EXPECT_TRUE(bit_identical(uniform(space, 10007, 7, seed).coordinates,
                            uniform(reference, 10007, 7, seed).coordinates));
  EXPECT_TRUE(bit_identical(clustered(space, 10007, 5, 12, 0.03, seed).coordinates,
                            clustered(reference, 10007, 5, 12, 0.03, seed).coordinates));
  EXPECT_TRUE(bit_identical(from_preset(space, "geocity2", 10007, seed).coordinates,
                            from_preset(reference, "geocity2", 10007, seed).coordinates));
  EXPECT_TRUE(bit_identical(plummer(space, 10007, seed), plummer(reference, 10007, seed)));
  EXPECT_TRUE(bit_identical(hernquist(space, 10007, seed), hernquist(reference, 10007, seed)));
  EXPECT_TRUE(
      bit_identical(clustered_box(space, 10007, seed), clustered_box(reference, 10007, seed)));
}

// A prefix of a larger set equals the smaller set: each point has its own stream.
TYPED_TEST(GeneratorDeterminism, PointsDoNotDependOnN) {
  TypeParam space;
  auto const small = uniform(space, 100, 3, seed);
  auto const large = uniform(space, 1000, 3, seed);
  for (Index i = 0; i < small.size(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_EQ(small(i, k), large(i, k)) << "point " << i;
  // The clustered box too: its hierarchy's depth does not grow with n.
  auto const few = clustered_box(space, 100, seed);
  auto const many = clustered_box(space, 1000, seed);
  for (Index i = 0; i < 100; ++i)
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(few.coordinates(i, k), many.coordinates(i, k)) << "body " << i;
}

template <class Space>
class UniformGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(UniformGenerator, treetrav::test::HostExecutionSpaces, treetrav::test::SpaceName);

TYPED_TEST(UniformGenerator, FillsUnitCubeWithUniformMoments) {
  constexpr Index n = 100000;
  constexpr int d = 7;  // Rand_Dim7
  auto const points = uniform(TypeParam{}, n, d, seed);
  ASSERT_EQ(points.size(), n);
  ASSERT_EQ(points.dimension(), d);
  EXPECT_FALSE(points.has_ids());
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < d; ++k) {
      ASSERT_GE(points(i, k), 0.0f) << "point " << i;
      ASSERT_LT(points(i, k), 1.0f) << "point " << i;
    }
  // Uniform on [0, 1): mean 1/2, variance 1/12, and Var[(x - 1/2)^2] = 1/80 - 1/144 = 1/180.
  double const mean_sigma = std::sqrt(1.0 / 12.0 / n);
  double const variance_sigma = std::sqrt(1.0 / 180.0 / n);
  for (int k = 0; k < d; ++k) {
    auto const stats = column_statistics(points, k);
    EXPECT_NEAR(stats.mean, 0.5, 4 * mean_sigma) << "dimension " << k;
    EXPECT_NEAR(stats.variance, 1.0 / 12.0, 4 * variance_sigma) << "dimension " << k;
  }
}

TYPED_TEST(UniformGenerator, DimensionsAreIndependent) {
  auto const points = uniform(TypeParam{}, 50000, 3, seed);  // Rand_Dim3
  ASSERT_EQ(points.dimension(), 3);
  // Correlation of neighbouring coordinates drawn from one stream: ~N(0, 1/n).
  for (int k = 0; k + 1 < 3; ++k) {
    double covariance = 0.0;
    for (Index i = 0; i < points.size(); ++i)
      covariance += (points(i, k) - 0.5) * (points(i, k + 1) - 0.5);
    double const correlation = covariance / points.size() * 12.0;
    EXPECT_LT(std::abs(correlation), 4.0 / std::sqrt(points.size())) << "dimensions " << k;
  }
}

template <class Space>
class ClusteredGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(ClusteredGenerator, treetrav::test::HostExecutionSpaces,
                 treetrav::test::SpaceName);

TYPED_TEST(ClusteredGenerator, PointsSpreadAroundCentresWithTheirWidths) {
  constexpr Index n = 20000;
  constexpr int d = 7, clusters = 8;
  constexpr double width = 0.02;
  auto const points = clustered(TypeParam{}, n, d, clusters, width, seed);
  ASSERT_EQ(points.size(), n);
  ASSERT_EQ(points.dimension(), d);
  auto const mixture = detail::draw_mixture(d, clusters, width, seed);

  // Far closer to a centre than uniform points are.
  double const clustered_msd = mean_squared_distance_to_nearest_centre(points, mixture);
  double const uniform_msd =
      mean_squared_distance_to_nearest_centre(uniform(TypeParam{}, n, d, seed), mixture);
  EXPECT_LT(clustered_msd, 0.05 * uniform_msd);

  // E|x - c|^2 = d * sum_c weight_c * width_c^2 for well-separated clusters.
  double expected_msd = 0.0, previous_cumulative = 0.0;
  for (int c = 0; c < clusters; ++c) {
    double const weight = mixture.cumulative_weight[c] - previous_cumulative;
    previous_cumulative = mixture.cumulative_weight[c];
    EXPECT_GE(mixture.widths[c], 0.2 * width);
    EXPECT_LE(mixture.widths[c], width);
    expected_msd += d * weight * mixture.widths[c] * mixture.widths[c];
  }
  EXPECT_NEAR(clustered_msd, expected_msd, 0.05 * expected_msd);
}

TYPED_TEST(ClusteredGenerator, SingleClusterIsGaussianAroundItsCentre) {
  constexpr Index n = 40000;
  constexpr int d = 2;
  constexpr double width = 0.01;
  auto const points = clustered(TypeParam{}, n, d, 1, width, seed);
  auto const mixture = detail::draw_mixture(d, 1, width, seed);
  double const sigma = mixture.widths[0];
  for (int k = 0; k < d; ++k) {
    auto const stats = column_statistics(points, k);
    EXPECT_NEAR(stats.mean, mixture.centres[k], 4 * sigma / std::sqrt(n)) << "dimension " << k;
    // Var of a normal sample variance: 2 sigma^4 / n.
    EXPECT_NEAR(stats.variance, sigma * sigma, 4 * std::sqrt(2.0 / n) * sigma * sigma)
        << "dimension " << k;
  }
}

template <class Space>
class PresetGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(PresetGenerator, treetrav::test::HostExecutionSpaces, treetrav::test::SpaceName);

TYPED_TEST(PresetGenerator, PresetsHaveTheirStatedShape) {
  std::vector<std::string> names;
  for (Preset const& preset : presets()) {
    names.push_back(preset.name);
    EXPECT_FALSE(preset.description.empty()) << preset.name;
    auto const points = from_preset(TypeParam{}, preset.name, 1000, seed);
    EXPECT_EQ(points.size(), 1000) << preset.name;
    EXPECT_EQ(points.dimension(), preset.dimension) << preset.name;
    EXPECT_TRUE(bit_identical(points.coordinates,
                              clustered(TypeParam{}, 1000, preset.dimension, preset.clusters,
                                        preset.width, seed)
                                  .coordinates))
        << preset.name;
  }
  for (char const* expected : {"covtype7", "mnist7", "geocity2"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_EQ(detail::find_preset("covtype7").dimension, 7);
  EXPECT_EQ(detail::find_preset("mnist7").dimension, 7);
  EXPECT_EQ(detail::find_preset("mnist7").clusters, 10);
  EXPECT_EQ(detail::find_preset("geocity2").dimension, 2);
}

TYPED_TEST(PresetGenerator, UnknownPresetThrowsNamingIt) {
  expect_input_error([] { from_preset(TypeParam{}, "covtype8", 10, seed); }, "'covtype8'");
}

template <class Space>
class PlummerGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(PlummerGenerator, treetrav::test::HostExecutionSpaces, treetrav::test::SpaceName);

TYPED_TEST(PlummerGenerator, IsACentredPlummerSphereInHenonUnits) {
  constexpr Index n = 20000;
  auto const s = plummer(TypeParam{}, n, seed);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(s.time, 0.0);
  EXPECT_EQ(s.box_size, 0.0);
  EXPECT_EQ(s.potentials.extent(0), 0u);

  double total_mass = 0.0, centre[3] = {}, mean_velocity[3] = {};
  std::vector<double> radii(n);
  for (Index i = 0; i < n; ++i) {
    ASSERT_EQ(s.ids(i), i);
    total_mass += s.masses(i);
    double squared = 0.0;
    for (int k = 0; k < 3; ++k) {
      centre[k] += s.masses(i) * s.coordinates(i, k);
      mean_velocity[k] += s.masses(i) * s.velocities(i, k);
      squared += s.coordinates(i, k) * s.coordinates(i, k);
    }
    radii[i] = std::sqrt(squared);
  }
  EXPECT_NEAR(total_mass, 1.0, 1e-12);
  for (int k = 0; k < 3; ++k) {
    EXPECT_LT(std::abs(centre[k]), 1e-12) << "component " << k;
    EXPECT_LT(std::abs(mean_velocity[k]), 1e-12) << "component " << k;
  }

  // Plummer half-mass radius: a / sqrt(2^(2/3) - 1) with a = 3 pi / 16.
  std::nth_element(radii.begin(), radii.begin() + n / 2, radii.end());
  double const half_mass_radius = 3 * pi / 16 / std::sqrt(std::cbrt(4.0) - 1);
  EXPECT_NEAR(radii[n / 2], half_mass_radius, 0.05 * half_mass_radius);
}

// Virialised (2K / |W| = 1) with E = -1/4 (Henon units), both within 5%.
void expect_virialised_in_henon_units(io::Snapshot const& s) {
  double const kinetic = kinetic_energy(s);
  double const potential = potential_energy(s);
  EXPECT_NEAR(2 * kinetic / std::abs(potential), 1.0, 0.05);
  EXPECT_NEAR(kinetic + potential, -0.25, 0.05 * 0.25);
}

TYPED_TEST(PlummerGenerator, IsVirialisedWithEnergyMinusOneQuarter) {
  expect_virialised_in_henon_units(plummer(TypeParam{}, 4000, seed));
}

template <class Space>
class HernquistGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(HernquistGenerator, treetrav::test::HostExecutionSpaces,
                 treetrav::test::SpaceName);

// Hernquist's enclosed mass r^2 / (r + a)^2, a = 1/3, out to 99.9% of the
// mass: the radius holding `share` of the bodies.
double hernquist_radius(double share) {
  double const root = std::sqrt(share * 0.999);
  return root / (1 - root) / 3;
}

TYPED_TEST(HernquistGenerator, IsACentredHernquistSphereInHenonUnits) {
  constexpr Index n = 20000;
  auto const s = hernquist(TypeParam{}, n, seed);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(s.box_size, 0.0);
  double total_mass = 0.0, centre[3] = {}, mean_velocity[3] = {};
  for (Index i = 0; i < n; ++i) {
    ASSERT_EQ(s.ids(i), i);
    total_mass += s.masses(i);
    for (int k = 0; k < 3; ++k) {
      centre[k] += s.masses(i) * s.coordinates(i, k);
      mean_velocity[k] += s.masses(i) * s.velocities(i, k);
    }
  }
  EXPECT_NEAR(total_mass, 1.0, 1e-12);
  for (int k = 0; k < 3; ++k) {
    EXPECT_LT(std::abs(centre[k]), 1e-12) << "component " << k;
    EXPECT_LT(std::abs(mean_velocity[k]), 1e-12) << "component " << k;
  }
  // The profile about the cusp: the centre of mass, which the far bodies
  // pull, sits up to ~sqrt(a r_max / n) away from it; the bodies' median
  // point does not.
  double cusp[3];
  for (int k = 0; k < 3; ++k) {
    std::vector<double> x(n);
    for (Index i = 0; i < n; ++i)
      x[i] = s.coordinates(i, k);
    std::nth_element(x.begin(), x.begin() + n / 2, x.end());
    cusp[k] = x[n / 2];
  }
  std::vector<double> radii(n);
  for (Index i = 0; i < n; ++i) {
    double squared = 0.0;
    for (int k = 0; k < 3; ++k)
      squared += (s.coordinates(i, k) - cusp[k]) * (s.coordinates(i, k) - cusp[k]);
    radii[i] = std::sqrt(squared);
  }
  // The radii holding a tenth, half and nine tenths of the bodies (the
  // cusp, the half-mass radius, the outskirts).
  std::sort(radii.begin(), radii.end());
  for (double share : {0.1, 0.5, 0.9}) {
    double const expected = hernquist_radius(share);
    EXPECT_NEAR(radii[Index(share * n)], expected, 0.06 * expected) << "share " << share;
  }
}

TYPED_TEST(HernquistGenerator, IsVirialisedWithEnergyMinusOneQuarter) {
  expect_virialised_in_henon_units(hernquist(TypeParam{}, 4000, seed));
}

template <class Space>
class ClusteredBoxGenerator : public ::testing::Test {};
TYPED_TEST_SUITE(ClusteredBoxGenerator, treetrav::test::HostExecutionSpaces,
                 treetrav::test::SpaceName);

TYPED_TEST(ClusteredBoxGenerator, FillsTheUnitCubeWithEqualMassBodiesAtRest) {
  constexpr Index n = 20000;
  auto const s = clustered_box(TypeParam{}, n, seed);
  ASSERT_EQ(s.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(s.time, 0.0);
  EXPECT_EQ(s.box_size, 0.0);  // periodic in layout only: forces on it are open-boundary
  EXPECT_EQ(s.potentials.extent(0), 0u);
  double total_mass = 0.0;
  for (Index i = 0; i < n; ++i) {
    ASSERT_EQ(s.ids(i), i);
    ASSERT_EQ(s.masses(i), 1.0 / n);
    total_mass += s.masses(i);
    for (int k = 0; k < 3; ++k) {
      double const x = s.coordinates(i, k);
      ASSERT_GE(x, 0.0) << "body " << i;
      ASSERT_LT(x, 1.0) << "body " << i;
      ASSERT_LT(static_cast<float>(x), 1.0f) << "body " << i;  // the trees' coordinates
      ASSERT_EQ(s.velocities(i, k), 0.0) << "body " << i;
    }
  }
  EXPECT_NEAR(total_mass, 1.0, 1e-12);
}

// Bodies in a grid of cells: their counts' variance over the mean, 1 for
// uniform (Poisson) bodies.
double counts_in_cells_variance_ratio(io::Snapshot const& s, int cells_per_side) {
  std::vector<double> counts(std::size_t(cells_per_side) * cells_per_side * cells_per_side);
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::size_t cell = 0;
    for (int k = 0; k < 3; ++k)
      cell = cell * cells_per_side + int(s.coordinates(i, k) * cells_per_side);
    counts[cell] += 1.0;
  }
  double const mean = double(s.size()) / counts.size();
  double variance = 0.0;
  for (double count : counts) variance += (count - mean) * (count - mean);
  return variance / (counts.size() - 1) / mean;
}

// Pairs among the first m bodies closer than r (nearest periodic image).
long pairs_closer_than(io::Snapshot const& s, std::size_t m, double r) {
  long pairs = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j) {
      double squared = 0.0;
      for (int k = 0; k < 3; ++k) {
        double const d = std::abs(s.coordinates(i, k) - s.coordinates(j, k));
        squared += std::pow(std::min(d, 1.0 - d), 2);
      }
      pairs += squared < r * r;
    }
  return pairs;
}

// Clustered far beyond chance, on the scale of the top clumps and deep
// inside them. The margins are wide, so no seed fails: over 300 seeds the
// counts' variance in 16^3 cells ran from 65 to 124 times Poisson's, and the
// pairs closer than 0.002 from 4000 to 7300 times the uniform expectation;
// the assertions ask for 20 and 100 times.
TYPED_TEST(ClusteredBoxGenerator, IsStronglyClustered) {
  constexpr Index n = 20000;
  for (std::uint64_t s : {seed, seed + 1, std::uint64_t{7}}) {
    auto const box = clustered_box(TypeParam{}, n, s);
    EXPECT_GT(counts_in_cells_variance_ratio(box, 16), 20.0) << "seed " << s;
    // A uniform set's 4000 bodies have 4000 * 3999 / 2 * 4/3 pi r^3 = 0.27 such pairs.
    constexpr std::size_t m = 4000;
    constexpr double r = 0.002;
    double const uniform_pairs = m * (m - 1.0) / 2 * 4.0 / 3.0 * pi * r * r * r;
    EXPECT_GT(pairs_closer_than(box, m, r), 100 * uniform_pairs) << "seed " << s;
  }
}

// Top clumps of very different sizes: radii log-uniform in [0.02, 0.2].
TEST(ClusteredBoxHierarchy, TopClumpsSpanTheirRangeOfRadii) {
  for (std::uint64_t s : {seed, seed + 1, std::uint64_t{7}}) {
    auto const tops = detail::draw_top_spheres(s);
    ASSERT_EQ(tops.size(), 64u);
    double smallest = 1.0, largest = 0.0;
    for (auto const& top : tops) {
      for (double x : top.centre) {
        EXPECT_GE(x, 0.0);
        EXPECT_LT(x, 1.0);
      }
      smallest = std::min(smallest, top.radius);
      largest = std::max(largest, top.radius);
    }
    EXPECT_GE(smallest, 0.02) << "seed " << s;
    EXPECT_LE(largest, 0.2) << "seed " << s;
    // 64 log-uniform draws all within a factor 4 of each other: chance < 1e-12.
    EXPECT_GT(largest, 4 * smallest) << "seed " << s;
  }
  // Wrapped into [0, 1), below 1 also as a float.
  for (double x : {-1e-300, -1e-17, -0.3, 1.0, 1.0 - 1e-17, 1.0 - 0x1.0p-25, 1.3, 0.5}) {
    double const wrapped = detail::wrap_into_unit_interval(x);
    EXPECT_GE(wrapped, 0.0) << x;
    EXPECT_LT(wrapped, 1.0) << x;
    EXPECT_LT(static_cast<float>(wrapped), 1.0f) << x;
  }
  EXPECT_EQ(detail::wrap_into_unit_interval(1.25), 0.25);
  EXPECT_EQ(detail::wrap_into_unit_interval(-0.25), 0.75);
}

template <class Space>
class GeneratorArguments : public ::testing::Test {};
TYPED_TEST_SUITE(GeneratorArguments, treetrav::test::HostExecutionSpaces,
                 treetrav::test::SpaceName);

TYPED_TEST(GeneratorArguments, InvalidArgumentsThrowNamingTheArgument) {
  TypeParam space;
  double const nan = std::numeric_limits<double>::quiet_NaN();
  expect_input_error([&] { uniform(space, 0, 3, seed); }, "n must be >= 1");
  expect_input_error([&] { uniform(space, -5, 3, seed); }, "n must be >= 1");
  expect_input_error([&] { uniform(space, 10, 0, seed); },
                     "dimension must be in [1, " + std::to_string(max_dimension) + "]");
  expect_input_error([&] { uniform(space, 10, max_dimension + 1, seed); }, "dimension");
  expect_input_error([&] { clustered(space, 0, 3, 4, 0.1, seed); }, "n must be >= 1");
  expect_input_error([&] { clustered(space, 10, max_dimension + 1, 4, 0.1, seed); }, "dimension");
  expect_input_error([&] { clustered(space, 10, 3, 0, 0.1, seed); }, "clusters must be >= 1");
  expect_input_error([&] { clustered(space, 10, 3, 4, 0.0, seed); }, "width must be positive");
  expect_input_error([&] { clustered(space, 10, 3, 4, -1.0, seed); }, "width");
  expect_input_error([&] { clustered(space, 10, 3, 4, nan, seed); }, "width");
  expect_input_error([&] { from_preset(space, "mnist7", 0, seed); }, "n must be >= 1");
  expect_input_error([&] { plummer(space, 0, seed); }, "n must be >= 1");
  expect_input_error([&] { hernquist(space, 0, seed); }, "n must be >= 1");
  expect_input_error([&] { clustered_box(space, 0, seed); }, "n must be >= 1");
  expect_input_error([&] { clustered_box(space, -3, seed); }, "n must be >= 1");
}

TYPED_TEST(GeneratorArguments, SmallestValidArgumentsWork) {
  TypeParam space;
  EXPECT_EQ(uniform(space, 1, 1, seed).size(), 1);
  EXPECT_EQ(uniform(space, 1, max_dimension, seed).dimension(), max_dimension);
  EXPECT_EQ(clustered(space, 1, 1, 1, 1e-6, seed).size(), 1);
  auto const single = plummer(space, 1, seed);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single.masses(0), 1.0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(single.coordinates(0, k), 0.0);  // its own centre of mass
  auto const lone = clustered_box(space, 1, seed);
  ASSERT_EQ(lone.size(), 1u);
  EXPECT_EQ(lone.masses(0), 1.0);
}

}  // namespace
}  // namespace treetrav::generators
