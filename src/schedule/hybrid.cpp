#include <treetrav/schedule/hybrid.hpp>

#include <algorithm>
#include <climits>
#include <numeric>

namespace treetrav {
namespace {

using HostSpace = Kokkos::DefaultHostExecutionSpace;

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
// the radix); runs longer than `cutoff` and not ended are split further.
// O(n) work per step instead of O(n log n) comparisons of whole rows. The
// first steps go level by level, in parallel over segments, until there are
// enough segments to keep every thread busy; then each thread finishes its
// segments depth-first, so the host forks only a few times.
template <class Keys>
std::vector<Index> order_by_key_strings(HostSpace const& space, Index queries, Keys const& keys, int cutoff) {
  std::vector<Index> order(queries), scratch(queries);
  std::iota(order.begin(), order.end(), 0);
  int const radix = keys.radix();
  auto const split = [&](Segment segment, int step, std::vector<Segment>& runs) {
    auto const key = [&](Index q) { return keys(q, step); };
    auto const first = order.begin() + segment.begin, last = order.begin() + segment.end;
    if (segment.end - segment.begin < static_cast<std::size_t>(radix)) {
      std::stable_sort(first, last, [&](Index a, Index b) { return key(a) < key(b); });
    } else {
      std::vector<std::size_t> start(radix + 1, 0);
      for (auto q = first; q != last; ++q) ++start[key(*q) + 1];
      std::partial_sum(start.begin(), start.end(), start.begin());
      for (auto q = first; q != last; ++q) scratch[segment.begin + start[key(*q)]++] = *q;
      std::copy(scratch.begin() + segment.begin, scratch.begin() + segment.end, first);
    }
    for (std::size_t run = segment.begin; run < segment.end;) {
      int const run_key = key(order[run]);
      std::size_t next = run + 1;
      while (next < segment.end && key(order[next]) == run_key) ++next;
      if (run_key != keys.end_key && next - run > static_cast<std::size_t>(cutoff)) runs.push_back({run, next});
      run = next;
    }
  };
  using Policy = Kokkos::RangePolicy<HostSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  // The lambdas below are host-only: they touch std::vectors, never device memory.
  std::vector<Segment> open;
  if (queries > cutoff) open.push_back({0, order.size()});
  int step = 0;
  std::size_t const enough = 8 * static_cast<std::size_t>(space.concurrency());
  for (; !open.empty() && open.size() < enough && step < keys.steps(); ++step) {
    std::vector<std::vector<Segment>> runs(open.size());
    Kokkos::parallel_for("treetrav::hybrid_schedule::split_level", Policy(space, 0, open.size()),
                         [&](std::size_t s) { split(open[s], step, runs[s]); });
    space.fence();
    open.clear();
    for (auto const& r : runs) open.insert(open.end(), r.begin(), r.end());
  }
  if (step < keys.steps())
    Kokkos::parallel_for("treetrav::hybrid_schedule::split_rest", Policy(space, 0, open.size()), [&](std::size_t s) {
      std::vector<std::pair<Segment, int>> pending{{open[s], step}};
      std::vector<Segment> runs;
      while (!pending.empty()) {
        auto const [segment, at] = pending.back();
        pending.pop_back();
        runs.clear();
        split(segment, at, runs);
        // Later runs first onto the stack, so runs finish in order (any order
        // would do: they are disjoint).
        if (at + 1 < keys.steps())
          for (auto run = runs.rbegin(); run != runs.rend(); ++run) pending.push_back({*run, at + 1});
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
};

// Unguided profile rows as key strings: the reached columns from the last
// down, each as columns - 1 - column so that higher columns sort first, then
// `columns` (ended) so that a row that is a prefix of another sorts after it.
struct ReachedColumnKeys {
  int columns;
  std::vector<std::size_t> offsets;  // (queries + 1), into reached_columns
  std::vector<int> reached_columns;  // each row's set columns, descending
  int end_key;

  ReachedColumnKeys(HostSpace const& space, SchedulingMatrix const& matrix)
      : columns(matrix.columns), offsets(matrix.reached.extent(0) + 1, 0), end_key(matrix.columns) {
    auto const& reached = matrix.reached;
    Index const queries = static_cast<Index>(reached.extent(0));
    int const words = static_cast<int>(reached.extent(1));
    using Policy = Kokkos::RangePolicy<HostSpace>;
    Kokkos::parallel_for("treetrav::hybrid_schedule::count_reached", Policy(space, 0, queries), [&](Index q) {
      std::size_t count = 0;
      for (int w = 0; w < words; ++w) count += __builtin_popcount(reached(q, w));
      offsets[q + 1] = count;
    });
    space.fence();
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    reached_columns.resize(offsets.back());
    Kokkos::parallel_for("treetrav::hybrid_schedule::list_reached", Policy(space, 0, queries), [&](Index q) {
      std::size_t next = offsets[q];
      for (int w = words - 1; w >= 0; --w)
        for (std::uint32_t bits = reached(q, w); bits != 0; bits &= ~(std::uint32_t(1) << (31 - __builtin_clz(bits))))
          reached_columns[next++] = 32 * w + 31 - __builtin_clz(bits);
    });
    space.fence();
  }
  int radix() const { return columns + 1; }
  int steps() const { return INT_MAX; }
  int operator()(Index q, int step) const {
    std::size_t const at = offsets[q] + static_cast<std::size_t>(step);
    return at < offsets[q + 1] ? columns - 1 - reached_columns[at] : end_key;
  }
};

}  // namespace

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

std::vector<Index> guided_schedule(HostSpace const& space, SchedulingMatrix const& matrix, int cutoff) {
  Kokkos::Profiling::pushRegion("treetrav::guided_schedule");
  auto order = order_by_key_strings(space, static_cast<Index>(matrix.sequence.extent(0)), SequenceKeys{matrix},
                                    std::max(cutoff, 1));
  Kokkos::Profiling::popRegion();
  return order;
}

}  // namespace treetrav
