#pragma once

#include <cstddef>
#include <memory>
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

// Group walk (Barnes, Bonsai, GOTHIC): the queries are the tree's own points;
// the points of each tree node holding at most `group_size` of them (and whose
// parent holds more) form a group, and one warp walks the tree once for the
// whole group: its lanes test up to a warp of nodes at a time against the
// group (the visitor's group-vs-node test), collect the accepted nodes and the
// points of opened leaves in interaction lists in scratch (shared) memory,
// and evaluate those lists for every query of the group. Host backends run
// the same kernel with a team of one thread emulating `warp_size` lanes.
// group_size <= 2 * warp size (each lane serves up to two queries). With
// `pack_siblings`, consecutive sibling nodes small enough together share one
// group (fuller warps, a box spanning a few neighbouring cells).
// `workspace`, when set, keeps the walk's per-warp stacks between traversals.
struct GroupWalkWorkspace;
struct GroupWalk {
  static constexpr char const* name = "group";
  int group_size = 64;
  int warp_size = 32;
  GroupWalkWorkspace* workspace = nullptr;
  bool pack_siblings = true;
};

// What repeated group walks (an N-body run) reuse: the stacks, allocated by
// the first walk in its memory space and grown when a later one needs more.
struct GroupWalkWorkspace {
  std::shared_ptr<void> stacks; // a Kokkos::View<Index*, memory_space>
  std::size_t size = 0;
  std::string memory_space;
};
// REGTT's two execution modes (Zhang et al. follow autoropes): the BFT and
// DFT phases walk in warp lockstep (Lockstep's masks) or each query alone.
enum class RegttMode { lockstep, nonlockstep };

// Wall-clock breakdown of one REGTT traversal, in seconds (all chunks).
struct RegttTimings {
  int depth = 0;  // the reorder depth used
  int chunks = 0; // query chunks the memory budget allowed (constraint (9))
  double model = 0, bft = 0, sort = 0, dft = 0; // model: the automatic depth's probes
  double total() const { return model + bft + sort + dft; }
};

// REGTT (Zhang et al.): every query walks the tree breadth-first
// down to the reorder depth d, recording one truncation bit per node above d
// (did it descend there); the queries are stably sorted by the integer those
// bits form in breadth-first order, then finish depth-first from their own
// frontiers (the nodes at depth d under their set bits). depth = automatic:
// the paper's profiling + regression model picks d (§III-D2); 0 is plain
// autoropes / lockstep. reorder = false keeps the input order (Table III).
// memory_budget bounds the per-query keys and states (bytes; 0: a quarter of
// the free device memory, 1 GiB on the host); queries run in chunks that fit.
// `warp_size` is the emulated warp on host backends; `timings`, when set,
// receives the breakdown. order_bits (guided visitors; not in the paper):
// the key continues after the truncation bits with the child each query
// chose first at each node, in the same order; a guided search truncates
// nothing above d while no leaf has set its bound, so its truncation bits
// alone say nothing about it.
struct Regtt {
  static constexpr char const* name = "regtt";
  static constexpr int automatic = -1;
  int depth = automatic;
  RegttMode mode = RegttMode::nonlockstep;
  int warp_size = 32;
  bool reorder = true;
  std::size_t memory_budget = 0;
  RegttTimings* timings = nullptr;
  bool order_bits = false;
};

char const* to_string(RegttMode mode);
// Throws InputError naming --regtt-mode when unknown.
RegttMode parse_regtt_mode(std::string const& name);

template <class Strategy>
inline constexpr bool is_lockstep_v =
    std::is_same_v<Strategy, Lockstep> || std::is_same_v<Strategy, FsmLockstep> ||
    std::is_same_v<Strategy, Hybrid>;

// Whether a run under `strategy` walks in warps (and fills warp metrics).
template <class Strategy>
bool walks_in_warps(Strategy const& strategy) {
  if constexpr (std::is_same_v<Strategy, Regtt>)
    return strategy.mode == RegttMode::lockstep;
  else
    return is_lockstep_v<Strategy>;
}

// The strategies the command line offers for nbody (whose restarts rely on
// bit-identical forces across them) and, with REGTT, for the applications.
using HostStrategy = std::variant<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid>;
using ApplicationStrategy =
    std::variant<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid, Regtt>;

// Throw InputError naming the value when unknown.
HostStrategy parse_host_strategy(std::string const& name);
ApplicationStrategy parse_application_strategy(std::string const& name);

// The strategies of applications whose queries are the tree's own points and
// which implement the group interface (N-body potentials and forces) and, with
// REGTT, those of bh-force.
using ForceStrategy = std::variant<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid, GroupWalk>;
using BarnesHutStrategy =
    std::variant<Recursive, Autoropes, Lockstep, FsmLockstep, Hybrid, Regtt, GroupWalk>;

// Throw InputError naming the value when unknown.
ForceStrategy parse_force_strategy(std::string const& name);
BarnesHutStrategy parse_barnes_hut_strategy(std::string const& name);

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
} // namespace detail

// What the search subcommands pc, nn, knn, vp and bt take: the applications'
// tree strategies (REGTT included), brute force, auto.
using SearchStrategy =
    detail::append_alternatives<ApplicationStrategy, BruteForce, Automatic>::type;

// Throws InputError naming the value when unknown.
SearchStrategy parse_search_strategy(std::string const& name);

} // namespace treetrav
