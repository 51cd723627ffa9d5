#pragma once

#include <treetrav/treefix/detail/results.hpp>
#include <treetrav/treefix/detail/scan.hpp>
#include <treetrav/treefix/euler_tour.hpp>

namespace treetrav {

// The vectorial treefix of the paper's Algorithm 2 (Blelloch): write each
// weight at its vertex's tour steps, scan the 2n steps, read each vertex's
// result back. Three regular, bandwidth-bound passes whatever the tree's shape,
// at twice the work of the level-synchronous method. Construction builds the
// CSR and the Euler tour once. Calls on one object must not overlap (they
// share the scan buffer).
//
// Rootfix writes w at "(v" and its inverse at "v)": the prefix at "(v" holds
// exactly v's ancestors, every closed subtree having cancelled. Leaffix writes
// w at "v)" only: the steps in ("(v", "v)"] are v's subtree, so the result is
// prefix("v)") minus prefix("(v"). With floating point both cancellations are
// inexact; that is the accuracy cost §IV-B measures.
template <class MemorySpace>
class EulerTourTreefix {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "EulerTourTreefix's template argument must be a Kokkos memory space");

public:
  using memory_space = MemorySpace;

  template <class ExecutionSpace>
  EulerTourTreefix(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree)
      : tour_(euler_tour(space, tree, children_csr(space, tree))),
        steps_("treetrav::EulerTourTreefix::steps"),
        scan_storage_("treetrav::EulerTourTreefix::scan_storage") {}

  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void rootfix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("EulerTourTreefix::rootfix",
                                                               tour_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::EulerTourTreefix::rootfix");
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    auto const steps = scan_buffer<Operation>(space);
    auto const open = tour_.open;
    auto const close = tour_.close;
    Kokkos::parallel_for(
        "treetrav::EulerTourTreefix::write_rootfix", Policy(space, 0, tour_.size()),
        KOKKOS_LAMBDA(Index v) {
          auto const weight = op.lift(weights(v));
          steps(open(v)) = weight;
          steps(close(v)) = op.inverse(weight);
        });
    detail::inclusive_scan(space, "treetrav::EulerTourTreefix::scan", op, steps, scan_storage_);
    Kokkos::parallel_for(
        "treetrav::EulerTourTreefix::read_rootfix", Policy(space, 0, tour_.size()),
        KOKKOS_LAMBDA(Index v) { results(v) = op.lower(steps(open(v))); });
  }

  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void leaffix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("EulerTourTreefix::leaffix",
                                                               tour_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::EulerTourTreefix::leaffix");
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    auto const steps = scan_buffer<Operation>(space);
    auto const open = tour_.open;
    auto const close = tour_.close;
    Kokkos::parallel_for(
        "treetrav::EulerTourTreefix::write_leaffix", Policy(space, 0, tour_.size()),
        KOKKOS_LAMBDA(Index v) {
          steps(open(v)) = op.identity();
          steps(close(v)) = op.lift(weights(v));
        });
    detail::inclusive_scan(space, "treetrav::EulerTourTreefix::scan", op, steps, scan_storage_);
    Kokkos::parallel_for(
        "treetrav::EulerTourTreefix::read_leaffix", Policy(space, 0, tour_.size()),
        KOKKOS_LAMBDA(Index v) {
          results(v) = op.lower(op.combine(op.inverse(steps(open(v))), steps(close(v))));
        });
  }

  EulerTour<MemorySpace> const& tour() const { return tour_; }

private:
  template <class Operation, class ExecutionSpace>
  detail::AccumulatorView<Operation, MemorySpace> scan_buffer(ExecutionSpace const& space) {
    return steps_.template get<typename Operation::accumulator_type>(space,
                                                                     2 * std::size_t(tour_.size()));
  }

  EulerTour<MemorySpace> tour_;
  detail::Workspace<MemorySpace> steps_;        // the 2n-step vector E
  detail::Workspace<MemorySpace> scan_storage_; // CUB's temporary storage
};

} // namespace treetrav
