#pragma once

#include <treetrav/io/metadata.hpp>
#include <treetrav/io/snapshot.hpp>

#include <array>
#include <string>

namespace treetrav::nbody {

// The conserved quantities of a snapshot, summed on the host in double in body
// order (the same bits for every backend and thread count).
struct Diagnostics {
  double kinetic_energy = 0;    // sum m v^2 / 2
  double potential_energy = 0;  // sum m phi / 2 (each pair once)
  std::array<double, 3> momentum{};
  std::array<double, 3> angular_momentum{};  // about the origin
  // P and L of a system at rest are ~0, so their changes are measured against
  // these scales instead: sum m |v| and sum m |x cross v|.
  double momentum_scale = 0;
  double angular_momentum_scale = 0;

  double total_energy() const { return kinetic_energy + potential_energy; }
  bool finite() const;
};

// Needs the snapshot's potentials. Its bodies' terms are added to `sums`
// (a distributed run: those of the rows before the snapshot's).
Diagnostics measure(io::Snapshot const& snapshot, Diagnostics sums = {});

// Changes since the start: energy relative to |E0|; momentum and angular
// momentum as |P - P0| and |L - L0| over the initial scales above. Where the
// initial value or scale is 0 (one body, a system at rest) the change stays
// absolute: never NaN.
struct Drift {
  double energy = 0;
  double momentum = 0;
  double angular_momentum = 0;
};
Drift drift(Diagnostics const& initial, Diagnostics const& now);
// "energy drift +1.234e-05, momentum drift 1.20e-16, angular momentum drift
// 3.40e-16", each marked "(absolute: ...)" where `initial` gives no scale.
std::string describe(Drift const& drift, Diagnostics const& initial);

// Attributes "<prefix>kinetic_energy", "<prefix>potential_energy",
// "<prefix>total_energy", "<prefix>momentum_x" ... "<prefix>angular_momentum_z",
// "<prefix>momentum_scale", "<prefix>angular_momentum_scale".
void add_to_metadata(io::Metadata& metadata, Diagnostics const& diagnostics, std::string const& prefix = "");
// Throws InputError naming `source` when an attribute is missing.
Diagnostics diagnostics_from_metadata(io::Metadata const& metadata, std::string const& prefix,
                                      std::string const& source);
// "energy_drift", "momentum_drift", "angular_momentum_drift".
void add_to_metadata(io::Metadata& metadata, Drift const& drift);

}  // namespace treetrav::nbody
