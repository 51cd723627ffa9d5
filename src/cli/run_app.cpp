#include "run_app.hpp"

#include <treetrav/version.hpp>

#include <cmath>

namespace treetrav::cli {

io::Metadata to_metadata(RunRecord const& record) {
  io::Metadata metadata = record.parameters;
  metadata.set("application", record.application)
      .set("tree", record.tree)
      .set("strategy", record.strategy)
      .set("placement", placement_name(record.placement))
      .set("sort", record.sort)
      .set("backend", to_string(record.backend))
      .set("treetrav_version", TREETRAV_VERSION_STRING)
      .set("threads", static_cast<double>(record.threads))
      .set("leaf_size", static_cast<double>(record.leaf_size))
      .set("n_reference", static_cast<double>(record.n_reference))
      .set("n_queries", static_cast<double>(record.n_queries))
      .set("dimension", static_cast<double>(record.dimension))
      .set("read_s", record.read_s)
      .set("build_s", record.build_s)
      .set("traverse_s", record.traverse_s);
  if (record.search_s > 0)
    metadata.set("search_s", record.search_s);
  if (record.chunks > 0)
    metadata.set("chunks", static_cast<double>(record.chunks))
        .set("chunk", static_cast<double>(record.chunk));
  if (record.automatic)
    metadata.set("requested_strategy", std::string(Automatic::name))
        .set("auto_reason", record.choice.reason)
        .set("auto_probe_s", record.choice.probe_s);
  for (auto const& [name, value] : record.strategy_metadata.numbers)
    metadata.set(name, value);
  for (auto const& [name, value] : record.strategy_metadata.text)
    metadata.set(name, value);
  // write_s cannot be stored in the file whose writing it times; the summary reports it.
  return metadata;
}

namespace {

template <class View>
double sum(View const& values) {
  double total = 0;
  for (std::size_t i = 0; i < values.extent(0); ++i)
    for (std::size_t j = 0; j < values.extent(1); ++j)
      total += values(i, j);
  return total;
}

std::string parameters_text(io::Metadata const& parameters) {
  std::string text;
  for (auto const& [name, value] : parameters.numbers)
    text += fmt::format(", {} {:g}", name, value);
  return text;
}

// The strategy's own options from the command line applied to it.
template <class Strategies>
Strategies configured(Strategies strategy, RunOptions const& options) {
  if (auto* hybrid = std::get_if<Hybrid>(&strategy))
    hybrid->depth = options.profile_depth;
  if (auto* regtt = std::get_if<Regtt>(&strategy)) {
    // Both options were validated on parsing.
    regtt->mode = parse_regtt_mode(options.regtt_mode);
    regtt->depth = options.reorder_depth == "auto"
                       ? Regtt::automatic
                       : detail::parse_number<int>(options.reorder_depth).value();
    regtt->order_bits = options.regtt_order_bits;
  }
  return strategy;
}

} // namespace

void add_run_options(CLI::App& command, RunOptions& options, StrategySet strategies) {
  command
      .add_option("-o,--output", options.output,
                  "Results HDF5 file (written atomically; a symbolic link is followed, an input is "
                  "refused)")
      ->required()
      ->check(file_name());
  std::string names;
  if (strategies == StrategySet::search) {
    options.strategy = Automatic::name;
    names = "Strategy: " + strategy_names<SearchStrategy>() +
            " (recursive: host backends only; brute: no tree, any dimension, GEMM-screened exact "
            "search; auto: the fastest of brute and the trees with their query order, by timing "
            "each on a sample of the queries, recorded in the results)";
  } else if (strategies == StrategySet::pair_count) {
    options.strategy = GroupWalk::name;
    names = "Traversal strategy: " + strategy_names<PairCountStrategy>() +
            " (group: one set's own pairs in one process, the default there; the others "
            "otherwise; recursive: host backends only)";
  } else {
    names = "Traversal strategy: " +
            (strategies == StrategySet::barnes_hut
                 ? strategy_names<BarnesHutStrategy>()
                 : strategy_names<ApplicationStrategy>()) +
            " (recursive: host backends only)";
  }
  command.add_option("--strategy", options.strategy, names)->capture_default_str();
  command
      .add_option("--leaf-size", options.leaf_size,
                  strategies == StrategySet::barnes_hut
                      ? fmt::format("Most bodies per octree leaf [default: {}]", octree_leaf_size)
                      : fmt::format("Most points per tree leaf [default: {}]", default_leaf_size))
      ->check(at_least(1));
  command
      .add_option("--profile-depth", options.profile_depth,
                  "hybrid: depth of the profiled top tree (0: automatic, 8 for binary trees, 3 for "
                  "octrees)")
      ->check(in_range(0, max_tree_depth))
      ->capture_default_str();
  command
      .add_option("--regtt-mode", options.regtt_mode,
                  "regtt: lockstep (a warp walks together) or nonlockstep (each query alone)")
      ->check(CLI::IsMember({"lockstep", "nonlockstep"}))
      ->capture_default_str();
  command
      .add_option(
          "--reorder-depth", options.reorder_depth,
          "regtt: depth d of the breadth-first top whose truncation bits order the queries; auto: "
          "Zhang et al.'s profiling + regression model; 0: no breadth-first top")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            auto const depth = detail::parse_number<int>(text);
            if (text == "auto" || (depth && *depth >= 0))
              return {};
            return fmt::format("must be auto or an integer >= 0 (got '{}')", text);
          },
          "N|auto"))
      ->capture_default_str();
  command.add_flag(
      "--regtt-order-bits", options.regtt_order_bits,
      "regtt, guided searches: sort also by the child each query took first above d (not in "
      "the paper)");
  command
      .add_option("--sort", options.sort,
                  "Query order: none, or sfc (Morton order of the queries; bh-force: the octree's "
                  "leaf order; auto picks its own). Results stay in the input order either way")
      ->check(CLI::IsMember({"none", "sfc"}))
      ->capture_default_str();
  command
      .add_option(
          "--placement", options.placement,
          "Which SM runs which queries (Wu et al. ICS15): hardware (the GPU's scheduler), "
          "smcentric "
          "(query chunks bound to SMs in order, filling-retreating workers), affinity (chunks "
          "grouped "
          "onto SMs by the top-tree nodes they reach), persistent (one persistent block per SM). "
          "Host backends: an SM is a thread")
      ->check(CLI::IsMember({Hardware::name, SmCentric::name, Affinity::name, Persistent::name}))
      ->capture_default_str();
  command
      .add_option("--workers-per-sm", options.workers_per_sm,
                  "smcentric, affinity: active workers (blocks) per SM; 0: as many as fit")
      ->check(at_least(0))
      ->capture_default_str();
  add_runtime_options(command, options.runtime);
}

