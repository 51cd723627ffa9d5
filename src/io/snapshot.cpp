#include <treetrav/core/error.hpp>
#include <treetrav/io/snapshot.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace treetrav::io {
namespace {

constexpr char const header_group[] = "/Header";
constexpr char const units_group[] = "/Units";
constexpr char const particles_group[] = "/PartType1";
constexpr int particle_type = 1;  // GADGET's dark-matter slot: collisionless bodies
constexpr int particle_types = 6;

// A PartType1 dataset with its SWIFT unit exponents (U_L, U_M, U_t; a-scale)
// so that SWIFT/GADGET tools interpret the values.
struct Quantity {
  char const* dataset;
  float length, mass, time, scale_factor;
  char const* description;
};

constexpr Quantity coordinates{"/PartType1/Coordinates", 1, 0, 0, 1,
                               "Co-moving positions of the particles"};
constexpr Quantity velocities{"/PartType1/Velocities", 1, 0, -1, 0,
                              "Peculiar velocities of the particles"};
constexpr Quantity masses{"/PartType1/Masses", 0, 1, 0, 0, "Masses of the particles"};
constexpr Quantity ids{"/PartType1/ParticleIDs", 0, 0, 0, 0, "Unique IDs of the particles"};
constexpr Quantity potentials{"/PartType1/Potentials", 2, 0, -2, -1,
                              "Gravitational potentials of the particles"};

void describe(detail::FileWriter const& out, detail::Handle const& dataset,
              Quantity const& quantity) {
  hid_t const id = dataset.get();
  out.set_attribute(id, "U_L exponent", quantity.length);
  out.set_attribute(id, "U_M exponent", quantity.mass);
  out.set_attribute(id, "U_t exponent", quantity.time);
  out.set_attribute(id, "U_I exponent", 0.0f);
  out.set_attribute(id, "U_T exponent", 0.0f);
  out.set_attribute(id, "a-scale exponent", quantity.scale_factor);
  out.set_attribute(id, "h-scale exponent", 0.0f);
  out.set_attribute(id, "Description", std::string(quantity.description));
}

void write_header(detail::FileWriter const& out, Snapshot const& snapshot) {
  auto const header = out.create_group(header_group);
  hid_t const id = header.get();
  std::uint64_t const n = snapshot.size();
  std::vector<std::uint32_t> this_file(particle_types, 0), total(particle_types, 0),
      high_word(particle_types, 0);
  this_file[particle_type] = static_cast<std::uint32_t>(n);
  total[particle_type] = static_cast<std::uint32_t>(n & 0xffffffffu);
  high_word[particle_type] = static_cast<std::uint32_t>(n >> 32);
  out.set_attribute(id, "BoxSize", snapshot.box_size);
  out.set_attribute(id, "NumPart_ThisFile", this_file);
  out.set_attribute(id, "NumPart_Total", total);
  out.set_attribute(id, "NumPart_Total_HighWord", high_word);
  out.set_attribute(id, "MassTable", std::vector<double>(particle_types, 0.0));  // masses per body
  out.set_attribute(id, "Time", snapshot.time);
  out.set_attribute(id, "Redshift", 0.0);
  out.set_attribute(id, "NumFilesPerSnapshot", std::int32_t{1});
  out.set_attribute(id, "Dimension", std::int32_t{3});
  out.set_attribute(id, "Flag_Entropy_ICs", std::int32_t{0});
}

void write_units(detail::FileWriter const& out) {
  auto const units = out.create_group(units_group);
  for (char const* name : {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
                           "Unit time in cgs (U_t)", "Unit current in cgs (U_I)",
                           "Unit temperature in cgs (U_T)"})
    out.set_attribute(units.get(), name, 1.0);
  out.set_attribute(units.get(), "Description",
                    std::string("treetrav internal units with G = 1 (Henon units for generated "
                                "models); not tied to cgs, hence the conversion factors of 1"));
}

// A /Header attribute's first value (BoxSize may be a 3-vector in SWIFT files).
double header_number(detail::FileReader const& in, char const* name) {
  if (!in.has_attribute(header_group, name)) return 0.0;
  auto const values = in.read_numbers(header_group, name);
  if (values.empty() || !std::isfinite(values[0]))
    in.fail(header_group, fmt::format("attribute \"{}\" is empty or not finite", name));
  return values[0];
}

// Masses per body, or GADGET's MassTable entry when all bodies weigh the same.
detail::Array<double> read_masses(detail::FileReader const& in, hsize_t n) {
  if (in.exists(masses.dataset) || !in.has_attribute(header_group, "MassTable"))
    return in.read<double>(masses.dataset, 1);
  auto const table = in.read_numbers(header_group, "MassTable");
  if (table.size() <= static_cast<std::size_t>(particle_type) || table[particle_type] == 0)
    in.fail(masses.dataset, "dataset is missing and /Header MassTable gives no mass");
  detail::Array<double> array;
  array.shape = {n};
  array.values.assign(n, table[particle_type]);
  return array;
}

}  // namespace

