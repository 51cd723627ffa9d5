#pragma once

#include <treetrav/treefix/detail/results.hpp>
#include <treetrav/core/detail/scan.hpp>
#include <treetrav/treefix/euler_tour.hpp>

namespace treetrav {

namespace detail {

// The scan inputs and outputs of the vectorial method (see gather_scatter_scan).
// Rootfix: each step's weight, inverted where the step closes its vertex.
template <class Operation, class Steps, class Weights>
struct RootfixStepWeight {
  Operation op;
  Steps steps;
  Weights weights;
  KOKKOS_FUNCTION typename Operation::accumulator_type operator()(Index s) const {
    Index const step = steps(s);
    auto const weight = op.lift(weights(step_vertex(step)));
    return opens(step) ? weight : op.inverse(weight);
  }
};

// Rootfix: the prefix where a vertex opens is its result.
template <class Operation, class Steps, class Results>
struct RootfixResultAtOpening {
  Operation op;
  Steps steps;
  Results results;
  KOKKOS_FUNCTION void operator()(Index s,
                                  typename Operation::accumulator_type const& prefix) const {
    Index const step = steps(s);
    if (opens(step))
      results(step) = op.lower(prefix);
  }
};

// Leaffix: the weight where a vertex closes, nothing where it opens.
template <class Operation, class Steps, class Weights>
struct LeaffixStepWeight {
  Operation op;
  Steps steps;
  Weights weights;
  KOKKOS_FUNCTION typename Operation::accumulator_type operator()(Index s) const {
    Index const step = steps(s);
    return opens(step) ? op.identity() : op.lift(weights(~step));
  }
};

// Leaffix: the prefixes where each vertex opens and closes, by vertex.
template <class Operation, class Steps, class Accumulators>
struct LeaffixPrefixesByVertex {
  Steps steps;
  Accumulators entered;
  Accumulators left;
  KOKKOS_FUNCTION void operator()(Index s,
                                  typename Operation::accumulator_type const& prefix) const {
    Index const step = steps(s);
    if (opens(step))
      entered(step) = prefix;
    else
      left(~step) = prefix;
  }
};

} // namespace detail

// The vectorial treefix of the paper's Algorithm 2 (Blelloch): a scan over the
// 2n steps of the Euler tour, each step carrying its vertex's weight, each
// vertex's result read from the prefixes at its steps. Regular and
// bandwidth-bound whatever the tree's shape, at twice the work of the
// level-synchronous method. Construction builds the CSR and the Euler tour
// once. Calls on one object must not overlap (they share scratch memory).
//
// Rootfix puts w at "(v" and its inverse at "v)": the prefix at "(v" holds
// exactly v's ancestors, every closed subtree having cancelled. Leaffix puts w
// at "v)" only: the steps in ("(v", "v)"] are v's subtree, so the result is
// prefix("v)") minus prefix("(v"). With floating point both cancellations are
// inexact; that is the accuracy cost §IV-B measures.
//
// The paper's write / scan / read kernels are fused: the scan reads the tour's
// step -> vertex array and gathers the weights itself (no 2n-step vector E in
// memory), and rootfix's scan writes each result where its vertex opens. So
// rootfix is one pass; leaffix scatters both prefixes by vertex and a second,
// coalesced pass subtracts them.
template <class MemorySpace>
class EulerTourTreefix {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "EulerTourTreefix's template argument must be a Kokkos memory space");

public:
  using memory_space = MemorySpace;

  template <class ExecutionSpace>
  EulerTourTreefix(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree)
      : tour_(euler_tour(space, tree, children_csr(space, tree))),
        prefixes_("treetrav::EulerTourTreefix::prefixes"),
        scan_storage_("treetrav::EulerTourTreefix::scan_storage") {}

  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void rootfix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("EulerTourTreefix::rootfix",
                                                               tour_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::EulerTourTreefix::rootfix");
    using Steps = Kokkos::View<Index const*, MemorySpace>;
    Steps const steps = tour_.steps;
    detail::gather_scatter_scan(
        space, "treetrav::EulerTourTreefix::rootfix_scan", op, 2 * tour_.size(),
        detail::RootfixStepWeight<Operation, Steps, Weights>{op, steps, weights},
        detail::RootfixResultAtOpening<Operation, Steps, Results>{op, steps, results},
        scan_storage_);
  }

  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void leaffix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("EulerTourTreefix::leaffix",
                                                               tour_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::EulerTourTreefix::leaffix");
    using Steps = Kokkos::View<Index const*, MemorySpace>;
    using Accumulators = detail::AccumulatorView<Operation, MemorySpace>;
    Index const n = tour_.size();
    Steps const steps = tour_.steps;
    auto const prefixes =
        prefixes_.template get<typename Operation::accumulator_type>(space, 2 * std::size_t(n));
    Accumulators const entered(prefixes.data(), n);
    Accumulators const left(prefixes.data() + n, n);
    detail::gather_scatter_scan(
        space, "treetrav::EulerTourTreefix::leaffix_scan", op, 2 * n,
        detail::LeaffixStepWeight<Operation, Steps, Weights>{op, steps, weights},
        detail::LeaffixPrefixesByVertex<Operation, Steps, Accumulators>{steps, entered, left},
        scan_storage_);
    Kokkos::parallel_for(
        "treetrav::EulerTourTreefix::leaffix_difference",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, n), KOKKOS_LAMBDA(Index v) {
          results(v) = op.lower(op.combine(op.inverse(entered(v)), left(v)));
        });
  }

  EulerTour<MemorySpace> const& tour() const { return tour_; }

private:
  EulerTour<MemorySpace> tour_;
  detail::GrowingBuffer<MemorySpace> prefixes_;     // leaffix: each vertex's two prefixes
  detail::GrowingBuffer<MemorySpace> scan_storage_; // CUB's temporary storage
};

} // namespace treetrav
