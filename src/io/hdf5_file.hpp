#pragma once

// Internals shared by the points, results and snapshot readers/writers: owned
// HDF5 handles, a validating reader and an atomic writer. Every failure becomes
// an exception naming the file and the object; HDF5 itself prints nothing.
#include <treetrav/io/collective.hpp>
#include <treetrav/io/metadata.hpp>

#include <Kokkos_Core.hpp>
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

namespace treetrav::io::detail {

// Every writer stores its Metadata as attributes of this group.
inline constexpr char const metadata_group[] = "/RunMetadata";

// Owns one hid_t and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  ~Handle() { close(); }
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports HDF5's status (a file's buffered writes fail here).
  herr_t close() noexcept {
    herr_t status = valid() ? closer_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Turns off HDF5's automatic error-stack printing while alive (we throw instead).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(QuietErrors const&) = delete;
  QuietErrors& operator=(QuietErrors const&) = delete;

 private:
  H5E_auto2_t previous_function_ = nullptr;
  void* previous_data_ = nullptr;
};

// A dataset read into memory in the file's row-major order.
template <class T>
struct Array {
  std::vector<hsize_t> shape;
  std::vector<T> values;
  hsize_t first_row = 0;  // the dataset's row of the first value's row (read_rows)

  hsize_t rows() const { return shape.empty() ? 1 : shape[0]; }
  hsize_t columns() const { return shape.size() < 2 ? 1 : shape[1]; }
};

// An HDF5 file opened read-only. Every check failure throws InputError
// "<path>: <object>: <problem>".
class FileReader {
 public:
  explicit FileReader(std::string path);

  std::string const& path() const { return path_; }
  [[noreturn]] void fail(std::string const& object, std::string const& problem) const;

  // Whether every link along the absolute path `object` exists.
  bool exists(std::string const& object) const;
  bool has_attribute(std::string const& object, std::string const& name) const;

  // Reads a dataset of exactly `rank` dimensions whose type class matches T
  // (float for floating-point T, integer for integral T), converting to T.
  template <class T>
  Array<T> read(std::string const& dataset, int rank) const;
  // Rows [first, first + count) of such a dataset, and its shape (checked alike);
  // count all_rows: to the last row.
  static constexpr hsize_t all_rows = ~hsize_t(0);
  template <class T>
  Array<T> read_rows(std::string const& dataset, int rank, hsize_t first, hsize_t count) const;
  template <class T>
  std::vector<hsize_t> shape(std::string const& dataset, int rank) const;

  // A numeric attribute (scalar or 1-D), converted to double.
  std::vector<double> read_numbers(std::string const& object, std::string const& name) const;
  std::string read_text(std::string const& object, std::string const& name) const;
  // All attributes of `group` (absent group: empty metadata).
  Metadata read_metadata(std::string const& group) const;

 private:
  template <class T>
  Handle open_dataset(std::string const& dataset, int rank, std::vector<hsize_t>& shape) const;
  Handle open_object(std::string const& object) const;
  Handle open_attribute(std::string const& object, std::string const& name) const;

  QuietErrors quiet_;  // first member: outlives every handle below
  std::string path_;
  Handle file_;
};

// A dataset's shape as an Array without values: for the shape checks below
// before reading a share of the rows.
template <class T>
Array<T> shape_of(FileReader const& reader, std::string const& dataset, int rank) {
  Array<T> array;
  array.shape = reader.shape<T>(dataset, rank);
  return array;
}

// Dataset checks shared by the readers; they throw through reader.fail().
template <class T>
void require_rows(FileReader const& reader, std::string const& dataset, Array<T> const& array,
                  hsize_t rows, std::string const& reference);
template <class T>
void require_columns(FileReader const& reader, std::string const& dataset,
                     Array<T> const& array, hsize_t columns);
template <class T>
void require_not_empty(FileReader const& reader, std::string const& dataset,
                       Array<T> const& array);
// NaN is always rejected; infinities only unless allow_infinity.
template <class T>
void require_finite(FileReader const& reader, std::string const& dataset, Array<T> const& array,
                    bool allow_infinity = false);
template <class T>
void require_positive(FileReader const& reader, std::string const& dataset,
                      Array<T> const& array);

// Files are checked against themselves. An attribute that restates a count or
// shape of the data (NumPoints, Dimension, NumPart_Total, NumVertices, ...) may
// be absent; present, value `index` of it (a scalar's only value) must be
// `expected`, else InputError naming the attribute and `what` ("the rows of
// /Points/Coordinates").
void require_attribute_agrees(FileReader const& reader, std::string const& object,
                              std::string const& name, std::size_t index, double expected,
                              std::string const& what);
// Particle ids must differ: InputError naming the first id that repeats (in
// row order) and both of its rows.
void require_unique(FileReader const& reader, std::string const& dataset,
                    Array<std::int64_t> const& ids);

// Runs `step` on every process of `writers`. When it throws on any, every
// process throws the exception of the lowest rank that failed (its message;
// InputError and std::invalid_argument keep their type, others become
// std::runtime_error): no rank is left waiting in the next collective call.
// Alone: just `step`.
void collectively(Collective const& writers, std::function<void()> const& step);
// Collective: the sums of `values` over the processes of `writers`.
std::vector<std::uint64_t> sum_over(Collective const& writers, std::vector<std::uint64_t> values);
// Collective: the sum of `value` over the processes of `writers` before this one (rank order).
std::uint64_t sum_before(Collective const& writers, std::uint64_t value);

