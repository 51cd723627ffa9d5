#pragma once

// The group walk (GroupWalk): one warp per group of queries, interaction lists
// in scratch memory. See strategies.hpp for the idea and visitor.hpp for the
// group interface a visitor provides.
#include <treetrav/core/allocate.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/scan.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
#include <treetrav/kernels/detail/host_kernels.hpp>
#include <treetrav/kernels/detail/warp.hpp>
#include <treetrav/kernels/visitor.hpp>
#include <treetrav/core/workspace.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav::detail {

// What the walk reads of a node besides the visitor's own data: an internal
// node's children are child_list[first, first + count), or the nodes [first,
// first + count) when every node's children are consecutive (the Morton
// octree's breadth-first numbering; GroupWalkTables::consecutive_children); a leaf (count <= 0)
// holds the tree's points [first, first - count).
struct alignas(8) GroupWalkLinks {
  Index first;
  Index count;
};

// The children of an internal node's link, wherever the tables keep them.
template <class MemorySpace>
struct GroupWalkChildren {
  Kokkos::View<Index const*, MemorySpace> child_list;
  bool consecutive;
  KOKKOS_FUNCTION Index operator()(GroupWalkLinks const& link, Index k) const {
    return consecutive ? link.first + k : child_list(link.first + k);
  }
};

template <class Topology>
struct GroupWalkTables {
  using memory_space = typename Topology::memory_space;
  Kokkos::View<GroupWalkLinks*, memory_space> links; // (nodes)
  Kokkos::View<Index*, memory_space> child_list;     // (nodes), children grouped by parent
  Kokkos::View<Index*, memory_space> groups;         // first points of the groups, ascending
  Kokkos::View<Index*, memory_space> group_end;      // (points): a group's end at its first point
  Index group_count = 0;
  int depth = 0; // of the deepest node (root: 0)
  // Links name the children themselves: a walk pushes them without reading
  // child_list, one dependent load less on every node it opens.
  bool consecutive_children = false;
  GroupWalkChildren<memory_space> children() const { return {child_list, consecutive_children}; }
};

// Whether every internal node's children are consecutive nodes.
template <class Topology>
struct ConsecutiveChildren {
  Topology topology;
  KOKKOS_FUNCTION void operator()(Index node, int& consecutive) const {
    Index const first = topology.child(node, 0);
    for (int slot = 1; slot < Topology::arity && first >= 0; ++slot) {
      Index const child = topology.child(node, slot);
      if (child < 0)
        break;
      if (child != first + slot)
        consecutive = 0;
    }
  }
};

// Pass 1 over the nodes (a scan): links and the children list; the children
// of node i follow those of the nodes before it.
template <class Topology>
struct LinkNodes {
  using value_type = Index;
  Topology topology;
  Kokkos::View<GroupWalkLinks*, typename Topology::memory_space> links;
  Kokkos::View<Index*, typename Topology::memory_space> child_list;
  bool consecutive_children;

  KOKKOS_FUNCTION void operator()(Index node, Index& children_before, bool final) const {
    int count = 0;
    while (count < Topology::arity && topology.child(node, count) >= 0)
      ++count;
    if (final) {
      if (count == 0) {
        Index const begin = topology.point_begin(node);
        links(node) = GroupWalkLinks{begin, begin - topology.point_end(node)};
      } else if (consecutive_children) {
        links(node) = GroupWalkLinks{topology.child(node, 0), count};
      } else {
        links(node) = GroupWalkLinks{children_before, count};
        for (int slot = 0; slot < count; ++slot)
          child_list(children_before + slot) = topology.child(node, slot);
      }
    }
    children_before += count;
  }
};

// LinkNodes node by node, when every node's children are consecutive.
template <class Topology>
struct LinkEachNode {
  LinkNodes<Topology> link;
  KOKKOS_FUNCTION void operator()(Index node) const {
    Index unused = 0;
    link(node, unused, true);
  }
};

// The points under the root: a TreeTopology's root range (a View), a
// RadixTopology's count.
template <class Topology, class = void>
struct has_point_end_view : std::false_type {};
template <class Topology>
struct has_point_end_view<Topology, std::void_t<decltype(std::declval<Topology const&>().point_end.extent(0))>>
    : std::true_type {};
template <class Topology>
Index points_under_root(Topology const& topology) {
  if constexpr (has_point_end_view<Topology>::value)
    return Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace{}, Kokkos::subview(topology.point_end, std::make_pair(0, 1)))(0);
  else
    return topology.points;
}

