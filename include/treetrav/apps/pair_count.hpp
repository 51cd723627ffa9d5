#pragma once

// Pair counts in radial bins (the two-point correlation function's DD(r)):
// for every pair (query, reference point) the bin [e_b, e_{b+1}) of their
// distance, counted, and with weights the sum of the products of their
// weights. One walk per query answers every bin: a node whose distances from
// the query all fall in one bin adds its point count (and weight) to that
// bin without being opened. In a periodic box the distance is to the nearest
// image (radii up to half the box's shortest side).
//
// The bin of a pair is decided in double precision from the float
// coordinates (exact differences, the nearest image's by subtracting L),
// as Corrfunc decides it for double inputs, so the counts are exact and
// equal to a double-precision brute force. A node is counted whole only when
// its distance bounds sit inside one bin by a margin far above their
// rounding, so a node never lands a point in another bin than its own
// distance would.
#include <treetrav/apps/detail/compiled.hpp>
#include <treetrav/apps/detail/pair_count_host.hpp>
#include <treetrav/apps/detail/search_setup.hpp>
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/periodic_box.hpp>
#include <treetrav/kernels/visitor.hpp>
#include <treetrav/traversal/traverse.hpp>
#include <treetrav/trees/bvh.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace treetrav {

inline constexpr int max_pair_bins = 64;

struct PairCountOptions {
  // Bin edges e_0 < e_1 < ... < e_N (N bins, 1..max_pair_bins): bin b holds
  // the pairs at distances in [e_b, e_{b+1}).
  std::vector<double> edges;
  PeriodicBox box;
  // The queries are the reference points: each unordered pair of distinct
  // points counted once (a point is not paired with itself).
  bool autocorrelation = false;
  QueryOrder order = QueryOrder::sfc;
};

// The counts of a pair count, per bin, on the host.
struct PairCounts {
  std::vector<double> edges;
  std::vector<std::uint64_t> counts;
  std::vector<double> weighted; // sum of w_query * w_point (empty without weights)
  // All pairs the bins draw from (autocorrelation: n(n - 1) / 2, cross:
  // n_queries * n_reference) and their weight products' sum: the
  // normalisation of an estimator.
  double pairs = 0;
  double weight_pairs = 0;
};

// Bin edges: `bins` bins between lo and hi, equal in r or in log r.
inline std::vector<double> linear_edges(double lo, double hi, int bins) {
  if (!(bins >= 1 && bins <= max_pair_bins))
    throw InputError("bins", ": 1 to " + std::to_string(max_pair_bins) + " bins (got " +
                                 std::to_string(bins) + ")");
  if (!(lo >= 0 && hi > lo && std::isfinite(hi)))
    throw InputError("edges", ": 0 <= low < high, finite (got " + std::to_string(lo) + ", " +
                                  std::to_string(hi) + ")");
  std::vector<double> edges(bins + 1);
  for (int b = 0; b <= bins; ++b)
    edges[b] = b == bins ? hi : lo + (hi - lo) * b / bins;
  return edges;
}
inline std::vector<double> log_edges(double lo, double hi, int bins) {
  if (!(lo > 0))
    throw InputError("edges", ": logarithmic bins start above 0 (got " + std::to_string(lo) + ")");
  auto edges = linear_edges(lo, hi, bins); // checks bins, lo and hi
  double const step = (std::log10(hi) - std::log10(lo)) / bins;
  for (int b = 1; b < bins; ++b)
    edges[b] = std::pow(10.0, std::log10(lo) + step * b);
  return edges;
}

// The natural estimator of the correlation function in a periodic box,
// xi_b = DD_b / RR_b - 1, with RR_b the pairs a uniform box would put in bin
// b (its shell's share of the box's volume); of the weighted counts when
// there are weights.
inline std::vector<double> natural_estimator(PairCounts const& counts, PeriodicBox const& box) {
  if (!box.periodic())
    throw InputError("box", ": the natural estimator's RR is the periodic box's (no box given)");
  constexpr double pi = 3.14159265358979323846;
  auto const ball = [&](double r) {
    return box.dimension == 1 ? 2 * r : box.dimension == 2 ? pi * r * r : 4.0 / 3.0 * pi * r * r * r;
  };
  bool const weighted = !counts.weighted.empty();
  std::vector<double> xi(counts.counts.size());
  for (std::size_t b = 0; b < xi.size(); ++b) {
    double const share = (ball(counts.edges[b + 1]) - ball(counts.edges[b])) / box.volume();
    double const dd = weighted ? counts.weighted[b] : static_cast<double>(counts.counts[b]);
    double const rr = (weighted ? counts.weight_pairs : counts.pairs) * share;
    xi[b] = dd / rr - 1;
  }
  return xi;
}

namespace detail {

// The nearest-image geometry of the pair counts, in double: per dimension
// the box's side (0: open) and its half.
struct PairGeometry {
  int dimension = 0;
  double length[PeriodicBox::max_dimension] = {0, 0, 0};

