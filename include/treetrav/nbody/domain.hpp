#pragma once

// What an N-body simulation needs from the MPI ranks it runs on, without MPI
// itself (distributed/nbody_domain.hpp implements it): collective sums and
// exchanges (the locally essential tree's, nbody/essential_tree.hpp), the
// bodies of all ranks, and the files they write together.
#include <treetrav/io/collective.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/nbody/diagnostics.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace treetrav::nbody {

// The per-body state that moves with a body from rank to rank (host).
struct BodyStates {
  io::Snapshot state; // coordinates, velocities, masses, ids, types
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> accelerations; // (n, 3)
  Kokkos::View<std::int8_t*, Kokkos::HostSpace> bins;
  // Interactions of the body's last force evaluation: its weight in the decomposition.
  Kokkos::View<Index*, Kokkos::HostSpace> costs;
  // The body's row in the whole system: the files' order and the Morton ties.
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> rows;
  // Optional (extent 0: none): the rank of `domain_ranks` ranks that holds each body.
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> domains;
  int domain_ranks = 1;

  std::size_t size() const { return state.size(); }
};

// The bodies of `state` with rows first_row, first_row + 1, ... (a share of
// a larger system: its rows there), zero costs and accelerations, bin 0.
BodyStates bodies_of(io::Snapshot const& state, std::int64_t first_row = 0);

// Rank `rank`'s share of `all` (every rank's bodies, ordered by row): the
// bodies `all.domains` gives it when they are for `ranks` ranks; else the
// bodies ordered along the Morton curve of their cube (ties by row) and cut
// into `ranks` contiguous pieces of nearly equal total weight, a body
// weighing its cost (at least 1: equal counts before any force evaluation),
// every piece at least one body. A pure function of its arguments.
BodyStates domain_of(BodyStates const& all, int rank, int ranks);

class Domain {
public:
  virtual ~Domain() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  virtual std::int64_t min(std::int64_t value) const = 0;
  virtual std::int64_t sum(std::int64_t value) const = 0;
  // Collective (MPI_Allgatherv): rank r's sizes[r] bytes at its `data`,
  // concatenated in rank order at `out`; every rank passes the same sizes.
  virtual void all_gather(void const* data, std::vector<std::size_t> const& sizes, void* out) const = 0;
  // Collective (MPI_Alltoall): sends[r], what this rank sends rank r; returns
  // what each rank sends this one.
  virtual std::vector<std::size_t> exchange_sizes(std::vector<std::size_t> const& sends) const = 0;
  // Collective (MPI_Alltoallv): sends[r] bytes from `data` (rank order) to
  // each rank r; receives[r] bytes (exchange_sizes) from each, at `out` in rank order.
  // `data` and `out` may be device memory where takes_device_memory().
  virtual void all_to_all(void const* data, std::vector<std::size_t> const& sends, void* out,
                          std::vector<std::size_t> const& receives) const = 0;
  // Whether all_to_all takes a GPU's memory as it is (a GPU-aware MPI).
  virtual bool takes_device_memory() const { return false; }
  // Collective: the bodies `held` by the ranks (any split of all bodies, each
  // on one rank, with their rows) cut as domain_of(all, rank(), ranks()) cuts
  // them all: this rank's share, ordered by row, without a recorded
  // decomposition. No rank holds more than its share and what it held; only
  // the bodies whose rank changes move. `held` is let go once packed (pass a
  // temporary, or hand it over with detail::take: a moved-from Kokkos 3.4
  // View still holds its memory).
  virtual BodyStates partition(BodyStates held) const = 0;
  // Collective: the bodies of all ranks redistributed by row, rank r holding
  // the r-th of `ranks()` contiguous blocks of rows (distributed::block_of),
  // ordered by row; `domains`: the rank each body came from. The files' rows,
  // each rank its own, for writers(). `local` is let go once packed, as by
  // partition.
  virtual BodyStates by_rows(BodyStates local) const = 0;
  // Collective: the diagnostics of all ranks' bodies, `rows` this rank's of
  // by_rows, summed in row order as one process sums them; every rank gets them.
  virtual Diagnostics measure(io::Snapshot const& rows) const = 0;
  // The ranks as the writers of one file.
  virtual io::Collective writers() const = 0;
};

} // namespace treetrav::nbody
