#pragma once

// What every search subcommand (pc, radius, nn, knn, vp, bt) shares: its job,
// the one generic adapter that runs an application under any strategy of the
// list (tree walks, brute force, auto) on one rank or several, and the
// streaming of queries and results. An application reaches the CLI by an
// adapter file in src/cli/apps/ (what it computes, on a tree or on the
// points, and how its results are stored) and its entry in search.cpp's table.
#include "run_app.hpp"

#include <treetrav/apps/automatic.hpp>
#include <treetrav/apps/batch.hpp>
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/core/detail/host_staging.hpp>
#include <treetrav/core/periodic_box.hpp>
#include <treetrav/core/progress.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/distributed_search.hpp>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace treetrav::cli {

// What every search starts from, on the host.
struct SearchInputs {
  // On one rank the whole reference set; over several, this rank's block of
  // its rows, from row `first_reference` on (no rank holds all of it). Let
  // go once the search's tree (or points) holds it.
  io::HostPointSet reference;
  // The queries: in memory (--self: the reference points, on several ranks
  // this rank's block of them), or else read from `query_file` a chunk (a
  // distributed call) at a time. This process searches rows
  // [first_query, first_query + own_queries) of them.
  io::HostPointSet queries;
  std::shared_ptr<io::PointReader const> query_file;
  int leaf_size;
  bool sorted;
  bool self;
  Index chunk; // --chunk: queries per chunk (0: sized from free device memory)
  Index first_reference = 0, first_query = 0, own_queries = 0;
  Index total_reference = 0, total_queries = 0; // the files' rows
  int dimension = 0;                             // the points'
#ifdef TREETRAV_ENABLE_MPI
  // Over several ranks: the memory MPI may be handed (--gpu-aware-mpi).
  distributed::MpiMemory mpi_memory = distributed::MpiMemory::host;
#endif

  // Host queries: rows [first, first + count) of the query set.
  io::HostPointSet load(Index first, Index count) const {
    if (query_file)
      return query_file->read(first, count);
    Index const at = first - first_query;
    return count == queries.size() ? queries : treetrav::detail::host_rows(queries, at, at + count);
  }
};

// Where a streamed search puts what it finds, chunk by chunk (stream_search).
struct SearchOutput {
  io::ResultsStream* results;
  Headline* headline;
  Progress* progress;
  RunRecord* record;
};

// One search subcommand's run: what its adapter needs.
struct SearchJob {
  SearchInputs inputs;
  int k = 1;              // nn, knn, vp, bt
  Coordinate radius = 0;  // pc, radius
  PeriodicBox box;        // periodic: distances to the nearest image
  bool self = false;      // queries are the reference points: each skips itself
  SearchStrategy strategy;
  RunRecord* record;
  int ranks = 1;
  SearchOutput output; // where the results go, a chunk or a call at a time
};

template <template <class> class Tree, class Space>
struct SearchSetup {
  bool trees = false; // whether `tree` was built
  Tree<typename Space::memory_space> tree;
  PointSet<typename Space::memory_space> reference; // strategies that walk no tree
  // The chunks' results come to the host through it (core/detail/host_staging.hpp).
  std::shared_ptr<treetrav::detail::HostStaging<typename Space::memory_space>> staging =
      std::make_shared<treetrav::detail::HostStaging<typename Space::memory_space>>(
          "treetrav::cli::staged_results");
};

// What Strategy needs, built where it is used from the reference points
// moved there once: the tree (for the strategies that walk one, and auto
// up to the dimensions where it probes trees) and the points (those that
// walk none). The queries go to the search a chunk at a time.
template <template <class> class Tree, class Space, class Strategy>
SearchSetup<Tree, Space> set_up_search(Space const& space, SearchInputs& inputs) {
  SearchSetup<Tree, Space> setup;
  auto const reference = copy_points(space, inputs.reference, "treetrav::cli::reference");
  inputs.reference = {}; // (--self: the queries still hold it)
  int const dimension = inputs.dimension;
  if constexpr (chooses_strategy_v<Strategy>)
    setup.trees = dimension <=
                  std::min(max_tree_dimension, probed_tree_dimension(reference.size()));
  else
    setup.trees = Strategy::walks_tree;
  if (setup.trees)
    setup.tree = Tree<typename Space::memory_space>(space, reference, inputs.leaf_size);
  if (!Strategy::walks_tree)
    setup.reference = reference;
  return setup;
}

