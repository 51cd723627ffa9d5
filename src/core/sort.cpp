// CUB's sorts for the keys the engine sorts (core/detail/sort.hpp says why
// they are compiled here, once).
#include <treetrav/core/detail/sort.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

namespace treetrav::detail {

namespace {

template <class Key>
std::size_t cub_sort_pairs(void* temp, std::size_t temp_bytes, Key const* keys, Key* sorted_keys,
                           Index const* values, Index* sorted_values, Index n, int key_bits,
                           cudaStream_t stream) {
  check_cuda(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, sorted_keys, values,
                                             sorted_values, n, 0, std::max(key_bits, 1), stream),
             temp ? "cub::DeviceRadixSort::SortPairs"
                  : "cub::DeviceRadixSort::SortPairs (size query)");
  return temp_bytes;
}

template <class Key>
std::size_t cub_sort_keys(void* temp, std::size_t temp_bytes, Key const* keys, Key* sorted_keys,
                          Index n, int key_bits, cudaStream_t stream) {
  check_cuda(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, sorted_keys, n, 0,
                                            std::max(key_bits, 1), stream),
             temp ? "cub::DeviceRadixSort::SortKeys" : "cub::DeviceRadixSort::SortKeys (size query)");
  return temp_bytes;
}

} // namespace

std::size_t sort_pairs_on_cuda(void* temp, std::size_t temp_bytes, std::uint32_t const* keys,
                               std::uint32_t* sorted_keys, Index const* values,
                               Index* sorted_values, Index n, int key_bits, cudaStream_t stream) {
  return cub_sort_pairs(temp, temp_bytes, keys, sorted_keys, values, sorted_values, n, key_bits,
                        stream);
}

std::size_t sort_pairs_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                               std::uint64_t* sorted_keys, Index const* values,
                               Index* sorted_values, Index n, int key_bits, cudaStream_t stream) {
  return cub_sort_pairs(temp, temp_bytes, keys, sorted_keys, values, sorted_values, n, key_bits,
                        stream);
}

std::size_t sort_keys_on_cuda(void* temp, std::size_t temp_bytes, std::uint32_t const* keys,
                              std::uint32_t* sorted_keys, Index n, int key_bits,
                              cudaStream_t stream) {
  return cub_sort_keys(temp, temp_bytes, keys, sorted_keys, n, key_bits, stream);
}

std::size_t sort_keys_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                              std::uint64_t* sorted_keys, Index n, int key_bits,
                              cudaStream_t stream) {
  return cub_sort_keys(temp, temp_bytes, keys, sorted_keys, n, key_bits, stream);
}

std::size_t sort_segments_on_cuda(void* temp, std::size_t temp_bytes, std::uint64_t const* keys,
                                  std::uint64_t* sorted_keys, std::int64_t items,
                                  std::int64_t segments, std::int64_t const* begins,
                                  std::int64_t const* ends, cudaStream_t stream) {
  check_cuda(cub::DeviceSegmentedSort::SortKeys(temp, temp_bytes, keys, sorted_keys, items, segments,
                                                begins, ends, stream),
             temp ? "cub::DeviceSegmentedSort::SortKeys"
                  : "cub::DeviceSegmentedSort::SortKeys (size query)");
  return temp_bytes;
}

} // namespace treetrav::detail
#endif
