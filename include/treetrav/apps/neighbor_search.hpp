#pragma once

#include <treetrav/apps/detail/compiled.hpp>
#include <treetrav/apps/detail/periodic_images.hpp>
#include <treetrav/apps/detail/search_setup.hpp>
#include <treetrav/core/detail/host_staging.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/traversal/traverse.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav {

namespace detail {

// The k best candidates so far, ordered by (squared distance, index) packed
// into one 64-bit key: the float's bits (distances are >= 0, so their bits
// order like the values) above the index plus one. One integer comparison
// then orders candidates exactly as brute force does, ties broken by index,
// so the final set does not depend on the visiting order.
// The list always holds KMax ascending keys: KMax - k zeros (smaller than any
// candidate) in front, then the k best, so the k-th best is always the last
// entry. Every access is at a compile-time position: up to 32 entries stay in
// registers (larger lists live in local memory).
template <int KMax>
struct KBest {
  static constexpr std::uint64_t empty = ~std::uint64_t(0);
  std::uint64_t entry[KMax]; // ascending: KMax - k zeros, then the k best so far
  Coordinate bound;          // the k-th best's squared distance, infinity until k are in

  KOKKOS_FORCEINLINE_FUNCTION static std::uint64_t pack(Coordinate d2, Index i) {
    return std::uint64_t(float_bits(d2)) << 32 | (static_cast<std::uint32_t>(i) + 1);
  }
  KOKKOS_FORCEINLINE_FUNCTION static Coordinate distance2_of(std::uint64_t key) {
    return bits_float(static_cast<std::uint32_t>(key >> 32));
  }
  KOKKOS_FORCEINLINE_FUNCTION static Index index_of(std::uint64_t key) {
    return static_cast<Index>(static_cast<std::uint32_t>(key) - 1);
  }

  KOKKOS_FORCEINLINE_FUNCTION void clear(int k) {
#pragma unroll
    for (int j = 0; j < KMax; ++j)
      entry[j] = j < KMax - k ? 0 : empty;
    bound = infinity;
  }

  KOKKOS_FORCEINLINE_FUNCTION void insert(std::uint64_t key) {
    if (key >= entry[KMax - 1])
      return;
    if constexpr (KMax <= 32) {
      // Sorted insertion that drops the last entry, branch-free.
#if defined(__CUDA_ARCH__)
      // With after[j] = key < old[j] (true from key's place on), entry j
      // takes old[j - 1] where after[j - 1], key where only after[j], else
      // keeps old[j]: one 64-bit comparison per entry (two 32-bit ones on
      // the GPU) against two in the min/max form below, which the GPU's
      // kNN kernel felt (perf/results/search/README.md).
      bool after[KMax];
#pragma unroll
      for (int j = 0; j < KMax; ++j)
        after[j] = key < entry[j];
#pragma unroll
      for (int j = KMax - 1; j > 0; --j)
        entry[j] = after[j] ? (after[j - 1] ? entry[j - 1] : key) : entry[j];
      entry[0] = after[0] ? key : entry[0];
#else
      // new[j] = min(old[j], max(old[j - 1], key)), from the back: on host
      // cores as fast as the form above or faster (h100-insert/cpu-ab*.txt).
#pragma unroll
      for (int j = KMax - 1; j > 0; --j) {
        std::uint64_t const shifted = entry[j - 1] > key ? entry[j - 1] : key;
        entry[j] = shifted < entry[j] ? shifted : entry[j];
      }
      entry[0] = key < entry[0] ? key : entry[0];
#endif
    } else {
      int position = KMax - 1;
      for (; position > 0 && key < entry[position - 1]; --position)
        entry[position] = entry[position - 1];
      entry[position] = key;
    }
    if (entry[KMax - 1] != empty)
      bound = distance2_of(entry[KMax - 1]);
  }

  // f(j, key) for the k best, nearest first.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each(int k, F const& f) const {
#pragma unroll
    for (int j = 0; j < KMax; ++j)
      if (j >= KMax - k)
        f(j - (KMax - k), entry[j]);
  }
};

} // namespace detail

// k-nearest-neighbour search over any tree that bounds the distance from a
// query to a node's points (BVH: NN, kNN; vp: VP; ball: BT). Guided and keyed:
// the nearer child goes first and each child's bound is kept with it, so a
// node whose bound exceeds the current k-th best is dropped without being read
// again. A node is pruned only when its bound is strictly larger, so results
// equal brute force exactly. The query's row (W coordinates, zero-padded)
// and its k best stay in registers.
template <class Tree, int KMax, int W>
struct NeighborSearchVisitor {
  using memory_space = typename Tree::memory_space;
  struct state_type {
    Coordinate query[W];
    detail::KBest<KMax> best;
  };
  static constexpr bool guided = true;
  static constexpr bool keyed = true;

