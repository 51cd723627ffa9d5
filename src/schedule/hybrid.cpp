#include <treetrav/schedule/hybrid.hpp>

#include <algorithm>
#include <numeric>

namespace treetrav {

std::vector<Index> sandpile_schedule(SchedulingMatrix const& matrix) {
  Index const n = static_cast<Index>(matrix.reached.extent(0));
  std::vector<Index> sandpile(n);
  std::iota(sandpile.begin(), sandpile.end(), 0);
  std::vector<Index> untaken;
  untaken.reserve(n);
  for (int c = 0; c < matrix.columns; ++c) {
    int const word = c / 32;
    std::uint32_t const bit = std::uint32_t(1) << (c % 32);
    // Partition-join (Figure 7): taken in sandpile order, then the rest.
    untaken.clear();
    Index taken = 0;
    for (Index q : sandpile) {
      if (matrix.reached(q, word) & bit)
        sandpile[taken++] = q;
      else
        untaken.push_back(q);
    }
    std::copy(untaken.begin(), untaken.end(), sandpile.begin() + taken);
  }
  return sandpile;
}

namespace {

void bucket_by_step(SchedulingMatrix const& matrix, int cutoff, std::vector<Index> const& queries, int step,
                    std::vector<Index>& out) {
  int const steps = static_cast<int>(matrix.sequence.extent(1));
  if (static_cast<int>(queries.size()) <= cutoff || step >= steps) {
    out.insert(out.end(), queries.begin(), queries.end());
    return;
  }
  // Queries whose traversal ended already go first; the rest by column.
  std::vector<std::vector<Index>> buckets(matrix.columns);
  for (Index q : queries) {
    std::uint16_t const column = matrix.sequence(q, step);
    if (column == 0)
      out.push_back(q);
    else
      buckets[column - 1].push_back(q);
  }
  for (auto const& bucket : buckets)
    if (!bucket.empty()) bucket_by_step(matrix, cutoff, bucket, step + 1, out);
}

}  // namespace

std::vector<Index> guided_schedule(SchedulingMatrix const& matrix, int cutoff) {
  Index const n = static_cast<Index>(matrix.sequence.extent(0));
  std::vector<Index> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::vector<Index> out;
  out.reserve(n);
  bucket_by_step(matrix, std::max(cutoff, 1), all, 0, out);
  return out;
}

}  // namespace treetrav
