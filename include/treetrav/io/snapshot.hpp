#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/io/metadata.hpp>
#include <treetrav/io/row_share.hpp>

#include <string>
#include <vector>

namespace treetrav::io {

// An N-body snapshot in the SWIFT/GADGET convention: collisionless bodies of
// particle types 1-5 (dark matter, boundary, stars, black holes), each type in
// its /PartType<t> group; gas (PartType0) is refused.
// Internal units: G = 1 (Henon units for generated models); the unit
// attributes written to the file say so.
struct Snapshot {
  template <class T>
  using HostMatrix = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  template <class T>
  using HostVector = Kokkos::View<T*, Kokkos::HostSpace>;

  double time = 0.0;
  double box_size = 0.0;               // 0: open boundaries
  HostMatrix<double> coordinates;      // (n, 3)
  HostMatrix<double> velocities;       // (n, 3)
  HostVector<double> masses;           // (n)
  HostVector<ParticleId> ids;          // (n)
  HostVector<double> potentials;       // (n) optional, extent 0 when absent
  HostVector<std::int32_t> types;      // (n) particle type 1-5 of each body; extent 0: all PartType1
  Metadata metadata;                   // extra attributes under /RunMetadata

  std::size_t size() const { return masses.extent(0); }
};

Snapshot allocate_snapshot(std::size_t n, bool with_potentials = false);

// Layout: /Header attributes BoxSize, NumPart_ThisFile, NumPart_Total,
// NumPart_Total_HighWord, MassTable, Time, Redshift, NumFilesPerSnapshot,
// Dimension, Flag_Entropy_ICs; /Units (cgs conversion attributes);
// /PartType<t>/{Coordinates (n_t,3), Velocities (n_t,3), Masses, ParticleIDs,
// Potentials} for each type t present, each dataset with unit-exponent
// attributes; a type's rows keep the bodies' order. Atomic like write_points.
void write_snapshot(std::string const& path, Snapshot const& snapshot);

// The snapshot as GADGET's multi-file set "<base>.0.hdf5" ... "<base>.<files-1>.hdf5"
// (NumFilesPerSnapshot = files): each type's bodies in `files` consecutive
// runs of nearly equal length. Each file is written atomically (not the set).
// Returns the file names.
std::vector<std::string> write_snapshot_files(std::string const& base, Snapshot const& snapshot, int files);

// Validates like read_points: shapes agree, 3 dimensions, n >= 1, finite values,
// positive masses, NumPart counts match; throws InputError naming the file and
// dataset. Bodies come type by type (1 to 5). When the header says
// NumFilesPerSnapshot = F > 1, `path` is one file "<base>.<i>.hdf5" (or .h5)
// of the set and all F are read, each type's bodies file by file.
Snapshot read_snapshot(std::string const& path);

// A share of a snapshot's bodies: rows [first_row, first_row + bodies.size())
// of its `total`, in read_snapshot's order.
struct SnapshotRows {
  Snapshot bodies;
  std::size_t first_row = 0, total = 0;
};

// The rows `share.of(N)` of the snapshot's N bodies, reading only those
// (hyperslabs of the files and types that hold them). Checked as read_snapshot
// checks the whole set, except that the ParticleIDs are known to differ only
// among these rows: ids across shares are the caller's to compare.
SnapshotRows read_snapshot(std::string const& path, RowShare share);

}  // namespace treetrav::io
