// treetrav pc | nn | knn | vp | bt: one query set against a reference set,
// through the tree each application uses, by brute force, or either as
// --strategy auto picks.
#include "auto_strategy.hpp"
#include "run_app.hpp"

#include <treetrav/apps/batch.hpp>
#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/progress.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/vp_tree.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/distributed_search.hpp>
#endif

#include <unistd.h>

#include <memory>
#include <optional>

namespace treetrav::cli {
namespace {

enum class SearchKind { pc, radius, nn, knn, vp, bt };

struct SearchCommand {
  SearchKind kind;
  char const* name;
  char const* description;
};

constexpr SearchCommand search_commands[] = {
    {SearchKind::pc, "pc",
     "Point correlation: count the reference points within radius -r of each query (kd-tree)"},
    {SearchKind::radius, "radius",
     "Radius search: list the reference points within radius -r of each query, nearest first "
     "(kd-tree)"},
    {SearchKind::nn, "nn", "Nearest reference point of each query (kd-tree)"},
    {SearchKind::knn, "knn", "k nearest reference points of each query (kd-tree)"},
    {SearchKind::vp, "vp", "Nearest reference point of each query (vantage-point tree)"},
    {SearchKind::bt, "bt", "k nearest reference points of each query (ball tree)"},
};

bool takes_k(SearchKind kind) {
  return kind == SearchKind::knn || kind == SearchKind::bt;
}
bool takes_radius(SearchKind kind) {
  return kind == SearchKind::pc || kind == SearchKind::radius;
}

struct SearchOptions {
  std::string reference;
  std::string queries;
  bool self = false;
  int k = 1;
  Coordinate radius = 0;
  Index chunk = 0;
  RunOptions run;
};

// What every search starts from, on the host.
struct SearchInputs {
  io::HostPointSet reference;
  // The queries: in memory (--self: the reference points; a search over
  // several ranks), or else read from `query_file` a chunk at a time.
  io::HostPointSet queries;
  std::shared_ptr<io::PointReader const> query_file;
  int leaf_size;
  bool sorted;
  bool self;
  Index chunk; // --chunk: queries per chunk (0: sized from free device memory)

