#include <treetrav/core/error.hpp>
#include <treetrav/io/collective.hpp>
#include <treetrav/io/snapshot.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <regex>
#include <stdexcept>

namespace treetrav::io {
namespace {

constexpr char const header_group[] = "/Header";
constexpr char const units_group[] = "/Units";
constexpr int particle_types = 6;
constexpr int gas_type = 0;        // hydrodynamics: refused
constexpr int default_type = 1;    // GADGET's dark-matter slot
using TypeCounts = std::array<std::uint64_t, particle_types>;

std::string type_group(int type) { return "/PartType" + std::to_string(type); }

// A particle dataset with its SWIFT unit exponents (U_L, U_M, U_t; a-scale)
// so that SWIFT/GADGET tools interpret the values.
struct Quantity {
  char const* name;
  float length, mass, time, scale_factor;
  char const* description;
  std::string in(int type) const { return type_group(type) + "/" + name; }
};

constexpr Quantity coordinates{"Coordinates", 1, 0, 0, 1, "Co-moving positions of the particles"};
constexpr Quantity velocities{"Velocities", 1, 0, -1, 0, "Peculiar velocities of the particles"};
constexpr Quantity masses{"Masses", 0, 1, 0, 0, "Masses of the particles"};
constexpr Quantity ids{"ParticleIDs", 0, 0, 0, 0, "Unique IDs of the particles"};
constexpr Quantity potentials{"Potentials", 2, 0, -2, -1, "Gravitational potentials of the particles"};

void describe(detail::FileWriter const& out, detail::Handle const& dataset, Quantity const& quantity) {
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

void write_header(detail::FileWriter const& out, Snapshot const& snapshot, TypeCounts const& this_file,
                  TypeCounts const& total, int files) {
  auto const header = out.create_group(header_group);
  hid_t const id = header.get();
  std::vector<std::uint32_t> this_file_words(particle_types), total_low(particle_types), total_high(particle_types);
  for (int t = 0; t < particle_types; ++t) {
    this_file_words[t] = static_cast<std::uint32_t>(this_file[t]);
    total_low[t] = static_cast<std::uint32_t>(total[t] & 0xffffffffu);
    total_high[t] = static_cast<std::uint32_t>(total[t] >> 32);
  }
  out.set_attribute(id, "BoxSize", snapshot.box_size);
  out.set_attribute(id, "NumPart_ThisFile", this_file_words);
  out.set_attribute(id, "NumPart_Total", total_low);
  out.set_attribute(id, "NumPart_Total_HighWord", total_high);
  out.set_attribute(id, "MassTable", std::vector<double>(particle_types, 0.0));  // masses per body
  out.set_attribute(id, "Time", snapshot.time);
  out.set_attribute(id, "Redshift", 0.0);
  out.set_attribute(id, "NumFilesPerSnapshot", std::int32_t{files});
  out.set_attribute(id, "Dimension", std::int32_t{3});
  out.set_attribute(id, "Flag_Entropy_ICs", std::int32_t{0});
}

void write_units(detail::FileWriter const& out) {
  auto const units = out.create_group(units_group);
  for (char const* name : {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)", "Unit time in cgs (U_t)",
                           "Unit current in cgs (U_I)", "Unit temperature in cgs (U_T)"})
    out.set_attribute(units.get(), name, 1.0);
  out.set_attribute(units.get(), "Description",
                    std::string("treetrav internal units with G = 1 (Henon units for generated "
                                "models); not tied to cgs, hence the conversion factors of 1"));
}

int type_of(Snapshot const& snapshot, std::size_t body) {
  return snapshot.types.extent(0) == 0 ? default_type : snapshot.types(body);
}

// The bodies of each type, in body order.
std::array<std::vector<std::size_t>, particle_types> bodies_by_type(Snapshot const& snapshot) {
  std::array<std::vector<std::size_t>, particle_types> by_type;
  for (std::size_t i = 0; i < snapshot.size(); ++i) by_type[type_of(snapshot, i)].push_back(i);
  return by_type;
}

// Of each type t, the sums of `counts` over the processes of `writers`.
TypeCounts sum_over(Collective const& writers, TypeCounts const& counts) {
  auto const sums = detail::sum_over(writers, std::vector<std::uint64_t>(counts.begin(), counts.end()));
  TypeCounts result{};
  std::copy(sums.begin(), sums.end(), result.begin());
  return result;
}

// One file of a snapshot: of each type t, the bodies by_type[t][first[t], last[t]) of
// this process, after those of the ranks before it in `writers`.
void write_file(std::string const& path, Snapshot const& snapshot,
                std::array<std::vector<std::size_t>, particle_types> const& by_type, TypeCounts const& first,
                TypeCounts const& last, int files, Collective const& writers = {}) {
  TypeCounts mine{}, total{};
  for (int t = 0; t < particle_types; ++t) mine[t] = last[t] - first[t], total[t] = by_type[t].size();
  TypeCounts const this_file = sum_over(writers, mine);
  total = sum_over(writers, total);
  bool const with_potentials = snapshot.potentials.extent(0) != 0;
  detail::write_atomically(path, [&](detail::FileWriter& out) {
    write_header(out, snapshot, this_file, total, files);
    write_units(out);
    for (int t = 0; t < particle_types; ++t) {
      if (this_file[t] == 0) continue;
      std::size_t const n = mine[t];
      std::vector<double> x(3 * n), v(3 * n), m(n), phi(with_potentials ? n : 0);
      std::vector<ParticleId> id(n);
      for (std::size_t r = 0; r < n; ++r) {
        std::size_t const body = by_type[t][first[t] + r];
        for (int k = 0; k < 3; ++k) x[3 * r + k] = snapshot.coordinates(body, k), v[3 * r + k] = snapshot.velocities(body, k);
        m[r] = snapshot.masses(body);
        id[r] = snapshot.ids(body);
        if (with_potentials) phi[r] = snapshot.potentials(body);
      }
      out.create_group(type_group(t));
      hsize_t const rows = n;  // of this process
      describe(out, out.write(coordinates.in(t), {rows, 3}, x.data()), coordinates);
      describe(out, out.write(velocities.in(t), {rows, 3}, v.data()), velocities);
      describe(out, out.write(masses.in(t), {rows}, m.data()), masses);
      describe(out, out.write(ids.in(t), {rows}, id.data()), ids);
      if (with_potentials) describe(out, out.write(potentials.in(t), {rows}, phi.data()), potentials);
    }
    out.write_metadata(detail::metadata_group, snapshot.metadata);
  }, writers);
}

// `bodies`: of all processes writing the snapshot.
void check_writable(std::string const& path, Snapshot const& snapshot, std::uint64_t bodies) {
  std::size_t const n = snapshot.size();
  if (bodies < 1) throw std::invalid_argument(path + ": refusing to write an empty snapshot");
  bool const consistent = snapshot.coordinates.extent(0) == n && snapshot.coordinates.extent(1) == 3 &&
                          snapshot.velocities.extent(0) == n && snapshot.velocities.extent(1) == 3 &&
                          snapshot.ids.extent(0) == n &&
                          (snapshot.potentials.extent(0) == 0 || snapshot.potentials.extent(0) == n) &&
                          (snapshot.types.extent(0) == 0 || snapshot.types.extent(0) == n);
  if (!consistent)
    throw std::invalid_argument(path + ": snapshot arrays disagree in shape (expected n x 3 "
                                       "coordinates and velocities, n masses, ids, types, potentials)");
  for (std::size_t i = 0; i < snapshot.types.extent(0); ++i)
    if (snapshot.types(i) <= gas_type || snapshot.types(i) >= particle_types)
      throw std::invalid_argument(path + fmt::format(": body {} has particle type {}, not 1-5", i, snapshot.types(i)));
}

// A /Header attribute's first value (BoxSize may be a 3-vector in SWIFT files).
double header_number(detail::FileReader const& in, char const* name) {
  if (!in.has_attribute(header_group, name)) return 0.0;
  auto const values = in.read_numbers(header_group, name);
  if (values.empty() || !std::isfinite(values[0]))
    in.fail(header_group, fmt::format("attribute \"{}\" is empty or not finite", name));
  return values[0];
}

// A per-type /Header attribute (NumPart_*), or nothing when absent. Types
// past its end count 0; it must reach the dark-matter slot (type 1).
std::optional<TypeCounts> header_counts(detail::FileReader const& in, char const* name) {
  if (!in.has_attribute(header_group, name)) return std::nullopt;
  auto const values = in.read_numbers(header_group, name);
  if (values.size() <= default_type || values.size() > particle_types)
    in.fail(header_group, fmt::format("attribute {} has {} values, not {} to {} (one per particle type)", name,
                                      values.size(), default_type + 1, particle_types));
  TypeCounts counts{};
  for (std::size_t t = 0; t < values.size(); ++t) {
    if (!(values[t] >= 0) || values[t] != std::floor(values[t]))
      in.fail(header_group, fmt::format("attribute \"{}\" holds {} for type {}", name, values[t], t));
    counts[t] = static_cast<std::uint64_t>(values[t]);
  }
  return counts;
}

// A part of the snapshot: one type's bodies in one file (rows of its datasets).
struct Part {
  int type;
  std::size_t file;  // index into the snapshot's files
  hsize_t rows;
  bool potentials;  // the file has /PartType<t>/Potentials
};

// Masses per body, rows [first, first + count), or GADGET's MassTable entry
// when all bodies of the type weigh the same.
detail::Array<double> read_masses(detail::FileReader const& in, int type, hsize_t first, hsize_t count) {
  std::string const dataset = masses.in(type);
  if (in.exists(dataset) || !in.has_attribute(header_group, "MassTable"))
    return in.read_rows<double>(dataset, 1, first, count);
  auto const table = in.read_numbers(header_group, "MassTable");
  if (table.size() <= static_cast<std::size_t>(type) || table[type] == 0)
    in.fail(dataset, "dataset is missing and /Header MassTable gives no mass");
  detail::Array<double> array;
  array.shape = {count};
  array.first_row = first;
  array.values.assign(count, table[type]);
  return array;
}

// The parts of one file, type by type, appended to `parts`: every dataset's
// shape checked against its coordinates' and the header; no values read.
void describe_parts(detail::FileReader const& in, std::size_t file, std::vector<Part>& parts) {
  auto const this_file = header_counts(in, "NumPart_ThisFile");
  std::uint64_t gas = this_file ? (*this_file)[gas_type] : 0;
  if (std::string const gas_coordinates = coordinates.in(gas_type); in.exists(gas_coordinates))
    gas = std::max<std::uint64_t>(gas, detail::shape_of<double>(in, gas_coordinates, 2).rows());
  if (gas > 0)
    in.fail(type_group(gas_type), fmt::format("holds {} gas particles: treetrav integrates collisionless bodies "
                                              "only (PartType1-5); remove the gas or make it collisionless",
                                              gas));
  for (int t = 1; t < particle_types; ++t) {
    if (!in.exists(type_group(t))) {
      if (this_file && (*this_file)[t] > 0)
        in.fail(type_group(t), fmt::format("is missing but /Header NumPart_ThisFile counts {} bodies of type {}",
                                           (*this_file)[t], t));
      continue;
    }
    std::string const x = coordinates.in(t);
    auto const position = detail::shape_of<double>(in, x, 2);
    detail::require_columns(in, x, position, 3);
    hsize_t const n = position.rows();
    if (this_file && (*this_file)[t] != n)
      in.fail(header_group, fmt::format("attribute NumPart_ThisFile[{}] is {} but the number of rows of {} is {}: "
                                        "the file contradicts itself",
                                        t, (*this_file)[t], x, n));
    detail::require_attribute_agrees(in, header_group, "Dimension", 0, 3, "the number of columns of " + x);
    if (n == 0) continue;
    auto const velocity = detail::shape_of<double>(in, velocities.in(t), 2);
    detail::require_rows(in, velocities.in(t), velocity, n, x);
    detail::require_columns(in, velocities.in(t), velocity, 3);
    detail::Array<double> mass;
    mass.shape = {n};
    if (in.exists(masses.in(t)) || !in.has_attribute(header_group, "MassTable"))
      mass = detail::shape_of<double>(in, masses.in(t), 1);
    else
      read_masses(in, t, 0, 0);  // checks the table's entry
    detail::require_rows(in, masses.in(t), mass, n, x);
    detail::require_rows(in, ids.in(t), detail::shape_of<ParticleId>(in, ids.in(t), 1), n, x);
    bool const has_potentials = in.exists(potentials.in(t));
    if (has_potentials)
      detail::require_rows(in, potentials.in(t), detail::shape_of<double>(in, potentials.in(t), 1), n, x);
    parts.push_back({t, file, n, has_potentials});
  }
}

// The values of a part's rows [first, first + count), checked, into `out` from row `at`.
void read_part(detail::FileReader const& in, Part const& part, hsize_t first, hsize_t count, bool with_potentials,
               bool with_types, Snapshot& out, std::size_t at) {
  int const t = part.type;
  std::string const x = coordinates.in(t);
  auto const position = in.read_rows<double>(x, 2, first, count);
  detail::require_finite(in, x, position);
  auto const velocity = in.read_rows<double>(velocities.in(t), 2, first, count);
  detail::require_finite(in, velocities.in(t), velocity);
  auto const mass = read_masses(in, t, first, count);
  detail::require_finite(in, masses.in(t), mass);
  detail::require_positive(in, masses.in(t), mass);
  auto const id = in.read_rows<ParticleId>(ids.in(t), 1, first, count);
  detail::require_unique(in, ids.in(t), id);
  detail::Array<double> phi;
  if (with_potentials) {
    phi = in.read_rows<double>(potentials.in(t), 1, first, count);
    detail::require_finite(in, potentials.in(t), phi);
  }
  for (hsize_t r = 0; r < count; ++r, ++at) {
    for (int k = 0; k < 3; ++k)
      out.coordinates(at, k) = position.values[3 * r + k], out.velocities(at, k) = velocity.values[3 * r + k];
    out.masses(at) = mass.values[r];
    out.ids(at) = id.values[r];
    if (with_potentials) out.potentials(at) = phi.values[r];
    if (with_types) out.types(at) = t;
  }
}

// The files of a multi-file snapshot, "<base>.<i>.<extension>", from any one of them.
std::vector<std::string> snapshot_files(std::string const& path, int files) {
  if (files == 1) return {path};
  static std::regex const pattern(R"((.*)\.([0-9]+)\.(hdf5|h5))");
  std::smatch match;
  if (!std::regex_match(path, match, pattern))
    throw InputError(fmt::format("{}: /Header NumFilesPerSnapshot is {}, but the name is not <base>.<i>.hdf5 "
                                 "(or .h5) as the files of a multi-file snapshot are named",
                                 path, files));
  std::vector<std::string> names;
  for (int i = 0; i < files; ++i) names.push_back(fmt::format("{}.{}.{}", match[1].str(), i, match[3].str()));
  return names;
}

}  // namespace

Snapshot allocate_snapshot(std::size_t n, bool with_potentials) {
  Snapshot snapshot;
  snapshot.coordinates = Snapshot::HostMatrix<double>("treetrav::io::snapshot::coordinates", n, 3);
  snapshot.velocities = Snapshot::HostMatrix<double>("treetrav::io::snapshot::velocities", n, 3);
  snapshot.masses = Snapshot::HostVector<double>("treetrav::io::snapshot::masses", n);
  snapshot.ids = Snapshot::HostVector<ParticleId>("treetrav::io::snapshot::ids", n);
  snapshot.potentials = Snapshot::HostVector<double>("treetrav::io::snapshot::potentials", with_potentials ? n : 0);
  return snapshot;
}

void write_snapshot(std::string const& path, Snapshot const& snapshot) {
  write_snapshot(path, snapshot, Collective{});
}

void write_snapshot(std::string const& path, Snapshot const& rows, Collective const& writers) {
  std::uint64_t const bodies = detail::sum_over(writers, {rows.size()})[0];
  detail::collectively(writers, [&] { check_writable(path, rows, bodies); });
  auto const by_type = bodies_by_type(rows);
  TypeCounts first{}, last{};
  for (int t = 0; t < particle_types; ++t) last[t] = by_type[t].size();
  for (std::uint64_t const total : sum_over(writers, last))
    if (total > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument(path + ": NumPart_ThisFile cannot count more than 2^32-1 bodies of a type; "
                                         "write several files");
  write_file(path, rows, by_type, first, last, 1, writers);
}

std::vector<std::string> write_snapshot_files(std::string const& base, Snapshot const& snapshot, int files) {
  if (files < 1) throw std::invalid_argument(base + ": a snapshot needs at least one file");
  std::vector<std::string> names;
  for (int i = 0; i < files; ++i) names.push_back(fmt::format("{}.{}.hdf5", base, i));
  check_writable(names[0], snapshot, snapshot.size());
  auto const by_type = bodies_by_type(snapshot);
  for (int i = 0; i < files; ++i) {
    TypeCounts first{}, last{};
    for (int t = 0; t < particle_types; ++t) {
      std::uint64_t const n = by_type[t].size();
      first[t] = n * i / files;
      last[t] = n * (i + 1) / files;
      if (last[t] - first[t] > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument(names[i] + ": more than 2^32-1 bodies of a type in one file; write more files");
    }
    write_file(names[i], snapshot, by_type, first, last, files);
  }
  return names;
}

Snapshot read_snapshot(std::string const& path) { return read_snapshot(path, RowShare{}).bodies; }

SnapshotRows read_snapshot(std::string const& path, RowShare share) {
  int files = 1;
  Snapshot snapshot;
  {
    detail::FileReader const in(path);
    if (in.has_attribute(header_group, "NumFilesPerSnapshot")) {
      double const value = header_number(in, "NumFilesPerSnapshot");
      if (!(value >= 1) || value != std::floor(value) || value > 1e6)
        in.fail(header_group, fmt::format("NumFilesPerSnapshot is {}, not a count of files", value));
      files = static_cast<int>(value);
    }
  }
  // First the shapes of every file (no values): the whole set's order and size.
  std::vector<Part> parts;
  // Every file restates the set's totals (low and high 32 bits), checked once all are described.
  struct Totals {
    std::string file;
    std::optional<TypeCounts> low, high;
  };
  std::vector<Totals> totals;
  auto const names = snapshot_files(path, files);
  for (std::size_t f = 0; f < names.size(); ++f) {
    detail::FileReader const in(names[f]);
    if (files > 1 && header_number(in, "NumFilesPerSnapshot") != files)
      in.fail(header_group, fmt::format("NumFilesPerSnapshot differs from {}'s {}", path, files));
    describe_parts(in, f, parts);
    totals.push_back({names[f], header_counts(in, "NumPart_Total"), header_counts(in, "NumPart_Total_HighWord")});
    if (f == 0) {  // the set's time, box and run metadata
      snapshot.time = header_number(in, "Time");
      snapshot.box_size = header_number(in, "BoxSize");
      snapshot.metadata = in.read_metadata(detail::metadata_group);
    }
  }
  // Type by type, each type's files in order (GADGET's order).
  std::stable_sort(parts.begin(), parts.end(), [](Part const& a, Part const& b) { return a.type < b.type; });
  TypeCounts read{};
  std::size_t n = 0;
  for (auto const& part : parts) read[part.type] += part.rows, n += part.rows;
  if (n == 0)
    throw InputError(path + ": the snapshot is empty: no bodies in /PartType1/Coordinates (nor in PartType2-5)");
  for (Totals const& file : totals)
    for (int t = 1; t < particle_types; ++t) {
      auto const check = [&](std::optional<TypeCounts> const& counts, char const* name, std::uint64_t expected,
                             char const* bits) {
        if (counts && (*counts)[t] != expected)
          throw InputError(fmt::format("{}: {}: attribute {}[{}] is {} but the {} 32 bits of the number of bodies of "
                                       "type {} in the snapshot ({} file(s)) is {}: the file contradicts itself",
                                       file.file, header_group, name, t, (*counts)[t], bits, t, files, expected));
      };
      check(file.low, "NumPart_Total", read[t] & 0xffffffffu, "low");
      check(file.high, "NumPart_Total_HighWord", read[t] >> 32, "high");
    }
  // Then the values of this share's rows only, part by part.
  bool const all_potentials =
      std::all_of(parts.begin(), parts.end(), [](Part const& p) { return p.potentials; });
  bool const only_default = read[default_type] == n;
  RowBlock const block = share.of(n);
  SnapshotRows result;
  result.first_row = block.begin;
  result.total = n;
  Snapshot& out = result.bodies;
  out = allocate_snapshot(block.size(), all_potentials);
  out.time = snapshot.time;
  out.box_size = snapshot.box_size;
  out.metadata = std::move(snapshot.metadata);
  if (!only_default) out.types = Snapshot::HostVector<std::int32_t>("treetrav::io::snapshot::types", block.size());
  std::size_t part_begin = 0, parts_read = 0;
  for (auto const& part : parts) {
    std::size_t const first = std::max(part_begin, block.begin), last = std::min<std::size_t>(part_begin + part.rows, block.end);
    if (first < last) {
      detail::FileReader const in(names[part.file]);
      read_part(in, part, first - part_begin, last - first, all_potentials, !only_default, out, first - block.begin);
      ++parts_read;
    }
    part_begin += part.rows;
  }
  if (parts_read > 1) {  // ids differ across types and files too (rows: bodies in the order read)
    detail::Array<ParticleId> all;
    all.shape = {block.size()};
    all.first_row = block.begin;
    all.values.assign(out.ids.data(), out.ids.data() + block.size());
    detail::require_unique(detail::FileReader(path), "/PartType*/ParticleIDs of all types and files", all);
  }
  return result;
}

}  // namespace treetrav::io
