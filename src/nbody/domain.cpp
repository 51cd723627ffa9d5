#include <treetrav/core/error.hpp>
#include <treetrav/nbody/domain.hpp>
#include <treetrav/trees/octree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

namespace treetrav::nbody {

namespace {

template <class View>
View rows_of(View const& from, std::vector<std::size_t> const& which) {
  if (from.extent(0) == 0)
    return from;
  if constexpr (View::rank == 1) {
    View to(Kokkos::view_alloc(Kokkos::WithoutInitializing, from.label()), which.size());
    for (std::size_t i = 0; i < which.size(); ++i)
      to(i) = from(which[i]);
    return to;
  } else {
    View to(Kokkos::view_alloc(Kokkos::WithoutInitializing, from.label()), which.size(),
            from.extent(1));
    for (std::size_t i = 0; i < which.size(); ++i)
      for (std::size_t k = 0; k < from.extent(1); ++k)
        to(i, k) = from(which[i], k);
    return to;
  }
}

} // namespace

BodyStates subset(BodyStates const& all, std::vector<std::size_t> const& which);

BodyStates bodies_of(io::Snapshot const& state, std::int64_t first_row) {
  std::size_t const n = state.size();
  BodyStates all;
  all.state = state;
  all.accelerations =
      decltype(all.accelerations)("treetrav::nbody::BodyStates::accelerations", n, 3);
  all.bins = decltype(all.bins)("treetrav::nbody::BodyStates::bins", n);
  all.costs = decltype(all.costs)("treetrav::nbody::BodyStates::costs", n);
  all.rows = decltype(all.rows)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::nbody::BodyStates::rows"), n);
  for (std::size_t i = 0; i < n; ++i)
    all.rows(i) = first_row + static_cast<std::int64_t>(i);
  return all;
}

BodyStates domain_of(BodyStates const& all, int rank, int ranks) {
  std::size_t const n = all.size();
  if (n < static_cast<std::size_t>(ranks))
    throw InputError(fmt::format(
        "nbody: {} bodies cannot be shared by {} MPI ranks (at least one each)", n, ranks));
  // The Morton curve of the bodies' float positions, as the octree sees them.
  auto const& x = all.state.coordinates;
  Coordinate lo[3], hi[3];
  for (int k = 0; k < 3; ++k)
    lo[k] = infinity, hi[k] = -infinity;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      Coordinate const v = static_cast<Coordinate>(x(i, k));
      lo[k] = std::min(lo[k], v);
      hi[k] = std::max(hi[k], v);
    }
  detail::RootCube const cube = detail::cube_around(lo, hi);
  std::vector<std::size_t> which;
  if (all.domains.extent(0) == n && all.domain_ranks == ranks) {
    for (std::size_t i = 0; i < n; ++i)
      if (all.domains(i) == rank)
        which.push_back(i);
    return subset(all, which);
  }
  std::vector<std::tuple<std::uint64_t, std::int64_t, std::size_t>> keyed(n);
  for (std::size_t i = 0; i < n; ++i)
    keyed[i] = {
        detail::morton_code(cube, Coordinate(x(i, 0)), Coordinate(x(i, 1)), Coordinate(x(i, 2))),
        all.rows(i), i};
  std::sort(keyed.begin(), keyed.end());
  // Piece r starts at the first body whose preceding weight reaches r W / P.
  std::int64_t total = 0;
  for (std::size_t i = 0; i < n; ++i)
    total += std::max<std::int64_t>(1, all.costs(std::get<2>(keyed[i])));
  std::vector<std::size_t> starts(ranks + 1, n);
  starts[0] = 0;
  std::int64_t before = 0;
  std::size_t i = 0;
  for (int r = 1; r < ranks; ++r) {
    while (i < n && before * ranks < std::int64_t(r) * total)
      before += std::max<std::int64_t>(1, all.costs(std::get<2>(keyed[i++])));
    // At least one body each.
    starts[r] = std::clamp(i, starts[r - 1] + 1, n - std::size_t(ranks - r));
  }
  std::size_t const first = starts[rank], end = starts[rank + 1];
  for (std::size_t i = first; i < end; ++i)
    which.push_back(std::get<2>(keyed[i]));
  std::sort(which.begin(), which.end()); // by row, as the files hold them
  return subset(all, which);
}

BodyStates subset(BodyStates const& all, std::vector<std::size_t> const& which) {
  BodyStates mine;
  mine.state = all.state;
  mine.state.coordinates = rows_of(all.state.coordinates, which);
  mine.state.velocities = rows_of(all.state.velocities, which);
  mine.state.masses = rows_of(all.state.masses, which);
  mine.state.ids = rows_of(all.state.ids, which);
  mine.state.potentials = rows_of(all.state.potentials, which);
  mine.state.types = rows_of(all.state.types, which);
  mine.accelerations = rows_of(all.accelerations, which);
  mine.bins = rows_of(all.bins, which);
  mine.costs = rows_of(all.costs, which);
  mine.rows = rows_of(all.rows, which);
  return mine;
}

} // namespace treetrav::nbody
