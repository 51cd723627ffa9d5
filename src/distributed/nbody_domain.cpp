#include <treetrav/core/detail/take.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/distributed/detail/splitters.hpp>
#include <treetrav/distributed/nbody_domain.hpp>
#include <treetrav/trees/octree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace treetrav::distributed {

std::int64_t NbodyDomain::min(std::int64_t value) const {
  std::int64_t result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MIN, comm_.get()), "MPI_Allreduce");
  return result;
}

std::int64_t NbodyDomain::sum(std::int64_t value) const {
  std::int64_t result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_SUM, comm_.get()), "MPI_Allreduce");
  return result;
}

void NbodyDomain::all_gather(void const* data, std::vector<std::size_t> const& sizes, void* out) const {
  int const p = comm_.size();
  std::vector<int> counts(p);
  std::size_t total = 0;
  for (int r = 0; r < p; ++r)
    counts[r] = detail::byte_count(sizes[r], 1), total += sizes[r];
  detail::byte_count(total, 1);
  auto const offsets = detail::displacements(counts);
  check_mpi(MPI_Allgatherv(data, counts[comm_.rank()], MPI_BYTE, out, counts.data(), offsets.data(), MPI_BYTE,
                           comm_.get()),
            "MPI_Allgatherv");
}

std::vector<std::size_t> NbodyDomain::exchange_sizes(std::vector<std::size_t> const& sends) const {
  int const p = comm_.size();
  std::vector<std::uint64_t> out(sends.begin(), sends.end()), in(p);
  check_mpi(MPI_Alltoall(out.data(), 1, MPI_UINT64_T, in.data(), 1, MPI_UINT64_T, comm_.get()), "MPI_Alltoall");
  return std::vector<std::size_t>(in.begin(), in.end());
}

void NbodyDomain::all_to_all(void const* data, std::vector<std::size_t> const& sends, void* out,
                             std::vector<std::size_t> const& receives) const {
  int const p = comm_.size();
  std::vector<int> send_bytes(p), receive_bytes(p);
  std::size_t sent = 0, received = 0;
  for (int r = 0; r < p; ++r) {
    send_bytes[r] = detail::byte_count(sends[r], 1), sent += sends[r];
    receive_bytes[r] = detail::byte_count(receives[r], 1), received += receives[r];
  }
  detail::byte_count(sent, 1);
  detail::byte_count(received, 1);
  auto const send_offsets = detail::displacements(send_bytes);
  auto const receive_offsets = detail::displacements(receive_bytes);
  if (!takes_device_memory()) {
    check_mpi(MPI_Alltoallv(data, send_bytes.data(), send_offsets.data(), MPI_BYTE, out, receive_bytes.data(),
                            receive_offsets.data(), MPI_BYTE, comm_.get()),
              "MPI_Alltoallv");
    return;
  }
  // Device memory: point to point, this rank's own part too, so that every
  // byte goes through the transport that takes device memory (a collective's
  // own part may be a host memcpy in an MPI built without GPU support).
  auto const wide = [](std::vector<int> const& values) { return std::vector<std::size_t>(values.begin(), values.end()); };
  detail::exchange_bytes(comm_, data, sends, wide(send_offsets), out, receives, wide(receive_offsets),
                         0x6e62 /* "nb" */);
}