// What a walk needs of the tree's shape, in one reduction (one wait for the
// device instead of one per property): the depth of the deepest node, by
// walking up the parents, whether every internal node's children are
// consecutive nodes (ConsecutiveChildren), and the points under the root
// (node 0) of a TreeTopology.
struct TreeShape {
  int depth;
  int consecutive;
  Index points;
};
template <class Topology>
struct MeasureTree {
  using value_type = TreeShape;
  Topology topology;
  KOKKOS_FUNCTION void init(value_type& shape) const {
    shape.depth = 0;
    shape.consecutive = 1;
    shape.points = 0;
  }
  KOKKOS_FUNCTION void join(TREETRAV_JOIN_ARGUMENT value_type& to, TREETRAV_JOIN_ARGUMENT value_type const& from) const {
    if (from.depth > to.depth)
      to.depth = from.depth;
    if (!from.consecutive)
      to.consecutive = 0;
    if (from.points > to.points)
      to.points = from.points;
  }
  KOKKOS_FUNCTION void operator()(Index node, value_type& shape) const {
    int depth = 0;
    for (Index at = topology.parent(node); at >= 0; at = topology.parent(at))
      ++depth;
    if (depth > shape.depth)
      shape.depth = depth;
    ConsecutiveChildren<Topology>{topology}(node, shape.consecutive);
    if constexpr (has_point_end_view<Topology>::value)
      if (node == 0)
        shape.points = topology.point_end(0);
  }
};

// Whether the visitor vets packed siblings (its optional
// packs(first, last, parent): may the points [first, last) of consecutive
// children of `parent` form one group?).
template <class Visitor, class = void>
struct has_group_pack_check : std::false_type {};
template <class Visitor>
struct has_group_pack_check<Visitor, std::void_t<decltype(std::declval<Visitor const&>().packs(
                                         std::declval<Index>(), std::declval<Index>(), std::declval<Index>()))>>
    : std::true_type {};
// Whether the visitor names nodes that are never one group, whatever their
// points (its optional splits(node): their children are grouped instead).
template <class Visitor, class = void>
struct has_group_split_check : std::false_type {};
template <class Visitor>
struct has_group_split_check<Visitor, std::void_t<decltype(std::declval<Visitor const&>().splits(std::declval<Index>()))>>
    : std::true_type {};

// Marks the groups at their first point with their end. A group is the
// points of a node with at most group_size of them whose parent has more (the
// root when it has few enough), or of a run of such consecutive siblings
// holding at most group_size together (pack_siblings, where the visitor's
// packs() agrees), or group_size consecutive points of a larger leaf. Only
// groups with an active query. A node the visitor splits (splits(node))
// counts as one of more than group_size points.
template <class Topology, class Visitor>
struct MarkGroups {
  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, typename Topology::memory_space> order;
  Kokkos::View<Index*, typename Topology::memory_space> group_end;  // (points)
  Index group_size;
  bool pack_siblings;

  KOKKOS_FUNCTION void mark(Index first, Index last) const {
    bool active = false;
    for (Index position = first; position < last && !active; ++position)
      active = visitor.active(query_at(order, position));
    if (active) group_end(first) = last;
  }

  KOKKOS_FUNCTION bool small(Index node, Index points) const {
    if constexpr (has_group_split_check<Visitor>::value)
      if (visitor.splits(node))
        return false;
    return points <= group_size;
  }

  KOKKOS_FUNCTION void operator()(Index node) const {
    // A radix tree keeps the nodes below its leaves; no walk reaches them,
    // and their leaf groups their points.
    Index const parent = topology.parent(node);
    if (parent >= 0 && topology.is_leaf(parent))
      return;
    Index const begin = topology.point_begin(node), end = topology.point_end(node);
    if (small(node, end - begin)) {
      if (parent < 0 && end > begin) mark(begin, end);  // a small tree: one group
      return;  // else its parent groups it
    }
    if (topology.is_leaf(node)) {
      for (Index first = begin; first < end; first += group_size)
        mark(first, end - first > group_size ? first + group_size : end);
      return;
    }
    // Children cover consecutive ranges in slot order: pack the small ones.
    Index run_first = -1, run_last = -1;
    for (int slot = 0; slot < Topology::arity; ++slot) {
      Index const child = topology.child(node, slot);
      if (child < 0) break;
      Index const first = topology.point_begin(child), last = topology.point_end(child);
      if (!small(child, last - first) || first == last) continue;  // its own parent of groups (or empty)
      bool packs = pack_siblings && run_first >= 0 && run_last == first && last - run_first <= group_size;
      if constexpr (has_group_pack_check<Visitor>::value)
        packs = packs && visitor.packs(run_first, last, node);
      if (packs) {
        run_last = last;
        continue;
      }
      if (run_first >= 0) mark(run_first, run_last);
      run_first = first;
      run_last = last;
    }
    if (run_first >= 0) mark(run_first, run_last);
  }
};

