#pragma once

#include <treetrav/schedule/hybrid.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/traversal/strategies/fsm.hpp>
#include <treetrav/core/workspace.hpp>


namespace treetrav {

// Wall-clock breakdown of one hybrid traversal, in seconds.
struct HybridTimings {
  double profile = 0, transfer = 0, schedule = 0, execute = 0;
  int depth = 0;
  double total() const { return profile + transfer + schedule + execute; }
  // Into a results file's metadata: sink.set(name, value) for each.
  template <class Sink>
  void record(Sink& sink) const {
    sink.set("hybrid_depth", double(depth));
    sink.set("hybrid_profile_s", profile);
    sink.set("hybrid_transfer_s", transfer);
    sink.set("hybrid_schedule_s", schedule);
    sink.set("hybrid_execute_s", execute);
  }
};

// Hybrid inspector-executor scheduling (Liu et al. §4): profile the top
// `depth` levels of every traversal, schedule the queries on the host from
// that profile, execute with FsmLockstep in the new order. depth 0: automatic.
// `timings`, when set, receives the breakdown. The schedule replaces any
// order the caller gave; a placement applies to the execute phase.
struct Hybrid {
  static constexpr char const* name = "hybrid";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  static constexpr bool placeable = true;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = false;
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = true;
  bool records_metrics() const { return true; }
  using timings_type = HybridTimings;

  int depth = 0;
  int warp_size = 32;
  HybridTimings* timings = nullptr;
  Workspace* workspace = nullptr; // the top tree's column maps

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space>,
              TraversalMetrics<typename Topology::memory_space> const& metrics,
              Workspace& scratch, Launcher const& launcher) const {
    using MemorySpace = typename Topology::memory_space;
    HybridTimings measured;
    measured.depth = depth > 0 ? depth : detail::automatic_profile_depth(Topology::arity);
    Kokkos::Timer timer;
    auto lap = [&](double& phase) {
      space.fence();
      phase = timer.seconds();
      timer.reset();
    };
    // 1. Profile: the top tree only. 2. Transfer: only the matrix comes back.
    Kokkos::Profiling::pushRegion("treetrav::hybrid::profile");
    auto profile = detail::profile_top_tree(space, topology, visitor, measured.depth, scratch);
    lap(measured.profile);
    Kokkos::Profiling::popRegion();
    auto const matrix = profile.to_host();
    lap(measured.transfer);

    // 3. Schedule on the host.
    Kokkos::Profiling::pushRegion("treetrav::hybrid::schedule");
    Kokkos::DefaultHostExecutionSpace const host;
    auto schedule = Visitor::guided ? guided_schedule(host, matrix, warp_size)
                                    : sandpile_schedule(host, matrix);
    Kokkos::View<Index*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host_order(
        schedule.data(), schedule.size());
    auto order = Kokkos::create_mirror_view_and_copy(space, host_order);
    lap(measured.schedule);
    Kokkos::Profiling::popRegion();

    // 4. Execute the whole traversal with the FSM lockstep kernel.
    FsmLockstep{warp_size}.launch(space, topology, visitor,
                                  Kokkos::View<Index const*, MemorySpace>(order), metrics,
                                  scratch, launcher.relabeled(FsmLockstep::name));
    lap(measured.execute);
    if (timings)
      *timings = measured;
  }
};

} // namespace treetrav
