#pragma once

#include <treetrav/treefix/children.hpp>
#include <treetrav/treefix/detail/results.hpp>

#include <algorithm>
#include <limits>
#include <string>
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

// Frontiers up to this wide expand in one kernel without a scan: each output
// slot finds its parent by walking the frontier's child counts.
inline constexpr Index narrow_level = 64;

// The kernels of expand_level below (named functors: see rooted_tree.hpp).

// A narrow frontier: each output slot finds its parent by walking the
// frontier's child counts.
template <class MemorySpace, class Visit>
struct ExpandNarrowFrontier {
  ChildrenCsr<MemorySpace> csr;
  Kokkos::View<Index*, MemorySpace> queue;
  Visit visit;
  Index begin;
  Index end;

  KOKKOS_FUNCTION void operator()(Index slot) const {
    Index parent = queue(begin), before = 0;
    for (Index i = 1;; ++i) {
      Index const count = csr.offsets(parent + 1) - csr.offsets(parent);
      if (slot < before + count)
        break;
      before += count;
      parent = queue(begin + i);
    }
    Index const child = csr.children(csr.offsets(parent) + slot - before);
    queue(end + slot) = child;
    visit(parent, child);
  }
};

// An exclusive scan of the frontier's child counts: first_slot(i) is where the
// children of frontier vertex i begin.
template <class MemorySpace>
struct FirstChildSlots {
  using value_type = Index;

  Kokkos::View<Index*, MemorySpace> offsets;
  Kokkos::View<Index*, MemorySpace> queue;
  Kokkos::View<Index*, MemorySpace> first_slot;
  Index begin;

  KOKKOS_FUNCTION void operator()(Index i, Index& before, bool final) const {
    Index const v = queue(begin + i);
    if (final)
      first_slot(i) = before;
    before += offsets(v + 1) - offsets(v);
  }
};

// A wide frontier: the last frontier vertex whose first slot is <= slot owns
// it (binary search of first_slot).
template <class MemorySpace, class Visit>
struct ExpandFrontier {
  ChildrenCsr<MemorySpace> csr;
  Kokkos::View<Index*, MemorySpace> queue;
  Kokkos::View<Index*, MemorySpace> first_slot;
  Visit visit;
  Index begin;
  Index end;
  Index width;

  KOKKOS_FUNCTION void operator()(Index slot) const {
    Index low = 0, high = width;
    while (high - low > 1) {
      Index const middle = low + (high - low) / 2;
      if (first_slot(middle) <= slot)
        low = middle;
      else
        high = middle;
    }
    Index const parent = queue(begin + low);
    Index const child = csr.children(csr.offsets(parent) + slot - first_slot(low));
    queue(end + slot) = child;
    visit(parent, child);
  }
};

// One level of the breadth-first traversal: the frontier queue(begin..end-1)
// expands into its children, appended at queue(end..next_end-1) in frontier
// order, and visit(parent, child) runs on every new edge. Load-balanced as in
// Merrill et al.: an exclusive scan of the frontier's child counts gives each
// frontier vertex its range of output slots, then one work item per child
// finds its parent by binary search in the scan. The level sizes are known
// beforehand (level_offsets), so nothing waits for the device.
template <class ExecutionSpace, class MemorySpace, class Visit>
void expand_level(ExecutionSpace const& space, ChildrenCsr<MemorySpace> const& csr,
                  Kokkos::View<Index*, MemorySpace> const& queue,
                  Kokkos::View<Index*, MemorySpace> const& first_slot, Index begin, Index end,
                  Index next_end, Visit const& visit) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Index const width = end - begin;
  if (next_end == end)
    return;
  if (width <= narrow_level) {
    Kokkos::parallel_for("treetrav::LevelSynchronousTreefix::expand_narrow",
                         Policy(space, 0, next_end - end),
                         ExpandNarrowFrontier<MemorySpace, Visit>{csr, queue, visit, begin, end});
    return;
  }
  Kokkos::parallel_scan("treetrav::LevelSynchronousTreefix::scan_frontier", Policy(space, 0, width),
                        FirstChildSlots<MemorySpace>{csr.offsets, queue, first_slot, begin});
  Kokkos::parallel_for(
      "treetrav::LevelSynchronousTreefix::expand", Policy(space, 0, next_end - end),
      ExpandFrontier<MemorySpace, Visit>{csr, queue, first_slot, visit, begin, end, width});
}