namespace {

// One body as partition() and by_rows() move it.
struct PackedBody {
  double x[3], v[3], mass, potential;
  std::int64_t id, row;
  float a[3];
  std::int32_t type;
  Index cost;
  std::int32_t domain;
  std::int8_t bin;
};

// Indices 0..size-1 grouped by the rank `rank_of` gives each, in index order
// within a rank (a counting sort), and how many go to each of p ranks: the
// send order and counts of an MPI_Alltoallv.
template <class RankOf>
std::vector<std::size_t> grouped_by_rank(std::size_t size, int p, RankOf const& rank_of,
                                         std::vector<int>& counts) {
  counts.assign(p, 0);
  std::vector<int> rank(size);
  for (std::size_t i = 0; i < size; ++i)
    ++counts[rank[i] = rank_of(i)];
  std::vector<std::size_t> next(p, 0), order(size);
  for (int r = 1; r < p; ++r)
    next[r] = next[r - 1] + std::size_t(counts[r - 1]);
  for (std::size_t i = 0; i < size; ++i)
    order[next[rank[i]]++] = i;
  return order;
}

// This rank's bodies order[0], order[1], ..., each with `rank` as its domain.
std::vector<PackedBody> pack(nbody::BodyStates const& local, int rank, std::vector<std::size_t> const& order) {
  bool const potentials = local.state.potentials.extent(0) != 0,
             types = local.state.types.extent(0) != 0;
  std::vector<PackedBody> packed(order.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    std::size_t const i = order[j];
    PackedBody& b = packed[j];
    for (int k = 0; k < 3; ++k) {
      b.x[k] = local.state.coordinates(i, k);
      b.v[k] = local.state.velocities(i, k);
      b.a[k] = local.accelerations(i, k);
    }
    b.mass = local.state.masses(i);
    b.potential = potentials ? local.state.potentials(i) : 0;
    b.id = local.state.ids(i);
    b.row = local.rows(i);
    b.type = types ? local.state.types(i) : 1;
    b.cost = local.costs(i);
    b.bin = local.bins(i);
    b.domain = rank;
  }
  return packed;
}

bool by_row(PackedBody const& a, PackedBody const& b) { return a.row < b.row; }

// What unpack() takes of the bodies that were packed: all but their arrays,
// which are let go before the unpacking.
struct Header {
  double time, box_size;
  io::Metadata metadata;
  bool potentials, types; // whether the optional arrays are held
};
Header header_of(nbody::BodyStates const& bodies) {
  return {bodies.state.time, bodies.state.box_size, bodies.state.metadata,
          bodies.state.potentials.extent(0) != 0, bodies.state.types.extent(0) != 0};
}

// `bodies` (ordered by row) as BodyStates with the time, box, metadata and
// optional arrays `like` names, the domains of `ranks` ranks.
nbody::BodyStates unpack(std::vector<PackedBody> const& bodies, Header const& like, int ranks) {
  bool const potentials = like.potentials, types = like.types;
  std::size_t const total = bodies.size();
  io::Snapshot state = io::allocate_snapshot(total, potentials);
  state.time = like.time;
  state.box_size = like.box_size;
  state.metadata = like.metadata;
  if (types)
    state.types = decltype(state.types)("treetrav::nbody::BodyStates::types", total);
  nbody::BodyStates result = nbody::bodies_of(state);
  result.domains = decltype(result.domains)("treetrav::nbody::BodyStates::domains", total);
  result.domain_ranks = ranks;
  for (std::size_t i = 0; i < total; ++i) {
    PackedBody const& b = bodies[i];
    for (int k = 0; k < 3; ++k) {
      result.state.coordinates(i, k) = b.x[k];
      result.state.velocities(i, k) = b.v[k];
      result.accelerations(i, k) = b.a[k];
    }
    result.state.masses(i) = b.mass;
    if (potentials)
      result.state.potentials(i) = b.potential;
    result.state.ids(i) = b.id;
    if (types)
      result.state.types(i) = b.type;
    result.costs(i) = b.cost;
    result.bins(i) = b.bin;
    result.rows(i) = b.row;
    result.domains(i) = b.domain;
  }
  return result;
}

// `bodies` sent to their ranks in `order` (grouped_by_rank's, send_counts[r]
// to rank r): this rank's received bodies by row. The bodies given and those
// packed to be sent are let go before the received are unpacked.
nbody::BodyStates exchanged(Communicator const& comm, nbody::BodyStates bodies, std::vector<std::size_t> const& order,
                            std::vector<int> const& send_counts) {
  Header const header = header_of(bodies);
  std::vector<int> recv_counts;
  std::vector<PackedBody> received = [&] {
    std::vector<PackedBody> const packed = pack(bodies, comm.rank(), order);
    bodies = nbody::BodyStates{};
    return distributed::all_to_all(comm, packed, send_counts, recv_counts);
  }();
  std::sort(received.begin(), received.end(), by_row);
  return unpack(received, header, comm.size());
}

} // namespace

namespace {

// A body's place on the Morton curve of all bodies (code, then row: the
// order domain_of sorts by), its weight, and where it is held.
struct CurveKey {
  std::uint64_t code;
  std::int64_t row;
  std::int64_t weight;
  std::int64_t index;  // in the holder's bodies
  std::int32_t holder;
  friend bool operator<(CurveKey const& a, CurveKey const& b) {
    return a.code != b.code ? a.code < b.code : a.row < b.row;
  }
};

// A body's new rank, sent back to its holder.
struct Assignment {
  std::int64_t index;
  std::int32_t rank;
};

} // namespace

