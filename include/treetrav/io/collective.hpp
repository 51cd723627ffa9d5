#pragma once

// Files that the ranks of a distributed run write together: one file, each
// rank its own rows of every dataset through collective MPI-IO (parallel
// HDF5), the same layout and contents as one process writes.
#include <string>

#ifdef TREETRAV_ENABLE_MPI
#include <mpi.h>
#endif

namespace treetrav::io {

struct Snapshot;

// The processes that write one file together. Each passes its own bodies, the
// file's consecutive rows in rank order (rank 0 the first ones), and the same
// header and metadata. Default: this process alone, all rows.
struct Collective {
#ifdef TREETRAV_ENABLE_MPI
  MPI_Comm comm = MPI_COMM_NULL;  // null (or one rank): this process alone
#endif
};

// write_snapshot (io/snapshot.hpp) by every process of `writers`, each with
// its rows: the file one process writes of all bodies, written atomically
// (rank 0 renames it once every rank's rows are in). A failure on any rank
// throws the same exception on every rank, and the file stays as it was.
void write_snapshot(std::string const& path, Snapshot const& rows, Collective const& writers);

}  // namespace treetrav::io
