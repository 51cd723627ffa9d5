// HDF5 I/O: round trips of points, results and snapshots, the on-disk layout
// seen through the C API, the readers' validation (errors name the file and the
// dataset, HDF5 prints nothing), and the atomic writer.
#include <treetrav/core/error.hpp>
#include <treetrav/io/hdf5.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/io/results.hpp>
#include <treetrav/io/snapshot.hpp>

#include "../src/io/hdf5_file.hpp"  // detail::Handle and write_atomically
#include "input_errors.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace treetrav::io {
namespace {

namespace fs = std::filesystem;
using detail::Handle;
using test::expect_input_error;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    auto const* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("treetrav-io-" + std::string(test->test_suite_name()) + "-" + test->name() + "-" +
             std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(std::string const& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (auto const& entry : fs::directory_iterator(path_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::string file_bytes(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Deterministic, non-trivial values (not exactly representable in decimal).
float coordinate(int i, int k) { return static_cast<float>(std::sin(0.37 * i + 1.1 * k) * 10); }

HostPointSet make_points(Index n, int dimension, bool with_ids) {
  auto points = allocate_points<Kokkos::HostSpace>("test", n, dimension, with_ids);
  for (Index i = 0; i < n; ++i) {
    for (int k = 0; k < dimension; ++k) points.coordinates(i, k) = coordinate(i, k);
    if (with_ids) points.ids(i) = (ParticleId{1} << 40) + 3 * i;  // beyond 32 bits
  }
  return points;
}

Snapshot make_snapshot(std::size_t n, bool with_potentials) {
  Snapshot snapshot = allocate_snapshot(n, with_potentials);
  for (std::size_t i = 0; i < n; ++i) {
    double const x = static_cast<double>(i);
    for (int k = 0; k < 3; ++k) {
      snapshot.coordinates(i, k) = std::sin(0.1 * x + k);
      snapshot.velocities(i, k) = std::cos(0.2 * x - k) / 3;
    }
    snapshot.masses(i) = 1.0 / static_cast<double>(n) + 1e-3 * x;
    snapshot.ids(i) = static_cast<ParticleId>(1000 + i);
    if (with_potentials) snapshot.potentials(i) = -1.0 - 0.01 * x;
  }
  snapshot.time = 2.5;
  snapshot.box_size = 8.0;
  return snapshot;
}

// ---- direct C API access, bypassing the library's writers and readers

Handle open_or_create(std::string const& path) {
  if (fs::exists(path)) return Handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
}

// Writes (or replaces) `dataset` of the given type and shape in `path`.
void write_raw(std::string const& path, std::string const& dataset, hid_t file_type,
               hid_t memory_type, std::vector<hsize_t> const& shape, void const* values) {
  Handle const file = open_or_create(path);
  ASSERT_TRUE(file.valid());
  Handle const links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(links.get(), 1);
  if (H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) > 0)
    H5Ldelete(file.get(), dataset.c_str(), H5P_DEFAULT);
  Handle const space(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                     H5Sclose);
  Handle const set(H5Dcreate2(file.get(), dataset.c_str(), file_type, space.get(), links.get(),
                              H5P_DEFAULT, H5P_DEFAULT),
                   H5Dclose);
  ASSERT_TRUE(set.valid());
  hsize_t count = 1;
  for (auto extent : shape) count *= extent;
  if (count > 0) {
    ASSERT_GE(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
  }
}

void write_raw_floats(std::string const& path, std::string const& dataset,
                      std::vector<hsize_t> const& shape, std::vector<float> const& values) {
  write_raw(path, dataset, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, shape, values.data());
}

void delete_link(std::string const& path, std::string const& object) {
  Handle const file = open_or_create(path);
  ASSERT_GE(H5Ldelete(file.get(), object.c_str(), H5P_DEFAULT), 0);
}

template <class T>
std::vector<T> read_raw(std::string const& path, std::string const& dataset, hid_t memory_type,
                        std::vector<hsize_t>& shape) {
  Handle const file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  Handle const set(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  Handle const space(H5Dget_space(set.get()), H5Sclose);
  shape.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())), 0);
  H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr);
  std::vector<T> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  EXPECT_GE(H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  return values;
}

// Whether the on-disk type of `dataset` equals `expected` (e.g. H5T_IEEE_F32LE).
bool stored_as(std::string const& path, std::string const& dataset, hid_t expected) {
  Handle const file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  Handle const set(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  Handle const type(H5Dget_type(set.get()), H5Tclose);
  return H5Tequal(type.get(), expected) > 0;
}

template <class T>
std::vector<T> read_attribute(std::string const& path, std::string const& object,
                              std::string const& name, hid_t memory_type) {
  Handle const file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  Handle const attribute(
      H5Aopen_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  EXPECT_TRUE(attribute.valid()) << object << " attribute " << name;
  if (!attribute.valid()) return {};
  Handle const space(H5Aget_space(attribute.get()), H5Sclose);
  std::vector<T> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  EXPECT_GE(H5Aread(attribute.get(), memory_type, values.data()), 0);
  return values;
}

// Writes (or replaces) an int64 attribute of `object`: a scalar for one value, else 1-D.
void write_raw_attribute(std::string const& path, std::string const& object,
                         std::string const& name, std::vector<std::int64_t> const& values) {
  Handle const file = open_or_create(path);
  ASSERT_TRUE(file.valid());
  if (H5Aexists_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    H5Adelete_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT);
  hsize_t const count = values.size();
  Handle const space(
      values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), H5Sclose);
  Handle const attribute(H5Acreate_by_name(file.get(), object.c_str(), name.c_str(), H5T_STD_I64LE,
                                           space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         H5Aclose);
  ASSERT_TRUE(attribute.valid());
  ASSERT_GE(H5Awrite(attribute.get(), H5T_NATIVE_INT64, values.data()), 0);
}

bool has_attribute(std::string const& path, std::string const& object, std::string const& name) {
  Handle const file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  return H5Aexists_by_name(file.get(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

bool has_link(std::string const& path, std::string const& object) {
  Handle const file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  return H5Lexists(file.get(), object.c_str(), H5P_DEFAULT) > 0;
}

void expect_same_points(HostPointSet const& expected, HostPointSet const& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(actual.dimension(), expected.dimension());
  ASSERT_EQ(actual.ids.extent(0), expected.ids.extent(0));
  for (Index i = 0; i < expected.size(); ++i)
    for (int k = 0; k < expected.dimension(); ++k)
      ASSERT_EQ(actual(i, k), expected(i, k)) << "point " << i << " coordinate " << k;
  for (std::size_t i = 0; i < expected.ids.extent(0); ++i) ASSERT_EQ(actual.ids(i), expected.ids(i));
}

template <class View>
void expect_same_view(View const& expected, View const& actual) {
  for (unsigned r = 0; r < View::rank; ++r) ASSERT_EQ(actual.extent(r), expected.extent(r));
  for (std::size_t i = 0; i < expected.span(); ++i)
    ASSERT_EQ(actual.data()[i], expected.data()[i]) << "element " << i;
}

// ============================================================== points

TEST(IoPoints, RoundTripsInEveryDimensionWithAndWithoutIds) {
  TempDir dir;
  for (int dimension : {1, 3, 7, 16, 128, 784, max_dimension}) {
    for (bool with_ids : {false, true}) {
      SCOPED_TRACE("d=" + std::to_string(dimension) + (with_ids ? " with ids" : " without ids"));
      auto const path = dir.file("points.h5");
      auto const points = make_points(37, dimension, with_ids);
      write_points(path, points);
      auto const back = read_points(path);
      EXPECT_EQ(back.has_ids(), with_ids);
      expect_same_points(points, back);
    }
  }
}

TEST(IoPoints, ReaderGivesTheFilesRowsBlockByBlock) {
  TempDir dir;
  for (bool with_ids : {false, true}) {
    auto const path = dir.file("points.h5");
    auto const points = make_points(50, 3, with_ids);
    write_points(path, points);
    PointReader const reader(path);
    EXPECT_EQ(reader.size(), 50);
    EXPECT_EQ(reader.dimension(), 3);
    for (auto [first, count] : {std::pair{0, 7}, {7, 43}, {49, 1}, {0, 50}}) {
      auto expected = allocate_points<Kokkos::HostSpace>("rows", count, 3, with_ids);
      for (Index i = 0; i < count; ++i) {
        for (int k = 0; k < 3; ++k) expected.coordinates(i, k) = points(first + i, k);
        if (with_ids) expected.ids(i) = points.ids(first + i);
      }
      expect_same_points(expected, reader.read(first, count));
    }
    EXPECT_THROW(reader.read(45, 6), InputError);  // past the last row
  }
}

TEST(IoPoints, StoresFloat32RowMajorWithCountAttributes) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  auto const points = make_points(11, 4, true);
  write_points(path, points);

  EXPECT_TRUE(stored_as(path, "/Points/Coordinates", H5T_IEEE_F32LE));
  EXPECT_TRUE(stored_as(path, "/Points/ParticleIDs", H5T_STD_I64LE));
  std::vector<hsize_t> shape;
  auto const values = read_raw<float>(path, "/Points/Coordinates", H5T_NATIVE_FLOAT, shape);
  ASSERT_EQ(shape, (std::vector<hsize_t>{11, 4}));
  for (int i = 0; i < 11; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(values[i * 4 + k], points(i, k)) << i << "," << k;
  EXPECT_EQ(read_attribute<std::int64_t>(path, "/Points", "NumPoints", H5T_NATIVE_INT64),
            std::vector<std::int64_t>{11});
  EXPECT_EQ(read_attribute<int>(path, "/Points", "Dimension", H5T_NATIVE_INT),
            std::vector<int>{4});
}

TEST(IoPoints, ReadsFloat64CoordinatesWrittenByOtherTools) {
  TempDir dir;
  auto const path = dir.file("numpy.h5");
  std::vector<double> values = {0.5, -1.25, 2, 3.75, 1e-3, 7};
  write_raw(path, "/Points/Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 2}, values.data());
  auto const points = read_points(path);
  ASSERT_EQ(points.size(), 3);
  ASSERT_EQ(points.dimension(), 2);
  EXPECT_EQ(points(1, 0), 2.0f);
  EXPECT_EQ(points(2, 0), 1e-3f);
  EXPECT_EQ(points(2, 1), 7.0f);
  EXPECT_FALSE(points.has_ids());
}

TEST(IoPoints, MetadataRoundTripsAsRunMetadataAttributes) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  Metadata metadata;
  metadata.set("generator", std::string("plummer")).set("seed", 42.0).set("scale", 0.125);
  metadata.set("note", std::string(""));
  write_points(path, make_points(5, 3, false), metadata);
  auto const back = read_metadata(path);
  EXPECT_EQ(back.text, metadata.text);
  EXPECT_EQ(back.numbers, metadata.numbers);
  EXPECT_TRUE(has_attribute(path, "/RunMetadata", "seed"));
}

// Attributes as other tools write them: fixed-length strings and integers.
void write_raw_attribute(std::string const& path, std::string const& object,
                         std::string const& name, hid_t type, hsize_t count, void const* value) {
  Handle const file = open_or_create(path);
  Handle const space(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr),
                     H5Sclose);
  Handle const attribute(H5Acreate_by_name(file.get(), object.c_str(), name.c_str(), type,
                                           space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         H5Aclose);
  ASSERT_TRUE(attribute.valid());
  ASSERT_GE(H5Awrite(attribute.get(), type, value), 0);
}

TEST(IoPoints, ReadsMetadataWrittenByOtherTools) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  write_points(path, make_points(2, 2, false));
  Handle const fixed(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(fixed.get(), 8);
  char const text[8] = "fixed";
  write_raw_attribute(path, "/RunMetadata", "label", fixed.get(), 1, text);
  int const count = 7;
  write_raw_attribute(path, "/RunMetadata", "count", H5T_NATIVE_INT, 1, &count);
  auto const metadata = read_metadata(path);
  EXPECT_EQ(metadata.text.at("label"), "fixed");
  EXPECT_EQ(metadata.numbers.at("count"), 7.0);

  double const several[3] = {1, 2, 3};
  write_raw_attribute(path, "/RunMetadata", "several", H5T_NATIVE_DOUBLE, 3, several);
  expect_input_error([&] { read_metadata(path); }, path, {"/RunMetadata", "several"});
}

TEST(IoPoints, WriterRejectsInvalidSetsWithoutCreatingAFile) {
  TempDir dir;
  auto const path = dir.file("bad.h5");
  auto points = make_points(4, 3, true);
  points.ids = HostPointSet::ids_view("short ids", 3);
  EXPECT_THROW(write_points(path, points), std::invalid_argument);
  EXPECT_THROW(write_points(path, make_points(0, 3, false)), std::invalid_argument);
  EXPECT_THROW(write_points(path, make_points(2, max_dimension + 1, false)), std::invalid_argument);
  EXPECT_TRUE(dir.entries().empty());
}

// ============================================================== reader errors

TEST(IoReadErrors, MissingFile) {
  TempDir dir;
  auto const path = dir.file("does-not-exist.h5");
  auto const message = expect_input_error([&] { read_points(path); }, path);
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  expect_input_error([&] { read_snapshot(path); }, path);
  expect_input_error([&] { read_results(path); }, path);
}

TEST(IoReadErrors, NotAnHdf5File) {
  TempDir dir;
  auto const path = dir.file("text.h5");
  std::ofstream(path) << "x y z\n1 2 3\n";
  auto const message = expect_input_error([&] { read_points(path); }, path);
  EXPECT_NE(message.find("not an HDF5 file"), std::string::npos) << message;
}

TEST(IoReadErrors, TruncatedFile) {
  TempDir dir;
  auto const path = dir.file("truncated.h5");
  write_points(path, make_points(2000, 3, true));
  fs::resize_file(path, fs::file_size(path) / 2);
  expect_input_error([&] { read_points(path); }, path);
}

TEST(IoReadErrors, HdfPrintsNothingOnFailure) {
  TempDir dir;
  auto const path = dir.file("truncated.h5");
  write_points(path, make_points(2000, 3, false));
  fs::resize_file(path, fs::file_size(path) / 2);
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(read_points(path), InputError);
  EXPECT_THROW(read_snapshot(dir.file("missing.h5")), InputError);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(IoReadErrors, MissingDatasetNamesIt) {
  TempDir dir;
  auto const path = dir.file("results.h5");
  QueryResults results;
  results.application = "pc";
  results.counts = QueryResults::HostVector<std::int64_t>("counts", 3);
  write_results(path, results);
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "missing"});
  expect_input_error([&] { read_snapshot(path); }, path, {"/PartType1/Coordinates"});
}

TEST(IoReadErrors, WrongRank) {
  TempDir dir;
  auto const path = dir.file("rank1.h5");
  write_raw_floats(path, "/Points/Coordinates", {6}, {1, 2, 3, 4, 5, 6});
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "rank 1"});
}

TEST(IoReadErrors, IntegerCoordinates) {
  TempDir dir;
  auto const path = dir.file("int.h5");
  std::vector<int> values = {1, 2, 3, 4, 5, 6};
  write_raw(path, "/Points/Coordinates", H5T_STD_I32LE, H5T_NATIVE_INT, {2, 3}, values.data());
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "integer"});
}

TEST(IoReadErrors, StringCoordinates) {
  TempDir dir;
  auto const path = dir.file("string.h5");
  Handle const type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), 4);
  char const values[2][3][4] = {{"a", "b", "c"}, {"d", "e", "f"}};
  write_raw(path, "/Points/Coordinates", type.get(), type.get(), {2, 3}, values);
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "string"});
}

