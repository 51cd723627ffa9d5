#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/detail/splitters.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/schedule/sfc_order.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace treetrav::distributed {

namespace {

// Sorted runs [bounds[i], bounds[i + 1]) of `values` merged into one, pairs
// of neighbouring runs at a time on the host's threads (log2(runs) rounds).
template <class T, class Less = std::less<>>
void merge_runs(std::vector<T>& values, std::vector<std::size_t> const& bounds, Less const& less = {}) {
  int const runs = int(bounds.size()) - 1;
  using Policy = Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>;
  for (int width = 1; width < runs; width *= 2) {
    Kokkos::parallel_for(
        "treetrav::distributed::merge_runs", Policy(0, (runs + 2 * width - 1) / (2 * width)),
        [&](int pair) {
          int const first = 2 * pair * width;
          auto const at = [&](int run) { return values.begin() + bounds[std::min(run, runs)]; };
          std::inplace_merge(at(first), at(first + width), at(first + 2 * width), less);
        });
    Kokkos::DefaultHostExecutionSpace().fence();
  }
}

// std::sort on the host's threads: pieces sorted side by side, then merged.
template <class T>
void host_sort(std::vector<T>& values) {
  int const pieces = std::max(1, Kokkos::DefaultHostExecutionSpace().concurrency());
  if (pieces == 1 || values.size() < (std::size_t(1) << 15))
    return std::sort(values.begin(), values.end());
  std::vector<std::size_t> bounds(pieces + 1);
  for (int i = 0; i <= pieces; ++i)
    bounds[i] = values.size() * i / pieces;
  Kokkos::parallel_for("treetrav::distributed::sort_pieces",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, pieces),
                       [&](int i) { std::sort(values.begin() + bounds[i], values.begin() + bounds[i + 1]); });
  Kokkos::DefaultHostExecutionSpace().fence();
  merge_runs(values, bounds);
}

} // namespace

LocalPoints morton_partition(PointSet<Kokkos::HostSpace> const& all, int rank, int size) {
  Kokkos::Profiling::pushRegion("treetrav::distributed::morton_partition");
  auto const order = morton_order(Kokkos::DefaultHostExecutionSpace{}, all);
  auto const block = block_of(static_cast<std::size_t>(all.size()), rank, size);
  LocalPoints local;
  local.global_index.assign(order.data() + block.begin, order.data() + block.end);
  std::sort(local.global_index.begin(), local.global_index.end());
  Index const n = static_cast<Index>(local.global_index.size());
  int const d = all.dimension();
  local.points = allocate_points<Kokkos::HostSpace>("treetrav::distributed::LocalPoints::points", n,
                                                    d, all.has_ids());
  for (Index i = 0; i < n; ++i) {
    Index const g = local.global_index[i];
    for (int k = 0; k < d; ++k)
      local.points.coordinates(i, k) = all.coordinates(g, k);
    if (all.has_ids())
      local.points.ids(i) = all.ids(g);
  }
  Kokkos::Profiling::popRegion();
  return local;
}

namespace {

// A point's place in the global order: its Morton code, then its row.
struct Key {
  std::uint64_t code;
  std::int64_t row;
  friend bool operator<(Key const& a, Key const& b) {
    return a.code != b.code ? a.code < b.code : a.row < b.row;
  }
};

// The owner of each of `received` (in the order received: each sender's
// run in key order, `runs` of them): the rank whose block of positions in
// the global order holds it. This rank's keys are the global order's
// positions `before` on (the ranks' ranges of keys lie in rank order).
std::vector<std::int32_t> owners_of(Communicator const& comm, std::vector<Key> const& received,
                                    std::vector<int> const& runs, std::int64_t total) {
  std::vector<Index> order(received.size());
  for (std::size_t j = 0; j < order.size(); ++j)
    order[j] = Index(j);
  auto const offsets = detail::displacements(runs);
  merge_runs(order, std::vector<std::size_t>(offsets.begin(), offsets.end()),
             [&](Index a, Index b) { return received[a] < received[b]; });
  std::int64_t held = std::int64_t(received.size()), before = 0;
  check_mpi(MPI_Exscan(&held, &before, 1, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Exscan");
  if (comm.rank() == 0)
    before = 0;
  std::vector<std::int32_t> owner(received.size());
  int r = 0;
  for (std::size_t t = 0; t < order.size(); ++t) {
    std::size_t const position = std::size_t(before) + t;
    while (block_of(std::size_t(total), r, comm.size()).end <= position)
      ++r;
    owner[order[t]] = r;
  }
  return owner;
}

} // namespace

LocalPoints morton_partition(Communicator const& comm, PointSet<Kokkos::HostSpace> const& rows,
                             Index first_row) {
  Kokkos::Profiling::pushRegion("treetrav::distributed::morton_partition");
  int const p = comm.size();
  int const d = rows.dimension();
  Index const m = rows.size();
  std::int64_t total = m;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm.get()),
            "MPI_Allreduce");
  int has_ids = rows.has_ids() ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &has_ids, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");

