#include <treetrav/schedule/hybrid.hpp>

#include <algorithm>
#include <numeric>

namespace treetrav {

std::vector<Index> sandpile_schedule(SchedulingMatrix const& matrix) {
  // Partition-joins for columns 0, 1, ..., C-1 (Figure 7) are the passes of a
  // least-significant-first radix sort: the result is the stable order by the
  // reached bits read from the last column down, taken (1) before untaken (0).
  // Sorted directly, that costs O(n log n) row comparisons instead of C passes.
  Index const n = static_cast<Index>(matrix.reached.extent(0));
  int const words = static_cast<int>(matrix.reached.extent(1));
  std::vector<Index> sandpile(n);
  std::iota(sandpile.begin(), sandpile.end(), 0);
  std::stable_sort(sandpile.begin(), sandpile.end(), [&](Index a, Index b) {
    for (int w = words - 1; w >= 0; --w) {
      std::uint32_t const x = matrix.reached(a, w), y = matrix.reached(b, w);
      if (x == y) continue;
      int const last_differing = 31 - __builtin_clz(x ^ y);
      return (x >> last_differing & 1u) != 0;
    }
    return false;
  });
  return sandpile;
}

namespace {

// Orders queries[begin, end) by their visits from `step` on: a stable sort on
// the step's column (ended sequences, column 0, first), then each run of equal
// columns bigger than `cutoff` by the next step. Sorting a bucket costs
// O(m log m) whatever the number of columns.
void bucket_by_step(SchedulingMatrix const& matrix, int cutoff, std::vector<Index>& queries, std::size_t begin,
                    std::size_t end, int step) {
  int const steps = static_cast<int>(matrix.sequence.extent(1));
  if (end - begin <= static_cast<std::size_t>(cutoff) || step >= steps) return;
  auto column = [&](Index q) { return matrix.sequence(q, step); };
  std::stable_sort(queries.begin() + begin, queries.begin() + end,
                   [&](Index a, Index b) { return column(a) < column(b); });
  for (std::size_t run = begin; run < end;) {
    std::size_t next = run + 1;
    while (next < end && column(queries[next]) == column(queries[run])) ++next;
    if (column(queries[run]) != 0) bucket_by_step(matrix, cutoff, queries, run, next, step + 1);
    run = next;
  }
}

}  // namespace

std::vector<Index> guided_schedule(SchedulingMatrix const& matrix, int cutoff) {
  std::vector<Index> order(matrix.sequence.extent(0));
  std::iota(order.begin(), order.end(), 0);
  bucket_by_step(matrix, std::max(cutoff, 1), order, 0, order.size(), 0);
  return order;
}

}  // namespace treetrav
