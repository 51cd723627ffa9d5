#pragma once

#include <treetrav/core/workspace.hpp>

#include <string>

namespace treetrav {

// What Automatic picked: a strategy's name, whether the queries go in Morton
// order, the estimates behind the choice, and the probe's wall-clock time.
struct AutomaticChoice {
  std::string strategy;
  bool sorted = false;
  std::string reason;
  double probe_s = 0;
};

// Per job: brute force or a tree strategy and query order, picked by timing
// each on a sample of the queries (apps/automatic.hpp; the search
// subcommands' default). `choice`, when set, receives the pick.
struct Automatic {
  static constexpr char const* name = "auto";
  static constexpr bool walks_tree = false; // it picks one that may
  static constexpr bool host_only = false;
  static constexpr bool placeable = false; // its pick may be brute force
  static constexpr bool group_walk = false;
  static constexpr bool takes_order = false; // it picks its own
  static constexpr bool tree_order = true;
  static constexpr bool fast_path = false;
  static constexpr bool warp_based = false;
  bool records_metrics() const { return false; }

  AutomaticChoice* choice = nullptr;
  Workspace* workspace = nullptr; // handed to the strategy it picks
};

} // namespace treetrav
