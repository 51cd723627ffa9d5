#pragma once

// How a strategy's kernels reach the execution space: the Launcher every
// strategy's launch() is handed runs work items under the hardware's
// placement (a plain launch) or a software placement (the SM-centric
// transformation, schedule/detail/placement_plan.hpp).
#include <treetrav/core/backends.hpp>
#include <treetrav/schedule/detail/placement_plan.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/detail/lockstep_kernels.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/core/workspace.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace treetrav::detail {

// The profiler's and the kernels' region name: "treetrav::traverse::<strategy>",
// with "@<placement>" under a software placement.
template <class Placement>
std::string traversal_label(char const* strategy) {
  std::string label = std::string("treetrav::traverse::") + strategy;
  if constexpr (!std::is_same_v<Placement, Hardware>)
    label += std::string("@") + Placement::name;
  return label;
}

template <class ExecutionSpace, class Placement>
struct Launcher {
  ExecutionSpace space;
  Placement placement;
  Workspace* workspace; // the placement's plans live there
  std::string label;

  // The same launcher for another strategy's kernels (hybrid's execute phase).
  Launcher relabeled(char const* strategy) const {
    return {space, placement, workspace, traversal_label<Placement>(strategy)};
  }

  // The hardware's launch, for runs that record metrics. A placement moves
  // whole work items (warps) between SMs, not the work within them, so the
  // per-warp visits are the same under every placement; the placed kernels
  // are then compiled without metrics (they were a quarter of a GPU search's
  // kernels). The label keeps the placement asked for.
  Launcher<ExecutionSpace, Hardware> unplaced() const { return {space, {}, workspace, label}; }

  // body(i) for every work item i < extent, each serving `queries_per_item`
  // query slots of `order`.
  template <class Topology, class Visitor, class Body>
  void run_items(Topology const& topology, Visitor const& visitor,
                 Kokkos::View<Index const*, typename Topology::memory_space> order,
                 Body const& body, Index extent, int queries_per_item) const {
    if constexpr (std::is_same_v<Placement, Hardware>) {
      (void)topology, (void)visitor, (void)order, (void)queries_per_item;
      // Queries differ widely in work: hand them out dynamically on the host.
      // The functor travels as a kernel argument (Kokkos 3's constant-memory
      // launch of larger functors would serialise kernels on different streams).
      Kokkos::parallel_for(label,
                           as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace,
                                                                  Kokkos::Schedule<Kokkos::Dynamic>>(
                               space, 0, extent)),
                           body);
    } else {
      run_placed(space, label, topology, visitor, order, body, extent, queries_per_item,
                 placement, *workspace);
    }
  }
};

// A lockstep walk (Lockstep, FsmLockstep): one warp per `warp_size` work
// items on host backends (emulated lanes), 32 CUDA lanes on the GPU.
template <bool Fsm, class Launch, class Topology, class Visitor>
void launch_lockstep(Launch const& launcher, Topology const& topology, Visitor const& visitor,
                     int warp_size,
                     Kokkos::View<Index const*, typename Topology::memory_space> order,
                     TraversalMetrics<typename Topology::memory_space> const& metrics) {
  using ExecutionSpace = decltype(launcher.space);
  auto run = [&](auto const& launcher, auto measure) {
    LockstepKernel<Topology, Visitor, Fsm, decltype(measure)::value> kernel{topology, visitor,
                                                                            order, metrics};
    Index const queries = work_count(visitor, order);
    if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
      Index const warps = (queries + 31) / 32;
      launcher.run_items(topology, visitor, order, CudaWarpLaunch<decltype(kernel)>{kernel},
                         warps * 32, 1);
#endif
    } else {
      if (warp_size < 1 || warp_size > HostWarp::max_size)
        throw std::invalid_argument("lockstep warp size must be in [1, 32]");
      Index const warps = (queries + warp_size - 1) / warp_size;
      launcher.run_items(topology, visitor, order,
                         HostWarpLaunch<decltype(kernel)>{kernel, warp_size}, warps, warp_size);
    }
  };
  // Kernels without metrics are instantiated apart, so timed runs pay nothing;
  // those with metrics under the hardware's placement only (unplaced()).
  if (metrics.enabled())
    run(launcher.unplaced(), std::true_type{});
  else
    run(launcher, std::false_type{});
}

} // namespace treetrav::detail
