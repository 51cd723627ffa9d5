// The locally essential tree (include/treetrav/nbody/essential_tree.hpp says
// what it is and how it is built), compiled once for each backend.
#include <treetrav/core/detail/host_staging.hpp>
#include <treetrav/core/detail/scan.hpp>
#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/nbody/essential_tree.hpp>
#include <treetrav/trees/octree.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace treetrav::nbody {

namespace {

using treetrav::detail::lower_bound;
using treetrav::detail::morton_levels;
using treetrav::detail::RootCube;
using treetrav::detail::SecondMoments;
constexpr int quadrupole_columns = treetrav::detail::OctreeQuadrupoleNode<Kokkos::HostSpace>::quadrupole_columns;

// A cell is (level, the codes of its bodies cut to the level's bits).
KOKKOS_INLINE_FUNCTION int shift_of(int level) { return 3 * (morton_levels - level); }
KOKKOS_INLINE_FUNCTION std::uint64_t first_code(int level, std::uint64_t code) {
  return code >> shift_of(level) << shift_of(level);
}
KOKKOS_INLINE_FUNCTION std::uint64_t last_code(int level, std::uint64_t code) {
  return first_code(level, code) | ((std::uint64_t(1) << shift_of(level)) - 1);
}
// The cell's place in the breadth-first order of all cells of the cube (an
// implicit octree's index: the cells of the levels above, then the prefix):
// sorting cells by it numbers them as the octree builder does, level by level
// and in octant order, the children of a cell consecutive. Fits 64 bits.
KOKKOS_INLINE_FUNCTION std::uint64_t heap_key(int level, std::uint64_t code) {
  return ((std::uint64_t(1) << 3 * level) - 1) / 7 + (code >> shift_of(level));
}
// The level and first code of the cell of a heap_key.
KOKKOS_INLINE_FUNCTION int level_of(std::uint64_t key) {
  int level = 0;
  while (level < morton_levels && key >= ((std::uint64_t(1) << 3 * (level + 1)) - 1) / 7) ++level;
  return level;
}
KOKKOS_INLINE_FUNCTION std::uint64_t code_of(std::uint64_t key) {
  int const level = level_of(key);
  return level == 0 ? 0 : (key - ((std::uint64_t(1) << 3 * level) - 1) / 7) << shift_of(level);
}
template <class Keys>
KOKKOS_INLINE_FUNCTION bool contains(Keys const& sorted, std::uint64_t key) {
  Index const size = static_cast<Index>(sorted.extent(0));
  Index const at = lower_bound(sorted, 0, size, key);
  return at < size && sorted(at) == key;
}

struct BodyBox {
  Coordinate lo[3], hi[3];
};

// Whether every walk from a body (or group) inside `box` takes the cell
// (side `size`, centre `center`, centre of mass `com`) whole: the box stays
// clear of the cell and is far enough by the walk's criterion
// (BarnesHutWalk::far_enough with PackCells' open2), both with a relative
// margin of 1e-5 for the float rounding of the walk's own distances (a few
// float ulps), which also covers the rounding of this test's own sums.
KOKKOS_INLINE_FUNCTION bool taken_whole(Coordinate size, Coordinate const* center, Coordinate const* com,
                                        BodyBox const& box, BarnesHutOptions const& options) {
  constexpr double margin = 1e-5;
  double const half = 0.5 * double(size) * (1 + margin);
  bool apart = false;
  double gap2 = 0, offset2 = 0;
  for (int k = 0; k < 3; ++k) {
    apart = apart || double(box.lo[k]) - center[k] > half || double(center[k]) - box.hi[k] > half;
    double gap = double(box.lo[k]) - com[k];
    gap = double(com[k]) - box.hi[k] > gap ? double(com[k]) - box.hi[k] : gap;
    gap = gap > 0 ? gap : 0.0;
    gap2 += gap * gap;
    double const offset = double(com[k]) - center[k];
    offset2 += offset * offset;
  }
  if (!apart || !(options.theta > 0)) return false;
  if (options.opening == Opening::com_offset) {
    double const open = double(size) / options.theta + math::sqrt(offset2);
    return gap2 * (1 - margin) > double(static_cast<Coordinate>(open * open)) * (1 + margin);
  }
  double const theta2 = static_cast<Coordinate>(options.theta * options.theta);
  return double(size) * size * (1 + margin) < theta2 * gap2 * (1 - margin);
}

// A piece of a rank's reach: a box, and the first code of the cell it lies in (its place on the curve).
struct Region {
  std::uint64_t code;
  BodyBox box;
};

// What a cell of a rank's branches adds to the rank's reach: the box of its
// bodies where the cut along the octree stops (a cell of at most `most`
// bodies, a leaf; below no such cell); above the cut, for group walks, the
// hull of its children of at most group_size bodies, which the walk packs
// into groups (MarkGroups) that only that hull holds whole.
enum ReachPart : std::uint8_t { no_part = 0, cut_cell = 1, small_children = 2 };
template <class MemorySpace>
struct ReachParts {
  TreeTopology<8, MemorySpace> topology;
  Kokkos::View<std::uint8_t*, MemorySpace> branch;
  Index most;
  int group_size;
  KOKKOS_FUNCTION bool stops(Index node) const {
    return topology.point_end(node) - topology.point_begin(node) <= most || topology.child(node, 0) < 0;
  }
  KOKKOS_FUNCTION bool small(Index child) const {
    return topology.point_end(child) - topology.point_begin(child) <= group_size;
  }
  KOKKOS_FUNCTION std::uint8_t operator()(Index node) const {
    if (!branch(node)) return no_part;
    for (Index above = topology.parent(node); above >= 0 && branch(above); above = topology.parent(above))
      if (stops(above)) return no_part;
    if (stops(node)) return cut_cell;
    for (int slot = 0; group_size > 0 && slot < 8 && topology.child(node, slot) >= 0; ++slot)
      if (small(topology.child(node, slot))) return small_children;
    return no_part;
  }
};

// What a rank sends of a cell: its key, its float moments, and what follows
// it: its children (bodies -1), or, a leaf, `bodies` bodies (0: a cell the
// receiver takes whole).
struct CellRecord {
  std::uint64_t code;  // first_code
  std::int32_t level, bodies;
  Coordinate mass, com[3], quadrupole[quadrupole_columns];
};
struct BodyRecord {
  Coordinate x[3], mass;
};
// A branch root's double sums, which the shared cells above it add up.
struct RootMoments {
  std::uint64_t key;  // heap_key
  double moments[4];
  SecondMoments second;
};
// A body of a shared leaf, as every rank receives it.
struct SharedBody {
  std::uint64_t code;
  std::int64_t row;
  Coordinate x[3], mass;
};
// A shared cell of the top, as every rank adds it to its tree.
struct SharedCell {
  std::uint64_t code;
  std::int32_t level, bodies;  // -1: it splits
  Index from;                  // a leaf's first body among the shared leaves' bodies
  std::uint8_t grouping;       // Octree::grouping
};

// A cell of the top of the octree over all bodies: shared (owner -1) or a
// rank's branch; in the order of discovery (level by level, slot order).
struct TopCell {
  int level = 0;
  std::uint64_t prefix = 0;
  std::int64_t count = 0;
  int owner = -1;
  bool split = false;
  std::vector<int> children;
  std::vector<std::int64_t> rank_counts;
  Index begin = 0;  // this rank's first body of the cell, in tree order
  std::uint64_t code() const { return level == 0 ? 0 : prefix << shift_of(level); }
};

// Every rank's `mine`, in rank order; counts[r] values from rank r.
template <class T>
std::vector<T> gathered(Domain const& domain, std::vector<T> const& mine, std::vector<std::size_t>* counts = nullptr) {
  static_assert(std::is_trivially_copyable_v<T>, "gathered sends raw bytes");
  int const p = domain.ranks();
  std::size_t const count = mine.size();
  std::vector<std::size_t> all_counts(p), sizes(p);
  domain.all_gather(&count, std::vector<std::size_t>(p, sizeof count), all_counts.data());
  std::size_t total = 0;
  for (int r = 0; r < p; ++r) sizes[r] = all_counts[r] * sizeof(T), total += all_counts[r];
  std::vector<T> all(total);
  domain.all_gather(mine.data(), sizes, all.data());
  if (counts != nullptr) *counts = all_counts;
  return all;
}

template <class View, class ExecutionSpace, class... Extents>
View make_array(treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays, std::string const& name,
                Extents... extents) {
  return arrays.template make<View>(name, extents...);
}

// `values` copied to an array of `arrays` named `name`.
template <class ExecutionSpace, class T>
Kokkos::View<T*, typename ExecutionSpace::memory_space>
to_space(treetrav::detail::WorkspaceArrays<ExecutionSpace> const& arrays, std::string const& name,
         std::vector<T> const& values) {
  auto const view = arrays.template make<Kokkos::View<T*, typename ExecutionSpace::memory_space>>(name, values.size());
  Kokkos::deep_copy(view, Kokkos::View<T const*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(values.data(),
                                                                                            values.size()));
  return view;
}

template <class T, class View>
std::vector<T> to_vector(View const& view) {
  std::vector<T> values(view.extent(0));
  Kokkos::deep_copy(Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(values.data(), values.size()), view);
  return values;
}

// Whether a cell of the rank's octree goes to a receiver: it lies in a
// branch and no cell above it in the branch is taken whole there.
template <class MemorySpace>
struct Sent {
  Kokkos::View<Index*, MemorySpace> parent;
  Kokkos::View<std::uint8_t*, MemorySpace> branch;
  Kokkos::View<std::uint8_t**, Kokkos::LayoutLeft, MemorySpace> accepted;
  int receiver;
  KOKKOS_FUNCTION bool operator()(Index node) const {
    if (!branch(node)) return false;
    for (Index above = parent(node); above >= 0 && branch(above); above = parent(above))
      if (accepted(above, receiver)) return false;
    return true;
  }
};
// What a cell is to a receiver (Sends): not sent, sent with what follows it, sent taken whole.
enum SendState : std::uint8_t { not_sent = 0, sent_open = 1, sent_whole = 2 };
template <class MemorySpace>
struct CountSentCells {
  Kokkos::View<std::uint8_t**, Kokkos::LayoutLeft, MemorySpace> sends;
  int receiver;
  KOKKOS_FUNCTION Index operator()(Index node) const { return sends(node, receiver) != not_sent ? 1 : 0; }
};
// The bodies a cell sends: a leaf's, unless it is taken whole.
template <class MemorySpace>
struct CountSentBodies {
  Kokkos::View<std::uint8_t**, Kokkos::LayoutLeft, MemorySpace> sends;
  int receiver;
  TreeTopology<8, MemorySpace> topology;
  KOKKOS_FUNCTION Index operator()(Index node) const {
    bool const leaf = topology.child(node, 0) < 0;
    return sends(node, receiver) == sent_open && leaf ? topology.point_end(node) - topology.point_begin(node) : 0;
  }
};
template <class Flags>
struct CountFlagged {
  Flags flags;
  KOKKOS_FUNCTION Index operator()(Index i) const { return flags(i) ? 1 : 0; }
};
// A received leaf's bodies; an internal cell (bodies -1) none.
template <class Records>
struct CountRecordBodies {
  Records records;
  KOKKOS_FUNCTION Index operator()(Index j) const { return records(j).bodies > 0 ? records(j).bodies : 0; }
};
template <class Bodies, class Entries>
struct CountLeaves {
  Bodies bodies;
  Entries entry;  // the cells in breadth-first order
  KOKKOS_FUNCTION Index operator()(Index i) const { return bodies(entry(i)) >= 0 ? 1 : 0; }
};
template <class Bodies, class Entries, class Order>
struct CountLeafBodiesInOrder {
  Bodies bodies;
  Entries leaves;
  Order order;
  KOKKOS_FUNCTION Index operator()(Index q) const { return bodies(leaves(order(q))); }
};
// The positions of the tree holding this rank's bodies (rows < n), in order.
template <class MemorySpace>
struct CountLocal {
  Kokkos::View<Index*, MemorySpace> row;
  Index n;
  KOKKOS_FUNCTION Index operator()(Index i) const { return row(i) < n ? 1 : 0; }
};
template <class MemorySpace>
struct PlaceLocal {
  Kokkos::View<Index*, MemorySpace> row, local_order;
  Index n;
  KOKKOS_FUNCTION void operator()(Index i, Index at) const {
    if (row(i) < n) local_order(at) = row(i);
  }
};

}  // namespace