// The keys travel, not the bodies: a sample sort puts them in curve order
// across the ranks (splitters from a regular sample, one MPI_Alltoallv);
// each rank then knows its keys' positions and the weight before them
// (MPI_Exscan), the pieces' starts follow from one MPI_Allreduce of counts
// (domain_of's rule, the same clamps on every rank), and each key's rank goes
// back to the body's holder. Only then do the bodies move, once, and only
// those whose rank changes leave their holder.
nbody::BodyStates NbodyDomain::partition(nbody::BodyStates held) const {
  int const p = comm_.size(), me = comm_.rank();
  std::size_t const m = held.size();
  std::int64_t const n = sum(static_cast<std::int64_t>(m));
  if (n < p)
    throw InputError(fmt::format("nbody: {} bodies cannot be shared by {} MPI ranks (at least one each)", n, p));
  std::vector<std::int32_t> destination(m, me);
  bool const carried = held.domains.extent(0) == m && held.domain_ranks == p;
  if (min(carried ? 1 : 0) == 1) {
    // The decomposition the bodies carry (a restart on as many ranks).
    for (std::size_t i = 0; i < m; ++i)
      destination[i] = held.domains(i);
  } else {
    // The cube of all bodies' float positions (min and max are exact in any order).
    auto const& x = held.state.coordinates;
    Coordinate bounds[6];
    for (int k = 0; k < 3; ++k)
      bounds[k] = infinity, bounds[3 + k] = infinity;
    for (std::size_t i = 0; i < m; ++i)
      for (int k = 0; k < 3; ++k) {
        Coordinate const v = static_cast<Coordinate>(x(i, k));
        bounds[k] = std::min(bounds[k], v);
        bounds[3 + k] = std::min(bounds[3 + k], -v);
      }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, bounds, 6, MPI_FLOAT, MPI_MIN, comm_.get()), "MPI_Allreduce");
    Coordinate lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
      lo[k] = bounds[k], hi[k] = -bounds[3 + k];
    treetrav::detail::RootCube const cube = treetrav::detail::cube_around(lo, hi);
    std::vector<CurveKey> keys(m);
    for (std::size_t i = 0; i < m; ++i)
      keys[i] = {treetrav::detail::morton_code(cube, Coordinate(x(i, 0)), Coordinate(x(i, 1)),
                                               Coordinate(x(i, 2))),
                 held.rows(i), std::max<std::int64_t>(1, held.costs(i)), std::int64_t(i), me};
    std::sort(keys.begin(), keys.end());

    std::vector<CurveKey> const splitters = detail::splitters_of(comm_, keys);
    std::vector<int> counts(p, 0), received;
    for (CurveKey const& key : keys) // sorted: the ranks come in order
      ++counts[std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin()];
    std::vector<CurveKey> sorted = distributed::all_to_all(comm_, keys, counts, received);
    std::sort(sorted.begin(), sorted.end());

    // Each key's position on the curve and the weight before it.
    std::int64_t mine[2] = {std::int64_t(sorted.size()), 0}, before[2] = {0, 0};
    for (CurveKey const& key : sorted)
      mine[1] += key.weight;
    check_mpi(MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, comm_.get()), "MPI_Exscan");
    if (me == 0)
      before[0] = before[1] = 0;
    std::int64_t const total = sum(mine[1]);
    // Piece r starts at the first body whose preceding weight W reaches r
    // W_total / P: the number of bodies with W P < r W_total (W grows along
    // the curve), counted by every rank over its keys and summed.
    std::vector<std::int64_t> starts(p + 1, 0);
    {
      // first[r]: the keys for which r is the least piece with W P < r W_total.
      std::vector<std::int64_t> first(p + 1, 0);
      std::int64_t weight = before[1];
      int r = 1;
      for (CurveKey const& key : sorted) {
        while (r < p && weight * p >= std::int64_t(r) * total)
          ++r;
        ++first[r];
        weight += key.weight;
      }
      for (int q = 1; q < p; ++q)
        starts[q] = starts[q - 1] + first[q];
      starts[0] = 0;
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, starts.data() + 1, p - 1, MPI_INT64_T, MPI_SUM, comm_.get()),
              "MPI_Allreduce");
    starts[p] = n;
    for (int r = 1; r < p; ++r) // at least one body each
      starts[r] = std::clamp(starts[r], starts[r - 1] + 1, n - std::int64_t(p - r));

    // Each key's rank, back to the holder of its body.
    std::vector<int> answer_counts;
    std::vector<std::size_t> const to_holders =
        grouped_by_rank(sorted.size(), p, [&](std::size_t i) { return sorted[i].holder; }, answer_counts);
    std::vector<Assignment> answers(sorted.size());
    for (std::size_t j = 0; j < to_holders.size(); ++j) {
      std::size_t const i = to_holders[j];
      std::int64_t const position = before[0] + std::int64_t(i);
      int const rank = int(std::upper_bound(starts.begin() + 1, starts.end(), position) - starts.begin()) - 1;
      answers[j] = {sorted[i].index, rank};
    }
    for (Assignment const& answer : distributed::all_to_all(comm_, answers, answer_counts, received))
      destination[std::size_t(answer.index)] = answer.rank;
  }

  // The bodies to their ranks.
  std::vector<int> send_counts;
  std::vector<std::size_t> const order =
      grouped_by_rank(m, p, [&](std::size_t i) { return destination[i]; }, send_counts);
  nbody::BodyStates result = exchanged(comm_, treetrav::detail::take(held), order, send_counts);
  // As domain_of gives them: no recorded decomposition.
  result.domains = {};
  result.domain_ranks = 1;
  return result;
}

