#include <treetrav/core/error.hpp>
#include <treetrav/io/points.hpp>

#include "hdf5_file.hpp"

#include <fmt/core.h>

#include <limits>
#include <stdexcept>

namespace treetrav::io {
namespace {

constexpr char const points_group[] = "/Points";
constexpr char const coordinates_dataset[] = "/Points/Coordinates";
constexpr char const ids_dataset[] = "/Points/ParticleIDs";

}  // namespace

void write_points(std::string const& path, HostPointSet const& points, Metadata const& metadata) {
  // Refuse to write what read_points would reject.
  Index const n = points.size();
  int const dimension = points.dimension();
  if (n < 1) throw std::invalid_argument(path + ": refusing to write an empty point set");
  if (dimension < 1 || dimension > max_dimension)
    throw std::invalid_argument(fmt::format("{}: dimension {} is outside 1..{}", path, dimension,
                                            max_dimension));
  if (points.has_ids() && points.ids.extent(0) != static_cast<std::size_t>(n))
    throw std::invalid_argument(fmt::format("{}: {} ids for {} points", path,
                                            points.ids.extent(0), n));

  detail::write_atomically(path, [&](detail::FileWriter& out) {
    auto const group = out.create_group(points_group);
    out.set_attribute(group.get(), "NumPoints", std::int64_t{n});
    out.set_attribute(group.get(), "Dimension", std::int32_t{dimension});
    detail::write_matrix(out, coordinates_dataset, points.coordinates);
    if (points.has_ids()) detail::write_vector(out, ids_dataset, points.ids);
    out.write_metadata(detail::metadata_group, metadata);
  });
}

HostPointSet read_points(std::string const& path) {
  detail::FileReader const in(path);
  auto const coordinates = in.read<Coordinate>(coordinates_dataset, 2);
  detail::require_not_empty(in, coordinates_dataset, coordinates);
  if (coordinates.rows() > static_cast<hsize_t>(std::numeric_limits<Index>::max()))
    in.fail(coordinates_dataset, fmt::format("has {} rows, more than an Index can count",
                                             coordinates.rows()));
  if (coordinates.columns() < 1 || coordinates.columns() > max_dimension)
    in.fail(coordinates_dataset, fmt::format("has {} columns: the dimension must be in 1..{}",
                                             coordinates.columns(), max_dimension));
  detail::require_finite(in, coordinates_dataset, coordinates);
  detail::require_attribute_agrees(in, points_group, "NumPoints", 0, coordinates.rows(),
                                   std::string("the number of rows of ") + coordinates_dataset);
  detail::require_attribute_agrees(in, points_group, "Dimension", 0, coordinates.columns(),
                                   std::string("the number of columns of ") + coordinates_dataset);

  HostPointSet points(detail::to_matrix(coordinates, "treetrav::io::points::coordinates"));
  if (in.exists(ids_dataset)) {
    auto const ids = in.read<ParticleId>(ids_dataset, 1);
    detail::require_rows(in, ids_dataset, ids, coordinates.rows(), coordinates_dataset);
    detail::require_unique(in, ids_dataset, ids);
    points.ids = detail::to_vector(ids, "treetrav::io::points::ids");
  }
  return points;
}

}  // namespace treetrav::io
