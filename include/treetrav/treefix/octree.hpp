#pragma once

// Treefix on the engine's own trees: a TreeTopology's parent array is a rooted
// tree, node depths are a rootfix and an octree's masses and centres of mass a
// leaffix (the "use it where it belongs").
#include <treetrav/treefix/treefix.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/trees/topology.hpp>

#include <type_traits>

namespace treetrav {

namespace detail {

// The kernels below (named functors: see rooted_tree.hpp).

// edges(v) = 1 but for the root: the weight of a depth rootfix.
template <class MemorySpace>
struct EdgeToParent {
  Kokkos::View<Index const*, MemorySpace> parents;
  Kokkos::View<Index*, MemorySpace> edges;

  KOKKOS_FUNCTION void operator()(Index v) const { edges(v) = parents(v) == no_parent ? 0 : 1; }
};

// A leaf's weight: its bodies' (m, m x, m y, m z) summed in double in body
// order; an inner cell's: zero.
template <class MemorySpace>
struct LeafMoments {
  Octree<MemorySpace> tree;
  Kokkos::View<MassMoments*, MemorySpace> weights;

  KOKKOS_FUNCTION void operator()(Index node) const {
    MassMoments sum{};
    for (int j = 0; j < 4; ++j)
      sum[j] = 0;
    if (tree.topology.is_leaf(node)) {
      auto const& x = tree.points.points.coordinates;
      for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
        double const m = tree.body_mass(i);
        sum[0] += m;
        for (int k = 0; k < 3; ++k)
          sum[k + 1] += m * x(i, k);
      }
    }
    weights(node) = sum;
  }
};

// The cell's mass and centre of mass from its moments (its geometric centre
// where it has no mass).
template <class MemorySpace>
struct CenterOfMass {
  Octree<MemorySpace> tree;
  Kokkos::View<MassMoments*, MemorySpace> moments;

  KOKKOS_FUNCTION void operator()(Index node) const {
    MassMoments const sum = moments(node);
    tree.mass(node) = static_cast<Coordinate>(sum[0]);
    for (int k = 0; k < 3; ++k)
      tree.center_of_mass(node, k) =
          static_cast<Coordinate>(sum[0] > 0 ? sum[k + 1] / sum[0] : tree.cell_center(node, k));
  }
};

} // namespace detail

// The rooted tree of a topology's parent array (validated: O(n log n) work).
template <class ExecutionSpace, int Arity, class MemorySpace>
RootedTree<MemorySpace> rooted_tree(ExecutionSpace const& space,
                                    TreeTopology<Arity, MemorySpace> const& topology) {
  return RootedTree<MemorySpace>(space, topology.parent);
}

// Every vertex's depth, the root's 0: a rootfix of weight 1 on each vertex but
// the root (the edge to its parent). Exact with either method.
template <class ExecutionSpace, class MemorySpace, class Method>
Kokkos::View<Index*, MemorySpace>
vertex_depths(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree, Method& method) {
  static_assert(std::is_same_v<typename Method::memory_space, MemorySpace>,
                "the method must work on the tree's memory space");
  detail::ProfilingRegion const region("treetrav::vertex_depths");
  Index const n = tree.size();
  Kokkos::View<Index*, MemorySpace> edges(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::vertex_depths::edges"), n);
  Kokkos::parallel_for("treetrav::vertex_depths::edges",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                       detail::EdgeToParent<MemorySpace>{tree.parents(), edges});
  Kokkos::View<Index*, MemorySpace> depths(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::vertex_depths::depths"), n);
  method.rootfix(space, Sum<Index>{}, edges, depths);
  return depths;
}

// Mass and centre of mass of every cell of `tree` as one leaffix: a leaf's
// weight is its bodies' (m, m x, m y, m z) summed in double in body order, an
// inner cell's is zero, and the leaffix of VectorSum<double, 4> sums every
// subtree. Writes tree.mass and tree.center_of_mass (the cell's centre where
// it has no mass); `method` is a treefix method built on the tree's topology.
// With LevelSynchronousTreefix the sums run in a fixed order (a leaf's bodies,
// then a cell's children by slot): the same bits on every backend and thread
// count; EulerTourTreefix's prefix differences carry an error relative to the
// whole tree's moments and, on Cuda, vary in the last bits from run to run.
template <class ExecutionSpace, class MemorySpace, class Method>
void octree_moments(ExecutionSpace const& space, Octree<MemorySpace> const& tree, Method& method) {
  static_assert(std::is_same_v<typename Method::memory_space, MemorySpace>,
                "the method must work on the tree's memory space");
  detail::ProfilingRegion const region("treetrav::octree_moments");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Index const nodes = tree.topology.size();
  Kokkos::View<MassMoments*, MemorySpace> weights(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::octree_moments::weights"),
      nodes);
  Kokkos::parallel_for("treetrav::octree_moments::leaves", Policy(space, 0, nodes),
                       detail::LeafMoments<MemorySpace>{tree, weights});
  Kokkos::View<MassMoments*, MemorySpace> moments(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::octree_moments::moments"),
      nodes);
  method.leaffix(space, VectorSum<double, 4>{}, weights, moments);
  Kokkos::parallel_for("treetrav::octree_moments::center_of_mass", Policy(space, 0, nodes),
                       detail::CenterOfMass<MemorySpace>{tree, moments});
}

} // namespace treetrav