Snapshot allocate_snapshot(std::size_t n, bool with_potentials) {
  Snapshot snapshot;
  snapshot.coordinates = Snapshot::HostMatrix<double>("treetrav::io::snapshot::coordinates", n, 3);
  snapshot.velocities = Snapshot::HostMatrix<double>("treetrav::io::snapshot::velocities", n, 3);
  snapshot.masses = Snapshot::HostVector<double>("treetrav::io::snapshot::masses", n);
  snapshot.ids = Snapshot::HostVector<ParticleId>("treetrav::io::snapshot::ids", n);
  snapshot.potentials =
      Snapshot::HostVector<double>("treetrav::io::snapshot::potentials", with_potentials ? n : 0);
  return snapshot;
}

void write_snapshot(std::string const& path, Snapshot const& snapshot) {
  std::size_t const n = snapshot.size();
  if (n < 1) throw std::invalid_argument(path + ": refusing to write an empty snapshot");
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument(path + ": NumPart_ThisFile cannot count more than 2^32-1 bodies");
  bool const consistent = snapshot.coordinates.extent(0) == n &&
                          snapshot.coordinates.extent(1) == 3 &&
                          snapshot.velocities.extent(0) == n &&
                          snapshot.velocities.extent(1) == 3 && snapshot.ids.extent(0) == n &&
                          (snapshot.potentials.extent(0) == 0 || snapshot.potentials.extent(0) == n);
  if (!consistent)
    throw std::invalid_argument(path + ": snapshot arrays disagree in shape (expected n x 3 "
                                       "coordinates and velocities, n masses, ids, potentials)");

  detail::write_atomically(path, [&](detail::FileWriter& out) {
    write_header(out, snapshot);
    write_units(out);
    out.create_group(particles_group);
    describe(out, detail::write_matrix(out, coordinates.dataset, snapshot.coordinates),
             coordinates);
    describe(out, detail::write_matrix(out, velocities.dataset, snapshot.velocities), velocities);
    describe(out, detail::write_vector(out, masses.dataset, snapshot.masses), masses);
    describe(out, detail::write_vector(out, ids.dataset, snapshot.ids), ids);
    if (snapshot.potentials.extent(0) != 0)
      describe(out, detail::write_vector(out, potentials.dataset, snapshot.potentials),
               potentials);
    out.write_metadata(detail::metadata_group, snapshot.metadata);
  });
}

Snapshot read_snapshot(std::string const& path) {
  detail::FileReader const in(path);
  auto const position = in.read<double>(coordinates.dataset, 2);
  detail::require_not_empty(in, coordinates.dataset, position);
  detail::require_columns(in, coordinates.dataset, position, 3);
  detail::require_finite(in, coordinates.dataset, position);
  hsize_t const n = position.rows();

  auto const velocity = in.read<double>(velocities.dataset, 2);
  detail::require_rows(in, velocities.dataset, velocity, n, coordinates.dataset);
  detail::require_columns(in, velocities.dataset, velocity, 3);
  detail::require_finite(in, velocities.dataset, velocity);

  auto const mass = read_masses(in, n);
  detail::require_rows(in, masses.dataset, mass, n, coordinates.dataset);
  detail::require_finite(in, masses.dataset, mass);
  detail::require_positive(in, masses.dataset, mass);

  auto const id = in.read<ParticleId>(ids.dataset, 1);
  detail::require_rows(in, ids.dataset, id, n, coordinates.dataset);
  detail::require_unique(in, ids.dataset, id);
  // The GADGET header's counts (when present) describe this file's bodies.
  std::string const bodies = std::string("the number of rows of ") + coordinates.dataset;
  detail::require_attribute_agrees(in, header_group, "NumPart_ThisFile", particle_type, n, bodies);
  detail::require_attribute_agrees(in, header_group, "NumPart_Total", particle_type,
                                   n & 0xffffffffu, "the low 32 bits of " + bodies);
  detail::require_attribute_agrees(in, header_group, "NumPart_Total_HighWord", particle_type,
                                   n >> 32, "the high 32 bits of " + bodies);
  detail::require_attribute_agrees(in, header_group, "Dimension", 0, 3,
                                   "the number of columns of " + std::string(coordinates.dataset));
  detail::require_attribute_agrees(in, header_group, "NumFilesPerSnapshot", 0, 1,
                                   "the number of files treetrav reads (one: a snapshot split into "
                                   "several files is not read)");

  Snapshot snapshot;
  if (in.exists(potentials.dataset)) {
    auto const potential = in.read<double>(potentials.dataset, 1);
    detail::require_rows(in, potentials.dataset, potential, n, coordinates.dataset);
    detail::require_finite(in, potentials.dataset, potential);
    snapshot.potentials = detail::to_vector(potential, "treetrav::io::snapshot::potentials");
  }
  snapshot.coordinates = detail::to_matrix(position, "treetrav::io::snapshot::coordinates");
  snapshot.velocities = detail::to_matrix(velocity, "treetrav::io::snapshot::velocities");
  snapshot.masses = detail::to_vector(mass, "treetrav::io::snapshot::masses");
  snapshot.ids = detail::to_vector(id, "treetrav::io::snapshot::ids");
  snapshot.time = header_number(in, "Time");
  snapshot.box_size = header_number(in, "BoxSize");
  snapshot.metadata = in.read_metadata(detail::metadata_group);
  return snapshot;
}

}  // namespace treetrav::io
