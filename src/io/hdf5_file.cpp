#include "hdf5_file.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/io/hdf5.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/communicator.hpp>
#endif

#include <fmt/core.h>

#include <unistd.h>

#if defined(TREETRAV_ENABLE_MPI) && !defined(H5_HAVE_PARALLEL)
#error "TREETRAV_ENABLE_MPI needs the headers of a parallel HDF5 (CMake checks HDF5_IS_PARALLEL)"
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <mutex>
#include <thread>
#include <tuple>
#include <type_traits>

namespace treetrav::io {

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

std::string output_target(std::string const& path) {
  namespace fs = std::filesystem;
  fs::path target(path);
  if (path.empty() || !target.has_filename())
    throw InputError("'" + path + "': not a file name");
  std::error_code error;
  // Follow the chain of links, even a dangling one (its target is created).
  for (int links = 0; fs::is_symlink(target, error); ++links) {
    if (links == 40)
      throw InputError(path + ": too many levels of symbolic links");
    fs::path const next = fs::read_symlink(target, error);
    if (error)
      throw InputError(fmt::format("{}: cannot read the link: {}", path, error.message()));
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  std::string const via =
      target == fs::path(path) ? "" : fmt::format(" (the link leads to {})", target.string());
  fs::path const directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(directory, error))
    throw InputError(
        fmt::format("{}: directory '{}' does not exist{}", path, directory.string(), via));
  if (fs::is_directory(target, error))
    throw InputError(fmt::format("{} is a directory{}", path, via));
  auto const links = fs::exists(target, error) ? fs::hard_link_count(target, error) : 1;
  if (!error && links > 1)
    throw InputError(fmt::format("{}{} has {} hard links: replacing it would leave the other names "
                                 "with the old contents; remove it "
                                 "or choose another name",
                                 path, via, links));
  return (directory / target.filename()).string();
}

namespace detail {
namespace {

// The test hooks of write_atomically (see io/hdf5.hpp): say so, then sleep.
void pause_if_testing(char const* variable, char const* where,
                      std::filesystem::path const& target) {
  char const* const name = std::getenv(variable);
  if (name == nullptr || target.filename() != name)
    return;
  std::fprintf(stderr, "treetrav: test hook: paused %s the write of %s\n", where, name);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::seconds(60));
}

// C++ type -> HDF5 memory type and the explicit little-endian type on disk.
template <class T>
struct TypeMap;
template <>
struct TypeMap<float> {
  static hid_t memory() { return H5T_NATIVE_FLOAT; }
  static hid_t file() { return H5T_IEEE_F32LE; }
};
template <>
struct TypeMap<double> {
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
};
template <>
struct TypeMap<std::int32_t> {
  static hid_t memory() { return H5T_NATIVE_INT32; }
  static hid_t file() { return H5T_STD_I32LE; }
};
template <>
struct TypeMap<std::uint32_t> {
  static hid_t memory() { return H5T_NATIVE_UINT32; }
  static hid_t file() { return H5T_STD_U32LE; }
};
template <>
struct TypeMap<std::int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
};

template <class T>
constexpr H5T_class_t type_class() {
  return std::is_floating_point<T>::value ? H5T_FLOAT : H5T_INTEGER;
}

char const* describe(H5T_class_t type_class) {
  switch (type_class) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "floating-point";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "variable-length";
    default: return "unsupported";
  }
}

// "row 3" for vectors, "row 3, column 1" for matrices: the dataset's row and
// column of the array's value `flat_index`.
template <class T>
std::string element_name(Array<T> const& array, std::size_t flat_index) {
  if (array.shape.size() < 2) return fmt::format("row {}", array.first_row + flat_index);
  return fmt::format("row {}, column {}", array.first_row + flat_index / array.shape[1],
                     flat_index % array.shape[1]);
}

std::string object_name(hid_t object) {
  char name[256] = {};
  return H5Iget_name(object, name, sizeof(name)) > 0 ? name : "?";
}

