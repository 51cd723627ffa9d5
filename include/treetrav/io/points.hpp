#pragma once

#include <treetrav/core/point_set.hpp>
#include <treetrav/io/metadata.hpp>

#include <string>

namespace treetrav::io {

using HostPointSet = PointSet<Kokkos::HostSpace>;

// File layout (README "File formats"):
//   /Points/Coordinates   float32 (n, d), row i = point i
//   /Points/ParticleIDs   int64 (n), optional
//   /Points attributes    NumPoints (int64), Dimension (int32)
//   /RunMetadata          attributes from `metadata`
// Written to a temporary file in the same directory and renamed into place.
void write_points(std::string const& path, HostPointSet const& points,
                  Metadata const& metadata = {});

// Validates rank, type, shape, dimension (1..max_dimension), n >= 1 and
// finiteness; throws InputError naming the file and dataset otherwise.
HostPointSet read_points(std::string const& path);

}  // namespace treetrav::io