// Runs of narrow levels (every frontier and its next level at most
// narrow_level wide) in one kernel: a single team walks the levels one after
// another, a team barrier between two levels instead of a kernel launch. The
// frontier and its child ranges stay in team scratch memory, and each new
// level loads its own child ranges while it is written, so a level costs a
// few dependent memory accesses. Expands the levels first .. last - 1.
template <class ExecutionSpace, class MemorySpace, class Visit>
struct ExpandNarrowLevels {
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Scratch =
      Kokkos::View<Index*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  // Per buffer: the frontier's vertices, their first children, their ends.
  static constexpr Index buffer = 3 * narrow_level;

  Kokkos::View<Index*, MemorySpace> offsets;
  Kokkos::View<Index*, MemorySpace> children;
  Kokkos::View<Index*, MemorySpace> level_begin;
  Kokkos::View<Index*, MemorySpace> queue;
  Visit visit;
  Index first;
  Index last;

  static std::size_t scratch_bytes() { return Scratch::shmem_size(2 * buffer); }

  KOKKOS_FUNCTION void operator()(Member const& team) const {
    Scratch const frontier(team.team_scratch(0), 2 * buffer);
    Index const rank = team.team_rank(), size = team.team_size();
    Index const last_entry = static_cast<Index>(level_begin.extent(0)) - 1;
    Index end = level_begin(first + 1), next_end = level_begin(first + 2);
    for (Index i = rank, begin = level_begin(first); i < end - begin; i += size) {
      Index const v = queue(begin + i);
      frontier(i) = v;
      frontier(narrow_level + i) = offsets(v);
      frontier(2 * narrow_level + i) = offsets(v + 1);
    }
    team.team_barrier();
    for (Index level = first; level < last; ++level) {
      Index const following = level_begin(level + 3 < last_entry ? level + 3 : last_entry);
      Index const current = (level - first) % 2 * buffer, next = buffer - current;
      for (Index slot = rank; slot < next_end - end; slot += size) {
        Index i = 0, before = 0;
        for (;; ++i) {
          Index const count =
              frontier(current + 2 * narrow_level + i) - frontier(current + narrow_level + i);
          if (slot < before + count)
            break;
          before += count;
        }
        Index const parent = frontier(current + i);
        Index const child = children(frontier(current + narrow_level + i) + slot - before);
        queue(end + slot) = child;
        frontier(next + slot) = child;
        frontier(next + narrow_level + slot) = offsets(child);
        frontier(next + 2 * narrow_level + slot) = offsets(child + 1);
        visit(parent, child);
      }
      team.team_barrier();
      end = next_end;
      next_end = following;
    }
  }
};

// The bottom-up counterpart: one team adds the levels last, last - 1, ..,
// first (each at most narrow_level wide) into their parents, a team barrier
// between two levels; the same order of sums as AddRunsToParents.
template <class ExecutionSpace, class Operation, class Accumulators, class MemorySpace>
struct AddNarrowLevelsToParents {
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Scratch =
      Kokkos::View<Index*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  Operation op;
  Kokkos::View<Index*, MemorySpace> queue;
  Kokkos::View<Index const*, MemorySpace> parents;
  Kokkos::View<Index*, MemorySpace> level_begin;
  Accumulators accumulators;
  Index first;
  Index last;

  static std::size_t scratch_bytes() { return 2 * Scratch::shmem_size(narrow_level); }

  KOKKOS_FUNCTION void operator()(Member const& team) const {
    Scratch const level_vertices(team.team_scratch(0), narrow_level);
    Scratch const level_parents(team.team_scratch(0), narrow_level);
    Index const rank = team.team_rank(), size = team.team_size();
    Index begin = level_begin(last), end = level_begin(last + 1);
    for (Index level = last; level >= first; --level) {
      Index const above = level_begin(level > 0 ? level - 1 : 0);
      Index const width = end - begin;
      for (Index i = rank; i < width; i += size) {
        Index const v = queue(begin + i);
        level_vertices(i) = v;
        level_parents(i) = parents(v);
      }
      team.team_barrier();
      for (Index i = rank; i < width; i += size) {
        Index const parent = level_parents(i);
        if (i + 1 < width && level_parents(i + 1) == parent)
          continue;
        Index run = i;
        while (run > 0 && level_parents(run - 1) == parent)
          --run;
        auto sum = accumulators(level_vertices(run));
        for (Index p = run + 1; p <= i; ++p)
          sum = op.combine(sum, accumulators(level_vertices(p)));
        accumulators(parent) = op.combine(accumulators(parent), sum);
      }
      team.team_barrier();
      end = begin;
      begin = above;
    }
  }
};

