#pragma once

// The distributed searches' per-query work, in the memory space of the
// ranks' trees: which ranks a query goes to (the ranks' boxes), the lists of
// queries sent to each rank, and MPI exchanges of arrays that live there.
// On a GPU the queries, their routes, the answers and the merges stay on the
// device; only what goes to another rank crosses to host memory, for MPI
// (staged in page-locked memory: the MPIs at hand are not CUDA-aware). What
// a rank sends itself is copied in place.
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/detail/host_staging.hpp>
#include <treetrav/core/detail/scan.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/core/workspace.hpp>
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/trees/detail/morton.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace treetrav::distributed::detail {

// The box of all ranks' points (their boxes' union), as the Morton
// partition's codes are taken over it.
inline treetrav::detail::BoundingBox<Kokkos::HostSpace> union_box(std::vector<RankBox> const& boxes,
                                                                  int dimension) {
  treetrav::detail::BoundingBox<Kokkos::HostSpace> box("treetrav::distributed::union_box",
                                                       2 * dimension);
  for (int k = 0; k < dimension; ++k) {
    box(k) = std::numeric_limits<Coordinate>::infinity();
    box(dimension + k) = -std::numeric_limits<Coordinate>::infinity();
    for (auto const& rank : boxes)
      if (rank.count > 0) {
        box(k) = std::min(box(k), rank.lower[k]);
        box(dimension + k) = std::max(box(dimension + k), rank.upper[k]);
      }
  }
  return box;
}

// Where each rank's points lie, finer than its box: the boxes of its points
// grouped by the first bits of their Morton codes (the curve's first
// cells). A rank's piece of the curve is not a box: a few points past a
// cell's end stretch its box over another rank's whole region, and every
// query there then looked near it.
struct RankCells {
  static constexpr int code_bits = 6; // at most 64 cells a rank
  std::vector<Coordinate> lower, upper; // (cell, d), every rank's occupied cells in rank order
  std::vector<int> offset;              // rank r's cells: [offset[r], offset[r + 1])
};

// Every rank's cells, point count and first Morton code, where the queries are.
template <class MemorySpace>
struct RankBoxes {
  Kokkos::View<Index*, MemorySpace> count;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> cell_lower, cell_upper; // (cells, d)
  Kokkos::View<int*, MemorySpace> cell_offset; // (ranks + 1)
  // The partition's codes (morton_partition): rank r's piece of the curve
  // begins at first_code(r).
  treetrav::detail::MortonEncoder<MemorySpace> encode;
  Kokkos::View<std::uint64_t*, MemorySpace> first_code;

  RankBoxes() = default;
  // Each rank's point count, the union of their boxes (union_box), cells and
  // first codes; `bits`: the partition's Morton code bits.
  RankBoxes(std::vector<Index> const& counts,
            treetrav::detail::BoundingBox<Kokkos::HostSpace> const& union_of_boxes, int dimension,
            RankCells const& cells, std::vector<std::uint64_t> const& first_codes, int bits)
      : count("treetrav::distributed::RankBoxes::count", counts.size()),
        cell_lower("treetrav::distributed::RankBoxes::cell_lower", cells.offset.back(), dimension),
        cell_upper("treetrav::distributed::RankBoxes::cell_upper", cells.offset.back(), dimension),
        cell_offset("treetrav::distributed::RankBoxes::cell_offset", cells.offset.size()),
        encode{treetrav::detail::BoundingBox<MemorySpace>("treetrav::distributed::RankBoxes::box",
                                                         2 * dimension),
               dimension, bits},
        first_code("treetrav::distributed::RankBoxes::first_code", counts.size()) {
    Kokkos::deep_copy(count, Kokkos::View<Index const*, Kokkos::HostSpace>(counts.data(), counts.size()));
    Kokkos::deep_copy(encode.box, union_of_boxes);
    using HostCells = Kokkos::View<Coordinate const**, Kokkos::LayoutRight, Kokkos::HostSpace>;
    Kokkos::deep_copy(cell_lower, HostCells(cells.lower.data(), cells.offset.back(), dimension));
    Kokkos::deep_copy(cell_upper, HostCells(cells.upper.data(), cells.offset.back(), dimension));
    Kokkos::deep_copy(cell_offset, Kokkos::View<int const*, Kokkos::HostSpace>(
                                       cells.offset.data(), cells.offset.size()));
    Kokkos::deep_copy(first_code, Kokkos::View<std::uint64_t const*, Kokkos::HostSpace>(
                                      first_codes.data(), first_codes.size()));
  }

  KOKKOS_FUNCTION int ranks() const { return static_cast<int>(count.extent(0)); }

  // A lower bound (min_distance2, partition.hpp) of the squared distance
  // from query q of `points` to rank r's points: to the nearest of its cells.
  template <class Points>
  KOKKOS_FUNCTION double distance2(int r, Points const& points, Index q) const {
    double nearest = std::numeric_limits<double>::infinity();
    for (int c = cell_offset(r); c < cell_offset(r + 1); ++c) {
      double sum = 0;
      for (int k = 0; k < points.dimension() && sum < nearest; ++k)
        sum += box_gap2(cell_lower(c, k), cell_upper(c, k), points.coordinates(q, k));
      nearest = sum < nearest ? sum : nearest;
    }
    return nearest;
  }

  // may_reach (partition.hpp) for rank r.
  template <class Points>
  KOKKOS_FUNCTION bool may_reach(int r, Points const& points, Index q, Coordinate bound2) const {
    return count(r) > 0 && distance2(r, points, q) <= reach_bound2(bound2);
  }

  // The rank whose piece of the Morton curve holds query q's place on it:
  // the last rank with points whose piece begins at or before q's code.
  template <class Points>
  KOKKOS_FUNCTION int curve_owner(Points const& points, Index q) const {
    std::uint64_t const code = encode(points.coordinates, q);
    int owner = -1;
    for (int s = 0; s < ranks(); ++s)
      if (count(s) > 0 && (owner < 0 || first_code(s) <= code))
        owner = s;
    return owner;
  }

  // Whether rank r is among the nearest ranks that hold `wanted` points
  // between them: those before r hold fewer. Ranks are ordered by the
  // distance to their cells; among equally near ones the query's curve
  // owner comes first, then by rank. O(cells) per rank asked.
  template <class Points>
  KOKKOS_FUNCTION bool among_nearest(int r, Points const& points, Index q, Index wanted) const {
    if (count(r) == 0)
      return false;
    double const mine = distance2(r, points, q);
    int const owner = curve_owner(points, q);
    std::int64_t before = 0;
    for (int s = 0; s < ranks(); ++s) {
      if (s == r || count(s) == 0)
        continue;
      double const theirs = distance2(s, points, q);
      bool const first = theirs != mine   ? theirs < mine
                         : s == owner     ? true
                         : r == owner     ? false
                                          : s < r;
      if (first)
        before += count(s);
    }
    return before < wanted;
  }
};

// The queries sent to each rank: slots [offset[r], offset[r + 1]) hold, in
// increasing order, the queries that go to rank r.
template <class MemorySpace>
struct Routes {
  Kokkos::View<Index*, MemorySpace> query;
  std::vector<int> count, offset;
};

// route()'s parts: the ranks each query goes to (a bit each), how many, and
// the (rank, query) pairs they make, in query order.
template <class MemorySpace>
struct RouteBits {
  Kokkos::View<std::uint64_t const**, Kokkos::LayoutRight, MemorySpace> to; // (queries, words)
  KOKKOS_FUNCTION Index operator()(Index q) const {
    Index count = 0;
    for (std::size_t w = 0; w < to.extent(1); ++w)
      count += treetrav::detail::set_bits(to(q, w));
    return count;
  }
};
template <class MemorySpace>
struct EmitRoutePairs {
  Kokkos::View<std::uint64_t const**, Kokkos::LayoutRight, MemorySpace> to;
  Kokkos::View<Index const*, MemorySpace> first_pair;
  Kokkos::View<std::uint32_t*, MemorySpace> rank;
  Kokkos::View<Index*, MemorySpace> query;
  KOKKOS_FUNCTION void operator()(Index q) const {
    Index first = first_pair(q);
    for (std::size_t w = 0; w < to.extent(1); ++w)
      for (std::uint64_t bits = to(q, w); bits != 0; bits &= bits - 1) {
        rank(first) = static_cast<std::uint32_t>(64 * w + treetrav::detail::lowest_set_bit(bits));
        query(first++) = q;
      }
  }
};

// Where the searches' per-call arrays (routes, packed queries, answers,
// what the exchanges receive) come from: on a GPU the buffers of the call's
// `workspace`, kept by name, so that a search's rounds and exchanges reuse
// them instead of allocating afresh. On the host, fresh arrays (an
// allocation costs little there).
template <class ExecutionSpace>
treetrav::detail::WorkspaceArrays<ExecutionSpace> search_arrays(ExecutionSpace const& space,
                                                                Workspace* workspace) {
  return {space, treetrav::detail::host_reachable_v<typename ExecutionSpace::memory_space> ? nullptr
                                                                                            : workspace};
}

// Routes of queries [0, m) to `ranks` ranks: query q goes to rank r where
// goes(q, r). goes is asked once for each query and rank (a bit each, the
// kNN's goes costing O(ranks x cells)); the (rank, query) pairs are laid out
// in query order and sorted by rank, stably: a fixed number of launches and
// two reads back however many ranks there are (a count and a scan a rank
// took 2 x ranks launches, each a wait). The arrays from `arrays` (valid
// until the next route with them).
template <class ExecutionSpace, class Goes>
Routes<typename ExecutionSpace::memory_space>
route(ExecutionSpace const& space, Index m, int ranks, Goes const& goes,
      treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Kokkos::Profiling::pushRegion("treetrav::distributed::route");
  int const words = (ranks + 63) / 64;
  std::string const name = "treetrav::distributed::Routes::";
  auto const to = arrays.template make<Kokkos::View<std::uint64_t**, Kokkos::LayoutRight, MemorySpace>>(
      name + "to", m, words);
  Kokkos::parallel_for(
      "treetrav::distributed::route_ranks", Policy(space, 0, m), KOKKOS_LAMBDA(Index q) {
        for (int w = 0; w < words; ++w) {
          std::uint64_t bits = 0;
          for (int b = 0; b < 64 && 64 * w + b < ranks; ++b)
            if (goes(q, 64 * w + b))
              bits |= std::uint64_t(1) << b;
          to(q, w) = bits;
        }
      });
  auto const first_pair = arrays.template make<Kokkos::View<Index*, MemorySpace>>(name + "first_pair", m);
  Index const pairs = treetrav::detail::lay_out_counts(
      arrays, "treetrav::distributed::route_count", m, RouteBits<MemorySpace>{to},
      treetrav::detail::PlaceFirst<MemorySpace>{first_pair});
  auto const rank = arrays.template make<Kokkos::View<std::uint32_t*, MemorySpace>>(name + "rank", pairs);
  auto const pair_query = arrays.template make<Kokkos::View<Index*, MemorySpace>>(name + "pair_query", pairs);
  Kokkos::parallel_for("treetrav::distributed::route_pairs", Policy(space, 0, m),
                       EmitRoutePairs<MemorySpace>{to, first_pair, rank, pair_query});
  // Stable: each rank's queries stay in increasing order.
  auto const sorted_rank =
      arrays.template make<Kokkos::View<std::uint32_t*, MemorySpace>>(name + "sorted_rank", pairs);
  int const key_bits = std::max(1, treetrav::detail::ceil_log2(ranks));
  auto const permutation =
      treetrav::detail::sort_permutation(space, rank, key_bits, "treetrav::distributed::route_sort", sorted_rank,
                                         arrays.workspace());
  Routes<MemorySpace> routes;
  routes.query = arrays.template make<Kokkos::View<Index*, MemorySpace>>(name + "query", pairs);
  auto const query = routes.query;
  Kokkos::parallel_for(
      "treetrav::distributed::route_fill", Policy(space, 0, pairs),
      KOKKOS_LAMBDA(Index i) { query(i) = pair_query(permutation(i)); });
  // Rank r's slots begin at the first sorted pair of rank r or more.
  auto const offset = arrays.template make<Kokkos::View<int*, MemorySpace>>(name + "offset", ranks + 1);
  Kokkos::parallel_for(
      "treetrav::distributed::route_offsets", Policy(space, 0, ranks + 1),
      KOKKOS_LAMBDA(Index r) { offset(r) = treetrav::detail::lower_bound(sorted_rank, 0, pairs, std::uint64_t(r)); });
  auto const host_offset = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, offset);
  routes.offset.assign(host_offset.data(), host_offset.data() + ranks + 1);
  routes.count.resize(ranks);
  for (int r = 0; r < ranks; ++r)
    routes.count[r] = routes.offset[r + 1] - routes.offset[r];
  Kokkos::Profiling::popRegion();
  return routes;
}

