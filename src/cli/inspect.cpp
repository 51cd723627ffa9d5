// treetrav inspect FILE: what a points, results or snapshot file holds. It
// reads through the library's readers, so a file it summarises is valid input.
#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/io/hdf5.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/io/results.hpp>
#include <treetrav/io/snapshot.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <string>

namespace treetrav::cli {
namespace {

struct Range {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double value) {
    min = std::min(min, value);
    max = std::max(max, value);
  }
};

template <class Matrix>
Range column_range(Matrix const& matrix, std::size_t column) {
  Range range;
  for (std::size_t i = 0; i < matrix.extent(0); ++i) range.add(static_cast<double>(matrix(i, column)));
  return range;
}

template <class View>
Range overall_range(View const& view) {
  Range range;
  for (std::size_t i = 0; i < view.span(); ++i) range.add(static_cast<double>(view.data()[i]));
  return range;
}

// One line per column: "  x0  [min, max]"; snapshots name them x, y, z.
template <class Matrix>
void print_bounds(char const* title, Matrix const& matrix, bool xyz = false) {
  fmt::print("{}\n", title);
  for (std::size_t k = 0; k < matrix.extent(1); ++k) {
    Range const r = column_range(matrix, k);
    std::string const axis = xyz ? std::string(1, "xyz"[k]) : fmt::format("x{}", k);
    fmt::print("  {:<4} [{:.6g}, {:.6g}]\n", axis, r.min, r.max);
  }
}

// "NeighborIndices  1000 x 8  [0, 999]" for a results member that is present.
template <class View>
void print_member(char const* name, View const& view) {
  if (view.extent(0) == 0) return;
  Range const r = overall_range(view);
  std::string shape = fmt::format("{}", view.extent(0));
  if (View::rank == 2) shape += fmt::format(" x {}", view.extent(1));
  fmt::print("  {:<18} {:<12} [{:.6g}, {:.6g}]\n", name, shape, r.min, r.max);
}

void print_metadata(io::Metadata const& metadata) {
  if (metadata.text.empty() && metadata.numbers.empty()) return;
  fmt::print("metadata\n");
  for (auto const& [key, text] : metadata.text) fmt::print("  {} = {}\n", key, text);
  for (auto const& [key, number] : metadata.numbers) fmt::print("  {} = {:.10g}\n", key, number);
}

void print_header(std::string const& path, io::FileKind kind) {
  fmt::print("file        {}\nkind        {}\n", path, io::to_string(kind));
}

void inspect_points(std::string const& path) {
  auto const points = io::read_points(path);
  auto const metadata = io::read_metadata(path);  // before printing: it may throw
  print_header(path, io::FileKind::points);
  fmt::print("points      {}\n", points.size());
  fmt::print("dimension   {}\n", points.dimension());
  fmt::print("ids         {}\n", points.has_ids() ? "yes" : "no");
  print_bounds("bounding box", points.coordinates);
  print_metadata(metadata);
}

void inspect_results(std::string const& path) {
  auto const results = io::read_results(path);
  print_header(path, io::FileKind::results);
  fmt::print("application {}\n", results.application);
  fmt::print("datasets    (rows x columns, [min, max])\n");
  print_member("NeighborIndices", results.neighbor_indices);
  print_member("NeighborDistances", results.neighbor_distances);
  print_member("Counts", results.counts);
  print_member("Accelerations", results.accelerations);
  print_metadata(results.metadata);
}

void inspect_snapshot(std::string const& path) {
  auto const snapshot = io::read_snapshot(path);
  double total_mass = 0;
  for (std::size_t i = 0; i < snapshot.size(); ++i) total_mass += snapshot.masses(i);
  Range const masses = overall_range(snapshot.masses);
  print_header(path, io::FileKind::snapshot);
  fmt::print("bodies      {}\n", snapshot.size());
  fmt::print("time        {:.6g}\n", snapshot.time);
  fmt::print("box size    {}\n", snapshot.box_size > 0 ? fmt::format("{:.6g}", snapshot.box_size)
                                                       : std::string("open boundaries"));
  fmt::print("masses      total {:.6g}, [{:.6g}, {:.6g}]\n", total_mass, masses.min, masses.max);
  fmt::print("potentials  {}\n", snapshot.potentials.extent(0) != 0 ? "yes" : "no");
  print_bounds("bounding box", snapshot.coordinates, true);
  print_bounds("velocity range", snapshot.velocities, true);
  print_metadata(snapshot.metadata);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* command = app.add_subcommand("inspect", "Validate and summarise a treetrav HDF5 file");
  auto path = std::make_shared<std::string>();
  command->add_option("file", *path, "Points, results or snapshot file")
      ->required()
      ->check(file_name());
  command->callback([path] {
    io::FileKind const kind = io::detect_file_kind(*path);
    if (kind == io::FileKind::unknown)
      throw InputError(*path + ": no /Points, /Results or /PartType1 group: not a treetrav file");
    KokkosSession session(RuntimeOptions{});  // the readers allocate Kokkos host views
    if (kind == io::FileKind::points) inspect_points(*path);
    if (kind == io::FileKind::results) inspect_results(*path);
    if (kind == io::FileKind::snapshot) inspect_snapshot(*path);
  });
}

}  // namespace treetrav::cli