  // A coordinate difference's magnitude, to the nearest image.
  KOKKOS_FORCEINLINE_FUNCTION double gap(int k, double d) const {
    d = d < 0 ? -d : d;
    if (k < dimension) {
      double const wrapped = length[k] - d;
      d = wrapped < d ? wrapped : d;
    }
    return d;
  }
  // The least and largest distance (to the nearest image) from q to the
  // box [lo, hi], per dimension: a box inside [0, L) and q in [0, L).
  KOKKOS_FORCEINLINE_FUNCTION void box_gaps(int k, double q, double lo, double hi, double& least,
                                            double& most) const {
    double const below = lo - q, above = q - hi;
    double const outside = below > above ? below : above;
    least = outside > 0 ? outside : 0;
    double const a = below < 0 ? -below : below, b = above < 0 ? -above : above;
    most = a > b ? a : b;
    if (k < dimension) {
      double const around = length[k] + (below < above ? below : above);
      least = around < least ? around : least;
      most = most < length[k] / 2 ? most : length[k] / 2;
    }
  }
  // The least and largest distance (to the nearest image) between a
  // coordinate of one interval and one of another, from the range [dlo, dhi]
  // of their differences (within (-L, L) in a box).
  KOKKOS_FORCEINLINE_FUNCTION void interval_gaps(int k, double dlo, double dhi, double& least,
                                                 double& most) const {
    least = dlo > 0 ? dlo : (dhi < 0 ? -dhi : 0);
    most = -dlo > dhi ? -dlo : dhi;
    if (k < dimension) {
      double const l = length[k], half = l / 2;
      if (dlo > 0)
        least = l - dhi < least ? l - dhi : least;
      else if (dhi < 0)
        least = l + dlo < least ? l + dlo : least;
      // The nearest-image distance rises to L/2 at +-L/2 and falls to 0 at
      // 0: its largest value is L/2 or at an end of the range.
      if ((dlo <= half && half <= dhi) || (dlo <= -half && -half <= dhi)) {
        most = half;
      } else {
        double const a = gap(k, dlo), b = gap(k, dhi);
        most = a > b ? a : b;
      }
    }
  }
  // A pair's squared distance to the nearest image, in double from the float
  // coordinates: the distance every pair's bin is decided by.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION double distance2(Coordinate const (&a)[W],
                                               Coordinate const (&b)[W]) const {
    double d2 = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      double const g = gap(k, double(a[k]) - double(b[k]));
      d2 += g * g;
    }
    return d2;
  }
};

