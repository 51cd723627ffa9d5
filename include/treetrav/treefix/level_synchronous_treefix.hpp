#pragma once

#include <treetrav/treefix/children.hpp>
#include <treetrav/treefix/detail/results.hpp>

#include <limits>
#include <vector>

namespace treetrav {

namespace detail {

// Rootfix's work on a tree edge discovered by the traversal.
template <class Operation, class Weights, class Accumulators>
struct CombineWithParent {
  Operation op;
  Weights weights;
  Accumulators accumulators;
  KOKKOS_FUNCTION void operator()(Index parent, Index child) const {
    accumulators(child) = op.combine(accumulators(parent), op.lift(weights(child)));
  }
};

struct IgnoreEdge {
  KOKKOS_FUNCTION void operator()(Index, Index) const {}
};

// One level of the breadth-first traversal: the frontier queue(begin..end-1)
// expands into its children, appended at queue(end..) in frontier order, and
// visit(parent, child) runs on every new edge. Load-balanced as in Merrill et
// al.: an exclusive scan of the frontier's child counts gives each frontier
// vertex its range of output slots, then one work item per child finds its
// parent by binary search in the scan. Returns the number of children.
template <class ExecutionSpace, class MemorySpace, class Visit>
Index expand_level(ExecutionSpace const& space, ChildrenCsr<MemorySpace> const& csr,
                   Kokkos::View<Index*, MemorySpace> const& queue,
                   Kokkos::View<Index*, MemorySpace> const& first_slot, Index begin, Index end,
                   Visit const& visit) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  auto const& offsets = csr.offsets;
  auto const& children = csr.children;
  Index const width = end - begin;
  Index next_width = 0;
  Kokkos::parallel_scan(
      "treetrav::LevelSynchronousTreefix::scan_frontier", Policy(space, 0, width),
      KOKKOS_LAMBDA(Index i, Index & before, bool final) {
        Index const v = queue(begin + i);
        if (final)
          first_slot(i) = before;
        before += offsets(v + 1) - offsets(v);
      },
      next_width);
  Kokkos::parallel_for(
      "treetrav::LevelSynchronousTreefix::expand", Policy(space, 0, next_width),
      KOKKOS_LAMBDA(Index slot) {
        // The last frontier vertex whose first slot is <= slot owns it.
        Index low = 0, high = width;
        while (high - low > 1) {
          Index const middle = low + (high - low) / 2;
          if (first_slot(middle) <= slot)
            low = middle;
          else
            high = middle;
        }
        Index const parent = queue(begin + low);
        Index const child = children(offsets(parent) + slot - first_slot(low));
        queue(end + slot) = child;
        visit(parent, child);
      });
  return next_width;
}

// Leaffix's bottom-up step for one level queue(begin..end-1): adds every
// segment of siblings into their parent. Siblings are contiguous in the queue,
// so this is a segmented scan; the segment's last element holds the total and
// writes it. Race-free: each parent has one segment. A segmented scan does not
// commute, and Kokkos' Cuda scan joins ranges in either order (its block scan
// calls join(later, earlier)): so each partial result carries where its range
// begins, and merge puts two ranges back in order.
template <class Operation, class Accumulators, class MemorySpace>
struct AddLevelToParents {
  using accumulator_type = typename Operation::accumulator_type;
  static constexpr Index empty_range = std::numeric_limits<Index>::max();
  struct value_type {
    Index first;          // the range's first position, empty_range for the identity
    int starts_segment;   // whether a segment starts inside the range
    accumulator_type sum; // from the range's last segment start (or its first element) on
  };

  Operation op;
  Kokkos::View<Index*, MemorySpace> queue;
  Kokkos::View<Index const*, MemorySpace> parents;
  Accumulators accumulators;
  Index begin;
  Index end;

  // Two adjacent ranges, in either order.
  KOKKOS_FUNCTION value_type merge(value_type const& a, value_type const& b) const {
    if (a.first == empty_range)
      return b;
    if (b.first == empty_range)
      return a;
    value_type const& left = a.first < b.first ? a : b;
    value_type const& right = a.first < b.first ? b : a;
    if (right.starts_segment)
      return {left.first, 1, right.sum};
    return {left.first, left.starts_segment, op.combine(left.sum, right.sum)};
  }
  KOKKOS_FUNCTION void init(value_type& value) const { value = {empty_range, 0, op.identity()}; }
  // Kokkos 3 passes volatile references; nothing else touches them meanwhile.
  KOKKOS_FUNCTION void join(volatile value_type& update, volatile value_type const& input) const {
    auto& sum = const_cast<value_type&>(update);
    sum = merge(sum, const_cast<value_type const&>(input));
  }
  KOKKOS_FUNCTION void operator()(Index i, value_type& update, bool final) const {
    Index const position = begin + i;
    Index const v = queue(position);
    Index const parent = parents(v);
    bool const first_sibling = position == begin || parents(queue(position - 1)) != parent;
    update = merge(update, {position, first_sibling ? 1 : 0, accumulators(v)});
    bool const last_sibling = position + 1 == end || parents(queue(position + 1)) != parent;
    if (final && last_sibling)
      accumulators(parent) = op.combine(accumulators(parent), update.sum);
  }
};

} // namespace detail

