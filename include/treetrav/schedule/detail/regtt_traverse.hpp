#pragma once

#include <treetrav/core/error.hpp>
#include <treetrav/schedule/detail/regtt_kernels.hpp>
#include <treetrav/schedule/regtt.hpp>
#include <treetrav/core/detail/growing_buffer.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace treetrav::detail {

// Memory for REGTT's per-query data when the caller gives no budget.
template <class ExecutionSpace>
std::size_t regtt_default_budget() {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaError_t const status = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (status != cudaSuccess)
      throw std::runtime_error(std::string("treetrav::regtt: cudaMemGetInfo: ") +
                               cudaGetErrorString(status));
    return free_bytes / 4;
#endif
  }
  return std::size_t(1) << 30;
}

// Work item i of the sample serves the caller's work item i * items / sample.
template <class MemorySpace>
struct RegttSample {
  Kokkos::View<Index const*, MemorySpace> order;
  Index items, sample;
  Kokkos::View<Index*, MemorySpace> out;
  KOKKOS_FUNCTION void operator()(Index i) const {
    out(i) = query_at(order, static_cast<Index>(std::int64_t(i) * items / sample));
  }
};

// The memory REGTT works in, kept in the caller's Workspace between calls: a
// benchmark's repeats or an N-body run's steps would otherwise pay a
// cudaMalloc and a cudaFree per buffer, which cost more than the sort.
template <class ExecutionSpace>
struct RegttBuffers {
  using memory_space = typename ExecutionSpace::memory_space;
  GrowingBuffer<memory_space> top_node{"treetrav::RegttRun::top_node"};
  GrowingBuffer<memory_space> keys{"treetrav::RegttRun::keys"};
  GrowingBuffer<memory_space> sorted_keys{"treetrav::RegttRun::sorted_keys"};
  GrowingBuffer<memory_space> states{"treetrav::RegttRun::states"};
  GrowingBuffer<memory_space> sorted_states{"treetrav::RegttRun::sorted_states"};
  GrowingBuffer<memory_space> sorted{"treetrav::RegttRun::sorted"};
  RegttSorter<ExecutionSpace> sorter;
};

// How a REGTT walk runs (the Regtt strategy's options, traversal/strategies/regtt.hpp).
struct RegttWalk {
  RegttMode mode = RegttMode::nonlockstep;
  int warp_size = 32;
  bool reorder = true;
  bool order_bits = false;
};

// REGTT at one reorder depth d >= 1 (Algorithm 2, lines 3-10): the top
// tree's positions are resolved once, then the work items run in chunks that
// fit the memory budget (constraint (9): per query its N^B(d) truncation bits,
// as many preference bits for guided visitors, its state, both again in sorted
// order, and the sort's scratch), each chunk through Tree_BFT, the stable sort
// by key (keys and states then gathered into sorted order) and Tree_DFT.
template <class ExecutionSpace, class Topology, class Visitor>
class RegttRun {
public:
  using memory_space = typename Topology::memory_space;
  using state_type = typename Visitor::state_type;
  using Order = Kokkos::View<Index const*, memory_space>;

  RegttRun(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
           RegttWalk const& strategy, int depth, Index items, std::size_t budget,
           RegttBuffers<ExecutionSpace>& buffers)
      : buffers_(&buffers), space_(space), topology_(topology), visitor_(visitor),
        strategy_(strategy) {
    Kokkos::Timer timer;
    constexpr int arity = Topology::arity;
    levels_.depth = depth;
    std::int64_t begin = 0, width = 1;
    for (int level = 0; level <= depth + 1; ++level) {
      levels_.begin[level] = static_cast<Index>(begin);
      begin += width;
      width *= arity;
    }
    bits_ = regtt_top_positions(arity, depth);
    int const words = regtt_key_words(arity, depth);
    top_node_ = Kokkos::View<Index*, memory_space>(
        buffers_->top_node.template get<Index>(space, levels_.begin[depth + 1]).data(),
        levels_.begin[depth + 1]);
    Kokkos::parallel_for("treetrav::regtt::top_nodes",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, levels_.begin[depth + 1]),
                         RegttTopNodes<Topology>{topology, top_node_});

