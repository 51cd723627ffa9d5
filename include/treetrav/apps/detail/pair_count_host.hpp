#pragma once

// The pair counts' group walk on host backends. The GPU's group walk
// (kernels/detail/group_kernels.hpp) emulated on a host thread evaluates its
// lists one lane and one pair at a time. Here a thread walks the tree once
// for a group with the same tests (PairCountGroups::settle), and
// then meets each of the group's queries with the opened leaves' points as
// whole blocks: the squared distances of a block in one vectorised loop, and
// for each edge that can split the block one vectorised count of the pairs
// below it (Corrfunc's way of binning). The counts are cumulative per edge
// (below[e]: the pairs whose distance is below edge e), and a bin's count is
// the difference of its edges'. A pair is decided exactly as everywhere
// else: its float squared distance away from an edge's band (PairCountGroups'
// `sure` bounds) decides it, and a pair inside a band is decided in double.
#include <treetrav/core/config.hpp>
#include <treetrav/kernels/detail/group_kernels.hpp>
#include <treetrav/traversal/strategies/group_walk.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

// Host code only (no __device__ twin under nvcc), always inlined.
#if defined(__GNUC__)
#define TREETRAV_HOST_INLINE inline __attribute__((always_inline))
#else
#define TREETRAV_HOST_INLINE inline
#endif

// The block loops are compiled for the widest vectors the host has (its
// choice made once a call): the library is built for the baseline ISA.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define TREETRAV_PAIR_HOST_ISA 1
#define TREETRAV_TARGET(isa) __attribute__((target(isa), flatten))
#else
#define TREETRAV_PAIR_HOST_ISA 0
#endif

namespace treetrav::detail {

// Points a block holds at most: its squared distances stay in L1.
inline constexpr int pair_block = 256;
// The blocks' loops run over vectors of Lanes floats (GCC's vector
// extension): 16 for AVX-512, 8 for AVX2, 4 for the baseline, each the
// registers' own width (wider ones are lowered lane by lane). A block's
// distances past its end are infinite (counted below no edge), up to a
// multiple of pair_lanes; the points' columns have as many rows of padding.
inline constexpr int pair_lanes = 16;
template <int Lanes>
struct PairVectors;
template <>
struct PairVectors<4> {
  using floats = Coordinate __attribute__((vector_size(16)));
  using ints = std::int32_t __attribute__((vector_size(16)));
};
template <>
struct PairVectors<8> {
  using floats = Coordinate __attribute__((vector_size(32)));
  using ints = std::int32_t __attribute__((vector_size(32)));
};
template <>
struct PairVectors<16> {
  using floats = Coordinate __attribute__((vector_size(64)));
  using ints = std::int32_t __attribute__((vector_size(64)));
};
static_assert(sizeof(Coordinate) == sizeof(std::int32_t));

TREETRAV_HOST_INLINE int pair_padded(int n) {
  return (n + pair_lanes - 1) / pair_lanes * pair_lanes;
}
// A vector of `at`'s Lanes floats (out-parameters, as below: a vector
// passed by value would take a wider ISA's ABI than the baseline's).
template <class V>
TREETRAV_HOST_INLINE void pair_load(V& v, Coordinate const* at) {
  std::memcpy(&v, at, sizeof v);
}
// The least (Least) or largest lane, halving: no chain of dependent steps.
template <bool Least, class V>
TREETRAV_HOST_INLINE Coordinate pair_extreme(V const& v) {
  constexpr int lanes = int(sizeof(V) / sizeof(Coordinate));
  Coordinate lane[lanes];
  std::memcpy(lane, &v, sizeof v);
  for (int width = lanes / 2; width > 0; width /= 2)
    for (int i = 0; i < width; ++i)
      lane[i] = (Least ? lane[i + width] < lane[i] : lane[i + width] > lane[i]) ? lane[i + width]
                                                                                : lane[i];
  return lane[0];
}
template <class V>
TREETRAV_HOST_INLINE bool pair_any(V const& v) {
  std::uint64_t words[sizeof(V) / sizeof(std::uint64_t)];
  std::memcpy(words, &v, sizeof v);
  std::uint64_t any = 0;
  for (std::uint64_t word : words)
    any |= word;
  return any != 0;
}
template <class V>
TREETRAV_HOST_INLINE std::int64_t pair_sum(V const& v) {
  constexpr int lanes = int(sizeof(V) / sizeof(std::int32_t));
  std::int32_t lane[lanes];
  std::memcpy(lane, &v, sizeof v);
  std::int64_t sum = 0;
  for (int i = 0; i < lanes; ++i)
    sum += lane[i];
  return sum;
}

// One group's queries' state, per query: below[e] (e = 0 .. bins) the pairs
// counted below edge e one by one; step[e] (e = 0 .. bins + 1) pairs below
// edge e and every edge above it; sums[b] the weights of bin b's points.
struct PairHostState {
  std::uint64_t* below;
  std::uint64_t* step;
  double* sums;
};

// An opened leaf, or a run of sibling leaves side by side in the tree: its
// points [first, end) and their box.
template <int W>
struct PairHostLeaf {
  Index first, end;
  Coordinate lo[W], hi[W];
};

template <int W, class Visitor>
struct PairHostBlocks {
  Visitor visitor; // PairCountGroups
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, typename Visitor::memory_space> columns;