// Called by HDF5 with each attribute name; exceptions must not cross C frames.
herr_t collect_attribute_name(hid_t, char const* name, H5A_info_t const*, void* names) {
  try {
    static_cast<std::vector<std::string>*>(names)->emplace_back(name);
    return 0;
  } catch (...) {
    return -1;
  }
}

#ifdef TREETRAV_ENABLE_MPI
using distributed::check_mpi;
#endif

// This process's rank among the writers, and their number (0 of 1 without a communicator).
struct Membership {
  int rank = 0, size = 1;
};
Membership membership_of([[maybe_unused]] Collective const& writers) {
  Membership membership;
#ifdef TREETRAV_ENABLE_MPI
  if (writers.comm != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_rank(writers.comm, &membership.rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(writers.comm, &membership.size), "MPI_Comm_size");
  }
#endif
  return membership;
}

bool alone(Collective const& writers) { return membership_of(writers).size == 1; }

// Where this process's `rows` of a dataset start among all processes' rows, and their total.
std::pair<hsize_t, hsize_t> place_rows(Collective const& writers, hsize_t rows) {
  if (alone(writers))
    return {0, rows};
  std::pair<hsize_t, hsize_t> place{0, 0};
#ifdef TREETRAV_ENABLE_MPI
  auto const [rank, size] = membership_of(writers);
  unsigned long long const mine = rows;
  std::vector<unsigned long long> all(size);
  check_mpi(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                          writers.comm),
            "MPI_Allgather");
  for (int r = 0; r < size; ++r)
    place = {place.first + (r < rank ? all[r] : 0), place.second + all[r]};
#endif
  return place;
}

// The temporary's name: rank 0's process id, so that all processes open one file.
long first_process_id([[maybe_unused]] Collective const& writers) {
  long id = static_cast<long>(::getpid());
#ifdef TREETRAV_ENABLE_MPI
  if (!alone(writers))
    check_mpi(MPI_Bcast(&id, 1, MPI_LONG, 0, writers.comm), "MPI_Bcast");
#endif
  return id;
}

// A new file for this process alone, or opened by all `writers` through MPI-IO.
Handle create_file(std::string const& path, [[maybe_unused]] Collective const& writers) {
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!access.valid())
    return access;
#ifdef TREETRAV_ENABLE_MPI
  if (!alone(writers) && H5Pset_fapl_mpio(access.get(), writers.comm, MPI_INFO_NULL) < 0)
    return Handle();
#endif
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose);
}

// Writes of dataset rows: collective MPI-IO (every process its hyperslab at once) when together.
Handle transfer_properties([[maybe_unused]] Collective const& writers) {
  Handle transfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
#ifdef TREETRAV_ENABLE_MPI
  if (transfer.valid() && !alone(writers) &&
      H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE) < 0)
    return Handle();
#endif
  return transfer;
}

}  // namespace

// ---------------------------------------------------------------- together

void collectively(Collective const& writers, std::function<void()> const& step) {
  if (alone(writers))
    return step();
#ifdef TREETRAV_ENABLE_MPI
  distributed::collectively(writers.comm, step);
#endif
}

std::vector<std::uint64_t> sum_over([[maybe_unused]] Collective const& writers,
                                    std::vector<std::uint64_t> values) {
#ifdef TREETRAV_ENABLE_MPI
  if (!alone(writers))
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                            MPI_UINT64_T, MPI_SUM, writers.comm),
              "MPI_Allreduce");
#endif
  return values;
}

std::uint64_t sum_before([[maybe_unused]] Collective const& writers, std::uint64_t value) {
  std::uint64_t before = 0;
#ifdef TREETRAV_ENABLE_MPI
  if (!alone(writers)) {
    int rank = 0;
    check_mpi(MPI_Comm_rank(writers.comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Exscan(&value, &before, 1, MPI_UINT64_T, MPI_SUM, writers.comm), "MPI_Exscan");
    if (rank == 0)
      before = 0; // MPI_Exscan leaves rank 0's undefined
  }
#endif
  return before;
}

// ---------------------------------------------------------------- errors

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &previous_function_, &previous_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, previous_function_, previous_data_); }

// ---------------------------------------------------------------- reading

