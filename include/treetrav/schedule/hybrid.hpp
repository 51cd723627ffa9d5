#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/core/workspace.hpp>
#include <treetrav/trees/implicit_topology.hpp>
#include <treetrav/trees/radix_topology.hpp>
#include <treetrav/trees/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace treetrav {

// Hybrid CPU-GPU inspector-executor scheduling (Liu, Hegde, Kulkarni, ICS16):
//  1. profile: every query walks only the top tree (nodes down to depth d) on
//     the execution space, recording which top-tree leaves it reaches
//     (unguided: a bit matrix) or in which order (guided: a sequence);
//  2. transfer: only that matrix comes back to the host;
//  3. schedule: a host execution space turns it into a query permutation
//     (sandpile partition-join for unguided, recursive bucketing for guided);
//  4. execute: the FSM lockstep kernel runs the whole traversal in that order.
// The schedule changes which lane serves which query, never what a query
// visits, so results equal every other strategy's (§4.4).

// The profile of n queries over the top tree's leaves ("columns", numbered
// left to right). Unguided: reached(q, word) bit c = query q reached column c.
// Guided: sequence(q, i) = 1 + the i-th column q visited (0: no more), the
// first `sequence.extent(1)` visits.
struct SchedulingMatrix {
  int columns = 0;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, Kokkos::HostSpace> reached;
  Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, Kokkos::HostSpace> sequence;
};

// §4.2.1: for each column in turn, stable-partition the running order (the
// "sandpile") into the queries that reached it and those that did not, and
// join the two; queries that share many columns end up adjacent. Runs on the
// host execution space in O(n) per distinguishing column, not one pass per
// column.
std::vector<Index> sandpile_schedule(Kokkos::DefaultHostExecutionSpace const& space,
                                     SchedulingMatrix const& matrix);

// §4.2.2: bucket queries by the first column they visited, then recursively by
// the next, until a bucket holds at most `cutoff` queries (a warp) or the
// sequences end; queries whose sequence ended go first in their bucket.
std::vector<Index> guided_schedule(Kokkos::DefaultHostExecutionSpace const& space,
                                   SchedulingMatrix const& matrix, int cutoff = 32);

namespace detail {

// Column of each node in the top tree of depth `depth`: nodes at that depth
// and shallower leaves, numbered in pre-order; -1 for every other node.
template <class Topology>
Kokkos::View<Index*, Kokkos::HostSpace> top_tree_columns(Topology const& topology, int depth,
                                                         int& columns) {
  auto const host = host_topology(topology);
  Kokkos::View<Index*, Kokkos::HostSpace> column(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::HybridSchedule::column"),
      host.size());
  Kokkos::deep_copy(column, Index(-1));
  columns = 0;
  // A pre-order walk from the root (node ids need not list parents first: a
  // radix tree's do not), left child first, stopping at the top leaves.
  std::vector<std::pair<Index, int>> stack{{host.root(), 0}};
  while (!stack.empty()) {
    auto const [node, node_depth] = stack.back();
    stack.pop_back();
    if (node_depth == depth || host.is_leaf(node)) {
      column(node) = columns++;
      continue;
    }
    for (int slot = decltype(host)::arity - 1; slot >= 0; --slot) {
      Index const child = host.child(node, slot);
      if (child >= 0)
        stack.emplace_back(child, node_depth + 1);
    }
  }
  return column;
}

// Whether two topologies are the same tree: the same node arrays (addresses
// and sizes), or for an implicit shape the same shape.
template <int Arity, class MemorySpace>
bool same_tree(TreeTopology<Arity, MemorySpace> const& a,
               TreeTopology<Arity, MemorySpace> const& b) {
  return a.parent.data() == b.parent.data() && a.parent.extent(0) == b.parent.extent(0) &&
         a.children.data() == b.children.data();
}
template <class MemorySpace>
bool same_tree(RadixTopology<MemorySpace> const& a, RadixTopology<MemorySpace> const& b) {
  return a.internal.data() == b.internal.data() && a.points == b.points &&
         a.leaf_size == b.leaf_size;
}
template <class MemorySpace>
bool same_tree(ImplicitBinaryTopology<MemorySpace> const& a,
               ImplicitBinaryTopology<MemorySpace> const& b) {
  return a.points == b.points && a.levels == b.levels;
}

// The column maps (top_tree_columns, on the tree's memory space) of the last
// few trees hybrid traversals walked, so that a tree traversed again (a
// benchmark's repeats, one query batch after another) skips copying its
// topology to the host and the map back. It lives in the caller's Workspace.
// An entry is found by same_tree() and the depth, and holds the topology
// (references to its node arrays): while it lives, their memory cannot
// become another tree's.
template <class Topology>
class TopTreeColumnCache {
public:
  using Map = Kokkos::View<Index const*, typename Topology::memory_space>;

