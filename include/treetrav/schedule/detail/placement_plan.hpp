#pragma once

// Building the chunk-to-SM plans of the software placements (dealt in turn,
// contiguous, affinity) and running a traversal kernel's work items under them.
#include <treetrav/schedule/hybrid.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/schedule/detail/sm_centric_launch.hpp>
#include <treetrav/core/workspace.hpp>

#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

namespace treetrav::detail {

// The top-tree node set of each job chunk (§5.2's "data blocks accessed"):
// the union over the chunk's queries of the top-tree leaves each reaches in
// the hybrid profile (guided visitors: the first leaves of its walk). Chunk c
// holds the query slots [c * slots_per_chunk, (c + 1) * slots_per_chunk) of
// `order`. Returns (chunks, words) bit sets on the host.
template <class ExecutionSpace, class Topology, class Visitor>
Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, Kokkos::HostSpace>
chunk_node_sets(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                Kokkos::View<Index const*, typename Topology::memory_space> order, int depth,
                Index chunks, Index slots_per_chunk, ::treetrav::Workspace& workspace) {
  Kokkos::Profiling::pushRegion("treetrav::placement::profile");
  if (depth <= 0)
    depth = automatic_profile_depth(Topology::arity);
  auto const profile = profile_top_tree(space, topology, visitor, depth, workspace);
  int const columns = profile.columns;
  auto const host_profile = profile.to_host();
  auto const& host_reached = host_profile.reached;
  auto const& host_sequence = host_profile.sequence;
  auto const host_order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, order);
  Index const slots = work_count(visitor, host_order);
  int const words = (columns + 31) / 32;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, Kokkos::HostSpace> sets(
      "treetrav::ChunkNodeSets::sets", chunks, words);
  Kokkos::parallel_for(
      "treetrav::placement::chunk_sets",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks), [&](Index c) {
        Index const end = std::min<std::int64_t>(std::int64_t(c + 1) * slots_per_chunk, slots);
        for (Index slot = c * slots_per_chunk; slot < end; ++slot) {
          Index const q = query_at(host_order, slot);
          if constexpr (Visitor::guided) {
            for (int i = 0; i < guided_profile_length && host_sequence(q, i) != 0; ++i) {
              int const col = host_sequence(q, i) - 1;
              sets(c, col / 32) |= std::uint32_t(1) << (col % 32);
            }
          } else {
            for (int w = 0; w < words; ++w)
              sets(c, w) |= host_reached(q, w);
          }
        }
      });
  Kokkos::Profiling::popRegion();
  return sets;
}

template <class Placement>
bool uses_affinity(Placement const& placement) {
  if constexpr (std::is_same_v<Placement, Affinity>)
    return true;
  else if constexpr (std::is_same_v<Placement, Persistent>)
    return placement.affinity;
  else
    return false;
}

// A placement's plan, kept in the caller's Workspace between calls (a
// benchmark's repeats reuse it). The key says when it must be rebuilt: it
// covers the tree's and the queries' shapes and types, not their values, so
// the caller clears the workspace before it serves another tree or query set
// of the same shapes.
template <class Placement, class MemorySpace>
struct PlanCache {
  bool ready = false;
  std::size_t key = 0;
  SmCentricPlan<MemorySpace> plan;
};

