// treetrav pc | nn | knn | vp | bt: one query set against a reference set,
// through the tree each application uses, by brute force, or either as
// --strategy auto picks.
#include "auto_strategy.hpp"
#include "run_app.hpp"

#include <treetrav/apps/brute_force.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/kd_tree.hpp>
#include <treetrav/trees/vp_tree.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/distributed_search.hpp>
#endif

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
  RunOptions run;
};

// What every search starts from, on the host.
struct SearchInputs {
  io::HostPointSet reference;
  io::HostPointSet queries;
  int leaf_size;
  bool sorted;
};

template <template <class> class Tree, class Space>
struct SearchSetup {
  bool trees = false; // whether `tree` was built
  Tree<typename Space::memory_space> tree;
  PointSet<typename Space::memory_space> reference; // brute force and auto only
  PointSet<typename Space::memory_space> queries;
  Kokkos::View<Index*, typename Space::memory_space> order; // auto: Morton order; else empty
  double order_s = 0;                                       // seconds that order took
};

// What Strategy needs, built where it is used from the points moved there
// once: the tree (not for brute force, nor for auto beyond the dimensions
// where it probes trees), the reference points (brute force, auto), and for
// auto the Morton order its sorted plans share (a fixed strategy with --sort
// sfc sorts inside the search, counted in its traversal).
template <template <class> class Tree, class Space, class Strategy>
SearchSetup<Tree, Space> set_up_search(Space const& space, SearchInputs const& inputs) {
  constexpr bool brute = std::is_same_v<Strategy, BruteForce>;
  constexpr bool automatic = std::is_same_v<Strategy, Automatic>;
  SearchSetup<Tree, Space> setup;
  setup.queries = copy_points(space, inputs.queries, "treetrav::cli::queries");
  auto const reference = copy_points(space, inputs.reference, "treetrav::cli::reference");
  int const dimension = inputs.reference.dimension();
  setup.trees = !brute && (!automatic ||
                           dimension <= std::min(max_tree_dimension,
                                                 probed_tree_dimension(inputs.reference.size())));
  if (setup.trees)
    setup.tree = Tree<typename Space::memory_space>(space, reference, inputs.leaf_size);
  if (brute || automatic)
    setup.reference = reference;
  if (automatic && setup.trees) {
    Kokkos::Timer timer;
    setup.order = morton_order(space, setup.queries);
    space.fence();
    setup.order_s = timer.seconds();
  }
  return setup;
}

// A tree search's query order: auto's shared Morton order when it has one,
// else sfc asks the search to sort (inside the call).
template <class Setup>
auto given_order(Setup const& setup, bool sorted) {
  return sorted ? setup.order : decltype(setup.order)();
}
inline QueryOrder wanted_order(bool sorted, Index given) {
  return sorted && given == 0 ? QueryOrder::sfc : QueryOrder::none;
}

// Runs app.search under `strategy`; under auto, first picks the plan by
// timing each candidate on a sample of the queries (auto_strategy.hpp).
template <class Application, class Space, class Setup, class Strategy>
auto traverse_search(Application const& app, Space const& space, Setup const& setup,
                     Strategy strategy) {
  if constexpr (std::is_same_v<Strategy, Automatic>) {
    auto const choice = choose_strategy(
        space, setup.queries, setup.order, setup.order_s, setup.reference.size(), setup.trees,
        [&](auto tag, auto const& sample) { app.search(space, setup, tag, sample, false, true); });
    if (strategy.choice != nullptr)
      *strategy.choice = {choice.plan.name(), choice.plan.sorted, choice.reason, choice.probe_s};
    return std::visit(
        [&](auto tag) {
          return app.search(space, setup, tag, setup.queries, choice.plan.sorted, false);
        },
        choice.plan.strategy);
  } else {
    return app.search(space, setup, strategy, setup.queries, app.inputs.sorted, false);
  }
}

// nn, knn, vp, bt: the Application of run_application (run_app.hpp).
template <template <class> class Tree>
struct NeighborSearch {
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  NeighborOptions options;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<Tree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    return traverse_search(*this, space, setup, strategy);
  }
  // One search of `queries` (all of them, or auto's sample: `probe` drops
  // --self, whose rows a sample does not keep).
  template <class Space, class Setup, class Strategy, class Queries>
  NeighborResults<typename Space::memory_space> search(Space const& space, Setup const& setup,
                                                       Strategy strategy, Queries const& queries,
                                                       bool sorted, bool probe) const {
    auto const order = given_order(setup, sorted);
    NeighborOptions const run_options{options.k, options.exclude_self && !probe,
                                      wanted_order(sorted, order.extent(0))};
    if constexpr (std::is_same_v<Strategy, BruteForce>)
      return find_neighbors(space, setup.reference, queries, run_options, strategy);
    else if constexpr (std::is_same_v<Strategy, Automatic> || !strategy_runs_on<Strategy, Space>)
      throw std::logic_error("auto picks a strategy that runs here");
    else
      return find_neighbors(space, setup.tree, queries, run_options, strategy, order);
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
};

