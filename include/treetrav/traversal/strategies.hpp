#pragma once

#include <cstddef>
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

// What a brute-force search did (BruteForce::statistics).
struct BruteForceStatistics {
  int rounds = 0;              // passes over the references (more when candidate buffers overflowed)
  long long requeued = 0;      // queries searched again with a larger buffer
  long long plan_queries = 0;  // the largest tile: queries x references
  long long plan_references = 0;
  int segments = 0;  // threads per query in the screening
};

// Exhaustive search without a tree (apps/brute_force.hpp, for PC, NN and kNN):
// tiles of the squared-distance matrix from a GEMM screen the candidates, an
// exact re-ranking with distance2 gives the trees' answers bit for bit.
// `tile_bytes`: memory for one tile and the per-query state (0: sized from
// the free memory of the execution space); `segments`: threads per query in
// the screening (0: enough to fill the execution space); `statistics`, when
// set, receives what the search did.
struct BruteForce {
  static constexpr char const* name = "brute";
  std::size_t tile_bytes = 0;
  int segments = 0;
  BruteForceStatistics* statistics = nullptr;
};

// What Automatic picked: a strategy's name, whether the queries go in Morton
// order, the estimates behind the choice, and the probe's wall-clock time.
struct AutomaticChoice {
  std::string strategy;
  bool sorted = false;
  std::string reason;
  double probe_s = 0;
};

// Per job: brute force or a tree strategy and query order, picked by timing
// each on a sample of the queries (the search subcommands' default).
// `choice`, when set, receives the pick.
struct Automatic {
  static constexpr char const* name = "auto";
  AutomaticChoice* choice = nullptr;
};

namespace detail {
template <class Variant, class... Extra>
struct append_alternatives;
template <class... Strategies, class... Extra>
struct append_alternatives<std::variant<Strategies...>, Extra...> {
  using type = std::variant<Strategies..., Extra...>;
};
}  // namespace detail

// What the search subcommands take: every tree strategy, brute force, auto.
using SearchStrategy = detail::append_alternatives<HostStrategy, BruteForce, Automatic>::type;

// Throws InputError naming the value when unknown.
SearchStrategy parse_search_strategy(std::string const& name);

}  // namespace treetrav