  // The float squared distances of query q to the points [first, first + n)
  // (n <= pair_block), rounded as PairCountGroups::interact rounds them,
  // then infinity up to pair_padded(n); and bounds on the first n (the
  // padding's pairs, other points of the tree or none, only widen them).
  // Wrap: some dimension k of q needs the nearest image (wraps[k]: q within
  // the top edge's reach of one of its faces), the others take the plain
  // difference.
  template <bool Wrap, int Lanes>
  TREETRAV_HOST_INLINE void distances(Coordinate const (&q)[W], bool const (&wraps)[W],
                                      Index first, int n, Coordinate* d2, Coordinate& least,
                                      Coordinate& most) const {
    using V = typename PairVectors<Lanes>::floats;
    int const padded = pair_padded(n);
    V lo = (V{} + infinity), hi = (V{} + 0);
    for (int i = 0; i < padded; i += Lanes) {
      V sum = {};
      for (int k = 0; k < W; ++k) {
        V x;
        pair_load(x, &columns(first + i, k));
        V const qk = V{} + q[k];
        V d;
        if (Wrap && wraps[k]) {
          V const big = x > qk ? x : qk, small = x > qk ? qk : x;
          V const plain = big - small;
          V const around = ((V{} + visitor.length[k]) - big) + small;
          d = plain > (V{} + visitor.half[k]) ? around : plain;
        } else {
          d = x - qk;
        }
        sum += d * d;
      }
      std::memcpy(d2 + i, &sum, sizeof sum);
      lo = sum < lo ? sum : lo;
      hi = sum > hi ? sum : hi;
    }
    for (int i = n; i < padded; ++i)
      d2[i] = infinity;
    least = pair_extreme<true>(lo);
    most = pair_extreme<false>(hi);
  }

  TREETRAV_HOST_INLINE auto point(Index p) const {
    struct Row {
      Coordinate x[W];
    } row;
    for (int k = 0; k < W; ++k)
      row.x[k] = columns(p, k);
    return row;
  }

  // Whether a leaf's box lies beyond every bin's reach of q, or below the
  // first edge (its pairs count in no bin): then none of its points is met.
  TREETRAV_HOST_INLINE bool out_of_reach(Coordinate const (&q)[W],
                                         PairHostLeaf<W> const& leaf) const {
    double least2 = 0, most2 = 0;
    for (int k = 0; k < W; ++k) {
      double least, most;
      visitor.geometry.box_gaps(k, q[k], leaf.lo[k], leaf.hi[k], least, most);
      least2 += least * least;
      most2 += most * most;
    }
    return visitor.out_of_reach(least2, most2);
  }

