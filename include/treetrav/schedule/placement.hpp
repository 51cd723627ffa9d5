#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/config.hpp>
#include <treetrav/core/error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace treetrav {

// Placement: which SM runs which queries (Wu et al., "SM-centric program
// transformations", ICS15). A placement is a tag beside the strategy; every
// strategy runs under every placement, through the same kernels.
//  - Hardware: the kernel's own launch; the hardware scheduler places blocks.
//  - SmCentric (§3): filling-retreating workers (CTAs) read their SM's id and
//    claim job chunks (a CTA's worth of consecutive work items) one at a time
//    from that SM's section of a chunk array (one atomic cursor per SM);
//    chunks are dealt to the SMs in turn, as the hardware deals blocks.
//  - Affinity (§5.2): as SmCentric, the chunks grouped onto SMs by the Jaccard
//    similarity of the top-tree node sets their queries reach (profiled).
//  - Persistent (§6.1's baseline): one persistent worker per SM, as large as
//    the kernel allows, all claiming chunks from one queue (the affinity
//    clusters one after another), placed wherever the hardware puts them.
// On host backends an "SM" is a partition of the threads (the thread a worker
// runs on), so the same logic runs, and is tested, in CI.

// What a placed traversal did (diagnostics; tests check the counts).
struct PlacementReport {
  int sms = 0;            // SMs of the partition
  int workers_per_sm = 0; // n_target
  int launched = 0;       // workers launched (filling)
  Index chunks = 0;
  int chunk_items = 0; // work items per chunk (= threads per worker on CUDA)
  // Building the chunk array (affinity: profile + clustering); 0 when reused.
  double plan_seconds = 0;
  // Chunks that ran on another SM than planned (the last worker out running
  // the chunks of an SM no worker landed on; persistent threads, bound to no
  // SM, move most); counted only when `count_chunks` is set, as is
  // `chunk_runs`.
  bool count_chunks = false;
  Index moved_chunks = 0;
  std::vector<int> chunk_runs; // how many times each chunk ran (must be 1)
};

// Options every software placement shares.
struct PlacementOptions {
  // Active workers per SM (n_target of §3.2, the parallelism control); 0: as
  // many as fit on an SM (the kernel's occupancy; the host's: 4).
  int workers_per_sm = 0;
  // Queries per job chunk: CUDA rounds it up to whole warps and uses it as the
  // block size (at most 1024); 0: 128 on CUDA, 32 on host backends.
  int chunk_queries = 0;
  // The SMs this kernel may use, [first_sm, first_sm + sms) of the device's
  // SMs (a co-run's partition, §4.1); sms 0: all from first_sm on.
  int first_sm = 0;
  int sms = 0;
  // Whether a worker whose SM's share is done takes chunks left on other SMs
  // (the tail only). The paper binds every chunk to its SM (false); traversal
  // jobs differ so much in cost that an SM with a dense cluster then runs on
  // alone while the others idle (perf/results/smcentric).
  bool steal = true;
  // Host backends only, for tests: the SM each worker lands on, a simulated
  // hardware scheduler (a worker past its end, or an SM past the partition,
  // finds no work of its own); empty: the thread it runs on.
  std::vector<int> simulated_sms;
  // Host backends: how many SMs to simulate; 0: one per thread.
  int host_sms = 0;
  // Filled after each traversal when set: what the placement did.
  PlacementReport* report = nullptr;
};

// Each placement says whether its workers per SM are the caller's to set
// (PlacementOptions::workers_per_sm).
struct Hardware {
  static constexpr char const* name = "hardware";
  static constexpr bool sets_workers_per_sm = false;
};

struct SmCentric {
  static constexpr char const* name = "smcentric";
  static constexpr bool sets_workers_per_sm = true;
  PlacementOptions options;
};

struct Affinity {
  static constexpr char const* name = "affinity";
  static constexpr bool sets_workers_per_sm = true;
  PlacementOptions options;
  int depth = 0;           // top-tree depth of the profile; 0: the hybrid profile's automatic depth
  double threshold = 0.05; // no affinity edge below this Jaccard score (§5.2)
  std::uint64_t seed = 1;  // the random choices of seed-and-grow
};

struct Persistent {
  static constexpr char const* name = "persistent"; // one worker per SM
  static constexpr bool sets_workers_per_sm = false;
  PlacementOptions
      options;          // workers_per_sm is 1; chunk_queries 0: the largest block the kernel allows
  bool affinity = true; // the queue by affinity clusters (else: chunks in order)
  int depth = 0;
  double threshold = 0.05;
  std::uint64_t seed = 1;
};

template <class Placement>
inline constexpr bool is_software_placement_v =
    std::is_same_v<Placement, SmCentric> || std::is_same_v<Placement, Affinity> ||
    std::is_same_v<Placement, Persistent>;

using AnyPlacement = std::variant<Hardware, SmCentric, Affinity, Persistent>;

// Throws InputError naming the value when unknown.
AnyPlacement parse_placement(std::string const& name);
std::string placement_name(AnyPlacement const& placement);
PlacementOptions& placement_options(AnyPlacement& placement); // throws for Hardware

