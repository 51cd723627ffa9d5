#pragma once

// The distributed searches' per-query work, in the memory space of the
// ranks' trees: which ranks a query goes to (the ranks' boxes), the lists of
// queries sent to each rank, and MPI exchanges of arrays that live there.
// On a GPU the queries, their routes, the answers and the merges stay on the
// device; only what goes to another rank crosses to host memory, for MPI
// (host-staged: the MPIs at hand are not CUDA-aware). What a rank sends
// itself is copied in place.
#include <treetrav/core/point_set.hpp>
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/partition.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace treetrav::distributed::detail {

// Every rank's box and point count, where the queries are.
template <class MemorySpace>
struct RankBoxes {
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> lower, upper; // (ranks, d)
  Kokkos::View<Index*, MemorySpace> count;

  RankBoxes() = default;
  RankBoxes(std::vector<RankBox> const& boxes, int dimension)
      : lower("treetrav::distributed::RankBoxes::lower", boxes.size(), dimension),
        upper("treetrav::distributed::RankBoxes::upper", boxes.size(), dimension),
        count("treetrav::distributed::RankBoxes::count", boxes.size()) {
    auto l = Kokkos::create_mirror_view(lower);
    auto u = Kokkos::create_mirror_view(upper);
    auto c = Kokkos::create_mirror_view(count);
    for (std::size_t r = 0; r < boxes.size(); ++r) {
      for (int k = 0; k < dimension; ++k) {
        l(r, k) = boxes[r].lower[k];
        u(r, k) = boxes[r].upper[k];
      }
      c(r) = boxes[r].count;
    }
    Kokkos::deep_copy(lower, l);
    Kokkos::deep_copy(upper, u);
    Kokkos::deep_copy(count, c);
  }

  KOKKOS_FUNCTION int ranks() const { return static_cast<int>(count.extent(0)); }

  // min_distance2 (partition.hpp) of query q of `points` to rank r's box.
  template <class Points>
  KOKKOS_FUNCTION double distance2(int r, Points const& points, Index q) const {
    double sum = 0;
    for (int k = 0; k < points.dimension(); ++k)
      sum += box_gap2(lower(r, k), upper(r, k), points.coordinates(q, k));
    return sum;
  }

  // may_reach (partition.hpp) for rank r.
  template <class Points>
  KOKKOS_FUNCTION bool may_reach(int r, Points const& points, Index q, Coordinate bound2) const {
    return count(r) > 0 && distance2(r, points, q) <= reach_bound2(bound2);
  }

  // Whether rank r is among the nearest ranks (by the distance to their
  // boxes, ties by rank) that hold `wanted` points between them: those
  // nearer than r hold fewer. O(ranks) per rank asked.
  template <class Points>
  KOKKOS_FUNCTION bool among_nearest(int r, Points const& points, Index q, Index wanted) const {
    if (count(r) == 0)
      return false;
    double const mine = distance2(r, points, q);
    std::int64_t nearer = 0;
    for (int s = 0; s < ranks(); ++s) {
      if (s == r || count(s) == 0)
        continue;
      double const theirs = distance2(s, points, q);
      if (theirs < mine || (theirs == mine && s < r))
        nearer += count(s);
    }
    return nearer < wanted;
  }
};

// The queries sent to each rank: slots [offset[r], offset[r + 1]) hold, in
// increasing order, the queries that go to rank r.
template <class MemorySpace>
struct Routes {
  Kokkos::View<Index*, MemorySpace> query;
  std::vector<int> count, offset;
};

// Routes of queries [0, m) to `ranks` ranks: query q goes to rank r where
// goes(q, r). One scan a rank.
template <class ExecutionSpace, class Goes>
Routes<typename ExecutionSpace::memory_space> route(ExecutionSpace const& space, Index m,
                                                    int ranks, Goes const& goes) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Kokkos::Profiling::pushRegion("treetrav::distributed::route");
  Routes<typename ExecutionSpace::memory_space> routes;
  routes.count.assign(ranks, 0);
  for (int r = 0; r < ranks; ++r) {
    int count = 0;
    Kokkos::parallel_reduce(
        "treetrav::distributed::route_count", Policy(space, 0, m),
        KOKKOS_LAMBDA(Index q, int& sum) { sum += goes(q, r) ? 1 : 0; }, count);
    routes.count[r] = count;
  }
  routes.offset = displacements(routes.count);
  routes.query = Kokkos::View<Index*, typename ExecutionSpace::memory_space>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::Routes::query"),
      routes.offset[ranks]);
  auto const query = routes.query;
  for (int r = 0; r < ranks; ++r) {
    if (routes.count[r] == 0)
      continue;
    int const first = routes.offset[r];
    Kokkos::parallel_scan(
        "treetrav::distributed::route_fill", Policy(space, 0, m),
        KOKKOS_LAMBDA(Index q, int& slot, bool final) {
          if (goes(q, r)) {
            if (final)
              query(first + slot) = q;
            ++slot;
          }
        });
  }
  Kokkos::Profiling::popRegion();
  return routes;
}