// Runs one of the team kernels above as a single team of at most
// narrow_level threads.
template <class ExecutionSpace, class Functor>
void run_single_team(ExecutionSpace const& space, std::string const& label,
                     Functor const& functor) {
  Kokkos::TeamPolicy<ExecutionSpace> sizing(space, 1, 1);
  sizing.set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes()));
  int const team_size = std::min<int>(static_cast<int>(narrow_level),
                                      sizing.team_size_max(functor, Kokkos::ParallelForTag{}));
  Kokkos::TeamPolicy<ExecutionSpace> policy(space, 1, team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes()));
  Kokkos::parallel_for(label, policy, functor);
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
  KOKKOS_FUNCTION void join(TREETRAV_JOIN_ARGUMENT value_type& update,
                            TREETRAV_JOIN_ARGUMENT value_type const& input) const {
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

// Leaffix's bottom-up step for a narrow level, or any level of a tree whose
// vertices have few children: one kernel without a scan, in which the last of
// each run of siblings adds the run, left to right, into their parent. The
// order of every sum is then fixed: the same bits on every backend and thread
// count. Run over the positions begin..end-1 of the queue.
template <class Operation, class Accumulators, class MemorySpace>
struct AddRunsToParents {
  Operation op;
  Kokkos::View<Index*, MemorySpace> queue;
  Kokkos::View<Index const*, MemorySpace> parents;
  Accumulators accumulators;
  Index begin;
  Index end;

  KOKKOS_FUNCTION void operator()(Index position) const {
    Index const parent = parents(queue(position));
    if (position + 1 < end && parents(queue(position + 1)) == parent)
      return;
    Index first = position;
    while (first > begin && parents(queue(first - 1)) == parent)
      --first;
    auto sum = accumulators(queue(first));
    for (Index p = first + 1; p <= position; ++p)
      sum = op.combine(sum, accumulators(queue(p)));
    accumulators(parent) = op.combine(accumulators(parent), sum);
  }
};

// The largest number of children of a vertex (a Kokkos::Max reduction).
template <class MemorySpace>
struct MostChildren {
  Kokkos::View<Index*, MemorySpace> offsets;

  KOKKOS_FUNCTION void operator()(Index v, Index& most) const {
    Index const count = offsets(v + 1) - offsets(v);
    most = count > most ? count : most;
  }
};

// widths(L) += 1 for every vertex at depth L.
template <class MemorySpace>
struct CountLevelWidths {
  Kokkos::View<Index const*, MemorySpace> depth;
  Kokkos::View<Index*, MemorySpace> widths;

  KOKKOS_FUNCTION void operator()(Index v) const {
    Kokkos::atomic_add(&widths(depth(v)), Index{1});
  }
};

// Rootfix's start: the root's accumulator and the traversal's first frontier.
template <class Operation, class Weights, class Accumulators, class MemorySpace>
struct StartAtRoot {
  Operation op;
  Weights weights;
  Accumulators accumulators;
  Kokkos::View<Index*, MemorySpace> queue;
  Index root;

  KOKKOS_FUNCTION void operator()(Index) const {
    queue(0) = root;
    accumulators(root) = op.lift(weights(root));
  }
};

// Leaffix's start: every vertex's accumulator, and the traversal's first frontier.
template <class Operation, class Weights, class Accumulators, class MemorySpace>
struct LiftEveryWeight {
  Operation op;
  Weights weights;
  Accumulators accumulators;
  Kokkos::View<Index*, MemorySpace> queue;
  Index root;

  KOKKOS_FUNCTION void operator()(Index v) const {
    accumulators(v) = op.lift(weights(v));
    if (v == 0)
      queue(0) = root;
  }
};

// Where each level of the tree begins in breadth-first order: level L holds
// offsets[L] .. offsets[L + 1] - 1 (height + 2 entries). Depths by pointer
// jumping, then a histogram: O(n log n) work, O(log n) steps, one copy to the
// host, so that the traversals never wait for a level's size.
template <class ExecutionSpace, class MemorySpace>
Index max_children(ExecutionSpace const& space, ChildrenCsr<MemorySpace> const& csr) {
  Index most = 0;
  Kokkos::parallel_reduce(
      "treetrav::LevelSynchronousTreefix::max_children",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<Index>(csr.offsets.extent(0)) - 1),
      MostChildren<MemorySpace>{csr.offsets}, Kokkos::Max<Index>(most));
  return most;
}