// One search of `queries` (a chunk, or auto's sample: `probe` drops --self,
// whose rows a sample does not keep) in the Morton `order` given or,
// `sorted` without one, sorted inside the search; on the tree or the points,
// as the strategy walks.
template <class App, class Space, class Setup, class Strategy, class Queries>
auto search_once(App const& app, Space const& space, Setup const& setup, Strategy const& strategy,
                 Queries const& queries, bool sorted, bool probe,
                 Kokkos::View<Index*, typename Space::memory_space> const& order) {
  Kokkos::View<Index const*, typename Space::memory_space> const given =
      sorted ? order : Kokkos::View<Index*, typename Space::memory_space>();
  QueryOrder const walk = sorted && given.extent(0) == 0 ? QueryOrder::sfc : QueryOrder::none;
  if constexpr (strategy_t<Strategy>::walks_tree)
    return app.search(space, setup.tree, strategy, queries, walk, probe, given);
  else
    return app.search(space, setup.reference, strategy, queries, walk, probe, given);
}

// One chunk's search under `strategy`. Under auto the first chunk picks the
// plan by timing each candidate on a sample of its queries
// (apps/automatic.hpp); `choice` keeps it for the chunks after.
template <class App, class Space, class Setup, class Strategy, class Queries>
auto search_chunk(App const& app, Space const& space, Setup const& setup, Strategy strategy,
                  Queries const& queries, bool sorted, std::optional<SearchChoice>& choice) {
  if constexpr (chooses_strategy_v<Strategy>) {
    Kokkos::View<Index*, typename Space::memory_space> order;
    if (!choice) {
      double order_s = 0;
      if (setup.trees) {
        Kokkos::Timer timer;
        order = morton_order(space, queries);
        space.fence();
        order_s = timer.seconds();
      }
      // (choose_strategy runs only the plans that run on Space.)
      choice = choose_strategy(space, queries, order, order_s, setup.reference.size(), setup.trees,
                               [&](auto tag, auto const& sample) {
                                 tag.workspace = strategy.workspace;
                                 search_once(app, space, setup, tag, sample, false, true, {});
                               });
      if (strategy.choice != nullptr)
        *strategy.choice = {choice->plan.name(), choice->plan.sorted, choice->reason,
                            choice->probe_s};
    }
    return std::visit(
        [&](auto tag) {
          if constexpr (!runs_on_v<decltype(tag), Space>) {
            throw std::logic_error("auto picked a strategy that does not run here");
            return search_once(app, space, setup, Autoropes{}, queries, false, false, order);
          } else {
            tag.workspace = strategy.workspace;
            return search_once(app, space, setup, tag, queries, choice->plan.sorted, false, order);
          }
        },
        choice->plan.strategy);
  } else {
    return search_once(app, space, setup, strategy, queries, sorted, false, {});
  }
}

// Device bytes a chunk needs per query beside its results: the row, its
// sorted copy, Morton code and order.
inline std::size_t query_bytes(int dimension) {
  return 2 * dimension * sizeof(Coordinate) + 2 * sizeof(std::uint64_t);
}

// Device bytes a distributed call needs per query beside its results, at
// its peak: the query's bytes on one rank, its copies packed for and received
// by the ranks it asks (most ask one a round), its routes, and its answers as
// sent, as returned and as merged so far, each the size of its results
// (the kNN rounds' high water, perf/results/mpi/README.md: about 430 bytes a
// query at k = 10).
inline std::size_t distributed_query_bytes(int dimension, std::size_t result_bytes) {
  return query_bytes(dimension) + 2 * dimension * sizeof(Coordinate) + 6 * sizeof(std::uint64_t) +
         3 * result_bytes;
}

struct Streamed {};

// The one-rank search: the Application of run_application (run_app.hpp) for
// the adapter App. The queries go to the device a chunk at a time (sized
// from its free memory, or --chunk; --self in one chunk, its queries being
// the reference points, whose own rows they skip), the next chunk read and
// the last one's results written and summed up on host threads beside the
// search; a progress line on a terminal.
template <class App>
struct StreamedSearch {
  static constexpr char const* tree_name = App::tree_name;
  App app;
  SearchInputs& inputs; // the set-up lets go of the reference points
  SearchOutput output;

  // The tree (or points), and room for a chunk's results in the staging (up
  // to its 256 MiB): page-locking costs about what a copy into new pageable
  // memory does, so it is paid here, once, with the tree.
  template <class Space, class Strategy>
  auto setup(Space const& space, Strategy const&) const {
    auto setup = set_up_search<App::template Tree, Space, Strategy>(space, inputs);
    if constexpr (!treetrav::detail::host_reachable_v<typename Space::memory_space>)
      setup.staging->template get<unsigned char>(
          space, std::min(std::size_t(chunk_of(space)) * app.result_bytes(),
                          treetrav::detail::staged_values<unsigned char>));
    return setup;
  }

