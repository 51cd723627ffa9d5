#pragma once

#include <treetrav/core/allocate.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
#include <treetrav/core/error.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav::detail {

#if defined(KOKKOS_ENABLE_CUDA)
inline void check_cuda(cudaError_t status, char const* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// Temporaries carved out of one device allocation, each part 256-byte
// aligned: a Kokkos allocation and its release cost far more host time than
// cudaMallocAsync and cudaFreeAsync (perf/results/search/h100-sort/).
template <class MemorySpace, std::size_t Parts>
class Scratch {
public:
  template <class ExecutionSpace>
  Scratch(ExecutionSpace const& space, std::string const& label,
          std::size_t const (&bytes)[Parts])
      : Scratch(WorkspaceArrays<ExecutionSpace>(space, nullptr), label, bytes) {}
  // In the arrays' workspace when they have one.
  template <class ExecutionSpace>
  Scratch(WorkspaceArrays<ExecutionSpace> const& arrays, std::string const& label,
          std::size_t const (&bytes)[Parts]) {
    for (std::size_t j = 0; j < Parts; ++j)
      offsets_[j + 1] = offsets_[j] + (bytes[j] + 255) / 256 * 256;
    memory_ = arrays.template make<Kokkos::View<unsigned char*, MemorySpace>>(label, offsets_[Parts]);
  }
  void* part(std::size_t j) const { return memory_.data() + offsets_[j]; }

private:
  std::size_t offsets_[Parts + 1] = {};
  Kokkos::View<unsigned char*, MemorySpace> memory_;
};

// CUB's sorts, on `stream`; with temp == nullptr, the temporary storage they
// need (returned). Compiled once, in the library (src/core/sort.cpp), for
// the keys the engine sorts: CUB's sort kernels and its headers had been
// compiled again by every unit that builds a tree or orders queries.
//   sort_pairs_on_cuda: stable radix sort of (key, index) pairs over key bits
//     [0, key_bits);
//   sort_keys_on_cuda: the keys alone;
//   sort_segments_on_cuda: the keys ascending within each of `segments`
//     segments [begins(s), ends(s)).
std::size_t sort_pairs_on_cuda(void* temp, std::size_t temp_bytes, std::uint32_t const* keys,
                               std::uint32_t* sorted_keys, Index const* values,
                               Index* sorted_values, Index n, int key_bits, cudaStream_t stream);
std::size_t sort_pairs_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                               std::uint64_t* sorted_keys, Index const* values,
                               Index* sorted_values, Index n, int key_bits, cudaStream_t stream);
std::size_t sort_keys_on_cuda(void* temp, std::size_t temp_bytes, std::uint32_t const* keys,
                              std::uint32_t* sorted_keys, Index n, int key_bits,
                              cudaStream_t stream);
std::size_t sort_keys_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                              std::uint64_t* sorted_keys, Index n, int key_bits,
                              cudaStream_t stream);
std::size_t sort_segments_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                                  std::uint64_t* sorted_keys, std::int64_t items,
                                  std::int64_t segments, std::int64_t const* begins,
                                  std::int64_t const* ends, cudaStream_t stream);
#endif

// The first position of sorted keys [first, last) whose key is >= key.
template <class Keys>
KOKKOS_INLINE_FUNCTION Index lower_bound(Keys const& keys, Index first, Index last, std::uint64_t key) {
  while (first < last) {
    Index const middle = first + (last - first) / 2;
    if (keys(middle) < key) first = middle + 1;
    else last = middle;
  }
  return first;
}

// Named functors, not lambdas, for kernels in headers: nvcc's wrappers of
// extended lambdas instantiated from several translation units once crashed.
template <class MemorySpace>
struct Iota {
  Kokkos::View<Index*, MemorySpace> values;
  KOKKOS_FUNCTION void operator()(Index i) const { values(i) = i; }
};