// The groups' first points, in order (lay_out_counts).
template <class MemorySpace>
struct GroupStarts {
  Kokkos::View<Index const*, MemorySpace> group_end;
  KOKKOS_FUNCTION Index operator()(Index position) const { return group_end(position) < 0 ? 0 : 1; }
};
template <class MemorySpace>
struct ListGroups {
  Kokkos::View<Index const*, MemorySpace> group_end;
  Kokkos::View<Index*, MemorySpace> groups;
  KOKKOS_FUNCTION void operator()(Index position, Index before) const {
    if (group_end(position) >= 0)
      groups(before) = position;
  }
};

template <class ExecutionSpace, class Topology, class Visitor>
GroupWalkTables<Topology>
prepare_group_walk(ExecutionSpace const& space, Topology const& topology, Visitor const& visitor,
                   Kokkos::View<Index const*, typename Topology::memory_space> order, Index points,
                   Index group_size, bool pack_siblings, Workspace* workspace = nullptr) {
  // `points`: the queries, which must be the tree's own points (checked).
  using MemorySpace = typename Topology::memory_space;
  auto const policy = [&](Index end) { return as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, end)); };
  Index const nodes = topology.size();
  GroupWalkTables<Topology> tables;
  WorkspaceArrays<ExecutionSpace> const arrays(space, workspace);
  auto const make = [&](auto const& view, char const* member, Index extent) {
    return arrays.template make<std::decay_t<decltype(view)>>(std::string("treetrav::GroupWalk::") + member, extent);
  };
  Kokkos::Profiling::pushRegion("treetrav::GroupWalk::prepare");
  TreeShape shape{0, 1, 0};
  Kokkos::parallel_reduce("treetrav::GroupWalk::tree_shape", policy(nodes), MeasureTree<Topology>{topology}, shape);
  if constexpr (!has_point_end_view<Topology>::value)
    shape.points = points_under_root(topology);
  if (shape.points != points) {
    Kokkos::Profiling::popRegion();
    throw std::invalid_argument(
        "group walk: the queries must be the tree's own points (order: tree position -> query)");
  }
  tables.consecutive_children = shape.consecutive != 0;
  tables.depth = shape.depth;
  tables.links = make(tables.links, "links", nodes);
  tables.child_list = make(tables.child_list, "child_list", tables.consecutive_children ? 0 : nodes);
  LinkNodes<Topology> const link{topology, tables.links, tables.child_list, tables.consecutive_children};
  if (tables.consecutive_children) { // no children list to lay out: no scan
    Kokkos::parallel_for("treetrav::GroupWalk::links", policy(nodes), LinkEachNode<Topology>{link});
  } else {
    Index children = 0;
    Kokkos::parallel_scan("treetrav::GroupWalk::links", policy(nodes), link, children);
  }
  tables.group_end = make(tables.group_end, "group_end", points);
  Kokkos::deep_copy(space, tables.group_end, Index(-1));
  Kokkos::parallel_for(
      "treetrav::GroupWalk::mark_groups", policy(nodes),
      MarkGroups<Topology, Visitor>{topology, visitor, order, tables.group_end, group_size, pack_siblings});
  tables.groups = make(tables.groups, "groups", points);
  tables.group_count = lay_out_counts(arrays, "treetrav::GroupWalk::compact_groups", points,
                                      GroupStarts<MemorySpace>{tables.group_end},
                                      ListGroups<MemorySpace>{tables.group_end, tables.groups});
  Kokkos::Profiling::popRegion();
  return tables;
}

// Whether the visitor drops nodes for a whole group (its optional skip()).
template <class Visitor, class = void>
struct has_group_skip : std::false_type {};
template <class Visitor>
struct has_group_skip<Visitor,
                      std::void_t<decltype(std::declval<Visitor const&>().skip(
                          std::declval<Index>(), std::declval<typename Visitor::group_type const&>()))>>
    : std::true_type {};

