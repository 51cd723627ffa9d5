#pragma once

// A run directory holds snapshot_NNNNNN.h5 (SWIFT/GADGET snapshots) and
// checkpoint_NNNNNN.h5 files, named by step; both are written atomically (a
// hidden ".NAME.tmp.PID" renamed over NAME once complete), so a file under its
// final name is always complete and a run killed mid-write leaves only a
// temporary behind.
#include <treetrav/nbody/configuration.hpp>
#include <treetrav/nbody/diagnostics.hpp>

#include <cstdint>
#include <functional>
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
  Diagnostics initial;  // what drifts are measured from
  Configuration configuration;
  std::string backend;  // the rounding of another backend differs: a restart warns
};

// Layout: /Checkpoint (attributes format, format_version, step, time, backend)
// with datasets Coordinates, Velocities (n, 3) double, Masses (n) double,
// ParticleIDs (n) int64, Accelerations (n, 3) float; /Checkpoint/Configuration
// and /Checkpoint/InitialDiagnostics hold their structs as attributes.
//
// Test hook: with TREETRAV_TEST_PAUSE_IN_CHECKPOINT=<step> in the environment,
// the writer of that step's checkpoint sleeps (60 s) half-way through its
// temporary file, so that a test can kill the run mid-write.
void write_checkpoint(std::string const& path, Checkpoint const& checkpoint);
// Validates shapes and finiteness; throws InputError naming the file.
Checkpoint read_checkpoint(std::string const& path);

std::string snapshot_path(std::string const& directory, std::int64_t step);
std::string checkpoint_path(std::string const& directory, std::int64_t step);

// The newest checkpoint of `directory` that reads back; an unreadable one is
// reported through `warn` and the next older tried. Throws InputError when none.
Checkpoint read_latest_checkpoint(std::string const& directory,
                                  std::function<void(std::string const&)> const& warn);

// Deletes all but the newest `keep` checkpoints.
void remove_old_checkpoints(std::string const& directory, int keep);

// A fresh run's directory: created if missing; refused (InputError) when it
// already holds snapshots or checkpoints of another run.
void prepare_fresh_directory(std::string const& directory);

// Deletes the temporaries of snapshots and checkpoints whose writers were
// killed; returns how many.
int remove_abandoned_temporaries(std::string const& directory);

}  // namespace treetrav::nbody
