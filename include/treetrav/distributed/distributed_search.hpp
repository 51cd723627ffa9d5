#pragma once

// Batch searches over reference points spread across MPI ranks. Each rank
// holds a spatial piece of the reference set (morton_partition) in its own
// tree, built in its own execution space; every rank knows every rank's
// bounding box, the top level that routes a query only to the ranks that may
// hold answers (as ArborX's DistributedTree does). Each rank's queries go to
// those ranks by MPI_Alltoallv, are answered there by the ordinary
// single-tree search (find_neighbors, count_within) and come back the same
// way; the answers merge exactly, so any number of ranks gives the results of
// one tree over all the points. Routing, packing, answering and merging run
// in the trees' execution space (detail/routing.hpp): on a GPU only what
// travels between ranks leaves the device.
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/radius_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/workspace.hpp>
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/detail/routing.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/schedule/sfc_order.hpp>
#include <treetrav/trees/detail/host_build.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace treetrav::distributed {

// This rank's tree over its piece of the reference points, and every rank's box.
template <class Tree>
class DistributedTree {
public:
  using memory_space = typename Tree::memory_space;

  // Collective: every rank of `comm` passes its own piece.
  template <class ExecutionSpace>
  DistributedTree(ExecutionSpace const& space, Communicator const& comm, LocalPoints const& local,
                  int leaf_size = default_leaf_size)
      : comm_(comm), global_index_(local.global_index) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, memory_space>,
                  "the tree lives in the execution space's memory space");
    Kokkos::Profiling::pushRegion("treetrav::DistributedTree::build");
    // Every rank checks the same arguments, so a mistake fails on all of them alike.
    treetrav::detail::check_build_arguments(Tree::name, 1, leaf_size, local.points.dimension());
    if (local.points.size() > 0)
      tree_ = Tree(space, local.points, leaf_size);
    boxes_ = all_gather(comm, bounding_box_of(local.points));
    dimension_ = all_gather(comm, local.points.dimension());
    std::vector<Index> counts; // each rank's points
    for (auto const& box : boxes_) {
      counts.push_back(box.count);
      size_ += box.count;
    }
    // This rank's cells (detail::RankCells) and where its piece of the
    // partition's curve begins: its points' codes over the union of the
    // boxes, the partition's cells.
    int const d = dimension_.front(), p = comm.size();
    int const bits = treetrav::detail::morton_order_bits(size_, d);
    auto const union_of_boxes = detail::union_box(boxes_, d);
    treetrav::detail::MortonEncoder<Kokkos::HostSpace> const encode{union_of_boxes, d, bits};
    int const cell_bits = std::min(detail::RankCells::code_bits, encode.key_bits());
    int const cells = 1 << cell_bits;
    // Each of the host's threads bins a block of the points into cells of its
    // own; the blocks' boxes, counts and first codes are merged after (the
    // same for any number of blocks: minima, maxima and sums).
    using Host = Kokkos::DefaultHostExecutionSpace;
    Index const n = local.points.size();
    int const blocks = int(std::max<Index>(1, std::min<Index>(Host().concurrency(), n / 4096)));
    std::size_t const block_cells = std::size_t(blocks) * cells;
    std::vector<Coordinate> block_lower(block_cells * d, std::numeric_limits<Coordinate>::infinity()),
        block_upper(block_cells * d, -std::numeric_limits<Coordinate>::infinity());
    std::vector<Index> block_in_cell(block_cells, 0);
    std::vector<std::uint64_t> block_first(blocks, ~std::uint64_t(0));
    auto const& x = local.points.coordinates;
    Kokkos::parallel_for(
        "treetrav::DistributedTree::cells", Kokkos::RangePolicy<Host>(0, blocks), [&](int b) {
          std::size_t const base = std::size_t(b) * cells;
          for (Index i = Index(std::int64_t(n) * b / blocks); i < Index(std::int64_t(n) * (b + 1) / blocks);
               ++i) {
            std::uint64_t const code = encode(x, i);
            block_first[b] = std::min(block_first[b], code);
            std::size_t const c = base + (code >> (encode.key_bits() - cell_bits));
            ++block_in_cell[c];
            for (int k = 0; k < d; ++k) {
              block_lower[c * d + k] = std::min(block_lower[c * d + k], x(i, k));
              block_upper[c * d + k] = std::max(block_upper[c * d + k], x(i, k));
            }
          }
        });
    Host().fence();
    std::vector<Coordinate> lower(std::size_t(cells) * d, std::numeric_limits<Coordinate>::infinity()),
        upper(std::size_t(cells) * d, -std::numeric_limits<Coordinate>::infinity());
    std::vector<Index> in_cell(cells, 0);
    std::uint64_t first = ~std::uint64_t(0);
    for (int b = 0; b < blocks; ++b) {
      first = std::min(first, block_first[b]);
      for (std::size_t c = 0; c < std::size_t(cells); ++c) {
        std::size_t const from = std::size_t(b) * cells + c;
        in_cell[c] += block_in_cell[from];
        for (int k = 0; k < d; ++k) {
          lower[c * d + k] = std::min(lower[c * d + k], block_lower[from * d + k]);
          upper[c * d + k] = std::max(upper[c * d + k], block_upper[from * d + k]);
        }
      }
    }
    std::vector<Coordinate> all_lower(lower.size() * p), all_upper(upper.size() * p);
    std::vector<Index> all_in_cell(in_cell.size() * p);
    check_mpi(MPI_Allgather(lower.data(), int(lower.size() * sizeof(Coordinate)), MPI_BYTE,
                            all_lower.data(), int(lower.size() * sizeof(Coordinate)), MPI_BYTE,
                            comm.get()),
              "MPI_Allgather");
    check_mpi(MPI_Allgather(upper.data(), int(upper.size() * sizeof(Coordinate)), MPI_BYTE,
                            all_upper.data(), int(upper.size() * sizeof(Coordinate)), MPI_BYTE,
                            comm.get()),
              "MPI_Allgather");
    check_mpi(MPI_Allgather(in_cell.data(), int(in_cell.size() * sizeof(Index)), MPI_BYTE,
                            all_in_cell.data(), int(in_cell.size() * sizeof(Index)), MPI_BYTE,
                            comm.get()),
              "MPI_Allgather");
    detail::RankCells occupied;
    occupied.offset.push_back(0);
    for (int r = 0; r < p; ++r) {
      for (int c = 0; c < cells; ++c) {
        std::size_t const at = std::size_t(r) * cells + c;
        if (all_in_cell[at] == 0)
          continue;
        occupied.lower.insert(occupied.lower.end(), &all_lower[at * d], &all_lower[at * d] + d);
        occupied.upper.insert(occupied.upper.end(), &all_upper[at * d], &all_upper[at * d] + d);
      }
      occupied.offset.push_back(int(occupied.lower.size() / d));
    }
    rank_boxes_ =
        detail::RankBoxes<memory_space>(counts, union_of_boxes, d, occupied, all_gather(comm, first), bits);
    rows_ = Kokkos::View<Index*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::DistributedTree::rows"),
        global_index_.size());
    Kokkos::deep_copy(space, rows_,
                      Kokkos::View<Index const*, Kokkos::HostSpace>(global_index_.data(),
                                                                    global_index_.size()));
    space.fence();
    Kokkos::Profiling::popRegion();
  }

  Communicator const& comm() const { return comm_; }
  Tree const& local_tree() const { return tree_; }
  std::vector<Index> const& global_index() const { return global_index_; }
  // The same, where the tree is: rows()(i) is the global row of the tree's point i.
  Kokkos::View<Index*, memory_space> const& rows() const { return rows_; }
  std::vector<RankBox> const& boxes() const { return boxes_; }
  detail::RankBoxes<memory_space> const& rank_boxes() const { return rank_boxes_; }
  Index size() const { return size_; } // over all ranks
  int dimension() const { return dimension_.front(); }

