#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/io/metadata.hpp>

#include <string>

namespace treetrav::io {

// An N-body snapshot in the SWIFT/GADGET convention (all bodies PartType1).
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
  Metadata metadata;                   // extra attributes under /RunMetadata

  std::size_t size() const { return masses.extent(0); }
};

Snapshot allocate_snapshot(std::size_t n, bool with_potentials = false);

// Layout: /Header attributes BoxSize, NumPart_ThisFile, NumPart_Total,
// NumPart_Total_HighWord, MassTable, Time, Redshift, NumFilesPerSnapshot,
// Dimension, Flag_Entropy_ICs; /Units (cgs conversion attributes);
// /PartType1/{Coordinates (n,3), Velocities (n,3), Masses, ParticleIDs,
// Potentials} each with unit-exponent attributes. Atomic like write_points.
void write_snapshot(std::string const& path, Snapshot const& snapshot);

// Validates like read_points: shapes agree, 3 dimensions, n >= 1, finite values,
// positive masses; throws InputError naming the file and dataset.
Snapshot read_snapshot(std::string const& path);

}  // namespace treetrav::io
