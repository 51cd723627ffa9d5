#pragma once

// The splitters of a sample sort over MPI ranks (the Morton partitions of
// points and of N-body bodies): every rank's keys, sorted, sampled at regular
// intervals; the pooled sample cut into P nearly equal parts. A key goes to
// rank upper_bound(splitters, key) - splitters.begin().
#include <treetrav/distributed/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace treetrav::distributed::detail {

template <class Key>
std::vector<Key> splitters_of(Communicator const& comm, std::vector<Key> const& sorted) {
  constexpr int samples = 32; // a rank's
  struct Sample {
    Key key[samples];
    int count;
  } sample{};
  std::size_t const m = sorted.size();
  sample.count = int(std::min<std::size_t>(m, samples));
  for (int j = 0; j < sample.count; ++j)
    sample.key[j] = sorted[std::size_t(j) * m / std::size_t(sample.count)];
  std::vector<Key> pooled;
  for (Sample const& s : all_gather(comm, sample))
    pooled.insert(pooled.end(), s.key, s.key + s.count);
  std::sort(pooled.begin(), pooled.end());
  std::vector<Key> splitters;
  int const p = comm.size();
  for (int r = 1; r < p && !pooled.empty(); ++r)
    splitters.push_back(pooled[std::size_t(r) * pooled.size() / std::size_t(p)]);
  return splitters;
}

} // namespace treetrav::distributed::detail