  Index query_count() const { return query_file ? query_file->size() : queries.size(); }
  // Host queries [first, first + count).
  io::HostPointSet load(Index first, Index count) const {
    if (query_file)
      return query_file->read(first, count);
    return count == queries.size() ? queries : treetrav::detail::host_rows(queries, first, first + count);
  }
};

// Where a streamed search puts what it finds, chunk by chunk (stream_search).
struct SearchOutput {
  io::ResultsStream* results;
  Headline* headline;
  Progress* progress;
  RunRecord* record;
};

template <template <class> class Tree, class Space>
struct SearchSetup {
  bool trees = false; // whether `tree` was built
  Tree<typename Space::memory_space> tree;
  PointSet<typename Space::memory_space> reference; // brute force and auto only
};

// What Strategy needs, built where it is used from the reference points
// moved there once: the tree (not for brute force, nor for auto beyond the
// dimensions where it probes trees) and the points (brute force, auto). The
// queries go to the search a chunk at a time (stream_search).
template <template <class> class Tree, class Space, class Strategy>
SearchSetup<Tree, Space> set_up_search(Space const& space, SearchInputs const& inputs) {
  constexpr bool brute = std::is_same_v<Strategy, BruteForce>;
  constexpr bool automatic = std::is_same_v<Strategy, Automatic>;
  SearchSetup<Tree, Space> setup;
  auto const reference = copy_points(space, inputs.reference, "treetrav::cli::reference");
  int const dimension = inputs.reference.dimension();
  setup.trees = !brute && (!automatic ||
                           dimension <= std::min(max_tree_dimension,
                                                 probed_tree_dimension(inputs.reference.size())));
  if (setup.trees)
    setup.tree = Tree<typename Space::memory_space>(space, reference, inputs.leaf_size);
  if (brute || automatic)
    setup.reference = reference;
  return setup;
}

// The query order a tree search follows: a Morton `order` given (auto's,
// shared by its probe), else sfc asks the search to sort inside the call.
inline QueryOrder wanted_order(bool sorted, Index given) {
  return sorted && given == 0 ? QueryOrder::sfc : QueryOrder::none;
}

// One chunk's search under `strategy`. Under auto the first chunk picks the
// plan by timing each candidate on a sample of its queries
// (auto_strategy.hpp); `choice` keeps it for the chunks after.
template <class Application, class Space, class Setup, class Strategy, class Queries>
auto search_chunk(Application const& app, Space const& space, Setup const& setup,
                  Strategy strategy, Queries const& queries, std::optional<SearchChoice>& choice) {
  if constexpr (std::is_same_v<Strategy, Automatic>) {
    Kokkos::View<Index*, typename Space::memory_space> order;
    if (!choice) {
      double order_s = 0;
      if (setup.trees) {
        Kokkos::Timer timer;
        order = morton_order(space, queries);
        space.fence();
        order_s = timer.seconds();
      }
      choice = choose_strategy(space, queries, order, order_s, setup.reference.size(), setup.trees,
                               [&](auto tag, auto const& sample) {
                                 app.search(space, setup, tag, sample, false, true, {});
                               });
      if (strategy.choice != nullptr)
        *strategy.choice = {choice->plan.name(), choice->plan.sorted, choice->reason,
                            choice->probe_s};
    }
    return std::visit(
        [&](auto tag) {
          return app.search(space, setup, tag, queries, choice->plan.sorted, false, order);
        },
        choice->plan.strategy);
  } else {
    return app.search(space, setup, strategy, queries, app.inputs.sorted, false, {});
  }
}

// Device bytes a chunk needs per query beside its results: the row, its
// sorted copy, Morton code and order.
inline std::size_t query_bytes(int dimension) {
  return 2 * dimension * sizeof(Coordinate) + 2 * sizeof(std::uint64_t);
}

// The search loop of every one-rank search: the queries go to the device a
// chunk at a time (sized from its free memory, or --chunk; --self in one
// chunk, its queries being the reference points, whose own rows they skip),
// the next chunk read and the last one's results written and summed up on
// host threads beside the search; a progress line on a terminal.
struct Streamed {};

template <class Application, class Space, class Setup, class Strategy>
Streamed stream_search(Application const& app, Space const& space, Setup const& setup,
                       Strategy strategy) {
  auto const& inputs = app.inputs;
  auto const& out = app.output;
  Index const n = inputs.query_count();
  Index const chunk =
      inputs.self ? n
                  : chunk_size(space, n, BatchOptions{inputs.chunk},
                               query_bytes(inputs.reference.dimension()) + app.result_bytes());
  std::optional<SearchChoice> choice;
  double read_s = 0, write_s = 0; // each summed on one thread at a time
  out.progress->begin(0, n);
  for_each_chunk(
      space, n, chunk,
      [&](Index first, Index count) {
        Kokkos::Timer timer;
        auto queries = inputs.load(first, count);
        read_s += timer.seconds();
        return queries;
      },
      [&](auto const& queries) {
        return app.collect(search_chunk(app, space, setup, strategy, queries, choice));
      },
      [&](Index first, io::QueryResults const& block) {
        Kokkos::Timer timer;
        out.headline->add(block);
        out.results->write(first, block);
        write_s += timer.seconds();
      },
      [&](Index done, Index) { out.progress->update(done); });
  out.progress->finish(n);
  out.record->read_s += read_s;
  out.record->write_s += write_s;
  out.record->chunk = chunk;
  out.record->chunks = (n + chunk - 1) / chunk;
  return {};
}

// nn, knn, vp, bt: the Application of run_application (run_app.hpp).
template <template <class> class Tree>
struct NeighborSearch {
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  NeighborOptions options;
  SearchOutput output;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<Tree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  Streamed traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    return stream_search(*this, space, setup, strategy);
  }
  std::size_t result_bytes() const {
    return options.k * (sizeof(Index) + sizeof(Coordinate));
  }
  // One search of `queries` (a chunk, or auto's sample: `probe` drops
  // --self, whose rows a sample does not keep) in the Morton `order` given
  // or, `sorted` without one, sorted inside the search.
  template <class Space, class Setup, class Strategy, class Queries>
  NeighborResults<typename Space::memory_space>
  search(Space const& space, Setup const& setup, Strategy strategy, Queries const& queries,
         bool sorted, bool probe,
         Kokkos::View<Index*, typename Space::memory_space> const& order) const {
    auto const given = sorted ? order : std::decay_t<decltype(order)>();
    NeighborOptions const run_options{options.k, options.exclude_self && !probe,
                                      wanted_order(sorted, given.extent(0))};
    if constexpr (std::is_same_v<Strategy, BruteForce>)
      return find_neighbors(space, setup.reference, queries, run_options, strategy);
    else if constexpr (std::is_same_v<Strategy, Automatic> || !strategy_runs_on<Strategy, Space>)
      throw std::logic_error("auto picks a strategy that runs here");
    else
      return find_neighbors(space, setup.tree, queries, run_options, strategy, given);
  }
  template <class Neighbors>
  io::QueryResults collect(Neighbors const& neighbors) const {
    io::QueryResults results;
    results.neighbor_indices =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, neighbors.indices);
    results.neighbor_distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, neighbors.distances);
    return results;
  }
  io::QueryResults collect(Streamed) const { return {}; }
};