// Host memory the exchanges stage device arrays through: a part of the
// caller's Workspace, so that the exchanges of a search, and the searches
// after it, reuse one page-locked allocation instead of paying for one each
// time (core/detail/host_staging.hpp).
template <class MemorySpace>
struct ExchangeStaging {
  treetrav::detail::HostStaging<MemorySpace> send{"treetrav::distributed::staged_send"},
      received{"treetrav::distributed::staged_received"};

  // Room for `bytes` each way now: a caller that knows its batch pays for
  // the page-locking before its searches, as it pays for its tree. Where
  // MPI takes `memory`'s device arrays as they are, only the way to the host
  // (the results) is staged.
  template <class ExecutionSpace>
  void reserve(ExecutionSpace const& space, std::size_t bytes, MpiMemory memory) {
    if constexpr (!treetrav::detail::host_reachable_v<MemorySpace>) {
      if (memory != MpiMemory::device)
        send.template get<unsigned char>(space, bytes);
      received.template get<unsigned char>(space, bytes);
    }
  }
};

// An exchange of an array in `space`'s memory, as MPI_Alltoallv: `send`
// holds the values for rank 0, then rank 1, ..., send_counts[r] of them for
// rank r. Returns what every rank sent this one, in rank order, where `send`
// lives (the array `name` of `arrays`); recv_counts[r] values came from
// rank r. This rank's own values are copied in place. Point to point, the
// receives posted first. Values to other ranks go from and to the arrays
// themselves where MPI may be handed their memory (the host's, or a
// device's when comm.memory() says so); else through `staging`, each
// received part sent on to the device as soon as it is in. Collective.
template <class T, class ExecutionSpace>
Kokkos::View<T*, typename ExecutionSpace::memory_space>
exchange(ExecutionSpace const& space, Communicator const& comm,
         Kokkos::View<T*, typename ExecutionSpace::memory_space> const& send,
         std::vector<int> const& send_counts, std::vector<int>& recv_counts,
         ExchangeStaging<typename ExecutionSpace::memory_space>& staging,
         treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays, std::string const& name) {
  static_assert(std::is_trivially_copyable_v<T>, "exchange sends raw bytes");
  using MemorySpace = typename ExecutionSpace::memory_space;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  bool const staged = !on_host && comm.memory() != MpiMemory::device;
  int const p = comm.size(), me = comm.rank();
  constexpr int tag = 0x7474; // the exchanges of one communicator follow each other
  Kokkos::Profiling::pushRegion("treetrav::distributed::exchange");
  Kokkos::Profiling::pushRegion("treetrav::distributed::exchange::counts");
  recv_counts.assign(p, 0);
  check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm.get()),
            "MPI_Alltoall");
  Kokkos::Profiling::popRegion();
  auto const send_offsets = displacements(send_counts);
  auto const recv_offsets = displacements(recv_counts);
  auto const received = arrays.template make<Kokkos::View<T*, MemorySpace>>(name, recv_offsets[p]);
  auto const part = [](std::vector<int> const& offsets, int begin, int end) {
    return Kokkos::make_pair(std::size_t(offsets[begin]), std::size_t(offsets[end]));
  };
  Kokkos::deep_copy(space, Kokkos::subview(received, part(recv_offsets, me, me + 1)),
                    Kokkos::subview(send, part(send_offsets, me, me + 1)));
  // Where MPI reads and writes: the arrays themselves, or the staging.
  T const* out = send.data();
  T* in = received.data();
  Kokkos::View<T*, treetrav::detail::staging_space_t<MemorySpace>, Kokkos::MemoryUnmanaged> staged_in;
  if (staged) {
    auto const staged_out = staging.send.template get<T>(space, send.extent(0));
    staged_in = staging.received.template get<T>(space, received.extent(0));
    out = staged_out.data();
    in = staged_in.data();
    for (auto const& others : {part(send_offsets, 0, me), part(send_offsets, me + 1, p)})
      if (others.first < others.second)
        Kokkos::deep_copy(space, Kokkos::subview(staged_out, others), Kokkos::subview(send, others));
  }
  // This rank's own part is in place already.
  std::vector<std::size_t> send_bytes(p), recv_bytes(p), send_at(p), recv_at(p);
  for (int r = 0; r < p; ++r) {
    send_bytes[r] = r == me ? 0 : std::size_t(send_counts[r]) * sizeof(T);
    recv_bytes[r] = r == me ? 0 : std::size_t(recv_counts[r]) * sizeof(T);
    send_at[r] = std::size_t(send_offsets[r]) * sizeof(T);
    recv_at[r] = std::size_t(recv_offsets[r]) * sizeof(T);
  }
  Kokkos::Profiling::pushRegion("treetrav::distributed::exchange::stage");
  space.fence(); // the values (staged or not) are in before MPI reads them
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::distributed::exchange::transfer");
  // Staged: each rank's part on to the device as soon as it is in.
  std::function<void(int)> arrived;
  if (staged)
    arrived = [&](int r) {
      Kokkos::deep_copy(space, Kokkos::subview(received, part(recv_offsets, r, r + 1)),
                        Kokkos::subview(staged_in, part(recv_offsets, r, r + 1)));
    };
  exchange_bytes(comm, out, send_bytes, send_at, in, recv_bytes, recv_at, tag, arrived);
  Kokkos::Profiling::popRegion();
  if (staged)
    space.fence(); // the next exchange reuses the staging
  Kokkos::Profiling::popRegion();
  return received;
}

