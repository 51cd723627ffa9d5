#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/schedule/regtt.hpp>
#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/detail/lockstep_kernels.hpp>
#include <treetrav/kernels/detail/warp.hpp>
#include <treetrav/kernels/metrics.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace treetrav::detail {

// Levels of the top tree a kernel may see: regtt_max_depth() + 1 for binary trees.
inline constexpr int regtt_max_levels = 24;

using RegttWord = std::uint64_t;
template <class MemorySpace>
using RegttKeys = Kokkos::View<RegttWord**, Kokkos::LayoutLeft, MemorySpace>; // (items, words)

// First position of each level 0..depth+1 of the top tree's numbering
// (schedule/regtt.hpp), by value in the kernels.
struct RegttLevels {
  Kokkos::Array<Index, regtt_max_levels + 2> begin;
  int depth = 0;
  KOKKOS_FUNCTION Index frontier() const { return begin[depth]; }
};

// Bit of `position` in its key word: position 0 is the most significant.
KOKKOS_FORCEINLINE_FUNCTION RegttWord regtt_bit(Index position) {
  return RegttWord(1) << (63 - (position & 63));
}

// The bits of word `w` that lie in positions [begin, end).
KOKKOS_INLINE_FUNCTION RegttWord regtt_range(Index w, Index begin, Index end) {
  Index const first = w * 64;
  RegttWord bits = ~RegttWord(0);
  if (begin > first)
    bits &= ~RegttWord(0) >> (begin - first);
  if (end < first + 64)
    bits &= ~(~RegttWord(0) >> (end - first));
  return bits;
}

// Calls f(position) for each set bit of word `w`, in increasing position.
template <class F>
KOKKOS_INLINE_FUNCTION void for_each_bit(RegttWord bits, Index w, F const& f) {
  while (bits != 0) {
    int const lead = leading_zeros(bits);
    bits &= ~(RegttWord(1) << (63 - lead));
    f(w * 64 + lead);
  }
}

// Sets bits of one key row, one write per word touched (positions come in
// increasing order); or-ed in, so that a word shared with the level above
// keeps its bits.
struct RegttBitWriter {
  Index word = -1;
  RegttWord bits = 0;

  template <class Keys>
  KOKKOS_INLINE_FUNCTION void set(Keys const& keys, Index item, Index position) {
    if ((position >> 6) != word) {
      flush(keys, item);
      word = position >> 6;
    }
    bits |= regtt_bit(position);
  }
  template <class Keys>
  KOKKOS_INLINE_FUNCTION void flush(Keys const& keys, Index item) {
    if (bits != 0)
      keys(item, word) |= bits;
    bits = 0;
  }
};

// top_node(position) = the tree node at each position of levels 0..depth
// (-1 for holes), found by walking down from the root along the position's
// slots: at most `depth` child() calls per position, all positions at once.
template <class Topology>
struct RegttTopNodes {
  Topology topology;
  Kokkos::View<Index*, typename Topology::memory_space> top_node;

  KOKKOS_FUNCTION void operator()(Index position) const {
    int slots[regtt_max_levels + 1];
    int level = 0;
    for (Index p = position; p > 0; p = (p - 1) / Topology::arity)
      slots[level++] = (p - 1) % Topology::arity;
    Index node = Topology::root();
    while (level > 0 && node >= 0)
      node = topology.is_leaf(node) ? Index(-1) : topology.child(node, slots[--level]);
    top_node(position) = node;
  }
};

// Tree_BFT (Algorithm 2, lines 11-24): each query visits the top tree level
// by level, in position order, the children of the positions whose bit it set;
// its bit at a position is set when it descended there (visit() wanted the
// children of a non-leaf: V_t[n] && !Truncation(n, q)). Guided visitors also
// record the child they would take first (`preferred`), for the depth-first
// phase. The query state is saved for that phase. Non-lockstep: operator(),
// one query per thread. Lockstep: walk(), the warp visits the union of its
// lanes' positions (any(V[n]), line 22) and lanes without the parent's bit
// idle through the visit.
template <class Topology, class Visitor, bool Measure>
struct RegttBftKernel {
  static_assert(!Visitor::guided || Topology::arity == 2,
                "REGTT records one preferred child: binary trees");
  using memory_space = typename Topology::memory_space;
  using state_type = typename Visitor::state_type;
  static constexpr int arity = Topology::arity;

  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, memory_space> order; // work item -> query (empty: identity)
  Index chunk_begin;
  Index items;
  RegttLevels levels;
  Kokkos::View<Index const*, memory_space> top_node;
  RegttKeys<memory_space> descended;
  RegttKeys<memory_space> preferred; // guided visitors only
  Kokkos::View<state_type*, memory_space> states;
  TraversalMetrics<memory_space> metrics;