// pc: the Application of run_application (run_app.hpp).
struct PointCorrelation {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  RangeCountOptions options;
  SearchOutput output;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<KdTree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  Streamed traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    return stream_search(*this, space, setup, strategy);
  }
  std::size_t result_bytes() const { return sizeof(std::int64_t); }
  template <class Space, class Setup, class Strategy, class Queries>
  Kokkos::View<std::int64_t*, typename Space::memory_space>
  search(Space const& space, Setup const& setup, Strategy strategy, Queries const& queries,
         bool sorted, bool probe,
         Kokkos::View<Index*, typename Space::memory_space> const& order) const {
    auto const given = sorted ? order : std::decay_t<decltype(order)>();
    RangeCountOptions const run_options{options.radius, options.exclude_self && !probe,
                                        wanted_order(sorted, given.extent(0))};
    if constexpr (std::is_same_v<Strategy, BruteForce>)
      return count_within(space, setup.reference, queries, run_options, strategy);
    else if constexpr (std::is_same_v<Strategy, Automatic> || !strategy_runs_on<Strategy, Space>)
      throw std::logic_error("auto picks a strategy that runs here");
    else
      return count_within(space, setup.tree, queries, run_options, strategy, given);
  }
  template <class Counts>
  io::QueryResults collect(Counts const& counts) const {
    io::QueryResults results;
    results.counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    return results;
  }
  io::QueryResults collect(Streamed) const { return {}; }
};

// radius: the Application of run_application (run_app.hpp); tree strategies
// only (brute force lists no neighbours yet).
struct RadiusSearch {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  // Device bytes per query for its list, at this many neighbours (a guess:
  // lists longer than the first walk's capacity are walked again).
  static constexpr std::size_t listed_per_query = 64;
  SearchInputs inputs;
  RangeCountOptions options;
  SearchOutput output;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<KdTree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  Streamed traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    return stream_search(*this, space, setup, strategy);
  }
  std::size_t result_bytes() const {
    return sizeof(std::int64_t) + 2 * listed_per_query * (sizeof(Index) + sizeof(Coordinate));
  }
  template <class Space, class Setup, class Strategy, class Queries>
  auto search(Space const& space, Setup const& setup, Strategy strategy, Queries const& queries,
              bool sorted, bool, Kokkos::View<Index*, typename Space::memory_space> const&) const {
    RadiusSearchOptions search{options};
    search.radius.order = sorted ? QueryOrder::sfc : QueryOrder::none;
    return find_within(space, setup.tree, queries, search, strategy);
  }
  template <class Lists>
  io::QueryResults collect(Lists const& lists) const {
    io::QueryResults results;
    results.list_offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.offsets);
    results.list_indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.indices);
    results.list_distances =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, lists.distances);
    return results;
  }
  io::QueryResults collect(Streamed) const { return {}; }
};

// The tree strategy of a search whose --strategy names one (radius's, and
// every distributed search's: the callback refuses brute and auto there).
ApplicationStrategy tree_strategy(SearchStrategy const& strategy) {
  return std::visit(
      [](auto tag) -> ApplicationStrategy {
        using Strategy = decltype(tag);
        if constexpr (std::is_same_v<Strategy, BruteForce> || std::is_same_v<Strategy, Automatic>)
          throw std::logic_error("a tree strategy was expected");
        else
          return tag;
      },
      strategy);
}

