#pragma once

// The SM-centric transformation (Wu et al. ICS15 §3) of any traversal kernel:
// the kernel's per-work-item functor (what a RangePolicy would run for each
// index) is run by filling-retreating workers that pick their job chunks by
// the SM they landed on, claiming them one at a time from their SM's share.
// Kernels are not copied: only the mapping from workers to work items changes.
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/core/workspace.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace treetrav::detail {

// The device side of a placement: which chunks each SM runs, and the counters
// of filling-retreating and of claiming. A chunk is `chunk_items` consecutive
// work items.
template <class MemorySpace>
struct SmCentricPlan {
  Kokkos::View<Index*, MemorySpace> chunks; // chunk ids, SM by SM
  Kokkos::View<Index*, MemorySpace>
      offsets; // (sms + 1): SM s runs chunks(offsets(s) .. offsets(s + 1))
  // (2 sms + 2), zero between launches: [0, sms) workers that landed on each
  // SM; [sms, 2 sms) each SM's claim cursor (chunks of its share handed
  // out); 2 sms: the cursor of persistent threads (one queue over all
  // chunks); 2 sms + 1: workers that exited.
  Kokkos::View<unsigned*, MemorySpace> counters;
  Kokkos::View<int*, MemorySpace> chunk_runs; // optional (PlacementReport::count_chunks)
  Kokkos::View<int*, MemorySpace> chunk_sm;   // optional: the SM whose worker ran each chunk
  int sms = 0;
  int chunk_items = 0;
  Index extent = 0; // work items
};

// The plan for `sm_of_chunk` (the SM, in [0, sms), of each chunk): a counting
// sort of the chunks by SM, chunk order kept within an SM.
template <class ExecutionSpace, class MemorySpace>
SmCentricPlan<MemorySpace> make_plan(ExecutionSpace const& space,
                                     std::vector<int> const& sm_of_chunk, int sms, int chunk_items,
                                     Index extent) {
  SmCentricPlan<MemorySpace> plan;
  plan.sms = sms;
  plan.chunk_items = chunk_items;
  plan.extent = extent;
  Index const chunks = static_cast<Index>(sm_of_chunk.size());
  Kokkos::View<Index*, Kokkos::HostSpace> offsets("treetrav::SmCentricPlan::offsets", sms + 1);
  for (int s : sm_of_chunk)
    ++offsets(s + 1);
  for (int s = 0; s < sms; ++s)
    offsets(s + 1) += offsets(s);
  Kokkos::View<Index*, Kokkos::HostSpace> sequence(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::SmCentricPlan::chunks"), chunks);
  std::vector<Index> next(offsets.data(), offsets.data() + sms);
  for (Index c = 0; c < chunks; ++c)
    sequence(next[sm_of_chunk[c]]++) = c;
  plan.chunks = Kokkos::create_mirror_view_and_copy(space, sequence);
  plan.offsets = Kokkos::create_mirror_view_and_copy(space, offsets);
  // Zero once here; the last worker of every launch zeroes them again.
  plan.counters =
      Kokkos::View<unsigned*, MemorySpace>("treetrav::SmCentricPlan::counters", 2 * sms + 2);
  return plan;
}

// A worker's view of its threads: one host thread, or a CUDA team (CTA).
struct HostGroup {
  template <class F>
  KOKKOS_INLINE_FUNCTION unsigned leader(F const& f) const {
    return f();
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void single(F const& f) const {
    f();
  }
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class Body>
  KOKKOS_INLINE_FUNCTION void items(Index first, Index count, Body const& body) const {
    for (Index i = 0; i < count; ++i)
      body(first + i);
  }
};

template <class Member>
struct TeamGroup {
  Member const& team;
  // f() on the team's first thread, its value handed to every thread.
  template <class F>
  KOKKOS_INLINE_FUNCTION unsigned leader(F const& f) const {
    unsigned value = 0;
    if (team.team_rank() == 0)
      value = f();
    team.team_broadcast(value, 0);
    return value;
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION void single(F const& f) const {
    if (team.team_rank() == 0)
      f();
  }
  // Thread t runs item first + t: warps keep their lanes, so lockstep kernels
  // see the same warps as in their own launch.
  template <class Body>
  KOKKOS_INLINE_FUNCTION void items(Index first, Index count, Body const& body) const {
    if (team.team_rank() < count)
      body(first + team.team_rank());
  }
};

// What every worker does (Figure 2 of the paper), on the SM `sm` of the
// kernel's partition (outside it: -1 or >= sms):
//  1. count itself on its SM (one atomic); past `target` workers the SM has
//     enough and it retreats at once (filling-retreating);
//  2. claim its SM's chunks one at a time from the SM's cursor (one atomic
//     per chunk of a few warps' work, not per job) until the share is
//     exhausted. Tree traversals' jobs differ in cost by orders of
//     magnitude, so the paper's fixed contiguous segment per worker
//     (Listing 1) left most workers idle behind the one with the dense
//     neighbourhood; claiming keeps every worker of the SM busy, and chunks
//     still never leave their SM;
//  3. with `steal` (not in the paper), a worker whose SM's share is exhausted
//     claims what is left of the other SMs' shares, the next SM first: the
//     SM holding the most expensive cluster no longer ends the kernel alone
//     while the others idle. Only the tail moves; claiming stays atomic, so
//     every chunk still runs once;
//  4. the last worker out drains the shares of SMs no worker landed on (none
//     with filling; a co-runner or a simulated scheduler may leave some), so
//     every chunk runs once whatever the hardware did, and zeroes the
//     counters for the next launch.
// `global` (persistent threads): every worker claims from one queue over all
// chunks in plan order, wherever it runs; none retreats.
template <class Body, class MemorySpace>
struct SmCentricCore {
  Body body;
  SmCentricPlan<MemorySpace> plan;
  unsigned target;   // active workers per SM
  unsigned launched; // workers in the launch
  bool global;
  bool steal;

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class Group>
  KOKKOS_INLINE_FUNCTION void run_chunk(Group const& group, Index position, int runner) const {
    Index const chunk = plan.chunks(position);
    Index const item = chunk * plan.chunk_items;
    Index const left = plan.extent - item;
    group.items(item, left < plan.chunk_items ? left : plan.chunk_items, body);
    if (plan.chunk_runs.extent(0) != 0)
      group.single([&] {
        Kokkos::atomic_add(&plan.chunk_runs(chunk), 1);
        plan.chunk_sm(chunk) = runner;
      });
  }

  // Claims and runs the chunks at positions [first, last) of the chunk array
  // through `cursor`, one at a time, until none is left.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class Group>
  KOKKOS_INLINE_FUNCTION void drain(Group const& group, int cursor, Index first, Index last,
                                    int runner) const {
    unsigned const count = static_cast<unsigned>(last - first);
    for (;;) {
      unsigned const next = group.leader([&] {
        // A plain read first: an exhausted share (every SM's, once workers
        // steal) costs no atomic. The fetch_add alone decides who runs what.
        unsigned volatile const& claimed = plan.counters(cursor);
        return claimed >= count ? count : Kokkos::atomic_fetch_add(&plan.counters(cursor), 1u);
      });
      if (next >= count)
        return;
      run_chunk(group, first + static_cast<Index>(next), runner);
    }
  }

  // The shares a worker drains, in order, through one call of drain(): every
  // call site of drain() inlines the whole traversal once more, and ptxas
  // compiled a placed kernel with four of them several times slower than one.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class Group>
  KOKKOS_INLINE_FUNCTION void run(Group const& group, int sm) const {
    int const sms = plan.sms;
    // Its own SM's share when it counts among the SM's first `target`.
    bool const own =
        !global && sm >= 0 && sm < sms &&
        group.leader([&] { return Kokkos::atomic_fetch_add(&plan.counters(sm), 1u); }) < target;
    bool last = false;     // the last worker out: it resets the counters
    bool sweeping = false; // and, but for persistent threads, drains every share
    for (int step = 0;; ++step) {
      int share; // the SM whose share is next; -1: the one queue; sms: none left
      if (sweeping)
        share = step < sms ? step : sms;
      else if (global)
        share = step == 0 ? -1 : sms;
      else if (own && (step == 0 || (steal && step < sms)))
        share = sm + step < sms ? sm + step : sm + step - sms;
      else
        share = sms;
      if (share == sms) {
        if (sweeping)
          break;
        last = group.leader([&] {
          Kokkos::memory_fence();
          return Kokkos::atomic_fetch_add(&plan.counters(2 * sms + 1), 1u) + 1 == launched ? 1u
                                                                                           : 0u;
        }) != 0;
        // Persistent threads drained the one queue before they got here.
        if (!last || global)
          break;
        sweeping = true;
        step = -1;
        continue;
      }
      bool const queue = share < 0;
      drain(group, queue ? 2 * sms : sms + share, queue ? 0 : plan.offsets(share),
            queue ? plan.offsets(sms) : plan.offsets(share + 1), sm);
    }
    if (last)
      group.single([&] {
        for (int i = 0; i < 2 * sms + 2; ++i)
          plan.counters(i) = 0;
      });
  }
};

// Host backends: a worker is one work item of a dynamic range; its "SM" is the
// thread it runs on (modulo the simulated SM count), or the simulated
// scheduler's choice.
template <class ExecutionSpace, class Body, class MemorySpace>
struct HostWorkers {
  SmCentricCore<Body, MemorySpace> core;
  Kokkos::View<int const*, Kokkos::HostSpace> simulated;
  Kokkos::Experimental::UniqueToken<ExecutionSpace> threads;
  int hardware_sms;
  int first_sm;

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  KOKKOS_INLINE_FUNCTION void operator()(Index worker) const {
    int sm = -1;
    if (simulated.extent(0) != 0) {
      sm = static_cast<std::size_t>(worker) < simulated.extent(0) ? simulated(worker) : -1;
    } else {
      int const thread = threads.acquire();
      threads.release(thread);
      sm = thread % hardware_sms;
    }
    core.run(HostGroup{}, sm < 0 ? -1 : sm - first_sm);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
KOKKOS_FORCEINLINE_FUNCTION int hardware_sm_id() {
#if defined(__CUDA_ARCH__)
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return static_cast<int>(id);
#else
  return 0;
#endif
}

// CUDA: a worker is a team (CTA) of chunk_items threads.
template <class Body, class MemorySpace>
struct CudaWorkers {
  SmCentricCore<Body, MemorySpace> core;
  Kokkos::View<int const*, MemorySpace> sm_of_id; // dense SM index of each %smid
  int first_sm;

  template <class Member>
  KOKKOS_FUNCTION void operator()(Member const& team) const {
    int const id = hardware_sm_id();
    int const sm = id < static_cast<int>(sm_of_id.extent(0)) ? sm_of_id(id) : -1;
    core.run(TeamGroup<Member>{team}, sm < 0 ? -1 : sm - first_sm);
  }
};

// %smid values need not be 0..SMs-1 (PTX does not promise it): a probe
// launch over every SM records the ids that occur; SM s of a placement is the
// s-th of them. Computed once per Workspace (the caller's, or the call's own).
struct CudaSmTable {
  Kokkos::View<int*, Kokkos::CudaSpace> sm_of_id;
  int sms = 0;
  cudaDeviceProp properties{};
  bool ready = false;
};

// The table of `workspace`, probed on first use. Compiled once, in the
// library (src/schedule/placement.cpp): defined here, its probe kernel and
// copies were compiled again by every unit that includes this header.
CudaSmTable const& cuda_sm_table(Kokkos::Cuda const& space, ::treetrav::Workspace& workspace);

// How many workers of `Functor` with `team` threads fit on one SM.
template <class Functor, class Policy>
int cuda_workers_per_sm(CudaSmTable const& table, int team) {
  int bound = std::min(table.properties.maxBlocksPerMultiProcessor,
                       table.properties.maxThreadsPerMultiProcessor / team);
#if KOKKOS_VERSION < 40000
  // Kokkos 3's launch: the kernel's registers, and its team shared memory
  // (a broadcast buffer of team + 2 doubles).
  using Driver = Kokkos::Impl::ParallelFor<Functor, Policy, Kokkos::Cuda>;
  cudaFuncAttributes const attributes =
      Kokkos::Impl::CudaParallelLaunch<Driver,
                                       typename Policy::launch_bounds>::get_cuda_func_attributes();
  bound = std::min(bound, Kokkos::Impl::cuda_max_active_blocks_per_sm(
                              table.properties, attributes, team, sizeof(double) * (team + 2)));
#endif
  // Elsewhere the bound from threads and blocks may overcount: workers past
  // what fits wait, then retreat or take what is left, so jobs still run once.
  return std::max(bound, 1);
}
#endif

// The number of SMs a placement sees on `space`: the GPU's, or the simulated
// host partitions (one per thread unless the options say).
template <class ExecutionSpace>
int hardware_sms(ExecutionSpace const& space, PlacementOptions const& options,
                 ::treetrav::Workspace& workspace) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    return cuda_sm_table(space, workspace).sms;
#endif
  }
  (void)workspace;
  return options.host_sms > 0 ? options.host_sms
                              : std::max(1, static_cast<int>(space.concurrency()));
}

// The partition [first_sm, first_sm + sms) of the options, checked.
template <class ExecutionSpace>
std::pair<int, int> sm_partition(ExecutionSpace const& space, PlacementOptions const& options,
                                 ::treetrav::Workspace& workspace) {
  int const total = hardware_sms(space, options, workspace);
  int const sms = options.sms > 0 ? options.sms : total - options.first_sm;
  if (options.first_sm < 0 || sms < 1 || options.first_sm + sms > total)
    throw std::invalid_argument("placement: SMs [" + std::to_string(options.first_sm) + ", " +
                                std::to_string(options.first_sm + sms) + ") are not within the " +
                                std::to_string(total) + " SMs of " + ExecutionSpace::name());
  return {options.first_sm, sms};
}

// Work items per chunk: CUDA threads per worker (whole warps, at most 1024 and
// what the kernel's registers allow), host items of `queries_per_item`.
template <class ExecutionSpace>
int chunk_items(PlacementOptions const& options, int queries_per_item, int largest_team) {
  int queries = options.chunk_queries;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
    if (queries <= 0)
      queries = 128;
    int const limit = std::max(32, std::min(1024, largest_team) / 32 * 32);
    return std::min(limit, (queries + 31) / 32 * 32);
  }
  if (queries <= 0)
    queries = 32;
  return std::max(1, queries / queries_per_item);
}

// Runs body(i) for every work item i < plan.extent exactly once, by
// filling-retreating workers on `space`. `persistent`: one worker per SM of
// the partition, all claiming from one queue (the plan's chunks, SM after
// SM) wherever they run.
template <class ExecutionSpace, class Body, class MemorySpace>
void launch_workers(ExecutionSpace const& space, std::string const& label, Body const& body,
                    SmCentricPlan<MemorySpace> const& plan, PlacementOptions const& options,
                    bool persistent, ::treetrav::Workspace& workspace) {
  auto const [first_sm, sms] = sm_partition(space, options, workspace);
  if (sms != plan.sms)
    throw std::logic_error("placement: the plan was made for another partition");
  PlacementReport* const report = options.report;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    auto const& table = cuda_sm_table(space, workspace);
    using Functor = CudaWorkers<Body, MemorySpace>;
    // Launched with the functor as a kernel argument: the constant-memory
    // launch Kokkos 3 picks for larger functors waits for the previous
    // kernel, which would serialise co-running kernels.
    auto const policy = Kokkos::Experimental::require(
        Kokkos::TeamPolicy<ExecutionSpace>(space, 1, plan.chunk_items),
        Kokkos::Experimental::WorkItemProperty::HintLightWeight);
    using Policy = std::decay_t<decltype(policy)>;
    int const fit = cuda_workers_per_sm<Functor, Policy>(table, plan.chunk_items);
    unsigned const target =
        persistent ? 1u
                   : static_cast<unsigned>(
                         options.workers_per_sm > 0 ? std::min(options.workers_per_sm, fit) : fit);
    // Filling: as many workers as fit on every SM of the device.
    unsigned const launched =
        persistent ? static_cast<unsigned>(sms) : static_cast<unsigned>(table.sms * fit);
    Functor functor{
        {body, plan, target, launched, persistent, options.steal}, table.sm_of_id, first_sm};
    Kokkos::parallel_for(label, Policy(space, static_cast<int>(launched), plan.chunk_items),
                         functor);
    if (report)
      report->workers_per_sm = static_cast<int>(target),
      report->launched = static_cast<int>(launched);
#endif
  } else {
    int const fit =
        4; // a host "SM" keeps a few workers, for the filling-retreating logic to matter
    unsigned const target =
        persistent
            ? 1u
            : static_cast<unsigned>(options.workers_per_sm > 0 ? options.workers_per_sm : fit);
    int const total = hardware_sms(space, options, workspace);
    unsigned const launched = persistent ? static_cast<unsigned>(sms)
                              : options.simulated_sms.empty()
                                  ? static_cast<unsigned>(total) * target
                                  : static_cast<unsigned>(options.simulated_sms.size());
    Kokkos::View<int*, Kokkos::HostSpace> simulated("treetrav::SmCentric::simulated",
                                                    options.simulated_sms.size());
    std::copy(options.simulated_sms.begin(), options.simulated_sms.end(), simulated.data());
    HostWorkers<ExecutionSpace, Body, MemorySpace> functor{
        {body, plan, target, launched, persistent, options.steal},
        simulated,
        Kokkos::Experimental::UniqueToken<ExecutionSpace>(space),
        total,
        first_sm};
    Kokkos::parallel_for(label,
                         Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
                             space, 0, Index(launched)),
                         functor);
    if (report)
      report->workers_per_sm = static_cast<int>(target),
      report->launched = static_cast<int>(launched);
  }
  if (report) {
    report->sms = sms;
    report->chunks = static_cast<Index>(plan.chunks.extent(0));
    report->chunk_items = plan.chunk_items;
  }
}

} // namespace treetrav::detail