  struct Lane {
    Index item;
    Index query;
    bool valid;
    std::int64_t visits;
    RegttWord parents; // this lane's bits of the word being expanded
    RegttBitWriter down, first;
    state_type state;
  };

  KOKKOS_FUNCTION Index query_of(Index item) const { return query_at(order, chunk_begin + item); }

  KOKKOS_FUNCTION void visit_at(Index position, Index node, bool leaf, Lane& s) const {
    if (!visitor.visit(node, s.query, s.state) || leaf)
      return;
    s.down.set(descended, s.item, position);
    if constexpr (Visitor::guided)
      if (visitor.first_child(node, s.query, s.state) == 1)
        s.first.set(preferred, s.item, position);
  }

  KOKKOS_FUNCTION void flush(Lane& s) const {
    s.down.flush(descended, s.item);
    if constexpr (Visitor::guided)
      s.first.flush(preferred, s.item);
  }

  KOKKOS_FUNCTION void operator()(Index item) const {
    Lane s;
    s.item = item;
    s.query = query_of(item);
    visitor.initialize(s.query, s.state);
    auto visit = [&](Index position) {
      Index const node = top_node(position);
      if (node >= 0)
        visit_at(position, node, topology.is_leaf(node), s);
    };
    visit(0);
    flush(s);
    for (int level = 1; level < levels.depth; ++level) {
      Index const begin = levels.begin[level - 1], end = levels.begin[level];
      for (Index w = begin >> 6; w <= (end - 1) >> 6; ++w)
        for_each_bit(descended(item, w) & regtt_range(w, begin, end), w, [&](Index parent) {
          for (int slot = 0; slot < arity; ++slot)
            visit(arity * parent + 1 + slot);
        });
      flush(s);
    }
    states(item) = s.state;
  }

  template <class Warp>
  KOKKOS_FUNCTION void walk(Warp const& warp, Index warp_index) const {
    typename Warp::template PerLane<Lane> lanes;
    warp.for_each_lane(lanes, [&](int lane, Lane& s) {
      s.item = warp_index * warp.size() + lane;
      s.valid = s.item < items;
      s.query = s.valid ? query_of(s.item) : 0;
      s.visits = 0;
      s.down = RegttBitWriter{};
      s.first = RegttBitWriter{};
      if (s.valid)
        visitor.initialize(s.query, s.state);
    });
    std::int64_t steps = 0;
    auto visit = [&](Index position, LaneMask members) {
      Index const node = top_node(position);
      if (node < 0)
        return;
      if constexpr (Measure)
        ++steps;
      bool const leaf = topology.is_leaf(node);
      warp.for_each_lane(lanes, [&](int lane, Lane& s) {
        if (!(members >> lane & 1))
          return;
        if constexpr (Measure)
          ++s.visits;
        visit_at(position, node, leaf, s);
      });
    };
    auto flush_all = [&] {
      warp.for_each_lane(lanes, [&](int, Lane& s) {
        if (s.valid)
          flush(s);
      });
    };
    visit(0, warp.ballot(lanes, [](int, Lane& s) { return s.valid; }));
    flush_all();
    for (int level = 1; level < levels.depth; ++level) {
      Index const begin = levels.begin[level - 1], end = levels.begin[level];
      for (Index w = begin >> 6; w <= (end - 1) >> 6; ++w) {
        RegttWord const any = warp.reduce_or(lanes, [&](int, Lane& s) {
          s.parents = s.valid ? descended(s.item, w) & regtt_range(w, begin, end) : 0;
          return s.parents;
        });
        for_each_bit(any, w, [&](Index parent) {
          LaneMask const members = warp.ballot(
              lanes, [&](int, Lane& s) { return (s.parents & regtt_bit(parent)) != 0; });
          for (int slot = 0; slot < arity; ++slot)
            visit(arity * parent + 1 + slot, members);
        });
      }
      flush_all();
    }
    warp.for_each_lane(lanes, [&](int lane, Lane& s) {
      if (!s.valid)
        return;
      states(s.item) = s.state;
      if constexpr (Measure) {
        metrics.query_visits(s.query) = s.visits;
        if (lane == 0)
          metrics.warp_visits(chunk_begin / warp.size() + warp_index) = steps;
      }
    });
  }
};

