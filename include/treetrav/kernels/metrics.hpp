#pragma once

#include <treetrav/core/config.hpp>

#include <string>

namespace treetrav {

// Optional traversal metrics, filled only when allocated (kernels are
// instantiated without them for timed runs).
//   query_visits(q): nodes query q visited (did work at);
//   warp_visits(w):  nodes warp w walked in lockstep (Liu et al. Table 1),
//                    idle lanes included; empty for non-lockstep strategies.
template <class MemorySpace>
struct TraversalMetrics {
  Kokkos::View<std::int64_t*, MemorySpace> query_visits;
  Kokkos::View<std::int64_t*, MemorySpace> warp_visits;

  bool enabled() const { return query_visits.extent(0) != 0; }
};

template <class MemorySpace>
TraversalMetrics<MemorySpace> allocate_metrics(Index queries, Index warps) {
  return {Kokkos::View<std::int64_t*, MemorySpace>("treetrav::TraversalMetrics::query_visits", queries),
          Kokkos::View<std::int64_t*, MemorySpace>("treetrav::TraversalMetrics::warp_visits", warps)};
}

}  // namespace treetrav
