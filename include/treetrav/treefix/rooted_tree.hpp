#pragma once

#include <treetrav/core/config.hpp>
#include <treetrav/core/detail/bits.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/treefix/detail/region.hpp>

#include <string>
#include <utility>

namespace treetrav {

// The parent of the root in a parent array.
inline constexpr Index no_parent = -1;
// The Euler tour of n vertices has 2n positions, all of which an Index must hold.
inline constexpr Index max_tree_vertices = Index{1} << 29;

namespace detail {

struct RootAndHeight {
  Index root;
  Index height;
};

template <class ExecutionSpace, class MemorySpace>
Index read_element(ExecutionSpace const& space, Kokkos::View<Index const*, MemorySpace> const& view,
                   Index i) {
  Index value;
  Kokkos::deep_copy(space, value, Kokkos::subview(view, i));
  space.fence();
  return value;
}

// The kernels of the treefix headers are named functors, not KOKKOS_LAMBDAs:
// nvcc's extended-lambda wrappers of these templates, instantiated from two
// translation units of the CUDA CLI (nbody's octree moments and treefix),
// once crashed it on a null host call.

// The first jump: every vertex's parent (the root stays), at depth 1.
template <class MemorySpace>
struct FirstJump {
  Kokkos::View<Index const*, MemorySpace> parents;
  Kokkos::View<Index*, MemorySpace> ancestor;
  Kokkos::View<Index*, MemorySpace> depth;
  Index root;

  KOKKOS_FUNCTION void operator()(Index v) const {
    bool const is_root = v == root;
    ancestor(v) = is_root ? v : parents(v);
    depth(v) = is_root ? 0 : 1;
  }
};

// Every vertex jumps to its ancestor's ancestor, adding up the depths.
template <class MemorySpace>
struct Jump {
  Kokkos::View<Index*, MemorySpace> ancestor;
  Kokkos::View<Index*, MemorySpace> depth;
  Kokkos::View<Index*, MemorySpace> next_ancestor;
  Kokkos::View<Index*, MemorySpace> next_depth;
  Index n;

  KOKKOS_FUNCTION void operator()(Index v) const {
    Index const a = ancestor(v);
    next_ancestor(v) = ancestor(a);
    // Clamped: on a cycle the count would otherwise double past Index.
    Index const sum = depth(v) + depth(a);
    next_depth(v) = sum < n ? sum : n;
  }
};

// The first vertex whose parent is out of range, and the number, first and
// last of the roots (Min, Sum, Min, Max reductions).
template <class MemorySpace>
struct CheckParents {
  Kokkos::View<Index const*, MemorySpace> parents;
  Index n;

  KOKKOS_FUNCTION void operator()(Index v, Index& out_of_range, Index& root_count, Index& first,
                                  Index& last) const {
    Index const parent = parents(v);
    if (parent < no_parent || parent >= n)
      out_of_range = v < out_of_range ? v : out_of_range;
    if (parent == no_parent) {
      ++root_count;
      first = v < first ? v : first;
      last = v > last ? v : last;
    }
  }
};

// The first vertex that did not reach the root, and the largest depth (Min, Max).
template <class MemorySpace>
struct CheckReachedRoot {
  Kokkos::View<Index const*, MemorySpace> ancestor;
  Kokkos::View<Index const*, MemorySpace> depth;
  Index root;

  KOKKOS_FUNCTION void operator()(Index v, Index& unrooted, Index& deepest) const {
    if (ancestor(v) != root)
      unrooted = v < unrooted ? v : unrooted;
    deepest = depth(v) > deepest ? depth(v) : deepest;
  }
};

template <class MemorySpace>
struct AncestorsAndDepths {
  Kokkos::View<Index const*, MemorySpace> ancestor;
  Kokkos::View<Index const*, MemorySpace> depth;
};

// Pointer jumping from every vertex towards `root`: after 2^r >= 2n jumps
// every vertex of a tree has reached the root (ancestor(v) == root) and
// depth(v) is its depth, while a vertex whose parent links loop sits on the
// loop (its depth clamped to n). O(n log n) work, log n parallel steps.
template <class ExecutionSpace, class MemorySpace>
AncestorsAndDepths<MemorySpace> jump_to_root(ExecutionSpace const& space,
                                             Kokkos::View<Index const*, MemorySpace> const& parents,
                                             Index root) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Index const n = static_cast<Index>(parents.extent(0));
  auto const scratch = [&](std::string const& label) {
    return Kokkos::View<Index*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), n);
  };
  auto ancestor = scratch("treetrav::RootedTree::ancestor");
  auto depth = scratch("treetrav::RootedTree::depth");
  auto next_ancestor = scratch("treetrav::RootedTree::next_ancestor");
  auto next_depth = scratch("treetrav::RootedTree::next_depth");
  Kokkos::parallel_for("treetrav::RootedTree::first_jump", Policy(space, 0, n),
                       FirstJump<MemorySpace>{parents, ancestor, depth, root});
  for (int round = 0, rounds = ceil_log2(n) + 1; round < rounds; ++round) {
    Kokkos::parallel_for("treetrav::RootedTree::jump", Policy(space, 0, n),
                         Jump<MemorySpace>{ancestor, depth, next_ancestor, next_depth, n});
    std::swap(ancestor, next_ancestor);
    std::swap(depth, next_depth);
  }
  return {ancestor, depth};
}

