#pragma once

#include <treetrav/core/detail/bits.hpp>
#include <treetrav/trees/ball_tree.hpp>
#include <treetrav/trees/detail/pack.hpp>
#include <treetrav/trees/implicit_topology.hpp>

#include <cstdint>

namespace treetrav {

namespace detail {

// A point of the tree's input as a zero-padded row.
template <int W, class Coordinates>
KOKKOS_FORCEINLINE_FUNCTION void input_row(Coordinates const& x, Index i, Coordinate (&row)[W]) {
  load_query<W>(x, i, row);
}

// Level-synchronous construction of a vantage-point tree over the implicit
// complete binary shape: at each level every node picks a vantage point, and
// its range of positions is sorted by distance to it (one stable sort of
// (node, distance) keys for the whole level), so its nearer half becomes its
// first child. The same steps on every backend, the same tree.
template <int W, class MemorySpace>
struct VpBuildLevel {
  ImplicitBinaryTopology<MemorySpace> topology;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> input;
  Kokkos::View<Index*, MemorySpace> position_point; // input point at each position
  Kokkos::View<std::uint64_t*, MemorySpace>
      farthest; // per node of the level: (distance bits, ~position)
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> vantage;
  Kokkos::View<Coordinate*, MemorySpace> distance;
  Kokkos::View<std::uint64_t*, MemorySpace> keys;
  int level;

  KOKKOS_FUNCTION Index node_of(Index p) const {
    // The j-th node of this level owns positions [floor(j n / 2^l), floor((j + 1) n / 2^l)).
    return static_cast<Index>((((static_cast<std::int64_t>(p) + 1) << level) - 1) /
                              topology.points);
  }

  // 1. The vantage point of each node: its point farthest from the node's
  //    first point (ties: the first such position), found with atomic maxima.
  struct Farthest {};
  KOKKOS_FUNCTION void operator()(Farthest, Index p) const {
    Index const j = node_of(p);
    Coordinate a[W], b[W];
    input_row<W>(input, position_point(p), a);
    input_row<W>(input, position_point(topology.level_point(level, j)), b);
    std::uint64_t const key =
        std::uint64_t(float_bits(row_distance2<W>(a, b))) << 32 | ~static_cast<std::uint32_t>(p);
    Kokkos::atomic_fetch_max(&farthest(j), key);
  }

  // 2. Each node's vantage row.
  struct Vantage {};
  KOKKOS_FUNCTION void operator()(Vantage, Index j) const {
    Index const node = (Index(1) << level) - 1 + j;
    Coordinate row[W] = {};
    if (topology.level_point(level, j) < topology.level_point(level, j + 1))
      input_row<W>(
          input, position_point(static_cast<Index>(~static_cast<std::uint32_t>(farthest(j)))), row);
    for (int k = 0; k < W; ++k)
      vantage(node + 1, k) = row[k];
  }

  // 3. Sort keys: node, then distance to its vantage point.
  struct Keys {};
  KOKKOS_FUNCTION void operator()(Keys, Index p) const {
    Index const j = node_of(p);
    Coordinate a[W], v[W];
    input_row<W>(input, position_point(p), a);
    load_row<W>(&vantage((Index(1) << level) + j, 0), v);
    Coordinate const d = math::sqrt(row_distance2<W>(a, v));
    distance(p) = d;
    keys(p) = std::uint64_t(j) << 32 | float_bits(d);
  }
};

// Applies a level's sort: the positions' points and distances follow it.
template <class MemorySpace>
struct PermutePositions {
  Kokkos::View<Index*, MemorySpace> sort, position_point, new_position_point;
  Kokkos::View<Coordinate*, MemorySpace> distance, new_distance;
  KOKKOS_FUNCTION void operator()(Index p) const {
    new_position_point(p) = position_point(sort(p));
    new_distance(p) = distance(sort(p));
  }
};

// The distance shell [min, max] of each child of a level's nodes, around its
// parent's vantage point: the first and last of its (sorted) distances,
// widened for rounding. Empty children get an empty shell.
template <class MemorySpace>
struct Shells {
  ImplicitBinaryTopology<MemorySpace> topology;
  Kokkos::View<Coordinate*, MemorySpace> distance;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> shells;
  Index level_first;
  KOKKOS_FUNCTION void operator()(Index j) const {
    for (Index child = 2 * (level_first + j) + 1; child <= 2 * (level_first + j) + 2; ++child) {
      Index const begin = topology.point_begin(child), end = topology.point_end(child);
      shells(child + 1, 0) =
          begin < end ? round_down_radius(distance(begin)) : infinity;
      shells(child + 1, 1) = begin < end ? round_up_radius(distance(end - 1)) : -infinity;
    }
  }
};

} // namespace detail

// Vantage-point tree for VP: each internal node picks a vantage point and
// splits its points at the median distance to it (slot 0: the nearer half),
// over the same implicit complete binary shape as the BVH. A child knows
// the shell [min, max] of distances from its parent's vantage point to its
// own points, which bounds the distance from any query. Built level by level
// in the execution space that uses it (one sort per level), the same on every
// backend.
template <class MemorySpace>
struct VpTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "VpTree needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "vp";

  ImplicitBinaryTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace>
      vantage; // row node + 1 (internal nodes)
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> shells; // row node + 1: [min, max]

  VpTree() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  VpTree(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
         int leaf_size = default_leaf_size) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "the tree lives in the execution space's memory space");
    detail::check_build_arguments("vantage-point tree", reference.size(), leaf_size, reference.dimension());
    Kokkos::Profiling::pushRegion("treetrav::VpTree::build");
    std::string const label = "treetrav::VpTree";
    auto const input = detail::points_for(space, reference, label);
    Index const n = input.size();
    topology = ImplicitBinaryTopology<MemorySpace>(
        n, ImplicitBinaryTopology<MemorySpace>::levels_for(n, leaf_size));
    int const width = packed_width(input.dimension());
    auto const alloc = [&](std::string const& member) {
      return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::" + member);
    };
    // Zero-filled: leaves have no vantage point, row 0 is never a node's, and
    // every byte of a tree is defined.
    vantage = decltype(vantage)(Kokkos::view_alloc(space, label + "::vantage"), topology.size() + 1,
                                width);
    shells =
        decltype(shells)(Kokkos::view_alloc(space, label + "::shells"), topology.size() + 1, 2);
    Kokkos::View<Index*, MemorySpace> position_point(alloc("position_point"), n),
        next_point(alloc("next_point"), n);
    Kokkos::View<Coordinate*, MemorySpace> distance(alloc("distance"), n),
        next_distance(alloc("next_distance"), n);
    Kokkos::View<std::uint64_t*, MemorySpace> keys(alloc("keys"), n);
    Kokkos::View<std::uint64_t*, MemorySpace> farthest(alloc("farthest"), topology.leaf_count());
    Kokkos::parallel_for(label + "::iota", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                         detail::Iota<MemorySpace>{position_point});
    dispatch_width(width, [&](auto w) {
      using Level = detail::VpBuildLevel<decltype(w)::value, MemorySpace>;
      for (int level = 0; level < topology.levels; ++level) {
        Index const nodes = Index(1) << level;
        Level step{topology, input.coordinates, position_point, farthest,
                   vantage,  distance,          keys,           level};
        Kokkos::deep_copy(space, Kokkos::subview(farthest, std::make_pair(Index(0), nodes)), 0);
        Kokkos::parallel_for(
            label + "::farthest",
            Kokkos::RangePolicy<ExecutionSpace, typename Level::Farthest>(space, 0, n), step);
        Kokkos::parallel_for(
            label + "::vantage",
            Kokkos::RangePolicy<ExecutionSpace, typename Level::Vantage>(space, 0, nodes), step);
        Kokkos::parallel_for(label + "::keys",
                             Kokkos::RangePolicy<ExecutionSpace, typename Level::Keys>(space, 0, n),
                             step);
        auto const sort = detail::sort_permutation(space, keys, 32 + level, label);
        Kokkos::parallel_for(label + "::permute", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                             detail::PermutePositions<MemorySpace>{sort, position_point, next_point,
                                                                   distance, next_distance});
        std::swap(position_point, next_point);
        std::swap(distance, next_distance);
        Kokkos::parallel_for(label + "::shells",
                             Kokkos::RangePolicy<ExecutionSpace>(space, 0, nodes),
                             detail::Shells<MemorySpace>{topology, distance, shells, nodes - 1});
      }
    });
    points = detail::pack_points(space, input, position_point, label);
    Kokkos::Profiling::popRegion();
  }

  KOKKOS_FUNCTION int width() const { return points.width(); }

  // Distance gap between a query at distance d from a vantage point and the
  // shell of `node` around it, squared.
  KOKKOS_FORCEINLINE_FUNCTION Coordinate shell_distance2(Index node, Coordinate d) const {
    Coordinate const inner = shells(node + 1, 0) - d, outer = d - shells(node + 1, 1);
    Coordinate const gap = inner > outer ? inner : outer;
    return gap > 0 ? gap * gap : Coordinate(0);
  }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate vantage_distance(Index node,
                                                          Coordinate const (&q)[W]) const {
    Coordinate v[W];
    detail::load_row<W>(&vantage(node + 1, 0), v);
    return math::sqrt(detail::row_distance2<W>(v, q));
  }

  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate min_distance2(Index node, Coordinate const (&q)[W]) const {
    if (node == 0)
      return 0;
    return shell_distance2(node, vantage_distance<W>(topology.parent(node), q));
  }

  // Both children and their bounds, from one distance to this node's vantage point.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void child_bounds(Index node, Coordinate const (&q)[W],
                                                NodeRef (&children)[2],
                                                Coordinate (&bounds)[2]) const {
    Coordinate const d = vantage_distance<W>(node, q);
    for (int slot = 0; slot < 2; ++slot) {
      children[slot] = topology.ref(2 * node + 1 + slot);
      bounds[slot] = shell_distance2(2 * node + 1 + slot, d);
    }
  }

  template <class F>
  void for_each_field(F&& f) {
    points.for_each_field(f);
    f(vantage);
    f(shells);
  }
};

} // namespace treetrav