// pc: the Application of run_application (run_app.hpp).
struct PointCorrelation {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  RangeCountOptions options;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<KdTree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    return traverse_search(*this, space, setup, strategy);
  }
  template <class Space, class Setup, class Strategy, class Queries>
  Kokkos::View<std::int64_t*, typename Space::memory_space>
  search(Space const& space, Setup const& setup, Strategy strategy, Queries const& queries,
         bool sorted, bool probe) const {
    auto const order = given_order(setup, sorted);
    RangeCountOptions const run_options{options.radius, options.exclude_self && !probe,
                                        wanted_order(sorted, order.extent(0))};
    if constexpr (std::is_same_v<Strategy, BruteForce>)
      return count_within(space, setup.reference, queries, run_options, strategy);
    else if constexpr (std::is_same_v<Strategy, Automatic> || !strategy_runs_on<Strategy, Space>)
      throw std::logic_error("auto picks a strategy that runs here");
    else
      return count_within(space, setup.tree, queries, run_options, strategy, order);
  }
  template <class Counts>
  io::QueryResults collect(Counts const& counts) const {
    io::QueryResults results;
    results.counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    return results;
  }
};

// radius: the Application of run_application (run_app.hpp); tree strategies
// only (brute force lists no neighbours yet).
struct RadiusSearch {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  RangeCountOptions options;

  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    return set_up_search<KdTree, Space, Strategy>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    RadiusSearchOptions search{options};
    search.radius.order = inputs.sorted ? QueryOrder::sfc : QueryOrder::none;
    return find_within(space, setup.tree, setup.queries, search, strategy);
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
io::QueryResults run_search(SearchKind kind, SearchInputs const& inputs,
                            SearchOptions const& options, SearchStrategy strategy,
                            RunRecord& record, [[maybe_unused]] int ranks) {
#ifdef TREETRAV_ENABLE_MPI
  if (ranks > 1)
    return run_distributed_search(kind, inputs, options, tree_strategy(strategy), record);
#endif
  NeighborOptions const neighbors{options.k, options.self};
  switch (kind) {
  case SearchKind::pc:
    return run_application(PointCorrelation{inputs, {options.radius, options.self}}, strategy,
                           record);
  case SearchKind::radius:
    return run_application(RadiusSearch{inputs, {options.radius, options.self}},
                           tree_strategy(strategy), record);
  case SearchKind::nn:
  case SearchKind::knn:
    return run_application(NeighborSearch<KdTree>{inputs, neighbors}, strategy, record);
  case SearchKind::vp:
    return run_application(NeighborSearch<VpTree>{inputs, neighbors}, strategy, record);
  case SearchKind::bt:
    return run_application(NeighborSearch<BallTree>{inputs, neighbors}, strategy, record);
  }
  throw std::logic_error("unhandled search kind");
}

// Reads and cross-checks the inputs; k, radius and leaf size are checked by
// the library before the traversal, and everything before any output.
SearchInputs read_search_inputs(SearchKind kind, SearchOptions const& options) {
  SearchInputs inputs{
      io::read_points(options.reference), {}, options.run.leaf_size, options.run.sorted()};
  if (options.self) {
    // Said here: the library's "-k exceeds" would blame -k, which nn and vp do not take.
    if (!takes_radius(kind) && inputs.reference.size() == 1)
      throw InputError("--self: --reference " + options.reference +
                       " holds a single point, which has no other");
    inputs.queries = inputs.reference;
    return inputs;
  }
  inputs.queries = io::read_points(options.queries);
  if (inputs.queries.dimension() != inputs.reference.dimension())
    throw InputError(fmt::format(
        "--queries {} holds {}-D points but --reference {} holds {}-D points", options.queries,
        inputs.queries.dimension(), options.reference, inputs.reference.dimension()));
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
    options->run.leaf_size = leaf_size_of(options->run, /*forces=*/false, record.backend);
    record.leaf_size = options->run.leaf_size;
    record.sort = options->run.sort;
    Kokkos::Timer timer;
    auto const inputs = read_search_inputs(kind, *options);
    record.read_s = timer.seconds();
    record.n_reference = inputs.reference.size();
    record.n_queries = inputs.queries.size();
    record.dimension = inputs.reference.dimension();
    record.parameters.set("reference", options->reference)
        .set("queries", options->self ? "self" : options->queries);
    if (takes_radius(kind))
      record.parameters.set("radius", static_cast<double>(options->radius));
    else
      record.parameters.set("k", static_cast<double>(options->k));

    if (session.ranks() > 1)
      record.parameters.set("ranks", static_cast<double>(session.ranks()));
    auto results = run_search(kind, inputs, *options, strategy, record, session.ranks());
    if (session.prints())
      write_and_summarize(results, record, options->run.output);
  });
}

} // namespace

void add_search_commands(CLI::App& app) {
  for (auto const& command : search_commands)
    add_search_command(app, command);
}

} // namespace treetrav::cli
