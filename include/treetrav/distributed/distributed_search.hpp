#pragma once

// Batch searches over reference points spread across MPI ranks. Each rank
// holds a spatial piece of the reference set (morton_partition) in its own
// tree, built in its own execution space; every rank knows every rank's
// bounding box, the top level that routes a query only to the ranks that may
// hold answers (as ArborX's DistributedTree does). Each rank's queries go to
// those ranks by MPI_Alltoallv, are answered there by the ordinary
// single-tree search (find_neighbors, count_within) and come back the same
// way; the answers merge exactly, so any number of ranks gives the results of
// one tree over all the points.
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/trees/detail/host_build.hpp>

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
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
    for (auto const& box : boxes_)
      size_ += box.count;
    Kokkos::Profiling::popRegion();
  }

  Communicator const& comm() const { return comm_; }
  Tree const& local_tree() const { return tree_; }
  std::vector<Index> const& global_index() const { return global_index_; }
  std::vector<RankBox> const& boxes() const { return boxes_; }
  Index size() const { return size_; } // over all ranks
  int dimension() const { return dimension_.front(); }

private:
  Communicator comm_;
  Tree tree_;
  std::vector<Index> global_index_;
  std::vector<RankBox> boxes_;
  std::vector<int> dimension_;
  Index size_ = 0;
};

namespace detail {

// f(i) for i in [begin, end) on the host's threads (routing and merging are
// per query and independent).
template <class F>
void host_for(char const* label, std::int64_t begin, std::int64_t end, F const& f) {
  if (end > begin)
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>(
            begin, end),
        f);
  Kokkos::DefaultHostExecutionSpace().fence();
}

// One round trip: query q goes to every rank in routes[q] (ascending); each
// rank answers all it receives at once with answer(received queries in
// `Space`'s memory) -> `width` values per query (host, in received order);
// then consume(q, rank, answer's width values) runs for every route, one
// rank after the other (concurrently for the distinct queries of a rank).
template <class T, class ExecutionSpace, class Answer, class Consume>
void route_queries(ExecutionSpace const& space, Communicator const& comm,
                   PointSet<Kokkos::HostSpace> const& queries,
                   std::vector<std::vector<int>> const& routes, int width, Answer const& answer,
                   Consume const& consume) {
  int const p = comm.size(), d = queries.dimension();
  Index const m = queries.size();
  std::vector<int> per_rank(p, 0);
  for (auto const& ranks : routes)
    for (int r : ranks)
      ++per_rank[r];
  auto const offsets = distributed::detail::displacements(per_rank);
  // sent[offsets[r] + j]: the j-th query sent to rank r (ascending queries).
  std::vector<Index> sent(offsets[p]);
  std::vector<Coordinate> coordinates(std::size_t(offsets[p]) * d);
  {
    auto fill = offsets;
    for (Index q = 0; q < m; ++q)
      for (int r : routes[q]) {
        int const slot = fill[r]++;
        sent[slot] = q;
        for (int k = 0; k < d; ++k)
          coordinates[std::size_t(slot) * d + k] = queries.coordinates(q, k);
      }
  }
  std::vector<int> send_counts(p), recv_counts;
  for (int r = 0; r < p; ++r)
    send_counts[r] = per_rank[r] * d;
  auto const received = all_to_all(comm, coordinates, send_counts, recv_counts);
  Index const n_received = static_cast<Index>(received.size() / std::max(d, 1));
  std::vector<T> answers;
  if (n_received > 0) {
    auto host =
        allocate_points<Kokkos::HostSpace>("treetrav::distributed::received", n_received, d);
    host_for("treetrav::distributed::unpack", 0, n_received, [&](std::int64_t i) {
      for (int k = 0; k < d; ++k)
        host.coordinates(i, k) = received[std::size_t(i) * d + k];
    });
    answers = answer(copy_points(space, host, "treetrav::distributed::received"));
  }
  for (int r = 0; r < p; ++r)
    send_counts[r] = recv_counts[r] / d * width;
  auto const returned = all_to_all(comm, answers, send_counts, recv_counts);
  // Returned answers come in rank order, each rank's in the order sent.
  for (int r = 0; r < p; ++r)
    host_for("treetrav::distributed::consume", offsets[r], offsets[r + 1],
             [&](std::int64_t j) { consume(sent[j], r, &returned[std::size_t(j) * width]); });
}

