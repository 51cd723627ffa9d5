// treetrav paircount: pair counts in radial bins (DD(r)) of one point set
// (each unordered pair once) or of two (queries x reference), weighted or
// not, in a periodic box or open space; in a box, also the natural estimator
// xi = DD / RR - 1. Over several MPI ranks each rank counts its block of the
// queries against the whole reference set and the counts are summed.
#include "run_app.hpp"

#include <treetrav/apps/pair_count.hpp>
#include <treetrav/io/pair_counts.hpp>
#include <treetrav/io/points.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/communicator.hpp>
#endif

#include <memory>
#include <numeric>

namespace treetrav::cli {
namespace {

struct PairCountCommand {
  std::string reference, queries;
  std::vector<double> edges;
  int bins = 0;
  std::vector<double> range;
  std::string spacing = "log";
  std::vector<double> box;
  bool weights = false;
  RunOptions run;
  bool strategy_given = false;
};

// The Application of run_application: the tree over the reference points,
// the queries and the weights moved to the backend, one count_pairs.
struct PairCountRun {
  static constexpr char const* tree_name = "bvh";
  io::HostPointSet const& reference;
  io::HostPointSet const& queries;
  std::vector<float> const& reference_weights;
  std::vector<float> const& query_weights;
  PairCountOptions options;
  int leaf_size;
  std::shared_ptr<PairCounts> counted;

  template <class Space>
  struct Setup {
    Bvh<typename Space::memory_space> tree;
    PointSet<typename Space::memory_space> queries;
    Kokkos::View<Coordinate*, typename Space::memory_space> reference_weights, query_weights;
  };

  template <class Space>
  static Kokkos::View<Coordinate*, typename Space::memory_space>
  to_space(Space const& space, std::vector<float> const& values, char const* label) {
    Kokkos::View<Coordinate*, typename Space::memory_space> view(std::string(label),
                                                                 values.size());
    Kokkos::deep_copy(space, view,
                      Kokkos::View<float const*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          values.data(), values.size()));
    space.fence();
    return view;
  }

