// Sorted ("sfc") query orders: a permutation, the same on every backend, and
// results identical to the unsorted run in the caller's order.
#include "execution_spaces.hpp"
#include "test_inputs.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/bvh.hpp>

#include <set>

namespace {

using namespace treetrav;

template <class Space>
class SfcOrder : public ::testing::Test {};
TYPED_TEST_SUITE(SfcOrder, test::ExecutionSpaces, test::SpaceName);

TYPED_TEST(SfcOrder, IsAPermutationInMortonOrderAndKeepsResults) {
  TypeParam space;
  auto host_queries = generators::clustered(Kokkos::DefaultHostExecutionSpace{}, 3000, 7, 10, 0.05, 9);
  auto queries = copy_points(space, host_queries, "test::queries");
  auto order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, morton_order(space, queries));
  std::set<Index> seen(order.data(), order.data() + order.extent(0));
  ASSERT_EQ(seen.size(), std::size_t(3000));
  EXPECT_EQ(*seen.rbegin(), 2999);
  // The same order as the serial host computation, whatever the backend.
  auto reference_order = morton_order(Kokkos::DefaultHostExecutionSpace{}, host_queries);
  for (Index i = 0; i < 3000; ++i) ASSERT_EQ(order(i), reference_order(i)) << i;
  // Sorting changes which lane serves which query, never the answers.
  Bvh<typename TypeParam::memory_space> tree(
      space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 4000, 7, 10), 8);
  auto device_order = Kokkos::create_mirror_view_and_copy(space, order);
  test::for_each_strategy<TypeParam>([&](auto strategy) {
    auto unsorted = find_neighbors(space, tree, queries, {4, false}, strategy);
    auto sorted = find_neighbors(space, tree, queries, {4, false}, strategy, device_order);
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, unsorted.indices);
    auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sorted.indices);
    int mismatches = 0;
    for (Index q = 0; q < 3000; ++q)
      for (int j = 0; j < 4; ++j) mismatches += a(q, j) != b(q, j);
    EXPECT_EQ(mismatches, 0) << test::strategy_name(strategy);
  });
}

TYPED_TEST(SfcOrder, LockstepMetricsCountEachLanesOwnVisits) {
  TypeParam space;
  auto host_queries = generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 1000, 3, 3);
  auto queries = copy_points(space, host_queries, "test::queries");
  Bvh<typename TypeParam::memory_space> tree(
      space, generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 5000, 3, 4), 8);
  using Memory = typename TypeParam::memory_space;
  // Unguided PC: both lockstep kernels visit exactly each query's own nodes.
  auto lockstep = allocate_metrics<Memory>(1000, warp_count<TypeParam>(Lockstep{}, 1000));
  auto fsm = allocate_metrics<Memory>(1000, warp_count<TypeParam>(FsmLockstep{}, 1000));
  count_within(space, tree, queries, {0.05f, false}, Lockstep{}, {}, lockstep);
  count_within(space, tree, queries, {0.05f, false}, FsmLockstep{}, {}, fsm);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lockstep.query_visits);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, fsm.query_visits);
  auto warps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, fsm.warp_visits);
  for (Index q = 0; q < 1000; ++q) {
    ASSERT_EQ(a(q), b(q)) << q;
    ASSERT_GE(a(q), 1) << q;
    ASSERT_LE(a(q), warps(q / 32)) << "a lane cannot visit more nodes than its warp";
  }
}

}  // namespace