// Query q's coordinates as one row (the point set keeps each coordinate contiguous).
struct Row {
  Coordinate x[max_dimension];
  Row(PointSet<Kokkos::HostSpace> const& points, Index q) {
    for (int k = 0; k < points.dimension(); ++k)
      x[k] = points.coordinates(q, k);
  }
};

// Ranks by increasing lower bound of the distance from `query` to their
// points (ties by rank), those without points left out.
inline std::vector<int> ranks_by_distance(std::vector<RankBox> const& boxes,
                                          Coordinate const* query, int dimension) {
  std::vector<std::pair<double, int>> order;
  for (int r = 0; r < int(boxes.size()); ++r)
    if (boxes[r].count > 0)
      order.emplace_back(min_distance2(boxes[r], query, dimension), r);
  std::sort(order.begin(), order.end());
  std::vector<int> ranks;
  for (auto const& entry : order)
    ranks.push_back(entry.second);
  return ranks;
}

} // namespace detail

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

template <class ExecutionSpace, class Tree>
NeighborResults<Kokkos::HostSpace>
find_neighbors_over_ranks(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                          PointSet<Kokkos::HostSpace> const& queries,
                          NeighborOptions const& options, Index first_query,
                          LocalNeighbors<Tree> const& local_search) {
  // A query that skips itself asks for one more and drops itself at the end.
  treetrav::detail::check_k(options, tree.size(),
                            max_neighbors - (options.exclude_self ? 1 : 0));
  int const wanted = options.k + (options.exclude_self ? 1 : 0);
  if (queries.dimension() != tree.dimension())
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(tree.dimension()));
  Kokkos::Profiling::pushRegion("treetrav::distributed::find_neighbors");
  using Key = std::uint64_t;
  using Best = treetrav::detail::KBest<1>; // for its key packing only
  constexpr Key empty = ~Key(0);
  int const d = queries.dimension();
  Index const m = queries.size();
  auto const& boxes = tree.boxes();
  // best[q * wanted, ...): query q's best keys so far, ascending, empty-padded.
  std::vector<Key> best(std::size_t(m) * wanted, empty);

  auto answer = [&](PointSet<typename Tree::memory_space> const& received) {
    NeighborOptions local = options;
    local.k = std::min<Index>(wanted, Index(tree.global_index().size()));
    local.exclude_self = false;
    local.squared_distances = true;
    auto const found = local_search(received, local);
    auto const indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, found.indices);
    auto const distances2 =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, found.distances);
    std::vector<Key> keys(std::size_t(received.size()) * wanted, empty);
    detail::host_for("treetrav::distributed::pack", 0, received.size(), [&](std::int64_t i) {
      for (int j = 0; j < local.k; ++j)
        keys[std::size_t(i) * wanted + j] =
            Best::pack(distances2(i, j), tree.global_index()[indices(i, j)]);
    });
    return keys;
  };
  auto consume = [&](Index q, int, Key const* keys) {
    Key* const mine = &best[std::size_t(q) * wanted];
    Key merged[2 * max_neighbors];
    std::merge(mine, mine + wanted, keys, keys + wanted, merged);
    std::copy(merged, merged + wanted, mine);
  };

  // Round 1: the nearest ranks holding `wanted` points between them.
  std::vector<std::vector<int>> first(m), second(m);
  detail::host_for("treetrav::distributed::route_nearest", 0, m, [&](std::int64_t q) {
    Index held = 0;
    for (int r : detail::ranks_by_distance(boxes, detail::Row(queries, q).x, d)) {
      if (held >= wanted)
        break;
      first[q].push_back(r);
      held += boxes[r].count;
    }
    std::sort(first[q].begin(), first[q].end());
  });
  detail::route_queries<Key>(space, tree.comm(), queries, first, wanted, answer, consume);
  // Round 2: every other rank that may hold a point within the k-th distance.
  detail::host_for("treetrav::distributed::route_within", 0, m, [&](std::int64_t q) {
    Coordinate const bound2 = Best::distance2_of(best[std::size_t(q) * wanted + wanted - 1]);
    detail::Row const row(queries, q);
    for (int r = 0; r < tree.comm().size(); ++r)
      if (!std::binary_search(first[q].begin(), first[q].end(), r) &&
          may_reach(boxes[r], row.x, d, bound2))
        second[q].push_back(r);
  });
  detail::route_queries<Key>(space, tree.comm(), queries, second, wanted, answer, consume);

  NeighborResults<Kokkos::HostSpace> results;
  results.indices = decltype(results.indices)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::NeighborResults::indices"), m,
      options.k);
  results.distances = decltype(results.distances)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::NeighborResults::distances"), m,
      options.k);
  detail::host_for("treetrav::distributed::results", 0, m, [&](std::int64_t q) {
    Key const* const keys = &best[std::size_t(q) * wanted];
    int j = 0;
    for (int i = 0; i < wanted && j < options.k; ++i) {
      Index const row = Best::index_of(keys[i]);
      if (options.exclude_self && row == first_query + q)
        continue;
      results.indices(q, j) = row;
      results.distances(q, j) = options.squared_distances ? Best::distance2_of(keys[i])
                                                          : std::sqrt(Best::distance2_of(keys[i]));
      ++j;
    }
  });
  Kokkos::Profiling::popRegion();
  return results;
}

} // namespace detail