  // The map of `topology` at `depth` and its number of columns, computed on a miss.
  template <class ExecutionSpace>
  Map get(ExecutionSpace const& space, Topology const& topology, int depth, int& columns) {
    for (auto entry = entries_.begin(); entry != entries_.end(); ++entry)
      if (same_tree(entry->topology, topology) && entry->depth == depth) {
        std::rotate(entries_.begin(), entry, entry + 1); // most recent first
        columns = entries_.front().columns;
        return entries_.front().column;
      }
    Entry entry{topology, depth, 0, {}};
    entry.column = Kokkos::create_mirror_view_and_copy(
        space, top_tree_columns(topology, depth, entry.columns));
    columns = entry.columns;
    if (entries_.size() == capacity)
      entries_.pop_back();
    entries_.insert(entries_.begin(), entry);
    return entry.column;
  }

private:
  static constexpr std::size_t capacity = 4;
  struct Entry {
    Topology topology;
    int depth;
    int columns;
    Map column;
  };
  std::vector<Entry> entries_;
};

// Wraps an application's visitor to walk only the top tree and record the
// scheduling matrix; the query state it builds is thrown away (§4.3).
template <class Visitor, bool Guided>
struct ProfilingVisitor {
  using memory_space = typename Visitor::memory_space;
  struct state_type {
    typename Visitor::state_type inner;
    int recorded;
  };
  static constexpr bool guided = Visitor::guided;

  Visitor inner;
  Kokkos::View<Index const*, memory_space> column;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, memory_space> reached;
  Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, memory_space> sequence;

  KOKKOS_FUNCTION Index query_count() const { return inner.query_count(); }
  KOKKOS_FUNCTION void initialize(Index query, state_type& s) const {
    inner.initialize(query, s.inner);
    s.recorded = 0;
  }
  KOKKOS_FUNCTION bool visit(Index node, Index query, state_type& s) const {
    // A guided profile ends with its sequence: the rest of the top tree would
    // cost a full top-tree walk (no bound tightens above the data) for visits
    // the scheduler never reads.
    if constexpr (Guided)
      if (s.recorded == static_cast<int>(sequence.extent(1)))
        return false;
    bool const descend = inner.visit(node, query, s.inner);
    Index const c = column(node);
    if (c < 0)
      return descend;
    // A top-tree leaf: the query reached it if it wanted in (or it is a leaf
    // the query has just processed); the profile stops here either way.
    if constexpr (Guided) {
      if (s.recorded < static_cast<int>(sequence.extent(1)))
        sequence(query, s.recorded++) = static_cast<std::uint16_t>(c + 1);
    } else {
      reached(query, c / 32) |= std::uint32_t(1) << (c % 32);
    }
    return false;
  }
  KOKKOS_FUNCTION int first_child(Index node, Index query, state_type const& s) const {
    return inner.first_child(node, query, s.inner);
  }
  KOKKOS_FUNCTION void finalize(Index, state_type const&) const {}
};

// How many top-tree leaves a guided profile records per query: enough to split
// buckets down to a warp; later visits rarely separate queries further.
inline constexpr int guided_profile_length = 16;

// The scheduling matrix where the profile ran (profile_top_tree).
template <class MemorySpace>
struct TopTreeProfile {
  int columns = 0;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, MemorySpace> reached;
  Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, MemorySpace> sequence;

  // Compiled once per memory space, in the library (src/schedule/hybrid.cpp):
  // its copies' kernels were compiled again by every unit that profiles.
  SchedulingMatrix to_host() const;
};
extern template struct TopTreeProfile<Kokkos::HostSpace>;
#if defined(KOKKOS_ENABLE_CUDA)
extern template struct TopTreeProfile<Kokkos::CudaSpace>;
#endif

// Every query of `visitor` walks the top tree of depth `depth` (the hybrid
// schedule's and the affinity placement's profile, §4.3), recording the
// top-tree leaves it reaches (unguided) or its first visits (guided).
template <class ExecutionSpace, class Topology, class Visitor>
TopTreeProfile<typename Topology::memory_space>
profile_top_tree(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                 int depth, ::treetrav::Workspace& workspace) {
  TopTreeProfile<typename Topology::memory_space> profile;
  auto const column = workspace.get<TopTreeColumnCache<Topology>>().get(space, topology, depth,
                                                                        profile.columns);
  if (Visitor::guided && profile.columns >= std::numeric_limits<std::uint16_t>::max())
    throw std::invalid_argument("hybrid: profiling depth " + std::to_string(depth) + " gives " +
                                std::to_string(profile.columns) +
                                " top-tree leaves; a guided profile holds fewer than " +
                                std::to_string(std::numeric_limits<std::uint16_t>::max()));
  Index const queries = visitor.query_count();
  profile.reached = decltype(profile.reached)("treetrav::SchedulingMatrix::reached",
                                              Visitor::guided ? 0 : queries,
                                              (profile.columns + 31) / 32);
  profile.sequence = decltype(profile.sequence)("treetrav::SchedulingMatrix::sequence",
                                                Visitor::guided ? queries : 0,
                                                guided_profile_length);
  using Profiling = ProfilingVisitor<Visitor, Visitor::guided>;
  Kokkos::parallel_for(
      "treetrav::hybrid::profile_walk",
      as_kernel_argument(
          Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, queries)),
      AutoropesKernel<Topology, Profiling>{
          topology, Profiling{visitor, column, profile.reached, profile.sequence}, {}});
  return profile;
}

// Top-tree depth when the caller gives none: one depth for every binary tree,
// as the paper found, and depth 8 came close to the best depth of most
// inputs of the GPU sweeps (perf/README.md); deeper, the bit matrix of
// unguided profiles (2^depth columns) costs more than it saves. Octrees widen
// eight-fold per level: fewer levels.
inline int automatic_profile_depth(int arity) {
  return arity == 2 ? 8 : 3;
}

} // namespace detail
} // namespace treetrav
