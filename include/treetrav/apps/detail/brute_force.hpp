#pragma once

// Internals of the brute-force searches (apps/brute_force.hpp): tiles of
// -2 q'.r' from Kokkos Kernels' GEMM, a screening pass per (query, segment)
// that keeps every reference the GEMM's rounding could place among the
// answers, and an exact re-ranking with distance2.
#include <treetrav/apps/neighbor_search.hpp>
#include <treetrav/apps/range_count.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/distance.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <string>

namespace treetrav::detail {

// The screening bound (README, "Brute force"). With the points shifted by a
// common vector, q' = fl(q - mu) and r' = fl(r - mu), their float squared
// norms a and b, and a float GEMM's q'.r' in any summation order, the screened
// value fl(fl(a + b) - 2 q'.r') differs from distance2(q, r) by at most
// epsilon (a + b) + floor, the screening's own arithmetic included:
// epsilon = 1.01 (4d + 32) 2^-24 (the derivation gives (4d + 13) 2^-24 to first
// order), floor = (d + 8) FLT_MIN for products that underflow.
struct ScreeningBound {
  Coordinate epsilon;
  Coordinate floor;
  explicit ScreeningBound(int dimension)
      : epsilon(static_cast<Coordinate>(1.01 * (4.0 * dimension + 32.0) * 0x1p-24)),
        floor(static_cast<Coordinate>((dimension + 8) * static_cast<double>(FLT_MIN))) {}
};

// Lower and upper bounds of distance2(q, r) from the screened value. A NaN or
// infinite bound (coordinates near the float range) never excludes a pair:
// callers test !(low > x), and an infinite high never becomes a threshold.
struct Screened {
  Coordinate low, high;
};
KOKKOS_FORCEINLINE_FUNCTION Screened screen(Coordinate query_norm, Coordinate reference_norm,
                                            Coordinate minus_two_dot, ScreeningBound const& bound) {
  Coordinate const norms = query_norm + reference_norm;
  Coordinate const value = norms + minus_two_dot;
  Coordinate const slack = bound.epsilon * norms + bound.floor;
  return {value - slack, value + slack};
}

template <class ExecutionSpace>
struct BruteTypes {
  using memory_space = typename ExecutionSpace::memory_space;
  using device = Kokkos::Device<ExecutionSpace, memory_space>;
  // A tile over preallocated memory, in the exact shape the GEMM takes.
  using tile = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, device,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using points = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space>;
  using vector = Kokkos::View<Coordinate*, memory_space>;
  using rows = Kokkos::View<Index*, memory_space>;
  // Scores (q, r) with q contiguous on the GPU (a warp's threads, one per
  // query, read one coalesced line), r contiguous on the host (one thread
  // streams its query's row).
  static constexpr bool queries_contiguous = is_cuda_space_v<ExecutionSpace>;
};

// The mean of the reference points, in double per coordinate: shifting both
// sets by it keeps the norms, and so the screening bound, small.
template <class Points, class Vector>
struct ColumnMeans {
  Points points;
  Vector means;
  template <class Member>
  KOKKOS_FUNCTION void operator()(Member const& member) const {
    int const k = member.league_rank();
    double sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, points.extent(0)),
        [&](std::size_t i, double& partial) { partial += static_cast<double>(points(i, k)); }, sum);
    Kokkos::single(Kokkos::PerTeam(member), [&] {
      means(k) = static_cast<Coordinate>(sum / static_cast<double>(points.extent(0)));
    });
  }
};

// Rows rows(first + i) of `points` (first + i when rows is empty) minus the
// shift, into a (count x d) tile, with their float squared norms.
template <class Points, class Vector, class Rows, class Tile>
struct ShiftRows {
  Points points;
  Vector shift;
  Rows rows;
  Index first;
  Tile tile;
  Vector norms;
  KOKKOS_FUNCTION void operator()(Index i) const {
    Index const row = rows.extent(0) == 0 ? first + i : rows(first + i);
    Coordinate norm = 0;
    for (int k = 0; k < static_cast<int>(points.extent(1)); ++k) {
      Coordinate const x = points(row, k) - shift(k);
      tile(i, k) = x;
      norm = add_square(norm, x);
    }
    norms(i) = norm;
  }
};