  template <class Space, class Setup, class Strategy>
  Streamed traverse(Space const& space, Setup const& setup, Strategy strategy) const {
    std::optional<SearchChoice> choice;
    stream(space, [&](PointSet<typename Space::memory_space> const& queries) {
      return app.collect(treetrav::detail::host_copy(
          space, search_chunk(app, space, setup, strategy, queries, inputs.sorted, choice),
          *setup.staging));
    });
    return {};
  }

  // Queries a chunk: sized from the device's free memory, or --chunk;
  // --self in one chunk, its queries being the reference points.
  template <class Space>
  Index chunk_of(Space const& space) const {
    Index const n = inputs.own_queries;
    return inputs.self ? n
                       : chunk_size(space, n, BatchOptions{inputs.chunk},
                                    query_bytes(inputs.dimension) + app.result_bytes());
  }

  // The chunks' loop around `search` (one chunk's results), compiled once a
  // backend rather than once more for every strategy and placement.
  template <class Space>
  void stream(Space const& space,
              std::function<io::QueryResults(PointSet<typename Space::memory_space> const&)> const&
                  search) const {
    Index const n = inputs.own_queries;
    Index const chunk = chunk_of(space);
    double read_s = 0, write_s = 0; // each summed on one thread at a time
    double search_s = 0;
    output.progress->begin(0, n);
    for_each_chunk(
        space, n, chunk,
        [&](Index first, Index count) {
          Kokkos::Timer timer;
          auto queries = inputs.load(first, count);
          read_s += timer.seconds();
          return queries;
        },
        [&](PointSet<typename Space::memory_space> const& queries) {
          Kokkos::Timer timer;
          auto block = search(queries);
          search_s += timer.seconds();
          return block;
        },
        [&](Index first, io::QueryResults const& block) {
          Kokkos::Timer timer;
          output.headline->add(block);
          output.results->write(first, block);
          write_s += timer.seconds();
        },
        [&](Index done, Index) { output.progress->update(done); });
    output.progress->finish(n);
    output.record->read_s += read_s;
    output.record->write_s += write_s;
    output.record->search_s += search_s;
    output.record->chunk = chunk;
    output.record->chunks = (n + chunk - 1) / chunk;
    output.record->writing = RunRecord::Writing::beside;
  }

  io::QueryResults collect(Streamed) const { return {}; }
};

// Results of consecutive blocks of queries as one block's (neighbours, counts
// or lists in compressed rows, whichever the parts hold).
io::QueryResults concatenated(std::vector<io::QueryResults> const& parts);

#ifdef TREETRAV_ENABLE_MPI
// Several ranks: each reads a block of the rows of each set, the ranks move
// the reference points to their spatial pieces (the collective Morton
// partition), each builds its own tree and answers for its block of the
// queries (distributed_search.hpp), a call of setup.chunk queries at a time;
// each writes its own results' rows of the one file, a call's as it ends
// (radius lists once, at the end: the file's lists of a rank follow those of
// the ranks before it). The Application of run_application for the adapter
// App; tree strategies only.
template <class App>
struct DistributedSearch {
  static constexpr char const* tree_name = App::tree_name;
  App app;
  SearchInputs& inputs; // the set-up lets go of the reference points
  SearchOutput output; // the ranks' one file (collective), this rank's headline and record

  template <class Space>
  struct Setup {
    distributed::DistributedTree<typename App::template Tree<typename Space::memory_space>> tree;
    std::shared_ptr<Workspace> workspace; // the exchanges' staging
    Index chunk = 0;          // queries a distributed call
  };