// The level-synchronous (breadth-first) treefix of the paper's Algorithm 1:
// work-efficient (each vertex is touched once per pass) but one synchronised
// step per tree level, so its time grows with the height: ideal on a star,
// sequential on a caterpillar. Every call re-traverses the tree from the CSR,
// as the paper's method does; construction only builds the CSR. Calls on one
// object must not overlap (they share the frontier queue).
template <class MemorySpace>
class LevelSynchronousTreefix {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "LevelSynchronousTreefix's template argument must be a Kokkos memory space");

public:
  using memory_space = MemorySpace;

  template <class ExecutionSpace>
  LevelSynchronousTreefix(ExecutionSpace const& space, RootedTree<MemorySpace> tree)
      : tree_(std::move(tree)), children_(children_csr(space, tree_)),
        queue_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                  "treetrav::LevelSynchronousTreefix::queue"),
               tree_.size()),
        first_slot_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       "treetrav::LevelSynchronousTreefix::first_slot"),
                    tree_.size()),
        workspace_("treetrav::LevelSynchronousTreefix::accumulators") {}

  // results(v) = weights of v's ancestors and v combined, level by level from the root.
  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void rootfix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("LevelSynchronousTreefix::rootfix",
                                                               tree_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::LevelSynchronousTreefix::rootfix");
    using Accumulators = detail::AccumulatorView<Operation, MemorySpace>;
    Accumulators const accumulators =
        detail::accumulators_for<Operation>(space, workspace_, results);
    Index const root = tree_.root();
    Kokkos::deep_copy(space, Kokkos::subview(queue_, 0), root);
    Kokkos::parallel_for(
        "treetrav::LevelSynchronousTreefix::start",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
        KOKKOS_LAMBDA(Index) { accumulators(root) = op.lift(weights(root)); });
    detail::CombineWithParent<Operation, Weights, Accumulators> const visit{op, weights,
                                                                            accumulators};
    for (Index level = 0, begin = 0, end = 1; level < tree_.height(); ++level) {
      Index const width =
          detail::expand_level(space, children_, queue_, first_slot_, begin, end, visit);
      begin = end;
      end += width;
    }
    detail::lower_into_results(space, "treetrav::LevelSynchronousTreefix::lower", op, accumulators,
                               results);
  }

  // results(v) = weights of v's subtree combined: a traversal down records the
  // levels, then each level from the deepest adds itself into its parents.
  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void leaffix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("LevelSynchronousTreefix::leaffix",
                                                               tree_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::LevelSynchronousTreefix::leaffix");
    using Accumulators = detail::AccumulatorView<Operation, MemorySpace>;
    Accumulators const accumulators =
        detail::accumulators_for<Operation>(space, workspace_, results);
    Kokkos::deep_copy(space, Kokkos::subview(queue_, 0), tree_.root());
    Kokkos::parallel_for(
        "treetrav::LevelSynchronousTreefix::lift",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree_.size()),
        KOKKOS_LAMBDA(Index v) { accumulators(v) = op.lift(weights(v)); });
    std::vector<Index> level_begin{0, 1};
    for (Index level = 0; level < tree_.height(); ++level)
      level_begin.push_back(level_begin.back() +
                            detail::expand_level(space, children_, queue_, first_slot_,
                                                 level_begin[level], level_begin[level + 1],
                                                 detail::IgnoreEdge{}));
    using AddLevel = detail::AddLevelToParents<Operation, Accumulators, MemorySpace>;
    for (Index level = tree_.height(); level > 0; --level)
      Kokkos::parallel_scan("treetrav::LevelSynchronousTreefix::add_level_to_parents",
                            Kokkos::RangePolicy<ExecutionSpace>(
                                space, 0, level_begin[level + 1] - level_begin[level]),
                            AddLevel{op, queue_, tree_.parents(), accumulators, level_begin[level],
                                     level_begin[level + 1]});
    detail::lower_into_results(space, "treetrav::LevelSynchronousTreefix::lower", op, accumulators,
                               results);
  }

  RootedTree<MemorySpace> const& tree() const { return tree_; }
  ChildrenCsr<MemorySpace> const& children() const { return children_; }

private:
  RootedTree<MemorySpace> tree_;
  ChildrenCsr<MemorySpace> children_;
  Kokkos::View<Index*, MemorySpace> queue_; // the vertices in traversal order, level after level
  Kokkos::View<Index*, MemorySpace> first_slot_; // per frontier vertex: its children's first slot
  detail::Workspace<MemorySpace> workspace_;
};

} // namespace treetrav