// What a (query, segment) slot of a screening pass shares: the tile's scores
// and norms, which queries and references the tile holds, and how each
// query's references are split into segments (one thread each).
template <class ExecutionSpace>
struct ScreeningTile {
  using Types = BruteTypes<ExecutionSpace>;
  typename Types::tile scores; // -2 q'.r': (queries, references), or transposed on the host
  typename Types::vector query_norms, reference_norms;
  typename Types::rows rows; // the tile's query q is row rows(query_first + q)
  Index query_first;
  Index reference_first; // the tile's reference r is reference_first + r
  Index queries, references;
  int segments;
  bool exclude_self;
  ScreeningBound bound;

  KOKKOS_FORCEINLINE_FUNCTION Coordinate score(Index q, Index r) const {
    if constexpr (Types::queries_contiguous)
      return scores(q, r);
    else
      return scores(r, q);
  }
  // Calls f(r, screened) for the references of `slot`'s segment, skipping the
  // query itself under exclude_self, with loads issued eight at a time so a
  // GPU thread keeps several in flight; stops when f returns false.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION bool scan(Index slot, F&& f) const {
    Index const q = slot % queries;
    auto const segment = static_cast<std::int64_t>(slot / queries);
    auto const begin = static_cast<Index>(references * segment / segments);
    auto const end = static_cast<Index>(references * (segment + 1) / segments);
    Coordinate const query_norm = query_norms(q);
    Index const self = exclude_self ? rows(query_first + q) - reference_first : -1;
    constexpr int batch = 8;
    Index r = begin;
    for (; r + batch <= end; r += batch) {
      Coordinate dots[batch], norms[batch];
      for (int j = 0; j < batch; ++j) {
        dots[j] = score(q, r + j);
        norms[j] = reference_norms(r + j);
      }
      for (int j = 0; j < batch; ++j)
        if (r + j != self && !f(r + j, screen(query_norm, norms[j], dots[j], bound)))
          return false;
    }
    for (; r < end; ++r)
      if (r != self && !f(r, screen(query_norm, reference_norms(r), score(q, r), bound)))
        return false;
    return true;
  }
};

// Inserts `value` into the ascending list list[0..k), dropping the largest.
template <class List>
KOKKOS_FORCEINLINE_FUNCTION void insert_ascending(List& list, int k, Coordinate value) {
  int p = k - 1;
  for (; p > 0 && list[p - 1] > value; --p)
    list[p] = list[p - 1];
  list[p] = value;
}

// kNN screening of one slot across one tile. Per slot, kept between tiles:
// `upper` holds the k smallest upper bounds seen (ascending), so its last is a
// threshold T that at least k references beat; a reference whose lower bound
// exceeds T cannot be among the k nearest and is dropped. The others are
// buffered (lower bound, index); a full buffer is compacted against the
// current T, and a buffer still full marks the slot overflowed (its query is
// searched again with a larger buffer).
template <class ExecutionSpace, int KMax>
struct ScreenNeighbors {
  using memory_space = typename ExecutionSpace::memory_space;
  ScreeningTile<ExecutionSpace> tile;
  int k;
  int capacity;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> upper; // (slots, k)
  Kokkos::View<int*, memory_space> counts; // (slots); capacity + 1: overflowed
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> lows; // (slots, capacity)
  Kokkos::View<Index**, Kokkos::LayoutLeft, memory_space> candidates;