  // The tree, the queries a call (sized with the tree in memory), and the
  // exchanges' staging made ready for a call's answers (a quarter more than
  // its results), paid here as the one-rank search pays for its results'
  // staging.
  template <class Space, class Strategy>
  Setup<Space> setup(Space const& space, Strategy const&) const {
    distributed::Communicator const world(MPI_COMM_WORLD, inputs.mpi_memory);
    auto const partition = [&] {
      auto piece = distributed::morton_partition(world, inputs.reference, inputs.first_reference);
      inputs.reference = {}; // the rows read: the piece holds what this rank keeps of them
      return piece;
    };
    Setup<Space> setup{{space, world, partition(), inputs.leaf_size}, std::make_shared<Workspace>()};
    // --chunk, else what fits in half the device's free memory at a call's
    // peak, at most BatchOptions::max_chunk: a rank's block of any size runs.
    setup.chunk = chunk_size(space, inputs.own_queries, BatchOptions{inputs.chunk},
                             distributed_query_bytes(inputs.dimension, app.result_bytes()) +
                                 app.result_bytes());
    distributed::reserve_exchanges(space, *setup.workspace, world,
                                   std::size_t(setup.chunk) * app.result_bytes() * 5 / 4);
    return setup;
  }
  // This rank's rows, setup.chunk at a time (every call collective: the
  // ranks make as many as the rank with the most chunks, the others with
  // no queries), each call's queries read before it and its results written
  // after it, so that the host holds one call's; search_s sums the calls
  // (routing, exchanges, searches, merges, results on the host), not the
  // reading and writing.
  template <class Space, class Strategy>
  Streamed traverse(Space const& space, Setup<Space> const& setup, Strategy strategy) const {
    Index const m = inputs.own_queries, chunk = setup.chunk;
    std::int64_t calls = 1, largest = 0;
    for (auto const& [theirs, their_chunk] : distributed::all_gather(
             distributed::Communicator(), std::array<std::int64_t, 2>{(m + chunk - 1) / chunk, chunk}))
      calls = std::max(calls, theirs), largest = std::max(largest, their_chunk);
    output.record->chunks = Index(calls);
    output.record->chunk = Index(largest);
    std::vector<io::QueryResults> lists; // radius lists, written once
    double read_s = 0, search_s = 0, write_s = 0;
    for (std::int64_t call = 0; call < calls; ++call) {
      Index const done = std::min<Index>(m, Index(call * chunk)), count = std::min<Index>(m - done, chunk);
      Index const first = inputs.first_query + done; // the call's first row of the query set
      Kokkos::Timer timer;
      // A bad row in one rank's call stops every rank, with its message.
      io::HostPointSet queries;
      distributed::collectively(MPI_COMM_WORLD, [&] { queries = inputs.load(first, count); });
      read_s += timer.seconds();
      timer.reset();
      auto block = app.collect(app.search_distributed(
          space, setup.tree, queries, first, inputs.sorted ? QueryOrder::sfc : QueryOrder::none,
          distributed::with_workspace(strategy, setup.workspace.get())));
      queries = {};
      search_s += timer.seconds();
      timer.reset();
      output.headline->add(block);
      // (Every rank's blocks hold the same members: all lists, or none.)
      if (block.list_offsets.extent(0) > 0)
        lists.push_back(std::move(block));
      else
        output.results->write(first, block);
      write_s += timer.seconds();
    }
    if (!lists.empty()) {
      Kokkos::Timer timer;
      output.results->write(inputs.first_query, lists.size() == 1 ? lists.front() : concatenated(lists));
      write_s += timer.seconds();
    }
    output.record->read_s += read_s;
    output.record->search_s += search_s;
    output.record->write_s += write_s;
    output.record->writing = RunRecord::Writing::after_each;
    return {};
  }
  io::QueryResults collect(Streamed) const { return {}; }
};
#endif


// The tree strategy of a job whose strategy walks a tree (radius's, and every
// distributed search's: the command refuses the others there).
inline ApplicationStrategy tree_strategy(SearchStrategy const& strategy) {
  return std::visit(
      [](auto tag) -> ApplicationStrategy {
        if constexpr (treetrav::detail::keeps_per_query_walk<decltype(tag)>::value)
          return tag;
        else
          throw std::logic_error("a tree strategy was expected");
      },
      strategy);
}

// Runs `app` as `job` says: on several ranks (App::distributed), or on one,
// streamed; under the strategies App::Strategies lists.
template <class App>
io::QueryResults run_search(SearchJob& job, App const& app) {
#ifdef TREETRAV_ENABLE_MPI
  if constexpr (App::distributed)
    if (job.ranks > 1)
      return run_application(DistributedSearch<App>{app, job.inputs, job.output}, tree_strategy(job.strategy),
                             *job.record);
#endif
  StreamedSearch<App> const search{app, job.inputs, job.output};
  if constexpr (App::brute_force)
    return run_application(search, job.strategy, *job.record);
  else
    return run_application(search, tree_strategy(job.strategy), *job.record);
}

// Host copies of a neighbour search's results (nn, knn, vp, bt).
template <class Neighbors>
io::QueryResults neighbor_rows(Neighbors const& neighbors) {
  io::QueryResults results;
  results.neighbor_indices =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, neighbors.indices);
  results.neighbor_distances =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, neighbors.distances);
  return results;
}

// The adapters' entry points (src/cli/apps/), one per row of search.cpp's table.
io::QueryResults run_pc(SearchJob& job);
io::QueryResults run_radius(SearchJob& job);
io::QueryResults run_knn(SearchJob& job); // nn and knn
io::QueryResults run_vp(SearchJob& job);
io::QueryResults run_bt(SearchJob& job);

} // namespace treetrav::cli
