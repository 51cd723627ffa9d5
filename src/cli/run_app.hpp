#pragma once

// What every application subcommand (pc, nn, knn, vp, bt, bh-force) shares:
// the options, the one dispatch from run-time flags to a template
// instantiation, and writing and summarising the results.
#include "common.hpp"

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/io/results.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <fmt/core.h>

#include <string>
#include <type_traits>
#include <variant>

namespace treetrav::cli {

// Options of every application subcommand.
struct RunOptions {
  std::string output;
  std::string strategy = Autoropes::name;
  int leaf_size = 0;  // 0: not given (leaf_size_of)
  int profile_depth = 0;
  std::string regtt_mode = "nonlockstep";
  std::string reorder_depth = "auto";  // REGTT's d, or "auto" (the paper's model)
  bool regtt_order_bits = false;
  std::string sort = "none";  // "sfc": queries in space-filling-curve order
  RuntimeOptions runtime;

  bool sorted() const { return sort == "sfc"; }
};

// Leaf sizes when --leaf-size is not given: 32 for the search trees on cuda
// (the fastest in the H100 leaf sweep, perf/results/search), 8 on host
// backends (not swept) and for bh-force's octree.
inline constexpr int cuda_search_leaf_size = 32, other_leaf_size = 8;
// --leaf-size, or the default for the command (`forces`: bh-force) and backend.
inline int leaf_size_of(RunOptions const& options, bool forces, Backend backend) {
  if (options.leaf_size > 0)
    return options.leaf_size;
  return !forces && backend == Backend::cuda ? cuda_search_leaf_size : other_leaf_size;
}

// `forces`: the strategies of bh-force (BarnesHutStrategy, with the group walk).
void add_run_options(CLI::App& command, RunOptions& options, bool forces = false);

// The --strategy tag, with its options (hybrid's profile depth, REGTT's mode,
// reorder depth and key, the group size) applied. Throws InputError naming a
// bad option.
ApplicationStrategy strategy_from(RunOptions const& options);
BarnesHutStrategy force_strategy_from(RunOptions const& options, int group_size);

// What a run did and how long each stage took; it becomes the results file's
// metadata and the summary. Fields marked (dispatch) are set by run_application.
struct RunRecord {
  std::string application;  // the subcommand: pc, nn, knn, vp, bt, bh
  std::string tree;         // (dispatch)
  std::string strategy;     // (dispatch)
  Backend backend = Backend::serial;
  int threads = 0;  // (dispatch) the execution space's concurrency
  int leaf_size = 0;
  std::string sort = "none";
  Index n_reference = 0;
  Index n_queries = 0;
  int dimension = 0;
  io::Metadata parameters;  // k, radius, theta, ... and the input files
  // Wall-clock seconds; the device is fenced before each timer stops.
  double read_s = 0;
  double build_s = 0;     // (dispatch) tree construction and moving the queries to the backend
  double traverse_s = 0;  // (dispatch)
  double write_s = 0;     // results staged on the host, then written
  HybridTimings hybrid;   // (dispatch) the hybrid strategy's breakdown
  RegttTimings regtt;     // (dispatch) REGTT's breakdown and depth
  std::string regtt_mode;  // (dispatch)
};

// Whether Strategy can run on execution space Space. The recursive reference
// walks the tree with host recursion; a new strategy with limits adds them here.
template <class Strategy, class Space>
inline constexpr bool strategy_runs_on =
    !std::is_same_v<Strategy, Recursive> || Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

// An Application provides, for every execution space Space and strategy tag:
//   static constexpr char const* tree_name;
//   Setup   setup(Space const&) const;                      build the tree, move the queries
//   Output  traverse(Space const&, Setup const&, Strategy) const;
//   io::QueryResults collect(Output const&) const;          on the host, in query order
template <class Application, class Space, class Strategy>
io::QueryResults run_stages(Application const& application, Space const& space, Strategy strategy,
                            RunRecord& record) {
  if constexpr (strategy_runs_on<Strategy, Space>) {
    record.tree = Application::tree_name;
    record.strategy = Strategy::name;
    record.threads = space.concurrency();
    Kokkos::Timer timer;
    auto const setup = application.setup(space);
    space.fence();
    record.build_s = timer.seconds();
    timer.reset();
    if constexpr (std::is_same_v<Strategy, Hybrid>) strategy.timings = &record.hybrid;
    if constexpr (std::is_same_v<Strategy, Regtt>) {
      strategy.timings = &record.regtt;
      record.regtt_mode = to_string(strategy.mode);
    }
    auto const output = application.traverse(space, setup, strategy);
    space.fence();
    record.traverse_s = timer.seconds();
    timer.reset();
    io::QueryResults results = application.collect(output);
    record.write_s = timer.seconds();
    return results;
  } else {
    throw InputError(fmt::format("--strategy {} runs on host backends only, not on --backend {}", Strategy::name,
                                 to_string(record.backend)));
  }
}

// The one dispatch: backend x strategy, for the given application, each
// combination one instantiation of run_stages.
template <class Application, class Strategies>
io::QueryResults run_application(Application const& application, Strategies const& strategy, RunRecord& record) {
  return dispatch_backend(record.backend, [&](auto const& space) {
    return std::visit([&](auto tag) { return run_stages(application, space, tag, record); }, strategy);
  });
}

// Stores `record` as the results' metadata, writes them atomically to
// `output` and prints a one-paragraph summary.
void write_and_summarize(io::QueryResults& results, RunRecord& record, std::string const& output);

}  // namespace treetrav::cli