  KOKKOS_FUNCTION void operator()(Index slot) const {
    int count = counts(slot);
    if (count > capacity)
      return;
    Coordinate best[KMax];
    for (int j = 0; j < k; ++j)
      best[j] = upper(slot, j);
    Coordinate threshold = best[k - 1];
    bool const complete = tile.scan(slot, [&](Index r, Screened const& s) {
      if (s.low > threshold)
        return true;
      if (count == capacity) {
        int kept = 0;
        for (int j = 0; j < capacity; ++j)
          if (!(lows(slot, j) > threshold)) {
            lows(slot, kept) = lows(slot, j);
            candidates(slot, kept) = candidates(slot, j);
            ++kept;
          }
        count = kept;
        if (count == capacity)
          return false;
      }
      lows(slot, count) = s.low;
      candidates(slot, count) = tile.reference_first + r;
      ++count;
      if (s.high < threshold) {
        insert_ascending(best, k, s.high);
        threshold = best[k - 1];
      }
      return true;
    });
    for (int j = 0; j < k; ++j)
      upper(slot, j) = best[j];
    counts(slot) = complete ? count : capacity + 1;
  }
};

// Per query of the tile: T = the k-th smallest upper bound over its slots; the
// buffered references whose lower bound does not exceed T hold the k nearest
// (ties by index included), which distance2 ranks exactly. A query with an
// overflowed slot goes to the `requeue` list instead.
template <class ExecutionSpace, int KMax>
struct FinishNeighbors {
  using memory_space = typename ExecutionSpace::memory_space;
  using Points = typename BruteTypes<ExecutionSpace>::points;
  Points reference, queries;
  typename BruteTypes<ExecutionSpace>::rows rows;
  Index query_first, tile_queries;
  int segments, k, capacity;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> upper;
  Kokkos::View<int*, memory_space> counts;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> lows;
  Kokkos::View<Index**, Kokkos::LayoutLeft, memory_space> candidates;
  NeighborResults<memory_space> results;
  typename BruteTypes<ExecutionSpace>::rows requeue;
  Kokkos::View<Index, memory_space> requeued;
  bool squared; // distances written squared (NeighborOptions::squared_distances)

  KOKKOS_FUNCTION void operator()(Index q) const {
    Index const row = rows(query_first + q);
    Coordinate best_upper[KMax];
    for (int j = 0; j < k; ++j)
      best_upper[j] = infinity;
    for (int s = 0; s < segments; ++s) {
      Index const slot = q + s * tile_queries;
      if (counts(slot) > capacity) {
        requeue(Kokkos::atomic_fetch_add(&requeued(), Index(1))) = row;
        return;
      }
      for (int j = 0; j < k && upper(slot, j) < best_upper[k - 1]; ++j)
        insert_ascending(best_upper, k, upper(slot, j));
    }
    Coordinate const threshold = best_upper[k - 1];
    KBest<KMax> best;
    best.clear(k);
    for (int s = 0; s < segments; ++s) {
      Index const slot = q + s * tile_queries;
      for (int j = 0; j < counts(slot); ++j)
        if (!(lows(slot, j) > threshold)) {
          Index const i = candidates(slot, j);
          best.insert(KBest<KMax>::pack(distance2(reference, i, queries, row), i));
        }
    }
    best.for_each(k, [&](int j, std::uint64_t key) {
      results.indices(row, j) = KBest<KMax>::index_of(key);
      Coordinate const d2 = KBest<KMax>::distance2_of(key);
      results.distances(row, j) = squared ? d2 : math::sqrt(d2);
    });
  }
};

// PC screening of one slot across one tile: a pair whose upper bound is
// within the radius counts, one whose lower bound exceeds it does not, and
// distance2 decides the few in between.
template <class ExecutionSpace>
struct ScreenCounts {
  using memory_space = typename ExecutionSpace::memory_space;
  ScreeningTile<ExecutionSpace> tile;
  typename BruteTypes<ExecutionSpace>::points reference, queries;
  Coordinate radius2;
  Kokkos::View<std::int64_t*, memory_space> counts; // (slots)

  KOKKOS_FUNCTION void operator()(Index slot) const {
    Index const row = tile.rows(tile.query_first + slot % tile.queries);
    std::int64_t count = 0;
    tile.scan(slot, [&](Index r, Screened const& s) {
      if (s.high <= radius2)
        ++count;
      else if (!(s.low > radius2))
        count += distance2(reference, tile.reference_first + r, queries, row) <= radius2 ? 1 : 0;
      return true;
    });
    counts(slot) += count;
  }
};

