#include <treetrav/core/error.hpp>
#include <treetrav/nbody/checkpoint.hpp>

#include "../io/hdf5_file.hpp"
#include "required_attributes.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

namespace treetrav::nbody {
namespace {

namespace fs = std::filesystem;

constexpr char const group[] = "/Checkpoint";
constexpr char const configuration_group[] = "/Checkpoint/Configuration";
constexpr char const initial_group[] = "/Checkpoint/InitialDiagnostics";
constexpr char const coordinates[] = "/Checkpoint/Coordinates";
constexpr char const velocities[] = "/Checkpoint/Velocities";
constexpr char const masses[] = "/Checkpoint/Masses";
constexpr char const ids[] = "/Checkpoint/ParticleIDs";
constexpr char const accelerations[] = "/Checkpoint/Accelerations";
constexpr char const bins[] = "/Checkpoint/TimeBins";
constexpr char const types[] = "/Checkpoint/ParticleTypes";  // absent: all PartType1
constexpr char const domains[] = "/Checkpoint/Domains";        // distributed runs: each body's rank
constexpr char const costs[] = "/Checkpoint/InteractionCosts";  // distributed runs: its last walk's interactions
constexpr char const tree_positions[] = "/Checkpoint/TreePositions";  // refits: what the octree was built from
constexpr char const format[] = "treetrav nbody checkpoint";
constexpr double format_version = 2;  // 2: time bins, multipole, opening, group size

std::string step_file(std::string const& directory, char const* kind, std::int64_t step) {
  return (fs::path(directory) / fmt::format("{}_{:06d}.h5", kind, step)).string();
}

// Steps of the files "<kind>_NNNNNN.h5" in `directory`, ascending.
std::vector<std::int64_t> steps_of(std::string const& directory, char const* kind) {
  std::regex const pattern(std::string(kind) + "_([0-9]{6,})\\.h5");
  std::vector<std::int64_t> steps;
  std::error_code error;
  for (auto const& entry : fs::directory_iterator(directory, error)) {
    std::smatch match;
    std::string const name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) steps.push_back(std::stoll(match[1].str()));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace

std::string snapshot_path(std::string const& directory, std::int64_t step) {
  return step_file(directory, "snapshot", step);
}

std::string checkpoint_path(std::string const& directory, std::int64_t step) {
  return step_file(directory, "checkpoint", step);
}

void write_checkpoint(std::string const& path, Checkpoint const& checkpoint, io::Collective const& writers) {
  auto const& state = checkpoint.state;
  std::size_t const n = state.size();
  io::detail::collectively(writers, [&] {
    if (state.coordinates.extent(0) != n || state.velocities.extent(0) != n || state.ids.extent(0) != n ||
        checkpoint.accelerations.extent(0) != n || checkpoint.bins.extent(0) != n ||
        (checkpoint.tree_positions.extent(0) != 0 && checkpoint.tree_positions.extent(0) != n))
      throw std::invalid_argument(path + ": checkpoint arrays disagree in length");
  });
  io::detail::write_atomically(path, [&](io::detail::FileWriter& out) {
    io::Metadata header;
    header.set("format", format)
        .set("format_version", format_version)
        .set("step", static_cast<double>(checkpoint.step))
        .set("time", state.time)
        .set("backend", checkpoint.backend);
    if (checkpoint.domains.extent(0) == n) header.set("ranks", static_cast<double>(checkpoint.ranks));
    out.write_metadata(group, header);
    out.write_metadata(configuration_group, to_metadata(checkpoint.configuration));
    io::Metadata initial;
    add_to_metadata(initial, checkpoint.initial);
    out.write_metadata(initial_group, initial);
    io::detail::write_matrix(out, coordinates, state.coordinates);
    io::detail::write_matrix(out, velocities, state.velocities);
    io::detail::write_vector(out, masses, state.masses);
    io::detail::write_vector(out, ids, state.ids);
    io::detail::write_matrix(out, accelerations, checkpoint.accelerations);
    std::vector<std::int32_t> const wide_bins(checkpoint.bins.data(), checkpoint.bins.data() + n);
    out.write(bins, {n}, wide_bins.data());
    if (state.types.extent(0) == n) io::detail::write_vector(out, types, state.types);
    if (checkpoint.tree_positions.extent(0) == n)
      io::detail::write_matrix(out, tree_positions, checkpoint.tree_positions);
    if (checkpoint.domains.extent(0) == n) {
      io::detail::write_vector(out, domains, checkpoint.domains);
      io::detail::write_vector(out, costs, checkpoint.costs);
    }
  }, writers);
}

Checkpoint read_checkpoint(std::string const& path) { return read_checkpoint(path, io::RowShare{}); }

Checkpoint read_checkpoint(std::string const& path, io::RowShare share) {
  io::detail::FileReader const in(path);
  io::Metadata const header = in.read_metadata(group);
  if (header.text.count("format") == 0 || header.text.at("format") != format)
    in.fail(group, "is not a treetrav nbody checkpoint");
  if (detail::required_number(header, "format_version", path) != format_version)
    in.fail(group, "was written by an incompatible version of treetrav (format_version differs)");

  Checkpoint checkpoint;
  checkpoint.step = static_cast<std::int64_t>(detail::required_number(header, "step", path));
  checkpoint.backend = detail::required_text(header, "backend", path);
  checkpoint.configuration = configuration_from_metadata(in.read_metadata(configuration_group), path);
  checkpoint.initial = diagnostics_from_metadata(in.read_metadata(initial_group), "", path);

  // Every dataset's shape against the coordinates' (all rows), then the
  // values of this share's rows alone.
  auto const whole = io::detail::shape_of<double>(in, coordinates, 2);
  io::detail::require_not_empty(in, coordinates, whole);
  io::detail::require_columns(in, coordinates, whole, 3);
  hsize_t const n = whole.rows();
  if (static_cast<std::int64_t>(n) != checkpoint.configuration.bodies)
    in.fail(coordinates, fmt::format("has {} rows but the configuration has {} bodies", n,
                                     checkpoint.configuration.bodies));
  io::RowBlock const block = share.of(n);
  checkpoint.first_row = static_cast<std::int64_t>(block.begin);
  auto const read = [&](auto zero, char const* dataset, int rank, hsize_t columns) {
    using T = decltype(zero);
    auto const shape = io::detail::shape_of<T>(in, dataset, rank);
    io::detail::require_rows(in, dataset, shape, n, coordinates);
    if (rank == 2) io::detail::require_columns(in, dataset, shape, columns);
    return in.read_rows<T>(dataset, rank, block.begin, block.size());
  };
  auto const position = read(double{}, coordinates, 2, 3);
  io::detail::require_finite(in, coordinates, position);
  auto const velocity = read(double{}, velocities, 2, 3);
  io::detail::require_finite(in, velocities, velocity);
  auto const mass = read(double{}, masses, 1, 1);
  io::detail::require_positive(in, masses, mass);
  auto const id = read(ParticleId{}, ids, 1, 1);
  io::detail::require_unique(in, ids, id);
  auto const acceleration = read(float{}, accelerations, 2, 3);
  io::detail::require_finite(in, accelerations, acceleration);
  auto const bin = read(std::int32_t{}, bins, 1, 1);
  for (auto const b : bin.values)
    if (b < 0 || b > checkpoint.configuration.max_bin)
      in.fail(bins, fmt::format("holds bin {}, outside [0, {}]", b, checkpoint.configuration.max_bin));

  checkpoint.state.time = detail::required_number(header, "time", path);
  checkpoint.state.coordinates = io::detail::to_matrix(position, "treetrav::nbody::Checkpoint::coordinates");
  checkpoint.state.velocities = io::detail::to_matrix(velocity, "treetrav::nbody::Checkpoint::velocities");
  checkpoint.state.masses = io::detail::to_vector(mass, "treetrav::nbody::Checkpoint::masses");
  checkpoint.state.ids = io::detail::to_vector(id, "treetrav::nbody::Checkpoint::ids");
  checkpoint.accelerations = io::detail::to_matrix(acceleration, "treetrav::nbody::Checkpoint::accelerations");
  if (in.exists(types)) {
    auto const type = read(std::int32_t{}, types, 1, 1);
    for (auto const t : type.values)
      if (t < 1 || t > 5) in.fail(types, fmt::format("holds particle type {}, not 1-5", t));
    checkpoint.state.types = io::detail::to_vector(type, "treetrav::nbody::Checkpoint::types");
  }
  std::size_t const count = block.size();
  checkpoint.bins = Kokkos::View<std::int8_t*, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::nbody::Checkpoint::bins"), count);
  for (std::size_t i = 0; i < count; ++i) checkpoint.bins(i) = static_cast<std::int8_t>(bin.values[i]);
  // A refitting run continues from the octree it refitted: built from these.
  if (checkpoint.configuration.refit > 0) {
    if (!in.exists(tree_positions))
      in.fail(configuration_group, fmt::format("has refit {} but the checkpoint holds no {}",
                                               checkpoint.configuration.refit, tree_positions));
    auto const tree = read(float{}, tree_positions, 2, 3);
    io::detail::require_finite(in, tree_positions, tree);
    checkpoint.tree_positions = io::detail::to_matrix(tree, "treetrav::nbody::Checkpoint::tree_positions");
  }
  if (in.exists(domains)) {
    checkpoint.ranks = static_cast<int>(detail::required_number(header, "ranks", path));
    auto const domain = read(std::int32_t{}, domains, 1, 1);
    for (auto const r : domain.values)
      if (r < 0 || r >= checkpoint.ranks)
        in.fail(domains, fmt::format("holds rank {}, outside [0, {})", r, checkpoint.ranks));
    auto const cost = read(Index{}, costs, 1, 1);
    checkpoint.domains = io::detail::to_vector(domain, "treetrav::nbody::Checkpoint::domains");
    checkpoint.costs = io::detail::to_vector(cost, "treetrav::nbody::Checkpoint::costs");
  }
  return checkpoint;
}

bool is_run_file(std::string const& file_name) {
  static std::regex const pattern("(snapshot|checkpoint)_[0-9]{6,}\\.h5");
  return std::regex_match(file_name, pattern);
}

std::optional<Checkpoint>
read_latest_checkpoint(std::string const& directory,
                       std::function<void(std::string const&)> const& warn, io::RowShare share) {
  auto const steps = steps_of(directory, "checkpoint");
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
    std::string const path = checkpoint_path(directory, *step);
    try {
      Checkpoint checkpoint = read_checkpoint(path, share);
      if (checkpoint.step != *step) throw InputError(fmt::format("{}: holds step {}", path, checkpoint.step));
      return checkpoint;
    } catch (InputError const& e) {
      warn(fmt::format("skipping unreadable checkpoint: {}", e.what()));
    }
  }
  return std::nullopt;
}

void remove_old_checkpoints(std::string const& directory, int keep) {
  auto const steps = steps_of(directory, "checkpoint");
  for (std::size_t i = 0; i + keep < steps.size(); ++i) {
    std::error_code error;
    fs::remove(checkpoint_path(directory, steps[i]), error);
  }
}

void check_fresh_directory(std::string const& directory, std::string const& option) {
  std::error_code error;
  if (!fs::exists(directory, error)) {
    // It will be created with its parents: the nearest existing one must be a directory.
    fs::path ancestor = fs::absolute(directory, error).parent_path();
    while (!ancestor.empty() && !fs::exists(ancestor, error) && ancestor != ancestor.root_path())
      ancestor = ancestor.parent_path();
    if (!fs::is_directory(ancestor, error))
      throw InputError(fmt::format("{} {}: cannot be created ({} is not a directory)", option,
                                   directory, ancestor.string()));
    return;
  }
  if (!fs::is_directory(directory, error))
    throw InputError(option + " " + directory + " is not a directory");
  if (!steps_of(directory, "checkpoint").empty())
    throw InputError(option + " " + directory +
                     " holds checkpoints of an earlier run: restart from them, or choose another "
                     "directory");
  if (!steps_of(directory, "snapshot").empty())
    throw InputError(
        option + " " + directory +
        " holds snapshots of an earlier run but no checkpoint to continue from: choose another "
        "directory");
}

int prepare_fresh_directory(std::string const& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (!fs::is_directory(directory, error))
    throw InputError(
        fmt::format("{}: cannot create the directory ({})", directory, error.message()));
  return remove_abandoned_temporaries(directory);
}

int remove_abandoned_temporaries(std::string const& directory) {
  // write_atomically's temporaries: ".<final name>.tmp.<pid>".
  std::regex const pattern("\\.(snapshot|checkpoint)_[0-9]{6,}\\.h5\\.tmp\\.[0-9]+");
  std::vector<fs::path> abandoned;
  std::error_code error;
  for (auto const& entry : fs::directory_iterator(directory, error))
    if (std::regex_match(entry.path().filename().string(), pattern)) abandoned.push_back(entry.path());
  int removed = 0;
  for (auto const& path : abandoned) removed += fs::remove(path, error) ? 1 : 0;
  return removed;
}

}  // namespace treetrav::nbody
