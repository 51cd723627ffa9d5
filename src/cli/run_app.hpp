#pragma once

// What every application subcommand (pc, nn, knn, vp, bt, bh-force) shares:
// the options, the one dispatch from run-time flags to a template
// instantiation, and writing and summarising the results.
#include "common.hpp"

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/io/results.hpp>
#include <treetrav/schedule/placement.hpp>
#include <treetrav/traversal/strategies.hpp>
#include <treetrav/trees/packed_points.hpp>

#include <fmt/core.h>

#include <string>
#include <type_traits>
#include <variant>

namespace treetrav::cli {

// Options of every application subcommand.
struct RunOptions {
  std::string output;
  std::string strategy = Autoropes::name; // the search subcommands: Automatic::name
  int leaf_size = 0;                      // 0: not given (leaf_size_of)
  int profile_depth = 0;
  std::string regtt_mode = "nonlockstep";
  std::string reorder_depth = "auto"; // REGTT's d, or "auto" (the paper's model)
  bool regtt_order_bits = false;
  std::string sort = "none"; // "sfc": queries in space-filling-curve order
  std::string placement = Hardware::name;
  int workers_per_sm = 0; // software placements: active workers per SM (0: as many as fit)
  RuntimeOptions runtime;

  bool sorted() const { return sort == "sfc"; }
};

// Which --strategy names a subcommand takes: the applications' tree strategies
// (radius; ApplicationStrategy), those and brute force and auto (the search
// subcommands pc, nn, knn, vp, bt; SearchStrategy, default auto), or those of
// bh-force (BarnesHutStrategy, with the group walk), or of paircount
// (PairCountStrategy: every tree walk, default the group walk).
enum class StrategySet { application, search, barnes_hut, pair_count };

// Leaf sizes when --leaf-size is not given: the library's for the search
// trees (default_leaf_size), 8 for bh-force's octree.
inline constexpr int octree_leaf_size = 8;
// --leaf-size, or the default for the command (`forces`: bh-force).
inline int leaf_size_of(RunOptions const& options, bool forces) {
  if (options.leaf_size > 0)
    return options.leaf_size;
  return forces ? octree_leaf_size : default_leaf_size;
}

void add_run_options(CLI::App& command, RunOptions& options,
                     StrategySet strategies = StrategySet::application);

// The --strategy tag, with its options (hybrid's profile depth, REGTT's mode,
// reorder depth and key, the group size) applied. Throws InputError naming a
// bad option.
ApplicationStrategy strategy_from(RunOptions const& options);
SearchStrategy search_strategy_from(RunOptions const& options);
BarnesHutStrategy force_strategy_from(RunOptions const& options, int group_size);
PairCountStrategy pair_count_strategy_from(RunOptions const& options);
// The --placement tag, with --workers-per-sm applied.
AnyPlacement placement_from(RunOptions const& options);

// What a run did and how long each stage took; it becomes the results file's
// metadata and the summary. Fields marked (dispatch) are set by run_application.
struct RunRecord {
  std::string application; // the subcommand: pc, nn, knn, vp, bt, bh
  std::string tree;        // (dispatch) "none" for brute force
  std::string strategy;    // (dispatch) the one that ran: auto's pick under auto
  AnyPlacement placement; // which SM runs which queries
  Backend backend = Backend::serial;
  int threads = 0; // (dispatch) the execution space's concurrency
  int leaf_size = 0;
  std::string sort = "none";
  Index n_reference = 0;
  Index n_queries = 0;
  int dimension = 0;
  io::Metadata parameters; // k, radius, theta, ... and the input files
  // Wall-clock seconds; the device is fenced before each timer stops.
  double read_s = 0;
  double build_s = 0;     // (dispatch) tree construction (a streamed search moves its queries in traverse_s)
  double traverse_s = 0;  // (dispatch) under auto: the picked run, without the probe
  double write_s = 0;     // results staged on the host, then written
  // The searches alone, queries on the device to results on the host: a
  // streamed search's chunks without reading and writing them; over several
  // ranks the whole distributed call (traverse_s). Scaling is judged by it.
  double search_s = 0;
  Index chunks = 0;       // a search in chunks of queries: how many (0: not chunked)
  Index chunk = 0;        // and the queries per chunk (over ranks: the largest rank's)
  // Where a search in parts writes their results: beside the next part's
  // traversal (streamed), or after each part, within traverse_s (over ranks).
  enum class Writing { at_end, beside, after_each } writing = Writing::at_end;
  io::Metadata strategy_metadata; // (dispatch) what the strategy recorded (its timings_type)
  bool automatic = false; // (dispatch) --strategy auto: `choice` holds its pick
  AutomaticChoice choice;
};

// An Application provides, for every execution space Space and strategy tag:
//   static constexpr char const* tree_name;
//   Setup   setup(Space const&, Strategy const&) const;   what the strategy needs, queries moved
//   Output  traverse(Space const&, Setup const&, Strategy) const;
//   io::QueryResults collect(Output const&) const;        on the host, in query order
template <class Application, class Space, class Strategy, class Placement>
io::QueryResults run_stages(Application const& application, Space const& space, Strategy strategy,
                            Placement const& placement, RunRecord& record) {
  if constexpr (!placement_applies_v<Strategy, Placement>) {
    throw InputError(
        fmt::format("--placement {} does not apply to --strategy {} (use --placement hardware)",
                    Placement::name, Strategy::name));
  } else if constexpr (!placement_runs_on_v<Placement, Space>) {
    throw InputError(fmt::format("--placement {} does not run on --backend {}: it {} (use "
                                 "--placement hardware)",
                                 Placement::name, to_string(record.backend),
                                 placement_refusal<Space>()));
  } else if constexpr (runs_on_v<Strategy, Space>) {
    record.tree = Strategy::walks_tree ? Application::tree_name : "none";
    if constexpr (!Strategy::walks_tree)
      record.sort = "none"; // no order to follow (auto records the one it picks)
    record.strategy = Strategy::name;
    record.threads = space.concurrency();
    Kokkos::Timer timer;
    auto const setup = application.setup(space, strategy);
    space.fence();
    record.build_s = timer.seconds();
    timer.reset();
    typename timings_of<Strategy>::type timings;
    if constexpr (has_timings_v<Strategy>)
      strategy.timings = &timings;
    if constexpr (chooses_strategy_v<Strategy>)
      strategy.choice = &record.choice;
    auto const output = application.traverse(space, setup, placed(strategy, placement));
    space.fence();
    record.traverse_s = timer.seconds();
    timings.record(record.strategy_metadata);
    if constexpr (chooses_strategy_v<Strategy>) {
      record.traverse_s -= record.choice.probe_s; // reported on its own
      record.automatic = true;
      record.strategy = record.choice.strategy;
      record.sort = record.choice.sorted ? "sfc" : "none";
      record.tree = record.strategy == BruteForce::name ? "none" : Application::tree_name;
    }
    timer.reset();
    io::QueryResults results = application.collect(output);
    record.write_s += timer.seconds();
    return results;
  } else {
    throw InputError(fmt::format("--strategy {} runs on host backends only, not on --backend {}",
                                 Strategy::name, to_string(record.backend)));
  }
}

// The one dispatch: backend x strategy x placement (record.placement), for
// the given application, each combination one instantiation of run_stages.
// Strategies: ApplicationStrategy, SearchStrategy or BarnesHutStrategy.
template <class Application, class Strategies>
io::QueryResults run_application(Application const& application, Strategies const& strategy,
                                 RunRecord& record) {
  return dispatch_backend(record.backend, [&](auto const& space) {
    return std::visit(
        [&](auto tag, auto const& placement) {
          return run_stages(application, space, tag, placement, record);
        },
        strategy, record.placement);
  });
}

// The summary's number to judge results by (mean count, mean neighbour
// distance, RMS acceleration), added up over blocks of them.
class Headline {
 public:
  void add(io::QueryResults const& block);
  void add(Headline const& other); // another block's (another rank's)
  std::string text() const;

 private:
  enum class Kind { none, counts, distances, accelerations } kind_ = Kind::none;
  double sum_ = 0;
  double values_ = 0;
};

// The run's metadata, as stored in its results file.
io::Metadata to_metadata(RunRecord const& record);

// Stores `record` as the results' metadata, writes them atomically to
// `output` and prints a one-paragraph summary.
void write_and_summarize(io::QueryResults& results, RunRecord& record, std::string const& output);
// The summary of a run whose results are written already.
void summarize(RunRecord const& record, Headline const& headline, std::string const& output);

} // namespace treetrav::cli