template <class ExecutionSpace>
struct FinishCounts {
  using memory_space = typename ExecutionSpace::memory_space;
  typename BruteTypes<ExecutionSpace>::rows rows;
  Index query_first, tile_queries;
  int segments;
  Kokkos::View<std::int64_t*, memory_space> slot_counts;
  Kokkos::View<std::int64_t*, memory_space> counts;
  KOKKOS_FUNCTION void operator()(Index q) const {
    std::int64_t sum = 0;
    for (int s = 0; s < segments; ++s)
      sum += slot_counts(q + s * tile_queries);
    counts(rows(query_first + q)) = sum;
  }
};

// How a search is cut into tiles: `queries` x `references` scores per GEMM,
// each query's references split over `segments` threads.
struct TilePlan {
  Index queries = 0;
  Index references = 0;
  int segments = 1;
};

// Fits the tiles into `budget` bytes: a quarter at most for the queries'
// shifted tile, norms and per-slot state (`slot_bytes` each), the rest for
// the scores and the references' shifted tile. `segments` per query, or (0)
// enough slots to fill the execution space (`target_slots`) with segments of
// at least 256 references; at most 64.
inline TilePlan plan_tiles(std::size_t budget, Index rows, Index references, int dimension,
                           std::size_t slot_bytes, int segments, std::int64_t target_slots) {
  auto const row_bytes = [&](int segments) {
    return 4 * std::size_t(dimension) + 4 + segments * slot_bytes;
  };
  TilePlan plan;
  auto fit_queries = [&] {
    return static_cast<Index>(
        std::clamp<std::size_t>(budget / 4 / row_bytes(plan.segments), 1, std::size_t(rows)));
  };
  plan.queries = fit_queries();
  std::int64_t const wanted =
      segments > 0 ? segments
                   : std::clamp<std::int64_t>((target_slots + plan.queries - 1) / plan.queries, 1,
                                              std::max<Index>(1, references / 256));
  plan.segments = static_cast<int>(std::min<std::int64_t>(wanted, 64));
  plan.queries = std::min(plan.queries, fit_queries());
  // Query tiles of equal size: no small last tile that passes over all the
  // references with a thin GEMM.
  Index const query_tiles = (rows + plan.queries - 1) / plan.queries;
  plan.queries = (rows + query_tiles - 1) / query_tiles;
  std::size_t const used = std::size_t(plan.queries) * row_bytes(plan.segments);
  std::size_t const left = budget > used ? budget - used : 0;
  plan.references = static_cast<Index>(std::clamp<std::size_t>(
      left / (4 * std::size_t(plan.queries) + 4 * std::size_t(dimension) + 4), 1,
      std::size_t(references)));
  return plan;
}

// Bytes for tiles when the caller did not say: on the GPU up to half its free
// memory, at most 1 GiB; on the host 64 MiB.
template <class ExecutionSpace>
std::size_t default_tile_bytes(ExecutionSpace const& space) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    std::size_t free = 0, total = 0;
    cudaError_t const status = cudaMemGetInfo(&free, &total);
    if (status != cudaSuccess)
      throw std::runtime_error(std::string("treetrav::BruteForce: cudaMemGetInfo failed: ") +
                               cudaGetErrorString(status));
    (void)space;
    return std::min<std::size_t>(free / 2, std::size_t(1) << 30);
#endif
  }
  (void)space;
  return std::size_t(64) << 20;
}

// The state every pass of a search shares: the shift, the tile buffers, and
// the GEMM of one tile.
template <class ExecutionSpace>
struct GemmTiles {
  using Types = BruteTypes<ExecutionSpace>;
  using memory_space = typename Types::memory_space;
  ExecutionSpace space;
  typename Types::points reference, queries;
  typename Types::vector shift;
  TilePlan plan;
  Kokkos::View<Coordinate*, memory_space> query_buffer, reference_buffer, score_buffer;
  typename Types::vector query_norms, reference_norms;

