#include <treetrav/schedule/hybrid.hpp>

#include <algorithm>
#include <numeric>

namespace treetrav {
namespace {

using HostSpace = Kokkos::DefaultHostExecutionSpace;

// std::stable_sort, without its buffer allocation for the tiny ranges that
// most segments become after the first steps.
template <class Iterator, class Less>
void stable_sort_range(Iterator first, Iterator last, Less const& less) {
  if (last - first > 16)
    return std::stable_sort(first, last, less);
  for (auto q = first; q != last; ++q)
    for (auto at = q; at != first && less(*at, *(at - 1)); --at)
      std::iter_swap(at - 1, at);
}

// A range [begin, end) of the running order whose queries agree on every key
// before the current step and still need ordering.
struct Segment {
  std::size_t begin, end;
};

// Stable most-significant-key-first ordering of queries by key strings:
// keys(q, step) lies in [0, keys.radix()); a query whose key is keys.end_key
// has no more keys. A segment of the running order whose queries agree on all
// earlier keys is split by the step's key into runs, in key order, with one
// stable counting sort (a comparison sort when the segment is small next to
// the radix); runs longer than `cutoff` and not ended are split further, and
// those still tied after the last step go to keys.finish(first, last).
// O(n) work per step instead of O(n log n) comparisons of whole rows. The
// first steps go level by level, in parallel over segments, until there are
// enough segments to keep every thread busy; then each thread finishes its
// segments depth-first, so the host forks only a few times.
template <class Keys>
std::vector<Index> order_by_key_strings(HostSpace const& space, Index queries, Keys const& keys,
                                        int cutoff) {
  std::vector<Index> order(queries), scratch(queries);
  std::iota(order.begin(), order.end(), 0);
  int const radix = keys.radix();
  auto const split = [&](Segment segment, int step, std::vector<Segment>& runs) {
    auto const key = [&](Index q) { return keys(q, step); };
    auto const first = order.begin() + segment.begin, last = order.begin() + segment.end;
    std::size_t const size = segment.end - segment.begin;
    if (size <= 16) {
      stable_sort_range(first, last, [&](Index a, Index b) { return key(a) < key(b); });
    } else if (size < static_cast<std::size_t>(radix)) {
      // Keys looked up once, next to their queries, not once per comparison.
      thread_local std::vector<std::pair<int, Index>> keyed;
      keyed.clear();
      for (auto q = first; q != last; ++q)
        keyed.emplace_back(key(*q), *q);
      std::stable_sort(keyed.begin(), keyed.end(),
                       [](auto const& a, auto const& b) { return a.first < b.first; });
      std::transform(keyed.begin(), keyed.end(), first, [](auto const& k) { return k.second; });
    } else {
      std::vector<std::size_t> start(radix + 1, 0);
      for (auto q = first; q != last; ++q)
        ++start[key(*q) + 1];
      std::partial_sum(start.begin(), start.end(), start.begin());
      for (auto q = first; q != last; ++q)
        scratch[segment.begin + start[key(*q)]++] = *q;
      std::copy(scratch.begin() + segment.begin, scratch.begin() + segment.end, first);
    }
    for (std::size_t run = segment.begin; run < segment.end;) {
      int const run_key = key(order[run]);
      std::size_t next = run + 1;
      while (next < segment.end && key(order[next]) == run_key)
        ++next;
      if (run_key != keys.end_key && next - run > static_cast<std::size_t>(cutoff)) {
        if (step + 1 < keys.steps())
          runs.push_back({run, next});
        else
          keys.finish(order.begin() + run, order.begin() + next);
      }
      run = next;
    }
  };
  using Policy = Kokkos::RangePolicy<HostSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  // The lambdas below are host-only: they touch std::vectors, never device memory.
  std::vector<Segment> open;
  if (queries > cutoff && keys.steps() > 0)
    open.push_back({0, order.size()});
  int step = 0;
  std::size_t const enough = 8 * static_cast<std::size_t>(space.concurrency());
  for (; !open.empty() && open.size() < enough; ++step) {
    std::vector<std::vector<Segment>> runs(open.size());
    Kokkos::parallel_for("treetrav::hybrid_schedule::split_level", Policy(space, 0, open.size()),
                         [&](std::size_t s) { split(open[s], step, runs[s]); });
    space.fence();
    open.clear();
    for (auto const& r : runs)
      open.insert(open.end(), r.begin(), r.end());
  }
  Kokkos::parallel_for("treetrav::hybrid_schedule::split_rest", Policy(space, 0, open.size()),
                       [&](std::size_t s) {
                         std::vector<std::pair<Segment, int>> pending{{open[s], step}};
                         std::vector<Segment> runs;
                         while (!pending.empty()) {
                           auto const [segment, at] = pending.back();
                           pending.pop_back();
                           runs.clear();
                           split(segment, at, runs);
                           // Runs are disjoint: any order of finishing them will do.
                           for (auto const& run : runs)
                             pending.push_back({run, at + 1});
                         }
                       });
  space.fence();
  return order;
}

// Guided profile rows as key strings: 1 + the column of each visit, 0 once
// the sequence ended (so ended queries go first).
struct SequenceKeys {
  SchedulingMatrix const& matrix;
  static constexpr int end_key = 0;
  int radix() const { return matrix.columns + 1; }
  int steps() const { return static_cast<int>(matrix.sequence.extent(1)); }
  int operator()(Index q, int step) const { return matrix.sequence(q, step); }
  // Figure 9 stops at the profile's length: equal sequences keep their order.
  template <class Iterator>
  void finish(Iterator, Iterator) const {}
};

// Unguided profile rows as key strings: the reached columns from the last
// down, each as columns - 1 - column so that higher columns sort first, then
// `columns` (ended) so that a row whose columns are a prefix of another's
// sorts after it. Only the first few keys of a row are kept (rows rarely tie
// on more); rows still tied after them are ordered by comparing whole rows.
struct ReachedColumnKeys {
  static constexpr int kept = 4; // keys per row held for the first steps
  SchedulingMatrix const& matrix;
  int end_key;
  std::vector<int> first_keys; // (queries, kept)