TEST(IoReadErrors, FloatParticleIds) {
  TempDir dir;
  auto const path = dir.file("ids.h5");
  write_points(path, make_points(3, 2, false));
  write_raw_floats(path, "/Points/ParticleIDs", {3}, {1, 2, 3});
  expect_input_error([&] { read_points(path); }, path, {"/Points/ParticleIDs", "floating-point"});
}

TEST(IoReadErrors, NanCoordinateNamesTheRow) {
  TempDir dir;
  auto const path = dir.file("nan.h5");
  auto points = make_points(10, 3, false);
  points.coordinates(6, 2) = std::numeric_limits<float>::quiet_NaN();
  write_points(path, points);  // writers do not check values; readers must
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "row 6", "NaN"});
}

TEST(IoReadErrors, NanInALaterBlockNamesTheFilesRow) {
  TempDir dir;
  auto const path = dir.file("nan.h5");
  auto points = make_points(50, 3, false);
  points.coordinates(37, 1) = std::numeric_limits<float>::quiet_NaN();
  write_points(path, points);
  PointReader const reader(path);  // finiteness is checked block by block
  EXPECT_EQ(reader.read(0, 30).size(), 30);
  expect_input_error([&] { reader.read(30, 20); }, path,
                     {"/Points/Coordinates", "row 37, column 1", "NaN"});
}