  // The whole set's box (min and max are exact in any order) and the cells
  // of morton_order over it: the codes morton_partition(all) sorts by.
  RankBox const mine_box = bounding_box_of(rows);
  ::treetrav::detail::BoundingBox<Kokkos::HostSpace> box("treetrav::distributed::box", 2 * d);
  std::copy(mine_box.lower, mine_box.lower + d, box.data());
  std::copy(mine_box.upper, mine_box.upper + d, box.data() + d);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, box.data(), d, MPI_FLOAT, MPI_MIN, comm.get()),
            "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, box.data() + d, d, MPI_FLOAT, MPI_MAX, comm.get()),
            "MPI_Allreduce");
  ::treetrav::detail::MortonEncoder<Kokkos::HostSpace> const encode{
      box, d, ::treetrav::detail::morton_order_bits(Index(total), d)};

  // This rank's keys in key order (a key's row says which of its points it is).
  std::vector<Key> keys(m);
  for (Index i = 0; i < m; ++i)
    keys[i] = {encode(rows.coordinates, i), std::int64_t(first_row) + i};
  host_sort(keys);
  // A sample sort of the keys alone: each goes to the rank of its splitters'
  // range, which merges them into the global order and names each key's
  // owner, sent back in the order the keys came. Then each point moves once,
  // from the rank that read it to its owner: a rank holds its points' keys
  // and a few words each beside them, never its points several times over.
  std::vector<int> counts(p, 0), runs, back;
  {
    std::vector<Key> const splitters = detail::splitters_of(comm, keys);
    for (Key const& key : keys)
      ++counts[std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin()];
  }
  std::vector<std::int32_t> const owner = [&] {
    std::vector<Key> const received = all_to_all(comm, keys, counts, runs);
    return all_to_all(comm, owners_of(comm, received, runs, total), runs, back);
  }(); // owner[j]: keys[j]'s
  std::vector<int> send_counts(p, 0);
  for (std::int32_t r : owner)
    ++send_counts[r];
  std::vector<std::int64_t> send_rows(m), send_ids(has_ids ? m : 0);
  std::vector<Coordinate> send_coordinates(std::size_t(m) * d);
  {
    auto next = detail::displacements(send_counts);
    for (std::size_t j = 0; j < keys.size(); ++j) {
      std::size_t const at = std::size_t(next[owner[j]]++);
      Index const i = Index(keys[j].row - first_row);
      send_rows[at] = keys[j].row;
      for (int k = 0; k < d; ++k)
        send_coordinates[at * d + k] = rows.coordinates(i, k);
      if (has_ids)
        send_ids[at] = rows.ids(i);
    }
  }
  std::vector<Key>().swap(keys);
  std::vector<int> received_counts, coordinate_counts(p), id_counts(p), ignored;
  for (int r = 0; r < p; ++r) {
    coordinate_counts[r] = send_counts[r] * d;
    id_counts[r] = has_ids ? send_counts[r] : 0;
  }
  // (Each sent array freed once its exchange is done.)
  auto const exchanged = [&](auto& sent, std::vector<int> const& sent_counts, std::vector<int>& got) {
    auto received = all_to_all(comm, sent, sent_counts, got);
    std::decay_t<decltype(sent)>().swap(sent);
    return received;
  };
  std::vector<std::int64_t> const piece_rows = exchanged(send_rows, send_counts, received_counts);
  std::vector<Coordinate> const piece_coordinates = exchanged(send_coordinates, coordinate_counts, ignored);
  std::vector<std::int64_t> const piece_ids = exchanged(send_ids, id_counts, ignored);
  // The piece in increasing row, as morton_partition(all) gives it.
  std::size_t const n = piece_rows.size();
  std::vector<std::pair<std::int64_t, std::size_t>> by_row(n); // (row, position in the piece)
  for (std::size_t j = 0; j < n; ++j)
    by_row[j] = {piece_rows[j], j};
  host_sort(by_row);
  LocalPoints local;
  local.points = allocate_points<Kokkos::HostSpace>("treetrav::distributed::LocalPoints::points",
                                                    Index(n), d, has_ids != 0);
  local.global_index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const j = by_row[i].second;
    local.global_index.push_back(Index(by_row[i].first));
    for (int k = 0; k < d; ++k)
      local.points.coordinates(i, k) = piece_coordinates[j * d + k];
    if (has_ids)
      local.points.ids(i) = piece_ids[j];
  }
  Kokkos::Profiling::popRegion();
  return local;
}

RankBox bounding_box_of(PointSet<Kokkos::HostSpace> const& points) {
  RankBox box{};
  box.count = points.size();
  for (int k = 0; k < points.dimension(); ++k) {
    box.lower[k] = infinity;
    box.upper[k] = -infinity;
    for (Index i = 0; i < points.size(); ++i) {
      box.lower[k] = std::min(box.lower[k], points.coordinates(i, k));
      box.upper[k] = std::max(box.upper[k], points.coordinates(i, k));
    }
  }
  return box;
}

double min_distance2(RankBox const& box, Coordinate const* query, int dimension) {
  double sum = 0;
  for (int k = 0; k < dimension; ++k)
    sum += box_gap2(box.lower[k], box.upper[k], query[k]);
  return sum;
}

bool may_reach(RankBox const& box, Coordinate const* query, int dimension, Coordinate bound2) {
  return box.count > 0 && min_distance2(box, query, dimension) <= reach_bound2(bound2);
}

} // namespace treetrav::distributed