  Tree tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> queries;
  int k;
  bool exclude_self;
  // Any strides: the search's own results or a caller's arrays (NeighborOutputs).
  Kokkos::View<Index**, Kokkos::LayoutStride, memory_space> indices;
  Kokkos::View<Coordinate**, Kokkos::LayoutStride, memory_space> distances;
  bool squared; // distances are written squared (exactly as compared)
  // Set: each index is the low word of a 64-bit one whose high word is here
  // (written 0 beside it: a caller's int64 array filled by the walk itself).
  Kokkos::View<Index**, Kokkos::LayoutStride, memory_space> index_high_words = {};

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(queries.extent(0)); }
  KOKKOS_FORCEINLINE_FUNCTION void initialize(Index query, state_type& s) const {
    detail::load_query<W>(queries, query, s.query);
    s.best.clear(k);
  }

  KOKKOS_FORCEINLINE_FUNCTION bool prune(Coordinate bound, state_type const& s) const {
    return bound > s.best.bound;
  }

  // Rows of 3-D points are read `batch` at a time, all loads issued before
  // the first distance is used (past the leaf's end, its last row again,
  // ignored); candidates are then offered in point order, each against the
  // bound the previous ones left, exactly as one at a time. One row at a time
  // exposed every load's latency; four beat two and eight (more registers)
  // in the search results. Wider rows keep one (more registers per row).
  static constexpr int batch = row_stride(W) == 4 ? 4 : 1;

  // A candidate at tree position `position`, kept if it beats the k-th best.
  KOKKOS_FORCEINLINE_FUNCTION void offer(Coordinate d2, Index position, Index query,
                                         state_type& s) const {
    if (d2 > s.best.bound)
      return;
    Index const original = tree.points.original_index(position);
    if (exclude_self && original == query)
      return;
    s.best.insert(detail::KBest<KMax>::pack(d2, original));
  }

  KOKKOS_FORCEINLINE_FUNCTION void process_leaf(NodeRef leaf, Index query, state_type& s) const {
    Index const end = leaf.index + leaf.count;
    for (Index first = leaf.index; first < end; first += batch) {
      Coordinate d2[batch];
#pragma unroll
      for (int j = 0; j < batch; ++j)
        d2[j] = tree.points.template distance2<W>(first + j < end ? first + j : end - 1, s.query);
#if defined(__CUDA_ARCH__)
      // The batch's candidates go through one insertion site, in point
      // order: with a site per row, a warp ran each row's insertion for the
      // few lanes that had a candidate there (a fifth of the warp on
      // average under ncu).
      unsigned pending = 0;
#pragma unroll
      for (int j = 0; j < batch; ++j)
        if (first + j < end && !(d2[j] > s.best.bound))
          pending |= 1u << j;
      while (pending != 0) {
        int const j = detail::lowest_set_bit(pending);
        pending &= pending - 1;
        Coordinate candidate = d2[0]; // selects: d2[j] would put d2 in local memory
#pragma unroll
        for (int t = 1; t < batch; ++t)
          if (j == t)
            candidate = d2[t];
        offer(candidate, first + j, query, s);
      }
#else
      // A host core has no lanes to gather: a site per row (the loop over
      // pending rows was slower on 16 host cores, h100-insert/cpu-ab*.txt).
#pragma unroll
      for (int j = 0; j < batch; ++j)
        if (first + j < end)
          offer(d2[j], first + j, query, s);
#endif
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION bool visit(Index node, Index query, state_type& s) const {
    return detail::visit_by_bound<W>(*this, node, query, s);
  }

  KOKKOS_FORCEINLINE_FUNCTION NodeRef root() const {
    return tree.topology.ref(tree.topology.root());
  }
  KOKKOS_FORCEINLINE_FUNCTION void child_keys(NodeRef inner, Index, state_type const& s,
                                              NodeRef (&children)[2], Coordinate (&keys)[2]) const {
    tree.template child_bounds<W>(inner.index, s.query, children, keys);
  }

  KOKKOS_FORCEINLINE_FUNCTION int first_child(Index node, Index query, state_type const& s) const {
    NodeRef children[2];
    Coordinate keys[2];
    child_keys(NodeRef::inner(node), query, s, children, keys);
    return keys[1] < keys[0] ? 1 : 0;
  }

  KOKKOS_FORCEINLINE_FUNCTION void finalize(Index query, state_type const& s) const {
    bool const wide = index_high_words.data() != nullptr;
    s.best.for_each(k, [&](int j, std::uint64_t key) {
      indices(query, j) = detail::KBest<KMax>::index_of(key);
      if (wide)
        index_high_words(query, j) = 0;
      Coordinate const d2 = detail::KBest<KMax>::distance2_of(key);
      distances(query, j) = squared ? d2 : math::sqrt(d2);
    });
  }
};

template <class MemorySpace>
struct NeighborResults {
  Kokkos::View<Index**, Kokkos::LayoutRight, MemorySpace> indices; // (queries, k), caller's rows
  Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace> distances; // (queries, k), ascending
};

namespace detail {
// `found` in new host arrays, through `staging` (host_staging.hpp): what the
// command line's chunks and the distributed searches' answers come back as.
template <class ExecutionSpace, class MemorySpace>
NeighborResults<Kokkos::HostSpace> host_copy(ExecutionSpace const& space,
                                             NeighborResults<MemorySpace> const& found,
                                             HostStaging<typename ExecutionSpace::memory_space>& staging) {
  return {host_copy(space, found.indices, staging), host_copy(space, found.distances, staging)};
}

// A search's own (queries, k) result arrays, uninitialised.
template <class MemorySpace, class ExecutionSpace>
NeighborResults<MemorySpace> allocate_neighbor_results(ExecutionSpace const& space, Index queries,
                                                       int k) {
  auto const alloc = [&](char const* member) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                              std::string("treetrav::NeighborResults::") + member);
  };
  return {Kokkos::View<Index**, Kokkos::LayoutRight, MemorySpace>(alloc("indices"), queries, k),
          Kokkos::View<Coordinate**, Kokkos::LayoutRight, MemorySpace>(alloc("distances"), queries, k)};
}
} // namespace detail