TEST(IoReadErrors, EmptySet) {
  TempDir dir;
  auto const path = dir.file("empty.h5");
  write_raw_floats(path, "/Points/Coordinates", {0, 3}, {});
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", "empty"});
}

TEST(IoReadErrors, DimensionOutOfRange) {
  TempDir dir;
  auto const path = dir.file("too-wide.h5");
  hsize_t const too_wide = max_dimension + 1;
  write_raw_floats(path, "/Points/Coordinates", {2, too_wide}, std::vector<float>(2 * too_wide, 1.0f));
  expect_input_error([&] { read_points(path); }, path, {"/Points/Coordinates", std::to_string(too_wide)});
  auto const zero = dir.file("d0.h5");
  write_raw_floats(zero, "/Points/Coordinates", {2, 0}, {});
  expect_input_error([&] { read_points(zero); }, zero, {"/Points/Coordinates"});
}

TEST(IoReadErrors, IdsLengthMismatch) {
  TempDir dir;
  auto const path = dir.file("ids.h5");
  write_points(path, make_points(5, 3, true));
  std::vector<std::int64_t> ids = {1, 2, 3, 4};
  write_raw(path, "/Points/ParticleIDs", H5T_STD_I64LE, H5T_NATIVE_INT64, {4}, ids.data());
  expect_input_error([&] { read_points(path); }, path,
                     {"/Points/ParticleIDs", "4 rows", "/Points/Coordinates"});
}

// ============================================================== results

QueryResults make_results() {
  QueryResults results;
  results.application = "knn";
  int const n = 9, k = 4;
  results.neighbor_indices = QueryResults::HostRows<Index>("indices", n, k);
  results.neighbor_distances = QueryResults::HostRows<Coordinate>("distances", n, k);
  results.counts = QueryResults::HostVector<std::int64_t>("counts", n);
  results.list_offsets = QueryResults::HostVector<std::int64_t>("offsets", n + 1);
  results.list_indices = QueryResults::HostVector<Index>("list_indices", 2 * n);
  results.list_distances = QueryResults::HostVector<Coordinate>("list_distances", 2 * n);
  for (int i = 0; i <= n; ++i) results.list_offsets(i) = i < 3 ? 0 : 2 * i - 2 * 3 + (i == n ? 6 : 0);
  for (int j = 0; j < 2 * n; ++j) {
    results.list_indices(j) = (j * 5) % n;
    results.list_distances(j) = 0.25f * j;
  }
  results.accelerations = QueryResults::HostMatrix<double>("accelerations", n, 3);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) {
      results.neighbor_indices(i, j) = (i * 7 + j * 3) % n;
      results.neighbor_distances(i, j) = coordinate(i, j) * coordinate(i, j) + static_cast<float>(j);
    }
    results.counts(i) = (std::int64_t{1} << 35) + i;
    for (int c = 0; c < 3; ++c) results.accelerations(i, c) = std::exp(-0.3 * i) * (c - 1.5);
  }
  results.metadata.set("strategy", std::string("autoropes")).set("seconds", 0.0123);
  return results;
}

