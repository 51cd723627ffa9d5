#include <treetrav/distributed/communicator.hpp>
#include <treetrav/distributed/partition.hpp>
#include <treetrav/schedule/sfc_order.hpp>

#include <algorithm>

namespace treetrav::distributed {

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
  for (int k = 0; k < dimension; ++k) {
    double const q = query[k];
    double const gap = std::max({double(box.lower[k]) - q, q - double(box.upper[k]), 0.0});
    sum += gap * gap;
  }
  return sum;
}

bool may_reach(RankBox const& box, Coordinate const* query, int dimension, Coordinate bound2) {
  if (box.count == 0)
    return false;
  // Exact per-coordinate gaps never exceed a box point's; the searches' float
  // sum of d squares is within d ulps-ish of the exact one (relative 2^-20
  // covers d <= 16), and an underflowed square adds at most 2^-126 each.
  return min_distance2(box, query, dimension) <= double(bound2) * (1 + 1.0 / (1 << 20)) + 1e-36;
}

} // namespace treetrav::distributed
