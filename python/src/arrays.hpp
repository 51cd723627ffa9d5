#pragma once

// Arrays between Python and the engine: the caller's arrays (numpy, or GPU
// arrays through DLPack) read where the backend runs, and results written
// into output arrays the caller allocated (Destination), on its device.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <treetrav/core/allocate.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace treetrav::python {

namespace nb = nanobind;

// The module's arrays arrive as float32 (the Python layer converts other
// dtypes first: the engine's coordinates are float), in any strides.
using Input = nb::ndarray<nb::ro, float, nb::ndim<2>>;
using Input1 = nb::ndarray<nb::ro, float, nb::ndim<1>>;

template <class Space>
inline constexpr bool host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

template <class Array>
bool on_gpu(Array const& a) {
  return a.device_type() == nb::device::cuda::value;
}

// The caller's array as the engine thread sees it: memory and strides in
// elements, taken while the caller holds the GIL (the array outlives the call).
struct Raw {
  float const* data = nullptr;
  std::int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  bool gpu = false;
};

template <class Array>
Raw raw(Array const& a) {
  Raw r;
  r.data = a.data();
  r.rows = static_cast<std::int64_t>(a.shape(0));
  r.cols = a.ndim() > 1 ? static_cast<std::int64_t>(a.shape(1)) : 1;
  r.row_stride = a.stride(0);
  r.col_stride = a.ndim() > 1 ? a.stride(1) : 1;
  r.gpu = on_gpu(a);
  return r;
}

// The caller's elements as Space reads them: in place, or staged once to the
// device when a host array meets a GPU backend (the only copy the call makes
// of its input besides the engine's own layout).
template <class Space>
struct Source {
  using memory_space = typename Space::memory_space;
  Kokkos::View<float*, memory_space> staged; // owns the staged copy, if any
  float const* data = nullptr;
  std::int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;

  // Whether rows [first, first + count) are already the engine's layout
  // (coordinate-major, contiguous): then they are used where they lie.
  bool engine_layout(std::int64_t first, std::int64_t count) const {
    return first == 0 && count == rows && row_stride == 1 && (col_stride == rows || cols == 1);
  }
};

template <class Space>
Source<Space> source(Space const& space, Raw const& r, std::string const& parameter) {
  Source<Space> s;
  s.rows = r.rows;
  s.cols = r.cols;
  s.row_stride = r.row_stride;
  s.col_stride = r.col_stride;
  s.data = r.data;
  if constexpr (host_space_v<Space>) {
    if (r.gpu)
      throw InputError(parameter, ": a GPU array was given to the host backend " +
                                      std::string(Space::name()) +
                                      "; pass a host array or choose backend 'cuda'");
  } else if (!r.gpu && r.rows * r.cols > 0) {
    // Host array, GPU backend: one copy of the dense block (the Python layer
    // makes host arrays C- or F-contiguous).
    bool const dense = (r.col_stride == 1 && r.row_stride == r.cols) ||
                       (r.row_stride == 1 && r.col_stride == r.rows);
    if (!dense)
      throw InputError(parameter, ": a host array for a GPU backend must be contiguous");
    s.staged = Kokkos::View<float*, typename Space::memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::python::staged"), r.rows * r.cols);
    Kokkos::deep_copy(space, s.staged,
                      Kokkos::View<float const*, Kokkos::HostSpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>(r.data, r.rows * r.cols));
    s.data = s.staged.data();
  }
  return s;
}

