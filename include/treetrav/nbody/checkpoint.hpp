#pragma once

// A run directory holds snapshot_NNNNNN.h5 (SWIFT/GADGET snapshots) and
// checkpoint_NNNNNN.h5 files, named by step; both are written atomically (a
// hidden ".NAME.tmp.PID" renamed over NAME once complete), so a file under its
// final name is always complete and a run killed mid-write leaves only a
// temporary behind.
#include <treetrav/io/collective.hpp>
#include <treetrav/io/row_share.hpp>
#include <treetrav/nbody/configuration.hpp>
#include <treetrav/nbody/diagnostics.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace treetrav::nbody {

// Everything a run needs to continue bit-for-bit from the end of `step`.
struct Checkpoint {
  std::int64_t step = 0;
  io::Snapshot state;  // time, positions, velocities (double), masses, ids; no potentials
  // The accelerations of `state` (float, as the traversal returned them): the
  // next step's opening kick uses them.
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> accelerations;
  // Each body's time bin (block steps: its next step is dt / 2^bin; else 0).
  Kokkos::View<std::int8_t*, Kokkos::HostSpace> bins;
  // Runs that refit their octree (Configuration::refit > 0): the positions
  // (float, by row) it was last built from. Extent 0: none.
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> tree_positions;
  Diagnostics initial;  // what drifts are measured from
  Configuration configuration;
  std::string backend;  // the rounding of another backend differs: a restart warns
  // Distributed runs: the rank holding each body and its interactions in its
  // last force evaluation (a restart on as many ranks keeps the decomposition;
  // on another count it cuts the Morton curve by these weights). Extent 0: none.
  int ranks = 1;
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> domains;
  Kokkos::View<Index*, Kokkos::HostSpace> costs;
  // The bodies' first row in the file: read by a share of the rows
  // (read_checkpoint(path, share)), `state` holds rows first_row, first_row + 1, ...
  std::int64_t first_row = 0;
};

// Layout: /Checkpoint (attributes format, format_version, step, time, backend)
// with datasets Coordinates, Velocities (n, 3) double, Masses (n) double,
// ParticleIDs (n) int64, Accelerations (n, 3) float, TimeBins (n) int32,
// ParticleTypes (n) int32 (only when not all bodies are PartType1),
// TreePositions (n, 3) float (runs that refit their octree); from
// distributed runs Domains (n) int32 and InteractionCosts (n) int32 with the
// attribute ranks;
// /Checkpoint/Configuration
// and /Checkpoint/InitialDiagnostics hold their structs as attributes.
// Written atomically like every file (io::output_target; test hook:
// TREETRAV_TEST_PAUSE_IN_WRITE, see io/hdf5.hpp). With `writers`, every rank
// passes its rows of the bodies (io/collective.hpp): the same file.
void write_checkpoint(std::string const& path, Checkpoint const& checkpoint,
                      io::Collective const& writers = {});
// Validates shapes and finiteness; throws InputError naming the file.
Checkpoint read_checkpoint(std::string const& path);
// The rows `share.of(N)` of the checkpoint's N bodies alone (every per-body
// array cut alike; `first_row` says where they start), checked as above,
// the ParticleIDs unique among these rows (across shares: the caller's).
Checkpoint read_checkpoint(std::string const& path, io::RowShare share);

std::string snapshot_path(std::string const& directory, std::int64_t step);
std::string checkpoint_path(std::string const& directory, std::int64_t step);

// Whether `file_name` is one a run writes: snapshot_NNNNNN.h5 or checkpoint_NNNNNN.h5.
bool is_run_file(std::string const& file_name);

// The newest checkpoint of `directory` that reads back (its rows `share`);
// an unreadable one is reported through `warn` and the next older tried.
// None when there is none (a run killed before its first checkpoint was
// complete) or no directory.
std::optional<Checkpoint>
read_latest_checkpoint(std::string const& directory,
                       std::function<void(std::string const&)> const& warn, io::RowShare share = {});

// Deletes all but the newest `keep` checkpoints.
void remove_old_checkpoints(std::string const& directory, int keep);

// Whether a run may start from its initial conditions in `directory` (named by
// `option` in the messages): one that does not exist yet (it will be created,
// with its parents), or a directory that holds no snapshot or checkpoint of an
// earlier run (other files stay; temporaries of interrupted writes are removed
// when the run starts). Throws InputError otherwise; creates nothing.
void check_fresh_directory(std::string const& directory, std::string const& option);

// Creates `directory` for a run from its initial conditions and removes the
// temporaries of interrupted writes in it; returns how many.
int prepare_fresh_directory(std::string const& directory);

// Deletes the temporaries of snapshots and checkpoints whose writers were
// killed; returns how many.
int remove_abandoned_temporaries(std::string const& directory);

}  // namespace treetrav::nbody
