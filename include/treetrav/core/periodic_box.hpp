#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace treetrav {

// A periodic box (a simulation's): the points live in [0, L_k) in each of
// their 1 to 3 dimensions, and the distance between two points is to the
// nearest periodic image of one of them. Default: no box (open space).
struct PeriodicBox {
  static constexpr int max_dimension = 3;
  int dimension = 0;
  Coordinate length[max_dimension] = {0, 0, 0};

  PeriodicBox() = default;
  explicit PeriodicBox(std::vector<double> const& lengths) {
    if (lengths.empty() || lengths.size() > std::size_t(max_dimension))
      throw InputError("box", ": 1 to 3 side lengths, one per dimension (got " +
                                  std::to_string(lengths.size()) + ")");
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      if (!(lengths[k] > 0) || !std::isfinite(lengths[k]))
        throw InputError("box", ": side " + std::to_string(k) + " is " + std::to_string(lengths[k]) +
                                    ", not a positive finite length");
      length[k] = static_cast<Coordinate>(lengths[k]);
    }
    dimension = static_cast<int>(lengths.size());
  }

  bool periodic() const { return dimension > 0; }
  double shortest() const {
    double s = length[0];
    for (int k = 1; k < dimension; ++k)
      s = std::min<double>(s, length[k]);
    return s;
  }
  double volume() const {
    double v = 1;
    for (int k = 0; k < dimension; ++k)
      v *= length[k];
    return v;
  }
};

namespace detail {

// The caller's row of row i of a point set: itself, or a tree's
// original_index of its i-th point.
struct SameRow {
  KOKKOS_FUNCTION Index operator()(Index i) const { return i; }
};
template <class Rows>
struct CallerRow {
  Rows original;
  KOKKOS_FUNCTION Index operator()(Index i) const { return original(i); }
};

// Throws, naming `parameter`, unless the rows of `coordinates` (their
// first box.dimension columns) all lie in [0, L): the first of the caller's
// rows outside (row_of(i): the caller's row of row i), with its coordinates.
template <class ExecutionSpace, class Coordinates, class RowOf = SameRow>
void check_in_box(ExecutionSpace const& space, Coordinates const& x, PeriodicBox const& box,
                  std::string const& parameter, RowOf const& row_of = {}) {
  PeriodicBox const b = box;
  Index const n = static_cast<Index>(x.extent(0));
  Index first = n;
  Kokkos::parallel_reduce(
      "treetrav::check_in_box", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index i, Index & least) {
        bool outside = false;
        for (int k = 0; k < b.dimension; ++k)
          outside = outside || !(x(i, k) >= 0 && x(i, k) < b.length[k]);
        if (outside && row_of(i) < least)
          least = row_of(i);
      },
      Kokkos::Min<Index>(first));
  if (first >= n) // the reduction's identity: no row outside
    return;
  Index at = n; // where that row is
  Kokkos::parallel_reduce(
      "treetrav::check_in_box::where", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index i, Index & where) {
        if (row_of(i) == first && i < where)
          where = i;
      },
      Kokkos::Min<Index>(at));
  std::string where, sides;
  for (int k = 0; k < box.dimension; ++k) {
    typename Coordinates::non_const_value_type value{};
    Kokkos::deep_copy(value, Kokkos::subview(x, at, k)); // one value: any layout, any space
    where += (k ? ", " : "") + std::to_string(value);
    sides += (k ? ", " : "") + std::to_string(box.length[k]);
  }
  throw InputError(parameter, ": row " + std::to_string(first) + " (" + where +
                                  ") lies outside the periodic box [0, L) of sides (" + sides +
                                  ")");
}

// The same for a search of a tree's points (`reference`, in the tree's
// order; rows: the caller's row of each) and queries: both of the box's
// dimension, in it.
template <class ExecutionSpace, class Reference, class Rows, class MemorySpace>
void check_periodic_search(ExecutionSpace const& space, Reference const& reference, Rows const& rows,
                           int reference_dimension, PointSet<MemorySpace> const& queries,
                           PeriodicBox const& box) {
  if (reference_dimension != box.dimension)
    throw InputError("box", ": " + std::to_string(box.dimension) + " sides for " +
                                std::to_string(reference_dimension) + "-dimensional points");
  check_in_box(space, reference, box, "reference", CallerRow<Rows>{rows});
  check_in_box(space, queries.coordinates, box, "queries");
}

} // namespace detail
} // namespace treetrav