#ifdef TREETRAV_ENABLE_MPI
// Several ranks: each holds a spatial piece of the reference points in its
// own tree and answers for a block of the queries (distributed_search.hpp);
// rank 0 gathers the results in query order.
template <template <class> class Tree, class Space>
struct DistributedSetup {
  distributed::DistributedTree<Tree<typename Space::memory_space>> tree;
  io::HostPointSet queries; // this rank's block of the queries
  Index first_query;        // the block's first row
};

template <template <class> class Tree, class Space>
DistributedSetup<Tree, Space> set_up_distributed(Space const& space, SearchInputs const& inputs) {
  distributed::Communicator const world;
  auto const block = distributed::block_of(inputs.queries.size(), world.rank(), world.size());
  auto queries = allocate_points<Kokkos::HostSpace>(
      "treetrav::cli::queries", Index(block.end - block.begin), inputs.queries.dimension());
  Kokkos::deep_copy(queries.coordinates,
                    Kokkos::subview(inputs.queries.coordinates,
                                    std::make_pair(block.begin, block.end), Kokkos::ALL));
  return {{space, world,
           distributed::morton_partition(inputs.reference, world.rank(), world.size()),
           inputs.leaf_size},
          queries,
          Index(block.begin)};
}

// Rank 0's copy of every rank's rows of `view` (n rows of `width` values), in rank order.
template <class View>
auto gather_rows(View const& view, int width) {
  using Value = typename View::non_const_value_type;
  std::vector<Value> const mine(view.data(), view.data() + view.extent(0) * width);
  auto const all = distributed::gather(distributed::Communicator{}, mine);
  Kokkos::View<typename View::non_const_data_type, typename View::array_layout, Kokkos::HostSpace>
      gathered(view.label(), width ? all.size() / width : 0, width);
  std::copy(all.begin(), all.end(), gathered.data());
  return gathered;
}

template <template <class> class Tree>
struct DistributedNeighborSearch {
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  NeighborOptions options;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_distributed<Tree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    NeighborOptions sorted = options;
    sorted.order = wanted_order(inputs.sorted, 0);
    return distributed::find_neighbors(space, setup.tree, setup.queries, sorted, strategy,
                                       setup.first_query);
  }
  io::QueryResults collect(NeighborResults<Kokkos::HostSpace> const& neighbors) const {
    io::QueryResults results;
    results.neighbor_indices = gather_rows(neighbors.indices, options.k);
    results.neighbor_distances = gather_rows(neighbors.distances, options.k);
    return results;
  }
};

struct DistributedPointCorrelation {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  RangeCountOptions options;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_distributed<KdTree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    RangeCountOptions sorted = options;
    sorted.order = wanted_order(inputs.sorted, 0);
    return distributed::count_within(space, setup.tree, setup.queries, sorted, strategy);
  }
  io::QueryResults collect(Kokkos::View<std::int64_t*, Kokkos::HostSpace> const& counts) const {
    io::QueryResults results;
    auto const all = distributed::gather(
        distributed::Communicator{},
        std::vector<std::int64_t>(counts.data(), counts.data() + counts.extent(0)));
    results.counts = decltype(results.counts)(counts.label(), all.size());
    std::copy(all.begin(), all.end(), results.counts.data());
    return results;
  }
};

io::QueryResults run_distributed_search(SearchKind kind, SearchInputs const& inputs,
                                        SearchOptions const& options, ApplicationStrategy strategy,
                                        RunRecord& record) {
  NeighborOptions const neighbors{options.k, options.self};
  switch (kind) {
  case SearchKind::pc:
    return run_application(DistributedPointCorrelation{inputs, {options.radius, options.self}},
                           strategy, record);
  case SearchKind::nn:
  case SearchKind::knn:
    return run_application(DistributedNeighborSearch<KdTree>{inputs, neighbors}, strategy, record);
  case SearchKind::vp:
    return run_application(DistributedNeighborSearch<VpTree>{inputs, neighbors}, strategy, record);
  case SearchKind::bt:
    return run_application(DistributedNeighborSearch<BallTree>{inputs, neighbors}, strategy,
                           record);
  case SearchKind::radius:
    break;
  }
  throw std::logic_error("unhandled distributed search kind");
}
#endif