  GemmTiles(ExecutionSpace const& execution_space, typename Types::points const& reference_points,
            typename Types::points const& query_points, typename Types::vector const& mean,
            TilePlan const& tiles)
      : space(execution_space), reference(reference_points), queries(query_points), shift(mean),
        plan(tiles) {
    int const d = static_cast<int>(reference.extent(1));
    auto allocate = [&](std::string const& label, std::size_t n) {
      return Kokkos::View<Coordinate*, memory_space>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), n);
    };
    query_buffer = allocate("treetrav::BruteForce::query_tile", std::size_t(plan.queries) * d);
    reference_buffer =
        allocate("treetrav::BruteForce::reference_tile", std::size_t(plan.references) * d);
    score_buffer =
        allocate("treetrav::BruteForce::scores", std::size_t(plan.queries) * plan.references);
    query_norms = allocate("treetrav::BruteForce::query_norms", plan.queries);
    reference_norms = allocate("treetrav::BruteForce::reference_norms", plan.references);
  }

  typename Types::tile shape(Kokkos::View<Coordinate*, memory_space> const& buffer,
                             Index rows) const {
    return typename Types::tile(buffer.data(), rows, reference.extent(1));
  }

  // Shifts the tile's queries rows(first .. first + count).
  void load_queries(typename Types::rows const& rows, Index first, Index count) const {
    Kokkos::parallel_for("treetrav::BruteForce::shift_queries",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                         ShiftRows<typename Types::points, typename Types::vector,
                                   typename Types::rows, typename Types::tile>{
                             queries, shift, rows, first, shape(query_buffer, count), query_norms});
  }

  // Shifts references first .. first + count and computes the tile's scores
  // -2 q'.r' for the `queries` loaded queries.
  typename Types::tile score(Index first, Index count, Index queries_loaded) const {
    Kokkos::parallel_for(
        "treetrav::BruteForce::shift_references",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
        ShiftRows<typename Types::points, typename Types::vector, typename Types::rows,
                  typename Types::tile>{
            reference, shift, {}, first, shape(reference_buffer, count), reference_norms});
    auto const query_tile = shape(query_buffer, queries_loaded);
    auto const reference_tile = shape(reference_buffer, count);
    // Kokkos Kernels' GEMM runs on the default instance of the space (cuBLAS
    // on its own handle's stream): order it with fences on both sides.
    space.fence();
    Kokkos::Profiling::pushRegion("treetrav::BruteForce::gemm");
    typename Types::tile scores;
    if constexpr (Types::queries_contiguous) {
      scores = typename Types::tile(score_buffer.data(), queries_loaded, count);
      KokkosBlas::gemm("N", "T", Coordinate(-2), query_tile, reference_tile, Coordinate(0), scores);
    } else {
      scores = typename Types::tile(score_buffer.data(), count, queries_loaded);
      KokkosBlas::gemm("N", "T", Coordinate(-2), reference_tile, query_tile, Coordinate(0), scores);
    }
    Kokkos::fence();
    Kokkos::Profiling::popRegion();
    return scores;
  }

  ScreeningTile<ExecutionSpace> screening(typename Types::tile const& scores,
                                          typename Types::rows const& rows, Index query_first,
                                          Index queries_loaded, Index reference_first,
                                          Index references_loaded, bool exclude_self) const {
    return {scores,
            query_norms,
            reference_norms,
            rows,
            query_first,
            reference_first,
            queries_loaded,
            references_loaded,
            plan.segments,
            exclude_self,
            ScreeningBound(static_cast<int>(reference.extent(1)))};
  }
};

template <class ExecutionSpace>
typename BruteTypes<ExecutionSpace>::vector
reference_mean(ExecutionSpace const& space,
               typename BruteTypes<ExecutionSpace>::points const& points) {
  typename BruteTypes<ExecutionSpace>::vector mean(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::shift"),
      points.extent(1));
  Kokkos::parallel_for(
      "treetrav::BruteForce::mean",
      Kokkos::TeamPolicy<ExecutionSpace>(space, static_cast<int>(points.extent(1)), Kokkos::AUTO),
      ColumnMeans<typename BruteTypes<ExecutionSpace>::points,
                  typename BruteTypes<ExecutionSpace>::vector>{points, mean});
  return mean;
}