// Every member and the metadata of two results, value for value.
void expect_same_results(QueryResults const& expected, QueryResults const& actual) {
  expect_same_view(expected.neighbor_indices, actual.neighbor_indices);
  expect_same_view(expected.neighbor_distances, actual.neighbor_distances);
  expect_same_view(expected.counts, actual.counts);
  expect_same_view(expected.list_offsets, actual.list_offsets);
  expect_same_view(expected.list_indices, actual.list_indices);
  expect_same_view(expected.list_distances, actual.list_distances);
  expect_same_view(expected.accelerations, actual.accelerations);
  EXPECT_EQ(actual.metadata.text, expected.metadata.text);
  EXPECT_EQ(actual.metadata.numbers, expected.metadata.numbers);
}

TEST(IoResults, RoundTripsEveryMember) {
  TempDir dir;
  auto const path = dir.file("results.h5");
  auto const results = make_results();
  write_results(path, results);
  auto const back = read_results(path);
  EXPECT_EQ(back.application, "knn");
  expect_same_results(results, back);

  // Row i of the dataset is query i.
  std::vector<hsize_t> shape;
  auto const indices = read_raw<int>(path, "/Results/NeighborIndices", H5T_NATIVE_INT, shape);
  ASSERT_EQ(shape, (std::vector<hsize_t>{9, 4}));
  EXPECT_EQ(indices[5 * 4 + 2], results.neighbor_indices(5, 2));
}

TEST(IoResults, StoresOnlyPresentMembers) {
  TempDir dir;
  auto const path = dir.file("bh.h5");
  auto results = make_results();
  results.application = "bh";
  results.neighbor_indices = {};
  results.neighbor_distances = {};
  results.counts = {};
  write_results(path, results);
  EXPECT_FALSE(has_link(path, "/Results/NeighborIndices"));
  EXPECT_FALSE(has_link(path, "/Results/Counts"));
  EXPECT_TRUE(has_link(path, "/Results/Accelerations"));
  auto const back = read_results(path);
  EXPECT_EQ(back.application, "bh");
  EXPECT_EQ(back.neighbor_indices.extent(0), 0u);
  EXPECT_EQ(back.neighbor_distances.extent(0), 0u);
  EXPECT_EQ(back.counts.extent(0), 0u);
  expect_same_view(results.accelerations, back.accelerations);
}

TEST(IoResults, InfiniteDistanceMarksMissingNeighbourButNanIsRejected) {
  TempDir dir;
  auto const path = dir.file("knn.h5");
  auto results = make_results();
  results.neighbor_distances(3, 3) = std::numeric_limits<float>::infinity();
  write_results(path, results);
  EXPECT_TRUE(std::isinf(read_results(path).neighbor_distances(3, 3)));

  results.neighbor_distances(4, 1) = std::numeric_limits<float>::quiet_NaN();
  write_results(path, results);
  expect_input_error([&] { read_results(path); }, path,
                     {"/Results/NeighborDistances", "row 4", "NaN"});
}

TEST(IoResults, RejectsIndicesAndDistancesOfDifferentShape) {
  TempDir dir;
  auto const path = dir.file("knn.h5");
  write_results(path, make_results());
  write_raw_floats(path, "/Results/NeighborDistances", {8, 4}, std::vector<float>(32, 1.0f));
  expect_input_error([&] { read_results(path); }, path,
                     {"/Results/NeighborDistances", "/Results/NeighborIndices"});
}

// Rows [first, first + count) of one search's results, as a search of
// those queries alone gives them (list offsets count from the block's first).
QueryResults block_of(QueryResults const& whole, Index first, Index count) {
  QueryResults block;
  auto const rows = std::make_pair(std::size_t(first), std::size_t(first + count));
  if (whole.neighbor_indices.extent(0) != 0) {
    block.neighbor_indices = Kokkos::subview(whole.neighbor_indices, rows, Kokkos::ALL);
    block.neighbor_distances = Kokkos::subview(whole.neighbor_distances, rows, Kokkos::ALL);
  }
  if (whole.counts.extent(0) != 0) block.counts = Kokkos::subview(whole.counts, rows);
  if (whole.list_offsets.extent(0) != 0) {
    std::int64_t const begin = whole.list_offsets(first), end = whole.list_offsets(first + count);
    block.list_offsets = QueryResults::HostVector<std::int64_t>("offsets", count + 1);
    for (Index q = 0; q <= count; ++q) block.list_offsets(q) = whole.list_offsets(first + q) - begin;
    auto const listed = std::make_pair(std::size_t(begin), std::size_t(end));
    block.list_indices = Kokkos::subview(whole.list_indices, listed);
    block.list_distances = Kokkos::subview(whole.list_distances, listed);
  }
  return block;
}

// One search's members of make_results(): neighbour rows, counts or lists.
std::vector<QueryResults> search_results() {
  auto const all = make_results();
  std::vector<QueryResults> searches(3);
  for (auto& search : searches) {
    search.application = "knn";
    search.metadata = all.metadata;
  }
  searches[0].neighbor_indices = all.neighbor_indices;
  searches[0].neighbor_distances = all.neighbor_distances;
  searches[1].counts = all.counts;
  searches[2].list_offsets = all.list_offsets;
  searches[2].list_indices = all.list_indices;
  searches[2].list_distances = all.list_distances;
  return searches;
}

TEST(IoResults, StreamInBlocksEqualsOneWrite) {
  TempDir dir;
  for (auto const& search : search_results()) {
    write_results(dir.file("one.h5"), search);
    ResultsStream stream(dir.file("blocks.h5"), search.application, 9);
    for (auto [first, count] : {std::pair{0, 4}, {4, 1}, {5, 4}})
      stream.write(first, block_of(search, first, count));
    stream.commit(search.metadata);
    auto const one = read_results(dir.file("one.h5"));
    auto const blocks = read_results(dir.file("blocks.h5"));
    EXPECT_EQ(blocks.application, one.application);
    expect_same_results(one, blocks);
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"blocks.h5", "one.h5"}));
}

TEST(IoResults, StreamNotCommittedLeavesAnExistingFileAlone) {
  TempDir dir;
  auto const path = dir.file("results.h5");
  write_results(path, make_results());
  auto const before = file_bytes(path);
  auto const counts = search_results()[1];
  {
    ResultsStream stream(path, "pc", 9);
    stream.write(0, block_of(counts, 0, 4));
    EXPECT_THROW(stream.write(5, block_of(counts, 5, 4)), std::logic_error);  // skips a query
    EXPECT_THROW(stream.commit({}), std::logic_error);                        // 4 of 9 queries
  }
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"results.h5"}));
}

TEST(IoResults, RejectsAPointsFile) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  write_points(path, make_points(3, 3, false));
  expect_input_error([&] { read_results(path); }, path, {"/Results"});
}

// ============================================================== snapshots