    std::size_t const per_item =
        2 * (std::size_t(words) * sizeof(RegttWord) * (Visitor::guided ? 2 : 1) +
             sizeof(state_type)) +
        sizeof(Index) + 2 * sizeof(RegttWord) + sizeof(Index);
    int const warp = is_cuda_space_v<ExecutionSpace> ? 32 : strategy.warp_size;
    std::size_t const fit = budget / per_item / warp * warp;
    if (fit == 0)
      throw InputError("REGTT: reorder depth " + std::to_string(depth) + " needs " +
                       std::to_string(per_item * warp) + " bytes per warp of queries (" +
                       std::to_string(bits_) + " truncation bits each); the memory budget of " +
                       std::to_string(budget) +
                       " bytes holds less (Zhang et al.'s constraint (9))");
    chunk_ = static_cast<Index>(std::min<std::size_t>(fit, std::max<Index>(items, 1)));
    // One table, zeroed per chunk: the truncation bits, then (guided
    // visitors) the preferred children, so that a key may span both.
    int const columns = Visitor::guided ? 2 * words : words;
    auto table = [&](GrowingBuffer<memory_space>& workspace) {
      return RegttKeys<memory_space>(
          workspace.template get<RegttWord>(space, std::size_t(chunk_) * columns).data(), chunk_,
          columns);
    };
    auto list = [&](GrowingBuffer<memory_space>& workspace, auto element) {
      using T = decltype(element);
      return Kokkos::View<T*, memory_space>(workspace.template get<T>(space, chunk_).data(),
                                            chunk_);
    };
    keys_ = table(buffers_->keys);
    descended_ = Kokkos::subview(keys_, Kokkos::ALL, std::make_pair(0, words));
    if constexpr (Visitor::guided)
      preferred_ = Kokkos::subview(keys_, Kokkos::ALL, std::make_pair(words, 2 * words));
    states_ = list(buffers_->states, state_type{});
    sorted_ = list(buffers_->sorted, Index{});
    if (strategy.reorder) {
      sorted_keys_ = table(buffers_->sorted_keys);
      sorted_states_ = list(buffers_->sorted_states, state_type{});
    }
    space.fence();
    setup_seconds_ = timer.seconds();
  }

  // Work items [0, items) of `order` (item i serves query order(i); empty:
  // identity), adding each phase's time to `timings`.
  void run(Order const& order, Index items, TraversalMetrics<memory_space> const& metrics,
           RegttTimings& timings) {
    bool const lockstep = strategy_.mode == RegttMode::lockstep;
    if (lockstep && metrics.enabled())
      run_chunks<true, true>(order, items, metrics, timings);
    else if (lockstep)
      run_chunks<true, false>(order, items, metrics, timings);
    else
      run_chunks<false, false>(order, items, metrics, timings);
  }

  RegttRun(RegttRun const&) = delete;
  RegttRun& operator=(RegttRun const&) = delete;