// Where a search writes its (queries, k) results, nearest first: arrays of
// the caller's, in any strides (a row of another framework's array, the low
// words of 64-bit indices...), so that no copy follows the search.
template <class MemorySpace>
struct NeighborOutputs {
  Kokkos::View<Index**, Kokkos::LayoutStride, MemorySpace> indices;
  Kokkos::View<Coordinate**, Kokkos::LayoutStride, MemorySpace> distances;
  // Optional: indices are the low words of 64-bit ones, whose high words
  // (here) the search zeroes as it writes them.
  Kokkos::View<Index**, Kokkos::LayoutStride, MemorySpace> index_high_words;

  NeighborOutputs() = default;
  NeighborOutputs(Kokkos::View<Index**, Kokkos::LayoutStride, MemorySpace> i,
                  Kokkos::View<Coordinate**, Kokkos::LayoutStride, MemorySpace> d,
                  Kokkos::View<Index**, Kokkos::LayoutStride, MemorySpace> high = {})
      : indices(std::move(i)), distances(std::move(d)), index_high_words(std::move(high)) {}
  NeighborOutputs(NeighborResults<MemorySpace> const& results) // NOLINT: a search's own arrays
      : indices(results.indices), distances(results.distances) {}
};

struct NeighborOptions {
  int k = 8;
  bool exclude_self = false;           // queries are the reference set: skip each query itself
  QueryOrder order = QueryOrder::none; // sfc: queries walk in Morton order (sorted inside the call)
  // Squared distances in the results, the values the search ordered by
  // (distributed searches merge partial results by them exactly).
  bool squared_distances = false;
  PeriodicBox box; // periodic: distances to the nearest image (periodic_images.hpp)
};

// The largest k a search supports (its candidate list lives in registers).
inline constexpr int max_neighbors = 128;

