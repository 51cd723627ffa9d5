#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/io/metadata.hpp>

#include <string>

namespace treetrav::io {

// Per-query results of one application run, in the caller's query order.
// Only the members the application fills are non-empty (extent 0 otherwise).
struct QueryResults {
  template <class T>
  using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  template <class T>
  using HostVector = Kokkos::View<T*, Kokkos::HostSpace>;

  std::string application;                  // "pc", "nn", "knn", "vp", "bt", "bh"
  HostMatrix<Index> neighbor_indices;       // (n_queries, k): row of the reference set
  HostMatrix<Coordinate> neighbor_distances;  // (n_queries, k): Euclidean distance
  HostVector<std::int64_t> counts;          // (n_queries): PC neighbour counts
  HostMatrix<double> accelerations;         // (n_bodies, 3): BH
  Metadata metadata;
};

// File layout: /Results/{NeighborIndices, NeighborDistances, Counts,
// Accelerations} (only those present, row i = query i), attribute
// /Results:Application, /RunMetadata attributes. Atomic like write_points.
void write_results(std::string const& path, QueryResults const& results);
QueryResults read_results(std::string const& path);

}  // namespace treetrav::io