// The visitor's warp_state_type (visitor.hpp), or an empty one.
template <class Visitor, class = void>
struct warp_state_of {
  struct type {};
  static constexpr bool value = false;
};
template <class Visitor>
struct warp_state_of<Visitor, std::void_t<typename Visitor::warp_state_type>> {
  using type = typename Visitor::warp_state_type;
  static constexpr bool value = !std::is_void_v<type>;
};

// Whether the visitor's states sum (visitor.hpp: join).
template <class Visitor, class = void>
struct has_state_join : std::false_type {};
template <class Visitor>
struct has_state_join<Visitor, std::void_t<decltype(std::declval<Visitor const&>().join(
                                   std::declval<typename Visitor::state_type&>(),
                                   std::declval<typename Visitor::state_type const&>()))>> : std::true_type {};

// One warp's walk per group, repeated over groups taken from a shared
// counter (so that every warp stays busy and owns one stack).
template <class Topology, class Visitor>
struct GroupWalkKernel {
  using memory_space = typename Topology::memory_space;
  using Group = typename Visitor::group_type;
  using NodeRecord = typename Visitor::node_record_type;
  using PointRecord = typename Visitor::point_record_type;
  using QueryRecord = typename Visitor::query_record_type;
  using State = typename Visitor::state_type;
  static constexpr int max_lanes = group_walk_lanes;
  static constexpr int slots = group_walk_slots; // queries per lane
  static constexpr bool warp_state = warp_state_of<Visitor>::value;
  using WarpState = std::conditional_t<warp_state, typename warp_state_of<Visitor>::type,
                                       typename warp_state_of<void>::type>;
  // The queries of slot 1 (past a warp's worth) shared out: several lanes to
  // a query, each summing every stride-th entry of each list from its start,
  // joined at the end (visitor.hpp: join).
  static constexpr bool shared_second_slot = has_state_join<Visitor>::value && !warp_state && slots == 2;

  enum Kind : int { skip, accepted, leaf, opened };

  struct Lane {
    QueryRecord query[slots];
    State state[slots];
    Index query_index[slots];
    bool valid[slots];
    Index node, first, count;
    int kind, offset;
    int start, stride; // slot 1's share of each list (shared_second_slot)
  };

  // Interaction lists of one warp: accepted nodes' records (flushed once a
  // warp's worth is pending, so at most 2 W - 1), opened leaves (their first
  // point and the running count of points before them), and a warp's worth
  // of point records at a time.
  struct Scratch {
    NodeRecord nodes[2 * max_lanes];
    PointRecord points[max_lanes];
    Index leaf_first[2 * max_lanes];
    Index leaf_offset[2 * max_lanes];
    WarpState state;
    State partial[shared_second_slot ? max_lanes : 1]; // slot 1's partial states, to join
  };

  Topology topology;
  Visitor visitor;
  Kokkos::View<Index const*, memory_space> order;
  Kokkos::View<GroupWalkLinks const*, memory_space> links;
  GroupWalkChildren<memory_space> children;
  Kokkos::View<Index const*, memory_space> groups;
  Kokkos::View<Index const*, memory_space> group_end;
  Kokkos::View<Index*, memory_space> stacks; // stack_capacity per warp
  Kokkos::View<Index, memory_space> next_group;
  Index group_count;
  Index stack_capacity;
  // Each query's group's interactions (list entries), for the next walk's
  // order (GroupWalkCosts); empty: not recorded.
  Kokkos::View<Index*, memory_space> costs;

  // Each record meets the lane's queries, copied out of the lane first: the
  // lane, reached by reference, lives in local memory, and each of the
  // list's interactions would read its queries back from there.
  template <class Record>
  KOKKOS_FORCEINLINE_FUNCTION void interact_all(Record const* records, int count,
                                                Lane& l) const {
    if constexpr (shared_second_slot) {
      QueryRecord const first = l.query[0], second = l.query[1];
      if (l.valid[0])
        for (int j = 0; j < count; ++j)
          visitor.interact(records[j], first, l.state[0]);
      if (l.valid[1])
        for (int j = l.start; j < count; j += l.stride)
          visitor.interact(records[j], second, l.state[1]);
      return;
    }
    QueryRecord query[slots];
    bool valid[slots];
#pragma unroll
    for (int s = 0; s < slots; ++s) {
      query[s] = l.query[s];
      valid[s] = l.valid[s];
    }
    for (int j = 0; j < count; ++j) {
      Record const record = records[j];
#pragma unroll
      for (int s = 0; s < slots; ++s)
        if (valid[s])
          visitor.interact(record, query[s], l.state[s]);
    }
  }