// The routed queries to their ranks (routes.count[r] to rank r): returns
// what this rank receives, as points in rank order; received_from[r] of them
// came from rank r. The packed queries travel in arrays of `arrays`. Collective.
template <class ExecutionSpace, class MemorySpace>
PointSet<MemorySpace> send_queries(ExecutionSpace const& space, Communicator const& comm,
                                   PointSet<MemorySpace> const& queries,
                                   Routes<MemorySpace> const& routes,
                                   std::vector<int>& received_from,
                                   ExchangeStaging<MemorySpace>& staging,
                                   treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const d = queries.dimension();
  auto const query = routes.query;
  // Slot after slot, d coordinates each.
  auto const packed = arrays.template make<Kokkos::View<Coordinate*, MemorySpace>>(
      "treetrav::distributed::packed_queries", std::size_t(query.extent(0)) * d);
  Kokkos::parallel_for(
      "treetrav::distributed::pack_queries", Policy(space, 0, query.extent(0)),
      KOKKOS_LAMBDA(int slot) {
        for (int k = 0; k < d; ++k)
          packed(std::size_t(slot) * d + k) = queries.coordinates(query(slot), k);
      });
  std::vector<int> counts = routes.count;
  for (int& count : counts)
    count *= d;
  auto const received =
      exchange(space, comm, packed, counts, received_from, staging, arrays, "treetrav::distributed::received_coordinates");
  for (int& count : received_from)
    count /= std::max(d, 1);
  Index const n = d > 0 ? Index(received.extent(0) / d) : 0;
  auto points = allocate_points<MemorySpace>("treetrav::distributed::received_queries", n, d);
  Kokkos::parallel_for(
      "treetrav::distributed::unpack_queries", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < d; ++k)
          points.coordinates(i, k) = received(std::size_t(i) * d + k);
      });
  return points;
}

} // namespace treetrav::distributed::detail
