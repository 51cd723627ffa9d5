#pragma once

// Treefix (Leiserson and Maggs): rootfix combines every vertex's weight with
// its ancestors', leaffix with its descendants' (both include the vertex).
// Two methods after Defour and Marin (ICCS 2013): LevelSynchronousTreefix
// (breadth-first, work-efficient, one step per level) and EulerTourTreefix
// (Euler tour + scan, shape-insensitive, twice the work). Both run on any
// Kokkos execution space and any commutative group (operations.hpp).
#include <treetrav/treefix/euler_tour_treefix.hpp>
#include <treetrav/treefix/level_synchronous_treefix.hpp>
#include <treetrav/treefix/operations.hpp>

#include <string>

namespace treetrav {

enum class Treefix { rootfix, leaffix };
// "bfs": LevelSynchronousTreefix, "euler": EulerTourTreefix.
enum class TreefixMethod { bfs, euler };

inline std::string to_string(Treefix treefix) {
  return treefix == Treefix::rootfix ? "rootfix" : "leaffix";
}
inline std::string to_string(TreefixMethod method) {
  return method == TreefixMethod::bfs ? "bfs" : "euler";
}

// Below this many vertices per level on average, the level-synchronous method
// pays more per level than it saves in work: each level costs bfs a launch
// (or a team's pass over a narrow level), and euler beat bfs on every tree of
// the GPU runs but the star's rootfix, where they tie and bfs has no
// cancellation error (perf/results/treefix/).
inline constexpr Index min_average_level_width = Index{1} << 20;

// The method for a treefix of a tree: bfs for the rootfix of very wide,
// shallow trees (as fast, more accurate), euler otherwise.
template <class MemorySpace>
TreefixMethod choose_method(RootedTree<MemorySpace> const& tree, Treefix kind) {
  auto const levels = std::int64_t{tree.height()} + 1;
  return kind == Treefix::rootfix && levels * min_average_level_width <= tree.size()
             ? TreefixMethod::bfs
             : TreefixMethod::euler;
}

// method.rootfix(...) or method.leaffix(...), chosen at run time.
template <class ExecutionSpace, class Method, class Operation, class Weights, class Results>
void treefix(ExecutionSpace const& space, Treefix kind, Method& method, Operation const& op,
             Weights const& weights, Results const& results) {
  if (kind == Treefix::rootfix)
    method.rootfix(space, op, weights, results);
  else
    method.leaffix(space, op, weights, results);
}

} // namespace treetrav