template <class ExecutionSpace>
typename BruteTypes<ExecutionSpace>::rows all_rows(ExecutionSpace const& space, Index n) {
  typename BruteTypes<ExecutionSpace>::rows rows(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::rows"), n);
  Kokkos::parallel_for("treetrav::BruteForce::rows",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
                       Iota<typename ExecutionSpace::memory_space>{rows});
  return rows;
}

// Slots that fill the execution space: two waves of resident GPU threads,
// four per host thread.
template <class ExecutionSpace>
std::int64_t target_slots(ExecutionSpace const& space) {
  return std::int64_t(space.concurrency()) * (is_cuda_space_v<ExecutionSpace> ? 2 : 4);
}

// The k nearest of every query, in rounds: a query whose candidate buffer
// overflowed (many references tied within the screening bound) is searched
// again with a 16 times larger buffer; a buffer as large as the reference set
// cannot overflow.
template <int KMax, class ExecutionSpace>
void brute_force_neighbors(ExecutionSpace const& space,
                           typename BruteTypes<ExecutionSpace>::points const& reference,
                           typename BruteTypes<ExecutionSpace>::points const& queries,
                           NeighborOptions const& options, BruteForce const& strategy,
                           NeighborResults<typename ExecutionSpace::memory_space> const& results) {
  using Types = BruteTypes<ExecutionSpace>;
  using memory_space = typename Types::memory_space;
  Index const n_reference = static_cast<Index>(reference.extent(0));
  int const k = options.k;
  if (queries.extent(0) == 0)
    return;
  std::size_t const budget =
      strategy.tile_bytes != 0 ? strategy.tile_bytes : default_tile_bytes(space);
  auto const shift = reference_mean(space, reference);
  auto rows = all_rows(space, static_cast<Index>(queries.extent(0)));
  Index row_count = static_cast<Index>(queries.extent(0));
  int capacity = std::min(std::max(32, 4 * k), n_reference);
  while (row_count > 0) {
    std::size_t const slot_bytes = 4 * std::size_t(k) + 4 + 8 * std::size_t(capacity);
    TilePlan const plan =
        plan_tiles(budget, row_count, n_reference, static_cast<int>(reference.extent(1)),
                   slot_bytes, strategy.segments, target_slots(space));
    GemmTiles<ExecutionSpace> tiles(space, reference, queries, shift, plan);
    Index const slots = plan.queries * plan.segments;
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> upper(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::upper"),
        slots, k);
    Kokkos::View<int*, memory_space> counts(
        Kokkos::view_alloc(space, "treetrav::BruteForce::counts"), slots);
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> lows(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::lows"), slots,
        capacity);
    Kokkos::View<Index**, Kokkos::LayoutLeft, memory_space> candidates(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::candidates"),
        slots, capacity);
    typename Types::rows requeue(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BruteForce::requeue"),
        row_count);
    Kokkos::View<Index, memory_space> requeued(
        Kokkos::view_alloc(space, "treetrav::BruteForce::requeued"));
    for (Index q0 = 0; q0 < row_count; q0 += plan.queries) {
      Index const tq = std::min(plan.queries, row_count - q0);
      tiles.load_queries(rows, q0, tq);
      Kokkos::deep_copy(space, upper, infinity);
      Kokkos::deep_copy(space, counts, 0);
      for (Index r0 = 0; r0 < n_reference; r0 += plan.references) {
        Index const tr = std::min(plan.references, n_reference - r0);
        auto const scores = tiles.score(r0, tr, tq);
        Kokkos::parallel_for(
            "treetrav::BruteForce::screen_neighbors",
            Kokkos::RangePolicy<ExecutionSpace>(space, 0, tq * plan.segments),
            ScreenNeighbors<ExecutionSpace, KMax>{
                tiles.screening(scores, rows, q0, tq, r0, tr, options.exclude_self), k, capacity,
                upper, counts, lows, candidates});
      }
      Kokkos::parallel_for(
          "treetrav::BruteForce::rank_neighbors", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tq),
          FinishNeighbors<ExecutionSpace, KMax>{reference, queries, rows, q0, tq, plan.segments, k,
                                                capacity, upper, counts, lows, candidates, results,
                                                requeue, requeued, options.squared_distances});
    }
    Index requeued_count = 0;
    Kokkos::deep_copy(space, requeued_count, requeued);
    space.fence();
    if (strategy.statistics != nullptr) {
      strategy.statistics->rounds += 1;
      strategy.statistics->requeued += requeued_count;
      strategy.statistics->plan_queries =
          std::max<long long>(strategy.statistics->plan_queries, plan.queries);
      strategy.statistics->plan_references =
          std::max<long long>(strategy.statistics->plan_references, plan.references);
      strategy.statistics->segments = std::max(strategy.statistics->segments, plan.segments);
    }
    rows = Kokkos::subview(requeue, std::make_pair(Index(0), requeued_count));
    row_count = requeued_count;
    capacity = static_cast<int>(std::min<std::int64_t>(std::int64_t(capacity) * 16, n_reference));
  }
}