// The application axis of the dispatch: the subcommand picks tree and query.
// One rank streams its results into `output`; several return them to rank 0.
io::QueryResults run_search(SearchKind kind, SearchInputs const& inputs,
                            SearchOptions const& options, SearchStrategy strategy,
                            RunRecord& record, [[maybe_unused]] int ranks,
                            SearchOutput const& output) {
#ifdef TREETRAV_ENABLE_MPI
  if (ranks > 1)
    return run_distributed_search(kind, inputs, options, tree_strategy(strategy), record);
#endif
  NeighborOptions const neighbors{options.k, options.self};
  switch (kind) {
  case SearchKind::pc:
    return run_application(PointCorrelation{inputs, {options.radius, options.self}, output},
                           strategy, record);
  case SearchKind::radius:
    return run_application(RadiusSearch{inputs, {options.radius, options.self}, output},
                           tree_strategy(strategy), record);
  case SearchKind::nn:
  case SearchKind::knn:
    return run_application(NeighborSearch<KdTree>{inputs, neighbors, output}, strategy, record);
  case SearchKind::vp:
    return run_application(NeighborSearch<VpTree>{inputs, neighbors, output}, strategy, record);
  case SearchKind::bt:
    return run_application(NeighborSearch<BallTree>{inputs, neighbors, output}, strategy, record);
  }
  throw std::logic_error("unhandled search kind");
}

// Reads and cross-checks the inputs: the reference points, and the queries
// whole (`whole_queries`: a search over several ranks) or opened to be read
// a chunk at a time; k, radius and leaf size are checked by the library
// before the traversal, and everything before any output.
SearchInputs read_search_inputs(SearchKind kind, SearchOptions const& options,
                                bool whole_queries) {
  SearchInputs inputs{io::read_points(options.reference),
                      {},
                      nullptr,
                      options.run.leaf_size,
                      options.run.sorted(),
                      options.self,
                      options.chunk};
  if (options.self) {
    // Said here: the library's "-k exceeds" would blame -k, which nn and vp do not take.
    if (!takes_radius(kind) && inputs.reference.size() == 1)
      throw InputError("--self: --reference " + options.reference +
                       " holds a single point, which has no other");
    inputs.queries = inputs.reference;
    return inputs;
  }
  int dimension = 0;
  if (whole_queries) {
    inputs.queries = io::read_points(options.queries);
    dimension = inputs.queries.dimension();
  } else {
    inputs.query_file = std::make_shared<io::PointReader const>(options.queries);
    dimension = inputs.query_file->dimension();
  }
  if (dimension != inputs.reference.dimension())
    throw InputError(fmt::format("--queries {} holds {}-D points but --reference {} holds {}-D points",
                                 options.queries, dimension, options.reference,
                                 inputs.reference.dimension()));
  return inputs;
}

