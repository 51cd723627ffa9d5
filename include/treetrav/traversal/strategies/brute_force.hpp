#pragma once

#include <treetrav/core/workspace.hpp>

#include <cstddef>

namespace treetrav {

// What a brute-force search did (BruteForce::statistics).
struct BruteForceStatistics {
  int rounds = 0;             // passes over the references (more when candidate buffers overflowed)
  long long requeued = 0;     // queries searched again with a larger buffer
  long long plan_queries = 0; // the largest tile: queries x references
  long long plan_references = 0;
  int segments = 0; // threads per query in the screening
};

// Exhaustive search without a tree (apps/brute_force.hpp, for PC, NN and kNN):
// tiles of the squared-distance matrix from a GEMM screen the candidates, an
// exact re-ranking with distance2 gives the trees' answers bit for bit.
// `tile_bytes`: memory for one tile and the per-query state (0: sized from
// the free memory of the execution space); `segments`: threads per query in
// the screening (0: enough to fill the execution space); `statistics`, when
// set, receives what the search did. No tree: the searches take the
// reference points where tree strategies take the tree.
struct BruteForce {
  static constexpr char const* name = "brute";
  static constexpr bool walks_tree = false;
  static constexpr bool host_only = false;
  static constexpr bool placeable = false; // GEMM tiles, no walk to place
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = false;
  static constexpr bool tree_order = true; // the trees' answers, bit for bit
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = false;
  bool records_metrics() const { return false; }

  std::size_t tile_bytes = 0;
  int segments = 0;
  BruteForceStatistics* statistics = nullptr;
  Workspace* workspace = nullptr;
};

} // namespace treetrav
