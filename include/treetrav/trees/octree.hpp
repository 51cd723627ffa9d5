#pragma once

#include <treetrav/trees/detail/host_build.hpp>
#include <treetrav/trees/detail/top_down_builder.hpp>
#include <treetrav/trees/topology.hpp>

#include <array>
#include <cmath>

namespace treetrav {

// Barnes-Hut octree over 3-D bodies: cubic cells split into their non-empty
// octants until a cell holds at most `leaf_capacity` bodies; each cell keeps
// its total mass, centre of mass, geometric centre and side length. For BH.
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

  Octree() = default;
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
  return dst;
}

namespace detail {

struct Cell {
  std::array<double, 3> center;
  double half;
};

template <class ExecutionSpace>
Octree<Kokkos::HostSpace> build_octree(ExecutionSpace const& space, PointSet<Kokkos::HostSpace> const& bodies,
                                       Kokkos::View<Coordinate const*, Kokkos::HostSpace> masses, int leaf_capacity) {
  check_build_arguments("octree", bodies.size(), leaf_capacity, bodies.dimension());
  if (bodies.dimension() != 3)
    throw InputError("octree: bodies must be 3-dimensional (got " + std::to_string(bodies.dimension()) + ")");
  if (masses.extent(0) != static_cast<std::size_t>(bodies.size()))
    throw InputError("octree: masses and bodies differ in number");
  Kokkos::Profiling::pushRegion("treetrav::Octree::build");
  auto coords = bodies.coordinates;
  Cell root{};
  {
    std::array<double, 3> lo, hi;
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = coords(0, k);
    for (Index i = 1; i < bodies.size(); ++i)
      for (int k = 0; k < 3; ++k) lo[k] = std::min<double>(lo[k], coords(i, k)), hi[k] = std::max<double>(hi[k], coords(i, k));
    double half = 0;
    for (int k = 0; k < 3; ++k) root.center[k] = 0.5 * (lo[k] + hi[k]), half = std::max(half, 0.5 * (hi[k] - lo[k]));
    // Slightly larger than the bodies' box, never zero (all bodies at one point).
    root.half = half > 0 ? half * (1 + 1e-6) : 1.0;
  }
  auto build = build_top_down<8>(
      space, "treetrav::Octree", bodies.size(), root,
      [=](Cell& cell, int depth, Index* perm, Index begin, Index end, Index* child_end, Cell* child_cell) {
        if (end - begin <= leaf_capacity || depth >= max_tree_depth - 1) return 0;
        auto octant = [&](Index p) {
          int o = 0;
          for (int k = 0; k < 3; ++k) o |= (coords(p, k) >= cell.center[k] ? 1 : 0) << k;
          return o;
        };
        // Counting sort of the cell's bodies by octant (stable: deterministic).
        std::array<Index, 8> count{};
        for (Index i = begin; i < end; ++i) ++count[octant(perm[i])];
        std::array<Index, 8> offset{};
        for (int o = 1; o < 8; ++o) offset[o] = offset[o - 1] + count[o - 1];
        std::vector<Index> sorted(end - begin);
        for (Index i = begin; i < end; ++i) {
          int const o = octant(perm[i]);
          sorted[offset[o]++] = perm[i];
        }
        std::copy(sorted.begin(), sorted.end(), perm + begin);
        int children = 0;
        Index cursor = begin;
        for (int o = 0; o < 8; ++o) {
          if (count[o] == 0) continue;
          cursor += count[o];
          child_end[children] = cursor;
          Cell& child = child_cell[children];
          child.half = 0.5 * cell.half;
          for (int k = 0; k < 3; ++k) child.center[k] = cell.center[k] + ((o >> k & 1) ? child.half : -child.half);
          ++children;
        }
        return children;
      });
  Octree<Kokkos::HostSpace> tree;
  tree.topology = build.topology;
  tree.points = gather_tree_points(space, "treetrav::Octree", bodies, build.permutation);
  Index const nodes = tree.topology.size();
  using Tree = Octree<Kokkos::HostSpace>;
  tree.body_mass = allocate_like_nodes<Tree::scalar_view>("treetrav::Octree::body_mass", bodies.size());
  tree.center_of_mass = allocate_like_nodes<Tree::vector_view>("treetrav::Octree::center_of_mass", nodes, 3);
  tree.mass = allocate_like_nodes<Tree::scalar_view>("treetrav::Octree::mass", nodes);
  tree.cell_center = allocate_like_nodes<Tree::vector_view>("treetrav::Octree::cell_center", nodes, 3);
  tree.cell_size = allocate_like_nodes<Tree::scalar_view>("treetrav::Octree::cell_size", nodes);
  auto permutation = build.permutation;
  auto t = tree;
  Kokkos::parallel_for(
      "treetrav::Octree::body_mass", Kokkos::RangePolicy<ExecutionSpace>(space, 0, bodies.size()),
      [=](Index i) { t.body_mass(i) = masses(permutation(i)); });
  for (Index node = 0; node < nodes; ++node) {
    Cell const& cell = build.node_data[node];
    for (int k = 0; k < 3; ++k) tree.cell_center(node, k) = static_cast<Coordinate>(cell.center[k]);
    tree.cell_size(node) = static_cast<Coordinate>(2 * cell.half);
  }
  space.fence();
  // Mass moments per cell, summed in double over the cell's contiguous bodies.
  Kokkos::parallel_for(
      "treetrav::Octree::moments",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, nodes), [=](Index node) {
        double m = 0;
        std::array<double, 3> moment{};
        for (Index i = t.topology.point_begin(node); i < t.topology.point_end(node); ++i) {
          m += t.body_mass(i);
          for (int k = 0; k < 3; ++k) moment[k] += double(t.body_mass(i)) * t.points.points.coordinates(i, k);
        }
        t.mass(node) = static_cast<Coordinate>(m);
        for (int k = 0; k < 3; ++k)
          t.center_of_mass(node, k) = static_cast<Coordinate>(m > 0 ? moment[k] / m : t.cell_center(node, k));
      });
  space.fence();
  Kokkos::Profiling::popRegion();
  return tree;
}

}  // namespace detail

template <class MemorySpace>
template <class ExecutionSpace, class BodyMemorySpace, class MassView>
Octree<MemorySpace>::Octree(ExecutionSpace const& space, PointSet<BodyMemorySpace> const& bodies,
                            MassView const& masses, int leaf_capacity) {
  auto host_masses = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, masses);
  *this = detail::build_on_host_for<MemorySpace>(space, [&](auto const& host) {
    return detail::build_octree(host, detail::host_points(bodies), host_masses, leaf_capacity);
  });
}

}  // namespace treetrav