  template <class Warp, class Lanes>
  KOKKOS_FUNCTION void flush_nodes(Warp const& warp, Lanes& lanes, Scratch& scratch,
                                   int count) const {
    warp.for_each_lane(lanes, [&](int, Lane& l) { interact_all(scratch.nodes, count, l); });
    warp.sync();
  }

  template <class Warp, class Lanes>
  KOKKOS_FUNCTION void flush_points(Warp const& warp, Lanes& lanes, Scratch& scratch, int leaves,
                                    int points) const {
    int const width = warp.size();
    for (int chunk = 0; chunk < points; chunk += width) {
      int const count = points - chunk < width ? points - chunk : width;
      warp.for_each_lane(lanes, [&](int lane, Lane&) {
        if (lane >= count)
          return;
        int const flat = chunk + lane;
        int low = 0, high = leaves - 1; // the last leaf starting at or before `flat`
        while (low < high) {
          int const middle = (low + high + 1) / 2;
          if (scratch.leaf_offset[middle] <= flat)
            low = middle;
          else
            high = middle - 1;
        }
        scratch.points[lane] =
            visitor.point_record(scratch.leaf_first[low] + (flat - scratch.leaf_offset[low]));
      });
      warp.sync();
      warp.for_each_lane(lanes, [&](int, Lane& l) { interact_all(scratch.points, count, l); });
      warp.sync();
    }
  }