FileReader::FileReader(std::string path) : path_(std::move(path)) {
  // Tell the user *why* the file is unusable rather than "open failed".
  std::error_code error;
  if (!std::filesystem::exists(path_, error)) throw InputError(path_ + ": file does not exist");
  if (std::filesystem::is_directory(path_, error)) throw InputError(path_ + ": is a directory");
#if H5_VERSION_GE(1, 12, 0)
  htri_t const is_hdf5 = H5Fis_accessible(path_.c_str(), H5P_DEFAULT);
#else
  htri_t const is_hdf5 = H5Fis_hdf5(path_.c_str());
#endif
  if (is_hdf5 == 0) throw InputError(path_ + ": not an HDF5 file");
  file_ = Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file_.valid())
    throw InputError(path_ + ": cannot open as HDF5 (unreadable, truncated or corrupt file)");
}

void FileReader::fail(std::string const& object, std::string const& problem) const {
  throw InputError(fmt::format("{}: {}: {}", path_, object, problem));
}

bool FileReader::exists(std::string const& object) const {
  // H5Lexists fails, rather than answering no, when a parent group is missing.
  std::size_t end = 0;
  do {
    end = object.find('/', end + 1);
    if (H5Lexists(file_.get(), object.substr(0, end).c_str(), H5P_DEFAULT) <= 0) return false;
  } while (end != std::string::npos);
  return true;
}

Handle FileReader::open_object(std::string const& object) const {
  if (!exists(object)) fail(object, "is missing");
  Handle handle(H5Oopen(file_.get(), object.c_str(), H5P_DEFAULT), H5Oclose);
  if (!handle.valid()) fail(object, "cannot be opened (corrupt file?)");
  return handle;
}

bool FileReader::has_attribute(std::string const& object, std::string const& name) const {
  if (!exists(object)) return false;
  return H5Aexists_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

Handle FileReader::open_attribute(std::string const& object, std::string const& name) const {
  Handle const owner = open_object(object);
  if (H5Aexists(owner.get(), name.c_str()) <= 0) fail(object, "attribute \"" + name + "\" is missing");
  Handle attribute(H5Aopen(owner.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attribute.valid()) fail(object, "attribute \"" + name + "\" cannot be opened");
  return attribute;
}

template <class T>
Handle FileReader::open_dataset(std::string const& dataset, int rank,
                                std::vector<hsize_t>& shape) const {
  if (!exists(dataset)) fail(dataset, "dataset is missing");
  Handle set(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(dataset, "is not a dataset");

  Handle const space(H5Dget_space(set.get()), H5Sclose);
  int const actual_rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (actual_rank != rank)
    fail(dataset, fmt::format("has rank {}, expected {}", actual_rank, rank));

  Handle const type(H5Dget_type(set.get()), H5Tclose);
  H5T_class_t const actual_class = type.valid() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  if (actual_class != type_class<T>())
    fail(dataset, fmt::format("has {} values, expected {}", describe(actual_class),
                              describe(type_class<T>())));
  shape.resize(rank);
  H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr);
  return set;
}

template <class T>
std::vector<hsize_t> FileReader::shape(std::string const& dataset, int rank) const {
  std::vector<hsize_t> extents;
  open_dataset<T>(dataset, rank, extents);
  return extents;
}

template <class T>
Array<T> FileReader::read(std::string const& dataset, int rank) const {
  return read_rows<T>(dataset, rank, 0, all_rows);
}

template <class T>
Array<T> FileReader::read_rows(std::string const& dataset, int rank, hsize_t first,
                               hsize_t count) const {
  std::lock_guard<std::mutex> const lock(library_lock());
  Array<T> array;
  Handle const set = open_dataset<T>(dataset, rank, array.shape);
  Handle const file_space(H5Dget_space(set.get()), H5Sclose);
  if (rank > 0) {
    if (count == all_rows)
      count = first <= array.shape[0] ? array.shape[0] - first : 0;
    if (first + count > array.shape[0])
      fail(dataset, fmt::format("has {} rows, not rows {}..{}", array.shape[0], first,
                                first + count));
    std::vector<hsize_t> start(rank, 0);
    start[0] = first;
    array.shape[0] = count;
    array.first_row = first;
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                        array.shape.data(), nullptr);
  }
  std::size_t values = 1;
  for (hsize_t extent : array.shape) values *= extent;
  array.values.resize(values);
  Handle const memory_space(rank == 0 ? H5Screate(H5S_SCALAR)
                                      : H5Screate_simple(rank, array.shape.data(), nullptr),
                            H5Sclose);
  // HDF5 converts between widths (e.g. float64 on disk into float).
  if (values > 0 && H5Dread(set.get(), TypeMap<T>::memory(), memory_space.get(),
                            file_space.get(), H5P_DEFAULT, array.values.data()) < 0)
    fail(dataset, "cannot be read (truncated or corrupt file?)");
  return array;
}

std::vector<double> FileReader::read_numbers(std::string const& object,
                                             std::string const& name) const {
  Handle const attribute = open_attribute(object, name);
  Handle const type(H5Aget_type(attribute.get()), H5Tclose);
  H5T_class_t const actual_class = H5Tget_class(type.get());
  if (actual_class != H5T_INTEGER && actual_class != H5T_FLOAT)
    fail(object, fmt::format("attribute \"{}\" has {} values, expected numbers", name,
                             describe(actual_class)));
  Handle const space(H5Aget_space(attribute.get()), H5Sclose);
  hssize_t const count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0 || H5Sget_simple_extent_ndims(space.get()) > 1)
    fail(object, "attribute \"" + name + "\" is not a scalar or a vector");
  std::vector<double> values(static_cast<std::size_t>(count));
  if (count > 0 && H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, values.data()) < 0)
    fail(object, "attribute \"" + name + "\" cannot be read");
  return values;
}