// Tree_DFT (Algorithm 2, lines 25-35): each query, in the sorted order,
// continues from its saved state and its frontier: the nodes at depth d under
// its set bits. Row i of the key and state tables belongs to sorted position
// i (RegttGather moved them there, as the paper's sort_by_key moves W), so a
// warp reads its lanes' keys from consecutive rows. The frontier is enumerated depth-first over the
// recorded bits (no node above d is visited again), children in slot order, or guided visitors'
// preferred child first, so each query's frontier comes in the order its own depth-first walk would
// reach it; every frontier node then starts the existing walk below it: autoropes' (non-lockstep;
// for keyed visitors its keyed while-while walk after the frontier node's own visit(), else
// AutoropesKernel::descend), or LockstepKernel::descend with the mask of the warp's lanes that
// reached it (lockstep; guided order by the ballot majority of those lanes).
template <class Topology, class Visitor, bool Lockstep, bool Measure>
struct RegttDftKernel {
  using memory_space = typename Topology::memory_space;
  using state_type = typename Visitor::state_type;
  using Inner = std::conditional_t<Lockstep, LockstepKernel<Topology, Visitor, false, Measure>,
                                   AutoropesKernel<Topology, Visitor>>;
  static constexpr int arity = Topology::arity;
  static constexpr int stack_capacity = regtt_max_levels * (arity - 1) + 1;

  Inner inner; // its order is unused: frontiers carry the query
  Kokkos::View<Index const*, memory_space> order;
  Index chunk_begin;
  Index items;
  RegttLevels levels;
  Kokkos::View<Index const*, memory_space> top_node;
  Kokkos::View<Index const*, memory_space> sorted; // sorted position -> BFT item (empty: unsorted)
  RegttKeys<memory_space> descended;
  RegttKeys<memory_space> preferred;
  Kokkos::View<state_type*, memory_space> states;
  TraversalMetrics<memory_space> metrics;

  struct Lane : LaneState<Visitor> {
    Index row;
  };

  KOKKOS_FUNCTION Index query_of(Index i) const {
    return query_at(order, chunk_begin + (sorted.extent(0) == 0 ? i : sorted(i)));
  }
  KOKKOS_FUNCTION bool bit(RegttKeys<memory_space> const& keys, Index row, Index position) const {
    return (keys(row, position >> 6) & regtt_bit(position)) != 0;
  }

  KOKKOS_FUNCTION void operator()(Index i) const {
    static_assert(!Lockstep, "lockstep runs through walk()");
    Index const query = query_of(i);
    state_type state = states(i);
    Index const frontier = levels.frontier();
    Index stack[stack_capacity];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      Index const position = stack[--top];
      if (position >= frontier) {
        Index const node = top_node(position);
        if (node < 0)
          continue;
        if constexpr (is_keyed_v<Visitor>) {
          // visit() prunes the frontier node on its own bound (or scans it,
          // a leaf), as descend() would; below it, the keyed walk autoropes
          // itself uses.
          if (inner.visitor.visit(node, query, state) && !inner.topology.is_leaf(node))
            inner.walk_keyed(inner.topology.ref(node), query, state);
        } else {
          inner.descend(node, query, state);
        }
        continue;
      }
      if (!bit(descended, i, position))
        continue;
      int const first = Visitor::guided && bit(preferred, i, position) ? 1 : 0;
      for (int rank = arity - 1; rank >= 0; --rank)
        stack[top++] = arity * position + 1 + child_slot(rank, first);
    }
    inner.visitor.finalize(query, state);
  }

  template <class Warp>
  KOKKOS_FUNCTION void walk(Warp const& warp, Index warp_index) const {
    static_assert(Lockstep, "non-lockstep runs through operator()");
    typename Warp::template PerLane<Lane> lanes;
    warp.for_each_lane(lanes, [&](int lane, Lane& s) {
      Index const i = warp_index * warp.size() + lane;
      s.valid = i < items;
      s.row = i;
      s.query = s.valid ? query_of(i) : 0;
      s.visits = 0;
      if (s.valid)
        s.state = states(i);
    });
    Index const frontier = levels.frontier();
    Index stack[stack_capacity];
    LaneMask masks[stack_capacity];
    int top = 0;
    stack[top] = 0;
    masks[top++] = warp.ballot(lanes, [](int, Lane& s) { return s.valid; });
    std::int64_t steps = 0;
    while (top > 0) {
      --top;
      Index const position = stack[top];
      LaneMask const members = masks[top];
      if (position >= frontier) {
        Index const node = top_node(position);
        if (node >= 0)
          inner.descend(warp, lanes, node, members, steps);
        continue;
      }
      LaneMask const down = warp.ballot(lanes, [&](int lane, Lane& s) {
        return (members >> lane & 1) && bit(descended, s.row, position);
      });
      if (down == 0)
        continue;
      int first = 0;
      if constexpr (Visitor::guided) {
        LaneMask const votes = warp.ballot(lanes, [&](int lane, Lane& s) {
          return (down >> lane & 1) && bit(preferred, s.row, position);
        });
        first = 2 * popcount(votes) > popcount(down) ? 1 : 0;
      }
      for (int rank = arity - 1; rank >= 0; --rank) {
        stack[top] = arity * position + 1 + child_slot(rank, first);
        masks[top++] = down;
      }
    }
    warp.for_each_lane(lanes, [&](int lane, Lane& s) {
      if (!s.valid)
        return;
      inner.visitor.finalize(s.query, s.state);
      if constexpr (Measure) {
        metrics.query_visits(s.query) += s.visits;
        if (lane == 0)
          metrics.warp_visits(chunk_begin / warp.size() + warp_index) += steps;
      }
    });
  }
};

