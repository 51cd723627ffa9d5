#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/core/detail/growing_buffer.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>

#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>

#include <cstdint>
#include <stdexcept>
#endif

namespace treetrav::detail {

// A scan that gathers its input and scatters its output: for s in [0, count),
// output(s, input(0) + ... + input(s)), combining with the operation. Input
// and Output are small device-copyable functors:
//   accumulator_type Input::operator()(Index s) const;
//   void Output::operator()(Index s, accumulator_type const& prefix) const;
// so that a treefix reads its weights and writes its results inside the scan,
// without a 2n-step buffer in memory in between.

// Kokkos' scan with the operation's combine, identity and accumulator type.
template <class Operation, class Input, class Output>
struct GatherScatterScan {
  using value_type = typename Operation::accumulator_type;

  Operation op;
  Input input;
  Output output;

  KOKKOS_FUNCTION void init(value_type& value) const { value = op.identity(); }
  KOKKOS_FUNCTION void join(TREETRAV_JOIN_ARGUMENT value_type& update,
                            TREETRAV_JOIN_ARGUMENT value_type const& in) const {
    auto& sum = const_cast<value_type&>(update);
    sum = op.combine(sum, const_cast<value_type const&>(in));
  }
  KOKKOS_FUNCTION void operator()(Index s, value_type& update, bool final) const {
    update = op.combine(update, input(s));
    if (final)
      output(s, update);
  }
};

template <class Operation>
struct Combine {
  using accumulator_type = typename Operation::accumulator_type;
  Operation op;
  KOKKOS_FUNCTION accumulator_type operator()(accumulator_type const& a,
                                              accumulator_type const& b) const {
    return op.combine(a, b);
  }
};

// The random-access iterators CUB's scan reads and writes through: position s
// of the input iterator is input(s); assigning to position s of the output
// iterator calls output(s, value). One iterator over positions, whose Access
// says what a position gives.
template <class Access>
struct PositionIterator {
  using value_type = typename Access::value_type;
  using difference_type = std::ptrdiff_t;
  using pointer = typename Access::pointer;
  using reference = typename Access::reference;
  using iterator_category = std::random_access_iterator_tag;

  Access access;
  difference_type position;

  KOKKOS_FUNCTION reference operator[](difference_type i) const {
    return access(static_cast<Index>(position + i));
  }
  KOKKOS_FUNCTION reference operator*() const { return access(static_cast<Index>(position)); }
  KOKKOS_FUNCTION PositionIterator operator+(difference_type i) const {
    return {access, position + i};
  }
  KOKKOS_FUNCTION PositionIterator& operator+=(difference_type i) {
    position += i;
    return *this;
  }
  KOKKOS_FUNCTION PositionIterator& operator++() {
    ++position;
    return *this;
  }
  KOKKOS_FUNCTION difference_type operator-(PositionIterator const& other) const {
    return position - other.position;
  }
};

// Position s reads input(s).
template <class Value, class Input>
struct Gather {
  using value_type = Value;
  using pointer = Value const*;
  using reference = Value;

  Input input;

  KOKKOS_FUNCTION Value operator()(Index s) const { return input(s); }
};

// Assigning to position s calls output(s, value).
template <class Value, class Output>
struct Scatter {
  struct Proxy {
    Output const* output;
    Index position;
    KOKKOS_FUNCTION Proxy const& operator=(Value const& value) const {
      (*output)(position, value);
      return *this;
    }
  };
  using value_type = Value;
  using pointer = void;
  using reference = Proxy;

  Output output;