  // Query q (tree position) against the leaves' points, position + 1 on, a
  // block at a time (leaves out of its reach skipped). Unweighted, a block's
  // pairs go into per-edge vector counts: the edges below its least distance
  // gain none, those above its largest all (one step), and each edge between
  // the pairs surely below it; a pair inside an edge's band (float_error,
  // rare) is then decided in double on its own. Weighted, every pair is
  // binned on its own (PairCountGroups::bin_of) with its weight.
  template <bool Wrap, int Lanes>
  TREETRAV_HOST_INLINE void pairs(Coordinate const (&q)[W], bool const (&wraps)[W],
                                  Index position, PairHostLeaf<W> const* leaf, int leaves,
                                  Coordinate* d2, PairHostState const& s) const {
    using V = typename PairVectors<Lanes>::floats;
    using Counts = typename PairVectors<Lanes>::ints;
    int const bins = visitor.bins;
    bool const weighted = visitor.weighted();
    Coordinate const* const down = visitor.sure.data();
    Coordinate const* const up = down + bins + 1;
    Counts sure[Visitor::max_bins + 1];
    for (int e = 0; e <= bins; ++e)
      sure[e] = Counts{};
    int touched_low = bins + 1, touched_high = 0;
    for (int j = 0; j < leaves; ++j) {
      Index const end = leaf[j].end;
      if (end <= position + 1 || out_of_reach(q, leaf[j]))
        continue;
      for (Index at = leaf[j].first > position ? leaf[j].first : position + 1; at < end;
           at += pair_block) {
        int const n = int(end - at < pair_block ? end - at : pair_block);
        Coordinate least, most;
        distances<Wrap, Lanes>(q, wraps, at, n, d2, least, most);
        if (weighted) {
          for (int i = 0; i < n; ++i) {
            int const b = visitor.bin_of(d2[i], q, point(at + i).x);
            if (b >= 0) {
              s.step[b + 1] += 1;
              s.sums[b] += visitor.weight_prefix(at + i + 1) - visitor.weight_prefix(at + i);
            }
          }
          continue;
        }
        int const top = int(std::upper_bound(down, down + bins + 1, most) - down);
        int const bottom = int(std::upper_bound(up, up + top, least) - up);
        s.step[top] += std::uint64_t(n);
        touched_low = bottom < touched_low ? bottom : touched_low;
        touched_high = top > touched_high ? top : touched_high;
        Counts band = {};
        for (int i = 0; i < n; i += Lanes) {
          V v;
          pair_load(v, d2 + i);
          for (int e = bottom; e < top; ++e) {
            Counts const below_down = v < (V{} + down[e]);
            sure[e] -= below_down;
            band |= below_down ^ (v < (V{} + up[e]));
          }
        }
        if (pair_any(band))
          for (int e = bottom; e < top; ++e)
            for (int i = 0; i < n; ++i)
              if (d2[i] >= down[e] && d2[i] < up[e])
                s.below[e] += visitor.geometry.template distance2<W>(q, point(at + i).x) <
                              visitor.edges2(e);
      }
    }
    for (int e = touched_low; e < touched_high; ++e)
      s.below[e] += std::uint64_t(pair_sum(sure[e]));
  }
};

// One group per team of one thread: the walk (PairCountGroups::settle,
// children in slot order so that sibling leaves' points join into
// one range), its accepted nodes and leaf ranges listed in the team's
// scratch and met by every query of the group when a list fills and at the
// end.
template <int W, class Topology, class Visitor>
struct PairHostWalk {
  using memory_space = typename Topology::memory_space;
  using NodeRecord = typename Visitor::node_record_type;
  static constexpr int list_capacity = 512;

  PairHostBlocks<W, Visitor> blocks;
  Kokkos::View<GroupWalkLinks const*, memory_space> links;
  GroupWalkChildren<memory_space> children;
  Kokkos::View<Index const*, memory_space> groups;
  Kokkos::View<Index const*, memory_space> group_end;
  Index stack_capacity;
  int group_size;
  int isa; // 2: AVX-512, 1: AVX2, 0: the build's baseline