void expect_same_snapshot(Snapshot const& expected, Snapshot const& actual) {
  expect_same_view(expected.coordinates, actual.coordinates);
  expect_same_view(expected.velocities, actual.velocities);
  expect_same_view(expected.masses, actual.masses);
  expect_same_view(expected.ids, actual.ids);
  expect_same_view(expected.potentials, actual.potentials);
  EXPECT_EQ(actual.time, expected.time);
  EXPECT_EQ(actual.box_size, expected.box_size);
  EXPECT_EQ(actual.metadata.text, expected.metadata.text);
  EXPECT_EQ(actual.metadata.numbers, expected.metadata.numbers);
}

TEST(IoSnapshot, AllocateSnapshotShapes) {
  auto const with = allocate_snapshot(5, true);
  EXPECT_EQ(with.size(), 5u);
  EXPECT_EQ(with.coordinates.extent(1), 3u);
  EXPECT_EQ(with.velocities.extent(0), 5u);
  EXPECT_EQ(with.ids.extent(0), 5u);
  EXPECT_EQ(with.potentials.extent(0), 5u);
  EXPECT_EQ(allocate_snapshot(5).potentials.extent(0), 0u);
}

TEST(IoSnapshot, RoundTripsAllFields) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  auto snapshot = make_snapshot(50, true);
  snapshot.metadata.set("model", std::string("plummer")).set("virial_ratio", 0.5);
  write_snapshot(path, snapshot);
  expect_same_snapshot(snapshot, read_snapshot(path));

  auto const without = make_snapshot(20, false);
  write_snapshot(path, without);
  auto const back = read_snapshot(path);
  EXPECT_EQ(back.potentials.extent(0), 0u);
  expect_same_snapshot(without, back);
}

// ---- several particle types and several files (GADGET/SWIFT conventions)

// 30 bodies of types 1, 2 and 4, interleaved in body order.
Snapshot make_typed_snapshot() {
  Snapshot snapshot = make_snapshot(30, true);
  snapshot.types = Snapshot::HostVector<std::int32_t>("types", 30);
  for (std::size_t i = 0; i < 30; ++i) snapshot.types(i) = i % 3 == 0 ? 4 : (i % 3 == 1 ? 1 : 2);
  return snapshot;
}

// The same bodies grouped by type (stable): the order every reader returns.
Snapshot grouped_by_type(Snapshot const& s) {
  Snapshot out = allocate_snapshot(s.size(), s.potentials.extent(0) != 0);
  out.types = Snapshot::HostVector<std::int32_t>("types", s.size());
  std::size_t at = 0;
  for (int type = 1; type <= 5; ++type)
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s.types(i) != type) continue;
      for (int k = 0; k < 3; ++k) out.coordinates(at, k) = s.coordinates(i, k), out.velocities(at, k) = s.velocities(i, k);
      out.masses(at) = s.masses(i);
      out.ids(at) = s.ids(i);
      if (s.potentials.extent(0) != 0) out.potentials(at) = s.potentials(i);
      out.types(at) = type;
      ++at;
    }
  out.time = s.time;
  out.box_size = s.box_size;
  out.metadata = s.metadata;
  return out;
}

TEST(IoSnapshot, SeveralParticleTypesRoundTrip) {
  TempDir dir;
  auto const path = dir.file("typed.h5");
  auto const snapshot = make_typed_snapshot();
  write_snapshot(path, snapshot);
  auto const u32 = [&](char const* name) {
    return read_attribute<std::uint32_t>(path, "/Header", name, H5T_NATIVE_UINT32);
  };
  EXPECT_EQ(u32("NumPart_ThisFile"), (std::vector<std::uint32_t>{0, 10, 10, 0, 10, 0}));
  EXPECT_EQ(u32("NumPart_Total"), (std::vector<std::uint32_t>{0, 10, 10, 0, 10, 0}));
  std::vector<hsize_t> shape;
  read_raw<double>(path, "/PartType4/Coordinates", H5T_NATIVE_DOUBLE, shape);
  EXPECT_EQ(shape, (std::vector<hsize_t>{10, 3}));
  auto const back = read_snapshot(path);
  auto const expected = grouped_by_type(snapshot);
  expect_same_snapshot(expected, back);
  expect_same_view(expected.types, back.types);
  // Dark matter only reads back without types.
  write_snapshot(path, make_snapshot(5, false));
  EXPECT_EQ(read_snapshot(path).types.extent(0), 0u);
}

TEST(IoSnapshot, SeveralFilesReadAsOne) {
  TempDir dir;
  auto const snapshot = make_typed_snapshot();
  auto const names = write_snapshot_files(dir.file("snap"), snapshot, 4);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[2], dir.file("snap") + ".2.hdf5");
  for (auto const& name : names)
    EXPECT_EQ(read_attribute<int>(name, "/Header", "NumFilesPerSnapshot", H5T_NATIVE_INT), std::vector<int>{4});
  EXPECT_EQ(read_attribute<std::uint32_t>(names[1], "/Header", "NumPart_Total", H5T_NATIVE_UINT32),
            (std::vector<std::uint32_t>{0, 10, 10, 0, 10, 0}));
  // Any file of the set reads the whole snapshot, in GADGET's order: type by
  // type, each type's files in turn; the same as one file of it all.
  auto const single = dir.file("single.h5");
  write_snapshot(single, snapshot);
  auto const whole = read_snapshot(single);
  for (auto const& name : names) {
    auto const back = read_snapshot(name);
    expect_same_snapshot(whole, back);
    expect_same_view(whole.types, back.types);
  }
  // A missing file of the set is named.
  fs::remove(names[3]);
  expect_input_error([&] { read_snapshot(names[0]); }, names[3]);
  // A name that does not follow <base>.<i>.hdf5 cannot find its siblings.
  fs::copy_file(names[0], dir.file("renamed.h5"));
  expect_input_error([&] { read_snapshot(dir.file("renamed.h5")); }, dir.file("renamed.h5"),
                     {"NumFilesPerSnapshot", "<base>.<i>.hdf5"});
}

