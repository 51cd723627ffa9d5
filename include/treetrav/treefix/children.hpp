#pragma once

#include <treetrav/treefix/detail/region.hpp>
#include <treetrav/treefix/rooted_tree.hpp>

#include <type_traits>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#endif

namespace treetrav {

// The children of every vertex in compressed sparse row form (the paper's R
// and C arrays): the children of v are children(offsets(v)) ..
// children(offsets(v + 1) - 1), in increasing vertex order on every backend.
template <class MemorySpace>
struct ChildrenCsr {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "ChildrenCsr's template argument must be a Kokkos memory space");
  using memory_space = MemorySpace;

  Kokkos::View<Index*, MemorySpace> offsets;  // (n + 1)
  Kokkos::View<Index*, MemorySpace> children; // (n - 1)
};

namespace detail {

// children_csr's kernels (named functors: see rooted_tree.hpp).

// offsets(parent) += 1 for every vertex but the root.
template <class MemorySpace>
struct CountChildren {
  Kokkos::View<Index const*, MemorySpace> parents;
  Kokkos::View<Index*, MemorySpace> offsets;
  Index root;

  KOKKOS_FUNCTION void operator()(Index v) const {
    if (v != root)
      Kokkos::atomic_add(&offsets(parents(v)), Index{1});
  }
};

// The counts, in place, into their exclusive prefix sums.
template <class MemorySpace>
struct CountsToOffsets {
  using value_type = Index;

  Kokkos::View<Index*, MemorySpace> offsets;

  KOKKOS_FUNCTION void operator()(Index v, Index& before, bool final) const {
    Index const count = offsets(v);
    if (final)
      offsets(v) = before;
    before += count;
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
// The sort keys: each vertex's parent, n for the root.
template <class MemorySpace>
struct ParentKeys {
  Kokkos::View<Index const*, MemorySpace> parents;
  Kokkos::View<Index*, MemorySpace> keys;
  Kokkos::View<Index*, MemorySpace> vertices;
  Index root;
  Index n;

  KOKKOS_FUNCTION void operator()(Index v) const {
    keys(v) = v == root ? n : parents(v);
    vertices(v) = v;
  }
};

// Thrust's stable radix sort of the vertices by parent; the root's key n sorts
// it after every child, out of the returned range.
template <class MemorySpace>
Kokkos::View<Index*, MemorySpace> sort_children_by_parent(Kokkos::Cuda const& space,
                                                          RootedTree<MemorySpace> const& tree) {
  Index const n = tree.size();
  Kokkos::View<Index*, MemorySpace> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::children_csr::keys"), n);
  Kokkos::View<Index*, MemorySpace> vertices(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ChildrenCsr::children"), n);
  Kokkos::parallel_for("treetrav::children_csr::keys",
                       Kokkos::RangePolicy<Kokkos::Cuda>(space, 0, n),
                       ParentKeys<MemorySpace>{tree.parents(), keys, vertices, tree.root(), n});
  thrust::stable_sort_by_key(thrust::cuda::par.on(space.cuda_stream()), keys.data(),
                             keys.data() + n, vertices.data());
  return Kokkos::subview(vertices, Kokkos::make_pair(Index{0}, n - 1));
}
#endif

// One stable counting-sort pass on the host: O(n), in increasing vertex order.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace>
place_children_in_order(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree,
                        Kokkos::View<Index*, MemorySpace> const& offsets) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "children_csr places children on the host unless it runs on Cuda");
  Index const n = tree.size();
  auto const& parents = tree.parents();
  Kokkos::View<Index*, MemorySpace> children(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ChildrenCsr::children"),
      n - 1);
  space.fence();
  std::vector<Index> next_slot(offsets.data(), offsets.data() + n);
  for (Index v = 0; v < n; ++v)
    if (v != tree.root())
      children(next_slot[parents(v)]++) = v;
  return children;
}

} // namespace detail

// Counts children with atomics and scans the counts into offsets; then places
// the children by a stable sort of the vertices by parent, so that the order
// is the same on every backend.
template <class ExecutionSpace, class MemorySpace>
ChildrenCsr<MemorySpace> children_csr(ExecutionSpace const& space,
                                      RootedTree<MemorySpace> const& tree) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "the execution space must reach the tree");
  detail::ProfilingRegion const region("treetrav::children_csr");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Index const n = tree.size();

  ChildrenCsr<MemorySpace> csr;
  csr.offsets = Kokkos::View<Index*, MemorySpace>(
      Kokkos::view_alloc(space, "treetrav::ChildrenCsr::offsets"), n + 1);
  auto const offsets = csr.offsets;
  Kokkos::parallel_for("treetrav::children_csr::count", Policy(space, 0, n),
                       detail::CountChildren<MemorySpace>{tree.parents(), offsets, tree.root()});
  Kokkos::parallel_scan("treetrav::children_csr::offsets", Policy(space, 0, n + 1),
                        detail::CountsToOffsets<MemorySpace>{offsets});
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Cuda>)
    csr.children = detail::sort_children_by_parent(space, tree);
  else
#endif
    csr.children = detail::place_children_in_order(space, tree, offsets);
  return csr;
}

} // namespace treetrav
