#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/io/collective.hpp>
#include <treetrav/io/metadata.hpp>

#include <memory>
#include <string>

namespace treetrav::io {

// Per-query results of one application run, in the caller's query order.
// Only the members the application fills are non-empty (extent 0 otherwise).
struct QueryResults {
  template <class T>
  using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  template <class T>
  using HostRows =
      Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace>; // row-major, as the file
  template <class T>
  using HostVector = Kokkos::View<T*, Kokkos::HostSpace>;

  std::string application;                 // "pc", "nn", "knn", "vp", "bt", "radius", "bh"
  HostRows<Index> neighbor_indices;        // (n_queries, k): row of the reference set
  HostRows<Coordinate> neighbor_distances; // (n_queries, k): Euclidean distance
  HostVector<std::int64_t> counts;         // (n_queries): PC neighbour counts
  // Radius search lists (CSR): query q's neighbours are entries
  // [list_offsets(q), list_offsets(q + 1)) of list_indices / list_distances.
  HostVector<std::int64_t> list_offsets; // (n_queries + 1)
  HostVector<Index> list_indices;        // rows of the reference set, nearest first
  HostVector<Coordinate> list_distances;
  HostMatrix<double> accelerations;      // (n_bodies, 3): BH
  HostVector<std::int64_t> error_sample; // (m): BH --error-report: the sampled bodies
  HostMatrix<double> error_exact;        // (m, 3): their accelerations by direct summation
  Metadata metadata;
};

// File layout: /Results/{NeighborIndices, NeighborDistances, Counts,
// ListOffsets, ListIndices, ListDistances, Accelerations, ErrorSample,
// ErrorSampleExact} (only those present, row i = query i; the error sample's
// rows are its bodies), attribute
// /Results:Application, /RunMetadata attributes. Atomic like write_points.
void write_results(std::string const& path, QueryResults const& results);
QueryResults read_results(std::string const& path);

// Search results (neighbour rows, counts or radius lists) written a block of
// queries at a time, in query order, in write_results' layout and contents:
// into a temporary file that commit() renames to `path`. Destroyed
// uncommitted (an error, say), it leaves nothing behind.
// Several processes (`writers`) write one file together: each its own rows,
// [first, first + rows) of the `queries` (the processes' rows consecutive in
// rank order), every call collective, the metadata the same on every one.
// Neighbour rows, counts and radius lists (written together: one block of lists a process).
class ResultsStream {
 public:
  ResultsStream(std::string const& path, std::string const& application, Index queries,
                Collective const& writers = {}, Index first = 0);
  ~ResultsStream();
  ResultsStream(ResultsStream const&) = delete;
  ResultsStream& operator=(ResultsStream const&) = delete;

  // The results of queries [first, first + rows): each block starts where
  // the one before ended, and fills the same members.
  void write(Index first, QueryResults const& block);
  void commit(Metadata const& metadata);

 private:
  struct File;
  std::unique_ptr<File> file_;
};

} // namespace treetrav::io