private:
  Communicator comm_;
  Tree tree_;
  std::vector<Index> global_index_;
  Kokkos::View<Index*, memory_space> rows_;
  std::vector<RankBox> boxes_;
  detail::RankBoxes<memory_space> rank_boxes_;
  std::vector<int> dimension_;
  Index size_ = 0;
};

namespace detail {

// The search on this rank's tree, as the exchanges call it: the rounds and
// merges below are compiled once per backend and tree, not once more for
// every strategy.
template <class Tree>
using LocalNeighbors = std::function<NeighborResults<typename Tree::memory_space>(
    PointSet<typename Tree::memory_space> const&, NeighborOptions const&)>;
template <class Tree>
using LocalCounts = std::function<Kokkos::View<std::int64_t*, typename Tree::memory_space>(
    PointSet<typename Tree::memory_space> const&, RangeCountOptions const&)>;
template <class Tree>
using LocalLists = std::function<RadiusResults<typename Tree::memory_space>(
    PointSet<typename Tree::memory_space> const&, RadiusSearchOptions const&)>;

// find_neighbors on this rank's tree under `strategy`, as the exchanges call it.
template <class ExecutionSpace, class Tree, class Strategy>
LocalNeighbors<Tree> local_neighbors(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                                     Strategy const& strategy) {
  return [space, &tree, strategy](PointSet<typename Tree::memory_space> const& received,
                                  NeighborOptions const& local) {
    return treetrav::find_neighbors(space, tree.local_tree(), received, local, strategy);
  };
}

using ::treetrav::detail::with_workspace_set;
using ::treetrav::detail::workspace_of;

// The exchanges' staging: in the caller's workspace, else in one of the call's own.
template <class MemorySpace>
ExchangeStaging<MemorySpace>& staging_in(Workspace* workspace, Workspace& own) {
  return (workspace != nullptr ? *workspace : own).get<ExchangeStaging<MemorySpace>>();
}

inline void check_queries(PointSet<Kokkos::HostSpace> const& queries, int dimension) {
  if (queries.dimension() != dimension)
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(dimension));
}