  ReachedColumnKeys(HostSpace const& space, SchedulingMatrix const& matrix_)
      : matrix(matrix_), end_key(matrix_.columns),
        first_keys(matrix_.reached.extent(0) * kept, matrix_.columns) {
    auto const& reached = matrix.reached;
    int const words = static_cast<int>(reached.extent(1)), columns = matrix.columns;
    Kokkos::parallel_for(
        "treetrav::hybrid_schedule::first_reached_columns",
        Kokkos::RangePolicy<HostSpace>(space, 0, reached.extent(0)), [&](std::size_t q) {
          int found = 0;
          for (int w = words - 1; w >= 0 && found < kept; --w)
            for (std::uint32_t bits = reached(q, w); bits != 0 && found < kept; ++found) {
              int const bit = 31 - __builtin_clz(bits);
              first_keys[q * kept + found] = columns - 1 - (32 * w + bit);
              bits &= ~(std::uint32_t(1) << bit);
            }
        });
    space.fence();
  }
  int radix() const { return matrix.columns + 1; }
  int steps() const { return kept; }
  int operator()(Index q, int step) const { return first_keys[std::size_t(q) * kept + step]; }

  // Rows that agree on their first reached columns: the first differing
  // column from the last down decides, the row that reached it first. Whole
  // rows compare 32 columns a step, which beats fetching further keys when,
  // as for neighbouring Barnes-Hut bodies, rows share long runs of columns.
  template <class Iterator>
  void finish(Iterator first, Iterator last) const {
    int const words = static_cast<int>(matrix.reached.extent(1));
    stable_sort_range(first, last, [&](Index a, Index b) {
      for (int w = words - 1; w >= 0; --w) {
        std::uint32_t const x = matrix.reached(a, w), y = matrix.reached(b, w);
        if (x != y)
          return (x >> (31 - __builtin_clz(x ^ y)) & 1u) != 0;
      }
      return false;
    });
  }
};

} // namespace

std::vector<Index> sandpile_schedule(HostSpace const& space, SchedulingMatrix const& matrix) {
  // Partition-joins for columns 0, 1, ..., C-1 (Figure 7) are the passes of a
  // least-significant-first radix sort: the result is the stable order by the
  // reached bits read from the last column down, taken (1) before untaken (0),
  // which is the order of the rows' descending lists of reached columns.
  Kokkos::Profiling::pushRegion("treetrav::sandpile_schedule");
  auto order = order_by_key_strings(space, static_cast<Index>(matrix.reached.extent(0)),
                                    ReachedColumnKeys(space, matrix), 1);
  Kokkos::Profiling::popRegion();
  return order;
}

std::vector<Index> guided_schedule(HostSpace const& space, SchedulingMatrix const& matrix,
                                   int cutoff) {
  Kokkos::Profiling::pushRegion("treetrav::guided_schedule");
  auto order = order_by_key_strings(space, static_cast<Index>(matrix.sequence.extent(0)),
                                    SequenceKeys{matrix}, std::max(cutoff, 1));
  Kokkos::Profiling::popRegion();
  return order;
}

} // namespace treetrav

namespace treetrav::detail {

template <class MemorySpace>
SchedulingMatrix TopTreeProfile<MemorySpace>::to_host() const {
  return {columns, Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, reached),
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sequence)};
}

template struct TopTreeProfile<Kokkos::HostSpace>;
#if defined(KOKKOS_ENABLE_CUDA)
template struct TopTreeProfile<Kokkos::CudaSpace>;
#endif

} // namespace treetrav::detail