template <class ExecutionSpace, class MemorySpace>
std::vector<Index> level_offsets(ExecutionSpace const& space, RootedTree<MemorySpace> const& tree) {
  ProfilingRegion const region("treetrav::LevelSynchronousTreefix::level_offsets");
  auto const depth = jump_to_root(space, tree.parents(), tree.root()).depth;
  Kokkos::View<Index*, MemorySpace> widths(
      Kokkos::view_alloc(space, "treetrav::LevelSynchronousTreefix::level_widths"),
      tree.height() + 1);
  Kokkos::parallel_for("treetrav::LevelSynchronousTreefix::count_levels",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size()),
                       CountLevelWidths<MemorySpace>{depth, widths});
  auto const host_widths = Kokkos::create_mirror_view(Kokkos::HostSpace{}, widths);
  Kokkos::deep_copy(space, host_widths, widths);
  space.fence();
  std::vector<Index> offsets(tree.height() + 2, 0);
  for (Index level = 0; level <= tree.height(); ++level)
    offsets[level + 1] = offsets[level] + host_widths(level);
  return offsets;
}

} // namespace detail

// The level-synchronous (breadth-first) treefix of the paper's Algorithm 1:
// work-efficient (each vertex is touched once per pass) but one step per tree
// level, so its time grows with the height: ideal on a star, sequential on a
// caterpillar. Every call re-traverses the tree from the CSR, as the paper's
// method does; construction builds the CSR and counts the vertices of each
// level, so that a call launches its kernels back to back without reading a
// frontier's size from the device (levels up to narrow_level wide take one
// kernel). Calls on one object must not overlap (they share the frontier queue).
template <class MemorySpace>
class LevelSynchronousTreefix {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "LevelSynchronousTreefix's template argument must be a Kokkos memory space");

