// treetrav pc | radius | nn | knn | vp | bt: one query set against a
// reference set, through the tree each application uses, by brute force, or
// either as --strategy auto picks. The table below lists the subcommands;
// each row's adapter (src/cli/apps/) says what it computes, and
// search_app.hpp runs it under every strategy.
#include "search_app.hpp"

#include <treetrav/apps/neighbor_search.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace treetrav::cli {
namespace {

// What a subcommand takes beside the shared options.
enum class Parameter { k, radius, none };

struct SearchCommand {
  char const* name;
  char const* description;
  Parameter parameter;
  bool brute_force; // brute force and auto among its strategies
  bool distributed; // runs on several MPI ranks
  char const* results; // the results' layout, for --help
  io::QueryResults (*run)(SearchJob&);
};

constexpr char const* neighbor_rows_layout =
    "/Results/NeighborIndices and NeighborDistances (n_queries, k): rows of the reference set, "
    "nearest first, ties broken by index.";

constexpr SearchCommand search_commands[] = {
    {"pc", "Point correlation: count the reference points within radius -r of each query (BVH)",
     Parameter::radius, true, true, "/Results/Counts (n_queries).", run_pc},
    {"radius",
     "Radius search: list the reference points within radius -r of each query, nearest first "
     "(BVH)",
     Parameter::radius, false, true,
     "/Results/ListOffsets (n_queries + 1), ListIndices and ListDistances: query q's neighbours "
     "are entries [ListOffsets[q], ListOffsets[q + 1]), rows of the reference set, nearest first, "
     "ties broken by index.",
     run_radius},
    {"nn", "Nearest reference point of each query (BVH)", Parameter::none, true, true,
     neighbor_rows_layout, run_knn},
    {"knn", "k nearest reference points of each query (BVH)", Parameter::k, true, true,
     neighbor_rows_layout, run_knn},
    {"vp", "Nearest reference point of each query (vantage-point tree)", Parameter::none, true,
     true, neighbor_rows_layout, run_vp},
    {"bt", "k nearest reference points of each query (ball tree)", Parameter::k, true, true,
     neighbor_rows_layout, run_bt},
};

struct SearchOptions {
  std::string reference;
  std::string queries;
  bool self = false;
  int k = 1;
  Coordinate radius = 0;
  std::vector<double> box;
  Index chunk = 0;
  RunOptions run;
};

// Reads and cross-checks the inputs: the reference points and the queries,
// whole or (`ranks` > 1) this rank's block of the rows of each file; the
// queries of one rank are opened to be read a chunk at a time. k, radius and
// leaf size are checked by the library before the traversal, and everything
// before any output.
SearchInputs read_search_inputs(SearchCommand const& command, SearchOptions const& options,
                                [[maybe_unused]] int rank, int ranks) {
  SearchInputs inputs{{}, {}, nullptr, options.run.leaf_size, options.run.sorted(), options.self,
                      options.chunk};
  // This rank's rows [first, first + count) of a file of n rows.
  auto block = [&](Index n) -> std::pair<Index, Index> {
#ifdef TREETRAV_ENABLE_MPI
    if (ranks > 1) {
      auto const b = distributed::block_of(static_cast<std::size_t>(n), rank, ranks);
      return {static_cast<Index>(b.begin), static_cast<Index>(b.end - b.begin)};
    }
#endif
    return {0, n};
  };
  if (ranks > 1) {
    io::PointReader const reference(options.reference);
    auto const [first, count] = block(reference.size());
    inputs.reference = reference.read(first, count);
    inputs.first_reference = first;
    inputs.total_reference = reference.size();
  } else {
    inputs.reference = io::read_points(options.reference);
    inputs.total_reference = inputs.reference.size();
  }
  int const reference_dimension = inputs.dimension = inputs.reference.dimension();
  if (options.self) {
    // Said here: the library's "-k exceeds" would blame -k, which nn and vp do not take.
    if (command.parameter != Parameter::radius && inputs.total_reference == 1)
      throw InputError("--self: --reference " + options.reference +
                       " holds a single point, which has no other");
    inputs.queries = inputs.reference;
    inputs.first_query = inputs.first_reference;
    inputs.own_queries = inputs.reference.size();
    inputs.total_queries = inputs.total_reference;
    return inputs;
  }
  inputs.query_file = std::make_shared<io::PointReader const>(options.queries);
  int const dimension = inputs.query_file->dimension();
  inputs.total_queries = inputs.query_file->size();
  if (dimension != reference_dimension)
    throw InputError(fmt::format("--queries {} holds {}-D points but --reference {} holds {}-D points",
                                 options.queries, dimension, options.reference,
                                 reference_dimension));
  // Over several ranks this rank's block, read a distributed call at a time
  // (no rank holds its whole block), as one process reads a chunk at a time.
  auto const [first, count] = block(inputs.total_queries);
  inputs.first_query = first;
  inputs.own_queries = count;
  return inputs;
}

#ifdef TREETRAV_ENABLE_MPI
// The ranks write one results file, whose metadata must be the same on each:
// the times are the slowest rank's (the distributed call's wall time), and
// so are the strategy's own figures (hybrid's phases, say).
void agree_on_times(distributed::Communicator const& world, RunRecord& record) {
  std::vector<double*> times{&record.read_s, &record.build_s, &record.traverse_s, &record.search_s};
  for (auto& [name, value] : record.strategy_metadata.numbers)
    times.push_back(&value);
  std::vector<double> mine, most(times.size());
  for (double* t : times)
    mine.push_back(*t);
  distributed::check_mpi(MPI_Allreduce(mine.data(), most.data(), static_cast<int>(mine.size()),
                                       MPI_DOUBLE, MPI_MAX, world.get()),
                         "MPI_Allreduce");
  for (std::size_t i = 0; i < times.size(); ++i)
    *times[i] = most[i];
}
#endif

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
  if (command.parameter == Parameter::k) {
    options->k = 8;
    sub->add_option("-k", options->k,
                    "Neighbours per query (1.." + std::to_string(max_neighbors) + ")")
        ->check(in_range(1, max_neighbors))
        ->capture_default_str();
  }
  if (command.parameter == Parameter::radius)
    sub->add_option("-r,--radius", options->radius,
                    "Reference points within this distance count (inclusive)")
        ->required()
        ->check(positive<Coordinate>());
  sub->add_option("--box", options->box,
                  "Lx,Ly,Lz (one side per dimension): the points lie in the periodic box [0, L) "
                  "and distances are to the nearest image (a radius below L/2); points outside "
                  "the box are refused")
      ->delimiter(',')
      ->check(positive<double>());
  sub->add_option("--chunk", options->chunk,
                  "Queries per chunk: the queries are read, searched and their results written "
                  "a chunk at a time, side by side (0: as many as fit in half the free device "
                  "memory, at most " +
                      std::to_string(BatchOptions::max_chunk) +
                      "); over several MPI ranks, each rank's block is searched this many queries a "
                      "distributed call, which bounds a rank's device memory (0: as many as fit in "
                      "half its free device memory at a call's peak, at most the same)")
      ->check(at_least(0))
      ->capture_default_str()
      ->excludes(self);
  add_run_options(*sub, options->run,
                  command.brute_force ? StrategySet::search : StrategySet::application);
#ifdef TREETRAV_ENABLE_MPI
  if (command.distributed)
    add_gpu_aware_mpi_option(*sub, options->run.runtime);
#endif
  auto* const strategy_option = sub->get_option("--strategy");
  sub->footer(std::string("Exactly one of --queries or --self. Results, in query order: ") +
              command.results);

