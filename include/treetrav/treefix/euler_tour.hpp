#pragma once

#include <treetrav/treefix/children.hpp>

#include <string>
#include <utility>

namespace treetrav {

// The paper's vector representation of a tree (§II-B): the Euler tour walks
// down and back up every edge, children in CSR order; counting a virtual edge
// into and out of the root it has 2n steps. open(v) is the position of the
// step "(v" that enters v and close(v) that of "v)" that leaves it (the
// paper's "(V" and "V)" arrays): the root spans [0, 2n - 1] and every vertex's
// [open, close] nests inside its parent's. steps is the inverse map, the tour
// itself: steps(open(v)) = v and steps(close(v)) = ~v (= -v - 1), so that a
// scan can walk the tour reading each step's vertex in order.
template <class MemorySpace>
struct EulerTour {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "EulerTour's template argument must be a Kokkos memory space");
  using memory_space = MemorySpace;

  Kokkos::View<Index*, MemorySpace> open;  // (n)
  Kokkos::View<Index*, MemorySpace> close; // (n)
  Kokkos::View<Index*, MemorySpace> steps; // (2n)

  Index size() const { return static_cast<Index>(open.extent(0)); }
};

// Whether a step of EulerTour::steps enters its vertex, and which vertex it is.
KOKKOS_INLINE_FUNCTION bool opens(Index step) {
  return step >= 0;
}
KOKKOS_INLINE_FUNCTION Index step_vertex(Index step) {
  return step >= 0 ? step : ~step;
}

// Builds the tour in parallel: each step's successor comes from the CSR (first
// child, next sibling, or the parent's closing step), then Wyllie's pointer
// jumping ranks the linked list of 2n steps in ceil(log2 2n) rounds.
template <class ExecutionSpace, class MemorySpace>
EulerTour<MemorySpace> euler_tour(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree,
                                  ChildrenCsr<MemorySpace> const& csr) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the tree");
  detail::ProfilingRegion const region("treetrav::euler_tour");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using IndexView = Kokkos::View<Index*, MemorySpace>;
  auto const scratch = [&](std::string const& label, Index count) {
    return IndexView(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), count);
  };
  Index const n = tree.size();
  Index const steps = 2 * n;
  Index const root = tree.root();
  auto const& parents = tree.parents();
  auto const& offsets = csr.offsets;
  auto const& children = csr.children;

  // Step 2v enters v, step 2v + 1 leaves it. The last step (leaving the root)
  // is its own successor, so that jumping from it stays put.
  auto slot = scratch("treetrav::euler_tour::slot", n);
  Kokkos::parallel_for(
      "treetrav::euler_tour::slots", Policy(space, 0, n - 1),
      KOKKOS_LAMBDA(Index k) { slot(children(k)) = k; });
  auto successor = scratch("treetrav::euler_tour::successor", steps);
  auto distance = scratch("treetrav::euler_tour::distance", steps);
  Kokkos::parallel_for(
      "treetrav::euler_tour::successors", Policy(space, 0, n), KOKKOS_LAMBDA(Index v) {
        Index const first_child = offsets(v);
        successor(2 * v) = first_child < offsets(v + 1) ? 2 * children(first_child) : 2 * v + 1;
        distance(2 * v) = 1;
        if (v == root) {
          successor(2 * v + 1) = 2 * v + 1;
          distance(2 * v + 1) = 0;
        } else {
          Index const parent = parents(v);
          Index const next_sibling = slot(v) + 1;
          successor(2 * v + 1) =
              next_sibling < offsets(parent + 1) ? 2 * children(next_sibling) : 2 * parent + 1;
          distance(2 * v + 1) = 1;
        }
      });

  // After round r, successor(s) is 2^r steps ahead of s (or the last step) and
  // distance(s) the number of steps in between: finally, the steps to the end.
  auto next_successor = scratch("treetrav::euler_tour::next_successor", steps);
  auto next_distance = scratch("treetrav::euler_tour::next_distance", steps);
  for (int round = 0, rounds = detail::ceil_log2(steps); round < rounds; ++round) {
    Kokkos::parallel_for(
        "treetrav::euler_tour::jump", Policy(space, 0, steps), KOKKOS_LAMBDA(Index s) {
          Index const ahead = successor(s);
          next_successor(s) = successor(ahead);
          next_distance(s) = distance(s) + distance(ahead);
        });
    std::swap(successor, next_successor);
    std::swap(distance, next_distance);
  }

  EulerTour<MemorySpace> tour{scratch("treetrav::EulerTour::open", n),
                              scratch("treetrav::EulerTour::close", n),
                              scratch("treetrav::EulerTour::steps", steps)};
  auto const open = tour.open;
  auto const close = tour.close;
  auto const tour_steps = tour.steps;
  Kokkos::parallel_for(
      "treetrav::euler_tour::positions", Policy(space, 0, n), KOKKOS_LAMBDA(Index v) {
        Index const opening = steps - 1 - distance(2 * v);
        Index const closing = steps - 1 - distance(2 * v + 1);
        open(v) = opening;
        close(v) = closing;
        tour_steps(opening) = v;
        tour_steps(closing) = ~v;
      });
  return tour;
}

} // namespace treetrav