// The host side of sort_permutation(): a stable LSD radix sort, 8 bits a
// pass, every pass parallel over contiguous blocks of the input (per-block
// digit counts, one scan over (digit, block), a scatter in input order within
// each block), so equal keys keep their index order like CUB's. It replaced
// sorted (key, index) pairs and a tree of pairwise merges whose last merges ran
// on one or two threads behind serial fill and copy loops.
template <class ExecutionSpace, class MemorySpace, class Key>
void radix_sort_on_host(ExecutionSpace const& space, Kokkos::View<Key*, MemorySpace> keys,
                        int key_bits, std::string const& label,
                        Kokkos::View<Index*, MemorySpace> permutation,
                        Kokkos::View<Key*, MemorySpace> sorted_keys) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible);
  constexpr int digit_bits = 8, digits = 1 << digit_bits;
  Index const n = static_cast<Index>(keys.extent(0));
  int const passes = std::max(1, (key_bits + digit_bits - 1) / digit_bits);
  // Blocks of at least 4096 keys: smaller ones would cost more in counts than in keys.
  Index const blocks = std::max<Index>(1, std::min<Index>(space.concurrency(), n / 4096));
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::" + member);
  };
  Kokkos::View<Key*, MemorySpace> key_buffer[2] = {
      keys, Kokkos::View<Key*, MemorySpace>(alloc("radix_keys"), n)};
  // The index buffers alternate like the keys: the last pass writes `permutation`.
  Kokkos::View<Index*, MemorySpace> index_buffer[2] = {
      Kokkos::View<Index*, MemorySpace>(alloc("radix_indices"), n), permutation};
  if (passes % 2 == 0)
    std::swap(index_buffer[0], index_buffer[1]);
  Kokkos::View<Index**, Kokkos::LayoutRight, Kokkos::HostSpace> offsets(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::radix_offsets"), blocks, digits);
  auto const block_begin = [=](Index b) { return Index(std::int64_t(n) * b / blocks); };
  auto const policy = Kokkos::RangePolicy<ExecutionSpace>(space, 0, blocks);
  for (int pass = 0; pass < passes; ++pass) {
    auto const from_keys = key_buffer[pass % 2], to_keys = key_buffer[1 - pass % 2];
    auto const from_indices = index_buffer[pass % 2], to_indices = index_buffer[1 - pass % 2];
    int const shift = pass * digit_bits;
    Kokkos::parallel_for(label + "::radix_count", policy, [&](Index b) {
      Index* const count = &offsets(b, 0);
      std::fill(count, count + digits, Index(0));
      for (Index i = block_begin(b); i < block_begin(b + 1); ++i)
        ++count[from_keys(i) >> shift & (digits - 1)];
    });
    space.fence();
    Index sum = 0;
    for (int d = 0; d < digits; ++d)
      for (Index b = 0; b < blocks; ++b) {
        Index const count = offsets(b, d);
        offsets(b, d) = sum;
        sum += count;
      }
    Kokkos::parallel_for(label + "::radix_scatter", policy, [&](Index b) {
      Index* const next = &offsets(b, 0);
      for (Index i = block_begin(b); i < block_begin(b + 1); ++i) {
        Key const key = from_keys(i);
        Index const to = next[key >> shift & (digits - 1)]++;
        to_keys(to) = key;
        to_indices(to) = pass == 0 ? i : from_indices(i);
      }
    });
    space.fence();
  }
  if (sorted_keys.extent(0) == std::size_t(n))
    Kokkos::deep_copy(space, sorted_keys, key_buffer[passes % 2]);
}

// The stable sorting permutation of `keys`: position i of the sorted sequence
// holds keys(permutation(i)); equal keys keep their index order, so every
// backend returns the same permutation. Only bits [0, key_bits) of the keys
// are compared (higher bits must be zero). `keys` may be reordered; when
// `sorted_keys` is allocated (same size), it receives the keys in sorted order.
// With a workspace, the permutation and the sort's scratch are its arrays
// (WorkspaceArrays), named after `label`.
//   Cuda: CUB's radix sort (stable); host spaces: radix_sort_on_host().
template <class ExecutionSpace, class MemorySpace, class Key>
Kokkos::View<Index*, MemorySpace>
sort_permutation(ExecutionSpace const& space, Kokkos::View<Key*, MemorySpace> keys, int key_bits,
                 std::string const& label, Kokkos::View<Key*, MemorySpace> sorted_keys = {},
                 Workspace* workspace = nullptr) {
  static_assert(std::is_unsigned_v<Key>, "sort keys are unsigned integers");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the keys");
  Index const n = static_cast<Index>(keys.extent(0));
  WorkspaceArrays<ExecutionSpace> const arrays(space, workspace);
  auto const permutation = arrays.template make<Kokkos::View<Index*, MemorySpace>>(label + "::permutation", n);
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    cudaStream_t const stream = space.cuda_stream();
    std::size_t const temp_bytes = sort_pairs_on_cuda(
        nullptr, 0, static_cast<Key const*>(nullptr), nullptr, nullptr, nullptr, n, key_bits, stream);
    // The identity (CUB's values in), the sorted keys unless the caller keeps
    // them, and CUB's temporary storage.
    bool const keep_keys = sorted_keys.extent(0) == std::size_t(n);
    Scratch<MemorySpace, 3> scratch(arrays, label + "::sort_scratch",
                                    {n * sizeof(Index), keep_keys ? 0 : n * sizeof(Key), temp_bytes});
    Kokkos::View<Index*, MemorySpace, Kokkos::MemoryUnmanaged> identity(
        static_cast<Index*>(scratch.part(0)), n);
    Kokkos::parallel_for(label + "::iota", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                         Iota<MemorySpace>{identity});
    sort_pairs_on_cuda(scratch.part(2), temp_bytes, keys.data(),
                       keep_keys ? sorted_keys.data() : static_cast<Key*>(scratch.part(1)),
                       identity.data(), permutation.data(), n, key_bits, stream);
#endif
  } else {
    radix_sort_on_host(space, keys, key_bits, label, permutation, sorted_keys);
  }
  return permutation;
}