// Queries a rank answers with one local search: enough to fill a GPU, few
// enough that the search's results and arrays stay a small part of a
// distributed call's (about 100 bytes a query at k = 10, beside the 80 of
// its answers).
constexpr Index answer_slice = Index(1) << 20;

// Query q's `wanted` best (squared distance, global row) keys so far,
// ascending, empty-padded: the order every single-tree search keeps.
using NeighborKey = std::uint64_t;
using KeyPacking = treetrav::detail::KBest<1>; // for its key packing only

// One round trip of the neighbour searches: the queries that goes(q, r)
// sends to rank r go out, answer(received queries) gives each its `wanted`
// keys there, and those come back and merge into `best`, one rank's after
// the other (a rank's answers are for distinct queries). The round's arrays
// from `arrays`: the next round reuses them.
template <class MemorySpace>
using LocalAnswer =
    std::function<Kokkos::View<NeighborKey*, MemorySpace>(PointSet<MemorySpace> const&)>;

template <class ExecutionSpace, class MemorySpace, class Goes>
void neighbor_round(ExecutionSpace const& space, Communicator const& comm,
                    PointSet<MemorySpace> const& queries,
                    Kokkos::View<NeighborKey**, Kokkos::LayoutRight, MemorySpace> const& best,
                    LocalAnswer<MemorySpace> const& answer, Goes const& goes,
                    ExchangeStaging<MemorySpace>& staging,
                    treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays) {
  int const p = comm.size(), wanted = int(best.extent(1));
  auto const routes = route(space, queries.size(), p, goes, arrays);
  std::vector<int> counts;
  auto const received = send_queries(space, comm, queries, routes, counts, staging, arrays);
  for (int& count : counts)
    count *= wanted;
  std::vector<int> returned_counts;
  auto const returned = exchange(space, comm, answer(received), counts, returned_counts, staging, arrays,
                                 "treetrav::distributed::returned_answers");
  auto const query = routes.query;
  Kokkos::Profiling::pushRegion("treetrav::distributed::merge");
  for (int r = 0; r < p; ++r)
    Kokkos::parallel_for(
        "treetrav::distributed::merge",
        Kokkos::RangePolicy<ExecutionSpace>(space, routes.offset[r], routes.offset[r + 1]),
        KOKKOS_LAMBDA(int slot) {
          Index const q = query(slot);
          NeighborKey merged[max_neighbors + 1];
          NeighborKey const* theirs = &returned(std::size_t(slot) * wanted);
          int a = 0, b = 0;
          for (int j = 0; j < wanted; ++j)
            merged[j] = theirs[b] < best(q, a) ? theirs[b++] : best(q, a++);
          for (int j = 0; j < wanted; ++j)
            best(q, j) = merged[j];
        });
  Kokkos::Profiling::popRegion();
}