// The bin of a squared distance among the squared edges edges2(0..bins), or
// -1 outside [e_0, e_N).
template <class EdgesView>
KOKKOS_FORCEINLINE_FUNCTION int pair_bin(EdgesView const& edges2, int bins, double d2) {
  if (d2 < edges2(0) || !(d2 < edges2(bins)))
    return -1;
  int lo = 0, hi = bins; // edges2(lo) <= d2 < edges2(hi)
  while (hi - lo > 1) {
    int const mid = (lo + hi) / 2;
    if (edges2(mid) <= d2)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// One query's walk: its pairs binned in its state (counts, and the weight
// sums of the points), written to row `query` of counts and sums at its end.
// Everything counted lives in the state, so strategies that walk parts of
// the tree again (hybrid's profile, REGTT's probes) count nothing twice.
// A node counted whole into bin b travels as a leaf whose count carries
// b + 1 above accepted_shift (child_keys sees the state read-only).
template <class MemorySpace, int W, int MaxBins>
struct PairCountVisitor {
  using memory_space = MemorySpace;
  using Tree = Bvh<MemorySpace>;
  struct state_type {
    Coordinate query[W];
    std::uint32_t counts[MaxBins];
    double sums[MaxBins];
  };
  static constexpr bool guided = false;
  static constexpr bool keyed = true;
  // A node is counted whole only this far inside its bin (relative to the
  // squared edges), far above the double rounding of the bounds and of each
  // pair's distance.
  static constexpr double margin = 1e-12;
  static constexpr int accepted_shift = 24; // nodes of fewer points are counted whole

  Tree tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> queries;
  Kokkos::View<double const*, MemorySpace> edges2; // squared edges, N + 1
  int bins;
  Coordinate reach2; // float bound beyond which a node is pruned (above e_N^2)
  PairGeometry geometry;
  Kokkos::View<double const*, MemorySpace> weight_prefix; // tree order, n + 1 (empty: none)
  Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, MemorySpace> counts;
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sums;

  KOKKOS_FUNCTION bool weighted() const { return weight_prefix.extent(0) > 0; }
  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(queries.extent(0)); }
  KOKKOS_FORCEINLINE_FUNCTION void initialize(Index query, state_type& s) const {
    detail::load_query<W>(queries, query, s.query);
    for (int b = 0; b < bins; ++b) {
      s.counts[b] = 0;
      if (weighted())
        s.sums[b] = 0;
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION bool prune(Coordinate bound, state_type const&) const {
    return bound > reach2;
  }

  KOKKOS_FORCEINLINE_FUNCTION int bin_of(double d2) const { return pair_bin(edges2, bins, d2); }

  KOKKOS_FORCEINLINE_FUNCTION void add(state_type& s, int bin, Index first, Index end) const {
    s.counts[bin] += static_cast<std::uint32_t>(end - first);
    if (weighted())
      s.sums[bin] += weight_prefix(end) - weight_prefix(first);
  }

  KOKKOS_FORCEINLINE_FUNCTION void process_point(Index p, state_type& s) const {
    Coordinate row[W];
    detail::load_row<W>(tree.points.rows.data() + std::size_t(p) * row_stride(W), row);
    int const b = bin_of(geometry.distance2<W>(s.query, row));
    if (b >= 0)
      add(s, b, p, p + 1);
  }

  KOKKOS_FORCEINLINE_FUNCTION void process_leaf(NodeRef leaf, Index, state_type& s) const {
    int const accepted = leaf.count >> accepted_shift;
    Index const count = leaf.count & ((Index(1) << accepted_shift) - 1);
    if (accepted > 0) {
      add(s, accepted - 1, leaf.index, leaf.index + count);
      return;
    }
    for (Index p = leaf.index; p < leaf.index + count; ++p)
      process_point(p, s);
  }

  // What a node with box [lo, hi] and points [first, end) is to the query:
  // wholly in one bin (its bin, counted whole), wholly outside the bins
  // (-2), or to be walked (-1, its least squared distance in `key`, a float
  // rounded within the margin).
  KOKKOS_FORCEINLINE_FUNCTION int settle(Coordinate const (&lo)[W], Coordinate const (&hi)[W],
                                         Index first, Index end, state_type const& s,
                                         Coordinate& key) const {
    double least2 = 0, most2 = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      double least, most;
      geometry.box_gaps(k, s.query[k], lo[k], hi[k], least, most);
      least2 += least * least;
      most2 += most * most;
    }
    if (most2 * (1 + margin) < edges2(0) || least2 * (1 - margin) >= edges2(bins))
      return -2;
    int const b = bin_of(least2 * (1 - margin));
    if (b >= 0 && most2 * (1 + margin) < edges2(b + 1) &&
        end - first < (Index(1) << accepted_shift))
      return b;
    key = static_cast<Coordinate>(least2 * (1 - margin));
    return -1;
  }

  KOKKOS_FORCEINLINE_FUNCTION bool visit(Index node, Index, state_type& s) const {
    auto const& topology = tree.topology;
    if (!topology.is_internal(node)) {
      process_point(topology.point_begin(node), s);
      return false;
    }
    Coordinate lo[W], hi[W], key = 0;
    detail::load_row<W>(&tree.boxes(node, 0), lo);
    detail::load_row<W>(&tree.boxes(node, row_stride(W)), hi);
    Index const first = topology.point_begin(node), end = topology.point_end(node);
    int const settled = settle(lo, hi, first, end, s, key);
    if (settled >= 0)
      add(s, settled, first, end);
    if (settled != -1 || prune(key, s))
      return false;
    NodeRef const ref = topology.ref(node);
    if (!ref.is_leaf())
      return true;
    process_leaf(ref, node, s);
    return false;
  }

  KOKKOS_FORCEINLINE_FUNCTION NodeRef root() const {
    return tree.topology.ref(tree.topology.root());
  }

  // Both children from the parent's record row: each out of reach (key
  // infinity: pruned), counted whole (a tagged leaf, key 0) or keyed by its
  // least distance.
  KOKKOS_FORCEINLINE_FUNCTION void child_keys(NodeRef inner, Index, state_type const& s,
                                              NodeRef (&children)[2], Coordinate (&keys)[2]) const {
    Coordinate const* row = &tree.records(inner.index, 0);
    Coordinate refs[4];
    detail::load_row<4>(row + detail::ChildRecord<W>::refs, refs);
    for (int slot = 0; slot < 2; ++slot) {
      Coordinate lo[W], hi[W];
      detail::load_row<W>(row + detail::ChildRecord<W>::lower(slot), lo);
      detail::load_row<W>(row + detail::ChildRecord<W>::upper(slot), hi);
      NodeRef const child{static_cast<Index>(detail::float_bits(refs[2 * slot])),
                          static_cast<Index>(detail::float_bits(refs[2 * slot + 1]))};
      Index const first = child.is_leaf() ? child.index : tree.topology.point_begin(child.index);
      Index const end = child.is_leaf() ? child.index + child.count
                                        : tree.topology.point_end(child.index);
      Coordinate key = 0;
      int const settled = settle(lo, hi, first, end, s, key);
      children[slot] = child;
      keys[slot] = settled == -2 ? infinity : key;
      if (settled >= 0) {
        children[slot] = NodeRef::leaf(first, (end - first) | ((settled + 1) << accepted_shift));
        keys[slot] = 0;
      }
    }
  }
  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  KOKKOS_FORCEINLINE_FUNCTION void finalize(Index query, state_type const& s) const {
    for (int b = 0; b < bins; ++b) {
      counts(query, b) = s.counts[b];
      if (weighted())
        sums(query, b) = s.sums[b];
    }
  }
};

// The cells of PairCountGroups: `up` holds the squared edges rounded up
// (non-decreasing, up.back() > 0), `first` the least squared distance to
// bin (below it none is counted). The cells split the float bits of
// [first, up.back()) into at most max_cells runs of equal bits >> shift;
// each cell holds the count of edges e with up[e] at or below its least
// value (low byte) and its largest (high byte).
struct PairCountCells {
  static constexpr std::uint32_t max_cells = 1024;
  std::vector<std::uint16_t> cells;
  std::uint32_t first = 0;
  int shift = 0;

  PairCountCells(std::vector<float> const& up, float least) {
    std::uint32_t const low = float_bits(least > 0 ? least : 0.0f);
    std::uint32_t const high = float_bits(up.back());
    while ((high >> shift) - (low >> shift) + 1 > max_cells)
      ++shift;
    first = low >> shift;
    cells.resize((high >> shift) - first + 1);
    auto const edges_at_or_below = [&](float x) {
      return std::uint16_t(std::upper_bound(up.begin(), up.end(), x) - up.begin());
    };
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::uint64_t const key = first + c;
      std::uint64_t const last = std::min<std::uint64_t>(((key + 1) << shift) - 1, high);
      std::uint16_t const fewest = edges_at_or_below(bits_float(std::uint32_t(key << shift)));
      std::uint16_t const most = edges_at_or_below(bits_float(std::uint32_t(last)));
      cells[c] = std::uint16_t(fewest | (most << 8));
    }
  }
};

// The autocorrelation's group walk (GroupWalk): the queries are the tree's
// own points, and each unordered pair is counted once, from its point of
// lower tree position (no point with itself). A warp walks the tree once
// for a group of neighbouring points. It skips the nodes wholly below the
// group's first position (their pairs are counted from their own end) or
// out of every bin's reach from the group's box, counts whole the nodes
// whose distances from that box sit inside one bin, and opens the rest down
// to their points, whose distances from its queries each lane bins.
// A pair's bin is decided in float where its squared distance is surely
// away from every edge, else in double exactly as PairCountVisitor decides
// it, so both give the same counts. Sure: the float squared distance is
// within float_error of the double one (each nearest-image difference
// rounded once, L - x exact for x >= L/2, then the squares and their sum:
// about 4e-7 at most).
template <class MemorySpace, int W, int MaxBins>
struct PairCountGroups {
  using memory_space = MemorySpace;
  using Tree = Bvh<MemorySpace>;
  static constexpr bool guided = false;
  static constexpr bool group_walk = true;
  static constexpr int max_bins = MaxBins;
  // The counts, while they fit, in the warp's scratch, one column a lane
  // that both its queries add to (lanes binning pairs into different bins
  // then touch distinct banks; in local memory their scattered reads and
  // writes each cost a transaction per lane). The lane's column goes out in
  // its slot-0 query's row, zeros in its slot-1 query's: only the rows' sum
  // is the count.
  static constexpr bool counts_in_scratch = MaxBins <= 32 && W <= 8;
  struct warp_counts {
    std::uint32_t counts[MaxBins][group_walk_lanes];
  };
  using warp_state_type = std::conditional_t<counts_in_scratch, warp_counts, void>;
  struct scratch_state {
    std::uint32_t* counts; // the lane's column: counts[bin * group_walk_lanes]
    double sums[MaxBins];
  };
  struct local_state {
    std::uint32_t counts[MaxBins];
    double sums[MaxBins];
  };
  using state_type = std::conditional_t<counts_in_scratch, scratch_state, local_state>;
  struct group_type {
    Coordinate lo[W], hi[W];
    Index first;
  };
  // An accepted node: its box's centre (a point of the box: its distance
  // from any query of the group lies in the node's one bin) and its points.
  struct node_record_type {
    Coordinate center[W];
    Index first, end;
  };
  struct point_record_type {
    Coordinate x[W];
    Index position;
  };
  // wrap: a query within the top edge's reach of a periodic box's face,
  // whose pairs need the nearest image; the others' pairs in reach are
  // their plain differences (those far across the box stay out of reach).
  struct query_record_type {
    Coordinate x[W];
    Index position;
    bool wrap;
  };
  static constexpr double margin = PairCountVisitor<MemorySpace, W, MaxBins>::margin;
  static constexpr double float_error = 4e-6;

  Tree tree;
  Kokkos::View<double const*, MemorySpace> edges2;
  // Each squared edge rounded down (0 .. bins) then up (bins + 1 ..) by
  // float_error, as floats: a float squared distance in [down, up) of an
  // edge is decided in double.
  Kokkos::View<Coordinate const*, MemorySpace> sure;
  // The edges' search shortened by the bits of a float squared distance:
  // the distances whose bits >> cell_shift are cell_first + c have between
  // cells(c) & 0xff and cells(c) >> 8 edges surely at or below them
  // (PairCountCells), so one load gives the count, or a step or two where
  // an edge falls inside the cell, in place of a search of dependent loads.
  Kokkos::View<std::uint16_t const*, MemorySpace> cells;
  std::uint32_t cell_first;
  int cell_shift;
  int bins;
  PairGeometry geometry;
  Coordinate length[W], half[W]; // the box's sides (0: open) and halves (open: infinity)
  Kokkos::View<double const*, MemorySpace> weight_prefix; // tree order, n + 1 (empty: none)
  Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, MemorySpace> counts;
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sums;
  // A query inside [inner_low, inner_high] in every dimension needs no
  // image: open dimensions take every coordinate; periodic ones those
  // farther than the top edge (and its float slack) from both faces.
  Coordinate inner_low[W], inner_high[W];
  // sure's first and last values, by value: most pairs fall outside them,
  // and the test then waits on no load.
  Coordinate first_down, last_up;

  KOKKOS_FUNCTION bool weighted() const { return weight_prefix.extent(0) > 0; }
  KOKKOS_FUNCTION Index query_count() const { return tree.points.size(); }
  KOKKOS_FUNCTION bool active(Index) const { return true; }
  KOKKOS_FORCEINLINE_FUNCTION Coordinate const* row(Index p) const {
    return tree.points.rows.data() + std::size_t(p) * row_stride(W);
  }

  // A bin's count in either state (State: state_type, const or not).
  template <class State>
  KOKKOS_FORCEINLINE_FUNCTION static decltype(auto) count(State& s, int bin) {
    if constexpr (counts_in_scratch)
      return (s.counts[bin * group_walk_lanes]);
    else
      return (s.counts[bin]);
  }
  KOKKOS_FUNCTION void initialize(Index, state_type& s) const {
    for (int b = 0; b < bins; ++b) {
      count(s, b) = 0;
      if (weighted())
        s.sums[b] = 0;
    }
  }
  template <class WarpCounts>
  KOKKOS_FUNCTION void initialize(Index query, state_type& s, WarpCounts& warp, int lane,
                                  int) const {
    s.counts = &warp.counts[0][lane];
    initialize(query, s);
  }
  KOKKOS_FUNCTION void finalize(Index query, state_type const& s) const {
    for (int b = 0; b < bins; ++b) {
      counts(query, b) = count(s, b);
      if (weighted())
        sums(query, b) = s.sums[b];
    }
  }
  template <class WarpCounts>
  KOKKOS_FUNCTION void finalize(Index query, state_type const& s, WarpCounts&, int,
                                int slot) const {
    for (int b = 0; b < bins; ++b) {
      counts(query, b) = slot == 0 ? count(s, b) : 0;
      if (weighted())
        sums(query, b) = s.sums[b];
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(state_type& s, int bin, Index first, Index end) const {
    count(s, bin) += static_cast<std::uint32_t>(end - first);
    if (weighted())
      s.sums[bin] += weight_prefix(end) - weight_prefix(first);
  }

  KOKKOS_FUNCTION group_type group(Index first, Index last) const {
    group_type g;
    g.first = first;
    detail::load_row<W>(row(first), g.lo);
    for (int k = 0; k < W; ++k)
      g.hi[k] = g.lo[k];
    for (Index p = first + 1; p < last; ++p) {
      Coordinate x[W];
      detail::load_row<W>(row(p), x);
      for (int k = 0; k < W; ++k) {
        g.lo[k] = x[k] < g.lo[k] ? x[k] : g.lo[k];
        g.hi[k] = x[k] > g.hi[k] ? x[k] : g.hi[k];
      }
    }
    return g;
  }

  KOKKOS_FORCEINLINE_FUNCTION void node_box(Index node, Coordinate (&lo)[W],
                                            Coordinate (&hi)[W]) const {
    if (tree.topology.is_internal(node)) {
      detail::load_row<W>(&tree.boxes(node, 0), lo);
      detail::load_row<W>(&tree.boxes(node, row_stride(W)), hi);
    } else {
      detail::load_row<W>(row(tree.topology.point_begin(node)), lo);
      for (int k = 0; k < W; ++k)
        hi[k] = lo[k];
    }
  }
  // The squared least and largest distances between the group's box and
  // the node's.
  KOKKOS_FORCEINLINE_FUNCTION void bounds(Index node, group_type const& g, double& least2,
                                          double& most2) const {
    Coordinate lo[W], hi[W];
    node_box(node, lo, hi);
    least2 = most2 = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      double least, most;
      geometry.interval_gaps(k, double(g.lo[k]) - double(hi[k]), double(g.hi[k]) - double(lo[k]),
                             least, most);
      least2 += least * least;
      most2 += most * most;
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION bool out_of_reach(double least2, double most2) const {
    return most2 * (1 + margin) < edges2(0) || least2 * (1 - margin) >= edges2(bins);
  }
  KOKKOS_FORCEINLINE_FUNCTION bool in_one_bin(double least2, double most2) const {
    int const b = pair_bin(edges2, bins, least2 * (1 - margin));
    return b >= 0 && most2 * (1 + margin) < edges2(b + 1);
  }
  KOKKOS_FUNCTION bool skip(Index node, group_type const& g) const {
    if (tree.topology.point_end(node) <= g.first + 1)
      return true;
    double least2, most2;
    bounds(node, g, least2, most2);
    return out_of_reach(least2, most2);
  }
  KOKKOS_FUNCTION bool accept(Index node, group_type const& g) const {
    double least2, most2;
    bounds(node, g, least2, most2);
    return in_one_bin(least2, most2);
  }
  // skip() then accept() from one computation of the bounds (the host's
  // walk; on the GPU each lane's tests stay apart).
  enum class Settled { skip, accept, open };
  KOKKOS_FUNCTION Settled settle(Index node, group_type const& g) const {
    if (tree.topology.point_end(node) <= g.first + 1)
      return Settled::skip;
    double least2, most2;
    bounds(node, g, least2, most2);
    return out_of_reach(least2, most2) ? Settled::skip
           : in_one_bin(least2, most2) ? Settled::accept
                                       : Settled::open;
  }

  KOKKOS_FUNCTION node_record_type node_record(Index node) const {
    node_record_type r;
    Coordinate lo[W], hi[W];
    node_box(node, lo, hi);
    for (int k = 0; k < W; ++k)
      r.center[k] = (lo[k] + hi[k]) * Coordinate(0.5);
    r.first = tree.topology.point_begin(node);
    r.end = tree.topology.point_end(node);
    return r;
  }
  KOKKOS_FUNCTION point_record_type point_record(Index position) const {
    point_record_type r;
    detail::load_row<W>(row(position), r.x);
    r.position = position;
    return r;
  }
  KOKKOS_FUNCTION query_record_type query_record(Index, Index position) const {
    query_record_type r;
    detail::load_row<W>(row(position), r.x);
    r.position = position;
    r.wrap = false;
    for (int k = 0; k < W; ++k)
      r.wrap = r.wrap || r.x[k] < inner_low[k] || r.x[k] > inner_high[k];
    return r;
  }

  // The bin of an accepted node's points seen from q (-1: none).
  KOKKOS_FORCEINLINE_FUNCTION int node_bin(node_record_type const& r,
                                           Coordinate const (&q)[W]) const {
    return pair_bin(edges2, bins, geometry.distance2<W>(q, r.center));
  }
  KOKKOS_FUNCTION void interact(node_record_type const& r, query_record_type const& q,
                                state_type& s) const {
    Index const from = r.first > q.position ? r.first : q.position + 1;
    if (from >= r.end)
      return;
    int const b = node_bin(r, q.x);
    if (b >= 0)
      add(s, b, from, r.end);
  }
  KOKKOS_FUNCTION void interact(point_record_type const& p, query_record_type const& q,
                                state_type& s) const {
    if (p.position <= q.position)
      return;
    Coordinate d2 = 0;
    if (q.wrap) {
#pragma unroll
      for (int k = 0; k < W; ++k) {
        Coordinate const big = p.x[k] > q.x[k] ? p.x[k] : q.x[k];
        Coordinate const small = p.x[k] > q.x[k] ? q.x[k] : p.x[k];
        Coordinate d = big - small;
        if (d > half[k])
          d = (length[k] - big) + small;
        d2 += d * d;
      }
    } else { // the same differences, rounded the same, where no image is nearer
#pragma unroll
      for (int k = 0; k < W; ++k) {
        Coordinate const d = p.x[k] - q.x[k];
        d2 += d * d;
      }
    }
    int const b = bin_of(d2, q.x, p.x);
    if (b >= 0)
      add(s, b, p.position, p.position + 1);
  }
  // The bin of the pair (q, p) (-1: none) from its float squared distance
  // d2: by d2 away from the edges' bands, else in double.
  KOKKOS_FORCEINLINE_FUNCTION int bin_of(Coordinate d2, Coordinate const (&q)[W],
                                         Coordinate const (&p)[W]) const {
    if (d2 >= last_up || d2 < first_down) // surely beyond the last edge or below the first
      return -1;
    Coordinate const* const down = sure.data();
    Coordinate const* const up = down + bins + 1;
    // The edges surely at or below d2: [0, below).
    std::uint32_t const range = cells((detail::float_bits(d2) >> cell_shift) - cell_first);
    int below = int(range & 0xffu);
    for (int const most = int(range >> 8); below < most && up[below] <= d2;)
      ++below;
    // Edge `below` is unsure when its rounded-down square is at or below d2.
    return down[below] <= d2 ? pair_bin(edges2, bins, geometry.distance2<W>(q, p)) : below - 1;
  }
};

// What a pair count checks before any work.
template <class MemorySpace>
void check_pair_count(Index reference_size, int dimension, PointSet<MemorySpace> const& queries,
                      PairCountOptions const& options, std::size_t reference_weights,
                      std::size_t query_weights) {
  auto const& e = options.edges;
  if (e.size() < 2 || e.size() > std::size_t(max_pair_bins) + 1)
    throw InputError("edges", ": 2 to " + std::to_string(max_pair_bins + 1) +
                                  " bin edges (1 to " + std::to_string(max_pair_bins) +
                                  " bins), got " + std::to_string(e.size()));
  for (std::size_t b = 0; b < e.size(); ++b)
    if (!std::isfinite(e[b]) || e[b] < 0 || (b > 0 && !(e[b] > e[b - 1])))
      throw InputError("edges", ": finite, >= 0 and increasing (edge " + std::to_string(b) +
                                    " is " + std::to_string(e[b]) + ")");
  check_queries(reference_size, dimension, queries, options.autocorrelation);
  if (options.box.periodic()) {
    if (options.box.dimension != dimension)
      throw InputError("box", ": " + std::to_string(options.box.dimension) + " sides for " +
                                  std::to_string(dimension) + "-dimensional points");
    if (e.back() > options.box.shortest() / 2)
      throw InputError("edges", ": the largest edge " + std::to_string(e.back()) +
                                    " exceeds half the periodic box's shortest side (" +
                                    std::to_string(options.box.shortest() / 2) + ")");
  }
  if (reference_weights != 0 && reference_weights != std::size_t(reference_size))
    throw InputError("weights", ": " + std::to_string(reference_weights) + " weights for " +
                                    std::to_string(reference_size) + " reference points");
  if ((query_weights != 0) != (reference_weights != 0) ||
      (query_weights != 0 && query_weights != std::size_t(queries.size())))
    throw InputError("query_weights", ": weights for every query when the reference points "
                                      "have them (got " +
                                          std::to_string(query_weights) + " for " +
                                          std::to_string(queries.size()) + " queries)");
}

// The per-query bins of every query into counts and sums (queries x bins),
// under `strategy`; instantiated here (compiled.hpp).
template <class ExecutionSpace, class Strategy, class MemorySpace>
void count_pairs_with(ExecutionSpace const& space, Bvh<MemorySpace> const& tree,
                      PointSet<MemorySpace> const& queries, PairCountOptions const& options,
                      Strategy strategy, Kokkos::View<double const*, MemorySpace> edges2,
                      Kokkos::View<double const*, MemorySpace> weight_prefix,
                      Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, MemorySpace> counts,
                      Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sums) {
  Kokkos::Profiling::pushRegion("treetrav::count_pairs");
  auto const order = detail::resolve_order(space, queries, options.order, {});
  PairGeometry geometry;
  geometry.dimension = options.box.dimension;
  for (int k = 0; k < options.box.dimension; ++k)
    geometry.length[k] = options.box.length[k];
  int const bins = static_cast<int>(options.edges.size()) - 1;
  double const top2 = options.edges.back() * options.edges.back();
  // Pruned by float keys (rounded down within the margin) only beyond e_N^2
  // by more than a float's rounding.
  Coordinate const reach2 = static_cast<Coordinate>(top2 * (1 + 1e-6)) + Coordinate(1e-30);
  // The bins' capacity of a query's state: 32 or max_pair_bins.
  auto const walk = [&](auto capacity) {
    dispatch_width(tree.width(), [&](auto width) {
      PairCountVisitor<MemorySpace, decltype(width)::value, decltype(capacity)::value> visitor{
          tree, queries.coordinates, edges2, bins, reach2, geometry, weight_prefix, counts, sums};
      traverse(space, tree.topology, visitor, strategy, order);
    });
  };
  if (bins <= 32)
    walk(std::integral_constant<int, 32>{});
  else
    walk(std::integral_constant<int, max_pair_bins>{});
  Kokkos::Profiling::popRegion();
}

// The autocorrelation's unordered pairs by the group walk (PairCountGroups)
// into counts and sums: only their rows' sums are the counts (the rows of
// sums are the queries', each multiplied by its weight). On host backends
// the vectors are host_isa's (PairHostWalk::isa; -1: the widest this host
// runs).
template <class ExecutionSpace, class MemorySpace>
void count_pair_groups(ExecutionSpace const& space, Bvh<MemorySpace> const& tree,
                       PairCountOptions const& options, GroupWalk const& strategy,
                       Kokkos::View<double const*, MemorySpace> edges2,
                       Kokkos::View<double const*, MemorySpace> weight_prefix,
                       Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, MemorySpace> counts,
                       Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sums,
                       int host_isa = -1) {
  Kokkos::Profiling::pushRegion("treetrav::count_pairs::groups");
  int const bins = static_cast<int>(options.edges.size()) - 1;
  PairGeometry geometry;
  geometry.dimension = options.box.dimension;
  for (int k = 0; k < options.box.dimension; ++k)
    geometry.length[k] = options.box.length[k];
  // The floats nearest below and above a double.
  auto const float_below = [](double x) {
    Coordinate const f = static_cast<Coordinate>(x);
    return double(f) > x ? std::nextafter(f, -infinity) : f;
  };
  auto const float_above = [](double x) {
    Coordinate const f = static_cast<Coordinate>(x);
    return double(f) < x ? std::nextafter(f, infinity) : f;
  };
  // The float bounds of the squared edges; 1e-30 covers the squares' underflow.
  Kokkos::View<Coordinate*, MemorySpace> sure(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::PairCount::sure_edges"),
      2 * (bins + 1));
  auto host = Kokkos::create_mirror_view(sure);
  for (int b = 0; b <= bins; ++b) {
    double const e2 = options.edges[b] * options.edges[b];
    double const e = PairCountGroups<MemorySpace, 3, 32>::float_error;
    host(b) = float_below(e2 * (1 - e) - 1e-30);
    host(bins + 1 + b) = float_above(e2 * (1 + e) + 1e-30);
  }
  PairCountCells const cells(
      std::vector<float>(host.data() + bins + 1, host.data() + 2 * (bins + 1)), host(0));
  Kokkos::View<std::uint16_t*, MemorySpace> cell_view(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::PairCount::edge_cells"),
      cells.cells.size());
  Kokkos::deep_copy(space, sure, host);
  Kokkos::deep_copy(space, cell_view,
                    Kokkos::View<std::uint16_t const*, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>(cells.cells.data(),
                                                                         cells.cells.size()));
  space.fence(); // `host` and `cells` leave scope
  auto const walk = [&](auto capacity) {
    dispatch_width(tree.width(), [&](auto width) {
      constexpr int W = decltype(width)::value;
      PairCountGroups<MemorySpace, W, decltype(capacity)::value> visitor{
          tree, edges2, sure, cell_view, cells.first, cells.shift, bins, geometry, {}, {},
          weight_prefix, counts, sums};
      visitor.first_down = host(0);
      visitor.last_up = host(2 * bins + 1);
      // The slack: a plain difference across the box is at least L / 2 and
      // its image at least the reach, so its float square stays above the
      // top edge's rounded-up square (float_error).
      double const reach = options.edges.back() * (1 + 1e-5);
      for (int k = 0; k < W; ++k) {
        bool const periodic = k < options.box.dimension;
        visitor.length[k] = periodic ? static_cast<Coordinate>(options.box.length[k]) : 0;
        visitor.half[k] = periodic ? visitor.length[k] / 2 : infinity;
        visitor.inner_low[k] = periodic ? float_above(reach) : -infinity;
        visitor.inner_high[k] = periodic ? float_below(options.box.length[k] - reach) : infinity;
      }
      if constexpr (is_cuda_space_v<ExecutionSpace>)
        traverse(space, tree.topology, visitor, strategy,
                 Kokkos::View<Index const*, MemorySpace>(tree.points.original_index));
      else
        count_pair_groups_host<W>(space, tree, visitor, strategy,
                                  host_isa < 0 ? pair_host_isa() : host_isa);
    });
  };
  if (bins <= 32)
    walk(std::integral_constant<int, 32>{});
  else
    walk(std::integral_constant<int, max_pair_bins>{});
  Kokkos::Profiling::popRegion();
}

// count_pairs_with of the backends and strategies that treetrav::searches
// compiles (compiled.hpp); its definition is there (src/searches/).
template <class ExecutionSpace, class Tree, int Part>
struct CompiledPairCount {
  using memory_space = typename Tree::memory_space;
  static void run(ExecutionSpace const& space, Tree const& tree,
                  PointSet<memory_space> const& queries, PairCountOptions const& options,
                  CompiledStrategy const& strategy, Kokkos::View<double const*, memory_space> edges2,
                  Kokkos::View<double const*, memory_space> weight_prefix,
                  Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
                  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums);
  // count_pair_groups (in part 0 only).
  static void run_groups(ExecutionSpace const& space, Tree const& tree,
                         PairCountOptions const& options, GroupWalk const& strategy,
                         Kokkos::View<double const*, memory_space> edges2,
                         Kokkos::View<double const*, memory_space> weight_prefix,
                         Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, memory_space> counts,
                         Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> sums);
};

} // namespace detail

// The pairs and weight products an autocorrelation's bins draw from.
inline void set_autocorrelation_totals(PairCounts& counts, Index n, double weight_sum,
                                       double weight_squares) {
  counts.pairs = 0.5 * double(n) * double(n - 1);
  counts.weight_pairs = 0.5 * (weight_sum * weight_sum - weight_squares);
}

// Ordered pair counts of a set with itself (every query a point of the
// set, each pair counted from both ends, each point with itself) made the
// autocorrelation's: each unordered pair of distinct points once. n: the
// points; weight_sum and weight_squares: their weights' sum and sum of
// squares (0 without weights).
inline void finish_autocorrelation(PairCounts& ordered, Index n, double weight_sum,
                                   double weight_squares) {
  bool const weighted = !ordered.weighted.empty();
  if (ordered.edges[0] == 0) { // the points with themselves, at distance 0
    ordered.counts[0] -= static_cast<std::uint64_t>(n);
    if (weighted)
      ordered.weighted[0] -= weight_squares;
  }
  for (std::size_t b = 0; b < ordered.counts.size(); ++b) {
    ordered.counts[b] /= 2;
    if (weighted)
      ordered.weighted[b] /= 2;
  }
  set_autocorrelation_totals(ordered, n, weight_sum, weight_squares);
}

namespace detail {

// What a pair count's walk reads and writes, made before it (the squared
// edges, the reference weights in tree order as prefix sums, the per-query
// bins) and summed after it: apart from the walk so that they are compiled
// once a backend, not once a strategy.
template <class MemorySpace>
struct PairCountWork {
  Kokkos::View<double*, MemorySpace> edges2, prefix;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutLeft, MemorySpace> counts;
  Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> sums;
  double weight_sum = 0, weight_squares = 0;
  // The autocorrelation's counts are of unordered pairs already (the group
  // walk), not ordered ones with each point paired with itself.
  bool unordered = false;
};

template <class ExecutionSpace, class MemorySpace>
PairCountWork<MemorySpace> prepare_pair_count(
    ExecutionSpace const& space, Bvh<MemorySpace> const& tree, Index queries,
    PairCountOptions const& options, Kokkos::View<Coordinate const*, MemorySpace> reference_weights) {
  Index const n = tree.points.size();
  int const bins = static_cast<int>(options.edges.size()) - 1;
  bool const weighted = reference_weights.extent(0) > 0;
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::PairCount::" + member);
  };
  PairCountWork<MemorySpace> work;
  work.edges2 = decltype(work.edges2)(alloc("edges2"), bins + 1);
  {
    auto host = Kokkos::create_mirror_view(work.edges2);
    for (int b = 0; b <= bins; ++b)
      host(b) = options.edges[b] * options.edges[b];
    Kokkos::deep_copy(space, work.edges2, host);
    space.fence(); // `host` leaves scope
  }
  if (weighted) {
    auto const prefix = work.prefix = decltype(work.prefix)(alloc("weight_prefix"), n + 1);
    auto const original = tree.points.original_index;
    Kokkos::parallel_scan(
        "treetrav::PairCount::weight_prefix", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        KOKKOS_LAMBDA(Index i, double& sum, bool final) {
          if (final)
            prefix(i) = sum;
          sum += reference_weights(original(i));
          if (final && i + 1 == n)
            prefix(n) = sum;
        },
        work.weight_sum);
    Kokkos::parallel_reduce(
        "treetrav::PairCount::weight_squares", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        KOKKOS_LAMBDA(Index i, double& sum) {
          sum += double(reference_weights(i)) * reference_weights(i);
        },
        work.weight_squares);
  }
  work.counts = decltype(work.counts)(alloc("counts"), queries, bins);
  work.sums = decltype(work.sums)(alloc("sums"), weighted ? queries : 0, bins);
  return work;
}

// The walk's per-query bins summed (a team per bin) into PairCounts.
template <class ExecutionSpace, class MemorySpace>
PairCounts finish_pair_count(ExecutionSpace const& space, PairCountWork<MemorySpace> const& work,
                             Index n, PairCountOptions const& options,
                             Kokkos::View<Coordinate const*, MemorySpace> query_weights) {
  auto const counts = work.counts;
  auto const sums = work.sums;
  Index const m = static_cast<Index>(counts.extent(0));
  int const bins = static_cast<int>(counts.extent(1));
  bool const weighted = query_weights.extent(0) > 0;
  auto const alloc = [&](std::string const& member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::PairCount::" + member);
  };
  Kokkos::View<std::uint64_t*, MemorySpace> bin_counts(alloc("bin_counts"), bins);
  Kokkos::View<double*, MemorySpace> bin_sums(alloc("bin_sums"), bins);
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  Kokkos::parallel_for(
      "treetrav::PairCount::sum_bins", Kokkos::TeamPolicy<ExecutionSpace>(space, bins, Kokkos::AUTO),
      KOKKOS_LAMBDA(Team const& team) {
        int const b = team.league_rank();
        std::uint64_t count = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, m),
            [&](Index q, std::uint64_t& sum) { sum += counts(q, b); }, count);
        double weight = 0;
        if (weighted)
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, m),
              [&](Index q, double& sum) { sum += double(query_weights(q)) * sums(q, b); }, weight);
        Kokkos::single(Kokkos::PerTeam(team), [&] {
          bin_counts(b) = count;
          bin_sums(b) = weight;
        });
      });
  auto const host_counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, bin_counts);
  auto const host_sums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, bin_sums);
  double query_weight_sum = 0;
  if (weighted && !options.autocorrelation)
    Kokkos::parallel_reduce(
        "treetrav::PairCount::query_weights", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m),
        KOKKOS_LAMBDA(Index q, double& sum) { sum += query_weights(q); }, query_weight_sum);

  PairCounts result;
  result.edges = options.edges;
  result.counts.assign(host_counts.data(), host_counts.data() + bins);
  if (weighted)
    result.weighted.assign(host_sums.data(), host_sums.data() + bins);
  if (options.autocorrelation && work.unordered) {
    set_autocorrelation_totals(result, n, work.weight_sum, work.weight_squares);
  } else if (options.autocorrelation) {
    finish_autocorrelation(result, n, work.weight_sum, work.weight_squares);
  } else {
    result.pairs = double(n) * double(m);
    result.weight_pairs = work.weight_sum * query_weight_sum;
  }
  return result;
}

} // namespace detail

