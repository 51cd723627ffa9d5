#pragma once

#include <treetrav/core/config.hpp>

#include <cstdint>

namespace treetrav::detail {

using LaneMask = std::uint32_t;

KOKKOS_FORCEINLINE_FUNCTION int popcount(LaneMask mask) {
#if defined(__CUDA_ARCH__)
  return __popc(mask);
#else
  return __builtin_popcount(mask);
#endif
}

// A warp as the lockstep kernels see it: lanes that walk the tree together,
// vote with ballots, and keep private per-lane state. Two implementations of
// one interface, so each kernel body is written once:
//  - CudaWarp: each CUDA thread is one lane; per-lane state is a register
//    value; votes are __ballot_sync over the warp's active threads.
//  - HostWarp: one host thread runs all `size` lanes in turn; per-lane state
//    is an array. Same semantics, so CI tests the lockstep logic on the CPU.
// for_each_lane(f) runs f(lane, state) for each lane this thread owns;
// ballot(f) returns the mask of lanes where f(lane, state) is true;
// exclusive_scan(value, store) hands each lane the sum of value() over the
// lanes before it (store(lane, state, sum)) and returns the warp's total;
// uniform(f) returns f() evaluated once for the warp (e.g. an atomic);
// sync() orders the lanes' scratch-memory accesses (__syncwarp).
// reduce_or(f) returns the bitwise or over the lanes of f(lane, state), a
// 64-bit word.
// exclusive_scan and uniform need all 32 lanes of a CUDA warp present.

// Lanes below `lane` in `mask`: a lane's slot among the lanes that vote yes.
KOKKOS_FORCEINLINE_FUNCTION int lanes_before(LaneMask mask, int lane) {
  return popcount(mask & ((LaneMask(1) << lane) - 1));
}

#if defined(KOKKOS_ENABLE_CUDA)
struct CudaWarp {
  static constexpr int max_size = 32;
  template <class T>
  struct PerLane {
    T value;
    KOKKOS_FORCEINLINE_FUNCTION T& operator()(int) { return value; }
  };

  int lane;
  LaneMask members;

  KOKKOS_FORCEINLINE_FUNCTION int size() const { return max_size; }
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each_lane(PerLane<T>& state, F const& f) const {
    f(lane, state.value);
  }
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION LaneMask ballot(PerLane<T>& state, F const& f) const {
#if defined(__CUDA_ARCH__)
    return __ballot_sync(members, f(lane, state.value));
#else
    return f(lane, state.value) ? LaneMask(1) << lane : 0;  // host pass of a device-only path
#endif
  }
  template <class T, class Value, class Store>
  KOKKOS_FORCEINLINE_FUNCTION int exclusive_scan(PerLane<T>& state, Value const& value, Store const& store) const {
    int const own = value(lane, state.value);
    int sum = own;
#if defined(__CUDA_ARCH__)
    for (int distance = 1; distance < max_size; distance <<= 1) {
      int const below = __shfl_up_sync(members, sum, distance);
      if (lane >= distance) sum += below;
    }
    store(lane, state.value, sum - own);
    return __shfl_sync(members, sum, max_size - 1);
#else
    store(lane, state.value, 0);
    return sum;
#endif
  }
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION auto uniform(F const& f) const {
    decltype(f()) value{};
    if (lane == 0) value = f();
#if defined(__CUDA_ARCH__)
    value = __shfl_sync(members, value, 0);
#endif
    return value;
  }
  KOKKOS_FORCEINLINE_FUNCTION void sync() const {
#if defined(__CUDA_ARCH__)
    __syncwarp(members);
#endif
  }
  template <class T, class F>
  KOKKOS_FORCEINLINE_FUNCTION std::uint64_t reduce_or(PerLane<T>& state, F const& f) const {
    std::uint64_t const word = f(lane, state.value);
#if defined(__CUDA_ARCH__)
    std::uint64_t const high = __reduce_or_sync(members, static_cast<unsigned>(word >> 32));
    return high << 32 | __reduce_or_sync(members, static_cast<unsigned>(word));
#else
    return word;  // host pass of a device-only path
#endif
  }
};
#endif

// (Callable from device code only so that kernels instantiated for it compile
// warning-free in CUDA builds; it is only ever run on host backends.)
struct HostWarp {
  static constexpr int max_size = 32;
  template <class T>
  struct PerLane {
    T values[max_size];
    KOKKOS_INLINE_FUNCTION T& operator()(int lane) { return values[lane]; }
  };

  int lanes;

  KOKKOS_INLINE_FUNCTION int size() const { return lanes; }
  template <class T, class F>
  KOKKOS_INLINE_FUNCTION void for_each_lane(PerLane<T>& state, F const& f) const {
    for (int lane = 0; lane < lanes; ++lane) f(lane, state.values[lane]);
  }
  template <class T, class F>
  KOKKOS_INLINE_FUNCTION LaneMask ballot(PerLane<T>& state, F const& f) const {
    LaneMask mask = 0;
    for (int lane = 0; lane < lanes; ++lane)
      if (f(lane, state.values[lane])) mask |= LaneMask(1) << lane;
    return mask;
  }
  template <class T, class Value, class Store>
  KOKKOS_INLINE_FUNCTION int exclusive_scan(PerLane<T>& state, Value const& value, Store const& store) const {
    int sum = 0;
    for (int lane = 0; lane < lanes; ++lane) {
      int const own = value(lane, state.values[lane]);
      store(lane, state.values[lane], sum);
      sum += own;
    }
    return sum;
  }
  template <class F>
  KOKKOS_INLINE_FUNCTION auto uniform(F const& f) const {
    return f();
  }
  KOKKOS_INLINE_FUNCTION void sync() const {}
  template <class T, class F>
  KOKKOS_INLINE_FUNCTION std::uint64_t reduce_or(PerLane<T>& state, F const& f) const {
    std::uint64_t word = 0;
    for (int lane = 0; lane < lanes; ++lane) word |= f(lane, state.values[lane]);
    return word;
  }
};

}  // namespace treetrav::detail