// A share of the rows reads exactly those rows of the whole set, across
// types and files, and nothing else: blocks of 1 to 7 parts (parts with one
// body, a part inside one type's file, parts spanning files and types) put
// back together give the whole snapshot.
TEST(IoSnapshot, SharesOfTheRowsReadTheirBlocksAlone) {
  TempDir dir;
  auto const snapshot = make_typed_snapshot();
  auto const names = write_snapshot_files(dir.file("snap"), snapshot, 3);
  auto const single = dir.file("single.h5");
  write_snapshot(single, snapshot);
  auto const whole = read_snapshot(single);
  for (std::string const& path : {single, names[1]})
    for (int parts : {1, 2, 3, 7, 30, 31}) {
      std::size_t next = 0;
      for (int part = 0; part < parts; ++part) {
        SnapshotRows const share = read_snapshot(path, RowShare{part, parts});
        EXPECT_EQ(share.total, whole.size());
        EXPECT_EQ(share.first_row, next) << path << " part " << part << " of " << parts;
        std::size_t const n = share.bodies.size();
        EXPECT_EQ(n, (RowShare{part, parts}.of(whole.size()).size()));
        ASSERT_EQ(share.bodies.types.extent(0), n);
        for (std::size_t i = 0; i < n; ++i) {
          std::size_t const row = next + i;
          for (int k = 0; k < 3; ++k) {
            EXPECT_EQ(share.bodies.coordinates(i, k), whole.coordinates(row, k));
            EXPECT_EQ(share.bodies.velocities(i, k), whole.velocities(row, k));
          }
          EXPECT_EQ(share.bodies.masses(i), whole.masses(row));
          EXPECT_EQ(share.bodies.ids(i), whole.ids(row));
          EXPECT_EQ(share.bodies.potentials(i), whole.potentials(row));
          EXPECT_EQ(share.bodies.types(i), whole.types(row));
        }
        EXPECT_EQ(share.bodies.time, whole.time);
        next += n;
      }
      EXPECT_EQ(next, whole.size());
    }
}

// A bad value is found by the share that reads its row, named by its row in
// the file; the other shares read theirs.
TEST(IoSnapshot, ASharesBadRowIsNamed) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  write_snapshot(path, make_snapshot(40, false));
  {
    auto file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    auto set = H5Dopen2(file, "/PartType1/Masses", H5P_DEFAULT);
    std::vector<double> masses(40);
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, masses.data());
    masses[33] = -1;
    H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, masses.data());
    H5Dclose(set);
    H5Fclose(file);
  }
  EXPECT_EQ(read_snapshot(path, RowShare{0, 2}).bodies.size(), 20u);
  expect_input_error([&] { read_snapshot(path, RowShare{1, 2}); }, path, {"/PartType1/Masses", "33"});
}

TEST(IoSnapshot, GasAndMiscountsAreRefused) {
  TempDir dir;
  auto const path = dir.file("gas.h5");
  write_snapshot(path, make_snapshot(6, false));
  std::vector<double> gas(4 * 3, 0.5);
  write_raw(path, "/PartType0/Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4, 3}, gas.data());
  expect_input_error([&] { read_snapshot(path); }, path, {"/PartType0", "gas", "collisionless"});

  // NumPart_Total counting bodies no file holds.
  auto const miscounted = dir.file("miscounted.h5");
  write_snapshot(miscounted, make_snapshot(6, false));
  {
    Handle const file(H5Fopen(miscounted.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ASSERT_GE(H5Adelete_by_name(file.get(), "/Header", "NumPart_Total", H5P_DEFAULT), 0);
  }
  std::uint32_t const counts[6] = {0, 7, 0, 0, 0, 0};
  write_raw_attribute(miscounted, "/Header", "NumPart_Total", H5T_STD_U32LE, 6, counts);
  expect_input_error([&] { read_snapshot(miscounted); }, miscounted, {"NumPart_Total", "type 1"});
}

TEST(IoSnapshot, SwiftHeaderUnitsAndRowMajorLayout) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  std::size_t const n = 13;
  auto const snapshot = make_snapshot(n, true);
  write_snapshot(path, snapshot);

  auto const u32 = [&](char const* name) {
    return read_attribute<std::uint32_t>(path, "/Header", name, H5T_NATIVE_UINT32);
  };
  auto const f64 = [&](char const* object, char const* name) {
    return read_attribute<double>(path, object, name, H5T_NATIVE_DOUBLE);
  };
  auto const i32 = [&](char const* name) {
    return read_attribute<int>(path, "/Header", name, H5T_NATIVE_INT);
  };
  std::vector<std::uint32_t> const counts = {0, static_cast<std::uint32_t>(n), 0, 0, 0, 0};
  EXPECT_EQ(u32("NumPart_Total"), counts);
  EXPECT_EQ(u32("NumPart_ThisFile"), counts);
  EXPECT_EQ(u32("NumPart_Total_HighWord"), std::vector<std::uint32_t>(6, 0));
  EXPECT_EQ(f64("/Header", "MassTable"), std::vector<double>(6, 0.0));
  EXPECT_EQ(f64("/Header", "Time"), std::vector<double>{2.5});
  EXPECT_EQ(f64("/Header", "Redshift"), std::vector<double>{0.0});
  EXPECT_EQ(f64("/Header", "BoxSize"), std::vector<double>{8.0});
  EXPECT_EQ(i32("Dimension"), std::vector<int>{3});
  EXPECT_EQ(i32("NumFilesPerSnapshot"), std::vector<int>{1});
  EXPECT_EQ(i32("Flag_Entropy_ICs"), std::vector<int>{0});
  for (char const* unit : {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
                           "Unit time in cgs (U_t)", "Unit current in cgs (U_I)",
                           "Unit temperature in cgs (U_T)"})
    EXPECT_EQ(f64("/Units", unit), std::vector<double>{1.0}) << unit;
  EXPECT_TRUE(has_attribute(path, "/Units", "Description"));

  std::vector<hsize_t> shape;
  auto const coordinates =
      read_raw<double>(path, "/PartType1/Coordinates", H5T_NATIVE_DOUBLE, shape);
  ASSERT_EQ(shape, (std::vector<hsize_t>{n, 3}));
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(coordinates[i * 3 + k], snapshot.coordinates(i, k)) << i << "," << k;
  EXPECT_TRUE(stored_as(path, "/PartType1/Coordinates", H5T_IEEE_F64LE));
  EXPECT_TRUE(stored_as(path, "/PartType1/Velocities", H5T_IEEE_F64LE));
  EXPECT_TRUE(stored_as(path, "/PartType1/Masses", H5T_IEEE_F64LE));
  EXPECT_TRUE(stored_as(path, "/PartType1/Potentials", H5T_IEEE_F64LE));
  EXPECT_TRUE(stored_as(path, "/PartType1/ParticleIDs", H5T_STD_I64LE));

  auto const exponent = [&](char const* dataset, char const* name) {
    auto const values = read_attribute<float>(path, dataset, name, H5T_NATIVE_FLOAT);
    return values.size() == 1 ? values[0] : std::numeric_limits<float>::quiet_NaN();
  };
  EXPECT_EQ(exponent("/PartType1/Coordinates", "U_L exponent"), 1.0f);
  EXPECT_EQ(exponent("/PartType1/Velocities", "U_t exponent"), -1.0f);
  EXPECT_EQ(exponent("/PartType1/Masses", "U_M exponent"), 1.0f);
  EXPECT_EQ(exponent("/PartType1/Potentials", "U_L exponent"), 2.0f);
  for (char const* dataset : {"/PartType1/Coordinates", "/PartType1/Velocities",
                              "/PartType1/Masses", "/PartType1/ParticleIDs",
                              "/PartType1/Potentials"})
    for (char const* name : {"U_L exponent", "U_M exponent", "U_t exponent", "U_I exponent",
                             "U_T exponent", "a-scale exponent", "h-scale exponent",
                             "Description"})
      EXPECT_TRUE(has_attribute(path, dataset, name)) << dataset << " " << name;
}

TEST(IoSnapshot, RejectsInfiniteVelocityNamingTheRow) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  auto snapshot = make_snapshot(8, false);
  snapshot.velocities(5, 1) = -std::numeric_limits<double>::infinity();
  write_snapshot(path, snapshot);
  expect_input_error([&] { read_snapshot(path); }, path,
                     {"/PartType1/Velocities", "row 5", "infinite"});
}

TEST(IoSnapshot, RejectsNanCoordinate) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  auto snapshot = make_snapshot(8, false);
  snapshot.coordinates(7, 0) = std::nan("");
  write_snapshot(path, snapshot);
  expect_input_error([&] { read_snapshot(path); }, path, {"/PartType1/Coordinates", "row 7"});
}

