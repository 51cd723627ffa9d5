// treetrav pc | nn | knn | vp | bt: one query set against a reference set,
// through the tree each application uses.
#include "run_app.hpp"

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
  Tree<typename Space::memory_space> tree;
  PointSet<typename Space::memory_space> queries;
};

// The tree is built where it is used, from the points moved there once.
template <template <class> class Tree, class Space>
SearchSetup<Tree, Space> set_up_search(Space const& space, SearchInputs const& inputs) {
  auto reference = copy_points(space, inputs.reference, "treetrav::cli::reference");
  return {Tree<typename Space::memory_space>(space, reference, inputs.leaf_size),
          copy_points(space, inputs.queries, "treetrav::cli::queries")};
}

QueryOrder query_order(SearchInputs const& inputs) {
  return inputs.sorted ? QueryOrder::sfc : QueryOrder::none;
}

// nn, knn, vp, bt: the Application of run_application (run_app.hpp).
template <template <class> class Tree>
struct NeighborSearch {
  static constexpr char const* tree_name = Tree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  NeighborOptions options;

  template <class Space>
  auto setup(Space const& space) const {
    return set_up_search<Tree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    NeighborOptions sorted = options;
    sorted.order = query_order(inputs);
    return find_neighbors(space, setup.tree, setup.queries, sorted, strategy);
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

  template <class Space>
  auto setup(Space const& space) const {
    return set_up_search<KdTree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    RangeCountOptions sorted = options;
    sorted.order = query_order(inputs);
    return count_within(space, setup.tree, setup.queries, sorted, strategy);
  }
  template <class Counts>
  io::QueryResults collect(Counts const& counts) const {
    io::QueryResults results;
    results.counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    return results;
  }
};

// radius: the Application of run_application (run_app.hpp).
struct RadiusSearch {
  static constexpr char const* tree_name = KdTree<Kokkos::HostSpace>::name;
  SearchInputs inputs;
  RangeCountOptions options;

  template <class Space>
  auto setup(Space const& space) const {
    return set_up_search<KdTree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    RadiusSearchOptions search{options};
    search.radius.order = query_order(inputs);
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

  template <class Space>
  auto setup(Space const& space) const {
    return set_up_distributed<Tree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    NeighborOptions sorted = options;
    sorted.order = query_order(inputs);
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

  template <class Space>
  auto setup(Space const& space) const {
    return set_up_distributed<KdTree>(space, inputs);
  }
  template <class Space, class Setup, class Strategy>
  auto traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    RangeCountOptions sorted = options;
    sorted.order = query_order(inputs);
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
                            SearchOptions const& options, ApplicationStrategy strategy, RunRecord& record,
                            [[maybe_unused]] int ranks) {
#ifdef TREETRAV_ENABLE_MPI
  if (ranks > 1)
    return run_distributed_search(kind, inputs, options, strategy, record);
#endif
  NeighborOptions const neighbors{options.k, options.self};
  switch (kind) {
  case SearchKind::pc:
    return run_application(PointCorrelation{inputs, {options.radius, options.self}}, strategy,
                           record);
  case SearchKind::radius:
    return run_application(RadiusSearch{inputs, {options.radius, options.self}}, strategy, record);
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
  add_run_options(*sub, options->run);
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

  sub->callback([options, kind = command.kind, name = command.name] {
    if (options->queries.empty() && !options->self)
      throw InputError("give --queries FILE or --self");
    ApplicationStrategy const strategy = strategy_from(options->run);
    std::vector<FileOption> input_files{{"--reference", options->reference}};
    if (!options->self)
      input_files.push_back({"--queries", options->queries});
    check_output_file({"-o", options->run.output}, input_files);
    // Radius lists are not distributed yet.
    KokkosSession session(options->run.runtime,
                          kind == SearchKind::radius ? Ranks::one : Ranks::many);

    RunRecord record;
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