template <class ExecutionSpace, class Tree>
NeighborResults<Kokkos::HostSpace>
find_neighbors_over_ranks(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                          PointSet<Kokkos::HostSpace> const& host_queries,
                          NeighborOptions const& options, Index first_query,
                          LocalNeighbors<Tree> const& local_search, Workspace* workspace,
                          Index slice_size = answer_slice) {
  using MemorySpace = typename Tree::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  // A query that skips itself asks for one more and drops itself at the end.
  treetrav::detail::check_k(options, tree.size(),
                            max_neighbors - (options.exclude_self ? 1 : 0));
  int const wanted = options.k + (options.exclude_self ? 1 : 0);
  check_queries(host_queries, tree.dimension());
  Kokkos::Profiling::pushRegion("treetrav::distributed::find_neighbors");
  Workspace own;
  auto& staging = staging_in<MemorySpace>(workspace, own);
  constexpr NeighborKey empty = ~NeighborKey(0);
  Index const m = host_queries.size();
  auto const queries = copy_points(space, host_queries, "treetrav::distributed::queries");
  auto const boxes = tree.rank_boxes();
  Kokkos::View<NeighborKey**, Kokkos::LayoutRight, MemorySpace> best(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::best"), m, wanted);
  Kokkos::deep_copy(space, best, empty);

  // The rounds' arrays (routes, packed and received queries, answers): the
  // second round reuses the first's (search_arrays), and all are freed
  // before the results are made, which would otherwise hold the peak.
  {
    Workspace rounds;
    auto const arrays = search_arrays(space, &rounds);
    // This rank's answers for the queries another rank (or it) sent: its local
    // `wanted` best of each, as keys over global rows.
    LocalAnswer<MemorySpace> const answer = [&](PointSet<MemorySpace> const& received) {
      Index const n = received.size();
      auto const keys = arrays.template make<Kokkos::View<NeighborKey*, MemorySpace>>(
          "treetrav::distributed::answers", std::size_t(n) * wanted);
      if (n == 0)
        return keys;
      Kokkos::Profiling::pushRegion("treetrav::distributed::answer");
      NeighborOptions local = options;
      local.k = std::min<Index>(wanted, Index(tree.global_index().size()));
      local.exclude_self = false;
      local.squared_distances = true;
      auto const rows = tree.rows();
      int const local_k = local.k;
      // A slice of the received queries at a time: the local search's
      // results and its own arrays (the queries' order) are held for a
      // slice, beside the answers of all, not for all of them.
      for (Index begin = 0; begin < n; begin += slice_size) {
        Index const count = std::min(slice_size, n - begin);
        PointSet<MemorySpace> slice = received;
        if (count < n) {
          slice = PointSet<MemorySpace>(arrays.template make<typename PointSet<MemorySpace>::coordinates_view>(
              "treetrav::distributed::answered_queries", count, received.dimension()));
          Kokkos::deep_copy(space, slice.coordinates,
                            Kokkos::subview(received.coordinates, Kokkos::make_pair(begin, begin + count),
                                            Kokkos::ALL));
        }
        auto const found = local_search(slice, local);
        Kokkos::parallel_for(
            "treetrav::distributed::pack_answers", Policy(space, 0, count), KOKKOS_LAMBDA(Index i) {
              for (int j = 0; j < wanted; ++j)
                keys(std::size_t(begin + i) * wanted + j) =
                    j < local_k ? KeyPacking::pack(found.distances(i, j), rows(found.indices(i, j))) : empty;
            });
      }
      Kokkos::Profiling::popRegion();
      return keys;
    };

    // Round 1: the nearest ranks holding `wanted` points between them.
    neighbor_round(space, tree.comm(), queries, best, answer,
                   KOKKOS_LAMBDA(Index q, int r) { return boxes.among_nearest(r, queries, q, wanted); },
                   staging, arrays);
    // Round 2: every other rank that may hold a point within the k-th distance.
    neighbor_round(space, tree.comm(), queries, best, answer, KOKKOS_LAMBDA(Index q, int r) {
      NeighborKey const kth = best(q, wanted - 1);
      return !boxes.among_nearest(r, queries, q, wanted) &&
             (kth == empty || boxes.may_reach(r, queries, q, KeyPacking::distance2_of(kth)));
    }, staging, arrays);
  }

  Kokkos::Profiling::pushRegion("treetrav::distributed::results");
  auto const results = treetrav::detail::allocate_neighbor_results<MemorySpace>(space, m, options.k);
  bool const exclude_self = options.exclude_self, squared = options.squared_distances;
  int const k = options.k;
  Kokkos::parallel_for(
      "treetrav::distributed::results", Policy(space, 0, m), KOKKOS_LAMBDA(Index q) {
        int j = 0;
        for (int i = 0; i < wanted && j < k; ++i) {
          NeighborKey const key = best(q, i);
          Index const row = KeyPacking::index_of(key);
          if (exclude_self && row == first_query + q)
            continue;
          Coordinate const d2 = KeyPacking::distance2_of(key);
          results.indices(q, j) = row;
          results.distances(q, j) = squared ? d2 : treetrav::math::sqrt(d2);
          ++j;
        }
      });
  auto host = treetrav::detail::host_copy(space, results, staging.received);
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();
  return host;
}

} // namespace detail