  // The team's scratch, carved in this order (each part 64-byte aligned).
  struct Scratch {
    Index* stack;
    NodeRecord* nodes;
    PairHostLeaf<W>* leaves;
    std::uint64_t* counts; // per query: below (bins + 1), step (bins + 2)
    double* sums;          // per query: bins
    Coordinate* d2;        // pair_block
  };
  static std::size_t round(std::size_t bytes) { return (bytes + 63) / 64 * 64; }
  std::size_t counts_stride() const { return std::size_t(2 * blocks.visitor.bins + 3); }
  std::size_t scratch_bytes() const {
    int const bins = blocks.visitor.bins;
    return 64 + round(sizeof(Index) * stack_capacity) + round(sizeof(NodeRecord) * list_capacity) +
           round(sizeof(PairHostLeaf<W>) * list_capacity) +
           round(sizeof(std::uint64_t) * counts_stride() * group_size) +
           round(sizeof(double) * bins * group_size) + round(sizeof(Coordinate) * pair_block);
  }
  template <class Member>
  Scratch scratch_of(Member const& team) const {
    auto* const memory = static_cast<char*>(team.team_scratch(1).get_shmem(scratch_bytes()));
    if (memory == nullptr)
      Kokkos::abort("treetrav: the pair counts' host walk has no scratch");
    char* at = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(memory) + 63) / 64 * 64);
    auto const take = [&](std::size_t bytes) {
      char* const part = at;
      at += round(bytes);
      return part;
    };
    Scratch s;
    s.stack = reinterpret_cast<Index*>(take(sizeof(Index) * stack_capacity));
    s.nodes = reinterpret_cast<NodeRecord*>(take(sizeof(NodeRecord) * list_capacity));
    s.leaves = reinterpret_cast<PairHostLeaf<W>*>(take(sizeof(PairHostLeaf<W>) * list_capacity));
    s.counts = reinterpret_cast<std::uint64_t*>(
        take(sizeof(std::uint64_t) * counts_stride() * group_size));
    s.sums = reinterpret_cast<double*>(take(sizeof(double) * blocks.visitor.bins * group_size));
    s.d2 = reinterpret_cast<Coordinate*>(take(sizeof(Coordinate) * pair_block));
    return s;
  }

  TREETRAV_HOST_INLINE PairHostState state(Scratch const& s, Index query) const {
    int const bins = blocks.visitor.bins;
    std::uint64_t* const counts = s.counts + counts_stride() * std::size_t(query);
    return {counts, counts + bins + 1, s.sums + std::size_t(bins) * std::size_t(query)};
  }

  // The queries [first, last) (tree positions) against the lists.
  template <int Lanes>
  TREETRAV_HOST_INLINE void meet(Scratch const& s, Index first, Index last, int nodes,
                                 int leaves) const {
    auto const& v = blocks.visitor;
    for (Index position = first; position < last; ++position) {
      PairHostState const st = state(s, position - first);
      Coordinate q[W];
      bool wraps[W], wrap = false;
      for (int k = 0; k < W; ++k) {
        q[k] = blocks.columns(position, k);
        wraps[k] = q[k] < v.inner_low[k] || q[k] > v.inner_high[k];
        wrap = wrap || wraps[k];
      }
      for (int j = 0; j < nodes; ++j) {
        NodeRecord const& r = s.nodes[j];
        Index const from = r.first > position ? r.first : position + 1;
        if (from >= r.end)
          continue;
        int const b = v.node_bin(r, q);
        if (b >= 0) {
          st.step[b + 1] += std::uint64_t(r.end - from);
          if (v.weighted())
            st.sums[b] += v.weight_prefix(r.end) - v.weight_prefix(from);
        }
      }
      if (wrap)
        blocks.template pairs<true, Lanes>(q, wraps, position, s.leaves, leaves, s.d2, st);
      else
        blocks.template pairs<false, Lanes>(q, wraps, position, s.leaves, leaves, s.d2, st);
    }
  }

  void meet_on_host(Scratch const& s, Index first, Index last, int nodes, int leaves) const;

  template <class Member>
  void operator()(Member const& team) const {
    auto const& v = blocks.visitor;
    Scratch const s = scratch_of(team);
    Index const first = groups(team.league_rank()), last = group_end(first);
    int const bins = v.bins;
    for (std::size_t i = 0; i < counts_stride() * std::size_t(last - first); ++i)
      s.counts[i] = 0;
    for (std::size_t i = 0; i < std::size_t(bins) * std::size_t(last - first); ++i)
      s.sums[i] = 0;
    auto const group = v.group(first, last);
    int top = 0, nodes = 0, leaves = 0;
    s.stack[top++] = Topology::root();
    while (top > 0) {
      Index const node = s.stack[--top];
      auto const settled = v.settle(node, group);
      if (settled == Visitor::Settled::skip)
        continue;
      if (settled == Visitor::Settled::accept) {
        s.nodes[nodes++] = v.node_record(node);
      } else if (GroupWalkLinks const link = links(node); link.count > 0) {
        for (Index k = link.count; k-- > 0;)
          s.stack[top++] = children(link, k);
      } else {
        PairHostLeaf<W> leaf;
        leaf.first = link.first;
        leaf.end = link.first - link.count;
        v.node_box(node, leaf.lo, leaf.hi);
        if (leaves > 0 && s.leaves[leaves - 1].end == leaf.first) {
          PairHostLeaf<W>& previous = s.leaves[leaves - 1]; // the previous sibling's points
          previous.end = leaf.end;
          for (int k = 0; k < W; ++k) {
            previous.lo[k] = leaf.lo[k] < previous.lo[k] ? leaf.lo[k] : previous.lo[k];
            previous.hi[k] = leaf.hi[k] > previous.hi[k] ? leaf.hi[k] : previous.hi[k];
          }
        } else {
          s.leaves[leaves++] = leaf;
        }
      }
      if (nodes == list_capacity || leaves == list_capacity) {
        meet_on_host(s, first, last, nodes, leaves);
        nodes = leaves = 0;
      }
    }
    meet_on_host(s, first, last, nodes, leaves);
    // Out: a query's bins are the differences of its cumulative counts. Only
    // the rows' sums are read (finish_pair_count), so the counts go out in
    // the row of the query's tree position, a group's rows side by side;
    // the weights' sums in the query's own row, which its weight multiplies.
    for (Index position = first; position < last; ++position) {
      PairHostState const st = state(s, position - first);
      std::uint64_t stepped = st.step[0], below = st.below[0] + stepped;
      for (int b = 0; b < bins; ++b) {
        stepped += st.step[b + 1];
        std::uint64_t const next = st.below[b + 1] + stepped;
        v.counts(position, b) = static_cast<std::uint32_t>(next - below);
        below = next;
      }
      if (v.weighted()) {
        Index const query = v.tree.points.original_index(position);
        for (int b = 0; b < bins; ++b)
          v.sums(query, b) = st.sums[b];
      }
    }
  }
};