private:
  template <bool Lockstep, bool Measure>
  void run_chunks(Order const& order, Index items, TraversalMetrics<memory_space> const& metrics,
                  RegttTimings& timings) {
    timings.bft += setup_seconds_;
    setup_seconds_ = 0;
    Kokkos::Timer timer;
    auto lap = [&](double& phase) {
      space_.fence();
      phase += timer.seconds();
      timer.reset();
    };
    for (Index begin = 0; begin < items; begin += chunk_) {
      Index const count = std::min(chunk_, items - begin);
      Kokkos::Profiling::pushRegion("treetrav::regtt::bft");
      Kokkos::deep_copy(space_, keys_, RegttWord(0));
      RegttBftKernel<Topology, Visitor, Measure> const bft{
          topology_, visitor_,   order,      begin,   count,  levels_,
          top_node_, descended_, preferred_, states_, metrics};
      if constexpr (Lockstep)
        launch_warps(space_, "treetrav::regtt::bft", bft, count, strategy_.warp_size);
      else
        Kokkos::parallel_for("treetrav::regtt::bft",
                             Kokkos::RangePolicy<ExecutionSpace>(space_, 0, count), bft);
      lap(timings.bft);
      Kokkos::Profiling::popRegion();

      Kokkos::Profiling::pushRegion("treetrav::regtt::sort");
      Order sorted;
      RegttKeys<memory_space> dft_keys = keys_;
      Kokkos::View<state_type*, memory_space> dft_states = states_;
      if (strategy_.reorder) {
        // With order bits the key runs on past the truncation bits' padding.
        if (Visitor::guided && strategy_.order_bits)
          buffers_->sorter.sort(space_, keys_, count, 64 * descended_.extent(1) + bits_, sorted_);
        else
          buffers_->sorter.sort(space_, descended_, count, bits_, sorted_);
        sorted = sorted_;
        Kokkos::parallel_for("treetrav::regtt::gather",
                             Kokkos::RangePolicy<ExecutionSpace>(space_, 0, count),
                             RegttGather<memory_space, state_type>{sorted, keys_, sorted_keys_,
                                                                   states_, sorted_states_});
        dft_keys = sorted_keys_;
        dft_states = sorted_states_;
      }
      lap(timings.sort);
      Kokkos::Profiling::popRegion();

      Kokkos::Profiling::pushRegion("treetrav::regtt::dft");
      using Dft = RegttDftKernel<Topology, Visitor, Lockstep, Measure>;
      typename Dft::Inner inner{topology_, visitor_, {}};
      if constexpr (Lockstep)
        inner.metrics = metrics;
      int const words = static_cast<int>(descended_.extent(1));
      RegttKeys<memory_space> dft_preferred;
      if constexpr (Visitor::guided)
        dft_preferred = Kokkos::subview(dft_keys, Kokkos::ALL, std::make_pair(words, 2 * words));
      Dft const dft{inner,         order,
                    begin,         count,
                    levels_,       top_node_,
                    sorted,        Kokkos::subview(dft_keys, Kokkos::ALL, std::make_pair(0, words)),
                    dft_preferred, dft_states,
                    metrics};
      if constexpr (Lockstep)
        launch_warps(space_, "treetrav::regtt::dft", dft, count, strategy_.warp_size);
      else
        Kokkos::parallel_for("treetrav::regtt::dft",
                             Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
                                 space_, 0, count),
                             dft);
      lap(timings.dft);
      Kokkos::Profiling::popRegion();
      ++timings.chunks;
    }
  }

  RegttBuffers<ExecutionSpace>* buffers_;
  ExecutionSpace space_;
  Topology topology_;
  Visitor visitor_;
  RegttWalk strategy_;
  RegttLevels levels_;
  std::int64_t bits_ = 0;
  Index chunk_ = 0;
  double setup_seconds_ = 0;
  Kokkos::View<Index*, memory_space> top_node_;
  RegttKeys<memory_space> keys_, descended_, preferred_, sorted_keys_;
  Kokkos::View<state_type*, memory_space> states_, sorted_states_;
  Kokkos::View<Index*, memory_space> sorted_;
};

// §III-D2: probe REGTT at a few depths on a sample of the queries (every
// (n / sample)-th; a small warm-up per depth first, so that lazily loaded
// kernels are not timed), fit RegttDepthModel, take its best depth within the
// probed range. Probing stops early once a probe takes over twice the best.
template <class ExecutionSpace, class Topology, class Visitor>
int regtt_model_depth(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                      RegttWalk const& strategy,
                      Kokkos::View<Index const*, typename Topology::memory_space> order,
                      std::size_t budget, RegttBuffers<ExecutionSpace>& buffers) {
  using memory_space = typename Topology::memory_space;
  Kokkos::Profiling::pushRegion("treetrav::regtt::model");
  Index const items = work_count(visitor, order);  // the order may list a subset
  Index const sample = std::min<Index>(items, std::max<Index>(65536, items / 4));
  Kokkos::View<Index*, memory_space> sample_order(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::regtt::sample"), sample);
  Kokkos::parallel_for("treetrav::regtt::sample",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, sample),
                       RegttSample<memory_space>{order, items, sample, sample_order});
  std::vector<RegttProbe> probes;
  double best = std::numeric_limits<double>::infinity();
  for (int depth : regtt_probe_depths(regtt_model_max_depth(Topology::arity, topology.size()))) {
    RegttRun<ExecutionSpace, Topology, Visitor> run(space, topology, visitor, strategy, depth,
                                                    sample, budget, buffers);
    RegttTimings warm_up, timed;
    run.run(sample_order, std::min<Index>(sample, 1024), {}, warm_up);
    run.run(sample_order, sample, {}, timed);
    probes.push_back({depth, timed.bft, timed.sort, timed.dft});
    best = std::min(best, probes.back().total());
    if (probes.size() >= 3 && probes.back().total() > 2 * best)
      break;
  }
  Kokkos::Profiling::popRegion();
  if (probes.empty())
    return 1;
  return RegttDepthModel(Topology::arity, topology.size(), probes)
      .best_depth(1, probes.back().depth);
}

} // namespace treetrav::detail