// Writes into an open (temporary) file; errors name the final path. Together
// with other processes (`writers`), every call is collective: each process
// passes its own rows of a dataset, which follow those of the ranks before it.
class FileWriter {
 public:
  FileWriter() = default;
  FileWriter(hid_t file, std::string path, Collective writers = {})
      : file_(file), path_(std::move(path)), writers_(writers) {}

  std::string const& path() const { return path_; }
  [[noreturn]] void fail(std::string const& object, std::string const& problem) const;

  Handle create_group(std::string const& group) const;
  // `shape` is (rows) or (rows, columns); `values` row-major.
  template <class T>
  Handle write(std::string const& dataset, std::vector<hsize_t> const& shape,
               T const* values) const;
  // An unwritten dataset of `shape`, filled by write_rows; an extendible one
  // has no limit on its rows and grows as rows are written past its end.
  template <class T>
  Handle create(std::string const& dataset, std::vector<hsize_t> const& shape,
                bool extendible = false) const;
  // Writes the row-major `values` of shape `block` at row `first` of `set`
  // (together: each process its own block, which may be empty).
  template <class T>
  void write_rows(hid_t set, hsize_t first, std::vector<hsize_t> const& block,
                  T const* values) const;

  void set_attribute(hid_t object, std::string const& name, std::string const& text) const;
  // Numeric attribute stored as T; a single value is written as a scalar.
  template <class T>
  void set_attribute(hid_t object, std::string const& name, std::vector<T> const& values) const;
  template <class T>
  void set_attribute(hid_t object, std::string const& name, T value) const {
    set_attribute(object, name, std::vector<T>{value});
  }
  void write_metadata(std::string const& group, Metadata const& metadata) const;

 private:
  hid_t file_ = H5I_INVALID_HID;
  std::string path_;
  Collective writers_;
};

// Serialises the HDF5 calls a batch job makes from two threads (reading its
// next queries while it writes the last results: FileReader::read_rows,
// FileWriter::create and write_rows): HDF5 builds (the MPI one, say) need
// not be thread-safe.
std::mutex& library_lock();

// `path` written atomically: the writer fills a temporary ".<name>.tmp.<pid>"
// in the same directory, which commit() closes and renames over `path`.
// Destroyed uncommitted (an exception, say), it removes the temporary and an
// existing `path` is untouched. With `writers`: every process fills its rows
// of one temporary (rank 0's pid) through MPI-IO, rank 0 renames it, and
// every process throws alike.
class AtomicFile {
 public:
  explicit AtomicFile(std::string const& path, Collective const& writers = {});
  ~AtomicFile();
  AtomicFile(AtomicFile const&) = delete;
  AtomicFile& operator=(AtomicFile const&) = delete;

  FileWriter& writer() { return writer_; }
  void commit();

 private:
  QuietErrors quiet_;  // first member: outlives the file
  Collective writers_;
  std::string path_, target_, temporary_;
  Handle file_;
  FileWriter writer_;
  bool committed_ = false;
};

// Writes `path` through an AtomicFile that `fill` fills.
void write_atomically(std::string const& path, std::function<void(FileWriter&)> const& fill,
                      Collective const& writers = {});

// Host matrix views <-> row-major arrays (the file is row-major).
template <class View>
std::vector<typename View::non_const_value_type> to_row_major(View const& matrix) {
  std::size_t const rows = matrix.extent(0), columns = matrix.extent(1);
  std::vector<typename View::non_const_value_type> values(rows * columns);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < columns; ++k) values[i * columns + k] = matrix(i, k);
  return values;
}

template <class T, class Layout = Kokkos::LayoutLeft>
Kokkos::View<T**, Layout, Kokkos::HostSpace> to_matrix(Array<T> const& array, std::string const& label) {
  std::size_t const rows = array.rows(), columns = array.columns();
  Kokkos::View<T**, Layout, Kokkos::HostSpace> matrix(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label), rows, columns);
  for (std::size_t k = 0; k < columns; ++k)
    for (std::size_t i = 0; i < rows; ++i) matrix(i, k) = array.values[i * columns + k];
  return matrix;
}

template <class T>
Kokkos::View<T*, Kokkos::HostSpace> to_vector(Array<T> const& array, std::string const& label) {
  Kokkos::View<T*, Kokkos::HostSpace> vector(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label), array.values.size());
  for (std::size_t i = 0; i < array.values.size(); ++i) vector(i) = array.values[i];
  return vector;
}

// Writes a host matrix (rows, columns) / vector (rows) as a row-major dataset.
template <class View>
Handle write_matrix(FileWriter const& writer, std::string const& dataset, View const& matrix) {
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>) {
    return writer.write(dataset, {matrix.extent(0), matrix.extent(1)}, matrix.data());  // already row-major
  } else {
    auto const values = to_row_major(matrix);
    return writer.write(dataset, {matrix.extent(0), matrix.extent(1)}, values.data());
  }
}

template <class View>
Handle write_vector(FileWriter const& writer, std::string const& dataset, View const& vector) {
  std::vector<typename View::non_const_value_type> values(vector.extent(0));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = vector(i);
  return writer.write(dataset, {vector.extent(0)}, values.data());
}

}  // namespace treetrav::io::detail
