#pragma once

#include <treetrav/core/config.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace treetrav {

// REGTT (Zhang, Di, Zhou, Liao, Xue: "REGTT: Accelerating tree traversals on
// GPUs by exploiting regularities"): the strategy is treetrav::Regtt
// (traversal/strategies/regtt.hpp) and runs through traverse(). Here: its
// modes and timings, the numbering of its top tree and the model that picks
// the reorder depth.

// REGTT's two execution modes (Zhang et al. follow autoropes): the BFT and
// DFT phases walk in warp lockstep (Lockstep's masks) or each query alone.
enum class RegttMode { lockstep, nonlockstep };

char const* to_string(RegttMode mode);
// Throws InputError naming the value when it is no mode.
RegttMode parse_regtt_mode(std::string const& name);

// Wall-clock breakdown of one REGTT traversal, in seconds (all chunks).
struct RegttTimings {
  RegttMode mode = RegttMode::nonlockstep;
  int depth = 0;  // the reorder depth used
  int chunks = 0; // query chunks the memory budget allowed (constraint (9))
  double model = 0, bft = 0, sort = 0, dft = 0; // model: the automatic depth's probes
  double total() const { return model + bft + sort + dft; }
  // Into a results file's metadata: sink.set(name, value) for each.
  template <class Sink>
  void record(Sink& sink) const {
    sink.set("regtt_mode", std::string(to_string(mode)));
    sink.set("regtt_depth", double(depth));
    sink.set("regtt_chunks", double(chunks));
    sink.set("regtt_model_s", model);
    sink.set("regtt_bft_s", bft);
    sink.set("regtt_sort_s", sort);
    sink.set("regtt_dft_s", dft);
  }
};
//
// The top tree of reorder depth d: the nodes above depth d, numbered
// breadth-first as in a complete tree of the tree's arity: position 0 is the
// root, the children of position p are arity * p + 1 + slot whether or not the
// tree has them (an absent node is a hole that never sets a bit). Level j starts
// at (arity^j - 1) / (arity - 1), so the top tree has the paper's
// N^B(d) = (k^d - 1) / (k - 1) positions (eq. 3), and a query's key is the
// N^B(d)-bit integer of its truncation bits in this order, position 0 most
// significant (bit 63 of word 0).

// N^B(d): positions above depth d.
std::int64_t regtt_top_positions(int arity, int depth);

// 64-bit words of a key at depth d.
int regtt_key_words(int arity, int depth);

// The deepest reorder depth accepted: the top tree and its frontier level
// stay under 2^24 positions (binary trees: 23, octrees: 7).
int regtt_max_depth(int arity);

// The deepest depth the automatic model considers: keys of at most 2^14 bits
// (binary trees: 14, octrees: 5), and no more top positions than the tree has
// nodes (deeper, bits would only record absent nodes).
int regtt_model_max_depth(int arity, std::int64_t tree_nodes);

// One probe of the depth model: REGTT at `depth` on a sample of the queries,
// seconds per phase (breadth-first top, sort, depth-first rest).
struct RegttProbe {
  int depth = 0;
  double bft = 0, sort = 0, dft = 0;
  double total() const { return bft + sort + dft; }
};

// §III-D2's time model, fitted to probes by least squares:
//   T(d)   = T^B(d) + T^R(d) + T^D(d)
//   T^B(d) = N^B(d) * M^B(d)        (eq. 6: rho theta M per top node)
//   T^R(d) = phi * N^B(d) + c       (eq. 8, plus the sort's fixed cost)
//   T^D(d) = N^D(d) * M^D(d)        (eq. 7), N^D = N - N^B (eq. 4)
// where each per-node cost M(d) is quadratic in d (eq. 5). With fewer than
// three probes the quadratics drop to what the probes determine. A phase is
// never predicted below zero.
class RegttDepthModel {
public:
  RegttDepthModel(int arity, std::int64_t tree_nodes, std::vector<RegttProbe> const& probes);

  double predict(int depth) const;
  // The depth in [lo, hi] of least predicted time (the shallower on ties).
  int best_depth(int lo, int hi) const;

  // Fitted coefficients: bft/dft per-node cost a d^2 + b d + c; sort phi, c.
  std::vector<double> const& bft_coefficients() const { return bft_; }
  std::vector<double> const& sort_coefficients() const { return sort_; }
  std::vector<double> const& dft_coefficients() const { return dft_; }

private:
  double top_nodes(int depth) const;
  double rest_nodes(int depth) const;

  int arity_;
  std::int64_t tree_nodes_;
  std::vector<double> bft_, sort_, dft_;
};

// The probe depths of the automatic model: up to `count` depths spread evenly
// over [1, max_depth], shallowest first.
std::vector<int> regtt_probe_depths(int max_depth, int count = 5);

} // namespace treetrav
