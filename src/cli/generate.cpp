// treetrav generate: deterministic synthetic inputs, either a point set (uniform,
// clustered, a named preset) or an N-body snapshot (plummer, hernquist,
// clustered-box).
#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <cstdint>

namespace treetrav::cli {
namespace {

struct GenerateOptions {
  std::string distribution;
  Index n = 0;
  int dimension = 3;
  int clusters = 16;
  double width = 0.05;
  std::uint64_t seed = 1;
  std::string output;
  int files = 1;  // snapshots: a multi-file snapshot of this many files
  RuntimeOptions runtime;
};

// Options that shape only some distributions; passing one elsewhere is a mistake.
struct ShapeOptions {
  CLI::Option* dimension;
  CLI::Option* clusters;
  CLI::Option* width;
  CLI::Option* files;
};

// The distributions written as N-body snapshots: the generator, what the
// message calls its output, and the units recorded with it.
struct SnapshotKind {
  char const* name;
  io::Snapshot (*generate)(Kokkos::DefaultHostExecutionSpace const&, Index, std::uint64_t);
  char const* what;
  char const* units;
};

using HostSpace = Kokkos::DefaultHostExecutionSpace;
constexpr SnapshotKind snapshot_kinds[] = {
    {"plummer", &generators::plummer<HostSpace>, "a Plummer sphere", "Henon: G = M = 1, E = -1/4"},
    {"hernquist", &generators::hernquist<HostSpace>, "a Hernquist sphere",
     "Henon: G = M = 1, E = -1/4"},
    // BoxSize stays 0: the bodies wrap around the unit cube's faces, but
    // gravity on them is open-boundary.
    {"clustered-box", &generators::clustered_box<HostSpace>, "a clustered box",
     "G = M = 1, the bodies in the unit cube"}};

SnapshotKind const* find_snapshot_kind(std::string const& distribution) {
  for (auto const& kind : snapshot_kinds)
    if (distribution == kind.name) return &kind;
  return nullptr;
}

std::vector<std::string> distribution_names() {
  std::vector<std::string> names{"uniform", "clustered"};
  for (auto const& kind : snapshot_kinds) names.push_back(kind.name);
  for (auto const& preset : generators::presets()) names.push_back(preset.name);
  return names;
}

std::string distributions_help() {
  std::string help =
      "Distributions (--dist):\n"
      "  uniform    uniform in [0, 1)^d; takes --dim\n"
      "  clustered  Gaussian mixture with centres in [0, 1)^d; takes --dim, --clusters, --width\n"
      "  plummer    Plummer sphere N-body snapshot (3-D, Henon units, E = -1/4)\n"
      "  hernquist  Hernquist sphere N-body snapshot (a galaxy's bulge or halo: a 1/r cusp,\n"
      "             a deep tree; 3-D, Henon units, E = -1/4)\n"
      "  clustered-box\n"
      "             clumps of clumps in [0, 1)^3 (Soneira-Peebles, fractal dimension 1.26),\n"
      "             an N-body snapshot at rest: clumps of very different sizes and densities,\n"
      "             a deep, unbalanced tree; wrapped periodically, forces open-boundary\n";
  for (auto const& preset : generators::presets())
    help += fmt::format("  {:<10} {}\n", preset.name, preset.description);
  return help + "The numbers are a pure function of the options: the same seed gives the same\n"
                "points on any thread count.";
}

void reject_unless(bool applies, CLI::Option const* option, std::string const& distribution) {
  if (!applies && option->count() > 0)
    throw InputError(option->get_name() + " does not apply to --dist " + distribution);
}

void reject_inapplicable_options(ShapeOptions const& shape, std::string const& distribution) {
  bool const is_uniform = distribution == "uniform";
  bool const is_clustered = distribution == "clustered";
  reject_unless(is_uniform || is_clustered, shape.dimension, distribution);
  reject_unless(is_clustered, shape.clusters, distribution);
  reject_unless(is_clustered, shape.width, distribution);
  reject_unless(find_snapshot_kind(distribution) != nullptr, shape.files, distribution);
}

io::Metadata generator_metadata(GenerateOptions const& options) {
  io::Metadata metadata;
  metadata.set("generator", options.distribution)
      .set("seed", std::to_string(options.seed))  // text: a double cannot hold every 64-bit seed
      .set("n", static_cast<double>(options.n))
      .set("treetrav_version", TREETRAV_VERSION_STRING);
  return metadata;
}

void generate_snapshot(Kokkos::DefaultHostExecutionSpace const& host,
                       GenerateOptions const& options) {
  SnapshotKind const& kind = *find_snapshot_kind(options.distribution);
  io::Snapshot snapshot = kind.generate(host, options.n, options.seed);
  char const* const what = kind.what;
  auto metadata = generator_metadata(options);
  metadata.set("units", kind.units);
  if (options.distribution == "clustered-box") {
    using Hierarchy = generators::detail::SoneiraPeebles;
    metadata.set("hierarchy",
             fmt::format("Soneira-Peebles: {} clumps of radii {} to {}, each of {} clumps {} "
                         "times smaller, {} levels",
                         Hierarchy::top_spheres, Hierarchy::smallest_top_radius,
                         Hierarchy::largest_top_radius, Hierarchy::children, Hierarchy::shrink,
                         Hierarchy::levels));
  }
  snapshot.metadata = metadata;
  if (options.files > 1) {
    auto const names = io::write_snapshot_files(options.output, snapshot, options.files);
    fmt::print("wrote {} of {} bodies (seed {}) to {} files {} ... {}\n", what, options.n, options.seed,
               names.size(), names.front(), names.back());
    return;
  }
  io::write_snapshot(options.output, snapshot);
  fmt::print("wrote {} of {} bodies (seed {}) to {}\n", what, options.n, options.seed,
             options.output);
}

// The mixture's shape: from the options for "clustered", else the named preset's.
generators::Preset mixture_shape(GenerateOptions const& options) {
  if (options.distribution == "clustered")
    return {options.distribution, options.dimension, options.clusters, options.width, ""};
  return generators::detail::find_preset(options.distribution);
}

void generate_points(Kokkos::DefaultHostExecutionSpace const& host,
                     GenerateOptions const& options) {
  auto metadata = generator_metadata(options);
  generators::HostPointSet points;
  if (options.distribution == "uniform") {
    points = generators::uniform(host, options.n, options.dimension, options.seed);
  } else {
    auto const shape = mixture_shape(options);
    points = generators::clustered(host, options.n, shape.dimension, shape.clusters, shape.width,
                                   options.seed);
    metadata.set("clusters", static_cast<double>(shape.clusters)).set("width", shape.width);
  }
  metadata.set("dimension", static_cast<double>(points.dimension()));
  io::write_points(options.output, points, metadata);
  fmt::print("wrote {} {}-D points ({}, seed {}) to {}\n", points.size(), points.dimension(),
             options.distribution, options.seed, options.output);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "generate",
      "Write a deterministic synthetic input: a point set or an N-body snapshot (a Plummer or "
      "Hernquist sphere, a clustered box) (HDF5)");
  command->footer(distributions_help());
  auto options = std::make_shared<GenerateOptions>();
  command->add_option("--dist", options->distribution, "Distribution or preset name (see below)")
      ->required()
      ->check(CLI::IsMember(distribution_names()));
  command->add_option("-n", options->n, "Number of points or bodies")
      ->required()
      ->check(at_least(Index{1}));
  ShapeOptions shape;
  shape.dimension =
      command->add_option("--dim", options->dimension, "Dimension (uniform, clustered)")
          ->capture_default_str()
          ->check(in_range(1, max_dimension));
  shape.clusters =
      command->add_option("--clusters", options->clusters, "Number of clusters (clustered)")
          ->capture_default_str()
          ->check(at_least(1));
  shape.width = command
                    ->add_option("--width", options->width,
                                 "Largest cluster standard deviation (clustered); widths are "
                                 "log-uniform in [0.2, 1] x this")
                    ->capture_default_str()
                    ->check(positive<double>());
  command->add_option("--seed", options->seed, "Random seed (any 64-bit unsigned integer)")
      ->capture_default_str()
      ->check(at_least(std::uint64_t{0}));
  command
      ->add_option("-o,--output", options->output,
                   "Output HDF5 file (written atomically; a symbolic link is followed)")
      ->required()
      ->check(file_name());
  shape.files = command
                    ->add_option("--files", options->files,
                                 "plummer, hernquist, clustered-box: write a multi-file "
                                 "snapshot of this many files, named "
                                 "<output>.0.hdf5 ... (NumFilesPerSnapshot)")
                    ->capture_default_str()
                    ->check(in_range(1, 100000));
  add_runtime_options(*command, options->runtime, false);

  command->callback([options, shape] {
    reject_inapplicable_options(shape, options->distribution);
    check_output_file({"-o", options->output}, {});
    KokkosSession session(options->runtime);
    Kokkos::DefaultHostExecutionSpace host;
    if (find_snapshot_kind(options->distribution) != nullptr)
      generate_snapshot(host, *options);
    else
      generate_points(host, *options);
  });
}

}  // namespace treetrav::cli
