#pragma once

#include <treetrav/schedule/hybrid.hpp>
#include <treetrav/traversal/traverse.hpp>

#include <limits>
#include <stdexcept>
#include <string>

namespace treetrav::detail {

// How many top-tree leaves a guided profile records per query: enough to split
// buckets down to a warp; later visits rarely separate queries further.
inline constexpr int guided_profile_length = 16;

template <class ExecutionSpace, class Topology, class Visitor, class Placement>
void traverse_hybrid(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                     Hybrid const& strategy,
                     TraversalMetrics<typename Topology::memory_space> const& metrics,
                     Placement const& placement) {
  using MemorySpace = typename Topology::memory_space;
  Kokkos::Profiling::pushRegion("treetrav::traverse::hybrid");
  HybridTimings timings;
  timings.depth = strategy.depth > 0 ? strategy.depth : automatic_profile_depth(Topology::arity);
  Index const queries = visitor.query_count();
  Kokkos::Timer timer;
  auto lap = [&](double& phase) {
    space.fence();
    phase = timer.seconds();
    timer.reset();
  };

  // 1. Profile: the top tree only, recording into the scheduling matrix.
  Kokkos::Profiling::pushRegion("treetrav::hybrid::profile");
  SchedulingMatrix matrix;
  auto const column = TopTreeColumnCache<Topology>::instance().get(
      space, topology, timings.depth, matrix.columns);
  if (Visitor::guided && matrix.columns >= std::numeric_limits<std::uint16_t>::max())
    throw std::invalid_argument("hybrid: profiling depth " + std::to_string(timings.depth) +
                                " gives " + std::to_string(matrix.columns) +
                                " top-tree leaves; a guided profile holds fewer than " +
                                std::to_string(std::numeric_limits<std::uint16_t>::max()));
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, MemorySpace> reached(
      "treetrav::SchedulingMatrix::reached", Visitor::guided ? 0 : queries,
      (matrix.columns + 31) / 32);
  Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, MemorySpace> sequence(
      "treetrav::SchedulingMatrix::sequence", Visitor::guided ? queries : 0, guided_profile_length);
  traverse(space, topology,
           ProfilingVisitor<Visitor, Visitor::guided>{visitor, column, reached, sequence},
           Autoropes{});
  lap(timings.profile);
  Kokkos::Profiling::popRegion();

  // 2. Transfer: only the matrix comes back.
  matrix.reached = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, reached);
  matrix.sequence = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sequence);
  lap(timings.transfer);

  // 3. Schedule on the host.
  Kokkos::Profiling::pushRegion("treetrav::hybrid::schedule");
  Kokkos::DefaultHostExecutionSpace const host;
  auto schedule = Visitor::guided ? guided_schedule(host, matrix, strategy.warp_size)
                                  : sandpile_schedule(host, matrix);
  Kokkos::View<Index*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host_order(
      schedule.data(), schedule.size());
  auto order = Kokkos::create_mirror_view_and_copy(space, host_order);
  lap(timings.schedule);
  Kokkos::Profiling::popRegion();

  // 4. Execute the whole traversal with the FSM lockstep kernel.
  traverse(space, topology, visitor, placed(FsmLockstep{strategy.warp_size}, placement),
           Kokkos::View<Index const*, MemorySpace>(order), metrics);
  lap(timings.execute);
  if (strategy.timings)
    *strategy.timings = timings;
  Kokkos::Profiling::popRegion();
}

} // namespace treetrav::detail
