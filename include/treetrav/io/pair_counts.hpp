#pragma once

#include <treetrav/io/metadata.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace treetrav::io {

// A pair-count results file (treetrav paircount), /PairCounts:
//   Edges (bins + 1)          the bin edges; bin b holds distances in [Edges[b], Edges[b + 1])
//   Counts (bins, uint64)     pairs per bin (autocorrelation: each unordered pair once)
//   WeightedCounts (bins)     with weights: the sums of the pairs' weight products
//   RR, Xi (bins)             in a periodic box: the pairs a uniform box puts in each bin
//                             (of the weights, with weights) and the natural estimator
//                             DD / RR - 1
// and the attributes Bins, Autocorrelation (0/1), Pairs and WeightPairs (the
// pairs the bins draw from, and their weight products' sum), BoxSize (the
// periodic box's sides; absent in open space). /RunMetadata as every writer.
struct PairCountFile {
  std::vector<double> edges;
  std::vector<std::uint64_t> counts;
  std::vector<double> weighted;
  std::vector<double> rr, xi;
  bool autocorrelation = false;
  double pairs = 0, weight_pairs = 0;
  std::vector<double> box;
  Metadata metadata;
};

void write_pair_counts(std::string const& path, PairCountFile const& file);
PairCountFile read_pair_counts(std::string const& path);

// A points file's optional per-point weights, /Points/Weights (float, one per
// point, finite): empty when the file has none.
std::vector<float> read_point_weights(std::string const& path);

} // namespace treetrav::io