TEST(IoSnapshot, RejectsNonPositiveMass) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  for (double mass : {0.0, -1.0}) {
    auto snapshot = make_snapshot(8, false);
    snapshot.masses(2) = mass;
    write_snapshot(path, snapshot);
    expect_input_error([&] { read_snapshot(path); }, path,
                       {"/PartType1/Masses", "row 2", "not positive"});
  }
}

TEST(IoSnapshot, RejectsShapeMismatchBetweenDatasets) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  write_snapshot(path, make_snapshot(6, false));
  std::vector<double> velocities(5 * 3, 0.0);
  write_raw(path, "/PartType1/Velocities", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {5, 3},
            velocities.data());
  expect_input_error([&] { read_snapshot(path); }, path,
                     {"/PartType1/Velocities", "5 rows", "/PartType1/Coordinates"});

  write_snapshot(path, make_snapshot(6, false));
  std::vector<double> planar(6 * 2, 0.0);
  write_raw(path, "/PartType1/Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {6, 2},
            planar.data());
  expect_input_error([&] { read_snapshot(path); }, path, {"/PartType1/Coordinates", "columns"});
}

TEST(IoSnapshot, RejectsEmptySnapshot) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  write_raw(path, "/PartType1/Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {0, 3}, nullptr);
  expect_input_error([&] { read_snapshot(path); }, path, {"/PartType1/Coordinates", "empty"});
  EXPECT_THROW(write_snapshot(dir.file("new.h5"), allocate_snapshot(0)), std::invalid_argument);
}

TEST(IoSnapshot, EqualMassesFromGadgetMassTable) {
  TempDir dir;
  auto const path = dir.file("gadget.h5");
  write_snapshot(path, make_snapshot(4, false));
  delete_link(path, "/PartType1/Masses");
  {
    Handle const file = open_or_create(path);
    ASSERT_GE(H5Adelete_by_name(file.get(), "/Header", "MassTable", H5P_DEFAULT), 0);
    hsize_t const six = 6;
    Handle const space(H5Screate_simple(1, &six, nullptr), H5Sclose);
    Handle const attribute(H5Acreate_by_name(file.get(), "/Header", "MassTable", H5T_IEEE_F64LE,
                                             space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                           H5Aclose);
    double const table[6] = {0, 0.25, 0, 0, 0, 0};
    ASSERT_GE(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, table), 0);
  }
  auto const snapshot = read_snapshot(path);
  ASSERT_EQ(snapshot.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(snapshot.masses(i), 0.25);
}

// ============================================================== file kinds

TEST(IoFileKind, DetectsEachLayout) {
  TempDir dir;
  write_points(dir.file("p.h5"), make_points(3, 2, false));
  write_results(dir.file("r.h5"), make_results());
  write_snapshot(dir.file("s.h5"), make_snapshot(3, false));
  write_raw_floats(dir.file("other.h5"), "/Something/Else", {1}, {1.0f});
  EXPECT_EQ(detect_file_kind(dir.file("p.h5")), FileKind::points);
  EXPECT_EQ(detect_file_kind(dir.file("r.h5")), FileKind::results);
  EXPECT_EQ(detect_file_kind(dir.file("s.h5")), FileKind::snapshot);
  EXPECT_EQ(detect_file_kind(dir.file("other.h5")), FileKind::unknown);
  expect_input_error([&] { detect_file_kind(dir.file("none.h5")); }, dir.file("none.h5"));
}

// ============================================================== files checked against themselves

TEST(IoSelfConsistency, PointsAttributesMustAgreeWithTheCoordinates) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  write_points(path, make_points(200, 3, true));
  EXPECT_EQ(read_points(path).size(), 200);
  write_raw_attribute(path, "/Points", "NumPoints", {1000});
  expect_input_error([&] { read_points(path); }, path,
                     {"/Points", "NumPoints is 1000", "rows of /Points/Coordinates is 200"});
  write_raw_attribute(path, "/Points", "NumPoints", {-1});
  expect_input_error([&] { read_points(path); }, path, {"NumPoints is -1"});
  write_raw_attribute(path, "/Points", "NumPoints", {200});
  write_raw_attribute(path, "/Points", "Dimension", {2});
  expect_input_error([&] { read_points(path); }, path,
                     {"Dimension is 2", "columns of /Points/Coordinates is 3"});
}

TEST(IoSelfConsistency, DuplicateIdsAreRefusedNamingTheFirstRepeat) {
  TempDir dir;
  auto points = make_points(20, 2, true);
  points.ids(12) = points.ids(1);
  points.ids(5) = points.ids(2); // the first repeat in row order
  write_points(dir.file("twice.h5"), points);
  auto const message =
      expect_input_error([&] { read_points(dir.file("twice.h5")); }, dir.file("twice.h5"),
                         {"/Points/ParticleIDs", "appears at rows 2 and 5"});
  EXPECT_NE(message.find(std::to_string(points.ids(2))), std::string::npos) << message;
  for (Index i = 0; i < points.size(); ++i)
    points.ids(i) = 7;
  write_points(dir.file("equal.h5"), points);
  expect_input_error([&] { read_points(dir.file("equal.h5")); }, dir.file("equal.h5"),
                     {"id 7 appears at rows 0 and 1"});

  auto snapshot = make_snapshot(30, false);
  snapshot.ids(29) = snapshot.ids(0);
  write_snapshot(dir.file("snapshot.h5"), snapshot);
  expect_input_error([&] { read_snapshot(dir.file("snapshot.h5")); }, dir.file("snapshot.h5"),
                     {"/PartType1/ParticleIDs", "id 1000 appears at rows 0 and 29"});
}

