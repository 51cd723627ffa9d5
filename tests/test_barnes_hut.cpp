// Barnes-Hut accelerations against direct O(N^2) summation on a Plummer sphere.
#include "execution_spaces.hpp"
#include "oracles.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>

namespace {

using namespace treetrav;

template <class Space>
class BarnesHut : public ::testing::Test {};
TYPED_TEST_SUITE(BarnesHut, test::ExecutionSpaces, test::SpaceName);

struct Bodies {
  test::HostPoints positions;
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses;
  std::vector<double> masses_double;
};

Bodies plummer_bodies(Index n) {
  auto snapshot = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, n, 42);
  Bodies b{test::plummer_positions(n, 42), Kokkos::View<Coordinate*, Kokkos::HostSpace>("test::masses", n), {}};
  for (Index i = 0; i < n; ++i) {
    b.masses(i) = static_cast<Coordinate>(snapshot.masses(i));
    b.masses_double.push_back(b.masses(i));
  }
  return b;
}

// sqrt(sum |a - a_ref|^2 / sum |a_ref|^2)
template <class Host>
double relative_rms_error(Host const& acc, std::vector<double> const& reference) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < acc.extent(0); ++i)
    for (int k = 0; k < 3; ++k) {
      double const diff = acc(i, k) - reference[i * 3 + k];
      error += diff * diff;
      norm += reference[i * 3 + k] * reference[i * 3 + k];
    }
  return std::sqrt(error / norm);
}

template <class Space, class Strategy>
auto accelerations(Space const& space, Bodies const& b, Coordinate theta, Coordinate softening, Strategy strategy,
                   int leaf_capacity = 8) {
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<typename Space::memory_space> tree(space, bodies, masses, leaf_capacity);
  return Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace{}, barnes_hut_accelerations(space, tree, bodies, {theta, softening, 1.0f}, strategy));
}

TYPED_TEST(BarnesHut, AccuracyImprovesAsThetaShrinks) {
  TypeParam space;
  auto b = plummer_bodies(10000);
  Coordinate const softening = 0.01f;
  auto reference = test::direct_accelerations(b.positions, b.masses_double, softening, 1.0);
  test::for_each_strategy<TypeParam>([&](auto strategy) {
    double const error_05 = relative_rms_error(accelerations(space, b, 0.5f, softening, strategy), reference);
    double const error_03 = relative_rms_error(accelerations(space, b, 0.3f, softening, strategy), reference);
    EXPECT_LT(error_05, 1e-2) << test::strategy_name(strategy);
    EXPECT_LT(error_03, error_05) << test::strategy_name(strategy);
  });
}

TYPED_TEST(BarnesHut, ThetaZeroIsDirectSummation) {
  TypeParam space;
  auto b = plummer_bodies(2000);
  auto reference = test::direct_accelerations(b.positions, b.masses_double, 0.0, 1.0);
  test::for_each_strategy<TypeParam>([&](auto strategy) {
    auto acc = accelerations(space, b, 0.0f, 0.0f, strategy, 4);
    // Only float rounding separates the tree's sum from the double reference.
    for (std::size_t i = 0; i < acc.extent(0); ++i) {
      double norm = 0, diff = 0;
      for (int k = 0; k < 3; ++k) {
        norm += reference[i * 3 + k] * reference[i * 3 + k];
        diff += (acc(i, k) - reference[i * 3 + k]) * (acc(i, k) - reference[i * 3 + k]);
      }
      ASSERT_LT(std::sqrt(diff / norm), 2e-5) << "body " << i << " " << test::strategy_name(strategy);
    }
  });
}

TYPED_TEST(BarnesHut, StrategiesAgreeBitwise) {
  TypeParam space;
  auto b = plummer_bodies(3000);
  auto autoropes = accelerations(space, b, 0.5f, 0.01f, Autoropes{});
  test::for_each_strategy<TypeParam>([&](auto strategy) {
    auto acc = accelerations(space, b, 0.5f, 0.01f, strategy);
    int mismatches = 0;
    for (std::size_t i = 0; i < acc.extent(0); ++i)
      for (int k = 0; k < 3; ++k) mismatches += acc(i, k) != autoropes(i, k);
    EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy);
  });
}

TYPED_TEST(BarnesHut, BadArgumentsAreInputErrors) {
  TypeParam space;
  auto b = plummer_bodies(100);
  auto bodies = copy_points(space, b.positions, "test::bodies");
  auto masses = Kokkos::create_mirror_view_and_copy(space, b.masses);
  Octree<typename TypeParam::memory_space> tree(space, bodies, masses, 8);
  EXPECT_THROW(barnes_hut_accelerations(space, tree, bodies, {-0.1f, 0.0f, 1.0f}, Autoropes{}), InputError);
  EXPECT_THROW(barnes_hut_accelerations(space, tree, bodies, {0.5f, -1.0f, 1.0f}, Autoropes{}), InputError);
  auto flat = copy_points(space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 100, 2, 1), "flat");
  EXPECT_THROW((Octree<typename TypeParam::memory_space>(space, flat, masses, 8)), InputError);
}

}  // namespace