std::string FileReader::read_text(std::string const& object, std::string const& name) const {
  Handle const attribute = open_attribute(object, name);
  Handle const type(H5Aget_type(attribute.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail(object, fmt::format("attribute \"{}\" has {} values, expected text", name,
                             describe(H5Tget_class(type.get()))));
  Handle const space(H5Aget_space(attribute.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    fail(object, "attribute \"" + name + "\" is not a single string");

  // Read in the file's character set: HDF5 does not convert between ASCII and UTF-8.
  Handle const memory_type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_cset(memory_type.get(), H5Tget_cset(type.get()));
  std::string text;
  herr_t status = -1;
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Tset_size(memory_type.get(), H5T_VARIABLE);
    char* buffer = nullptr;
    status = H5Aread(attribute.get(), memory_type.get(), &buffer);
    if (status >= 0 && buffer != nullptr) text = buffer;
    H5free_memory(buffer);
  } else {
    std::size_t const size = H5Tget_size(type.get());
    H5Tset_size(memory_type.get(), size);
    H5Tset_strpad(memory_type.get(), H5T_STR_NULLPAD);
    std::vector<char> buffer(size + 1, '\0');  // +1: NUL even when the string fills it
    status = H5Aread(attribute.get(), memory_type.get(), buffer.data());
    text = buffer.data();
  }
  if (status < 0) fail(object, "attribute \"" + name + "\" cannot be read");
  return text;
}

Metadata FileReader::read_metadata(std::string const& group) const {
  Metadata metadata;
  if (!exists(group)) return metadata;
  std::vector<std::string> names;
  {
    Handle const owner = open_object(group);
    hsize_t position = 0;
    if (H5Aiterate2(owner.get(), H5_INDEX_NAME, H5_ITER_INC, &position, collect_attribute_name,
                    &names) < 0)
      fail(group, "attributes cannot be listed");
  }
  for (auto const& name : names) {
    H5T_class_t type_class = H5T_NO_CLASS;
    {
      Handle const attribute = open_attribute(group, name);
      Handle const type(H5Aget_type(attribute.get()), H5Tclose);
      type_class = H5Tget_class(type.get());
    }
    if (type_class == H5T_STRING) {
      metadata.set(name, read_text(group, name));
    } else {
      auto const values = read_numbers(group, name);
      if (values.size() != 1)
        fail(group, fmt::format("attribute \"{}\" has {} values, expected one", name, values.size()));
      metadata.set(name, values[0]);
    }
  }
  return metadata;
}

// ---------------------------------------------------------------- checks

template <class T>
void require_rows(FileReader const& reader, std::string const& dataset, Array<T> const& array,
                  hsize_t rows, std::string const& reference) {
  if (array.rows() != rows)
    reader.fail(dataset, fmt::format("has {} rows but {} has {}", array.rows(), reference, rows));
}

template <class T>
void require_columns(FileReader const& reader, std::string const& dataset,
                     Array<T> const& array, hsize_t columns) {
  if (array.columns() != columns)
    reader.fail(dataset, fmt::format("has {} columns, expected {}", array.columns(), columns));
}

template <class T>
void require_not_empty(FileReader const& reader, std::string const& dataset,
                       Array<T> const& array) {
  if (array.rows() == 0) reader.fail(dataset, "has no rows (empty set)");
}

template <class T>
void require_finite(FileReader const& reader, std::string const& dataset, Array<T> const& array,
                    bool allow_infinity) {
  for (std::size_t i = 0; i < array.values.size(); ++i) {
    T const value = array.values[i];
    if (std::isnan(value))
      reader.fail(dataset, element_name(array, i) + " is NaN");
    if (std::isinf(value) && !allow_infinity)
      reader.fail(dataset, element_name(array, i) + " is infinite");
  }
}

template <class T>
void require_positive(FileReader const& reader, std::string const& dataset,
                      Array<T> const& array) {
  for (std::size_t i = 0; i < array.values.size(); ++i)
    if (!(array.values[i] > 0))
      reader.fail(dataset, fmt::format("{} is not positive ({})", element_name(array, i),
                                       array.values[i]));
}

void require_attribute_agrees(FileReader const& reader, std::string const& object,
                              std::string const& name, std::size_t index, double expected,
                              std::string const& what) {
  if (!reader.has_attribute(object, name))
    return;
  auto const values = reader.read_numbers(object, name);
  if (index >= values.size())
    reader.fail(object, fmt::format("attribute {} has {} values, not the {} expected", name,
                                    values.size(), index + 1));
  if (values[index] != expected)
    reader.fail(object,
                fmt::format("attribute {}{} is {} but {} is {}: the file contradicts itself", name,
                            values.size() > 1 ? fmt::format("[{}]", index) : "", values[index],
                            what, expected));
}

void require_unique(FileReader const& reader, std::string const& dataset,
                    Array<std::int64_t> const& ids) {
  auto const& id = ids.values;
  std::vector<std::size_t> rows(id.size());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  // Equal ids end up adjacent in row order; the second row of each run repeats its first.
  std::stable_sort(rows.begin(), rows.end(),
                   [&](std::size_t a, std::size_t b) { return id[a] < id[b]; });
  std::size_t repeat = id.size(), original = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (id[rows[i]] == id[rows[i - 1]] && rows[i] < repeat &&
        (i == 1 || id[rows[i - 2]] != id[rows[i]])) {
      repeat = rows[i];
      original = rows[i - 1];
    }
  if (repeat < id.size())
    reader.fail(dataset, fmt::format("id {} appears at rows {} and {}: particle ids must differ",
                                     id[repeat], ids.first_row + original, ids.first_row + repeat));
}

// ---------------------------------------------------------------- writing

void FileWriter::fail(std::string const& object, std::string const& problem) const {
  throw std::runtime_error(fmt::format("{}: {}: {}", path_, object, problem));
}

Handle FileWriter::create_group(std::string const& group) const {
  Handle handle;
  collectively(writers_, [&] {
    handle =
        Handle(H5Gcreate2(file_, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!handle.valid())
      fail(group, "cannot create group");
  });
  return handle;
}

template <class T>
Handle FileWriter::create(std::string const& dataset, std::vector<hsize_t> const& shape,
                          bool extendible) const {
  std::lock_guard<std::mutex> const lock(library_lock());
  Handle set;
  collectively(writers_, [&] {
    std::vector<hsize_t> limits = shape;
    Handle const properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (extendible) {
      // Appended to block by block: unlimited rows, stored in chunks of rows.
      limits[0] = H5S_UNLIMITED;
      std::vector<hsize_t> chunk = shape;
      chunk[0] = std::max<hsize_t>(
          1, (hsize_t{1} << 20) / sizeof(T) / (shape.size() > 1 ? shape[1] : 1));
      H5Pset_chunk(properties.get(), static_cast<int>(chunk.size()), chunk.data());
    }
    Handle const space(
        H5Screate_simple(static_cast<int>(shape.size()), shape.data(), limits.data()), H5Sclose);
    if (space.valid() && properties.valid())
      set = Handle(H5Dcreate2(file_, dataset.c_str(), TypeMap<T>::file(), space.get(), H5P_DEFAULT,
                              properties.get(), H5P_DEFAULT),
                   H5Dclose);
    if (!set.valid())
      fail(dataset, "cannot create dataset");
  });
  return set;
}

template <class T>
void FileWriter::write_rows(hid_t set, hsize_t first, std::vector<hsize_t> const& block,
                            T const* values) const {
  std::lock_guard<std::mutex> const lock(library_lock());
  int const rank = static_cast<int>(block.size());
  hsize_t mine = 1;
  for (hsize_t extent : block)
    mine *= extent;
  if (mine == 0 && alone(writers_))
    return;
  collectively(writers_, [&] {
    Handle file_space(H5Dget_space(set), H5Sclose);
    std::vector<hsize_t> extents(rank), start(rank, 0);
    if (file_space.valid())
      H5Sget_simple_extent_dims(file_space.get(), extents.data(), nullptr);
    if (rank > 0) {
      start[0] = first;
      if (mine > 0 && first + block[0] > extents[0]) { // an extendible dataset grows to take it
        extents[0] = first + block[0];
        if (H5Dset_extent(set, extents.data()) < 0)
          fail(object_name(set), "cannot grow dataset");
        file_space = Handle(H5Dget_space(set), H5Sclose);
      }
    }
    Handle const transfer = transfer_properties(writers_);
    // A process without rows (of a particle type) still takes part, selecting nothing.
    std::vector<hsize_t> memory_shape = block;
    for (hsize_t& extent : memory_shape)
      extent = std::max<hsize_t>(extent, 1);
    Handle const memory_space(H5Screate_simple(rank, memory_shape.data(), nullptr), H5Sclose);
    bool const selected =
        file_space.valid() && memory_space.valid() &&
        (mine == 0
             ? H5Sselect_none(file_space.get()) >= 0 && H5Sselect_none(memory_space.get()) >= 0
             : rank == 0 || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(),
                                                nullptr, block.data(), nullptr) >= 0);
    if (!transfer.valid() || !selected ||
        H5Dwrite(set, TypeMap<T>::memory(), memory_space.get(), file_space.get(), transfer.get(),
                 values) < 0)
      fail(object_name(set), "cannot write dataset (disk full?)");
  });
}

template <class T>
Handle FileWriter::write(std::string const& dataset, std::vector<hsize_t> const& shape,
                         T const* values) const {
  // This process's rows [first, first + shape[0]) of all processes' `whole`.
  std::vector<hsize_t> whole = shape;
  hsize_t first = 0;
  if (!shape.empty())
    std::tie(first, whole[0]) = place_rows(writers_, shape[0]);
  Handle set = create<T>(dataset, whole);
  hsize_t count = 1;
  for (hsize_t extent : whole)
    count *= extent;
  if (count > 0)
    write_rows(set.get(), first, shape, values);
  return set;
}

void FileWriter::set_attribute(hid_t object, std::string const& name,
                               std::string const& text) const {
  // Variable-length UTF-8: what h5py writes and reads back as str.
  Handle const type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle const space(H5Screate(H5S_SCALAR), H5Sclose);
  collectively(writers_, [&] {
    Handle const attribute(
        H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
    char const* data = text.c_str();
    if (!attribute.valid() || H5Awrite(attribute.get(), type.get(), &data) < 0)
      fail(object_name(object), "cannot write attribute \"" + name + "\"");
  });
}

template <class T>
void FileWriter::set_attribute(hid_t object, std::string const& name,
                               std::vector<T> const& values) const {
  hsize_t const count = values.size();
  Handle const space(count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr),
                     H5Sclose);
  collectively(writers_, [&] {
    Handle const attribute(
        H5Acreate2(object, name.c_str(), TypeMap<T>::file(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
    if (!attribute.valid() || H5Awrite(attribute.get(), TypeMap<T>::memory(), values.data()) < 0)
      fail(object_name(object), "cannot write attribute \"" + name + "\"");
  });
}

void FileWriter::write_metadata(std::string const& group, Metadata const& metadata) const {
  Handle const handle = create_group(group);
  for (auto const& [key, text] : metadata.text) set_attribute(handle.get(), key, text);
  for (auto const& [key, number] : metadata.numbers) {
    if (metadata.text.count(key) != 0)
      fail(group, "key \"" + key + "\" is set both as text and as a number");
    set_attribute(handle.get(), key, number);
  }
}

std::mutex& library_lock() {
  static std::mutex lock;
  return lock;
}

AtomicFile::AtomicFile(std::string const& path, Collective const& writers)
    : writers_(writers), path_(path) {
  namespace fs = std::filesystem;
  collectively(writers, [&] { target_ = output_target(path); });
  // Same directory as the target, so the final rename never crosses file systems.
  fs::path const target(target_);
  temporary_ = (target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(),
                                                   first_process_id(writers)))
                   .string();
  pause_if_testing("TREETRAV_TEST_PAUSE_BEFORE_WRITE", "before", target);
  collectively(writers, [&] {
    file_ = create_file(temporary_, writers);
    if (!file_.valid())
      throw InputError(fmt::format("{}: cannot create {}", path, temporary_));
  });
  writer_ = FileWriter(file_.get(), path, writers);
}

AtomicFile::~AtomicFile() {
  if (committed_)
    return;
  file_.close();
  std::error_code error;
  if (membership_of(writers_).rank == 0)
    std::filesystem::remove(temporary_, error);
}

void AtomicFile::commit() {
  pause_if_testing("TREETRAV_TEST_PAUSE_IN_WRITE", "inside", std::filesystem::path(target_));
  collectively(writers_, [&] {
    if (file_.close() < 0)
      throw std::runtime_error(path_ + ": cannot finish writing (disk full?)");
  });
  collectively(writers_, [&] {
    if (membership_of(writers_).rank == 0 && std::rename(temporary_.c_str(), target_.c_str()) != 0)
      throw InputError(fmt::format("{}: cannot replace it: {}", path_, std::strerror(errno)));
  });
  committed_ = true;
}

void write_atomically(std::string const& path, std::function<void(FileWriter&)> const& fill,
                      Collective const& writers) {
  AtomicFile file(path, writers);
  fill(file.writer());
  file.commit();
}

// The element types the readers and writers use.
template std::vector<hsize_t> FileReader::shape<float>(std::string const&, int) const;
template Array<float> FileReader::read_rows<float>(std::string const&, int, hsize_t, hsize_t) const;
template Handle FileWriter::create<float>(std::string const&, std::vector<hsize_t> const&, bool) const;
template void FileWriter::write_rows<float>(hid_t, hsize_t, std::vector<hsize_t> const&, float const*) const;
template std::vector<hsize_t> FileReader::shape<double>(std::string const&, int) const;
template Array<double> FileReader::read_rows<double>(std::string const&, int, hsize_t, hsize_t) const;
template Handle FileWriter::create<double>(std::string const&, std::vector<hsize_t> const&, bool) const;
template void FileWriter::write_rows<double>(hid_t, hsize_t, std::vector<hsize_t> const&, double const*) const;
template std::vector<hsize_t> FileReader::shape<std::int32_t>(std::string const&, int) const;
template Array<std::int32_t> FileReader::read_rows<std::int32_t>(std::string const&, int, hsize_t, hsize_t) const;
template Handle FileWriter::create<std::int32_t>(std::string const&, std::vector<hsize_t> const&, bool) const;
template void FileWriter::write_rows<std::int32_t>(hid_t, hsize_t, std::vector<hsize_t> const&, std::int32_t const*) const;
template std::vector<hsize_t> FileReader::shape<std::int64_t>(std::string const&, int) const;
template Array<std::int64_t> FileReader::read_rows<std::int64_t>(std::string const&, int, hsize_t, hsize_t) const;
template Handle FileWriter::create<std::int64_t>(std::string const&, std::vector<hsize_t> const&, bool) const;
template void FileWriter::write_rows<std::int64_t>(hid_t, hsize_t, std::vector<hsize_t> const&, std::int64_t const*) const;
template Array<float> FileReader::read<float>(std::string const&, int) const;
template Array<double> FileReader::read<double>(std::string const&, int) const;
template Array<std::int32_t> FileReader::read<std::int32_t>(std::string const&, int) const;
template Array<std::int64_t> FileReader::read<std::int64_t>(std::string const&, int) const;
template Handle FileWriter::write<float>(std::string const&, std::vector<hsize_t> const&,
                                         float const*) const;
template Handle FileWriter::write<double>(std::string const&, std::vector<hsize_t> const&,
                                          double const*) const;
template Handle FileWriter::write<std::int32_t>(std::string const&, std::vector<hsize_t> const&,
                                                std::int32_t const*) const;
template Handle FileWriter::write<std::int64_t>(std::string const&, std::vector<hsize_t> const&,
                                                std::int64_t const*) const;
template void FileWriter::set_attribute<float>(hid_t, std::string const&,
                                               std::vector<float> const&) const;
template void FileWriter::set_attribute<double>(hid_t, std::string const&,
                                                std::vector<double> const&) const;
template void FileWriter::set_attribute<std::int32_t>(hid_t, std::string const&,
                                                      std::vector<std::int32_t> const&) const;
template void FileWriter::set_attribute<std::uint32_t>(hid_t, std::string const&,
                                                       std::vector<std::uint32_t> const&) const;
template void FileWriter::set_attribute<std::int64_t>(hid_t, std::string const&,
                                                      std::vector<std::int64_t> const&) const;
template void require_rows(FileReader const&, std::string const&, Array<float> const&, hsize_t,
                           std::string const&);
template void require_rows(FileReader const&, std::string const&, Array<double> const&, hsize_t,
                           std::string const&);
template void require_rows(FileReader const&, std::string const&, Array<std::int32_t> const&,
                           hsize_t, std::string const&);
template void require_rows(FileReader const&, std::string const&, Array<std::int64_t> const&,
                           hsize_t, std::string const&);
template void require_columns(FileReader const&, std::string const&, Array<float> const&, hsize_t);
template void require_columns(FileReader const&, std::string const&, Array<double> const&,
                              hsize_t);
template void require_columns(FileReader const&, std::string const&, Array<std::int32_t> const&,
                              hsize_t);
template void require_not_empty(FileReader const&, std::string const&, Array<float> const&);
template void require_not_empty(FileReader const&, std::string const&, Array<double> const&);
template void require_finite(FileReader const&, std::string const&, Array<float> const&, bool);
template void require_finite(FileReader const&, std::string const&, Array<double> const&, bool);
template void require_positive(FileReader const&, std::string const&, Array<double> const&);

}  // namespace detail

// ---------------------------------------------------------------- public

FileKind detect_file_kind(std::string const& path) {
  detail::FileReader const reader(path);
  if (reader.exists("/Points")) return FileKind::points;
  if (reader.exists("/Results")) return FileKind::results;
  if (reader.exists("/PartType1") || reader.has_attribute("/Header", "NumPart_ThisFile")) return FileKind::snapshot;
  return FileKind::unknown;
}

char const* to_string(FileKind kind) {
  switch (kind) {
    case FileKind::points: return "points";
    case FileKind::results: return "results";
    case FileKind::snapshot: return "snapshot";
    default: return "unknown";
  }
}

Metadata read_metadata(std::string const& path) {
  return detail::FileReader(path).read_metadata(detail::metadata_group);
}

}  // namespace treetrav::io