template <class ExecutionSpace>
void brute_force_counts(
    ExecutionSpace const& space, typename BruteTypes<ExecutionSpace>::points const& reference,
    typename BruteTypes<ExecutionSpace>::points const& queries, RangeCountOptions const& options,
    BruteForce const& strategy,
    Kokkos::View<std::int64_t*, typename ExecutionSpace::memory_space> const& counts) {
  using memory_space = typename ExecutionSpace::memory_space;
  Index const n_reference = static_cast<Index>(reference.extent(0));
  Index const n_queries = static_cast<Index>(queries.extent(0));
  if (n_queries == 0 || n_reference == 0) { // no tile to plan: nothing within reach
    Kokkos::deep_copy(space, counts, 0);
    return;
  }
  std::size_t const budget =
      strategy.tile_bytes != 0 ? strategy.tile_bytes : default_tile_bytes(space);
  auto const shift = reference_mean(space, reference);
  auto const rows = all_rows(space, n_queries);
  TilePlan const plan =
      plan_tiles(budget, n_queries, n_reference, static_cast<int>(reference.extent(1)),
                 sizeof(std::int64_t), strategy.segments, target_slots(space));
  GemmTiles<ExecutionSpace> tiles(space, reference, queries, shift, plan);
  Kokkos::View<std::int64_t*, memory_space> slot_counts("treetrav::BruteForce::slot_counts",
                                                        plan.queries * plan.segments);
  Coordinate const radius2 = options.radius * options.radius;
  for (Index q0 = 0; q0 < n_queries; q0 += plan.queries) {
    Index const tq = std::min(plan.queries, n_queries - q0);
    tiles.load_queries(rows, q0, tq);
    Kokkos::deep_copy(space, slot_counts, 0);
    for (Index r0 = 0; r0 < n_reference; r0 += plan.references) {
      Index const tr = std::min(plan.references, n_reference - r0);
      auto const scores = tiles.score(r0, tr, tq);
      Kokkos::parallel_for("treetrav::BruteForce::screen_counts",
                           Kokkos::RangePolicy<ExecutionSpace>(space, 0, tq * plan.segments),
                           ScreenCounts<ExecutionSpace>{
                               tiles.screening(scores, rows, q0, tq, r0, tr, options.exclude_self),
                               reference, queries, radius2, slot_counts});
    }
    Kokkos::parallel_for(
        "treetrav::BruteForce::sum_counts", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tq),
        FinishCounts<ExecutionSpace>{rows, q0, tq, plan.segments, slot_counts, counts});
  }
  if (strategy.statistics != nullptr) {
    strategy.statistics->rounds += 1;
    strategy.statistics->plan_queries = plan.queries;
    strategy.statistics->plan_references = plan.references;
    strategy.statistics->segments = plan.segments;
  }
}

} // namespace treetrav::detail