// `strategy` working in `workspace`: the distributed searches keep their
// exchanges' staging there (page-locked host memory on a GPU), so that
// repeated searches allocate none.
template <class Strategy>
Strategy with_workspace(Strategy strategy, Workspace* workspace) {
  return detail::with_workspace_set(strategy, workspace);
}

// Room in `workspace` for exchanges of `bytes` each way over `comm`,
// allocated now rather than by the first search (page-locking costs about as
// much as the copies it speeds up).
template <class ExecutionSpace>
void reserve_exchanges(ExecutionSpace const& space, Workspace& workspace, Communicator const& comm,
                       std::size_t bytes) {
  workspace.get<detail::ExchangeStaging<typename ExecutionSpace::memory_space>>().reserve(
      space, bytes, comm.memory());
}

// The k nearest reference points (over all ranks) of this rank's `queries`,
// ties broken by global row: the results of find_neighbors on one tree over
// all the points, in the caller's query order. Collective. With
// options.exclude_self the queries are rows [first_query, first_query + m)
// of the reference set and each skips its own row.
// Two rounds: each query first asks the nearest ranks (by box) that hold k
// points between them, whose answers bound its k-th distance; then every
// other rank whose box lies within that bound. A rank answers with its local
// k best (squared distances and global rows), merged by the packed
// (distance, row) key, the order every single-tree search uses.
template <class ExecutionSpace, class Tree, class Strategy>
NeighborResults<Kokkos::HostSpace>
find_neighbors(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
               PointSet<Kokkos::HostSpace> const& queries, NeighborOptions const& options,
               Strategy strategy, Index first_query = 0) {
  return detail::find_neighbors_over_ranks(space, tree, queries, options, first_query,
                                           detail::local_neighbors(space, tree, strategy),
                                           detail::workspace_of(strategy));
}

