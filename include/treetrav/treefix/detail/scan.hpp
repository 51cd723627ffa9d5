#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/treefix/detail/workspace.hpp>

#include <string>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_scan.cuh>

#include <stdexcept>
#endif

namespace treetrav::detail {

// Kokkos' scan with the operation's combine, identity and accumulator type.
template <class Operation, class Values>
struct InclusiveScan {
  using value_type = typename Operation::accumulator_type;

  Operation op;
  Values values;

  KOKKOS_FUNCTION void init(value_type& value) const { value = op.identity(); }
  // Kokkos 3 passes volatile references; nothing else touches them meanwhile.
  KOKKOS_FUNCTION void join(volatile value_type& update, volatile value_type const& input) const {
    auto& sum = const_cast<value_type&>(update);
    sum = op.combine(sum, const_cast<value_type const&>(input));
  }
  KOKKOS_FUNCTION void operator()(Index i, value_type& update, bool final) const {
    update = op.combine(update, values(i));
    if (final)
      values(i) = update;
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

// values(i) <- values(0) + ... + values(i) in place, combining left to right.
// On Cuda, CUB's single-pass decoupled look-back scan, asynchronous on the
// space's stream, its temporary storage kept in `cub_storage` between calls;
// elsewhere Kokkos' scan.
template <class ExecutionSpace, class Operation, class Values, class MemorySpace>
void inclusive_scan(ExecutionSpace const& space, std::string const& label, Operation const& op,
                    Values const& values, [[maybe_unused]] Workspace<MemorySpace>& cub_storage) {
  static_assert(
      std::is_same_v<typename Values::non_const_value_type, typename Operation::accumulator_type>,
      "the scan runs over the operation's accumulators");
  Index const count = static_cast<Index>(values.extent(0));
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>) {
    std::size_t bytes = 0;
    auto status = cub::DeviceScan::InclusiveScan(
        nullptr, bytes, values.data(), Combine<Operation>{op}, count, space.cuda_stream());
    if (status == cudaSuccess) {
      auto const storage = cub_storage.template get<unsigned char>(space, bytes);
      status = cub::DeviceScan::InclusiveScan(storage.data(), bytes, values.data(),
                                              Combine<Operation>{op}, count, space.cuda_stream());
    }
    if (status != cudaSuccess)
      throw std::runtime_error(label + ": CUB scan failed: " + cudaGetErrorString(status));
    return;
  }
#endif
  Kokkos::parallel_scan(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                        InclusiveScan<Operation, Values>{op, values});
}

} // namespace treetrav::detail