#if TREETRAV_PAIR_HOST_ISA
template <class Walk, class Scratch>
TREETRAV_TARGET("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2,popcnt")
void meet_avx512(Walk const& walk, Scratch const& s, Index first, Index last, int nodes,
                 int leaves) {
  walk.template meet<16>(s, first, last, nodes, leaves);
}
template <class Walk, class Scratch>
TREETRAV_TARGET("avx2,fma,bmi,bmi2,popcnt")
void meet_avx2(Walk const& walk, Scratch const& s, Index first, Index last, int nodes,
               int leaves) {
  walk.template meet<8>(s, first, last, nodes, leaves);
}
#endif

template <int W, class Topology, class Visitor>
void PairHostWalk<W, Topology, Visitor>::meet_on_host(Scratch const& s, Index first, Index last,
                                                      int nodes, int leaves) const {
#if TREETRAV_PAIR_HOST_ISA
  if (isa == 2)
    return meet_avx512(*this, s, first, last, nodes, leaves);
  if (isa == 1)
    return meet_avx2(*this, s, first, last, nodes, leaves);
#endif
  meet<4>(s, first, last, nodes, leaves);
}

// The widest vectors this host runs (PairHostWalk::isa).
inline int pair_host_isa() {
#if TREETRAV_PAIR_HOST_ISA
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return 1;
#endif
  return 0;
}

// The autocorrelation's pairs of `visitor` (PairCountGroups) on a host
// backend, with the groups of the GPU's walk; isa: the vectors' width
// (PairHostWalk::isa), at most this host's.
template <int W, class ExecutionSpace, class Tree, class Visitor>
void count_pair_groups_host(ExecutionSpace const& space, Tree const& tree, Visitor const& visitor,
                            GroupWalk const& strategy, int isa) {
  using MemorySpace = typename Tree::memory_space;
  using Topology = std::decay_t<decltype(tree.topology)>;
  if (strategy.group_size < 1)
    throw std::invalid_argument("group walk: group size " + std::to_string(strategy.group_size) +
                                " must be at least 1");
  Index const n = tree.points.size();
  if (n == 0)
    return;
  Kokkos::View<Index const*, MemorySpace> const order = tree.points.original_index;
  auto const tables = prepare_group_walk(space, tree.topology, visitor, order, n,
                                         strategy.group_size, strategy.pack_siblings);
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> columns(
      Kokkos::view_alloc(space, "treetrav::PairCount::columns"), n + pair_lanes, W);
  Kokkos::parallel_for(
      "treetrav::PairCount::columns", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(Index p) {
        for (int k = 0; k < W; ++k)
          columns(p, k) = visitor.row(p)[k];
      });
  PairHostWalk<W, Topology, Visitor> walk{{visitor, columns},
                                          tables.links,
                                          tables.children(),
                                          tables.groups,
                                          tables.group_end,
                                          Index(Topology::arity) * (tables.depth + 1),
                                          strategy.group_size,
                                          std::clamp(isa, 0, pair_host_isa())};
  Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>> policy(
      space, tables.group_count, 1);
  policy.set_scratch_size(1, Kokkos::PerTeam(walk.scratch_bytes()));
  Kokkos::parallel_for("treetrav::count_pairs::host_groups", policy, walk);
}

} // namespace treetrav::detail

#undef TREETRAV_HOST_INLINE
#undef TREETRAV_TARGET
#undef TREETRAV_PAIR_HOST_ISA
