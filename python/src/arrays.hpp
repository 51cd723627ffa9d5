#pragma once

// Arrays between Python and the engine: the caller's array (numpy, or a GPU
// array through DLPack) read where the backend runs, and results handed back
// without a copy (a capsule owns the Kokkos View behind the array).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>

namespace treetrav::python {

namespace nb = nanobind;

// Engine objects (trees, arrays over Kokkos memory) alive now: Kokkos may be
// finalized only when none is (module.cpp).
std::atomic<long>& live_engine_objects();

struct Alive {
  Alive() { ++live_engine_objects(); }
  Alive(Alive const&) : Alive() {}
  Alive& operator=(Alive const&) = default;
  ~Alive() { --live_engine_objects(); }
};

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

// Rows [first, first + count) as a PointSet on Space: the caller's memory when
// it is already the engine's layout, else one transposing kernel.
template <class Space>
PointSet<typename Space::memory_space> rows_of(Space const& space, Source<Space> const& s,
                                               std::int64_t first, std::int64_t count) {
  using Set = PointSet<typename Space::memory_space>;
  if (s.engine_layout(first, count))
    return Set(typename Set::coordinates_view(
        Kokkos::View<Coordinate**, Kokkos::LayoutLeft, typename Space::memory_space,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(const_cast<float*>(s.data), count,
                                                              s.cols)));
  auto set = allocate_points<typename Space::memory_space>("treetrav::python::points",
                                                           static_cast<Index>(count),
                                                           static_cast<int>(s.cols));
  auto coordinates = set.coordinates;
  float const* data = s.data;
  std::int64_t const rs = s.row_stride, cs = s.col_stride, cols = s.cols;
  Kokkos::parallel_for(
      "treetrav::python::rows_of", Kokkos::RangePolicy<Space>(space, 0, count),
      KOKKOS_LAMBDA(std::int64_t i) {
        for (std::int64_t k = 0; k < cols; ++k)
          coordinates(i, k) = data[(first + i) * rs + k * cs];
      });
  return set;
}

// How many of the caller's values are NaN or infinite.
template <class Space>
std::int64_t non_finite(Space const& space, Source<Space> const& s) {
  float const* data = s.data;
  std::int64_t const rs = s.row_stride, cs = s.col_stride, cols = s.cols;
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "treetrav::python::non_finite", Kokkos::RangePolicy<Space>(space, 0, s.rows * s.cols),
      KOKKOS_LAMBDA(std::int64_t e, std::int64_t & sum) {
        float const v = data[(e / cols) * rs + (e % cols) * cs];
        sum += (v - v == 0.0f) ? 0 : 1; // false for NaN and for infinities
      },
      bad);
  return bad;
}

template <class Space>
void check_finite(Space const& space, Source<Space> const& s, std::string const& parameter) {
  if (auto const bad = non_finite(space, s); bad > 0)
    throw InputError(parameter, ": " + std::to_string(bad) + " values are NaN or infinite");
}

// A result, type-erased on the engine thread for the caller to hand to
// Python: the View stays alive through `owner` (on the host a numpy array is
// made over its memory; on the GPU a DLPack-capable array that the Python
// layer wraps in the caller's framework).
struct Array {
  std::shared_ptr<void> owner;
  void* data = nullptr;
  std::size_t ndim = 0;
  std::size_t shape[2] = {0, 0};
  std::int64_t strides[2] = {0, 0};
  nb::dlpack::dtype dtype{};
  bool gpu = false;
  int device = 0;
};

// On the engine thread: `view` as an Array, copied to the host first when
// the caller passed host arrays to a GPU backend.
template <class View>
Array erase(View const& view, bool to_host) {
  using T = typename View::non_const_value_type;
  using MemorySpace = typename View::memory_space;
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  if constexpr (!host) {
    if (to_host)
      return erase(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view), true);
  }
  struct Owner {
    View view;
    Alive alive;
  };
  auto owner = std::make_shared<Owner>(Owner{view, {}});
  Array a;
  a.owner = owner;
  a.data = const_cast<T*>(view.data());
  a.ndim = View::rank;
  for (std::size_t r = 0; r < View::rank; ++r) {
    a.shape[r] = view.extent(r);
    a.strides[r] = static_cast<std::int64_t>(view.stride(r));
  }
  a.dtype = nb::dtype<T>();
  a.gpu = !host;
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (!host)
    a.device = Kokkos::Cuda().cuda_device();
#endif
  return a;
}

// With the GIL: the Array as a Python object.
inline nb::object to_python(Array const& a) {
  auto* owner = new std::shared_ptr<void>(a.owner);
  nb::capsule capsule(owner, [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  if (!a.gpu)
    return nb::cast(nb::ndarray<nb::numpy>(a.data, a.ndim, a.shape, capsule, a.strides, a.dtype,
                                           nb::device::cpu::value),
                    nb::rv_policy::reference);
  return nb::cast(nb::ndarray<>(a.data, a.ndim, a.shape, capsule, a.strides, a.dtype,
                                nb::device::cuda::value, a.device),
                  nb::rv_policy::reference);
}

// The backend a call names (none: the build's default).
inline Backend backend_named(std::string const& name) {
  return name.empty() ? default_backend() : parse_backend(name);
}

} // namespace treetrav::python