  template <class Space, class Strategy>
  Setup<Space> setup(Space const& space, Strategy const&) const {
    auto const points = copy_points(space, reference, "treetrav::cli::reference");
    return {Bvh<typename Space::memory_space>(space, points, leaf_size),
            copy_points(space, queries, "treetrav::cli::queries"),
            to_space(space, reference_weights, "treetrav::cli::reference_weights"),
            to_space(space, query_weights, "treetrav::cli::query_weights")};
  }
  template <class Space, class Strategy>
  PairCounts traverse(Space const& space, Setup<Space> const& setup, Strategy strategy) const {
    return count_pairs(space, setup.tree, setup.queries, options, strategy,
                       Kokkos::View<Coordinate const*, typename Space::memory_space>(
                           setup.reference_weights),
                       Kokkos::View<Coordinate const*, typename Space::memory_space>(
                           setup.query_weights));
  }
  io::QueryResults collect(PairCounts const& counts) const {
    *counted = counts;
    return {};
  }
};

std::vector<double> edges_of(PairCountCommand const& command) {
  if (!command.edges.empty())
    return command.edges;
  if (command.bins == 0 || command.range.size() != 2)
    throw InputError("give --edges E0,E1,... or --bins N with --range LOW,HIGH");
  return command.spacing == "log" ? log_edges(command.range[0], command.range[1], command.bins)
                                  : linear_edges(command.range[0], command.range[1], command.bins);
}

void run(PairCountCommand& command) {
  bool const autocorrelation = command.queries.empty();
  std::vector<FileOption> inputs{{"--reference", command.reference}};
  if (!autocorrelation)
    inputs.push_back({"--queries", command.queries});
  check_output_file({"-o", command.run.output}, inputs);
  PairCountOptions options;
  options.edges = edges_of(command);
  if (!command.box.empty())
    options.box = PeriodicBox(command.box);
  options.order = command.run.sorted() ? QueryOrder::sfc : QueryOrder::none;
  KokkosSession session(command.run.runtime, Ranks::many);
  RunRecord record;
  record.placement = placement_from(command.run);
  record.application = "paircount";
  record.backend = session.backend();
  record.leaf_size = leaf_size_of(command.run, /*forces=*/false);
  record.sort = command.run.sort;

  // Every rank reads the reference points whole and its block of the
  // queries (auto: of the reference points, which are the queries).
  Kokkos::Timer timer;
  io::HostPointSet const reference = io::read_points(command.reference);
  std::string const query_file = autocorrelation ? command.reference : command.queries;
  io::PointReader const query_reader(query_file);
  if (query_reader.dimension() != reference.dimension())
    throw InputError(fmt::format("--queries {} holds {}-D points but --reference {} holds {}-D "
                                 "points",
                                 command.queries, query_reader.dimension(), command.reference,
                                 reference.dimension()));
  Index first = 0, count = query_reader.size();
#ifdef TREETRAV_ENABLE_MPI
  if (session.ranks() > 1) {
    auto const b = distributed::block_of(std::size_t(query_reader.size()), session.rank(),
                                         session.ranks());
    first = static_cast<Index>(b.begin);
    count = static_cast<Index>(b.end - b.begin);
  }
#endif
  io::HostPointSet const queries = query_reader.read(first, count);
  std::vector<float> reference_weights, query_weights;
  if (command.weights) {
    reference_weights = io::read_point_weights(command.reference);
    if (reference_weights.size() != std::size_t(reference.size()))
      throw InputError(fmt::format("--weights: --reference {} has {} weights (/Points/Weights) "
                                   "for {} points",
                                   command.reference, reference_weights.size(), reference.size()));
    auto const all = autocorrelation ? reference_weights : io::read_point_weights(query_file);
    if (all.size() != std::size_t(query_reader.size()))
      throw InputError(fmt::format("--weights: --queries {} has {} weights (/Points/Weights) for "
                                   "{} points",
                                   query_file, all.size(), query_reader.size()));
    query_weights.assign(all.begin() + first, all.begin() + first + count);
  }
  record.read_s = timer.seconds();
  record.n_reference = reference.size();
  record.n_queries = query_reader.size();
  record.dimension = reference.dimension();

  // One rank: the library pairs each unordered pair once. Several: each
  // rank counts its block's ordered pairs, summed below, then halved.
  bool const ranked = session.ranks() > 1;
  options.autocorrelation = autocorrelation && !ranked;
  // The group walk (the default) pairs one set's own points in one process;
  // otherwise the per-query walks count.
  PairCountStrategy strategy = pair_count_strategy_from(command.run);
  if (trait_of(strategy, [](auto s) { return decltype(s)::group_walk; }) &&
      !options.autocorrelation) {
    if (command.strategy_given)
      throw InputError(fmt::format("--strategy {} counts one set's own pairs in one process "
                                   "(no --queries, one rank); use another strategy{}",
                                   command.run.strategy,
                                   ranked ? " over MPI ranks" : " with --queries"));
    strategy = Autoropes{};
  }
  auto counted = std::make_shared<PairCounts>();
  run_application(PairCountRun{reference, queries, reference_weights, query_weights, options,
                               record.leaf_size, counted},
                  strategy, record);
  PairCounts result = *counted;
#ifdef TREETRAV_ENABLE_MPI
  if (ranked) {
    distributed::Communicator const world;
    auto sum = [&](auto& values, MPI_Datatype type) {
      distributed::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(),
                                           static_cast<int>(values.size()), type, MPI_SUM,
                                           world.get()),
                             "MPI_Allreduce");
    };
    sum(result.counts, MPI_UINT64_T);
    if (!result.weighted.empty())
      sum(result.weighted, MPI_DOUBLE);
    // The metadata's times: the slowest rank's.
    double slowest[] = {record.read_s, record.build_s, record.traverse_s};
    distributed::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, slowest, 3, MPI_DOUBLE, MPI_MAX, world.get()), "MPI_Allreduce");
    record.read_s = slowest[0];
    record.build_s = slowest[1];
    record.traverse_s = slowest[2];
    double const weight_sum =
        std::accumulate(reference_weights.begin(), reference_weights.end(), 0.0);
    double weight_squares = 0;
    for (float w : reference_weights)
      weight_squares += double(w) * w;
    if (autocorrelation) {
      finish_autocorrelation(result, reference.size(), weight_sum, weight_squares);
    } else {
      std::vector<double> query_sum{
          std::accumulate(query_weights.begin(), query_weights.end(), 0.0)};
      sum(query_sum, MPI_DOUBLE);
      result.pairs = double(reference.size()) * double(query_reader.size());
      result.weight_pairs = weight_sum * query_sum[0];
    }
  }