  template <class Warp, class Lanes>
  KOKKOS_FUNCTION void walk_group(Warp const& warp, Lanes& lanes, Scratch& scratch, Index* stack,
                                  Index first) const {
    int const width = warp.size();
    Index const last = group_end(first);
    Group const group = visitor.group(first, last);
    // Shared second slot: the `extra` queries past the first `width` each have
    // `share` lanes (lane l: query width + l % extra, entries l / extra,
    // l / extra + share, ...).
    int const extra = last - first > width ? int(last - first - width) : 0;
    int const share = extra > 0 ? width / extra : 1;
    warp.for_each_lane(lanes, [&](int lane, Lane& l) {
      for (int s = 0; s < slots; ++s) {
        Index position = first + lane + s * width;
        bool within = position < last;
        if (shared_second_slot && s == 1) {
          within = lane < extra * share;
          position = first + width + (extra > 0 ? lane % extra : 0);
          l.start = extra > 0 ? lane / extra : 0;
          l.stride = share;
        }
        l.query_index[s] = within ? query_at(order, position) : 0;
        l.valid[s] = within && visitor.active(l.query_index[s]);
        if (l.valid[s]) {
          l.query[s] = visitor.query_record(l.query_index[s], position);
          if constexpr (warp_state)
            visitor.initialize(l.query_index[s], l.state[s], scratch.state, lane, s);
          else
            visitor.initialize(l.query_index[s], l.state[s]);
        }
      }
      if (lane == 0)
        stack[0] = Topology::root();
    });
    warp.sync();
    int top = 1, nodes = 0, leaves = 0, points = 0; // warp-uniform
    Index interactions = 0;                           // list entries, warp-uniform
    while (top > 0) {
      int const taken = top < width ? top : width;
      top -= taken;
      warp.for_each_lane(
          lanes, [&](int lane, Lane& l) { l.node = lane < taken ? stack[top + lane] : -1; });
      warp.sync(); // every lane has read its node before the pushes below overwrite it
      warp.for_each_lane(lanes, [&](int, Lane& l) {
        l.kind = skip;
        if (l.node < 0)
          return;
        if constexpr (has_group_skip<Visitor>::value)
          if (visitor.skip(l.node, group))
            return;
        GroupWalkLinks const link = links(l.node);
        if (visitor.accept(l.node, group)) {
          l.kind = accepted;
        } else {
          l.kind = link.count > 0 ? opened : leaf;
          l.first = link.first;
          l.count = link.count > 0 ? link.count : -link.count;
        }
      });
      LaneMask const accepting =
          warp.ballot(lanes, [](int, Lane& l) { return l.kind == accepted; });
      LaneMask const leaves_opened =
          warp.ballot(lanes, [](int, Lane& l) { return l.kind == leaf; });
      int const new_points = warp.exclusive_scan(
          lanes, [](int, Lane& l) { return l.kind == leaf ? int(l.count) : 0; },
          [](int, Lane& l, int before) { l.offset = before; });
      warp.for_each_lane(lanes, [&](int lane, Lane& l) {
        if (l.kind == accepted) {
          scratch.nodes[nodes + lanes_before(accepting, lane)] = visitor.node_record(l.node);
        } else if (l.kind == leaf) {
          int const at = leaves + lanes_before(leaves_opened, lane);
          scratch.leaf_first[at] = l.first;
          scratch.leaf_offset[at] = points + l.offset;
        }
      });
      nodes += popcount(accepting);
      leaves += popcount(leaves_opened);
      points += new_points;
      int const pushed = warp.exclusive_scan(
          lanes, [](int, Lane& l) { return l.kind == opened ? int(l.count) : 0; },
          [](int, Lane& l, int before) { l.offset = before; });
      warp.for_each_lane(lanes, [&](int, Lane& l) {
        if (l.kind != opened)
          return;
        for (Index k = 0; k < l.count; ++k)
          stack[top + l.offset + k] = children(GroupWalkLinks{l.first, l.count}, k);
      });
      top += pushed;
      warp.sync();
      if (nodes >= width)
        flush_nodes(warp, lanes, scratch, nodes), interactions += nodes, nodes = 0;
      if (leaves >= width)
        flush_points(warp, lanes, scratch, leaves, points), interactions += points, leaves = points = 0;
    }
    flush_nodes(warp, lanes, scratch, nodes);
    flush_points(warp, lanes, scratch, leaves, points);
    interactions += nodes + points;
    if constexpr (shared_second_slot)
      if (share > 1) { // each slot-1 query's lanes, joined in lane order by the first
        warp.for_each_lane(lanes, [&](int lane, Lane& l) {
          if (l.valid[1])
            scratch.partial[lane] = l.state[1];
        });
        warp.sync();
        warp.for_each_lane(lanes, [&](int lane, Lane& l) {
          if (lane < extra && l.valid[1])
            for (int helper = lane + extra; helper < extra * share; helper += extra)
              visitor.join(l.state[1], scratch.partial[helper]);
        });
        warp.sync();
      }
    warp.for_each_lane(lanes, [&](int lane, Lane& l) {
      for (int s = 0; s < slots; ++s)
        if (l.valid[s] && (!shared_second_slot || s == 0 || lane < extra)) {
          if (costs.extent(0) != 0)
            costs(l.query_index[s]) = interactions;
          if constexpr (warp_state)
            visitor.finalize(l.query_index[s], l.state[s], scratch.state, lane, s);
          else
            visitor.finalize(l.query_index[s], l.state[s]);
        }
    });
  }

  template <class Warp>
  KOKKOS_FUNCTION void run(Warp const& warp, Index warp_index, Scratch& scratch) const {
    Index* const stack = stacks.data() + std::size_t(warp_index) * std::size_t(stack_capacity);
    typename Warp::template PerLane<Lane> lanes;
    for (;;) {
      Index const group =
          warp.uniform([&] { return Kokkos::atomic_fetch_add(&next_group(), Index(1)); });
      if (group >= group_count)
        break;
      walk_group(warp, lanes, scratch, stack, groups(group));
    }
  }

  // Scratch of `warps` warps, aligned for the records, in whole 8-byte
  // words: Kokkos rounds a request up to them, and a request past the team's
  // scratch gets no memory.
  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes(int warps) {
    return (sizeof(Scratch) * warps + alignof(Scratch) + 7) / 8 * 8;
  }
  template <class Member>
  KOKKOS_FUNCTION static Scratch* scratch_of(Member const& team, int warps) {
    void* const memory = team.team_scratch(0).get_shmem(scratch_bytes(warps));
    if (memory == nullptr)
      Kokkos::abort("treetrav: the group walk's team scratch is missing");
    auto const address = reinterpret_cast<std::uintptr_t>(memory);
    std::uintptr_t const alignment = alignof(Scratch);
    return reinterpret_cast<Scratch*>((address + alignment - 1) / alignment * alignment);
  }
};

