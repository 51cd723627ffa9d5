#pragma once

#include <treetrav/core/config.hpp>

#include <cstdint>
#include <cstring>

namespace treetrav::detail {

// The bits of a float as an unsigned integer, and back. For non-negative
// floats the bits order like the values.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

KOKKOS_FORCEINLINE_FUNCTION float bits_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// The position of the lowest set bit (x != 0).
KOKKOS_FORCEINLINE_FUNCTION int lowest_set_bit(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(x)) - 1;
#else
  return __builtin_ctz(x);
#endif
}

KOKKOS_FORCEINLINE_FUNCTION int lowest_set_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

// The set bits.
KOKKOS_FORCEINLINE_FUNCTION int set_bits(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

// Leading zero bits (x != 0).
KOKKOS_FORCEINLINE_FUNCTION int leading_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

KOKKOS_FORCEINLINE_FUNCTION int leading_zeros(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return __builtin_clz(x);
#endif
}

// Smallest r with 2^r >= count (0 for count <= 1).
constexpr int ceil_log2(std::int64_t count) {
  int rounds = 0;
  while ((std::int64_t{1} << rounds) < count)
    ++rounds;
  return rounds;
}

} // namespace treetrav::detail
