#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/detail/splitters.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/schedule/sfc_order.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace treetrav::distributed {

namespace {

// Sorted runs [bounds[i], bounds[i + 1]) of `values` merged into one, pairs
// of neighbouring runs at a time on the host's threads (log2(runs) rounds).
template <class T>
void merge_runs(std::vector<T>& values, std::vector<std::size_t> const& bounds) {
  int const runs = int(bounds.size()) - 1;
  using Policy = Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>;
  for (int width = 1; width < runs; width *= 2) {
    Kokkos::parallel_for(
        "treetrav::distributed::merge_runs", Policy(0, (runs + 2 * width - 1) / (2 * width)),
        [&](int pair) {
          int const first = 2 * pair * width;
          auto const at = [&](int run) { return values.begin() + bounds[std::min(run, runs)]; };
          std::inplace_merge(at(first), at(first + width), at(first + 2 * width));
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

// Points in transit: keys, coordinates (dimension per point), ids (or none).
struct Parcel {
  std::vector<Key> keys;
  std::vector<Coordinate> coordinates;
  std::vector<std::int64_t> ids;
};

// Sends point i of `from` (held in key order) to rank destination[i], which
// is non-decreasing; returns what this rank receives, in key order.
Parcel exchange(Communicator const& comm, Parcel const& from, std::vector<int> const& destination,
                int dimension) {
  int const p = comm.size();
  std::vector<int> counts(p, 0), coordinate_counts(p), id_counts(p);
  for (int r : destination)
    ++counts[r];
  for (int r = 0; r < p; ++r) {
    coordinate_counts[r] = counts[r] * dimension;
    id_counts[r] = from.ids.empty() ? 0 : counts[r];
  }
  std::vector<int> runs, received;
  Parcel to;
  to.keys = all_to_all(comm, from.keys, counts, runs);
  to.coordinates = all_to_all(comm, from.coordinates, coordinate_counts, received);
  to.ids = all_to_all(comm, from.ids, id_counts, received);
  // Each rank's run arrives in key order: merge the runs (the keys are
  // distinct, so this is the order a sort gives), carrying each key's place.
  std::vector<std::pair<Key, std::size_t>> merged(to.keys.size());
  for (std::size_t i = 0; i < merged.size(); ++i)
    merged[i] = {to.keys[i], i};
  auto const offsets = detail::displacements(runs);
  merge_runs(merged, std::vector<std::size_t>(offsets.begin(), offsets.end()));
  std::vector<std::size_t> order(merged.size());
  for (std::size_t i = 0; i < merged.size(); ++i)
    order[i] = merged[i].second;
  // (Each array freed when done with: the partition's peak is a rank's
  // points held several times over.)
  std::vector<std::pair<Key, std::size_t>>().swap(merged);
  Parcel sorted;
  sorted.keys.reserve(order.size());
  sorted.coordinates.reserve(to.coordinates.size());
  for (std::size_t i : order) {
    sorted.keys.push_back(to.keys[i]);
    sorted.coordinates.insert(sorted.coordinates.end(), to.coordinates.begin() + i * dimension,
                              to.coordinates.begin() + (i + 1) * dimension);
    if (!to.ids.empty())
      sorted.ids.push_back(to.ids[i]);
  }
  return sorted;
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

  // This rank's points in key order.
  std::vector<Key> keys(m);
  for (Index i = 0; i < m; ++i)
    keys[i] = {encode(rows.coordinates, i), std::int64_t(first_row) + i};
  // (The keys themselves: a key's row says which of this rank's points it is.)
  host_sort(keys);
  Parcel mine;
  mine.keys = std::move(keys);
  mine.coordinates.reserve(std::size_t(m) * d);
  for (Key const& key : mine.keys) {
    Index const i = Index(key.row - first_row);
    for (int k = 0; k < d; ++k)
      mine.coordinates.push_back(rows.coordinates(i, k));
    if (has_ids)
      mine.ids.push_back(rows.ids(i));
  }

  std::vector<Key> const splitters = detail::splitters_of(comm, mine.keys);
  std::vector<int> destination(m);
  for (Index i = 0; i < m; ++i)
    destination[i] = int(std::upper_bound(splitters.begin(), splitters.end(), mine.keys[i]) -
                         splitters.begin());
  Parcel sorted = exchange(comm, mine, destination, d);
  mine = Parcel{};

  // The sorted runs lie in rank order: each point's position in the whole
  // order, and the rank whose piece holds it.
  std::int64_t held = std::int64_t(sorted.keys.size()), before = 0;
  check_mpi(MPI_Exscan(&held, &before, 1, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Exscan");
  if (comm.rank() == 0)
    before = 0;
  destination.assign(sorted.keys.size(), 0);
  int owner = 0;
  for (std::size_t i = 0; i < sorted.keys.size(); ++i) {
    std::size_t const position = std::size_t(before) + i;
    while (block_of(std::size_t(total), owner, p).end <= position)
      ++owner;
    destination[i] = owner;
  }
  Parcel const piece = exchange(comm, sorted, destination, d);
  sorted = Parcel{};
  std::vector<int>().swap(destination);

  // The piece in increasing row, as morton_partition(all) gives it.
  std::size_t const n = piece.keys.size();
  std::vector<std::pair<std::int64_t, std::size_t>> by_row(n); // (row, position in the piece)
  for (std::size_t j = 0; j < n; ++j)
    by_row[j] = {piece.keys[j].row, j};
  host_sort(by_row);
  LocalPoints local;
  local.points = allocate_points<Kokkos::HostSpace>("treetrav::distributed::LocalPoints::points",
                                                    Index(n), d, has_ids != 0);
  local.global_index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const j = by_row[i].second;
    local.global_index.push_back(Index(piece.keys[j].row));
    for (int k = 0; k < d; ++k)
      local.points.coordinates(i, k) = piece.coordinates[j * d + k];
    if (has_ids)
      local.points.ids(i) = piece.ids[j];
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