void require_unique_ids(Communicator const& comm, Kokkos::View<ParticleId*, Kokkos::HostSpace> ids,
                        std::string const& what) {
  int const p = comm.size();
  auto const owner = [p](ParticleId id) {
    return int(static_cast<std::uint64_t>(id) % static_cast<std::uint64_t>(p));
  };
  std::vector<int> counts, received;
  std::vector<ParticleId> outgoing;
  for (std::size_t i : grouped_by_rank(ids.extent(0), p, [&](std::size_t i) { return owner(ids(i)); }, counts))
    outgoing.push_back(ids(i));
  std::vector<ParticleId> mine = all_to_all(comm, outgoing, counts, received);
  std::sort(mine.begin(), mine.end());
  // The least repeated id of all ranks (none: the largest value).
  ParticleId repeated = std::numeric_limits<ParticleId>::max();
  bool found = false;
  for (std::size_t i = 1; i < mine.size(); ++i)
    if (mine[i] == mine[i - 1]) {
      repeated = mine[i];
      found = true;
      break;
    }
  int any = found ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  if (any == 0)
    return;
  static_assert(sizeof(ParticleId) == sizeof(std::int64_t), "sent as MPI_INT64_T");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT64_T, MPI_MIN, comm.get()), "MPI_Allreduce");
  throw InputError(fmt::format("{}: particle id {} appears more than once: particle ids must differ", what,
                               repeated));
}

// The bodies go to the ranks of their rows' blocks (MPI_Alltoallv) rather than
// being written where they are through point or hyperslab-union selections: a
// rank's Morton domain is scattered over the rows, a selection of thousands of
// runs; moved once, every rank writes one contiguous run per dataset, which
// collective MPI-IO does best, and the rows come in order for the diagnostics.
nbody::BodyStates NbodyDomain::by_rows(nbody::BodyStates local) const {
  int const p = comm_.size();
  auto const total = static_cast<std::size_t>(sum(static_cast<std::int64_t>(local.size())));
  std::vector<std::int64_t> ends(p);
  for (int r = 0; r < p; ++r)
    ends[r] = static_cast<std::int64_t>(block_of(total, r, p).end);
  std::vector<int> send_counts;
  std::vector<std::size_t> const order = grouped_by_rank(local.size(), p, [&](std::size_t i) {
    return int(std::upper_bound(ends.begin(), ends.end(), local.rows(i)) - ends.begin());
  }, send_counts);
  return exchanged(comm_, treetrav::detail::take(local), order, send_counts);
}

// Floating-point sums depend on their order: each rank goes on from the sums
// of the ranks before it (a chain of messages of a few doubles), so every rank
// gets one process's bits without the bodies of the others.
nbody::Diagnostics NbodyDomain::measure(io::Snapshot const& rows) const {
  static_assert(std::is_trivially_copyable_v<nbody::Diagnostics>, "sent as bytes");
  int const me = comm_.rank(), p = comm_.size();
  nbody::Diagnostics sums;
  if (me > 0)
    check_mpi(MPI_Recv(&sums, sizeof(sums), MPI_BYTE, me - 1, 0, comm_.get(), MPI_STATUS_IGNORE),
              "MPI_Recv");
  sums = nbody::measure(rows, sums);
  if (me + 1 < p)
    check_mpi(MPI_Send(&sums, sizeof(sums), MPI_BYTE, me + 1, 0, comm_.get()), "MPI_Send");
  check_mpi(MPI_Bcast(&sums, sizeof(sums), MPI_BYTE, p - 1, comm_.get()), "MPI_Bcast");
  return sums;
}

} // namespace treetrav::distributed