  sub->callback([options, strategy_option, &command] {
    if (options->queries.empty() && !options->self)
      throw InputError("give --queries FILE or --self");
    SearchStrategy strategy =
        command.brute_force
            ? search_strategy_from(options->run)
            : std::visit([](auto tag) { return SearchStrategy(tag); }, strategy_from(options->run));
    std::vector<FileOption> input_files{{"--reference", options->reference}};
    if (!options->self)
      input_files.push_back({"--queries", options->queries});
    check_output_file({"-o", options->run.output}, input_files);
    KokkosSession session(options->run.runtime, command.distributed ? Ranks::many : Ranks::one);
    bool const walks_tree =
        trait_of(strategy, [](auto tag) { return decltype(tag)::walks_tree; });
    // Distributed searches walk trees: brute force and auto run on one rank
    // (asked for by name, they are refused; the default auto becomes autoropes).
    if (session.ranks() > 1 && !walks_tree) {
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
    if (placement_name(record.placement) != Hardware::name && strategy_option->count() == 0 &&
        trait_of(strategy, [](auto tag) { return chooses_strategy_v<decltype(tag)>; }))
      strategy = Autoropes{};
    record.application = command.name;
    record.backend = session.backend();
    options->run.leaf_size = leaf_size_of(options->run, /*forces=*/false);
    record.leaf_size = options->run.leaf_size;
    record.sort = options->run.sort;
    if (session.ranks() > 1 && !options->box.empty())
      throw InputError(fmt::format("--box: periodic searches run on one MPI rank, not {}",
                                   session.ranks()));
    Kokkos::Timer timer;
    SearchJob job{{},
                  options->k,
                  options->radius,
                  options->box.empty() ? PeriodicBox() : PeriodicBox(options->box),
                  options->self,
                  strategy,
                  &record,
                  session.ranks(),
                  {}};
    // Read into the job itself: the search lets go of the reference points
    // once its tree holds them, and no other copy may keep them.
    auto const read_inputs = [&] {
      job.inputs = read_search_inputs(command, *options, session.rank(), session.ranks());
#ifdef TREETRAV_ENABLE_MPI
      if (session.ranks() > 1)
        job.inputs.mpi_memory = mpi_memory(options->run.runtime);
#endif
    };
#ifdef TREETRAV_ENABLE_MPI
    // A bad row on one rank's block stops every rank, with its message.
    if (session.ranks() > 1)
      distributed::collectively(MPI_COMM_WORLD, read_inputs);
    else
#endif
      read_inputs();
    auto const& inputs = job.inputs;
    record.read_s = timer.seconds();
    record.n_reference = inputs.total_reference;
    record.n_queries = inputs.total_queries;
    record.dimension = inputs.dimension;
    record.parameters.set("reference", options->reference)
        .set("queries", options->self ? "self" : options->queries);
    if (!options->box.empty()) {
      std::string sides;
      for (double side : options->box)
        sides += (sides.empty() ? "" : ",") + fmt::format("{}", side);
      record.parameters.set("box", sides);
    }
    if (command.parameter == Parameter::radius)
      record.parameters.set("radius", static_cast<double>(options->radius));
    else
      record.parameters.set("k", static_cast<double>(options->k));
    // The rows this rank reads of each file (the queries a chunk or a call at
    // a time: on one rank all of them, over several its block; --self reads
    // no query file), recorded per rank: no rank of a distributed run reads
    // more than its block.
    std::array<std::int64_t, 2> const rows_read{
        inputs.reference.size(),
        options->self ? 0 : inputs.own_queries};
    auto record_rows_read = [&](std::vector<std::array<std::int64_t, 2>> const& per_rank) {
      for (int file : {0, 1}) {
        std::string list;
        for (auto const& rows : per_rank)
          list += (list.empty() ? "" : ",") + std::to_string(rows[file]);
        record.parameters.set(file == 0 ? "rows_read_reference" : "rows_read_queries", list);
      }
    };

#ifdef TREETRAV_ENABLE_MPI
    if (session.ranks() > 1) {
      // Each rank writes its own rows of the one file.
      record.parameters.set("ranks", static_cast<double>(session.ranks()))
          .set("mpi_memory", inputs.mpi_memory == distributed::MpiMemory::device ? "device" : "host");
      distributed::Communicator const world;
      record_rows_read(distributed::all_gather(world, rows_read));
      io::ResultsStream results(options->run.output, command.name, record.n_queries,
                                io::Collective{world.get()}, inputs.first_query);
      Headline mine, headline;
      job.output = {&results, &mine, nullptr, &record};
      command.run(job);
      agree_on_times(world, record);
      timer.reset();
      results.commit(to_metadata(record));
      record.write_s += timer.seconds();
      for (auto const& rank_headline : distributed::all_gather(world, mine))
        headline.add(rank_headline);
      if (session.prints())
        summarize(record, headline, options->run.output);
      return;
    }
#endif
    record_rows_read({rows_read});
    io::ResultsStream results(options->run.output, command.name, record.n_queries);
    Headline headline;
    Progress progress(stderr, isatty(fileno(stderr)) != 0, 0, "query", "queries");
    job.output = {&results, &headline, &progress, &record};
    command.run(job);
    timer.reset();
    results.commit(to_metadata(record));
    record.write_s += timer.seconds();
    summarize(record, headline, options->run.output);
  });
}

} // namespace