// Host backends: a team of one thread runs one emulated warp.
template <class Kernel>
struct HostGroupWalkLaunch {
  Kernel kernel;
  int warp_size;
  template <class Member>
  void operator()(Member const& team) const {
    kernel.run(HostWarp{warp_size}, team.league_rank(), *Kernel::scratch_of(team, 1));
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
// CUDA: teams of `warps_per_team` warps (vector length 1: a team is a block
// of shape (1, 32 * warps_per_team), its rank the linear thread index, so
// each run of 32 ranks is one hardware warp and rank % 32 its lane).
template <class Kernel>
struct CudaGroupWalkLaunch {
  Kernel kernel;
  int warps_per_team;
  template <class Member>
  KOKKOS_FUNCTION void operator()(Member const& team) const {
#if defined(__CUDA_ARCH__)
    if (blockDim.x != 1 || blockDim.z != 1 || blockDim.y % 32 != 0)
      Kokkos::abort("treetrav: group walk teams must be whole warps of vector length 1");
    int const rank = team.team_rank();
    int const warp = rank / 32;
    kernel.run(CudaWarp{rank % 32, 0xffffffffu}, team.league_rank() * warps_per_team + warp,
               Kernel::scratch_of(team, warps_per_team)[warp]);
#else
    (void)team;
#endif
  }
};
#endif

// The per-warp stacks: a warp pops up to W nodes at a time and pushes at most
// arity children for each; every pushed block is deeper than the rest of the
// block it came from, so at most depth + 1 blocks of arity * W entries pile up.
// The group walk's options (traversal/strategies/group_walk.hpp).
struct GroupWalkSettings {
  int group_size;
  int warp_size;
  bool pack_siblings;
};

// What repeated group walks (an N-body run) keep in their Workspace: the
// stacks, grown when a walk needs more.
template <class MemorySpace>
struct GroupWalkStacks {
  Kokkos::View<Index*, MemorySpace> stacks;
};

// What the last group walk over the same queries cost: each query's group's
// interactions. The next walk hands out its costliest groups first, so that
// none starts last and runs on alone while the GPU idles (the costs of a
// group vary tenfold in a galaxy: the centre's bodies pull little, and the
// relative criterion opens more cells for them).
template <class MemorySpace>
struct GroupWalkCosts {
  Kokkos::View<Index*, MemorySpace> costs; // (queries)
  bool recorded = false;
};

// The groups by descending recorded cost (ties: in tree order).
template <class MemorySpace>
struct GroupCostKeys {
  Kokkos::View<Index const*, MemorySpace> groups;
  Kokkos::View<Index const*, MemorySpace> order;
  Kokkos::View<Index const*, MemorySpace> costs;
  Kokkos::View<std::uint32_t*, MemorySpace> keys;
  KOKKOS_FUNCTION void operator()(Index g) const {
    Index const cost = costs(query_at(order, groups(g)));
    keys(g) = ~static_cast<std::uint32_t>(cost > 0 ? cost : 0);
  }
};

template <class MemorySpace>
struct GatherGroups {
  Kokkos::View<Index const*, MemorySpace> groups;
  Kokkos::View<Index const*, MemorySpace> permutation;
  Kokkos::View<Index*, MemorySpace> sorted;
  KOKKOS_FUNCTION void operator()(Index g) const { sorted(g) = groups(permutation(g)); }
};

template <class ExecutionSpace, class MemorySpace>
Kokkos::View<Index*, MemorySpace> costliest_first(ExecutionSpace const& space, Kokkos::View<Index*, MemorySpace> groups,
                                                  Index group_count, Kokkos::View<Index const*, MemorySpace> order,
                                                  Kokkos::View<Index const*, MemorySpace> costs,
                                                  ::treetrav::Workspace& workspace) {
  auto const policy = as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, group_count));
  WorkspaceArrays<ExecutionSpace> const arrays(space, &workspace);
  auto const keys =
      arrays.template make<Kokkos::View<std::uint32_t*, MemorySpace>>("treetrav::GroupWalk::cost_keys", group_count);
  Kokkos::parallel_for("treetrav::GroupWalk::cost_keys", policy,
                       GroupCostKeys<MemorySpace>{groups, order, costs, keys});
  auto const permutation = sort_permutation(space, keys, 32, "treetrav::GroupWalk::by_cost", {}, &workspace);
  auto const sorted =
      arrays.template make<Kokkos::View<Index*, MemorySpace>>("treetrav::GroupWalk::groups_by_cost", group_count);
  Kokkos::parallel_for("treetrav::GroupWalk::groups_by_cost", policy,
                       GatherGroups<MemorySpace>{groups, permutation, sorted});
  return sorted;
}