// Calls f(std::integral_constant<int, KMax>) with the candidate-list capacity
// for k: a few capacities keep registers small for small k. The fast path
// (the strategy whose fast_path trait says so, under the hardware's
// placement) gets finer steps, k = 10 its own: fewer registers per thread, so
// more warps fit (perf/results/search/README.md); k = 1 (nn) has its own
// there and in brute force, which walks no tree. A capacity changes no
// answer, only registers: the other tree walks (the papers' strategies, and
// placed runs, studies of the SM-centric schedule with their profiles'
// kernels) take the coarse steps, each capacity being several kernels a row
// width for them (perf/results/build/README.md).
// `Strategy` may be placed (placement.hpp): the capacities follow its kernel.
template <class Strategy, class F>
decltype(auto) dispatch_k(int k, F&& f) {
  constexpr bool fine = strategy_t<Strategy>::fast_path && !is_placed_v<Strategy>;
  constexpr bool nearest = fine || !strategy_t<Strategy>::walks_tree;
  if constexpr (nearest)
    if (k == 1)
      return f(std::integral_constant<int, 1>{});
  if constexpr (fine) {
    if (k <= 8)
      return f(std::integral_constant<int, 8>{});
    if (k <= 10)
      return f(std::integral_constant<int, 10>{});
  }
  if (k <= 16)
    return f(std::integral_constant<int, 16>{});
  if constexpr (fine)
    if (k <= 32)
      return f(std::integral_constant<int, 32>{});
  return f(std::integral_constant<int, max_neighbors>{});
}

namespace detail {

// k against the reference points available (without the query itself when
// it is one of them) and the most a search holds (`limit`; a distributed
// search that skips each query asks for one more).
inline void check_k(NeighborOptions const& options, Index reference_size, int limit) {
  Index const available = reference_size - (options.exclude_self ? 1 : 0);
  if (options.k < 1)
    throw InputError("k", " must be >= 1 (got " + std::to_string(options.k) + ")");
  if (options.k > available)
    throw InputError("k", " " + std::to_string(options.k) + " exceeds the " +
                              std::to_string(available) + " reference points available");
  if (options.k > limit)
    throw InputError("k", " must be <= " + std::to_string(limit) + " (got " +
                              std::to_string(options.k) + ")");
}

// What every k-nearest search checks before it runs, whatever its strategy.
template <class MemorySpace>
void check_neighbor_arguments(Index reference_size, int reference_dimension,
                              PointSet<MemorySpace> const& queries,
                              NeighborOptions const& options) {
  check_k(options, reference_size, max_neighbors);
  check_queries(reference_size, reference_dimension, queries, options.exclude_self);
}

} // namespace detail

namespace detail {

// find_neighbors into `out`, its arguments checked (check_neighbor_outputs);
// instantiated here (compiled.hpp).
template <class ExecutionSpace, class Tree, class Strategy>
void find_neighbors_with(ExecutionSpace const& space, Tree const& tree,
                         PointSet<typename Tree::memory_space> const& queries,
                         NeighborOptions const& options, Strategy strategy,
                         Kokkos::View<Index const*, typename Tree::memory_space> order,
                         TraversalMetrics<typename Tree::memory_space> const& metrics,
                         NeighborOutputs<typename Tree::memory_space> const& out) {
  Kokkos::Profiling::pushRegion("treetrav::find_neighbors");
  auto const walk_order = detail::resolve_order(space, queries, options.order, order);
  dispatch_k<Strategy>(options.k, [&](auto k_max) {
    dispatch_width(tree.width(), [&](auto width) {
      NeighborSearchVisitor<Tree, decltype(k_max)::value, decltype(width)::value> visitor{
          tree,          queries.coordinates, options.k,
          options.exclude_self, out.indices,  out.distances,
          options.squared_distances, out.index_high_words};
      traverse(space, tree.topology, visitor, strategy, walk_order, metrics);
    });
  });
  Kokkos::Profiling::popRegion();
}

// The arguments of a search into the caller's outputs: those of every
// search, and outputs of (queries, k).
template <class MemorySpace>
void check_neighbor_outputs(Index reference_size, int reference_dimension,
                            PointSet<MemorySpace> const& queries, NeighborOptions const& options,
                            NeighborOutputs<MemorySpace> const& out) {
  check_neighbor_arguments(reference_size, reference_dimension, queries, options);
  auto const expected = [&](auto const& v) {
    return v.extent(0) == std::size_t(queries.size()) && v.extent(1) == std::size_t(options.k);
  };
  if (!expected(out.indices) || !expected(out.distances))
    throw InputError("outputs", ": indices and distances of (" + std::to_string(queries.size()) +
                                    ", " + std::to_string(options.k) + ") expected (queries, k)");
}

// find_neighbors in a periodic box (periodic_images.hpp): the queries'
// k nearest into `out`, merged with those of the images within reach of the
// k-th. into(queries, options, out) searches in open space into `out`;
// search(points, options) returns NeighborResults.
template <class ExecutionSpace, class MemorySpace, class Into, class Search>
void periodic_neighbors(ExecutionSpace const& space, Index reference_size,
                        PointSet<MemorySpace> const& queries, NeighborOptions const& options,
                        NeighborOutputs<MemorySpace> const& out, Into const& into,
                        Search const& search) {
  NeighborOptions open = options;
  open.box = {};
  open.squared_distances = true;
  into(queries, open, out);
  auto const images = query_images(space, queries, options.box, KthReach<decltype(out.distances)>{out.distances});
  if (images.count > 0) {
    // An image's list may hold its query itself, which is skipped: one more.
    open.exclude_self = false;
    open.k = static_cast<int>(std::min<Index>(options.k + (options.exclude_self ? 1 : 0), reference_size));
    if (open.k > max_neighbors)
      throw InputError("k", " must be <= " + std::to_string(max_neighbors - 1) +
                                " to skip each query in a periodic box (got " +
                                std::to_string(options.k) + ")");
    auto const found = search(images.points, open);
    merge_image_neighbors(space, out.indices, out.distances, found.indices, found.distances, images,
                          options.exclude_self);
  }
  if (!options.squared_distances)
    take_roots(space, out.distances);
}

// find_neighbors of the trees, backends and strategies that treetrav::searches
// compiles (compiled.hpp); its definition is there (src/searches/).
template <class ExecutionSpace, class Tree, int Part>
struct CompiledNeighbors {
  using memory_space = typename Tree::memory_space;
  static void run(ExecutionSpace const& space, Tree const& tree,
                  PointSet<memory_space> const& queries, NeighborOptions const& options,
                  CompiledStrategy const& strategy, Kokkos::View<Index const*, memory_space> order,
                  TraversalMetrics<memory_space> const& metrics,
                  NeighborOutputs<memory_space> const& out);
};

} // namespace detail