// Moves each sorted position's key row and state to row i (from BFT item sorted(i)).
template <class MemorySpace, class State>
struct RegttGather {
  Kokkos::View<Index const*, MemorySpace> sorted;
  RegttKeys<MemorySpace> keys, sorted_keys;
  Kokkos::View<State*, MemorySpace> states, sorted_states;
  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const item = sorted(i);
    for (std::size_t w = 0; w < keys.extent(1); ++w)
      sorted_keys(i, w) = keys(item, w);
    sorted_states(i) = states(item);
  }
};

// Launches a warp kernel (walk(warp, warp_index)) over `items` work items.
template <class ExecutionSpace, class Kernel>
void launch_warps(ExecutionSpace const& space, std::string const& label, Kernel const& kernel,
                  Index items, int warp_size) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    Index const warps = (items + 31) / 32;
    Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, warps * 32),
                         CudaWarpLaunch<Kernel>{kernel});
#endif
  } else {
    Index const warps = (items + warp_size - 1) / warp_size;
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, warps),
        HostWarpLaunch<Kernel>{kernel, warp_size});
  }
}

// Lexicographic order of two key rows (the keys as N^B-bit integers).
struct RegttKeyLess {
  RegttWord const* keys;
  std::size_t stride; // between a row's words
  int words;
  KOKKOS_INLINE_FUNCTION bool operator()(Index a, Index b) const {
    for (int w = 0; w < words; ++w) {
      RegttWord const x = keys[w * stride + a], y = keys[w * stride + b];
      if (x != y)
        return x < y;
    }
    return false;
  }
};

template <class MemorySpace>
struct RegttIota {
  Kokkos::View<Index*, MemorySpace> values;
  KOKKOS_FUNCTION void operator()(Index i) const { values(i) = i; }
};

template <class MemorySpace>
struct RegttGatherWord {
  RegttKeys<MemorySpace> keys;
  Kokkos::View<Index*, MemorySpace> by;
  Kokkos::View<RegttWord*, MemorySpace> out;
  int word;
  KOKKOS_FUNCTION void operator()(Index i) const { out(i) = keys(by(i), word); }
};

// stable_sort_by_key (Algorithm 2, line 9): sorted(i) = the item at sorted
// position i, the first `items` rows of `keys` as `bits`-bit integers, ties in
// item order. CUDA: one stable CUB radix sort per key word from the least
// significant (only the bits in use), for keys of up to 16 words; longer
// keys, a Thrust merge sort comparing rows word by word (an order of
// magnitude slower than the radix passes, so only where they would be many).
// Host spaces: std::stable_sort with the same comparison. Its scratch memory
// grows to the largest request and is kept. It depends on the execution
// space alone: compiled once per backend, in the library
// (src/schedule/regtt.cpp), so no search unit compiles CUB's and Thrust's
// sorts (or parses their headers) again.
template <class ExecutionSpace>
class RegttSorter {
public:
  using memory_space = typename ExecutionSpace::memory_space;
  static constexpr int radix_word_limit = 16;

  void sort(ExecutionSpace const& space, RegttKeys<memory_space> const& keys, Index items,
            std::int64_t bits, Kokkos::View<Index*, memory_space> const& sorted);

private:
  void radix_passes(ExecutionSpace const& space, RegttKeys<memory_space> const& keys, Index items,
                    std::int64_t bits, Kokkos::View<Index*, memory_space> const& sorted);
  void grow(ExecutionSpace const& space, Index items);

  Kokkos::View<RegttWord*, memory_space> key_in_, key_out_;
  Kokkos::View<Index*, memory_space> order_buffer_;
  Kokkos::View<unsigned char*, memory_space> storage_;
};

#ifdef KOKKOS_ENABLE_SERIAL
extern template class RegttSorter<Kokkos::Serial>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
extern template class RegttSorter<Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
extern template class RegttSorter<Kokkos::Cuda>;
#endif

} // namespace treetrav::detail