void add_search_command(CLI::App& app, SearchCommand const& command) {
  auto* sub = app.add_subcommand(command.name, command.description);
  auto options = std::make_shared<SearchOptions>();
  sub->add_option("--reference", options->reference, "Reference point set (HDF5 points file)")
      ->required()
      ->check(file_name());
  auto* queries =
      sub->add_option("--queries", options->queries, "Query point set (HDF5 points file)")
          ->check(file_name());
  auto* self = sub->add_flag("--self", options->self,
                             "Query the reference set against itself; each point excludes itself "
                             "(so its own distance 0 or count is not reported)");
  queries->excludes(self);
  if (takes_k(command.kind)) {
    options->k = 8;
    sub->add_option("-k", options->k,
                    "Neighbours per query (1.." + std::to_string(max_neighbors) + ")")
        ->check(in_range(1, max_neighbors))
        ->capture_default_str();
  }
  if (takes_radius(command.kind))
    sub->add_option("-r,--radius", options->radius,
                    "Reference points within this distance count (inclusive)")
        ->required()
        ->check(positive<Coordinate>());
  sub->add_option("--chunk", options->chunk,
                  "Queries per chunk: the queries are read, searched and their results written "
                  "a chunk at a time, side by side (0: as many as fit in half the free device "
                  "memory, at most " +
                      std::to_string(BatchOptions::max_chunk) + ")")
      ->check(at_least(0))
      ->capture_default_str()
      ->excludes(self);
  add_run_options(*sub, options->run,
                  command.kind == SearchKind::radius ? StrategySet::application
                                                     : StrategySet::search);
  auto* const strategy_option = sub->get_option("--strategy");
  sub->footer(std::string("Exactly one of --queries or --self. Results, in query order: ") +
              (command.kind == SearchKind::pc ? "/Results/Counts (n_queries)."
               : command.kind == SearchKind::radius
                   ? "/Results/ListOffsets (n_queries + 1), ListIndices and ListDistances: query "
                     "q's neighbours "
                     "are entries [ListOffsets[q], ListOffsets[q + 1]), rows of the reference set, "
                     "nearest first, "
                     "ties broken by index."
                   : "/Results/NeighborIndices and NeighborDistances (n_queries, k): rows of the "
                     "reference set, "
                     "nearest first, ties broken by index."));

  sub->callback([options, strategy_option, kind = command.kind, name = command.name] {
    if (options->queries.empty() && !options->self)
      throw InputError("give --queries FILE or --self");
    SearchStrategy strategy =
        kind == SearchKind::radius
            ? std::visit([](auto tag) { return SearchStrategy(tag); }, strategy_from(options->run))
            : search_strategy_from(options->run);
    std::vector<FileOption> input_files{{"--reference", options->reference}};
    if (!options->self)
      input_files.push_back({"--queries", options->queries});
    check_output_file({"-o", options->run.output}, input_files);
    // Radius lists are not distributed yet.
    KokkosSession session(options->run.runtime,
                          kind == SearchKind::radius ? Ranks::one : Ranks::many);
    // Distributed searches walk trees: brute force and auto run on one rank
    // (asked for by name, they are refused; the default auto becomes autoropes).
    if (session.ranks() > 1 && (std::holds_alternative<BruteForce>(strategy) ||
                                std::holds_alternative<Automatic>(strategy))) {
      if (strategy_option->count() > 0)
        throw InputError(fmt::format("--strategy {}: runs on one MPI rank, not {}; searches over "
                                     "several ranks take the tree strategies (see --help)",
                                     options->run.strategy, session.ranks()));
      strategy = Autoropes{};
    }

    RunRecord record;
    record.placement = placement_from(options->run);
    // Placements move a walk's work items onto SMs: under a software placement
    // the default auto becomes autoropes (asked for by name, auto is refused).
    if (!std::holds_alternative<Hardware>(record.placement) && strategy_option->count() == 0 &&
        std::holds_alternative<Automatic>(strategy))
      strategy = Autoropes{};
    record.application = name;
    record.backend = session.backend();
    options->run.leaf_size = leaf_size_of(options->run, /*forces=*/false);
    record.leaf_size = options->run.leaf_size;
    record.sort = options->run.sort;
    if (session.ranks() > 1 && options->chunk > 0)
      throw InputError(fmt::format("--chunk: a search over {} ranks holds each rank's block of "
                                   "queries whole (run it without --chunk)",
                                   session.ranks()));
    Kokkos::Timer timer;
    auto const inputs = read_search_inputs(kind, *options, session.ranks() > 1);
    record.read_s = timer.seconds();
    record.n_reference = inputs.reference.size();
    record.n_queries = inputs.query_count();
    record.dimension = inputs.reference.dimension();
    record.parameters.set("reference", options->reference)
        .set("queries", options->self ? "self" : options->queries);
    if (takes_radius(kind))
      record.parameters.set("radius", static_cast<double>(options->radius));
    else
      record.parameters.set("k", static_cast<double>(options->k));

    if (session.ranks() > 1) {
      record.parameters.set("ranks", static_cast<double>(session.ranks()));
      auto results = run_search(kind, inputs, *options, strategy, record, session.ranks(), {});
      if (session.prints())
        write_and_summarize(results, record, options->run.output);
      return;
    }
    io::ResultsStream results(options->run.output, name, record.n_queries);
    Headline headline;
    Progress progress(stderr, isatty(fileno(stderr)) != 0, 0, "query", "queries");
    run_search(kind, inputs, *options, strategy, record, 1,
               {&results, &headline, &progress, &record});
    timer.reset();
    results.commit(to_metadata(record));
    record.write_s += timer.seconds();
    summarize(record, headline, options->run.output);
  });
}

} // namespace

void add_search_commands(CLI::App& app) {
  for (auto const& command : search_commands)
    add_search_command(app, command);
}

} // namespace treetrav::cli
