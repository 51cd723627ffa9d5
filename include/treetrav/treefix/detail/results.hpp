#pragma once

// What both treefix methods do around their kernels: check the weight and
// result views, find room for the accumulators, and lower them into results.
#include <treetrav/core/detail/growing_buffer.hpp>

#include <treetrav/core/config.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace treetrav::detail {

template <class ExecutionSpace, class Operation, class Weights, class Results>
void check_treefix_arguments(std::string const& method, Index n, Weights const& weights,
                             Results const& results) {
  static_assert(Kokkos::is_view<Weights>::value && Weights::rank == 1,
                "weights must be a rank-1 View");
  static_assert(Kokkos::is_view<Results>::value && Results::rank == 1,
                "results must be a rank-1 View");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Weights::memory_space>::accessible,
      "the execution space must reach the weights");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Results::memory_space>::accessible,
      "the execution space must reach the results");
  static_assert(std::is_convertible_v<typename Weights::value_type, typename Operation::value_type>,
                "the weights must convert to the operation's value_type");
  static_assert(std::is_same_v<typename Results::value_type, typename Operation::value_type>,
                "results must be a non-const View of the operation's value_type");
  if (weights.extent(0) != static_cast<std::size_t>(n) ||
      results.extent(0) != static_cast<std::size_t>(n))
    throw std::invalid_argument(method + ": the tree has " + std::to_string(n) + " vertices but " +
                                std::to_string(weights.extent(0)) + " weights and " +
                                std::to_string(results.extent(0)) + " results");
}

template <class Operation, class MemorySpace>
using AccumulatorView =
    Kokkos::View<typename Operation::accumulator_type*, MemorySpace, Kokkos::MemoryUnmanaged>;

// The results themselves when they can hold the accumulators, else workspace.
template <class Operation, class ExecutionSpace, class MemorySpace, class Results>
AccumulatorView<Operation, MemorySpace> accumulators_for(ExecutionSpace const& space,
                                                         GrowingBuffer<MemorySpace>& workspace,
                                                         Results const& results) {
  using Accumulator = typename Operation::accumulator_type;
  if constexpr (std::is_same_v<Accumulator, typename Operation::value_type> &&
                std::is_same_v<typename Results::memory_space, MemorySpace>) {
    if (results.span_is_contiguous())
      return AccumulatorView<Operation, MemorySpace>(results.data(), results.extent(0));
  }
  return workspace.template get<Accumulator>(space, results.extent(0));
}

// results(v) = op.lower(accumulators(v)) (a named functor: see rooted_tree.hpp).
template <class Operation, class Accumulators, class Results>
struct LowerIntoResults {
  Operation op;
  Accumulators accumulators;
  Results results;

  KOKKOS_FUNCTION void operator()(Index v) const { results(v) = op.lower(accumulators(v)); }
};

template <class ExecutionSpace, class Operation, class Accumulators, class Results>
void lower_into_results(ExecutionSpace const& space, std::string const& label, Operation const& op,
                        Accumulators const& accumulators, Results const& results) {
  if (static_cast<void const*>(accumulators.data()) == static_cast<void const*>(results.data()))
    return;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, results.extent(0)),
      LowerIntoResults<Operation, Accumulators, Results>{op, accumulators, results});
}

} // namespace treetrav::detail