// Finds the root and the height of a parent array, or throws InputError naming
// the first offending vertex. Cycles are found by pointer jumping (jump_to_root).
template <class ExecutionSpace, class MemorySpace>
RootAndHeight validate_parents(ExecutionSpace const& space,
                               Kokkos::View<Index const*, MemorySpace> const& parents) {
  ProfilingRegion const region("treetrav::RootedTree::validate");
  auto const count = parents.extent(0);
  if (count == 0)
    throw InputError("the parent array is empty: a tree has at least one vertex");
  if (count > static_cast<std::size_t>(max_tree_vertices))
    throw InputError("the tree has " + std::to_string(count) + " vertices, more than the " +
                     std::to_string(max_tree_vertices) + " supported");
  Index const n = static_cast<Index>(count);
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;

  Index first_out_of_range = 0, roots = 0, first_root = 0, last_root = 0;
  Kokkos::parallel_reduce("treetrav::RootedTree::check_parents", Policy(space, 0, n),
                          CheckParents<MemorySpace>{parents, n},
                          Kokkos::Min<Index>(first_out_of_range), Kokkos::Sum<Index>(roots),
                          Kokkos::Min<Index>(first_root), Kokkos::Max<Index>(last_root));
  if (first_out_of_range < n)
    throw InputError("vertex " + std::to_string(first_out_of_range) + " has parent " +
                     std::to_string(read_element(space, parents, first_out_of_range)) +
                     ", outside [-1, " + std::to_string(n) + ")");
  if (roots == 0)
    throw InputError("no root: no vertex has parent -1");
  if (roots > 1)
    throw InputError(std::to_string(roots) + " roots: vertices " + std::to_string(first_root) +
                     " and " + std::to_string(last_root) + " both have parent -1, a tree has one");
  Index const root = first_root;

  auto const jumped = jump_to_root(space, parents, root);
  auto const ancestor = jumped.ancestor;
  auto const depth = jumped.depth;
  Index first_unrooted = 0, height = 0;
  Kokkos::parallel_reduce("treetrav::RootedTree::check_reached_root", Policy(space, 0, n),
                          CheckReachedRoot<MemorySpace>{ancestor, depth, root},
                          Kokkos::Min<Index>(first_unrooted), Kokkos::Max<Index>(height));
  if (first_unrooted < n) {
    Index const on_cycle = read_element(space, ancestor, first_unrooted);
    throw InputError("vertex " + std::to_string(on_cycle) +
                     " is on a cycle of parent links, which never reach the root " +
                     std::to_string(root));
  }
  return {root, height};
}

} // namespace detail

template <class MemorySpace>
class RootedTree;

// Deep-copies a tree into the memory space of `space` (no new validation).
template <class ExecutionSpace, class SourceMemorySpace>
RootedTree<typename ExecutionSpace::memory_space>
copy_tree(ExecutionSpace const& space, RootedTree<SourceMemorySpace> const& tree);

// A rooted tree on the vertices 0..n-1 given by a parent array: parents(v) is
// the parent of v, and the root's parent is -1 (no_parent). Constructing one
// validates the array, so every RootedTree is a tree: one root, parents in
// range, no cycles. Children need not have larger indices than their parents.
template <class MemorySpace>
class RootedTree {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "RootedTree's template argument must be a Kokkos memory space");

public:
  using memory_space = MemorySpace;
  using parents_view = Kokkos::View<Index const*, MemorySpace>;

  RootedTree() = default;
  // Throws InputError naming a vertex when `parents` is empty, has a parent
  // outside [-1, n), no root, several roots, or a cycle.
  template <class ExecutionSpace>
  RootedTree(ExecutionSpace const& space, parents_view parents) : parents_(std::move(parents)) {
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                  "the execution space must reach the parent array");
    auto const shape = detail::validate_parents(space, parents_);
    root_ = shape.root;
    height_ = shape.height;
  }

  Index size() const { return static_cast<Index>(parents_.extent(0)); }
  Index root() const { return root_; }
  // Edges on the longest root-to-leaf path: 0 for a single vertex, n - 1 for a path.
  Index height() const { return height_; }
  parents_view const& parents() const { return parents_; }

private:
  template <class ExecutionSpace, class SourceMemorySpace>
  friend RootedTree<typename ExecutionSpace::memory_space>
  copy_tree(ExecutionSpace const&, RootedTree<SourceMemorySpace> const&);
  RootedTree(parents_view parents, Index root, Index height)
      : parents_(std::move(parents)), root_(root), height_(height) {}

  parents_view parents_;
  Index root_ = 0;
  Index height_ = 0;
};

template <class ExecutionSpace, class SourceMemorySpace>
RootedTree<typename ExecutionSpace::memory_space>
copy_tree(ExecutionSpace const& space, RootedTree<SourceMemorySpace> const& tree) {
  Kokkos::View<Index*, typename ExecutionSpace::memory_space> parents(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::RootedTree::parents"),
      tree.size());
  Kokkos::deep_copy(space, parents, tree.parents());
  space.fence();
  return {parents, tree.root(), tree.height()};
}

} // namespace treetrav