ApplicationStrategy strategy_from(RunOptions const& options) {
  return configured(parse_strategy<ApplicationStrategy>(options.strategy), options);
}

BarnesHutStrategy force_strategy_from(RunOptions const& options, int group_size) {
  BarnesHutStrategy strategy = configured(parse_strategy<BarnesHutStrategy>(options.strategy), options);
  if (auto* group = std::get_if<GroupWalk>(&strategy))
    group->group_size = group_size;
  return strategy;
}

PairCountStrategy pair_count_strategy_from(RunOptions const& options) {
  return configured(parse_strategy<PairCountStrategy>(options.strategy), options);
}

SearchStrategy search_strategy_from(RunOptions const& options) {
  return configured(parse_strategy<SearchStrategy>(options.strategy), options);
}

AnyPlacement placement_from(RunOptions const& options) {
  AnyPlacement placement = parse_placement(options.placement);
  bool const has_workers =
      std::visit([](auto const& p) { return std::decay_t<decltype(p)>::sets_workers_per_sm; },
                 placement);
  if (options.workers_per_sm > 0 && !has_workers)
    throw InputError(fmt::format("--workers-per-sm applies to --placement smcentric or affinity, "
                                 "not {} (persistent threads run one worker per SM)",
                                 options.placement));
  if (has_workers)
    placement_options(placement).workers_per_sm = options.workers_per_sm;
  return placement;
}