// DD in the bins of options.edges: the pairs (query, reference point of the
// tree), or with options.autocorrelation the unordered pairs of the tree's
// own points (the queries are those points; the group walk serves only
// these). With weights (one per point of
// each set, in the caller's order), also the sums of their products.
template <class ExecutionSpace, class MemorySpace, class Strategy>
PairCounts count_pairs(ExecutionSpace const& space, Bvh<MemorySpace> const& tree,
                       PointSet<MemorySpace> const& queries, PairCountOptions const& options,
                       Strategy strategy,
                       Kokkos::View<Coordinate const*, typename Bvh<MemorySpace>::memory_space>
                           reference_weights = {},
                       Kokkos::View<Coordinate const*, typename Bvh<MemorySpace>::memory_space>
                           query_weights = {}) {
  Index const n = tree.points.size();
  detail::check_pair_count(n, tree.points.dimension, queries, options, reference_weights.extent(0),
                           query_weights.extent(0));
  if (options.box.periodic())
    detail::check_periodic_search(space, tree.points.rows, tree.points.original_index,
                                  tree.points.dimension, queries, options.box);
  auto work = detail::prepare_pair_count(space, tree, queries.size(), options, reference_weights);
  if constexpr (strategy_t<Strategy>::group_walk) {
    if (!options.autocorrelation)
      throw InputError("strategy", ": the group walk pairs one set's own points "
                                   "(autocorrelation), not queries with a reference set");
    Kokkos::View<double const*, MemorySpace> const edges2 = work.edges2, prefix = work.prefix;
    if constexpr (detail::compiled_space_v<ExecutionSpace>)
      detail::CompiledPairCount<ExecutionSpace, Bvh<MemorySpace>, 0>::run_groups(
          space, tree, options, strategy_of(strategy), edges2, prefix, work.counts, work.sums);
    else
      detail::count_pair_groups(space, tree, options, strategy_of(strategy), edges2, prefix,
                                work.counts, work.sums);
    work.unordered = true;
  } else if constexpr (detail::compiled_search_v<ExecutionSpace, true, Strategy>)
    detail::CompiledPairCount<ExecutionSpace, Bvh<MemorySpace>,
                              detail::compiled_part_v<ExecutionSpace, Strategy>>::run(
        space, tree, queries, options, detail::compiled_strategy(strategy), work.edges2,
        work.prefix, work.counts, work.sums);
  else
    detail::count_pairs_with(space, tree, queries, options, strategy,
                             Kokkos::View<double const*, MemorySpace>(work.edges2),
                             Kokkos::View<double const*, MemorySpace>(work.prefix), work.counts,
                             work.sums);
  return detail::finish_pair_count(space, work, n, options, query_weights);
}

} // namespace treetrav