template <class ExecutionSpace, class Topology, class Visitor, class Body, class Placement>
void run_placed(ExecutionSpace const& space, std::string const& label, Topology const& topology,
                Visitor const& visitor,
                Kokkos::View<Index const*, typename Topology::memory_space> order, Body const& body,
                Index extent, int queries_per_item, Placement const& placement,
                ::treetrav::Workspace& workspace) {
  using MemorySpace = typename Topology::memory_space;
  constexpr bool persistent = std::is_same_v<Placement, Persistent>;
  PlacementOptions const& options = placement.options;
  int const sms = sm_partition(space, options, workspace).second;
  // Persistent threads take the largest block the kernel allows (§6.1).
  int largest_team = 1024;
  PlacementOptions sized = options;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    CudaWorkers<Body, MemorySpace> const probe{{body, {}, 1, 1, persistent}, {}, 0};
    largest_team =
        Kokkos::Experimental::require(Kokkos::TeamPolicy<ExecutionSpace>(space, 1, 1),
                                      Kokkos::Experimental::WorkItemProperty::HintLightWeight)
            .team_size_max(probe, Kokkos::ParallelForTag());
    if (persistent && sized.chunk_queries <= 0)
      sized.chunk_queries = largest_team;
#endif
  }
  int const items = chunk_items<ExecutionSpace>(sized, queries_per_item, largest_team);
  Index const chunks = (extent + items - 1) / items;
  int depth = 0;
  double threshold = 0;
  std::uint64_t seed = 0;
  if constexpr (!std::is_same_v<Placement, SmCentric>)
    depth = placement.depth, threshold = placement.threshold, seed = placement.seed;
  bool const affinity = uses_affinity(placement);
  // What the plan depends on.
  std::size_t key = typeid(MemorySpace).hash_code();
  for (std::size_t part :
       {typeid(Topology).hash_code(), typeid(Visitor).hash_code(), std::size_t(topology.size()),
        std::size_t(extent), std::size_t(items), std::size_t(options.first_sm), std::size_t(sms),
        std::size_t(reinterpret_cast<std::uintptr_t>(order.data())),
        std::size_t(visitor.query_count()), std::size_t(depth), std::hash<double>{}(threshold),
        std::size_t(seed), std::size_t(affinity)})
    key = key * 1000003u ^ part;

  PlacementReport* const report = options.report;
  if (report)
    report->plan_seconds = 0;
  auto& kept = workspace.get<PlanCache<Placement, MemorySpace>>();
  if (!kept.ready || kept.key != key) {
    Kokkos::Profiling::pushRegion("treetrav::placement::plan");
    Kokkos::Timer timer;
    std::vector<int> sm_of_chunk(chunks);
    if (affinity) {
      auto const sets = chunk_node_sets(space, topology, visitor, order, depth, chunks,
                                        Index(items) * queries_per_item, workspace);
      sm_of_chunk = affinity_clusters(sets, sms, threshold, seed);
    } else if constexpr (std::is_same_v<Placement, SmCentric>) {
      // Dealt to the SMs in turn, as the hardware hands out blocks: the
      // transformation alone (§6.4), no SM holding a whole dense region.
      for (Index c = 0; c < chunks; ++c)
        sm_of_chunk[c] = static_cast<int>(c % sms);
    } else {
      // Persistent threads' one queue in chunk order.
      for (Index c = 0; c < chunks; ++c)
        sm_of_chunk[c] = static_cast<int>(std::int64_t(c) * sms / chunks);
    }
    kept.plan = make_plan<ExecutionSpace, MemorySpace>(space, sm_of_chunk, sms, items, extent);
    space.fence();
    if (report)
      report->plan_seconds = timer.seconds();
    kept.key = key;
    kept.ready = true;
    Kokkos::Profiling::popRegion();
  }
  SmCentricPlan<MemorySpace> plan = kept.plan;
  bool const count = report && report->count_chunks;
  if (count) {
    plan.chunk_runs =
        Kokkos::View<int*, MemorySpace>("treetrav::SmCentricPlan::chunk_runs", chunks);
    plan.chunk_sm = Kokkos::View<int*, MemorySpace>("treetrav::SmCentricPlan::chunk_sm", chunks);
  }
  launch_workers(space, label, body, plan, options, persistent, workspace);
  if (count) {
    auto const runs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.chunk_runs);
    auto const ran_on = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.chunk_sm);
    auto const sequence = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.chunks);
    auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, plan.offsets);
    report->chunk_runs.assign(runs.data(), runs.data() + chunks);
    report->moved_chunks = 0;
    for (int s = 0; s < sms; ++s)
      for (Index i = offsets(s); i < offsets(s + 1); ++i)
        report->moved_chunks += ran_on(sequence(i)) != s;
  }
}

} // namespace treetrav::detail