void Headline::add(io::QueryResults const& block) {
  if (block.counts.extent(0) != 0) {
    kind_ = Kind::counts;
    for (std::size_t i = 0; i < block.counts.extent(0); ++i)
      sum_ += static_cast<double>(block.counts(i));
    values_ += static_cast<double>(block.counts.extent(0));
  } else if (block.neighbor_distances.extent(0) != 0) {
    kind_ = Kind::distances;
    sum_ += sum(block.neighbor_distances);
    values_ += static_cast<double>(block.neighbor_distances.size());
  } else if (block.accelerations.extent(0) != 0) {
    kind_ = Kind::accelerations;
    for (std::size_t i = 0; i < block.accelerations.extent(0); ++i)
      for (int k = 0; k < 3; ++k)
        sum_ += block.accelerations(i, k) * block.accelerations(i, k);
    values_ += static_cast<double>(block.accelerations.extent(0));
  }
}

void Headline::add(Headline const& other) {
  if (other.kind_ != Kind::none)
    kind_ = other.kind_;
  sum_ += other.sum_;
  values_ += other.values_;
}

std::string Headline::text() const {
  switch (kind_) {
  case Kind::counts:
    return fmt::format("Mean count {:.6g}.", sum_ / values_);
  case Kind::distances:
    return fmt::format("Mean neighbour distance {:.6g}.", sum_ / values_);
  case Kind::accelerations:
    return fmt::format("RMS acceleration {:.6g}.", std::sqrt(sum_ / values_));
  case Kind::none:
    break;
  }
  return "";
}

void write_and_summarize(io::QueryResults& results, RunRecord& record, std::string const& output) {
  results.application = record.application;
  results.metadata = to_metadata(record);
  Kokkos::Timer timer;
  io::write_results(output, results);
  record.write_s += timer.seconds();
  Headline headline;
  headline.add(results);
  summarize(record, headline, output);
}

void summarize(RunRecord const& record, Headline const& headline, std::string const& output) {
  if (record.automatic)
    fmt::print("auto (a {:.3g} s probe) picked {}{}: {}.\n", record.choice.probe_s, record.strategy,
               record.sort == "sfc" ? " with sfc order" : "", record.choice.reason);
  using Writing = RunRecord::Writing;
  std::string const chunks =
      record.writing == Writing::after_each
          ? fmt::format(" ({} call{} of at most {} queries a rank, each call's results written after it)",
                        record.chunks, record.chunks == 1 ? "" : "s", record.chunk)
      : record.chunks > 1 ? fmt::format(" in {} chunks of {} queries{},", record.chunks, record.chunk,
                                        record.writing == Writing::beside ? ", reading and writing beside the traversal"
                                                                          : "")
                          : "";
  fmt::print("{}: {} queries against {} reference points ({}-D); tree {}, leaf size {}{}; backend "
             "{}, threads {}, "
             "strategy {}, placement {}. Read {:.3g} s, build {:.3g} s, traverse{} {:.3g} s ({:.0f} "
             "queries/s), "
             "write {:.3g} s. {} "
             "Wrote {}.\n",
             record.application, record.n_queries, record.n_reference, record.dimension,
             record.tree, record.leaf_size, parameters_text(record.parameters),
             to_string(record.backend), record.threads, record.strategy,
             placement_name(record.placement), record.read_s, record.build_s, chunks,
             record.traverse_s, record.n_queries / record.traverse_s, record.write_s,
             headline.text(), output);
}

} // namespace treetrav::cli
