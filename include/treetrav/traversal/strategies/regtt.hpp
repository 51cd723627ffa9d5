#pragma once

#include <treetrav/core/error.hpp>
#include <treetrav/schedule/detail/regtt_traverse.hpp>
#include <treetrav/schedule/regtt.hpp>
#include <treetrav/kernels/metrics.hpp>
#include <treetrav/traversal/strategies/autoropes.hpp>
#include <treetrav/traversal/strategies/lockstep.hpp>
#include <treetrav/core/workspace.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace treetrav {

// REGTT (Zhang et al.): every query walks the tree breadth-first
// down to the reorder depth d, recording one truncation bit per node above d
// (did it descend there); the queries are stably sorted by the integer those
// bits form in breadth-first order, then finish depth-first from their own
// frontiers (the nodes at depth d under their set bits). depth = automatic:
// the paper's profiling + regression model picks d (§III-D2); 0 is plain
// autoropes / lockstep. reorder = false keeps the input order (Table III).
// memory_budget bounds the per-query keys and states (bytes; 0: a quarter of
// the free device memory, 1 GiB on the host); queries run in chunks that fit.
// `warp_size` is the emulated warp on host backends; `timings`, when set,
// receives the breakdown. order_bits (guided visitors; not in the paper):
// the key continues after the truncation bits with the child each query
// chose first at each node, in the same order; a guided search truncates
// nothing above d while no leaf has set its bound, so its truncation bits
// alone say nothing about it. Its sort permutes the caller's order (ties keep it).
struct Regtt {
  static constexpr char const* name = "regtt";
  static constexpr bool walks_tree = true;
  static constexpr bool host_only = false;
  // Its phases sort and regroup queries between launches.
  static constexpr bool placeable = false;
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = true;
  // The breadth-first top changes the order of a query's visits.
  static constexpr bool tree_order = false;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = true;
  bool records_metrics() const { return mode == RegttMode::lockstep; }
  using timings_type = RegttTimings;

  static constexpr int automatic = -1;
  int depth = automatic;
  RegttMode mode = RegttMode::nonlockstep;
  int warp_size = 32;
  bool reorder = true;
  std::size_t memory_budget = 0;
  RegttTimings* timings = nullptr;
  bool order_bits = false;
  Workspace* workspace = nullptr; // keys, states and the sort's scratch

  template <class ExecutionSpace, class Topology, class Visitor, class Launcher>
  void launch(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
              Kokkos::View<Index const*, typename Topology::memory_space> order,
              TraversalMetrics<typename Topology::memory_space> const& metrics,
              Workspace& scratch, Launcher const& launcher) const {
    static_assert(!Visitor::guided || Topology::arity == 2,
                  "REGTT records one preferred child: binary trees");
    bool const lockstep = mode == RegttMode::lockstep;
    if (lockstep && !is_cuda_space_v<ExecutionSpace> && (warp_size < 1 || warp_size > 32))
      throw std::invalid_argument("REGTT lockstep warp size must be in [1, 32]");
    if (depth != automatic && (depth < 0 || depth > regtt_max_depth(Topology::arity)))
      throw InputError("reorder_depth", " " + std::to_string(depth) + " is outside [0, " +
                                            std::to_string(regtt_max_depth(Topology::arity)) +
                                            "] for trees of arity " +
                                            std::to_string(Topology::arity));
    Index const items = detail::work_count(visitor, order); // the order may list a subset
    std::size_t const budget = memory_budget > 0
                                   ? memory_budget
                                   : detail::regtt_default_budget<ExecutionSpace>();
    detail::RegttWalk const walk{mode, warp_size, reorder, order_bits};
    auto& buffers = scratch.get<detail::RegttBuffers<ExecutionSpace>>();
    RegttTimings measured;
    measured.mode = mode;
    Kokkos::Timer timer;
    int used = depth;
    if (used == automatic) {
      used = items > 0 ? detail::regtt_model_depth(space, topology, visitor, walk, order, budget,
                                                   buffers)
                       : 0;
      space.fence();
      measured.model = timer.seconds();
    }
    measured.depth = used;
    if (used == 0 || items == 0) {
      // Nothing above the frontier: the root is every query's frontier.
      timer.reset();
      if (lockstep)
        Lockstep{warp_size}.launch(space, topology, visitor, order, metrics, scratch,
                                   launcher.relabeled(Lockstep::name));
      else
        Autoropes{}.launch(space, topology, visitor, order, metrics, scratch,
                           launcher.relabeled(Autoropes::name));
      space.fence();
      measured.dft = timer.seconds();
      measured.chunks = 1;
    } else {
      detail::RegttRun<ExecutionSpace, Topology, Visitor> run(space, topology, visitor, walk,
                                                              used, items, budget, buffers);
      run.run(order, items, metrics, measured);
    }
    if (timings)
      *timings = measured;
  }
};

} // namespace treetrav