// `keys` sorted into `sorted_keys` (same size) by bits [0, key_bits), where
// no permutation is wanted (the octree's node keys name their nodes). Cuda:
// CUB's keys-only radix sort, its scratch in the workspace when given; host
// spaces: sort_permutation's sort, its permutation dropped.
template <class ExecutionSpace, class MemorySpace, class Key>
void sort_keys(ExecutionSpace const& space, Kokkos::View<Key*, MemorySpace> keys, int key_bits,
               std::string const& label, Kokkos::View<Key*, MemorySpace> sorted_keys,
               Workspace* workspace = nullptr) {
  static_assert(std::is_unsigned_v<Key>, "sort keys are unsigned integers");
  if (sorted_keys.extent(0) != keys.extent(0))
    throw std::invalid_argument(label + ": sorted keys and keys differ in size");
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Index const n = static_cast<Index>(keys.extent(0));
    cudaStream_t const stream = space.cuda_stream();
    std::size_t const bytes =
        sort_keys_on_cuda(nullptr, 0, keys.data(), sorted_keys.data(), n, key_bits, stream);
    Scratch<MemorySpace, 1> scratch(WorkspaceArrays<ExecutionSpace>(space, workspace), label + "::sort_scratch",
                                    {bytes});
    sort_keys_on_cuda(scratch.part(0), bytes, keys.data(), sorted_keys.data(), n, key_bits, stream);
#endif
  } else {
    sort_permutation(space, keys, key_bits, label, sorted_keys, workspace);
  }
}

template <class MemorySpace>
struct SortSegmentOnHost {
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  Kokkos::View<std::int64_t const*, MemorySpace> begins, ends;
  void operator()(Index segment) const {
    std::sort(keys.data() + begins(segment), keys.data() + ends(segment));
  }
};

// Sorts `keys` ascending within each segment [begins(s), ends(s)) (segments
// disjoint; keys outside every segment are left as they are on host spaces
// and undefined in the result on Cuda). Returns the sorted keys (on Cuda a new
// View: CUB's segmented sort; on host spaces `keys` itself, a std::sort per
// segment).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<std::uint64_t*, MemorySpace>
sort_segments(ExecutionSpace const& space, Kokkos::View<std::uint64_t*, MemorySpace> keys,
              Kokkos::View<std::int64_t const*, MemorySpace> begins,
              Kokkos::View<std::int64_t const*, MemorySpace> ends, std::string const& label) {
  std::int64_t const items = static_cast<std::int64_t>(keys.extent(0));
  std::int64_t const segments = static_cast<std::int64_t>(begins.extent(0));
  if (items == 0 || segments == 0)
    return keys;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::View<std::uint64_t*, MemorySpace> sorted(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::sorted"), items);
    std::size_t const temp_bytes =
        sort_segments_on_cuda(nullptr, 0, keys.data(), sorted.data(), items, segments,
                              begins.data(), ends.data(), space.cuda_stream());
    Kokkos::View<char*, MemorySpace> temp(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::temp"), temp_bytes);
    sort_segments_on_cuda(temp.data(), temp_bytes, keys.data(), sorted.data(), items, segments,
                          begins.data(), ends.data(), space.cuda_stream());
    return sorted;
#endif
  } else {
    Kokkos::parallel_for(label + "::sort_segments",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, segments),
                         SortSegmentOnHost<MemorySpace>{keys, begins, ends});
    return keys;
  }
}

} // namespace treetrav::detail