// The k nearest reference points of every query, ties broken by index,
// written into the caller's `out` (queries x k).
// `order` (optional) is a query permutation given by the caller; otherwise
// options.order decides (sfc: a Morton sort on the device, counted here).
template <class ExecutionSpace, class Tree, class Strategy>
void find_neighbors(ExecutionSpace const& space, Tree const& tree,
                    PointSet<typename Tree::memory_space> const& queries,
                    NeighborOptions const& options, Strategy strategy,
                    NeighborOutputs<typename Tree::memory_space> const& out,
                    Kokkos::View<Index const*, typename Tree::memory_space> order = {},
                    TraversalMetrics<typename Tree::memory_space> const& metrics = {}) {
  using MemorySpace = typename Tree::memory_space;
  detail::check_neighbor_outputs(tree.points.size(), tree.points.dimension, queries, options, out);
  if (options.box.periodic()) {
    detail::check_periodic_search(space, tree.points.rows, tree.points.original_index,
                                  tree.points.dimension, queries,
                                  options.box);
    detail::periodic_neighbors(
        space, tree.points.size(), queries, options, out,
        [&](auto const& points, NeighborOptions const& open, NeighborOutputs<MemorySpace> const& into) {
          find_neighbors(space, tree, points, open, strategy, into, order, metrics);
        },
        [&](auto const& points, NeighborOptions const& open) {
          return find_neighbors(space, tree, points, open, strategy);
        });
    return;
  }
  if constexpr (detail::compiled_search_v<ExecutionSpace,
                                          detail::neighbor_tree_v<Tree, MemorySpace>, Strategy>)
    detail::CompiledNeighbors<ExecutionSpace, Tree,
                              detail::compiled_part_v<ExecutionSpace, Strategy>>::run(
        space, tree, queries, options, detail::compiled_strategy(strategy), order, metrics, out);
  else
    detail::find_neighbors_with(space, tree, queries, options, strategy, order, metrics, out);
}

// The same into arrays of its own: NeighborResults.
template <class ExecutionSpace, class Tree, class Strategy>
NeighborResults<typename Tree::memory_space>
find_neighbors(ExecutionSpace const& space, Tree const& tree,
               PointSet<typename Tree::memory_space> const& queries, NeighborOptions const& options,
               Strategy strategy,
               Kokkos::View<Index const*, typename Tree::memory_space> order = {},
               TraversalMetrics<typename Tree::memory_space> const& metrics = {}) {
  using MemorySpace = typename Tree::memory_space;
  detail::check_neighbor_arguments(tree.points.size(), tree.points.dimension, queries, options);
  auto const results = detail::allocate_neighbor_results<MemorySpace>(space, queries.size(), options.k);
  find_neighbors(space, tree, queries, options, strategy, NeighborOutputs<MemorySpace>(results),
                 order, metrics);
  return results;
}

} // namespace treetrav
