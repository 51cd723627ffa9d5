#pragma once

// The locally essential tree of a distributed N-body run (Warren & Salmon):
// the cells and bodies of the octree over ALL ranks' bodies that the force
// walks from one rank's bodies can reach, with that octree's geometry and
// moments. Built where the rank's bodies live (on the GPU in a GPU run): only
// the top of the octree, the bodies of cells shared by several ranks and the
// exchanged cells pass through the host, on their way to MPI.
//
//   1. The cube around all ranks' boxes; every body's Morton code in it and
//      the bodies sorted by code, as one process sorts them (ties by row:
//      a rank's bodies are in row order).
//   2. The top: the cells holding bodies of several ranks ("shared"), level
//      by level from the root, each rank counting its bodies in the octants
//      of the shared cells that split (Domain::all_gather). An octant whose
//      bodies lie on one rank is that rank's "branch"; a shared cell of at
//      most leaf-size bodies is a leaf, whose bodies every rank gathers.
//   3. The rank's octree of its own bodies in that cube, with the shared
//      cells forced to split as the octree of all bodies splits them
//      (build_octree_nodes' forced splits): its subtrees at the branches are
//      exactly the one-process octree's, bit for bit, moments included.
//   4. For every other rank, the pruned subtrees of the branches (selected
//      and packed on the device, exchanged by Domain::all_to_all): a cell
//      that every box of the receiver's reach takes whole, by the walk's
//      criterion with a margin for float rounding, as its moments; else its
//      children or, for a leaf, its bodies. The reach, which each rank finds
//      from its own octree and sends to all: the boxes of its bodies in
//      cells of its branches cut to about 1/1024 of its bodies, and in the
//      shared leaves; for group walks also the boxes of small children of
//      its cells and of small shared cells (a group's box spans only its
//      rank's bodies, BarnesHutWalk::group, the imported ones foreign; a
//      shared cell is one group only when all ranks' bodies in it are few,
//      and never packs its children together: the tree's `grouping`).
//   5. The assembly: own branch cells, received cells and the shared cells,
//      numbered breadth-first by sorting their keys; bodies in depth-first
//      order; the shared cells' moments from their children (every branch
//      root's double sums gathered) by the octree's own upward functors.
// A body's walk then opens and takes whole exactly the cells it would in the
// octree of all bodies, with the same moments: per-body strategies give the
// one-process forces bit for bit.
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/core/workspace.hpp>
#include <treetrav/nbody/domain.hpp>
#include <treetrav/trees/detail/octree_type.hpp>

#include <cstdint>

namespace treetrav::nbody {

// A rank's essential tree. Its own bodies are rows 0..n-1 of `bodies` (as
// given), the other ranks' bodies of opened leaves follow; cells another
// rank's reach takes whole are childless, bodiless cells with their moments.
template <class MemorySpace>
struct EssentialTree {
  Octree<MemorySpace> tree;
  PointSet<MemorySpace> bodies;
  Kokkos::View<Index*, MemorySpace> local_order;  // this rank's bodies (rows < n) in tree order
  std::int64_t imported_cells = 0, imported_bodies = 0;
};

// Collective over the ranks of `domain`: the essential tree of this rank's
// `bodies` (n, 3) and `masses`, whose rows in the whole system are `rows`
// (ascending); `options` say which cells a walk takes whole; leaf_size as the
// octree's; group_size of group walks (0: per-body walks). With a workspace
// on a GPU, every array (the tree's and the build's scratch) is the
// workspace's, named after the tree's parts: a repeated build allocates
// nothing, and overwrites the tree the last build with that workspace
// returned (host backends allocate afresh). Compiled for each backend in the
// library (src/nbody/essential_tree.cpp).
template <class ExecutionSpace>
EssentialTree<typename ExecutionSpace::memory_space>
build_essential_tree(ExecutionSpace const& space, Domain const& domain,
                     PointSet<typename ExecutionSpace::memory_space> const& bodies,
                     Kokkos::View<Coordinate const*, typename ExecutionSpace::memory_space> masses,
                     Kokkos::View<std::int64_t const*, Kokkos::HostSpace> rows, BarnesHutOptions const& options,
                     int leaf_size, bool quadrupoles, int group_size, Workspace* workspace = nullptr);

}  // namespace treetrav::nbody
