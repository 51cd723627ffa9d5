#pragma once

// Exact references: brute force for searches, direct summation for gravity.
#include <treetrav/core/distance.hpp>
#include <treetrav/core/point_set.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace treetrav::test {

using HostPoints = PointSet<Kokkos::HostSpace>;

struct BruteNeighbors {
  int k;
  std::vector<Index> indices;       // row-major (queries, k)
  std::vector<Coordinate> distances;
};

// The k nearest by (distance2, index), with the engine's own distance2.
inline BruteNeighbors brute_force_neighbors(HostPoints const& reference, HostPoints const& queries, int k,
                                            bool exclude_self) {
  BruteNeighbors out{k, std::vector<Index>(std::size_t(queries.size()) * k),
                     std::vector<Coordinate>(std::size_t(queries.size()) * k)};
  std::vector<std::pair<Coordinate, Index>> all;
  for (Index q = 0; q < queries.size(); ++q) {
    all.clear();
    for (Index i = 0; i < reference.size(); ++i)
      if (!(exclude_self && i == q)) all.emplace_back(distance2(reference.coordinates, i, queries.coordinates, q), i);
    std::partial_sort(all.begin(), all.begin() + k, all.end());
    for (int j = 0; j < k; ++j) {
      out.indices[std::size_t(q) * k + j] = all[j].second;
      out.distances[std::size_t(q) * k + j] = std::sqrt(all[j].first);
    }
  }
  return out;
}

inline std::vector<std::int64_t> brute_force_counts(HostPoints const& reference, HostPoints const& queries,
                                                    Coordinate radius, bool exclude_self) {
  Coordinate const radius2 = radius * radius;
  std::vector<std::int64_t> counts(queries.size(), 0);
  for (Index q = 0; q < queries.size(); ++q)
    for (Index i = 0; i < reference.size(); ++i)
      if (!(exclude_self && i == q) && distance2(reference.coordinates, i, queries.coordinates, q) <= radius2)
        ++counts[q];
  return counts;
}

struct BruteLists {
  std::vector<std::int64_t> offsets;  // (queries + 1)
  std::vector<Index> indices;         // nearest first, ties by index
  std::vector<Coordinate> distances;
};

// Every reference point within r of each query, sorted by (distance2, index).
inline BruteLists brute_force_lists(HostPoints const& reference, HostPoints const& queries, Coordinate radius,
                                    bool exclude_self) {
  Coordinate const radius2 = radius * radius;
  BruteLists out{{0}, {}, {}};
  std::vector<std::pair<Coordinate, Index>> found;
  for (Index q = 0; q < queries.size(); ++q) {
    found.clear();
    for (Index i = 0; i < reference.size(); ++i) {
      Coordinate const d2 = distance2(reference.coordinates, i, queries.coordinates, q);
      if (!(exclude_self && i == q) && d2 <= radius2) found.emplace_back(d2, i);
    }
    std::sort(found.begin(), found.end());
    for (auto const& [d2, i] : found) {
      out.indices.push_back(i);
      out.distances.push_back(std::sqrt(d2));
    }
    out.offsets.push_back(static_cast<std::int64_t>(out.indices.size()));
  }
  return out;
}

// Direct O(N^2) summation in double: (bodies, 3) row-major.
inline std::vector<double> direct_accelerations(HostPoints const& bodies, std::vector<double> const& masses,
                                                double softening, double gravity) {
  Index const n = bodies.size();
  std::vector<double> acc(std::size_t(n) * 3, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      if (i == j) continue;
      double dx[3], r2 = softening * softening;
      for (int k = 0; k < 3; ++k) {
        dx[k] = double(bodies.coordinates(j, k)) - bodies.coordinates(i, k);
        r2 += dx[k] * dx[k];
      }
      double const factor = gravity * masses[j] / (r2 * std::sqrt(r2));
      for (int k = 0; k < 3; ++k) acc[std::size_t(i) * 3 + k] += factor * dx[k];
    }
  return acc;
}

}  // namespace treetrav::test
