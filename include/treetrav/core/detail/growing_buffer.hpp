#pragma once

#include <treetrav/core/allocate.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav::detail {

// Scratch memory kept between calls and viewed as whatever element type a call
// needs, so that repeated calls (treefix methods, RegTT runs) allocate nothing
// (a 2n-element scan buffer costs a cudaMalloc otherwise). It grows to the
// largest request.
template <class MemorySpace>
class GrowingBuffer {
public:
  template <class T>
  using view = Kokkos::View<T*, MemorySpace, Kokkos::MemoryUnmanaged>;

  explicit GrowingBuffer(std::string label) : label_(std::move(label)) {}

  // `count` uninitialised elements, valid until the next call of get().
  // With `headroom`, a buffer that grows takes an eighth more than asked:
  // for sizes that creep up from call to call (an octree's node count).
  template <class T, class ExecutionSpace>
  view<T> get(ExecutionSpace const& space, std::size_t count, bool headroom = false) {
    static_assert(std::is_trivially_copyable_v<T>, "the workspace holds raw bytes");
    // Kokkos aligns every allocation to at least 64 bytes.
    static_assert(alignof(T) <= 64, "the workspace cannot align T");
    std::size_t const bytes = count * sizeof(T);
    if (bytes > bytes_.extent(0)) {
      bytes_ = {}; // release the smaller buffer before taking the larger
      bytes_ = allocate_view<Kokkos::View<unsigned char*, MemorySpace>>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label_), headroom ? bytes + bytes / 8 : bytes);
    }
    return view<T>(reinterpret_cast<T*>(bytes_.data()), count);
  }

private:
  std::string label_;
  Kokkos::View<unsigned char*, MemorySpace> bytes_;
};

} // namespace treetrav::detail