template <class MemorySpace>
Kokkos::View<Index*, MemorySpace> group_walk_stacks(::treetrav::Workspace& workspace,
                                                    std::size_t size) {
  auto& kept = workspace.get<GroupWalkStacks<MemorySpace>>();
  if (kept.stacks.extent(0) < size)
    kept.stacks = allocate_view<Kokkos::View<Index*, MemorySpace>>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::GroupWalk::stacks"), size);
  return kept.stacks;
}

template <class ExecutionSpace, class Topology, class Visitor>
void traverse_groups(ExecutionSpace const& space, std::string const& label,
                     Topology const& topology, Visitor const& visitor, GroupWalkSettings const& strategy,
                     Kokkos::View<Index const*, typename Topology::memory_space> order,
                     ::treetrav::Workspace& workspace) {
  static_assert(Visitor::group_walk,
                "GroupWalk needs a visitor with the group interface (visitor.hpp)");
  using MemorySpace = typename Topology::memory_space;
  int const width = is_cuda_space_v<ExecutionSpace> ? 32 : strategy.warp_size;
  if (width < 1 || width > 32)
    throw std::invalid_argument("group walk: warp size must be in [1, 32]");
  if (strategy.group_size < 1 || strategy.group_size > 2 * width)
    throw std::invalid_argument("group walk: group size " + std::to_string(strategy.group_size) +
                                " must be in [1, 2 x warp size = " + std::to_string(2 * width) +
                                "]");
  if (topology.size() == 0)
    return;
  // The queries, checked against the points under the root as the walk's tables are made.
  Index const points = order.extent(0) != 0 ? Index(order.extent(0)) : visitor.query_count();
  auto const tables =
      prepare_group_walk(space, topology, visitor, order, points, strategy.group_size, strategy.pack_siblings,
                         &workspace);
  if (tables.group_count == 0)
    return;

  // The costs the last walk over these queries recorded order this one's groups.
  auto& history = workspace.get<GroupWalkCosts<MemorySpace>>();
  Index const queries = visitor.query_count();
  if (history.costs.extent(0) != std::size_t(queries)) {
    history.costs = allocate_view<Kokkos::View<Index*, MemorySpace>>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::GroupWalk::costs"), queries);
    history.recorded = false;
  }
  auto const groups = history.recorded
                          ? costliest_first(space, tables.groups, tables.group_count, order,
                                            Kokkos::View<Index const*, MemorySpace>(history.costs), workspace)
                          : tables.groups;

  using Kernel = GroupWalkKernel<Topology, Visitor>;
  int const warps_per_team = is_cuda_space_v<ExecutionSpace> ? 4 : 1;
  // As many warps as can run at once (on CUDA, half the threads an SM holds).
  Index const resident = is_cuda_space_v<ExecutionSpace> ? Index(space.concurrency() / 64)
                                                         : Index(space.concurrency());
  Index const teams = std::max<Index>(
      1, (std::min(tables.group_count, resident) + warps_per_team - 1) / warps_per_team);
  Index const stack_capacity = Topology::arity * width * (tables.depth + 1);
  auto const next_group = WorkspaceArrays<ExecutionSpace>(space, &workspace)
                              .template make<Kokkos::View<Index, MemorySpace>>("treetrav::GroupWalk::next_group");
  Kokkos::deep_copy(space, next_group, Index(0));
  Kernel kernel{
      topology,
      visitor,
      order,
      tables.links,
      tables.children(),
      groups,
      tables.group_end,
      group_walk_stacks<MemorySpace>(workspace, std::size_t(teams) * warps_per_team *
                                                             std::size_t(stack_capacity)),
      next_group,
      tables.group_count,
      stack_capacity,
      history.costs};
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    auto policy = as_kernel_argument(Kokkos::TeamPolicy<ExecutionSpace>(space, teams, 32 * warps_per_team, 1));
    policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes(warps_per_team)));
    Kokkos::parallel_for(label, policy, CudaGroupWalkLaunch<Kernel>{kernel, warps_per_team});
#endif
  } else {
    auto policy = as_kernel_argument(Kokkos::TeamPolicy<ExecutionSpace>(space, teams, 1));
    policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes(1)));
    Kokkos::parallel_for(label, policy, HostGroupWalkLaunch<Kernel>{kernel, width});
  }
  history.recorded = true;
}

} // namespace treetrav::detail