// The NaN and infinite values a call met in its inputs, counted on the
// device as its kernels read them; the caller reads the count once, after
// its work (a reduction read back per pass would stop the device each time).
template <class Space>
class NonFinite {
public:
  NonFinite(Space const& space, std::string parameter)
      : count_(allocate_view<decltype(count_)>(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::python::non_finite"))),
        parameter_(std::move(parameter)) {
    // Zeroed on the stream (an initialising allocation would fence).
    Kokkos::deep_copy(space, count_, std::int64_t(0));
  }

  Kokkos::View<std::int64_t, typename Space::memory_space> const& count() const { return count_; }

  // Throws the bad input's error; the caller has fenced `space` (or fences
  // here, fence = true).
  void check(Space const& space, bool fence = false) const {
    if (fence)
      space.fence();
    std::int64_t bad = 0;
    Kokkos::deep_copy(bad, count_);
    if (bad > 0)
      throw InputError(parameter_, ": " + std::to_string(bad) + " values are NaN or infinite");
  }

private:
  Kokkos::View<std::int64_t, typename Space::memory_space> count_;
  std::string parameter_;
};

// Rows [first, first + count) as a PointSet on Space: the caller's memory when
// it is already the engine's layout (then the set views `s`'s memory: `s`
// must outlive it), else one transposing kernel. Either way NaN or infinite
// coordinates are counted into `*bad` (bad input: the caller checks), unless
// bad is null (points checked before).
template <class Space>
PointSet<typename Space::memory_space> rows_of(Space const& space, Source<Space> const& s,
                                               std::int64_t first, std::int64_t count,
                                               NonFinite<Space> const* bad) {
  using Set = PointSet<typename Space::memory_space>;
  float const* data = s.data;
  std::int64_t const rs = s.row_stride, cs = s.col_stride, cols = s.cols;
  bool const counting = bad != nullptr;
  auto const counter = counting ? bad->count() : Kokkos::View<std::int64_t, typename Space::memory_space>();
  // v - v is 0 for finite v, NaN for NaN and infinities.
  Set set;
  if (s.engine_layout(first, count)) {
    set = Set(typename Set::coordinates_view(
        Kokkos::View<Coordinate**, Kokkos::LayoutLeft, typename Space::memory_space,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(const_cast<float*>(data), count, cols)));
    if (counting)
      Kokkos::parallel_for(
        "treetrav::python::non_finite", Kokkos::RangePolicy<Space>(space, 0, count * cols),
        KOKKOS_LAMBDA(std::int64_t e) {
          float const v = data[e];
          if (!(v - v == 0.0f))
            Kokkos::atomic_increment(&counter());
        });
  } else {
    set = allocate_points<typename Space::memory_space>(
        "treetrav::python::points", static_cast<Index>(count), static_cast<int>(cols));
    auto coordinates = set.coordinates;
    Kokkos::parallel_for(
        "treetrav::python::rows_of", Kokkos::RangePolicy<Space>(space, 0, count),
        KOKKOS_LAMBDA(std::int64_t i) {
          int bad_values = 0;
          for (std::int64_t k = 0; k < cols; ++k) {
            float const v = data[(first + i) * rs + k * cs];
            coordinates(i, k) = v;
            bad_values += (v - v == 0.0f) ? 0 : 1;
          }
          if (counting && bad_values > 0)
            Kokkos::atomic_add(&counter(), std::int64_t(bad_values));
        });
  }
  return set;
}

// All rows of `s`, checked before they are returned (a tree is not built
// over bad input).
template <class Space>
PointSet<typename Space::memory_space> checked_rows(Space const& space, Source<Space> const& s,
                                                    std::string const& parameter) {
  NonFinite<Space> bad(space, parameter);
  auto set = rows_of(space, s, 0, s.rows, &bad);
  bad.check(space, true);
  return set;
}

// An output array of the caller's (allocated by the Python layer in the
// caller's framework, on the caller's device): C-contiguous, n x m.
template <class T>
struct RawOut {
  T* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  bool gpu = false;
};

template <class T, class Array>
RawOut<T> raw_out(Array const& a, std::int64_t rows, std::int64_t cols, char const* parameter) {
  std::int64_t const shape1 = a.ndim() > 1 ? static_cast<std::int64_t>(a.shape(1)) : 1;
  bool const contiguous = rows * cols == 0 || ((a.ndim() == 1 || a.stride(1) == 1 || cols == 1) &&
                                               (rows == 1 || a.stride(0) == cols));
  if (static_cast<std::int64_t>(a.shape(0)) != rows || shape1 != cols || !contiguous)
    throw InputError(parameter, ": an output of shape (" + std::to_string(rows) + ", " +
                                    std::to_string(cols) + "), C-contiguous, was expected");
  return {const_cast<T*>(a.data()), rows, cols, on_gpu(a)};
}

// Faults in the pages of a fresh host array on all host threads: a new numpy
// array's pages are mapped at their first write, which would otherwise be the
// GPU copy's, page by page on one thread.
inline void first_touch(char* data, std::int64_t bytes) {
  constexpr std::int64_t page = 4096;
  Kokkos::parallel_for(
      "treetrav::python::first_touch",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, (bytes + page - 1) / page),
      [=](std::int64_t p) { data[p * page] = 0; });
  Kokkos::DefaultHostExecutionSpace().fence();
}

// Where kernels on Space write an output of the caller's: the caller's memory
// itself when Space reaches it (a GPU array for the GPU, a host array for the
// host), else a buffer on the device that finish() copies to the host array.
template <class T, class Space>
struct Destination {
  using memory_space = typename Space::memory_space;
  Kokkos::View<T**, Kokkos::LayoutRight, memory_space> view;
  Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host;

  // Starts the copy to the host array, if there is one; the caller fences
  // (once for all its outputs).
  void finish(Space const& space) const {
    if (host.data() != nullptr)
      Kokkos::deep_copy(space, host, view);
  }
};

template <class T, class Space>
Destination<T, Space> destination(Space const&, RawOut<T> const& out) {
  Destination<T, Space> d;
  if constexpr (host_space_v<Space>) {
    if (out.gpu)
      throw InputError("out", ": a GPU array for the host backend " + std::string(Space::name()));
    d.view = Kokkos::View<T**, Kokkos::LayoutRight, typename Space::memory_space,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data, out.rows, out.cols);
  } else if (out.gpu) {
    d.view = Kokkos::View<T**, Kokkos::LayoutRight, typename Space::memory_space,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data, out.rows, out.cols);
  } else {
    d.view = decltype(d.view)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::python::out"),
                              out.rows, out.cols);
    d.host = decltype(d.host)(out.data, out.rows, out.cols);
    first_touch(reinterpret_cast<char*>(out.data), out.rows * out.cols * std::int64_t(sizeof(T)));
  }
  return d;
}

// The backend a call names (none: the build's default).
inline Backend backend_named(std::string const& name) {
  return name.empty() ? default_backend() : parse_backend(name);
}

} // namespace treetrav::python