// MPI_Alltoallv of an array in `space`'s memory: `send` holds the values for
// rank 0, then rank 1, ..., send_counts[r] of them for rank r. Returns what
// every rank sent this one, in rank order, where `send` lives;
// recv_counts[r] values came from rank r. Values to other ranks pass through
// host memory when `send` lives elsewhere; this rank's own are copied in
// place. Collective.
template <class T, class ExecutionSpace>
Kokkos::View<T*, typename ExecutionSpace::memory_space>
exchange(ExecutionSpace const& space, Communicator const& comm,
         Kokkos::View<T*, typename ExecutionSpace::memory_space> const& send,
         std::vector<int> const& send_counts, std::vector<int>& recv_counts) {
  static_assert(std::is_trivially_copyable_v<T>, "exchange sends raw bytes");
  using MemorySpace = typename ExecutionSpace::memory_space;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  int const p = comm.size(), me = comm.rank();
  Kokkos::Profiling::pushRegion("treetrav::distributed::exchange");
  recv_counts.assign(p, 0);
  check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm.get()),
            "MPI_Alltoall");
  auto const send_offsets = displacements(send_counts);
  auto const recv_offsets = displacements(recv_counts);
  Kokkos::View<T*, MemorySpace> received(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::received"),
      recv_offsets[p]);
  auto const segment = [](auto const& view, std::vector<int> const& offsets, int r) {
    return Kokkos::subview(view, Kokkos::make_pair(std::size_t(offsets[r]), std::size_t(offsets[r + 1])));
  };
  Kokkos::deep_copy(space, segment(received, recv_offsets, me), segment(send, send_offsets, me));
  // The other ranks' values, staged in host memory unless they are there.
  Kokkos::View<T*, Kokkos::HostSpace> host_send, host_received;
  if constexpr (on_host) {
    host_send = Kokkos::View<T*, Kokkos::HostSpace>(send.data(), send.extent(0));
    host_received = Kokkos::View<T*, Kokkos::HostSpace>(received.data(), received.extent(0));
  } else {
    host_send = Kokkos::View<T*, Kokkos::HostSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::host_send"),
        send.extent(0));
    host_received = Kokkos::View<T*, Kokkos::HostSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::host_received"),
        received.extent(0));
    for (int r = 0; r < p; ++r)
      if (r != me && send_counts[r] > 0)
        Kokkos::deep_copy(space, segment(host_send, send_offsets, r), segment(send, send_offsets, r));
  }
  space.fence();
  // One value is one MPI element: counts stay below 2^31 values, not bytes.
  MPI_Datatype value;
  check_mpi(MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &value), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&value), "MPI_Type_commit");
  std::vector<int> others_send = send_counts, others_received = recv_counts;
  others_send[me] = others_received[me] = 0; // copied above
  int const error = MPI_Alltoallv(host_send.data(), others_send.data(), send_offsets.data(), value,
                                  host_received.data(), others_received.data(),
                                  recv_offsets.data(), value, comm.get());
  MPI_Type_free(&value);
  check_mpi(error, "MPI_Alltoallv");
  if constexpr (!on_host) {
    for (int r = 0; r < p; ++r)
      if (r != me && recv_counts[r] > 0)
        Kokkos::deep_copy(space, segment(received, recv_offsets, r),
                          segment(host_received, recv_offsets, r));
  }
  // No fence: what follows runs in `space` after the copies (pageable host
  // memory is staged before a copy returns, so host_received may go).
  Kokkos::Profiling::popRegion();
  return received;
}

// The routed queries to their ranks (routes.count[r] to rank r): returns
// what this rank receives, as points in rank order; received_from[r] of them
// came from rank r. Collective.
template <class ExecutionSpace, class MemorySpace>
PointSet<MemorySpace> send_queries(ExecutionSpace const& space, Communicator const& comm,
                                   PointSet<MemorySpace> const& queries,
                                   Routes<MemorySpace> const& routes,
                                   std::vector<int>& received_from) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const d = queries.dimension();
  auto const query = routes.query;
  // Slot after slot, d coordinates each.
  Kokkos::View<Coordinate*, MemorySpace> packed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::distributed::packed_queries"),
      std::size_t(query.extent(0)) * d);
  Kokkos::parallel_for(
      "treetrav::distributed::pack_queries", Policy(space, 0, query.extent(0)),
      KOKKOS_LAMBDA(int slot) {
        for (int k = 0; k < d; ++k)
          packed(std::size_t(slot) * d + k) = queries.coordinates(query(slot), k);
      });
  std::vector<int> counts = routes.count;
  for (int& count : counts)
    count *= d;
  auto const received = exchange(space, comm, packed, counts, received_from);
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