// A strategy under a placement: what the apps pass to traverse() as their
// strategy, so every application takes placements without a new parameter.
template <class Strategy, class Placement>
struct Placed {
  static constexpr char const* name = Strategy::name;
  Strategy strategy;
  Placement placement;
};

// `strategy` under `placement`; Hardware leaves the strategy as it is.
template <class Strategy, class Placement>
auto placed(Strategy const& strategy, Placement const& placement) {
  if constexpr (std::is_same_v<Placement, Hardware>)
    return strategy;
  else
    return Placed<Strategy, Placement>{strategy, placement};
}

// Placements move the work items of one kernel launch onto SMs: a strategy
// runs under one when its `placeable` trait says so, under Hardware always.
template <class Strategy, class Placement>
inline constexpr bool placement_applies_v =
    std::is_same_v<Placement, Hardware> || Strategy::placeable;

// Whether software placements run on ExecutionSpace. They spread a kernel's
// work items over SMs; on a host backend an "SM" is a partition of its
// threads, a simulation that lets the same logic run, and be tested, where
// no GPU is built. A GPU build places on the GPU's SMs only: its host
// searches compile no simulated SMs (they were a third of its host
// searches' code). The serial backend has one thread: never.
template <class ExecutionSpace>
inline constexpr bool places_on_v =
#if defined(KOKKOS_ENABLE_CUDA)
    is_cuda_space_v<ExecutionSpace>;
#elif defined(KOKKOS_ENABLE_SERIAL)
    !std::is_same_v<ExecutionSpace, Kokkos::Serial>;
#else
    true;
#endif

// Why software placements do not run on ExecutionSpace (places_on_v false).
template <class ExecutionSpace>
char const* placement_refusal() {
#if defined(KOKKOS_ENABLE_SERIAL)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Serial>)
    return "needs a parallel backend (the serial one runs one thread)";
#endif
  return "runs on the GPU in a GPU build (host backends simulate SMs in host-only builds)";
}

// Whether Placement runs on ExecutionSpace.
template <class Placement, class ExecutionSpace>
inline constexpr bool placement_runs_on_v =
    std::is_same_v<Placement, Hardware> || places_on_v<ExecutionSpace>;

// f(placement) with its own type where it runs on ExecutionSpace; else an
// InputError naming the placement.
template <class ExecutionSpace, class F>
void with_placement_on(AnyPlacement const& placement, F const& f) {
  std::visit(
      [&](auto const& p) {
        using Placement = std::decay_t<decltype(p)>;
        if constexpr (placement_runs_on_v<Placement, ExecutionSpace>)
          f(p);
        else
          throw InputError("placement", std::string(" ") + Placement::name + " " +
                                            placement_refusal<ExecutionSpace>());
      },
      placement);
}

template <class T>
struct is_placed : std::false_type {};
template <class S, class P>
struct is_placed<Placed<S, P>> : std::true_type {};
template <class T>
inline constexpr bool is_placed_v = is_placed<T>::value;

// The strategy and placement of a (possibly placed) strategy argument.
template <class Strategy>
Strategy const& strategy_of(Strategy const& strategy) {
  return strategy;
}
template <class S, class P>
S const& strategy_of(Placed<S, P> const& placed) {
  return placed.strategy;
}
template <class Strategy>
Hardware placement_of(Strategy const&) {
  return {};
}
template <class S, class P>
P const& placement_of(Placed<S, P> const& placed) {
  return placed.placement;
}

template <class Strategy>
using strategy_t = std::decay_t<decltype(strategy_of(std::declval<Strategy>()))>;

// §5.2 graph partitioning of job chunks into `clusters` equal-size clusters
// (sizes differ by at most one), from each chunk's set of top-tree nodes:
// sets(c, w) bit b = chunk c touched node w * 32 + b. Affinity of two chunks:
// the Jaccard score |A ∩ B| / |A ∪ B|; below `threshold` there is no edge.
//  1. seeds: a random chunk from each affinity graph (connected component);
//     with fewer graphs than clusters, chunks whose scores with all seeds are
//     at most t (t = 0, then 0.1 more each round);
//  2. each chunk's list of the (at most 32) chunks most similar to it in its
//     graph, in descending order;
//  3. round-robin growth: each cluster in turn picks a random member and takes
//     the best chunk on its list not yet taken, until it is full; chunks no
//     list reached fill the clusters with room, in chunk order.
// Returns the cluster of each chunk. Runs on the host execution space.
std::vector<int>
affinity_clusters(Kokkos::View<std::uint32_t const**, Kokkos::LayoutRight, Kokkos::HostSpace> sets,
                  int clusters, double threshold = 0.05, std::uint64_t seed = 1);

// Jaccard score of rows a and b of `sets` (1 when both are empty).
double jaccard(Kokkos::View<std::uint32_t const**, Kokkos::LayoutRight, Kokkos::HostSpace> sets,
               Index a, Index b);

// §5.1 parallelism control by hill climbing: time(n) for n = start, start - 1,
// ... while the time improves (stopping at 1); returns the best n. `trace`
// (optional) receives every (n, time) tried.
int hill_climb_workers(int start, std::function<double(int)> const& time,
                       std::vector<std::pair<int, double>>* trace = nullptr);

} // namespace treetrav
