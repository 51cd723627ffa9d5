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

struct PointReader::File {
  detail::FileReader reader;
};

PointReader::PointReader(std::string const& path)
    : file_(new File{detail::FileReader(path)}) {
  auto const& in = file_->reader;
  auto const shape = in.shape<Coordinate>(coordinates_dataset, 2);
  if (shape[0] == 0) in.fail(coordinates_dataset, "has no rows (empty set)");
  if (shape[0] > static_cast<hsize_t>(std::numeric_limits<Index>::max()))
    in.fail(coordinates_dataset, fmt::format("has {} rows, more than an Index can count", shape[0]));
  if (shape[1] < 1 || shape[1] > max_dimension)
    in.fail(coordinates_dataset, fmt::format("has {} columns: the dimension must be in 1..{}",
                                             shape[1], max_dimension));
  detail::require_attribute_agrees(in, points_group, "NumPoints", 0, shape[0],
                                   std::string("the number of rows of ") + coordinates_dataset);
  detail::require_attribute_agrees(in, points_group, "Dimension", 0, shape[1],
                                   std::string("the number of columns of ") + coordinates_dataset);
  size_ = static_cast<Index>(shape[0]);
  dimension_ = static_cast<int>(shape[1]);
  ids_ = in.exists(ids_dataset);
  if (ids_) {
    auto const ids = in.read<ParticleId>(ids_dataset, 1);
    detail::require_rows(in, ids_dataset, ids, shape[0], coordinates_dataset);
    detail::require_unique(in, ids_dataset, ids);
  }
}

PointReader::~PointReader() = default;
PointReader::PointReader(PointReader&&) noexcept = default;
PointReader& PointReader::operator=(PointReader&&) noexcept = default;

HostPointSet PointReader::read(Index first, Index count) const {
  auto const& in = file_->reader;
  auto const coordinates = in.read_rows<Coordinate>(coordinates_dataset, 2, first, count);
  detail::require_finite(in, coordinates_dataset, coordinates);
  HostPointSet points(detail::to_matrix(coordinates, "treetrav::io::points::coordinates"));
  if (ids_)
    points.ids = detail::to_vector(in.read_rows<ParticleId>(ids_dataset, 1, first, count),
                                   "treetrav::io::points::ids");
  return points;
}

HostPointSet read_points(std::string const& path) {
  PointReader const reader(path);
  return reader.read(0, reader.size());
}

}  // namespace treetrav::io
