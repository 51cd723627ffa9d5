#pragma once

#include <treetrav/core/point_set.hpp>
#include <treetrav/io/metadata.hpp>

#include <memory>
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

// A points file read a block of rows at a time: the queries of a batch job
// larger than memory. Opening checks what read_points does (the ids whole),
// but finiteness, which each read() checks for its rows; its errors name the
// file's rows.
class PointReader {
 public:
  explicit PointReader(std::string const& path);
  ~PointReader();
  PointReader(PointReader&&) noexcept;
  PointReader& operator=(PointReader&&) noexcept;

  Index size() const { return size_; }
  int dimension() const { return dimension_; }
  // Rows [first, first + count), with their ids when the file has them.
  HostPointSet read(Index first, Index count) const;

 private:
  struct File;
  std::unique_ptr<File> file_;
  Index size_ = 0;
  int dimension_ = 0;
  bool ids_ = false;
};

}  // namespace treetrav::io