template <class ExecutionSpace>
EssentialTree<typename ExecutionSpace::memory_space>
build_essential_tree(ExecutionSpace const& space, Domain const& domain,
                     PointSet<typename ExecutionSpace::memory_space> const& bodies,
                     Kokkos::View<Coordinate const*, typename ExecutionSpace::memory_space> masses,
                     Kokkos::View<std::int64_t const*, Kokkos::HostSpace> rows, BarnesHutOptions const& options,
                     int leaf_size, bool quadrupoles, int group_size, Workspace* caller_workspace) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using treetrav::detail::PlaceFirst;
  using treetrav::detail::WorkspaceArrays;
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree");
  int const p = domain.ranks(), me = domain.rank();
  Index const n = bodies.size();
  auto const x = bodies.coordinates;
  std::string const label = "treetrav::nbody::EssentialTree::";
  // On a GPU every array in the caller's workspace (named after the tree's
  // parts): an allocation and its release cost more than most of these
  // kernels. On the host they cost little, and kept arrays would stay beside
  // everything a run allocates later (the snapshots' copies: peak memory).
  Workspace* const workspace = treetrav::detail::host_reachable_v<MemorySpace> ? nullptr : caller_workspace;
  WorkspaceArrays<ExecutionSpace> const arrays(space, workspace);

  auto const laid_out = [&](char const* what, Index count, auto const& input, auto const& output) {
    return treetrav::detail::lay_out_counts(arrays, label + what, count, input, output);
  };

  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::sort");
  // 1. The cube around every rank's box; the bodies sorted by their codes in it.
  Coordinate bounds[6];
  treetrav::detail::bounding_box(space, x, bounds, workspace);
  BodyBox const mine{{bounds[0], bounds[1], bounds[2]}, {bounds[3], bounds[4], bounds[5]}};
  std::vector<BodyBox> const boxes = gathered(domain, std::vector<BodyBox>{mine});
  Coordinate lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = infinity, hi[k] = -infinity;
    for (BodyBox const& box : boxes) lo[k] = std::min(lo[k], box.lo[k]), hi[k] = std::max(hi[k], box.hi[k]);
  }
  RootCube const cube = treetrav::detail::cube_around(lo, hi);
  LevelledOctree<MemorySpace> local;
  local.workspace = workspace;
  Kokkos::View<std::uint64_t const*, MemorySpace> const codes =
      treetrav::detail::sort_octree_bodies(space, local, bodies, masses, cube);

  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::top");
  // 2. The shared cells and the branches, level by level.
  std::vector<TopCell> top;
  {
    std::vector<TopCell> candidates(1);
    std::vector<int> parents{-1};
    while (!candidates.empty()) {
      int const m = static_cast<int>(candidates.size());
      std::vector<std::uint64_t> ranges(2 * std::size_t(m));
      for (int c = 0; c < m; ++c)
        ranges[2 * c] = candidates[c].code(), ranges[2 * c + 1] = last_code(candidates[c].level, candidates[c].code());
      auto const range = to_space(arrays, label + "top_ranges", ranges);
      auto const found = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "top_found", 2 * std::size_t(m));
      Kokkos::parallel_for(
          label + "top_counts", Policy(space, 0, m), KOKKOS_LAMBDA(Index c) {
            Index const begin = lower_bound(codes, 0, n, range(2 * c));
            found(2 * c) = begin;
            found(2 * c + 1) = lower_bound(codes, begin, n, range(2 * c + 1) + 1) - begin;
          });
      std::vector<Index> const here = to_vector<Index>(found);
      std::vector<std::int64_t> counts(m), all(std::size_t(m) * p);
      for (int c = 0; c < m; ++c) counts[c] = here[2 * c + 1];
      domain.all_gather(counts.data(), std::vector<std::size_t>(p, m * sizeof(std::int64_t)), all.data());
      std::vector<TopCell> next;
      std::vector<int> next_parents;
      for (int c = 0; c < m; ++c) {
        TopCell cell = candidates[c];
        cell.begin = here[2 * c];
        int owners = 0;
        for (int r = 0; r < p; ++r) {
          std::int64_t const count = all[std::size_t(r) * m + c];
          cell.rank_counts.push_back(count);
          cell.count += count;
          if (count > 0) ++owners, cell.owner = r;
        }
        if (cell.count == 0) continue;
        int const id = static_cast<int>(top.size());
        if (parents[c] >= 0) top[parents[c]].children.push_back(id);
        if (owners > 1) {
          cell.owner = -1;
          cell.split = cell.count > leaf_size && cell.level < morton_levels;
          if (cell.split)
            for (int d = 0; d < 8; ++d) {
              TopCell child;
              child.level = cell.level + 1;
              child.prefix = cell.prefix * 8 + d;
              next.push_back(child);
              next_parents.push_back(id);
            }
        }
        top.push_back(std::move(cell));
      }
      candidates = std::move(next);
      parents = std::move(next_parents);
    }
  }
  std::vector<std::uint64_t> shared_keys, split_keys;
  for (TopCell const& cell : top)
    if (cell.owner < 0) {
      shared_keys.push_back(heap_key(cell.level, cell.code()));
      if (cell.split) split_keys.push_back(shared_keys.back());
    }
  std::sort(shared_keys.begin(), shared_keys.end());
  std::sort(split_keys.begin(), split_keys.end());

  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::own_tree");
  // 3. This rank's octree, split where the octree of all bodies splits the shared cells.
  Kokkos::View<std::int8_t*, MemorySpace> forced;
  if (!split_keys.empty()) {
    auto const splits = to_space(arrays, label + "split_keys", split_keys);
    forced = make_array<Kokkos::View<std::int8_t*, MemorySpace>>(arrays, label + "forced_splits", n);
    Kokkos::parallel_for(
        label + "forced_splits", Policy(space, 0, n), KOKKOS_LAMBDA(Index i) {
          int level = 0;
          while (level < morton_levels && contains(splits, heap_key(level, codes(i)))) ++level;
          forced(i) = static_cast<std::int8_t>(level);
        });
  }
  treetrav::detail::build_octree_nodes(space, local, codes, leaf_size, cube,
                                       Kokkos::View<std::int8_t const*, MemorySpace>(forced));
  compute_octree_multipoles(space, local, quadrupoles);
  Octree<MemorySpace> const& own = local.tree;
  Index const nodes = own.topology.size();
  // Each node's level and key; whether it lies in a branch (is no shared cell).
  auto const node_level = make_array<Kokkos::View<std::int8_t*, MemorySpace>>(arrays, label + "node_level", nodes);
  auto const node_key = make_array<Kokkos::View<std::uint64_t*, MemorySpace>>(arrays, label + "node_key", nodes);
  auto const branch = make_array<Kokkos::View<std::uint8_t*, MemorySpace>>(arrays, label + "branch", nodes);
  {
    auto const level_begin = local.level_begin;
    auto const point_begin = own.topology.point_begin;
    auto const shared = to_space(arrays, label + "shared_keys", shared_keys);
    Kokkos::parallel_for(
        label + "node_keys", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          int level = 0;
          while (level + 1 < treetrav::detail::octree_level_slots && level_begin(level + 1) <= node) ++level;
          std::uint64_t const key = heap_key(level, codes(point_begin(node)));
          node_level(node) = static_cast<std::int8_t>(level);
          node_key(node) = key;
          branch(node) = contains(shared, key) ? 0 : 1;
        });
  }

  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::gathers");
  // The double sums of every rank's branch roots, for the shared cells above them.
  std::vector<RootMoments> roots;
  {
    std::vector<std::uint64_t> keys;
    for (TopCell const& cell : top)
      if (cell.owner == me) keys.push_back(heap_key(cell.level, cell.code()));
    auto const wanted = to_space(arrays, label + "root_keys", keys);
    auto const found = make_array<Kokkos::View<RootMoments*, MemorySpace>>(arrays, label + "roots", keys.size());
    auto const moments = local.moments;
    auto const second = local.second_moments;
    Kokkos::parallel_for(
        label + "roots", Policy(space, 0, keys.size()), KOKKOS_LAMBDA(Index j) {
          Index const node = lower_bound(node_key, 0, nodes, wanted(j));
          RootMoments root{};
          root.key = wanted(j);
          for (int k = 0; k < 4; ++k) root.moments[k] = moments(node)[k];
          if (second.extent(0) != 0) root.second = second(node);
          found(j) = root;
        });
    roots = gathered(domain, to_vector<RootMoments>(found));
  }

  // The bodies of shared leaves: this rank's, then every rank's.
  std::vector<Index> mine_shared;  // their indices, in the order sent
  std::vector<SharedBody> shared;
  {
    std::vector<Index> from;
    for (TopCell const& cell : top)
      if (cell.owner < 0 && !cell.split)
        for (std::int64_t j = 0; j < cell.rank_counts[me]; ++j) from.push_back(cell.begin + static_cast<Index>(j));
    auto const positions = to_space(arrays, label + "shared_positions", from);
    auto const found = make_array<Kokkos::View<SharedBody*, MemorySpace>>(arrays, label + "shared_bodies", from.size());
    auto const index = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "shared_index", from.size());
    auto const sorted = own.points.points.coordinates;
    auto const original = own.points.original_index;
    auto const mass = own.body_mass;
    Kokkos::parallel_for(
        label + "shared_bodies", Policy(space, 0, from.size()), KOKKOS_LAMBDA(Index j) {
          Index const i = positions(j);
          SharedBody body{};
          body.code = codes(i);
          for (int k = 0; k < 3; ++k) body.x[k] = sorted(i, k);
          body.mass = mass(i);
          found(j) = body;
          index(j) = original(i);
        });
    shared = to_vector<SharedBody>(found);
    mine_shared = to_vector<Index>(index);
    for (std::size_t j = 0; j < shared.size(); ++j) shared[j].row = rows(mine_shared[j]);
  }
  std::vector<std::size_t> shared_counts;
  std::vector<SharedBody> const all_shared = gathered(domain, shared, &shared_counts);

  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::pack");
  // Where each rank's walks start, as boxes (its reach): a cell far enough
  // from every box is far enough from every body and group of the rank. Each
  // rank finds its own and sends them to every rank:
  //  - its branches, cut along its octree into cells of at most 1/reach_cuts
  //    of its bodies (or leaves), each as the box of its bodies; for group
  //    walks also, above the cut, the box of each cell's children of at most
  //    group_size bodies (ReachParts);
  //  - the box of its bodies in each shared leaf, and for group walks in
  //    each shared cell of at most group_size bodies (a group's box spans
  //    only its rank's bodies, BarnesHutWalk::group; in the essential tree a
  //    shared cell is one group only when that small, and never packs its
  //    children together: Octree::grouping).
  // Boxes of the bodies, not the cubes of the top's cells: in a cube, as in
  // the rank's whole box, the empty corners count as near.
  auto const grown = [](BodyBox hull, BodyBox const& box) {
    for (int k = 0; k < 3; ++k) hull.lo[k] = std::min(hull.lo[k], box.lo[k]), hull.hi[k] = std::max(hull.hi[k], box.hi[k]);
    return hull;
  };
  BodyBox const empty{{infinity, infinity, infinity}, {-infinity, -infinity, -infinity}};
  constexpr Index reach_cuts = 1024;
  std::vector<std::size_t> reach_counts;
  std::vector<Region> reach;
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::reach");
  {
    auto const node_box =
        make_array<Kokkos::View<treetrav::detail::OctreeBox*, MemorySpace>>(arrays, label + "node_box", nodes);
    treetrav::detail::octree_boxes(space, local, node_box);
    ReachParts<MemorySpace> const parts{own.topology, branch, std::max<Index>(1, n / reach_cuts), group_size};
    auto const part = make_array<Kokkos::View<std::uint8_t*, MemorySpace>>(arrays, label + "reach_part", nodes);
    Kokkos::parallel_for(
        label + "reach_parts", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) { part(node) = parts(node); });
    auto const part_at = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "reach_at", nodes);
    Index const count =
        laid_out("count_reach", nodes, CountFlagged<decltype(part)>{part}, PlaceFirst<MemorySpace>{part_at});
    auto const found = make_array<Kokkos::View<Region*, MemorySpace>>(arrays, label + "reach_cells", count);
    auto const topology = own.topology;
    Kokkos::parallel_for(
        label + "reach_cells", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          if (part(node) == no_part) return;
          // A cut cell's box, or the hull of the small children's.
          treetrav::detail::OctreeBox box = node_box(node);
          if (part(node) == small_children) {
            bool first = true;
            for (int slot = 0; slot < 8 && topology.child(node, slot) >= 0; ++slot) {
              Index const child = topology.child(node, slot);
              if (!parts.small(child)) continue;
              treetrav::detail::OctreeBox const more = node_box(child);
              for (int k = 0; k < 3; ++k) {
                box.low[k] = first || more.low[k] < box.low[k] ? more.low[k] : box.low[k];
                box.high[k] = first || more.high[k] > box.high[k] ? more.high[k] : box.high[k];
              }
              first = false;
            }
          }
          Region region;
          region.code = first_code(node_level(node), codes(topology.point_begin(node)));
          for (int k = 0; k < 3; ++k) region.box.lo[k] = box.low[k], region.box.hi[k] = box.high[k];
          found(part_at(node)) = region;
        });
    std::vector<Region> mine_reach = to_vector<Region>(found);
    // The shared cells' pieces: runs of the rank's bodies (first, count) in
    // tree order, each piece's box their hull: in each shared leaf; for
    // group walks in each shared cell of at most group_size bodies (all
    // ranks'), the only shared cells a group may be (SharedCell::grouping).
    std::vector<Index> pieces;  // first, count, piece
    for (TopCell const& cell : top)
      if (cell.owner < 0 && cell.rank_counts[me] > 0 &&
          (!cell.split || (group_size > 0 && cell.count <= group_size))) {
        pieces.insert(pieces.end(), {cell.begin, Index(cell.rank_counts[me]), Index(mine_reach.size())});
        mine_reach.push_back(Region{cell.code(), empty});
      }
    auto const runs = to_space(arrays, label + "reach_pieces", pieces);
    auto const run_boxes = make_array<Kokkos::View<BodyBox*, MemorySpace>>(arrays, label + "reach_piece_boxes",
                                                                           pieces.size() / 3);
    auto const sorted = own.points.points.coordinates;
    Kokkos::parallel_for(
        label + "reach_pieces", Policy(space, 0, pieces.size() / 3), KOKKOS_LAMBDA(Index j) {
          Index const first = runs(3 * j), count = runs(3 * j + 1);
          BodyBox box;
          for (int k = 0; k < 3; ++k) box.lo[k] = box.hi[k] = sorted(first, k);
          for (Index i = first + 1; i < first + count; ++i)
            for (int k = 0; k < 3; ++k) {
              Coordinate const x = sorted(i, k);
              box.lo[k] = x < box.lo[k] ? x : box.lo[k];
              box.hi[k] = x > box.hi[k] ? x : box.hi[k];
            }
          run_boxes(j) = box;
        });
    std::vector<BodyBox> const piece_boxes = to_vector<BodyBox>(run_boxes);
    for (std::size_t j = 0; j < piece_boxes.size(); ++j) {
      BodyBox& box = mine_reach[pieces[3 * j + 2]].box;
      box = grown(box, piece_boxes[j]);
    }
    std::sort(mine_reach.begin(), mine_reach.end(), [](Region const& a, Region const& b) { return a.code < b.code; });
    reach = gathered(domain, mine_reach, &reach_counts);
  }
  Kokkos::Profiling::popRegion();

  // 4. Every other rank's share of the branches, selected and packed here.
  // The exchange's host side: on a GPU page-locked memory kept in the
  // workspace (copies into fresh pageable memory fault its pages in one at a
  // time, at a small fraction of the bus's speed: core/detail/host_staging.hpp).
  using Staging = treetrav::detail::staging_space_t<MemorySpace>;
  Workspace own_staging;
  auto& staging = (workspace != nullptr ? *workspace : own_staging)
                      .template get<treetrav::detail::NamedBuffers<Staging>>();
  // Where MPI takes device memory the records go from and to the kernels'
  // arrays themselves, and nothing is staged.
  bool const direct = !treetrav::detail::host_reachable_v<MemorySpace> && domain.takes_device_memory();
  // The kernels' array of `count` values for a staged one: the staging itself
  // where the host reaches MemorySpace.
  auto const beside = [&](auto const& staged, char const* member, std::size_t count) {
    using T = typename std::decay_t<decltype(staged)>::non_const_value_type;
    if constexpr (treetrav::detail::host_reachable_v<MemorySpace>)
      return Kokkos::View<T*, MemorySpace>(staged);
    else
      return make_array<Kokkos::View<T*, MemorySpace>>(arrays, label + member, count);
  };
  std::vector<std::size_t> cells_sent(p, 0), bodies_sent(p, 0);
  std::size_t cells_out_count = 0, bodies_out_count = 0;
  auto const cell_at = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "cell_at", std::size_t(nodes) * p);
  auto const body_at = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "body_at", std::size_t(nodes) * p);
  auto const accepted =
      make_array<Kokkos::View<std::uint8_t**, Kokkos::LayoutLeft, MemorySpace>>(arrays, label + "accepted", nodes, p);
  auto const sends =
      make_array<Kokkos::View<std::uint8_t**, Kokkos::LayoutLeft, MemorySpace>>(arrays, label + "sends", nodes, p);
  if (p > 1) {
    // A receiver's boxes in Morton order, in runs of about equal count, each
    // with its hull, and the hull of all: a cell a hull takes whole, the
    // boxes in it take whole.
    constexpr std::size_t reach_runs = 64;
    std::vector<BodyBox> boxes_of(reach.size()), hulls;
    std::vector<int> run_first{0}, first_run(p + 1, 0);
    std::size_t at = 0;
    std::vector<BodyBox> all_of(p, empty);
    for (int r = 0; r < p; ++r) {
      std::size_t const count = reach_counts[r], runs = std::min(reach_runs, count);
      for (std::size_t run = 0; run < runs; ++run) {
        BodyBox hull = empty;
        for (std::size_t i = at + run * count / runs; i < at + (run + 1) * count / runs; ++i)
          boxes_of[i] = reach[i].box, hull = grown(hull, reach[i].box);
        hulls.push_back(hull);
        run_first.push_back(static_cast<int>(at + (run + 1) * count / runs));
        all_of[r] = grown(all_of[r], hull);
      }
      first_run[r + 1] = static_cast<int>(hulls.size());
      at += count;
    }
    auto const boxes_here = to_space(arrays, label + "reach", boxes_of);
    auto const run_hulls = to_space(arrays, label + "reach_runs", hulls);
    auto const run_begin = to_space(arrays, label + "reach_run_first", run_first);
    auto const receiver_runs = to_space(arrays, label + "reach_first_run", first_run);
    auto const receiver_hull = to_space(arrays, label + "reach_hulls", all_of);
    auto const size = own.cell_size;
    auto const center = own.cell_center;
    auto const com = own.center_of_mass;
    Kokkos::parallel_for(
        label + "accepted", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          Coordinate const c[3] = {center(node, 0), center(node, 1), center(node, 2)};
          Coordinate const g[3] = {com(node, 0), com(node, 1), com(node, 2)};
          for (int r = 0; r < p; ++r) {
            bool whole = r != me && branch(node) != 0;
            if (whole && !taken_whole(size(node), c, g, receiver_hull(r), options))
              for (int run = receiver_runs(r); whole && run < receiver_runs(r + 1); ++run)
                if (!taken_whole(size(node), c, g, run_hulls(run), options))
                  for (int b = run_begin(run); whole && b < run_begin(run + 1); ++b)
                    whole = taken_whole(size(node), c, g, boxes_here(b), options);
            accepted(node, r) = whole ? 1 : 0;
          }
        });
    auto const topology = own.topology;
    // Each cell's state for each receiver, once for the counts and the packing.
    Kokkos::parallel_for(
        label + "sends", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          for (int r = 0; r < p; ++r)
            sends(node, r) = r == me || !Sent<MemorySpace>{topology.parent, branch, accepted, r}(node) ? not_sent
                             : accepted(node, r)                                                        ? sent_whole
                                                                                                         : sent_open;
        });
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      Kokkos::View<Index*, MemorySpace> const cells_here(cell_at.data() + std::size_t(nodes) * r, nodes);
      Kokkos::View<Index*, MemorySpace> const bodies_here(body_at.data() + std::size_t(nodes) * r, nodes);
      cells_sent[r] = static_cast<std::size_t>(
          laid_out("count_cells", nodes, CountSentCells<MemorySpace>{sends, r}, PlaceFirst<MemorySpace>{cells_here}));
      bodies_sent[r] = static_cast<std::size_t>(laid_out(
          "count_bodies", nodes, CountSentBodies<MemorySpace>{sends, r, topology}, PlaceFirst<MemorySpace>{bodies_here}));
      cells_out_count += cells_sent[r];
      bodies_out_count += bodies_sent[r];
    }
  }
  // Every receiver's records in one array, in rank order: one pass, one copy.
  auto const cells_out =
      staging[label + "cells_out"].template get<CellRecord>(space, direct ? 0 : cells_out_count, true);
  auto const bodies_out =
      staging[label + "bodies_out"].template get<BodyRecord>(space, direct ? 0 : bodies_out_count, true);
  auto const cells = beside(cells_out, "cells_out", cells_out_count);
  auto const sent_bodies = beside(bodies_out, "bodies_out", bodies_out_count);
  if (p > 1) {
    std::vector<Index> cell_first(p, 0), body_first(p, 0);
    for (int r = 1; r < p; ++r)
      cell_first[r] = cell_first[r - 1] + Index(cells_sent[r - 1]),
      body_first[r] = body_first[r - 1] + Index(bodies_sent[r - 1]);
    auto const cell_base = to_space(arrays, label + "cell_first", cell_first);
    auto const body_base = to_space(arrays, label + "body_first", body_first);
    auto const topology = own.topology;
    auto const sorted = own.points.points.coordinates;
    auto const body_mass = own.body_mass;
    auto const mass = own.mass;
    auto const com = own.center_of_mass;
    auto const quadrupole = own.quadrupole;
    Kokkos::parallel_for(
        label + "pack", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          for (int r = 0; r < p; ++r) {
            if (sends(node, r) == not_sent) continue;
            CellRecord record{};
            int const level = node_level(node);
            Index const begin = topology.point_begin(node), end = topology.point_end(node);
            record.code = first_code(level, codes(begin));
            record.level = level;
            bool const leaf = topology.child(node, 0) < 0;
            record.bodies = sends(node, r) == sent_whole ? 0 : leaf ? end - begin : -1;
            record.mass = mass(node);
            for (int k = 0; k < 3; ++k) record.com[k] = com(node, k);
            if (quadrupole.extent(0) != 0)
              for (int k = 0; k < quadrupole_columns; ++k) record.quadrupole[k] = quadrupole(node, k);
            cells(cell_base(r) + cell_at(std::size_t(nodes) * r + node)) = record;
            Index const at = body_base(r) + body_at(std::size_t(nodes) * r + node);
            for (Index i = begin; record.bodies > 0 && i < end; ++i) {
              BodyRecord body;
              for (int k = 0; k < 3; ++k) body.x[k] = sorted(i, k);
              body.mass = body_mass(i);
              sent_bodies(at + (i - begin)) = body;
            }
          }
        });
    if (!direct) {
      Kokkos::deep_copy(space, cells_out, cells);  // nothing to copy when they are one array
      Kokkos::deep_copy(space, bodies_out, sent_bodies);
    }
    space.fence();
  }
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::exchange");
  // The received records in the kernels' array: written there by MPI, or staged and copied.
  auto const exchange = [&](auto const& staged_out, auto const& out, std::vector<std::size_t> const& counts,
                            char const* member) {
    using T = typename std::decay_t<decltype(out)>::non_const_value_type;
    std::vector<std::size_t> sends(p);
    for (int r = 0; r < p; ++r) sends[r] = counts[r] * sizeof(T);
    std::vector<std::size_t> const receives = domain.exchange_sizes(sends);
    std::size_t total = 0;
    for (std::size_t bytes : receives) total += bytes / sizeof(T);
    auto const staged_in = staging[label + member].template get<T>(space, direct ? 0 : total, true);
    auto const in = beside(staged_in, member, total);
    if (direct) {
      domain.all_to_all(out.data(), sends, in.data(), receives);
    } else {
      domain.all_to_all(staged_out.data(), sends, staged_in.data(), receives);
      Kokkos::deep_copy(space, in, staged_in);  // nothing to copy when they are one array
    }
    return in;
  };
  auto const in = exchange(cells_out, cells, cells_sent, "cells_in");
  auto const in_bodies = exchange(bodies_out, sent_bodies, bodies_sent, "bodies_in");
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::assembly");
  // 5. The assembly. The bodies: this rank's octree's (those of shared
  // leaves are not taken from there), the received ones, then the shared
  // leaves' bodies, each leaf's ordered as one process orders them.
  Index const received_cells = static_cast<Index>(in.extent(0));
  Index const received_bodies = static_cast<Index>(in_bodies.extent(0));
  std::vector<SharedCell> shared_cells;
  std::vector<BodyRecord> shared_pool;
  std::vector<Index> shared_rows;
  Index imported_shared = 0;
  {
    std::vector<std::size_t> cursor(p, 0);
    for (int r = 1; r < p; ++r) cursor[r] = cursor[r - 1] + shared_counts[r - 1];
    std::size_t const mine_first = cursor[me];
    Index next_row = n + received_bodies;
    struct Member {
      std::uint64_t code;
      std::int64_t row;
      std::size_t at;
      bool operator<(Member const& other) const {
        return code != other.code ? code < other.code : row < other.row;
      }
    };
    std::vector<Member> members;
    for (TopCell const& cell : top) {
      if (cell.owner >= 0) continue;
      // A group walk packs none of its children together, and takes it as
      // one group only when all ranks' bodies in it are few enough (the
      // reach holds each rank's bodies in such a cell, not in its children).
      std::uint8_t const grouping =
          group_size <= 0 ? 0
                          : Octree<MemorySpace>::children_apart |
                                (cell.count > group_size ? Octree<MemorySpace>::never_one_group : 0);
      SharedCell entry{cell.code(), cell.level, -1, 0, grouping};
      if (!cell.split) {
        members.clear();
        for (int r = 0; r < p; ++r)
          for (std::int64_t j = 0; j < cell.rank_counts[r]; ++j, ++cursor[r])
            members.push_back(Member{all_shared[cursor[r]].code, all_shared[cursor[r]].row, cursor[r]});
        std::sort(members.begin(), members.end());
        entry.bodies = static_cast<std::int32_t>(members.size());
        entry.from = static_cast<Index>(shared_pool.size());
        for (Member const& member : members) {
          SharedBody const& body = all_shared[member.at];
          shared_pool.push_back(BodyRecord{{body.x[0], body.x[1], body.x[2]}, body.mass});
          bool const own_body = member.at >= mine_first && member.at < mine_first + shared_counts[me];
          shared_rows.push_back(own_body ? mine_shared[member.at - mine_first] : next_row++);
          imported_shared += own_body ? 0 : 1;
        }
      }
      shared_cells.push_back(entry);
    }
  }
  Index const rows_total = n + received_bodies + imported_shared;

  // The cells (entries): this rank's branch cells, the received cells, the
  // shared cells. Each its key, its bodies (-1: it has children), where they
  // start in its source's bodies, and the cell in its source.
  auto const own_at = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "own_at", nodes);
  Index const own_cells =
      laid_out("count_own", nodes, CountFlagged<decltype(branch)>{branch}, PlaceFirst<MemorySpace>{own_at});
  Index const first_shared = own_cells + received_cells;
  Index const cell_count = first_shared + static_cast<Index>(shared_cells.size());
  auto const entry_key = make_array<Kokkos::View<std::uint64_t*, MemorySpace>>(arrays, label + "entry_key", cell_count);
  auto const entry_bodies = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "entry_bodies", cell_count);
  auto const entry_from = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "entry_from", cell_count);
  auto const entry_source = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "entry_source", cell_count);
  auto const more = to_space(arrays, label + "shared_pool", shared_pool);
  auto const top_cells = to_space(arrays, label + "shared_cells", shared_cells);
  auto const more_rows = to_space(arrays, label + "shared_rows", shared_rows);
  {
    auto const topology = own.topology;
    Kokkos::parallel_for(
        label + "own_cells", Policy(space, 0, nodes), KOKKOS_LAMBDA(Index node) {
          if (!branch(node)) return;
          Index const e = own_at(node);
          entry_key(e) = node_key(node);
          entry_bodies(e) = topology.child(node, 0) < 0 ? topology.point_end(node) - topology.point_begin(node) : -1;
          entry_from(e) = topology.point_begin(node);
          entry_source(e) = node;
        });
    auto const body_from = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "received_from", received_cells);
    laid_out("place_received", received_cells, CountRecordBodies<decltype(in)>{in},
             PlaceFirst<MemorySpace>{body_from});
    Kokkos::parallel_for(
        label + "received_cells", Policy(space, 0, received_cells), KOKKOS_LAMBDA(Index j) {
          Index const e = own_cells + j;
          entry_key(e) = heap_key(in(j).level, in(j).code);
          entry_bodies(e) = in(j).bodies;
          entry_from(e) = body_from(j);
          entry_source(e) = j;
        });
    Kokkos::parallel_for(
        label + "shared_cells", Policy(space, 0, top_cells.extent(0)), KOKKOS_LAMBDA(Index j) {
          Index const e = first_shared + j;
          entry_key(e) = heap_key(top_cells(j).level, top_cells(j).code);
          entry_bodies(e) = top_cells(j).bodies;
          entry_from(e) = top_cells(j).from;
          entry_source(e) = j;
        });
  }

  // Breadth-first: by key. Leaves (taken-whole cells included) in depth-first order: by code.
  auto const keys = make_array<Kokkos::View<std::uint64_t*, MemorySpace>>(arrays, label + "keys", cell_count);
  Kokkos::View<Index*, MemorySpace> const order =
      treetrav::detail::sort_permutation(space, entry_key, 64, label + "cells", keys, workspace);
  auto const leaf_at = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "leaf_at", cell_count);
  Index const leaf_count =
      laid_out("count_leaves", cell_count, CountLeaves<decltype(entry_bodies), decltype(order)>{entry_bodies, order},
               PlaceFirst<MemorySpace>{leaf_at});
  auto const leaves = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "leaves", leaf_count);
  auto const leaf_code = make_array<Kokkos::View<std::uint64_t*, MemorySpace>>(arrays, label + "leaf_code", leaf_count);
  Kokkos::parallel_for(
      label + "leaves", Policy(space, 0, cell_count), KOKKOS_LAMBDA(Index i) {
        if (entry_bodies(order(i)) < 0) return;
        leaves(leaf_at(i)) = order(i);
        leaf_code(leaf_at(i)) = code_of(keys(i));
      });
  auto const leaf_codes =
      make_array<Kokkos::View<std::uint64_t*, MemorySpace>>(arrays, label + "sorted_leaf_codes", leaf_count);
  Kokkos::View<Index*, MemorySpace> const leaf_order = treetrav::detail::sort_permutation(
      space, leaf_code, 3 * morton_levels, label + "leaves", leaf_codes, workspace);
  auto const leaf_start = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "leaf_start", leaf_count + 1);
  Index const tree_bodies =
      laid_out("count_tree_bodies", leaf_count,
               CountLeafBodiesInOrder<decltype(entry_bodies), decltype(leaves), decltype(leaf_order)>{
                   entry_bodies, leaves, leaf_order},
               PlaceFirst<MemorySpace>{leaf_start});
  if (tree_bodies != rows_total)
    throw std::logic_error("essential tree: " + std::to_string(tree_bodies) + " bodies in leaves for " +
                           std::to_string(rows_total) + " rows");
  Kokkos::deep_copy(space, Kokkos::subview(leaf_start, leaf_count), tree_bodies);

  EssentialTree<MemorySpace> result;
  result.imported_cells = received_cells;
  result.imported_bodies = std::int64_t(received_bodies) + imported_shared;
  using Tree = Octree<MemorySpace>;
  Tree& tree = result.tree;
  tree.topology.children = make_array<decltype(tree.topology.children)>(arrays, label + "children", cell_count, 8);
  tree.topology.parent = make_array<decltype(tree.topology.parent)>(arrays, label + "parent", cell_count);
  tree.topology.point_begin = make_array<decltype(tree.topology.parent)>(arrays, label + "point_begin", cell_count);
  tree.topology.point_end = make_array<decltype(tree.topology.parent)>(arrays, label + "point_end", cell_count);
  tree.mass = make_array<typename Tree::scalar_view>(arrays, label + "mass", cell_count);
  tree.center_of_mass = make_array<typename Tree::vector_view>(arrays, label + "center_of_mass", cell_count, 3);
  tree.cell_center = make_array<typename Tree::vector_view>(arrays, label + "cell_center", cell_count, 3);
  tree.cell_size = make_array<typename Tree::scalar_view>(arrays, label + "cell_size", cell_count);
  if (quadrupoles)
    tree.quadrupole =
        make_array<typename Tree::vector_view>(arrays, label + "quadrupole", cell_count, quadrupole_columns);
  if (group_size > 0)
    tree.grouping = make_array<Kokkos::View<std::uint8_t*, MemorySpace>>(arrays, label + "grouping", cell_count);
  {
    auto const t = tree;
    auto const mass = own.mass;
    auto const com = own.center_of_mass;
    auto const quadrupole = own.quadrupole;
    Kokkos::parallel_for(
        label + "cells", Policy(space, 0, cell_count), KOKKOS_LAMBDA(Index i) {
          Index const e = order(i);
          int const level = level_of(keys(i));
          std::uint64_t const code = code_of(keys(i));
          t.topology.parent(i) = level == 0 ? Index(-1) : lower_bound(keys, 0, i, heap_key(level - 1, code));
          Index child = 0, children = 0;
          if (entry_bodies(e) < 0) {
            std::uint64_t const base = heap_key(level + 1, code);
            child = lower_bound(keys, i + 1, cell_count, base);
            children = lower_bound(keys, child, cell_count, base + 8) - child;
          }
          for (int slot = 0; slot < 8; ++slot) t.topology.children(i, slot) = slot < children ? child + slot : Index(-1);
          t.topology.point_begin(i) = leaf_start(lower_bound(leaf_codes, 0, leaf_count, code));
          t.topology.point_end(i) = leaf_start(lower_bound(leaf_codes, 0, leaf_count, last_code(level, code) + 1));
          // As build_octree_nodes' FillNodes.
          double const side = cube.side / double(std::uint64_t(1) << level);
          for (int k = 0; k < 3; ++k) {
            auto const cell = treetrav::detail::compact_by_3(code >> k) >> (morton_levels - level);
            t.cell_center(i, k) = static_cast<Coordinate>(cube.corner[k] + (double(cell) + 0.5) * side);
          }
          t.cell_size(i) = static_cast<Coordinate>(side);
          // The moments: an own cell's, a received one's; a shared cell's come last.
          Index const source = entry_source(e);
          bool const own_cell = e < own_cells, shared_cell = e >= first_shared;
          if (t.grouping.extent(0) != 0) t.grouping(i) = shared_cell ? top_cells(source).grouping : 0;
          t.mass(i) = shared_cell ? Coordinate(0) : own_cell ? mass(source) : in(source).mass;
          for (int k = 0; k < 3; ++k)
            t.center_of_mass(i, k) = shared_cell ? Coordinate(0) : own_cell ? com(source, k) : in(source).com[k];
          if (t.quadrupole.extent(0) != 0)
            for (int k = 0; k < quadrupole_columns; ++k)
              t.quadrupole(i, k) = shared_cell ? Coordinate(0)
                                   : own_cell  ? quadrupole(source, k)
                                               : in(source).quadrupole[k];
        });
  }
  using Coordinates = typename PointSet<MemorySpace>::coordinates_view;
  tree.points.points = PointSet<MemorySpace>(make_array<Coordinates>(arrays, label + "tree_bodies", tree_bodies, 3));
  tree.points.original_index =
      make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "original_index", tree_bodies);
  tree.body_mass = make_array<typename Tree::scalar_view>(arrays, label + "body_mass", tree_bodies);
  result.bodies = PointSet<MemorySpace>(make_array<Coordinates>(arrays, label + "bodies", rows_total, 3));
  {
    auto const t = tree;
    auto const all = result.bodies.coordinates;
    auto const sorted = own.points.points.coordinates;
    auto const body_mass = own.body_mass;
    auto const original = own.points.original_index;
    // A leaf's bodies from its source: this rank's octree (rows: their own),
    // the received bodies (rows n, n + 1, ...), the shared leaves' (rows as placed).
    Kokkos::parallel_for(
        label + "tree_bodies", Policy(space, 0, leaf_count), KOKKOS_LAMBDA(Index q) {
          Index const e = leaves(leaf_order(q));
          Index const start = leaf_start(q), from = entry_from(e);
          for (Index j = 0; j < entry_bodies(e); ++j) {
            Index const to = start + j, i = from + j;
            BodyRecord body;
            Index row;
            if (e < own_cells) {
              for (int k = 0; k < 3; ++k) body.x[k] = sorted(i, k);
              body.mass = body_mass(i);
              row = original(i);
            } else if (e < first_shared) {
              body = in_bodies(i);
              row = n + i;
            } else {
              body = more(i);
              row = more_rows(i);
            }
            for (int k = 0; k < 3; ++k) {
              t.points.points.coordinates(to, k) = body.x[k];
              all(row, k) = body.x[k];
            }
            t.body_mass(to) = body.mass;
            t.points.original_index(to) = row;
          }
        });
  }
  result.local_order = make_array<Kokkos::View<Index*, MemorySpace>>(arrays, label + "local_order", n);
  Index const local_count = laid_out("count_local", tree_bodies, CountLocal<MemorySpace>{tree.points.original_index, n},
                                     PlaceLocal<MemorySpace>{tree.points.original_index, result.local_order, n});
  if (local_count != n)
    throw std::logic_error("essential tree: " + std::to_string(local_count) + " of " + std::to_string(n) +
                           " local bodies placed");

  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::pushRegion("treetrav::nbody::essential_tree::shared_moments");
  // The shared cells' moments, deepest first, by the octree's upward
  // functors (the same sums as one process's upward pass), on a small
  // octree of the shared cells and the branch roots below them that shares
  // the essential tree's bodies: from a leaf's bodies or a cell's children,
  // every branch root's double sums set first.
  {
    std::vector<std::uint64_t> small_keys = shared_keys;
    for (RootMoments const& root : roots) small_keys.push_back(root.key);
    std::sort(small_keys.begin(), small_keys.end());
    Index const cells = static_cast<Index>(small_keys.size());
    auto const small_key = to_space(arrays, label + "small_keys", small_keys);
    auto const shared_key = to_space(arrays, label + "small_shared", shared_keys);
    Tree small;
    small.topology.children = make_array<decltype(small.topology.children)>(arrays, label + "small_children", cells, 8);
    small.topology.point_begin = make_array<decltype(small.topology.parent)>(arrays, label + "small_begin", cells);
    small.topology.point_end = make_array<decltype(small.topology.parent)>(arrays, label + "small_end", cells);
    small.points = tree.points;
    small.body_mass = tree.body_mass;
    small.mass = make_array<typename Tree::scalar_view>(arrays, label + "small_mass", cells);
    small.center_of_mass = make_array<typename Tree::vector_view>(arrays, label + "small_com", cells, 3);
    small.cell_center = make_array<typename Tree::vector_view>(arrays, label + "small_center", cells, 3);
    if (quadrupoles)
      small.quadrupole =
          make_array<typename Tree::vector_view>(arrays, label + "small_quadrupole", cells, quadrupole_columns);
    auto const moments = make_array<Kokkos::View<MassMoments*, MemorySpace>>(arrays, label + "small_moments", cells);
    auto const second = make_array<Kokkos::View<SecondMoments*, MemorySpace>>(arrays, label + "small_second",
                                                                              quadrupoles ? cells : 0);
    auto const t = tree, s = small;
    Kokkos::parallel_for(
        label + "small_cells", Policy(space, 0, cells), KOKKOS_LAMBDA(Index c) {
          Index const i = lower_bound(keys, 0, cell_count, small_key(c));
          bool const shared = contains(shared_key, small_key(c));
          for (int slot = 0; slot < 8; ++slot) {
            Index const child = shared ? t.topology.children(i, slot) : Index(-1);
            s.topology.children(c, slot) = child < 0 ? Index(-1) : lower_bound(small_key, 0, cells, keys(child));
          }
          s.topology.point_begin(c) = t.topology.point_begin(i);
          s.topology.point_end(c) = t.topology.point_end(i);
          s.mass(c) = t.mass(i);
          for (int k = 0; k < 3; ++k) {
            s.center_of_mass(c, k) = t.center_of_mass(i, k);
            s.cell_center(c, k) = t.cell_center(i, k);
          }
        });
    auto const root_moments = to_space(arrays, label + "root_moments", roots);
    Kokkos::parallel_for(
        label + "root_moments", Policy(space, 0, root_moments.extent(0)), KOKKOS_LAMBDA(Index j) {
          Index const c = lower_bound(small_key, 0, cells, root_moments(j).key);
          for (int k = 0; k < 4; ++k) moments(c)[k] = root_moments(j).moments[k];
          if (second.extent(0) != 0) second(c) = root_moments(j).second;
        });
    std::vector<std::pair<int, std::uint64_t>> by_level;  // deepest first
    for (TopCell const& cell : top)
      if (cell.owner < 0) by_level.emplace_back(-cell.level, heap_key(cell.level, cell.code()));
    std::sort(by_level.begin(), by_level.end());
    std::vector<std::uint64_t> level_keys;
    for (auto const& entry : by_level) level_keys.push_back(entry.second);
    auto const shared_here = to_space(arrays, label + "shared_by_level", level_keys);
    treetrav::detail::OctreeMomentsNode<MemorySpace> const sum_moments{small, moments};
    treetrav::detail::OctreeQuadrupoleNode<MemorySpace> const sum_second{small, second};
    for (std::size_t begin = 0; begin < by_level.size();) {
      std::size_t end = begin;
      while (end < by_level.size() && by_level[end].first == by_level[begin].first) ++end;
      Kokkos::parallel_for(
          label + "shared_moments", Policy(space, begin, end), KOKKOS_LAMBDA(Index j) {
            Index const c = lower_bound(small_key, 0, cells, shared_here(j));
            auto const children = treetrav::detail::load_children(s.topology, c);
            sum_moments(c, children);
            if (second.extent(0) != 0) sum_second(c, children);
          });
      begin = end;
    }
    Kokkos::parallel_for(
        label + "shared_results", Policy(space, 0, shared_key.extent(0)), KOKKOS_LAMBDA(Index j) {
          Index const c = lower_bound(small_key, 0, cells, shared_key(j));
          Index const i = lower_bound(keys, 0, cell_count, shared_key(j));
          t.mass(i) = s.mass(c);
          for (int k = 0; k < 3; ++k) t.center_of_mass(i, k) = s.center_of_mass(c, k);
          if (t.quadrupole.extent(0) != 0)
            for (int k = 0; k < quadrupole_columns; ++k) t.quadrupole(i, k) = s.quadrupole(c, k);
        });
  }
  space.fence();
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();
  return result;
}

#define TREETRAV_ESSENTIAL_TREE_ON(Space)                                                                  \
  template EssentialTree<Space::memory_space> build_essential_tree<Space>(                               \
      Space const&, Domain const&, PointSet<Space::memory_space> const&,                                   \
      Kokkos::View<Coordinate const*, Space::memory_space>, Kokkos::View<std::int64_t const*, Kokkos::HostSpace>, \
      BarnesHutOptions const&, int, bool, int, Workspace*);
#ifdef TREETRAV_ENABLE_SERIAL
TREETRAV_ESSENTIAL_TREE_ON(Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
TREETRAV_ESSENTIAL_TREE_ON(Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
TREETRAV_ESSENTIAL_TREE_ON(Kokkos::Cuda)
#endif

}  // namespace treetrav::nbody