  KOKKOS_FUNCTION Proxy operator()(Index s) const { return {&output, s}; }
};

template <class Value, class Input>
using GatherIterator = PositionIterator<Gather<Value, Input>>;
template <class Value, class Output>
using ScatterIterator = PositionIterator<Scatter<Value, Output>>;

#if defined(KOKKOS_ENABLE_CUDA) && CUB_VERSION >= 300000
// Hopper policy of the fused treefix scans: 256 threads x 16 items (scaled
// down for wider accumulators). CUB's tuned Hopper policy for sums of 4-byte
// values (128 x 24, which its dispatch keeps for its own operators; our
// combine otherwise falls back to 15 items) was slower on Hopper at 2^24
// vertices (perf/results/treefix/). Each item costs a
// dependent gather; smaller tiles keep more of them in flight per SM. Blocked
// (direct) loads or stores, 128 x 32, and chunks of 2 or 4 steps per item
// loaded as int2 / int4 were all slower.
template <class Accumulator>
struct GatherScanPolicy {
  struct Policy900 : cub::ChainedPolicy<900, Policy900, Policy900> {
    using ScanPolicyT = cub::AgentScanPolicy<256, 16, Accumulator, cub::BLOCK_LOAD_WARP_TRANSPOSE,
                                             cub::LOAD_DEFAULT, cub::BLOCK_STORE_WARP_TRANSPOSE,
                                             cub::BLOCK_SCAN_WARP_SCANS,
                                             cub::detail::MemBoundScaling<256, 16, Accumulator>,
                                             cub::detail::fixed_delay_constructor_t<688, 1140>>;
  };
  using MaxPolicy = Policy900;
};
#endif

// The scan above, combining left to right. On Cuda, one pass of CUB's
// decoupled look-back scan over the iterators, asynchronous on the space's
// stream, its temporary storage kept in `cub_storage` between calls (a
// GrowingBuffer, or anything with its get()); the grouping of a
// floating-point sum then depends on timing: results are within the same
// bounds but not bit-reproducible (integer sums are exact). Elsewhere Kokkos'
// scan, which calls input() twice per position.
template <class ExecutionSpace, class Operation, class Input, class Output, class Storage>
void gather_scatter_scan(ExecutionSpace const& space, std::string const& label, Operation const& op,
                         Index count, Input const& input, Output const& output,
                         [[maybe_unused]] Storage& cub_storage) {
  using Accumulator = typename Operation::accumulator_type;
  static_assert(std::is_same_v<decltype(input(Index{})), Accumulator>,
                "the scan's input gives the operation's accumulators");
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) {
    GatherIterator<Accumulator, Input> const in{{input}, 0};
    ScatterIterator<Accumulator, Output> const out{{output}, 0};
#if CUB_VERSION >= 300000
    auto const scan = [&](void* storage, std::size_t& bytes) {
      return cub::DispatchScan<
          GatherIterator<Accumulator, Input>, ScatterIterator<Accumulator, Output>,
          Combine<Operation>, cub::NullType, std::uint32_t, Accumulator, cub::ForceInclusive::No,
          GatherScanPolicy<Accumulator>>::Dispatch(storage, bytes, in, out, Combine<Operation>{op},
                                                   cub::NullType{},
                                                   static_cast<std::uint32_t>(count),
                                                   space.cuda_stream());
    };
#else
    auto const scan = [&](void* storage, std::size_t& bytes) {
      return cub::DeviceScan::InclusiveScan(storage, bytes, in, out, Combine<Operation>{op}, count,
                                            space.cuda_stream());
    };
#endif
    std::size_t bytes = 0;
    auto status = scan(nullptr, bytes);
    if (status == cudaSuccess) {
      auto const storage = cub_storage.template get<unsigned char>(space, bytes);
      status = scan(storage.data(), bytes);
    }
    if (status != cudaSuccess)
      throw std::runtime_error(label + ": CUB scan failed: " + cudaGetErrorString(status));
    return;
  }
#endif
  Kokkos::parallel_scan(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                        GatherScatterScan<Operation, Input, Output>{op, input, output});
}

// The sum of Index counts, for gather_scatter_scan.
struct IndexSum {
  using accumulator_type = Index;
  KOKKOS_FUNCTION static Index identity() { return 0; }
  KOKKOS_FUNCTION static Index combine(Index a, Index b) { return a + b; }
};

// lay_out_counts' output: the first item of each position, and the total.
template <class MemorySpace, class Count, class Place>
struct PlaceCounts {
  Count input;
  Place output;
  Kokkos::View<Index, MemorySpace> total;
  Index last;
  KOKKOS_FUNCTION void operator()(Index i, Index inclusive) const {
    output(i, inclusive - input(i));
    if (i == last)
      total() = inclusive;
  }
};

// lay_out_counts' plainest output: each position's first item, into a view.
template <class MemorySpace>
struct PlaceFirst {
  Kokkos::View<Index*, MemorySpace> first;
  KOKKOS_FUNCTION void operator()(Index i, Index at) const { first(i) = at; }
};

// A GrowingBuffer's get() over WorkspaceArrays: scratch under one name.
template <class ExecutionSpace>
struct NamedScratch {
  WorkspaceArrays<ExecutionSpace> arrays;
  std::string name;
  template <class T>
  Kokkos::View<T*, typename ExecutionSpace::memory_space> get(ExecutionSpace const&, std::size_t n) const {
    return arrays.template make<Kokkos::View<T*, typename ExecutionSpace::memory_space>>(name, n);
  }
};

// Counts laid out one after another: `input(i)` items at position i, the
// first of them at output(i, first), and the total returned (one read back).
// On Cuda one pass of CUB's scan (Kokkos' scan of a million counts took
// several times as long: perf/results/nbody/issue35/), its temporary storage
// and the total in `arrays`, named after `label`.
template <class ExecutionSpace, class Count, class Place>
Index lay_out_counts(WorkspaceArrays<ExecutionSpace> const& arrays, std::string const& label, Index count,
                     Count const& input, Place const& output) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  if (count == 0)
    return 0;
  auto const total = arrays.template make<Kokkos::View<Index, MemorySpace>>(label + "::total");
  NamedScratch<ExecutionSpace> storage{arrays, label + "::scan_storage"};
  gather_scatter_scan(arrays.space(), label, IndexSum{}, count, input,
                      PlaceCounts<MemorySpace, Count, Place>{input, output, total, count - 1}, storage);
  Index sum = 0;
  Kokkos::deep_copy(arrays.space(), sum, total);
  arrays.space().fence();
  return sum;
}

} // namespace treetrav::detail