namespace detail {

template <class ExecutionSpace, class Tree>
Kokkos::View<std::int64_t*, Kokkos::HostSpace>
count_within_over_ranks(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                        PointSet<Kokkos::HostSpace> const& host_queries,
                        RangeCountOptions const& options, LocalCounts<Tree> const& local_count,
                        Workspace* workspace) {
  using MemorySpace = typename Tree::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  if (!(options.radius > 0) || !std::isfinite(options.radius))
    throw InputError("radius", " must be a positive finite radius (got " + std::to_string(options.radius) +
                     ")");
  check_queries(host_queries, tree.dimension());
  Kokkos::Profiling::pushRegion("treetrav::distributed::count_within");
  Workspace own;
  auto& staging = staging_in<MemorySpace>(workspace, own);
  // Fresh arrays: each is asked for once a call, so kept ones would buy nothing.
  treetrav::detail::WorkspaceArrays<ExecutionSpace> const arrays(space, nullptr);
  int const p = tree.comm().size();
  Index const m = host_queries.size();
  auto const queries = copy_points(space, host_queries, "treetrav::distributed::queries");
  auto const boxes = tree.rank_boxes();
  Coordinate const radius2 = options.radius * options.radius; // as count_within squares it
  auto const routes = route(space, m, p, KOKKOS_LAMBDA(Index q, int r) {
    return boxes.may_reach(r, queries, q, radius2);
  }, arrays);
  std::vector<int> counts;
  auto const received = send_queries(space, tree.comm(), queries, routes, counts, staging, arrays);
  Kokkos::View<std::int64_t*, MemorySpace> found("treetrav::distributed::counts", received.size());
  if (received.size() > 0) {
    RangeCountOptions local = options;
    local.exclude_self = false;
    found = local_count(received, local);
  }
  std::vector<int> returned_counts;
  auto const returned = exchange(space, tree.comm(), found, counts, returned_counts, staging, arrays,
                                 "treetrav::distributed::returned_counts");
  Kokkos::View<std::int64_t*, MemorySpace> total("treetrav::RangeCount::counts", m);
  std::int64_t const self = options.exclude_self ? 1 : 0;
  if (options.exclude_self)
    Kokkos::deep_copy(space, total, -self);
  auto const query = routes.query;
  for (int r = 0; r < p; ++r)
    Kokkos::parallel_for(
        "treetrav::distributed::add_counts", Policy(space, routes.offset[r], routes.offset[r + 1]),
        KOKKOS_LAMBDA(int slot) { total(query(slot)) += returned(slot); });
  auto host = treetrav::detail::host_copy(space, total, staging.received);
  Kokkos::Profiling::popRegion();
  return host;
}

} // namespace detail

// Point correlation over all ranks: per query of this rank, the number of
// reference points within distance r (inclusive), as count_within on one
// tree over all the points. Collective. Each query goes to every rank whose
// box lies within r and the counts add up; with options.exclude_self (the
// queries are reference points) each query's own point, counted once by the
// rank holding it, is taken off.
template <class ExecutionSpace, class Tree, class Strategy>
Kokkos::View<std::int64_t*, Kokkos::HostSpace>
count_within(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
             PointSet<Kokkos::HostSpace> const& queries, RangeCountOptions const& options,
             Strategy strategy) {
  return detail::count_within_over_ranks(
      space, tree, queries, options,
      detail::LocalCounts<Tree>([&](auto const& received, RangeCountOptions const& local) {
        return treetrav::count_within(space, tree.local_tree(), received, local, strategy);
      }),
      detail::workspace_of(strategy));
}