TEST(IoSelfConsistency, SnapshotHeaderMustAgreeWithTheBodies) {
  TempDir dir;
  auto const path = dir.file("snapshot.h5");
  auto const reset = [&] { write_snapshot(path, make_snapshot(50, false)); };
  reset();
  EXPECT_EQ(read_snapshot(path).size(), 50u);
  write_raw_attribute(path, "/Header", "NumPart_Total", {0, 1000, 0, 0, 0, 0});
  expect_input_error([&] { read_snapshot(path); }, path,
                     {"/Header", "NumPart_Total[1] is 1000", "is 50"});
  reset();
  write_raw_attribute(path, "/Header", "NumPart_ThisFile", {0, 49, 0, 0, 0, 0});
  expect_input_error([&] { read_snapshot(path); }, path, {"NumPart_ThisFile[1] is 49"});
  reset();
  write_raw_attribute(path, "/Header", "NumPart_Total_HighWord", {0, 1, 0, 0, 0, 0});
  expect_input_error([&] { read_snapshot(path); }, path, {"NumPart_Total_HighWord[1] is 1"});
  reset();
  write_raw_attribute(path, "/Header", "Dimension", {2});
  expect_input_error([&] { read_snapshot(path); }, path, {"Dimension is 2"});
  reset();
  write_raw_attribute(path, "/Header", "NumFilesPerSnapshot", {4});
  expect_input_error([&] { read_snapshot(path); }, path, {"NumFilesPerSnapshot is 4"});
  reset();
  write_raw_attribute(path, "/Header", "NumPart_Total", {0, 50}); // two types only: fine
  EXPECT_EQ(read_snapshot(path).size(), 50u);
  write_raw_attribute(path, "/Header", "NumPart_Total", {50});
  expect_input_error([&] { read_snapshot(path); }, path, {"NumPart_Total has 1 values"});
}

// ============================================================== atomic writes

TEST(IoAtomicWrite, LeavesNoTemporaryFilesAfterSuccess) {
  TempDir dir;
  write_points(dir.file("p.h5"), make_points(3, 2, false));
  write_results(dir.file("r.h5"), make_results());
  write_snapshot(dir.file("s.h5"), make_snapshot(3, false));
  write_points(dir.file("p.h5"), make_points(4, 2, false));  // overwrite
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"p.h5", "r.h5", "s.h5"}));
  EXPECT_EQ(read_points(dir.file("p.h5")).size(), 4);
}

TEST(IoAtomicWrite, MissingDirectoryThrowsAndCreatesNothing) {
  TempDir dir;
  auto const path = dir.file("no/such/dir/points.h5");
  expect_input_error([&] { write_points(path, make_points(3, 2, false)); }, path);
  EXPECT_THROW(write_snapshot(path, make_snapshot(3, false)), InputError);
  EXPECT_THROW(write_results(path, make_results()), InputError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(IoAtomicWrite, FailureMidWriteKeepsExistingFileAndRemovesTemporary) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  auto const original = make_points(6, 3, true);
  write_points(path, original);
  auto const before = file_bytes(path);

  // A write that fails after it has put data into the temporary file.
  bool wrote_something = false;
  EXPECT_THROW(detail::write_atomically(path,
                                        [&](detail::FileWriter& out) {
                                          auto const values = std::vector<float>(300, 1.0f);
                                          out.write("/Points", {100, 3}, values.data());
                                          wrote_something = true;
                                          throw std::runtime_error("simulated failure");
                                        }),
               std::runtime_error);
  EXPECT_TRUE(wrote_something);
  EXPECT_EQ(file_bytes(path), before);
  expect_same_points(original, read_points(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"points.h5"});
}

TEST(IoAtomicWrite, HdfFailureMidWriteKeepsExistingFile) {
  TempDir dir;
  auto const path = dir.file("snap.h5");
  write_snapshot(path, make_snapshot(5, false));
  auto const before = file_bytes(path);
  // The same metadata key as text and as a number fails inside the writer.
  auto snapshot = make_snapshot(9, true);
  snapshot.metadata.set("key", std::string("text")).set("key", 1.0);
  EXPECT_THROW(write_snapshot(path, snapshot), std::runtime_error);
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"snap.h5"});
}

TEST(IoAtomicWrite, InvalidArgumentKeepsExistingFile) {
  TempDir dir;
  auto const path = dir.file("points.h5");
  write_points(path, make_points(6, 3, false));
  auto const before = file_bytes(path);
  auto bad = make_points(6, 3, true);
  bad.ids = HostPointSet::ids_view("ids", 5);
  EXPECT_THROW(write_points(path, bad), std::invalid_argument);
  EXPECT_EQ(file_bytes(path), before);
}

TEST(IoAtomicWrite, TargetThatIsADirectoryIsLeftAlone) {
  TempDir dir;
  auto const path = dir.file("taken");
  fs::create_directory(path);
  std::ofstream(dir.file("taken/keep.txt")) << "keep";
  EXPECT_ANY_THROW(write_points(path, make_points(3, 2, false)));
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_TRUE(fs::exists(dir.file("taken/keep.txt")));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

TEST(IoAtomicWrite, FollowsASymbolicLinkAndKeepsIt) {
  TempDir dir;
  write_points(dir.file("target.h5"), make_points(3, 2, false));
  fs::create_symlink("target.h5", dir.file("link.h5"));
  fs::create_symlink("created.h5", dir.file("dangling.h5"));
  EXPECT_EQ(output_target(dir.file("link.h5")), dir.file("target.h5"));
  write_points(dir.file("link.h5"), make_points(5, 2, false));
  write_points(dir.file("dangling.h5"), make_points(4, 2, false));
  EXPECT_TRUE(fs::is_symlink(dir.file("link.h5")));
  EXPECT_TRUE(fs::is_symlink(dir.file("dangling.h5")));
  EXPECT_EQ(read_points(dir.file("target.h5")).size(), 5);
  EXPECT_EQ(read_points(dir.file("created.h5")).size(), 4);
  EXPECT_EQ(dir.entries(),
            (std::vector<std::string>{"created.h5", "dangling.h5", "link.h5", "target.h5"}));
}

TEST(IoAtomicWrite, RefusesAFileWithOtherHardLinks) {
  TempDir dir;
  write_points(dir.file("one.h5"), make_points(3, 2, false));
  fs::create_hard_link(dir.file("one.h5"), dir.file("two.h5"));
  auto const before = file_bytes(dir.file("one.h5"));
  expect_input_error([&] { write_points(dir.file("two.h5"), make_points(5, 2, false)); },
                     dir.file("two.h5"), {"2 hard links"});
  EXPECT_EQ(file_bytes(dir.file("one.h5")), before);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"one.h5", "two.h5"}));
}

}  // namespace
}  // namespace treetrav::io
