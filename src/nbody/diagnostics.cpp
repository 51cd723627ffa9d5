#include <treetrav/nbody/diagnostics.hpp>

#include "required_attributes.hpp"

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

namespace treetrav::nbody {
namespace {

using Vector = std::array<double, 3>;

Vector cross(Vector const& a, Vector const& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double norm(Vector const& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

Vector difference(Vector const& a, Vector const& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

constexpr char const* axes[3] = {"_x", "_y", "_z"};

}  // namespace

bool Diagnostics::finite() const {
  bool ok = std::isfinite(kinetic_energy) && std::isfinite(potential_energy) && std::isfinite(momentum_scale) &&
            std::isfinite(angular_momentum_scale);
  for (int k = 0; k < 3; ++k) ok = ok && std::isfinite(momentum[k]) && std::isfinite(angular_momentum[k]);
  return ok;
}

Diagnostics measure(io::Snapshot const& snapshot, Diagnostics d) {
  if (snapshot.potentials.extent(0) != snapshot.size())
    throw std::invalid_argument("nbody diagnostics need the snapshot's potentials");
  for (std::size_t i = 0; i < snapshot.size(); ++i) {
    double const m = snapshot.masses(i);
    Vector const x{snapshot.coordinates(i, 0), snapshot.coordinates(i, 1), snapshot.coordinates(i, 2)};
    Vector const v{snapshot.velocities(i, 0), snapshot.velocities(i, 1), snapshot.velocities(i, 2)};
    Vector const l = cross(x, v);
    d.kinetic_energy += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    d.potential_energy += 0.5 * m * snapshot.potentials(i);
    for (int k = 0; k < 3; ++k) {
      d.momentum[k] += m * v[k];
      d.angular_momentum[k] += m * l[k];
    }
    d.momentum_scale += m * norm(v);
    d.angular_momentum_scale += m * norm(l);
  }
  return d;
}

Drift drift(Diagnostics const& initial, Diagnostics const& now) {
  // A change measured against a scale of 0 stays absolute (a body at rest, a system without
  // energy).
  auto const relative = [](double change, double scale) {
    return scale != 0 ? change / scale : change;
  };
  Drift drift;
  drift.energy =
      relative(now.total_energy() - initial.total_energy(), std::abs(initial.total_energy()));
  drift.momentum =
      relative(norm(difference(now.momentum, initial.momentum)), initial.momentum_scale);
  drift.angular_momentum =
      relative(norm(difference(now.angular_momentum, initial.angular_momentum)),
               initial.angular_momentum_scale);
  return drift;
}

std::string describe(Drift const& drift, Diagnostics const& initial) {
  auto const absolute = [](double scale) {
    return scale != 0 ? "" : " (absolute: the initial scale is 0)";
  };
  return fmt::format(
      "energy drift {:+.3e}{}, momentum drift {:.2e}{}, angular momentum drift {:.2e}{}",
      drift.energy, absolute(initial.total_energy()), drift.momentum,
      absolute(initial.momentum_scale), drift.angular_momentum,
      absolute(initial.angular_momentum_scale));
}

void add_to_metadata(io::Metadata& metadata, Diagnostics const& d, std::string const& prefix) {
  metadata.set(prefix + "kinetic_energy", d.kinetic_energy)
      .set(prefix + "potential_energy", d.potential_energy)
      .set(prefix + "total_energy", d.total_energy())
      .set(prefix + "momentum_scale", d.momentum_scale)
      .set(prefix + "angular_momentum_scale", d.angular_momentum_scale);
  for (int k = 0; k < 3; ++k) {
    metadata.set(prefix + "momentum" + axes[k], d.momentum[k]);
    metadata.set(prefix + "angular_momentum" + axes[k], d.angular_momentum[k]);
  }
}

Diagnostics diagnostics_from_metadata(io::Metadata const& metadata, std::string const& prefix,
                                      std::string const& source) {
  auto number = [&](std::string const& key) { return detail::required_number(metadata, prefix + key, source); };
  Diagnostics d;
  d.kinetic_energy = number("kinetic_energy");
  d.potential_energy = number("potential_energy");
  d.momentum_scale = number("momentum_scale");
  d.angular_momentum_scale = number("angular_momentum_scale");
  for (int k = 0; k < 3; ++k) {
    d.momentum[k] = number(std::string("momentum") + axes[k]);
    d.angular_momentum[k] = number(std::string("angular_momentum") + axes[k]);
  }
  return d;
}

void add_to_metadata(io::Metadata& metadata, Drift const& drift) {
  metadata.set("energy_drift", drift.energy)
      .set("momentum_drift", drift.momentum)
      .set("angular_momentum_drift", drift.angular_momentum);
}

}  // namespace treetrav::nbody
