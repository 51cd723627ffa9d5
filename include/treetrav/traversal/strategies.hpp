#pragma once

#include <string>
#include <type_traits>
#include <variant>

namespace treetrav {

// How each query walks the tree. A strategy is a tag; the driver has one
// overload per tag and every visitor runs under every strategy.

// Reference: plain recursion, one query per host thread (host spaces only).
struct Recursive {
  static constexpr char const* name = "recursive";
};

// Autoropes (Goldfarb et al.): the recursion replaced by an explicit stack of
// "ropes" (nodes still to visit); children are pushed in reverse visiting
// order, so pops follow the recursive order exactly.
struct Autoropes {
  static constexpr char const* name = "autoropes";
};

// Lockstep (Goldfarb et al.): a warp walks the tree together, lanes that
// truncate are carried along masked, the mask saved with each stack entry;
// guided traversals take the children in the order most lanes prefer.
// `warp_size` is the emulated warp on host backends (CUDA warps are 32).
struct Lockstep {
  static constexpr char const* name = "lockstep";
  int warp_size = 32;
};

// FSM lockstep (Liu et al. §5): as Lockstep, but the stack holds nodes only;
// each lane keeps a traversing/truncated flag and the stack depth at which it
// truncated, in registers, and rejoins when the stack returns there.
struct FsmLockstep {
  static constexpr char const* name = "fsm";
  int warp_size = 32;
};

// Wall-clock breakdown of one hybrid traversal, in seconds.
struct HybridTimings {
  double profile = 0, transfer = 0, schedule = 0, execute = 0;
  int depth = 0;
  double total() const { return profile + transfer + schedule + execute; }
};

// Hybrid inspector-executor scheduling (Liu et al. §4): profile the top
// `depth` levels of every traversal, schedule the queries on the host from
// that profile, execute with FsmLockstep in the new order. depth 0: automatic.
// `timings`, when set, receives the breakdown.
struct Hybrid {
  static constexpr char const* name = "hybrid";
  int depth = 0;
  int warp_size = 32;
  HybridTimings* timings = nullptr;
};

template <class Strategy>
inline constexpr bool is_lockstep_v =
    std::is_same_v<Strategy, Lockstep> || std::is_same_v<Strategy, FsmLockstep> || std::is_same_v<Strategy, Hybrid>;

using HostStrategy = std::variant<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid>;

// Throws InputError naming the value when unknown.
HostStrategy parse_host_strategy(std::string const& name);

}  // namespace treetrav