// The k nearest reference points (over all ranks) of this rank's `queries`,
// ties broken by global row: the results of find_neighbors on one tree over
// all the points, in the caller's query order. Collective. With
// options.exclude_self the queries are rows [first_query, first_query + m)
// of the reference set and each skips its own row.
// Two rounds: each query first asks the nearest ranks (by box) that hold k
// points between them, whose answers bound its k-th distance; then every
// other rank whose box lies within that bound. A rank answers with its local
// k best (squared distances and global rows), merged here by the packed
// (distance, row) key, the order every single-tree search uses.
template <class ExecutionSpace, class Tree, class Strategy>
NeighborResults<Kokkos::HostSpace>
find_neighbors(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
               PointSet<Kokkos::HostSpace> const& queries, NeighborOptions const& options,
               Strategy strategy, Index first_query = 0) {
  return detail::find_neighbors_over_ranks(
      space, tree, queries, options, first_query,
      detail::LocalNeighbors<Tree>([&](auto const& received, NeighborOptions const& local) {
        return treetrav::find_neighbors(space, tree.local_tree(), received, local, strategy);
      }));
}

namespace detail {

template <class ExecutionSpace, class Tree>
Kokkos::View<std::int64_t*, Kokkos::HostSpace>
count_within_over_ranks(ExecutionSpace const& space, DistributedTree<Tree> const& tree,
                        PointSet<Kokkos::HostSpace> const& queries,
                        RangeCountOptions const& options, LocalCounts<Tree> const& local_count) {
  if (!(options.radius > 0) || !std::isfinite(options.radius))
    throw InputError("radius", " must be a positive finite radius (got " + std::to_string(options.radius) +
                     ")");
  if (queries.dimension() != tree.dimension())
    throw InputError("queries have dimension " + std::to_string(queries.dimension()) +
                     " but the reference points have " + std::to_string(tree.dimension()));
  Kokkos::Profiling::pushRegion("treetrav::distributed::count_within");
  int const d = queries.dimension();
  Index const m = queries.size();
  Coordinate const radius2 = options.radius * options.radius; // as count_within squares it
  std::vector<std::vector<int>> routes(m);
  detail::host_for("treetrav::distributed::route_within", 0, m, [&](std::int64_t q) {
    detail::Row const row(queries, q);
    for (int r = 0; r < tree.comm().size(); ++r)
      if (may_reach(tree.boxes()[r], row.x, d, radius2))
        routes[q].push_back(r);
  });

  Kokkos::View<std::int64_t*, Kokkos::HostSpace> counts("treetrav::RangeCount::counts", m);
  auto answer = [&](PointSet<typename Tree::memory_space> const& received) {
    RangeCountOptions local = options;
    local.exclude_self = false;
    auto const found =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, local_count(received, local));
    return std::vector<std::int64_t>(found.data(), found.data() + found.extent(0));
  };
  detail::route_queries<std::int64_t>(
      space, tree.comm(), queries, routes, 1, answer,
      [&](Index q, int, std::int64_t const* count) { counts(q) += *count; });
  if (options.exclude_self)
    for (Index q = 0; q < m; ++q)
      --counts(q);
  Kokkos::Profiling::popRegion();
  return counts;
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
      }));
}

} // namespace treetrav::distributed
