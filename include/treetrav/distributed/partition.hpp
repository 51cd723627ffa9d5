#pragma once

#include <treetrav/core/point_set.hpp>

#include <vector>

namespace treetrav::distributed {

// The reference points one rank holds, and where they came from.
struct LocalPoints {
  PointSet<Kokkos::HostSpace> points; // in increasing global row
  std::vector<Index> global_index;    // points' row i is row global_index[i] of the whole set
};

// Spatial partition of `all` over `size` ranks: the points in Morton order
// over their bounding box (ties by row, the same on every backend), cut into
// contiguous pieces of n / size points (the first n % size ranks one more);
// rank `rank` gets its piece in increasing global row, so that a local search
// breaks distance ties as the global one would.
LocalPoints morton_partition(PointSet<Kokkos::HostSpace> const& all, int rank, int size);

class Communicator;

// morton_partition without any rank holding all points: each rank of `comm`
// passes its own rows of the whole set (`rows`, its first being row
// `first_row` of the set; any split, each row on one rank) and receives the
// piece morton_partition(all, rank, size) would give it, exactly. The ranks
// agree on the bounding box and the curve's cells, sort the points' (Morton
// code, row) keys among themselves (a sample sort of the keys alone:
// splitters from a regular sample, one MPI_Alltoallv, each key's owner sent
// back by a second) and then move each point once, from the rank that read
// it to the rank whose piece holds its position in that order. Collective.
LocalPoints morton_partition(Communicator const& comm, PointSet<Kokkos::HostSpace> const& rows,
                             Index first_row);

// A rank's reference points as seen by the others: their bounding box and
// how many there are (a rank without points has count 0 and is never asked).
struct RankBox {
  Coordinate lower[max_dimension];
  Coordinate upper[max_dimension];
  Index count;
};

RankBox bounding_box_of(PointSet<Kokkos::HostSpace> const& points);

// The square of the gap between x and [lower, upper] along one axis, in
// double: the term min_distance2 sums.
KOKKOS_INLINE_FUNCTION double box_gap2(Coordinate lower, Coordinate upper, Coordinate x) {
  double const below = double(lower) - double(x), above = double(x) - double(upper);
  double const gap = below > above ? below : above;
  return gap > 0 ? gap * gap : 0.0;
}

// What a box's min_distance2 is compared with for a squared distance bound
// `bound2` as the searches compute it in float: the searches' float sum of d
// squares is within d ulps-ish of the exact one (relative 2^-20 covers
// d <= 16), and an underflowed square adds at most 2^-126 each.
KOKKOS_INLINE_FUNCTION double reach_bound2(Coordinate bound2) {
  return double(bound2) * (1 + 1.0 / (1 << 20)) + 1e-36;
}

// A lower bound of the squared distance from `query` (d coordinates) to any
// point in `box`, in double: routing compares it, with a margin for the
// float rounding of the searches' own distances, to a squared distance bound.
double min_distance2(RankBox const& box, Coordinate const* query, int dimension);

// Whether a point of `box` may lie within squared distance `bound2` (as the
// searches compute it in float) of `query`: never false when one does.
bool may_reach(RankBox const& box, Coordinate const* query, int dimension, Coordinate bound2);

} // namespace treetrav::distributed