#endif
  io::PairCountFile file;
  file.edges = result.edges;
  file.counts = result.counts;
  file.weighted = result.weighted;
  file.autocorrelation = autocorrelation;
  file.pairs = result.pairs;
  file.weight_pairs = result.weight_pairs;
  if (options.box.periodic()) {
    file.box = command.box;
    file.xi = natural_estimator(result, options.box);
    for (std::size_t b = 0; b < file.xi.size(); ++b)
      file.rr.push_back((file.weighted.empty() ? double(file.counts[b]) : file.weighted[b]) /
                        (file.xi[b] + 1));
  }
  record.parameters.set("reference", command.reference)
      .set("queries", autocorrelation ? std::string("auto") : command.queries)
      .set("bins", static_cast<double>(file.counts.size()))
      .set("weighted", command.weights ? 1.0 : 0.0)
      .set("ranks", static_cast<double>(session.ranks()));
  if (!session.prints())
    return;
  timer.reset();
  file.metadata = to_metadata(record);
  io::write_pair_counts(command.run.output, file);
  record.write_s = timer.seconds();
  std::uint64_t const total = std::accumulate(file.counts.begin(), file.counts.end(), std::uint64_t(0));
  fmt::print("paircount: {} {} points{} in {} bins [{:g}, {:g}){}; backend {}, {} rank(s), "
             "strategy {}. Read {:.3g} s, build {:.3g} s, count {:.3g} s; {} pairs in the bins. "
             "Wrote {}.\n",
             record.n_queries, autocorrelation ? "(auto)" : "queries",
             autocorrelation ? "" : fmt::format(" x {} reference points", record.n_reference),
             file.counts.size(), file.edges.front(), file.edges.back(),
             options.box.periodic() ? ", periodic box" : "", to_string(record.backend),
             session.ranks(), record.strategy, record.read_s, record.build_s, record.traverse_s,
             total, command.run.output);
}

} // namespace

void add_paircount_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "paircount",
      "Pair counts in radial bins (DD), auto (one set, each pair once) or cross (--queries x "
      "--reference), weighted, periodic or not; in a periodic box also xi = DD/RR - 1");
  auto command = std::make_shared<PairCountCommand>();
  command->run.sort = "sfc";
  sub->add_option("--reference", command->reference, "Points (HDF5 points file)")
      ->required()
      ->check(file_name());
  sub->add_option("--queries", command->queries,
                  "Second point set (cross counts); without it, the pairs of --reference")
      ->check(file_name());
  auto* edges = sub->add_option("--edges", command->edges,
                                "Bin edges, increasing, >= 0: bin b holds [E_b, E_b+1)")
                    ->delimiter(',')
                    ->check(finite<double>());
  auto* bins = sub->add_option("--bins", command->bins,
                               "Number of bins (1.." + std::to_string(max_pair_bins) +
                                   "), with --range")
                   ->check(in_range(1, max_pair_bins));
  auto* range = sub->add_option("--range", command->range, "LOW,HIGH: the bins' span, with --bins")
                    ->delimiter(',')
                    ->expected(2)
                    ->check(finite<double>());
  sub->add_option("--spacing", command->spacing, "Bins equal in log r or in r, with --bins")
      ->check(CLI::IsMember({"log", "linear"}))
      ->capture_default_str();
  edges->excludes(bins)->excludes(range);
  bins->needs(range);
  range->needs(bins);
  sub->add_option("--box", command->box,
                  "Lx,Ly,Lz: a periodic box [0, L) (distances to the nearest image; the largest "
                  "edge at most L/2); points outside it are refused")
      ->delimiter(',')
      ->check(positive<double>());
  sub->add_flag("--weights", command->weights,
                "Weight pairs by the product of their points' weights (/Points/Weights of each "
                "file)");
  add_run_options(*sub, command->run, StrategySet::pair_count);
  sub->footer("Results: /PairCounts/Edges (bins + 1), Counts (bins), WeightedCounts (--weights), "
              "RR and Xi (--box); attributes Bins, Autocorrelation, Pairs, WeightPairs, BoxSize.");
  sub->callback([command, sub] {
    command->strategy_given = sub->get_option("--strategy")->count() > 0;
    run(*command);
  });
}

} // namespace treetrav::cli
