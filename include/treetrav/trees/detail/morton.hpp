#pragma once

#include <treetrav/core/allocate.hpp>
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/point_set.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/block/block_reduce.cuh>
#endif

namespace treetrav::detail {

// Per-dimension extent of a point set: box(k) the least coordinate k,
// box(dimension + k) the greatest.
template <class MemorySpace>
using BoundingBox = Kokkos::View<Coordinate*, MemorySpace>;

// The extremes of every dimension as one array reduction over the points
// (minima, then maxima): a GPU block reduces in shared memory, blocks
// combine in the kernel, and the result lands in device memory without a
// host round trip. Exact: minima and maxima do not depend on the order.
template <class MemorySpace>
struct BoxReduction {
  using value_type = Coordinate[];
  using size_type = int;
  int value_count; // 2 * dimension
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;

  KOKKOS_FUNCTION void init(value_type bounds) const {
    for (int k = 0; k < value_count / 2; ++k) {
      bounds[k] = infinity;
      bounds[value_count / 2 + k] = -infinity;
    }
  }
  KOKKOS_FUNCTION void join(TREETRAV_JOIN_ARGUMENT value_type bounds,
                            TREETRAV_JOIN_ARGUMENT value_type const other) const {
    for (int k = 0; k < value_count / 2; ++k) {
      int const hi = value_count / 2 + k;
      bounds[k] = other[k] < bounds[k] ? other[k] : bounds[k];
      bounds[hi] = other[hi] > bounds[hi] ? other[hi] : bounds[hi];
    }
  }
  KOKKOS_FUNCTION void operator()(Index i, value_type bounds) const {
    for (int k = 0; k < value_count / 2; ++k) {
      Coordinate const x = coordinates(i, k);
      int const hi = value_count / 2 + k;
      bounds[k] = x < bounds[k] ? x : bounds[k];
      bounds[hi] = x > bounds[hi] ? x : bounds[hi];
    }
  }
};

// The bounding box of `points`, computed in `space` without a host round trip.
template <class ExecutionSpace, class MemorySpace>
BoundingBox<MemorySpace> bounding_box(ExecutionSpace const& space,
                                      PointSet<MemorySpace> const& points,
                                      std::string const& label) {
  int const dimension = points.dimension();
  BoundingBox<MemorySpace> box(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::bounding_box"),
      2 * dimension);
  Kokkos::parallel_reduce(label + "::bounding_box",
                          Kokkos::RangePolicy<ExecutionSpace>(space, 0, points.size()),
                          BoxReduction<MemorySpace>{2 * dimension, points.coordinates}, box);
  return box;
}

// Morton (Z-order) codes over a box: `bits` bits per dimension, interleaved
// from the most significant, dimension 0 first. Coordinates outside the box
// are clamped to it (queries may lie outside the reference points' box).
// Float arithmetic without contractible multiply-adds, so host and device
// compute the same codes.
template <class MemorySpace>
struct MortonEncoder {
  BoundingBox<MemorySpace> box;
  int dimension;
  int bits; // per dimension; bits * coded() <= 64

  // A 64-bit code holds one bit of at most 64 coordinates: the first 64 are
  // coded, further ones would not refine it.
  static constexpr int max_coded = 64;

  static int bits_per_dimension(int dimension) {
    return dimension > 21 ? 1 : 63 / dimension > 21 ? 21 : 63 / dimension;
  }
  KOKKOS_FUNCTION int coded() const { return dimension < max_coded ? dimension : max_coded; }
  int key_bits() const { return bits * coded(); }

