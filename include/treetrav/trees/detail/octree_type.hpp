#pragma once

// The Octree type; its constructor, the Morton build, is defined in
// <treetrav/trees/octree.hpp>: include that.
#include <treetrav/core/fixed_vector.hpp>
#include <treetrav/trees/topology.hpp>

#include <cstdint>

namespace treetrav {

// An octree cell's mass and mass-weighted position, (m, m x, m y, m z).
using MassMoments = FixedVector<double, 4>;

// Barnes-Hut octree over 3-D bodies: cubic cells split into their non-empty
// octants until a cell holds at most `leaf_capacity` bodies (or reaches the
// finest Morton level); each cell keeps its total mass, centre of mass,
// geometric centre and side length, optionally its quadrupole. For BH.
//
// There is one octree builder: the Morton octree of trees/octree.hpp, built on
// the execution space given (the GPU in a CUDA run, the host otherwise, by the
// same parallel code and to the same tree), breadth-first numbered. The
// constructor below is defined there.
template <class MemorySpace>
struct Octree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "Octree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  using vector_view = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace>;
  using scalar_view = Kokkos::View<Coordinate*, MemorySpace>;
  static constexpr char const* name = "octree";

  TreeTopology<8, MemorySpace> topology;
  TreePoints<MemorySpace> points;  // bodies, in tree order
  scalar_view body_mass;           // (bodies), tree order
  vector_view center_of_mass;      // (nodes, 3)
  scalar_view mass;                // (nodes)
  vector_view cell_center;         // (nodes, 3)
  scalar_view cell_size;           // (nodes) side length
  // (nodes, 7) xx, yy, zz, xy, xz, yz of the traceless quadrupole moment
  // sum m (3 d_i d_j - |d|^2 delta_ij), d = x - centre of mass, then the
  // trace sum m |d|^2 (a softened expansion needs it beside the traceless
  // part); empty unless computed (compute_octree_quadrupoles).
  vector_view quadrupole;
  // (nodes), or empty: how a group walk may group a cell's bodies, beside
  // their count. children_apart: no group packs its children together;
  // never_one_group: it is never one group, its children are grouped. A
  // distributed run's essential tree sets them where cells hold several
  // ranks' bodies, so that a rank's groups are boxes its reach holds
  // (nbody/essential_tree.hpp).
  Kokkos::View<std::uint8_t*, MemorySpace> grouping;
  static constexpr std::uint8_t children_apart = 1, never_one_group = 2;

  Octree() = default;
  // Builds on `space` (bodies and masses copied there when they live
  // elsewhere), then copies to MemorySpace if that is not the space's.
  template <class ExecutionSpace, class BodyMemorySpace, class MassView>
  Octree(ExecutionSpace const& space, PointSet<BodyMemorySpace> const& bodies, MassView const& masses,
         int leaf_capacity = 8);

  template <class F>
  void for_each_node_field(F&& f) {
    topology.for_each_node_field(f);
    f(center_of_mass);
    f(mass);
    f(cell_center);
    f(cell_size);
    if (quadrupole.extent(0) != 0) f(quadrupole);
    if (grouping.extent(0) != 0) f(grouping);
  }
};

template <class ExecutionSpace, class MemorySpace>
Octree<typename ExecutionSpace::memory_space> copy_tree(ExecutionSpace const& space, Octree<MemorySpace> const& src) {
  Octree<typename ExecutionSpace::memory_space> dst;
  dst.topology = detail::copy_topology(space, src.topology);
  dst.points = detail::copy_tree_points(space, src.points);
  dst.body_mass = detail::copy_view(space, src.body_mass);
  dst.center_of_mass = detail::copy_view(space, src.center_of_mass);
  dst.mass = detail::copy_view(space, src.mass);
  dst.cell_center = detail::copy_view(space, src.cell_center);
  dst.cell_size = detail::copy_view(space, src.cell_size);
  dst.quadrupole = detail::copy_view(space, src.quadrupole);
  dst.grouping = detail::copy_view(space, src.grouping);
  return dst;
}

}  // namespace treetrav