namespace detail {

template <class ExecutionSpace, class Tree>
RadiusResults<Kokkos::HostSpace>
find_within_over_ranks(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                       PointSet<Kokkos::HostSpace> const& host_queries,
                       RadiusSearchOptions const& options, Index first_query,
                       LocalLists<Tree> const& local_lists, Workspace* workspace) {
  using MemorySpace = typename Tree::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Coordinate const radius = options.radius.radius;
  if (!(radius > 0) || !std::isfinite(radius))
    throw InputError("radius", " must be a positive finite radius (got " + std::to_string(radius) + ")");
  check_queries(host_queries, tree.dimension());
  Kokkos::Profiling::pushRegion("treetrav::distributed::find_within");
  Workspace own;
  auto& staging = staging_in<MemorySpace>(workspace, own);
  // Fresh arrays: each is asked for once a call, so kept ones would buy nothing.
  treetrav::detail::WorkspaceArrays<ExecutionSpace> const arrays(space, nullptr);
  int const p = tree.comm().size();
  Index const m = host_queries.size();
  auto const queries = copy_points(space, host_queries, "treetrav::distributed::queries");
  auto const boxes = tree.rank_boxes();
  Coordinate const radius2 = radius * radius; // as find_within squares it
  auto const routes = route(space, m, p, KOKKOS_LAMBDA(Index q, int r) {
    return boxes.may_reach(r, queries, q, radius2);
  }, arrays);
  std::vector<int> counts;
  auto const received = send_queries(space, tree.comm(), queries, routes, counts, staging, arrays);

  // This rank's lists for what it received: a length per query, then the
  // (squared distance, global row) keys of all of them, each list in its
  // single-tree order (nearest first, ties by row).
  Index const n = received.size();
  Kokkos::View<std::int64_t*, MemorySpace> lengths("treetrav::distributed::list_lengths", n);
  Kokkos::View<NeighborKey*, MemorySpace> keys("treetrav::distributed::list_keys", 0);
  std::vector<int> key_counts(p, 0);
  if (n > 0) {
    RadiusSearchOptions local = options;
    local.radius.exclude_self = false;
    local.squared_distances = true;
    auto const found = local_lists(received, local);
    auto const offsets = found.offsets;
    auto const rows = tree.rows();
    // Where each sender's lists begin: p + 1 values of the offsets, not all of them.
    auto const received_from = displacements(counts);
    std::vector<std::int64_t> begins(p + 1);
    for (int r = 0; r <= p; ++r) {
      Kokkos::View<std::int64_t, Kokkos::HostSpace> begin(&begins[r]);
      Kokkos::deep_copy(space, begin, Kokkos::subview(offsets, received_from[r]));
    }
    space.fence();
    for (int r = 0; r < p; ++r)
      key_counts[r] = int(begins[r + 1] - begins[r]);
    keys = Kokkos::View<NeighborKey*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::list_keys"),
        begins[p]);
    Kokkos::parallel_for(
        "treetrav::distributed::pack_lists", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
          lengths(i) = offsets(i + 1) - offsets(i);
          for (std::int64_t j = offsets(i); j < offsets(i + 1); ++j)
            keys(j) = KeyPacking::pack(found.distances(j), rows(found.indices(j)));
        });
  }
  std::vector<int> ignored;
  auto const returned_lengths = exchange(space, tree.comm(), lengths, counts, ignored, staging, arrays,
                                         "treetrav::distributed::returned_lengths");
  auto const returned_keys = exchange(space, tree.comm(), keys, key_counts, ignored, staging, arrays,
                                      "treetrav::distributed::returned_keys");

  // Each query's lists from every rank, concatenated, then sorted: the
  // one-tree order; a query that is a reference point drops its own row.
  std::int64_t const slots = std::int64_t(routes.query.extent(0));
  Kokkos::View<std::int64_t*, MemorySpace> from("treetrav::distributed::list_from", slots + 1);
  Kokkos::parallel_scan(
      "treetrav::distributed::list_from", Policy(space, 0, slots),
      KOKKOS_LAMBDA(std::int64_t slot, std::int64_t & sum, bool final) {
        sum += returned_lengths(slot);
        if (final)
          from(slot + 1) = sum;
      });
  RadiusResults<MemorySpace> results;
  results.offsets = Kokkos::View<std::int64_t*, MemorySpace>("treetrav::RadiusResults::offsets", m + 1);
  auto const offsets = results.offsets;
  auto const query = routes.query;
  std::int64_t const self = options.radius.exclude_self ? 1 : 0;
  for (int r = 0; r < p; ++r)
    Kokkos::parallel_for(
        "treetrav::distributed::list_lengths", Policy(space, routes.offset[r], routes.offset[r + 1]),
        KOKKOS_LAMBDA(int slot) { offsets(query(slot) + 1) += returned_lengths(slot); });
  std::int64_t listed = 0;
  Kokkos::parallel_scan(
      "treetrav::distributed::list_offsets", Policy(space, 0, m),
      KOKKOS_LAMBDA(Index q, std::int64_t & sum, bool final) {
        std::int64_t const length = offsets(q + 1) - self;
        if (final)
          offsets(q + 1) = sum + length;
        sum += length;
      },
      listed);
  Kokkos::View<NeighborKey*, MemorySpace> merged(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::merged_lists"), listed);
  Kokkos::View<std::int64_t*, MemorySpace> cursor(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::list_cursor"), m);
  Kokkos::deep_copy(space, cursor, Kokkos::subview(offsets, Kokkos::make_pair(0, int(m))));
  for (int r = 0; r < p; ++r)
    Kokkos::parallel_for(
        "treetrav::distributed::gather_lists", Policy(space, routes.offset[r], routes.offset[r + 1]),
        KOKKOS_LAMBDA(int slot) {
          Index const q = query(slot);
          std::int64_t at = cursor(q);
          for (std::int64_t j = from(slot); j < from(slot + 1); ++j)
            if (!(self && KeyPacking::index_of(returned_keys(j)) == first_query + q))
              merged(at++) = returned_keys(j);
          cursor(q) = at;
        });
  auto const sorted = treetrav::detail::sort_segments(
      space, merged,
      Kokkos::View<std::int64_t const*, MemorySpace>(
          Kokkos::subview(offsets, Kokkos::make_pair(0, int(m)))),
      Kokkos::View<std::int64_t const*, MemorySpace>(
          Kokkos::subview(offsets, Kokkos::make_pair(1, int(m) + 1))),
      "treetrav::distributed::sort_lists");
  results.indices = Kokkos::View<Index*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::RadiusResults::indices"), listed);
  results.distances = Kokkos::View<Coordinate*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::RadiusResults::distances"), listed);
  bool const squared = options.squared_distances;
  Kokkos::parallel_for(
      "treetrav::distributed::unpack_lists",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, listed),
      KOKKOS_LAMBDA(std::int64_t j) {
        Coordinate const d2 = KeyPacking::distance2_of(sorted(j));
        results.indices(j) = KeyPacking::index_of(sorted(j));
        results.distances(j) = squared ? d2 : treetrav::math::sqrt(d2);
      });
  auto host = treetrav::detail::host_copy(space, results, staging.received);
  Kokkos::Profiling::popRegion();
  return host;
}

} // namespace detail

// Radius lists over all ranks: per query of this rank, the reference points
// within distance r (inclusive) as lists in compressed rows, nearest first,
// ties by global row: find_within on one tree over all the points. Collective.
// Each query goes to every rank whose box lies within r; the ranks' lists
// (squared distances and global rows) come back, are put side by side and
// sorted per query. With options.radius.exclude_self the queries are rows
// [first_query, first_query + m) of the reference set and each drops its own.
template <class ExecutionSpace, class Tree, class Strategy>
RadiusResults<Kokkos::HostSpace>
find_within(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
            PointSet<Kokkos::HostSpace> const& queries, RadiusSearchOptions const& options,
            Strategy strategy, Index first_query = 0) {
  return detail::find_within_over_ranks(
      space, tree, queries, options, first_query,
      detail::LocalLists<Tree>([&](auto const& received, RadiusSearchOptions const& local) {
        return treetrav::find_within(space, tree.local_tree(), received, local, strategy);
      }),
      detail::workspace_of(strategy));
}

} // namespace treetrav::distributed
