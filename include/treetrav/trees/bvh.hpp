#pragma once

#include <treetrav/trees/detail/radix_build.hpp>

namespace treetrav {

namespace detail {

// Squared distance from q to the box [lo, hi], summed in the order distance2()
// sums: rounding is monotonic, so it never exceeds the distance to a point in
// the box (exact pruning). Each coordinate's gap is max(lo - q, q - hi, 0),
// selects rather than branches: the branches (q below, above or inside) split
// a GPU warp at every coordinate of every child bound.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION Coordinate box_distance2(Coordinate const (&q)[W],
                                                     Coordinate const (&lo)[W],
                                                     Coordinate const (&hi)[W]) {
  auto const gap = [&](int k) {
    Coordinate const below = lo[k] - q[k], above = q[k] - hi[k];
    Coordinate const outside = below > above ? below : above;
    return outside > 0 ? outside : Coordinate(0);
  };
  Coordinate sum = square(gap(0));
#pragma unroll
  for (int k = 1; k < W; ++k)
    sum = add_square(sum, gap(k));
  return sum;
}

// What one expansion of an internal node reads, in one row: both children's
// boxes (a row of lower, then a row of upper bounds each), then both
// children's references (NodeRef: index, count), their bits stored as floats.
template <int W>
struct ChildRecord {
  static constexpr int stride = row_stride(W);
  static constexpr int width = 4 * stride + 4; // rows stay 16-byte aligned
  static constexpr int refs = 4 * stride;
  static constexpr int lower(int slot) { return 2 * stride * slot; }
  static constexpr int upper(int slot) { return 2 * stride * slot + stride; }
};

template <int W, class MemorySpace>
struct PackChildRecords {
  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  NodeBoxes<MemorySpace> boxes;
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> records;
  // The row is assembled in registers and stored as float4s (element-wise
  // stores of rows 4W + 4 floats apart cost a sector each).
  KOKKOS_FUNCTION void operator()(Index node) const {
    Coordinate row[ChildRecord<W>::width] = {};
    Index const first = topology.internal(node, 0), last = topology.internal(node, 1),
                split = topology.internal(node, 2);
#pragma unroll
    for (int slot = 0; slot < 2; ++slot) {
      Index const child = topology.child_of(first, last, split, slot);
      Coordinate lo[W], hi[W];
      child_box<W, RowCache::read_only>(topology, points, boxes, child, lo, hi);
#pragma unroll
      for (int k = 0; k < W; ++k) {
        row[ChildRecord<W>::lower(slot) + k] = lo[k];
        row[ChildRecord<W>::upper(slot) + k] = hi[k];
      }
      NodeRef const ref = topology.ref(child);
      row[ChildRecord<W>::refs + 2 * slot] = bits_float(static_cast<std::uint32_t>(ref.index));
      row[ChildRecord<W>::refs + 2 * slot + 1] = bits_float(static_cast<std::uint32_t>(ref.count));
    }
    store_row<ChildRecord<W>::width>(&records(node, 0), row);
  }
};

} // namespace detail

// Linear bounding-volume hierarchy (LBVH) for PC, NN, kNN and radius
// searches: a binary radix tree over the reference points sorted along a
// Morton curve (Karras 2012), each node bounded by the tight box of its
// points (a kd-tree's spatial midpoint splits, with boxes that fit the
// points); nodes of at most `leaf_size` points are leaves. Built in the
// execution space that uses it (on the GPU in CUDA runs, in well under a
// millisecond per million points) by the same code on every backend, so every
// backend builds the same tree. An expansion reads one row: the boxes and references
// of both children.
template <class MemorySpace>
struct Bvh {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value, "Bvh needs a Kokkos memory space");
  using memory_space = MemorySpace;
  static constexpr char const* name = "bvh";

  RadixTopology<MemorySpace> topology;
  PackedPoints<MemorySpace> points;
  detail::NodeBoxes<MemorySpace> boxes; // own box of each internal node
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace>
      records; // ChildRecord of each internal node

  Bvh() = default;
  template <class ExecutionSpace, class PointMemorySpace>
  Bvh(ExecutionSpace const& space, PointSet<PointMemorySpace> const& reference,
         int leaf_size = default_leaf_size) {
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "the tree lives in the execution space's memory space");
    Kokkos::Profiling::pushRegion("treetrav::Bvh::build");
    std::string const label = "treetrav::Bvh";
    auto skeleton = detail::build_radix_skeleton(space, reference, leaf_size, "bvh", label);
    topology = skeleton.topology;
    points = skeleton.points;
    boxes = skeleton.boxes;
    dispatch_width(points.width(), [&](auto width) {
      constexpr int W = decltype(width)::value;
      records = decltype(records)(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::records"),
          topology.internal_count(), detail::ChildRecord<W>::width);
      Kokkos::parallel_for(
          label + "::records",
          Kokkos::RangePolicy<ExecutionSpace>(space, 0, topology.internal_count()),
          detail::PackChildRecords<W, MemorySpace>{topology, points, boxes, records});
    });
    Kokkos::Profiling::popRegion();
  }

  KOKKOS_FUNCTION int width() const { return points.width(); }

  // Lower bound of the squared distance from the query row q to any point of `node`.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION Coordinate min_distance2(Index node, Coordinate const (&q)[W]) const {
    if (!topology.is_internal(node))
      return points.template distance2<W>(node - (topology.points - 1), q);
    Coordinate lo[W], hi[W];
    detail::load_row<W>(&boxes(node, 0), lo);
    detail::load_row<W>(&boxes(node, row_stride(W)), hi);
    return detail::box_distance2<W>(q, lo, hi);
  }

  // Both children of an internal node and their bounds, from its one row.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void child_bounds(Index node, Coordinate const (&q)[W],
                                                NodeRef (&children)[2],
                                                Coordinate (&bounds)[2]) const {
    Coordinate const* row = &records(node, 0);
    Coordinate refs[4];
    detail::load_row<4>(row + detail::ChildRecord<W>::refs, refs);
    for (int slot = 0; slot < 2; ++slot) {
      Coordinate lo[W], hi[W];
      detail::load_row<W>(row + detail::ChildRecord<W>::lower(slot), lo);
      detail::load_row<W>(row + detail::ChildRecord<W>::upper(slot), hi);
      bounds[slot] = detail::box_distance2<W>(q, lo, hi);
      children[slot] = {static_cast<Index>(detail::float_bits(refs[2 * slot])),
                        static_cast<Index>(detail::float_bits(refs[2 * slot + 1]))};
    }
  }

  template <class F>
  void for_each_field(F&& f) {
    f(topology.internal);
    f(topology.point_parent);
    points.for_each_field(f);
    f(boxes);
    f(records);
  }
};

} // namespace treetrav