io::QueryResults concatenated(std::vector<io::QueryResults> const& parts) {
  // Every part is of one application and holds the same members (a block
  // of no queries too: its arrays are allocated, empty).
  auto const held = [](auto const& view) { return !view.label().empty(); };
  io::QueryResults all;
  all.application = parts.front().application;
  bool const neighbors = held(parts.front().neighbor_indices), counts = held(parts.front().counts),
             lists = held(parts.front().list_offsets);
  auto const rows_of = [&](io::QueryResults const& part) {
    return Index(neighbors ? part.neighbor_indices.extent(0)
                 : counts  ? part.counts.extent(0)
                           : (lists && part.list_offsets.extent(0) > 0 ? part.list_offsets.extent(0) - 1 : 0));
  };
  Index rows = 0, k = 0;
  std::int64_t listed = 0;
  for (auto const& part : parts) {
    rows += rows_of(part);
    k = std::max<Index>(k, Index(part.neighbor_indices.extent(1)));
    listed += std::int64_t(part.list_indices.extent(0));
  }
  if (neighbors) {
    all.neighbor_indices = decltype(all.neighbor_indices)("treetrav::cli::neighbor_indices", rows, k);
    all.neighbor_distances = decltype(all.neighbor_distances)("treetrav::cli::neighbor_distances", rows, k);
  }
  if (counts)
    all.counts = decltype(all.counts)("treetrav::cli::counts", rows);
  if (lists) {
    all.list_offsets = decltype(all.list_offsets)("treetrav::cli::list_offsets", rows + 1);
    all.list_indices = decltype(all.list_indices)("treetrav::cli::list_indices", listed);
    all.list_distances = decltype(all.list_distances)("treetrav::cli::list_distances", listed);
  }
  Index row = 0;
  std::int64_t entry = 0;
  for (auto const& part : parts) {
    Index const n = rows_of(part);
    for (Index q = 0; q < n; ++q) {
      for (Index j = 0; neighbors && j < Index(part.neighbor_indices.extent(1)); ++j) {
        all.neighbor_indices(row + q, j) = part.neighbor_indices(q, j);
        all.neighbor_distances(row + q, j) = part.neighbor_distances(q, j);
      }
      if (counts)
        all.counts(row + q) = part.counts(q);
      if (lists)
        all.list_offsets(row + q) = entry + part.list_offsets(q);
    }
    for (std::int64_t e = 0; lists && e < std::int64_t(part.list_indices.extent(0)); ++e) {
      all.list_indices(entry + e) = part.list_indices(e);
      all.list_distances(entry + e) = part.list_distances(e);
    }
    row += n;
    entry += std::int64_t(part.list_indices.extent(0));
  }
  if (lists)
    all.list_offsets(rows) = entry;
  return all;
}

void add_search_commands(CLI::App& app) {
  for (auto const& command : search_commands)
    add_search_command(app, command);
}

} // namespace treetrav::cli