public:
  using memory_space = MemorySpace;

  template <class ExecutionSpace>
  LevelSynchronousTreefix(ExecutionSpace const& space, RootedTree<MemorySpace> tree)
      : tree_(std::move(tree)), children_(children_csr(space, tree_)),
        level_begin_(detail::level_offsets(space, tree_)),
        max_children_(detail::max_children(space, children_)),
        level_begin_device_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                               "treetrav::LevelSynchronousTreefix::level_begin"),
                            level_begin_.size()),
        queue_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                  "treetrav::LevelSynchronousTreefix::queue"),
               tree_.size()),
        first_slot_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                       "treetrav::LevelSynchronousTreefix::first_slot"),
                    tree_.size()),
        workspace_("treetrav::LevelSynchronousTreefix::accumulators") {
    Kokkos::View<Index const*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const host(
        level_begin_.data(), level_begin_.size());
    Kokkos::deep_copy(space, level_begin_device_, host);
    space.fence();
  }

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
    Kokkos::parallel_for("treetrav::LevelSynchronousTreefix::start",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                         detail::StartAtRoot<Operation, Weights, Accumulators, MemorySpace>{
                             op, weights, accumulators, queue_, tree_.root()});
    traverse_down(space, detail::CombineWithParent<Operation, Weights, Accumulators>{op, weights,
                                                                                     accumulators});
    detail::lower_into_results(space, "treetrav::LevelSynchronousTreefix::lower", op, accumulators,
                               results);
  }

  // results(v) = weights of v's subtree combined: a traversal down lays the
  // levels out in the queue, then each level from the deepest adds itself
  // into its parents. On trees with at most narrow_level children per vertex
  // each parent adds its children's sum, taken left to right, to its own
  // weight: the same bits on every backend and thread count.
  template <class ExecutionSpace, class Operation, class Weights, class Results>
  void leaffix(ExecutionSpace const& space, Operation const& op, Weights const& weights,
               Results const& results) {
    detail::check_treefix_arguments<ExecutionSpace, Operation>("LevelSynchronousTreefix::leaffix",
                                                               tree_.size(), weights, results);
    detail::ProfilingRegion const region("treetrav::LevelSynchronousTreefix::leaffix");
    using Accumulators = detail::AccumulatorView<Operation, MemorySpace>;
    Accumulators const accumulators =
        detail::accumulators_for<Operation>(space, workspace_, results);
    Kokkos::parallel_for("treetrav::LevelSynchronousTreefix::lift",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree_.size()),
                         detail::LiftEveryWeight<Operation, Weights, Accumulators, MemorySpace>{
                             op, weights, accumulators, queue_, tree_.root()});
    traverse_down(space, detail::IgnoreEdge{});
    using AddLevel = detail::AddLevelToParents<Operation, Accumulators, MemorySpace>;
    for (Index level = tree_.height(); level > 0;) {
      Index run = level; // levels run..level: a narrow run, added by one team
      while (run > 1 && width(level) <= detail::narrow_level &&
             width(run - 1) <= detail::narrow_level)
        --run;
      if (run < level) {
        detail::run_single_team(
            space, "treetrav::LevelSynchronousTreefix::add_narrow_levels_to_parents",
            detail::AddNarrowLevelsToParents<ExecutionSpace, Operation, Accumulators, MemorySpace>{
                op, queue_, tree_.parents(), level_begin_device_, accumulators, run, level});
        level = run - 1;
        continue;
      }
      Index const begin = level_begin_[level], end = level_begin_[level + 1];
      if (end - begin <= detail::narrow_level || max_children_ <= detail::narrow_level)
        Kokkos::parallel_for("treetrav::LevelSynchronousTreefix::add_runs_to_parents",
                             Kokkos::RangePolicy<ExecutionSpace>(space, begin, end),
                             detail::AddRunsToParents<Operation, Accumulators, MemorySpace>{
                                 op, queue_, tree_.parents(), accumulators, begin, end});
      else
        Kokkos::parallel_scan("treetrav::LevelSynchronousTreefix::add_level_to_parents",
                              Kokkos::RangePolicy<ExecutionSpace>(space, 0, end - begin),
                              AddLevel{op, queue_, tree_.parents(), accumulators, begin, end});
      --level;
    }
    detail::lower_into_results(space, "treetrav::LevelSynchronousTreefix::lower", op, accumulators,
                               results);
  }

  RootedTree<MemorySpace> const& tree() const { return tree_; }
  ChildrenCsr<MemorySpace> const& children() const { return children_; }
  // Level L of the breadth-first order is level_begin()[L] .. level_begin()[L + 1] - 1.
  std::vector<Index> const& level_begin() const { return level_begin_; }

private:
  Index width(Index level) const { return level_begin_[level + 1] - level_begin_[level]; }

  // The traversal from the root, visit(parent, child) on every edge, level by
  // level; each run of narrow levels goes to one team kernel.
  template <class ExecutionSpace, class Visit>
  void traverse_down(ExecutionSpace const& space, Visit const& visit) {
    auto const narrow = [&](Index level) {
      return width(level) <= detail::narrow_level && width(level + 1) <= detail::narrow_level;
    };
    for (Index level = 0; level < tree_.height();) {
      Index run_end = level;
      while (run_end < tree_.height() && narrow(run_end))
        ++run_end;
      if (run_end - level >= 2) {
        detail::run_single_team(space, "treetrav::LevelSynchronousTreefix::expand_narrow_levels",
                                detail::ExpandNarrowLevels<ExecutionSpace, MemorySpace, Visit>{
                                    children_.offsets, children_.children, level_begin_device_,
                                    queue_, visit, level, run_end});
        level = run_end;
      } else {
        detail::expand_level(space, children_, queue_, first_slot_, level_begin_[level],
                             level_begin_[level + 1], level_begin_[level + 2], visit);
        ++level;
      }
    }
  }

  RootedTree<MemorySpace> tree_;
  ChildrenCsr<MemorySpace> children_;
  std::vector<Index> level_begin_; // height + 2 entries, on the host
  Index max_children_;
  Kokkos::View<Index*, MemorySpace> level_begin_device_; // the same, for the narrow-level kernels
  Kokkos::View<Index*, MemorySpace> queue_; // the vertices in traversal order, level after level
  Kokkos::View<Index*, MemorySpace> first_slot_; // per frontier vertex: its children's first slot
  detail::GrowingBuffer<MemorySpace> workspace_;
};

} // namespace treetrav