  template <class Coordinates>
  KOKKOS_FUNCTION std::uint64_t operator()(Coordinates const& x, Index i) const {
    Coordinate const top = static_cast<Coordinate>((std::uint32_t(1) << bits) - 1);
    // Bit b of coordinate k's cell goes to bit b * n + (n - 1 - k) (no
    // per-dimension array: one indexed at run time lives in local memory).
    int const n = coded();
    std::uint64_t code = 0;
    for (int k = 0; k < n; ++k) {
      Coordinate const lo = box(k), extent = box(dimension + k) - lo;
      Coordinate const scaled = extent > 0 ? (x(i, k) - lo) / extent * top : Coordinate(0);
      std::uint32_t const cell = static_cast<std::uint32_t>(scaled < 0     ? Coordinate(0)
                                                            : scaled > top ? top
                                                                           : scaled);
      for (int b = 0; b < bits; ++b)
        code |= std::uint64_t(cell >> b & 1u) << (b * n + (n - 1 - k));
    }
    return code;
  }
};

template <class MemorySpace, class Key>
struct MortonCodes {
  MortonEncoder<MemorySpace> encode;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates;
  Kokkos::View<Key*, MemorySpace> codes;
  KOKKOS_FUNCTION void operator()(Index i) const {
    codes(i) = static_cast<Key>(encode(coordinates, i));
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <class MemorySpace>
struct MortonBoxLaunch {
  static constexpr int block = 256;
  static constexpr Index points_per_block = 4096; // 16 a thread and dimension
  static int blocks(Index n) {
    return static_cast<int>(
        std::clamp<Index>((n + points_per_block - 1) / points_per_block, 1, 1024));
  }
};

// The bounding box in one kernel: block b reduces a grid-strided share of the
// points into partials(b, .) (minima, then maxima); the last block to arrive
// (an atomic count after a fence) reduces the partials into `box`.
template <class MemorySpace>
__global__ void __launch_bounds__(MortonBoxLaunch<MemorySpace>::block)
    morton_box_kernel(Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates,
                      Coordinate* partials, unsigned* arrivals, Coordinate* box) {
  constexpr int block = MortonBoxLaunch<MemorySpace>::block;
  using Reduce = cub::BlockReduce<Coordinate, block>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ bool last;
  auto const least = [](Coordinate a, Coordinate b) { return b < a ? b : a; };
  auto const greatest = [](Coordinate a, Coordinate b) { return b > a ? b : a; };
  Index const n = static_cast<Index>(coordinates.extent(0));
  int const dimension = static_cast<int>(coordinates.extent(1)), values = 2 * dimension;
  for (int k = 0; k < dimension; ++k) {
    Coordinate lo = infinity, hi = -infinity;
    // Four loads in flight before any is used: one at a time, the loop
    // waited out the memory latency of every point.
    // 64-bit positions: i + 3 * stride may pass the largest Index.
    std::int64_t const stride = std::int64_t(gridDim.x) * block;
    std::int64_t i = std::int64_t(blockIdx.x) * block + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
      Coordinate const x[4] = {coordinates(i, k), coordinates(i + stride, k),
                               coordinates(i + 2 * stride, k), coordinates(i + 3 * stride, k)};
      lo = least(least(lo, x[0]), least(x[1], least(x[2], x[3])));
      hi = greatest(greatest(hi, x[0]), greatest(x[1], greatest(x[2], x[3])));
    }
    for (; i < n; i += stride) {
      lo = least(lo, coordinates(i, k));
      hi = greatest(hi, coordinates(i, k));
    }
    lo = Reduce(temp).Reduce(lo, least);
    __syncthreads();
    hi = Reduce(temp).Reduce(hi, greatest);
    __syncthreads();
    if (threadIdx.x == 0) {
      partials[blockIdx.x * values + k] = lo;
      partials[blockIdx.x * values + dimension + k] = hi;
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(arrivals, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last)
    return;
  for (int j = 0; j < values; ++j) {
    bool const lower = j < dimension;
    Coordinate extreme = lower ? infinity : -infinity;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += block) {
      Coordinate const partial =
          __ldcg(&partials[b * values + j]); // past L1: other blocks wrote it
      extreme = lower ? least(extreme, partial) : greatest(extreme, partial);
    }
    extreme = lower ? Reduce(temp).Reduce(extreme, least) : Reduce(temp).Reduce(extreme, greatest);
    __syncthreads();
    if (threadIdx.x == 0)
      box[j] = extreme;
  }
}

// The box of `coordinates` into box[0, 2 dimension) (minima, then maxima) on
// `stream`: morton_box_kernel over `blocks` blocks, `partials` (blocks x 2
// dimension values) and `arrivals` its scratch.
template <class MemorySpace>
void launch_morton_box(cudaStream_t stream, Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates,
                       int blocks, Coordinate* partials, unsigned* arrivals, Coordinate* box) {
  check_cuda(cudaMemsetAsync(arrivals, 0, sizeof(unsigned), stream), "cudaMemsetAsync");
  morton_box_kernel<MemorySpace>
      <<<blocks, MortonBoxLaunch<MemorySpace>::block, 0, stream>>>(coordinates, partials, arrivals, box);
  check_cuda(cudaGetLastError(), "morton_box_kernel");
}

// Morton codes and the identity permutation (CUB's values in), in one pass.
template <class MemorySpace, class Key>
__global__ void
morton_code_kernel(MortonEncoder<MemorySpace> encode,
                   Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> coordinates,
                   Key* codes, Index* identity) {
  Index const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= static_cast<Index>(coordinates.extent(0)))
    return;
  codes[i] = static_cast<Key>(encode(coordinates, i));
  identity[i] = i;
}
#endif

// The permutation that orders `points` along the Morton curve of their
// bounding box at `bits` per dimension; ties (equal codes) keep index order,
// the same on every backend. With `sorted_codes` allocated (one per point),
// it receives the codes in that order. Key: std::uint32_t for codes of up to
// 32 bits (fewer radix passes), else std::uint64_t.
//   Cuda: one scratch allocation, the box and the codes in a kernel each, and
//   CUB's radix sort, about half the time a Kokkos array reduction, Kokkos
//   kernels and four allocations took (perf/results/search/h100-sort/). Host
//   spaces: the same steps as Kokkos kernels.
template <class Key, class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace>
morton_sort(ExecutionSpace const& space, PointSet<MemorySpace> const& points, int bits,
            std::string const& label, Kokkos::View<Key*, MemorySpace> sorted_codes = {}) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the points");
  Index const n = points.size();
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::" + member);
  };
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    using Launch = MortonBoxLaunch<MemorySpace>;
    int const dimension = points.dimension(), blocks = Launch::blocks(n);
    MortonEncoder<MemorySpace> encode{{}, dimension, bits}; // its box: in the scratch, below
    cudaStream_t const stream = space.cuda_stream();
    std::size_t const temp_bytes = sort_pairs_on_cuda(nullptr, 0, static_cast<Key const*>(nullptr),
                                                      nullptr, nullptr, nullptr, n,
                                                      encode.key_bits(), stream);
    bool const keep_codes = sorted_codes.extent(0) == std::size_t(n);
    // Every temporary: box, per-block partial boxes, the arrival count, codes,
    // identity (CUB's values in), sorted codes unless the caller keeps them,
    // CUB's storage.
    Scratch<MemorySpace, 7> scratch(space, label + "::morton_scratch",
                                    {2 * dimension * sizeof(Coordinate),
                                     std::size_t(blocks) * 2 * dimension * sizeof(Coordinate),
                                     sizeof(unsigned), n * sizeof(Key), n * sizeof(Index),
                                     keep_codes ? 0 : n * sizeof(Key), temp_bytes});
    auto* const box = static_cast<Coordinate*>(scratch.part(0));
    auto* const partials = static_cast<Coordinate*>(scratch.part(1));
    auto* const arrivals = static_cast<unsigned*>(scratch.part(2));
    auto* const codes = static_cast<Key*>(scratch.part(3));
    auto* const identity = static_cast<Index*>(scratch.part(4));
    Key* const sorted = keep_codes ? sorted_codes.data() : static_cast<Key*>(scratch.part(5));
    encode.box = BoundingBox<MemorySpace>(box, 2 * dimension);
    launch_morton_box(stream, points.coordinates, blocks, partials, arrivals, box);
    if (n > 0)
      morton_code_kernel<MemorySpace, Key>
          <<<(n + 255) / 256, 256, 0, stream>>>(encode, points.coordinates, codes, identity);
    check_cuda(cudaGetLastError(), "morton_code_kernel");
    // Allocated while the device works (the allocation's host time hidden).
    auto const permutation = allocate_view<Kokkos::View<Index*, MemorySpace>>(alloc("permutation"), n);
    sort_pairs_on_cuda(scratch.part(6), temp_bytes, codes, sorted, identity, permutation.data(), n,
                       encode.key_bits(), stream);
    return permutation;
#endif
  } else {
    auto const box = bounding_box(space, points, label);
    MortonEncoder<MemorySpace> encode{box, points.dimension(), bits};
    Kokkos::View<Key*, MemorySpace> codes(alloc("morton_codes"), n);
    Kokkos::parallel_for(label + "::morton_codes", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                         MortonCodes<MemorySpace, Key>{encode, points.coordinates, codes});
    return sort_permutation(space, codes, encode.key_bits(), label, sorted_codes);
  }
}

} // namespace treetrav::detail
