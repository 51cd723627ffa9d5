#include <treetrav/core/error.hpp>
#include <treetrav/distributed/detail/splitters.hpp>
#include <treetrav/distributed/nbody_domain.hpp>
#include <treetrav/trees/octree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace treetrav::distributed {

namespace {

using treetrav::detail::morton_levels;
using treetrav::detail::RootCube;
using treetrav::detail::SecondMoments;
using Quadrupoles = treetrav::detail::OctreeQuadrupoleNode<Kokkos::HostSpace>;

// MPI_Allgatherv of trivially copyable values: every rank's `values` in rank order.
// Counted in values of an MPI type of sizeof(T) bytes, not in bytes: a body is
// 112 bytes, and int byte counts ran out at 19M bodies.
template <class T>
std::vector<T> all_gather_values(Communicator const& comm, std::vector<T> const& values,
                                 std::vector<int>& counts) {
  static_assert(std::is_trivially_copyable_v<T>, "all_gather_values sends raw bytes");
  if (values.size() > static_cast<std::size_t>(INT_MAX))
    throw std::runtime_error("MPI message of " + std::to_string(values.size()) +
                             " values exceeds 2^31 - 1");
  int const mine = static_cast<int>(values.size());
  counts.resize(comm.size());
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.get()),
            "MPI_Allgather");
  // Every rank holds the same counts, so every rank fails here alike.
  std::int64_t total = 0;
  for (int count : counts)
    total += count;
  if (total > INT_MAX)
    throw std::runtime_error("MPI_Allgatherv of " + std::to_string(total) +
                             " values exceeds 2^31 - 1");
  auto const offsets = detail::displacements(counts);
  std::vector<T> all(static_cast<std::size_t>(total));
  MPI_Datatype value_type;
  check_mpi(MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &value_type),
            "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&value_type), "MPI_Type_commit");
  int const error = MPI_Allgatherv(values.data(), mine, value_type, all.data(), counts.data(),
                                   offsets.data(), value_type, comm.get());
  MPI_Type_free(&value_type);
  check_mpi(error, "MPI_Allgatherv");
  return all;
}

// A cell: its level and the Morton prefix (top 3 level bits) of its bodies' codes.
struct CellKey {
  int level;
  std::uint64_t prefix;
};
int shift_of(int level) {
  return 3 * (morton_levels - level);
}
std::uint64_t first_code(CellKey cell) {
  return cell.level == 0 ? 0 : cell.prefix << shift_of(cell.level);
}
std::uint64_t last_code(CellKey cell) {
  return first_code(cell) | ((std::uint64_t(1) << shift_of(cell.level)) - 1);
}

// A cell of the essential tree while it is assembled (children in slot order).
struct Node {
  CellKey key{};
  std::vector<int> children;
  bool leaf = false;
  std::size_t body_begin = 0, body_count = 0; // a leaf's bodies in the pool
  double moments[4] = {0, 0, 0, 0};           // m, m x, m y, m z
  SecondMoments second{0, {0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  Coordinate mass = 0, com[3] = {0, 0, 0}, quadrupole[Quadrupoles::quadrupole_columns] = {},
             center[3] = {0, 0, 0}, size = 0;
};

// Bodies of leaves, in the order they joined; index: the row in EssentialTree::bodies.
struct Pool {
  std::vector<Coordinate> x, mass;
  std::vector<Index> index;
  void add(Coordinate const* position, Coordinate m, Index row) {
    x.insert(x.end(), position, position + 3);
    mass.push_back(m);
    index.push_back(row);
  }
  std::size_t size() const { return mass.size(); }
  void reserve(std::size_t bodies) {
    x.reserve(3 * bodies);
    mass.reserve(bodies);
    index.reserve(bodies);
  }
};

// What a rank sends of a cell: its moments; accepted (taken whole by the
// receiver's box), internal (its children follow) or leaf (its bodies follow).
enum RecordKind : std::int32_t { accepted_cell, internal_cell, leaf_cell };
struct CellRecord {
  double moments[4];
  SecondMoments second;
  std::uint64_t prefix;
  std::int32_t level, kind, count, unused;
};
struct BodyRecord {
  Coordinate x[3], mass;
};
// A body of a shared leaf, as every rank receives it.
struct SharedBody {
  std::uint64_t code;
  std::int64_t row;
  Coordinate x[3], mass;
};

// This rank's bodies sorted by (code, row), as the octree of all bodies orders them.
struct SortedBodies {
  std::vector<std::uint64_t> codes;
  std::vector<std::int64_t> rows;
  std::vector<Index> index; // the caller's row

  std::size_t lower(std::uint64_t code) const {
    return std::lower_bound(codes.begin(), codes.end(), code) - codes.begin();
  }
  std::size_t upper(std::uint64_t code) const {
    return std::upper_bound(codes.begin(), codes.end(), code) - codes.begin();
  }
};

class Assembly {
public:
  Assembly(RootCube const& cube, bool quadrupoles) : cube_(cube), quadrupoles_(quadrupoles) {}
  std::vector<Node> nodes;
  Pool pool;

  // As build_morton_octree_cells sets a cell's centre and side.
  void set_geometry(Node& node) const {
    double const side = cube_.side / double(std::uint64_t(1) << node.key.level);
    std::uint64_t const code = first_code(node.key);
    for (int k = 0; k < 3; ++k) {
      auto const cell =
          treetrav::detail::compact_by_3(code >> k) >> (morton_levels - node.key.level);
      node.center[k] = static_cast<Coordinate>(cube_.corner[k] + (double(cell) + 0.5) * side);
    }
    node.size = static_cast<Coordinate>(side);
  }

  // The sums of compute_octree_moments and compute_octree_quadrupoles, in their order.
  void sum_moments(Node& node) {
    double sum[4] = {0, 0, 0, 0};
    if (node.leaf) {
      for (std::size_t i = node.body_begin; i < node.body_begin + node.body_count; ++i) {
        double const m = pool.mass[i];
        sum[0] += m;
        for (int k = 0; k < 3; ++k)
          sum[k + 1] += m * pool.x[3 * i + k];
      }
    } else {
      for (int child : node.children)
        for (int j = 0; j < 4; ++j)
          sum[j] += nodes[child].moments[j];
    }
    for (int j = 0; j < 4; ++j)
      node.moments[j] = sum[j];
    set_centre_of_mass(node);
    if (!quadrupoles_)
      return;
    double const c[3] = {node.com[0], node.com[1], node.com[2]};
    SecondMoments second{0, {0, 0, 0}, {0, 0, 0, 0, 0, 0}};
    if (node.leaf) {
      for (std::size_t i = node.body_begin; i < node.body_begin + node.body_count; ++i) {
        double const d[3] = {pool.x[3 * i] - c[0], pool.x[3 * i + 1] - c[1],
                             pool.x[3 * i + 2] - c[2]};
        Quadrupoles::add_point_mass(second, pool.mass[i], d);
      }
    } else {
      for (int child : node.children) {
        Node const& n = nodes[child];
        double const s[3] = {n.com[0] - c[0], n.com[1] - c[1], n.com[2] - c[2]};
        Quadrupoles::add_child(second, n.second, s);
      }
    }
    node.second = second;
    Quadrupoles::traceless(second, node.quadrupole);
  }

  // The float mass and centre of mass of the double sums (the moments kernel's casts).
  static void set_centre_of_mass(Node& node) {
    double const* sum = node.moments;
    node.mass = static_cast<Coordinate>(sum[0]);
    for (int k = 0; k < 3; ++k)
      node.com[k] =
          static_cast<Coordinate>(sum[0] > 0 ? sum[k + 1] / sum[0] : double(node.center[k]));
  }

  // The subtree of a cell that holds this rank's bodies [first, last) and no
  // others: the cells build_morton_octree_cells makes of them.
  int build_branch(SortedBodies const& sorted,
                   Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> x,
                   Kokkos::View<Coordinate*, Kokkos::HostSpace> masses, CellKey key,
                   std::size_t first, std::size_t last, int leaf_size) {
    Node node;
    node.key = key;
    set_geometry(node);
    bool const split = last - first > std::size_t(leaf_size) && key.level < morton_levels;
    if (split) {
      int const shift = 3 * (morton_levels - key.level - 1);
      std::uint64_t const cell_prefix = sorted.codes[first] >> (shift + 3) << (shift + 3);
      std::size_t bounds[9];
      bounds[0] = first;
      bounds[8] = last;
      for (int d = 1; d < 8; ++d)
        bounds[d] =
            std::lower_bound(sorted.codes.begin() + bounds[d - 1], sorted.codes.begin() + last,
                             cell_prefix | std::uint64_t(d) << shift) -
            sorted.codes.begin();
      for (int d = 0; d < 8; ++d)
        if (bounds[d + 1] > bounds[d])
          node.children.push_back(build_branch(sorted, x, masses,
                                               CellKey{key.level + 1, key.prefix * 8 + d},
                                               bounds[d], bounds[d + 1], leaf_size));
    } else {
      node.leaf = true;
      node.body_begin = pool.size();
      node.body_count = last - first;
      for (std::size_t i = first; i < last; ++i) {
        Index const row = sorted.index[i];
        Coordinate const position[3] = {x(row, 0), x(row, 1), x(row, 2)};
        pool.add(position, masses(row), row);
      }
    }
    sum_moments(node);
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  }

  // A cell as another rank sent it (preorder); imported bodies get rows from `next_row`.
  int receive(CellRecord const*& cells, BodyRecord const*& bodies, Index& next_row,
              std::int64_t& imported_cells) {
    CellRecord const record = *cells++;
    ++imported_cells;
    Node node;
    node.key = CellKey{record.level, record.prefix};
    set_geometry(node);
    for (int j = 0; j < 4; ++j)
      node.moments[j] = record.moments[j];
    node.second = record.second;
    set_centre_of_mass(node);
    if (quadrupoles_)
      Quadrupoles::traceless(node.second, node.quadrupole);
    if (record.kind == internal_cell) {
      for (int j = 0; j < record.count; ++j)
        node.children.push_back(receive(cells, bodies, next_row, imported_cells));
    } else {
      // A cell taken whole is a leaf without bodies: no walk from this rank opens it.
      node.leaf = true;
      node.body_begin = pool.size();
      node.body_count = record.kind == leaf_cell ? record.count : 0;
      for (std::size_t j = 0; j < node.body_count; ++j, ++bodies)
        pool.add(bodies->x, bodies->mass, next_row++);
    }
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  }

private:
  RootCube cube_;
  bool quadrupoles_;
};

// Whether every walk from a body (or group) inside [lo, hi] takes `node`
// whole: the box stays clear of the cell and is far enough by the walk's
// criterion (BarnesHutWalk::far_enough with PackCells' open2), both with a
// relative margin of 1e-5 for the float rounding of the walk's own
// distances (a few float ulps).
bool taken_whole(Node const& node, Coordinate const* lo, Coordinate const* hi,
                 BarnesHutOptions const& options) {
  constexpr double margin = 1e-5;
  double const half = 0.5 * double(node.size) * (1 + margin);
  bool apart = false;
  double gap2 = 0, offset2 = 0;
  for (int k = 0; k < 3; ++k) {
    apart = apart || double(lo[k]) - node.center[k] > half || double(node.center[k]) - hi[k] > half;
    double const gap = std::max({double(lo[k]) - node.com[k], double(node.com[k]) - hi[k], 0.0});
    gap2 += gap * gap;
    double const offset = double(node.com[k]) - node.center[k];
    offset2 += offset * offset;
  }
  if (!apart || !(options.theta > 0))
    return false;
  if (options.opening == Opening::com_offset) {
    double const open = double(node.size) / options.theta + std::sqrt(offset2);
    return gap2 * (1 - margin) > double(static_cast<Coordinate>(open * open)) * (1 + margin);
  }
  double const theta2 = static_cast<Coordinate>(options.theta * options.theta);
  return double(node.size) * node.size * (1 + margin) < theta2 * gap2 * (1 - margin);
}

struct BodyBox {
  Coordinate lo[3], hi[3];
};

// The preorder of node's subtree that a rank whose walks start in `reach` needs.
void send(std::vector<Node> const& nodes, Pool const& pool, int id, std::vector<BodyBox> const& reach,
          BarnesHutOptions const& options, std::vector<CellRecord>& cells, std::vector<BodyRecord>& bodies) {
  Node const& node = nodes[id];
  CellRecord record{};
  for (int j = 0; j < 4; ++j)
    record.moments[j] = node.moments[j];
  record.second = node.second;
  record.prefix = node.key.prefix;
  record.level = node.key.level;
  if (std::all_of(reach.begin(), reach.end(),
                  [&](BodyBox const& box) { return taken_whole(node, box.lo, box.hi, options); })) {
    record.kind = accepted_cell;
    cells.push_back(record);
  } else if (node.leaf) {
    record.kind = leaf_cell;
    record.count = static_cast<std::int32_t>(node.body_count);
    cells.push_back(record);
    for (std::size_t i = node.body_begin; i < node.body_begin + node.body_count; ++i)
      bodies.push_back(
          BodyRecord{{pool.x[3 * i], pool.x[3 * i + 1], pool.x[3 * i + 2]}, pool.mass[i]});
  } else {
    record.kind = internal_cell;
    record.count = static_cast<std::int32_t>(node.children.size());
    cells.push_back(record);
    for (int child : node.children)
      send(nodes, pool, child, reach, options, cells, bodies);
  }
}

// A cell of the top of the octree over all bodies: shared (owner -1) or a
// rank's branch; in the order of discovery (level by level, slot order).
struct TopCell {
  CellKey key;
  std::int64_t count = 0;
  int owner = -1;
  bool split = false;
  std::vector<int> children;
  std::vector<std::int64_t> rank_counts;
  int node = -1;
};

} // namespace

std::int64_t NbodyDomain::min(std::int64_t value) const {
  std::int64_t result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MIN, comm_.get()), "MPI_Allreduce");
  return result;
}

std::int64_t NbodyDomain::sum(std::int64_t value) const {
  std::int64_t result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_SUM, comm_.get()), "MPI_Allreduce");
  return result;
}

nbody::EssentialTree
NbodyDomain::essential_tree(Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> x,
                            Kokkos::View<Coordinate*, Kokkos::HostSpace> masses,
                            Kokkos::View<std::int64_t*, Kokkos::HostSpace> rows,
                            BarnesHutOptions const& options, int leaf_size,
                            bool quadrupoles, int group_size) const {
  Kokkos::Profiling::pushRegion("treetrav::distributed::essential_tree");
  int const p = comm_.size(), me = comm_.rank();
  Index const n = static_cast<Index>(x.extent(0));
  // 1. The cube around every rank's box; the codes in it.
  BodyBox mine{};
  for (int k = 0; k < 3; ++k)
    mine.lo[k] = infinity, mine.hi[k] = -infinity;
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)
      mine.lo[k] = std::min(mine.lo[k], x(i, k)), mine.hi[k] = std::max(mine.hi[k], x(i, k));
  std::vector<BodyBox> const boxes = all_gather(comm_, mine);
  Coordinate lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = infinity, hi[k] = -infinity;
    for (BodyBox const& box : boxes)
      lo[k] = std::min(lo[k], box.lo[k]), hi[k] = std::max(hi[k], box.hi[k]);
  }
  RootCube const cube = treetrav::detail::cube_around(lo, hi);
  SortedBodies sorted;
  {
    std::vector<std::tuple<std::uint64_t, std::int64_t, Index>> keyed(n);
    for (Index i = 0; i < n; ++i)
      keyed[i] = {treetrav::detail::morton_code(cube, x(i, 0), x(i, 1), x(i, 2)), rows(i), i};
    std::sort(keyed.begin(), keyed.end());
    for (auto const& [code, row, index] : keyed) {
      sorted.codes.push_back(code);
      sorted.rows.push_back(row);
      sorted.index.push_back(index);
    }
  }
  auto const local_count = [&](CellKey cell) {
    return static_cast<std::int64_t>(sorted.upper(last_code(cell)) -
                                     sorted.lower(first_code(cell)));
  };

  // 2. The shared cells and the branches, level by level.
  std::vector<TopCell> top;
  std::vector<CellKey> candidates{CellKey{0, 0}};
  std::vector<int> parents{-1};
  while (!candidates.empty()) {
    int const m = static_cast<int>(candidates.size());
    std::vector<std::int64_t> counts(m);
    for (int c = 0; c < m; ++c)
      counts[c] = local_count(candidates[c]);
    std::vector<std::int64_t> all(std::size_t(m) * p);
    check_mpi(MPI_Allgather(counts.data(), m, MPI_INT64_T, all.data(), m, MPI_INT64_T, comm_.get()),
              "MPI_Allgather");
    std::vector<CellKey> next;
    std::vector<int> next_parents;
    for (int c = 0; c < m; ++c) {
      TopCell cell;
      cell.key = candidates[c];
      int owners = 0;
      for (int r = 0; r < p; ++r) {
        std::int64_t const count = all[std::size_t(r) * m + c];
        cell.rank_counts.push_back(count);
        cell.count += count;
        if (count > 0)
          ++owners, cell.owner = r;
      }
      if (cell.count == 0)
        continue;
      int const id = static_cast<int>(top.size());
      if (parents[c] >= 0)
        top[parents[c]].children.push_back(id);
      if (owners > 1) {
        cell.owner = -1;
        cell.split = cell.count > leaf_size && cell.key.level < morton_levels;
        if (cell.split)
          for (int d = 0; d < 8; ++d) {
            next.push_back(CellKey{cell.key.level + 1, cell.key.prefix * 8 + d});
            next_parents.push_back(id);
          }
      }
      top.push_back(std::move(cell));
    }
    candidates = std::move(next);
    parents = std::move(next_parents);
  }

  Assembly assembly(cube, quadrupoles);
  assembly.pool.reserve(std::size_t(n));
  // This rank's branches, whole.
  for (TopCell& cell : top)
    if (cell.owner == me)
      cell.node =
          assembly.build_branch(sorted, x, masses, cell.key, sorted.lower(first_code(cell.key)),
                                sorted.upper(last_code(cell.key)), leaf_size);

  // The bodies of shared leaves, from every rank.
  std::vector<SharedBody> shared;
  for (TopCell const& cell : top)
    if (cell.owner < 0 && !cell.split)
      for (std::size_t i = sorted.lower(first_code(cell.key));
           i < sorted.upper(last_code(cell.key)); ++i) {
        Index const row = sorted.index[i];
        shared.push_back(SharedBody{
            sorted.codes[i], sorted.rows[i], {x(row, 0), x(row, 1), x(row, 2)}, masses(row)});
      }
  std::vector<int> shared_counts;
  std::vector<SharedBody> const all_shared = all_gather_values(comm_, shared, shared_counts);

  // Where each rank's walks start: the cells of the top holding its bodies
  // (its branches, the shared leaves where it has bodies), each cube cut to
  // the rank's box. A group walk's group is a cell (or a run of small sibling
  // cells, or part of a leaf) whose box spans all its bodies, other ranks'
  // included: it adds, whole, every shared cell where such a group may hold
  // the rank's bodies. In Morton order, hulls of runs of them: at most
  // reach_boxes a rank. A cell far enough from each box is far enough from
  // every body and group, however the set is cut; the set is far tighter
  // than the rank's one box, whose pieces of the curve may lie apart.
  struct Region {
    std::uint64_t code;
    BodyBox box;
  };
  std::vector<std::vector<Region>> regions(p);
  auto const cube_of = [&](CellKey key, BodyBox const* within) {
    double const side = cube.side / double(std::uint64_t(1) << key.level);
    std::uint64_t const code = first_code(key);
    BodyBox box;
    for (int k = 0; k < 3; ++k) {
      auto const cell = treetrav::detail::compact_by_3(code >> k) >> (morton_levels - key.level);
      double const low = cube.corner[k] + double(cell) * side, slack = 1e-6 * side;
      box.lo[k] = static_cast<Coordinate>(low - slack);
      box.hi[k] = static_cast<Coordinate>(low + side + slack);
      if (within != nullptr)
        box.lo[k] = std::max(box.lo[k], within->lo[k]), box.hi[k] = std::min(box.hi[k], within->hi[k]);
    }
    return Region{code, box};
  };
  for (TopCell const& cell : top) {
    if (cell.owner >= 0) {
      regions[cell.owner].push_back(cube_of(cell.key, &boxes[cell.owner]));
      continue;
    }
    for (int r = 0; r < p; ++r) {
      bool mixes = !cell.split && cell.rank_counts[r] > 0;
      if (mixes)
        regions[r].push_back(cube_of(cell.key, &boxes[r]));
      if (group_size <= 0)
        continue;
      for (int child : cell.children)
        mixes = mixes || (top[child].rank_counts[r] > 0 && top[child].rank_counts[r] <= group_size);
      if (mixes)
        regions[r].push_back(cube_of(cell.key, nullptr));
    }
  }
  constexpr std::size_t reach_boxes = 64;
  std::vector<std::vector<BodyBox>> reach(p);
  for (int r = 0; r < p; ++r) {
    auto& mine = regions[r];
    std::stable_sort(mine.begin(), mine.end(), [](Region const& a, Region const& b) { return a.code < b.code; });
    std::size_t const runs = std::min(reach_boxes, mine.size());
    for (std::size_t run = 0; run < runs; ++run) {
      BodyBox hull = mine[run * mine.size() / runs].box;
      for (std::size_t i = run * mine.size() / runs; i < (run + 1) * mine.size() / runs; ++i)
        for (int k = 0; k < 3; ++k)
          hull.lo[k] = std::min(hull.lo[k], mine[i].box.lo[k]), hull.hi[k] = std::max(hull.hi[k], mine[i].box.hi[k]);
      reach[r].push_back(hull);
    }
  }

  // 3. Every other rank's branches, pruned by that rank's reach.
  std::vector<CellRecord> cells_out;
  std::vector<BodyRecord> bodies_out;
  std::vector<int> cells_sent(p, 0), bodies_sent(p, 0);
  for (int r = 0; r < p; ++r) {
    if (r == me)
      continue;
    std::size_t const cells_before = cells_out.size(), bodies_before = bodies_out.size();
    for (TopCell const& cell : top)
      if (cell.owner == me)
        send(assembly.nodes, assembly.pool, cell.node, reach[r], options, cells_out, bodies_out);
    cells_sent[r] = static_cast<int>(cells_out.size() - cells_before);
    bodies_sent[r] = static_cast<int>(bodies_out.size() - bodies_before);
  }
  std::vector<int> cells_received, bodies_received;
  std::vector<CellRecord> const cells_in = all_to_all(comm_, cells_out, cells_sent, cells_received);
  std::vector<BodyRecord> const bodies_in =
      all_to_all(comm_, bodies_out, bodies_sent, bodies_received);
  nbody::EssentialTree result;
  Index next_row = n;
  {
    std::vector<CellRecord const*> cell_cursor(p);
    std::vector<BodyRecord const*> body_cursor(p);
    std::size_t cell_offset = 0, body_offset = 0;
    for (int r = 0; r < p; ++r) {
      cell_cursor[r] = cells_in.data() + cell_offset;
      body_cursor[r] = bodies_in.data() + body_offset;
      cell_offset += cells_received[r];
      body_offset += bodies_received[r];
    }
    // Room for every cell and body to come at once: grown by doubling, the
    // arrays (a few hundred bytes a cell) peaked at three times their need.
    assembly.nodes.reserve(assembly.nodes.size() + cells_in.size() + top.size());
    assembly.pool.reserve(assembly.pool.size() + bodies_in.size() + all_shared.size());
    for (TopCell& cell : top)
      if (cell.owner >= 0 && cell.owner != me)
        cell.node = assembly.receive(cell_cursor[cell.owner], body_cursor[cell.owner], next_row,
                                     result.imported_cells);
  }

  // 4. The shared cells, deepest first (discovery is by level).
  {
    std::vector<std::size_t> shared_offset(p + 1, 0); // where rank r's shared bodies start
    for (int r = 0; r < p; ++r)
      shared_offset[r + 1] = shared_offset[r] + shared_counts[r];
    std::vector<std::size_t> cursor(shared_offset.begin(), shared_offset.end() - 1);
    std::vector<std::vector<std::tuple<std::uint64_t, std::int64_t, Index, std::size_t>>>
        leaf_bodies(top.size());
    for (std::size_t t = 0; t < top.size(); ++t) {
      TopCell const& cell = top[t];
      if (cell.owner >= 0 || cell.split)
        continue;
      std::size_t mine_next = sorted.lower(first_code(cell.key));
      for (int r = 0; r < p; ++r)
        for (std::int64_t j = 0; j < cell.rank_counts[r]; ++j) {
          std::size_t const at = cursor[r]++;
          Index const row = r == me ? sorted.index[mine_next++] : next_row++;
          leaf_bodies[t].emplace_back(all_shared[at].code, all_shared[at].row, row, at);
        }
      std::sort(leaf_bodies[t].begin(), leaf_bodies[t].end());
    }
    for (std::size_t t = top.size(); t-- > 0;) {
      TopCell& cell = top[t];
      if (cell.owner >= 0)
        continue;
      Node node;
      node.key = cell.key;
      assembly.set_geometry(node);
      if (cell.split) {
        for (int child : cell.children)
          node.children.push_back(top[child].node);
      } else {
        node.leaf = true;
        node.body_begin = assembly.pool.size();
        node.body_count = leaf_bodies[t].size();
        for (auto const& [code, row_in_system, row, at] : leaf_bodies[t]) {
          assembly.pool.add(all_shared[at].x, all_shared[at].mass, row);
          result.imported_bodies += row >= n ? 1 : 0;
        }
      }
      assembly.sum_moments(node);
      assembly.nodes.push_back(std::move(node));
      cell.node = static_cast<int>(assembly.nodes.size()) - 1;
    }
  }
  result.imported_bodies += static_cast<std::int64_t>(bodies_in.size());

  // The Octree: bodies in depth-first (Morton) order, cells numbered breadth-first.
  std::vector<Node> const& nodes = assembly.nodes;
  Pool const& pool = assembly.pool;
  Index const cell_count = static_cast<Index>(nodes.size());
  Index const body_count = static_cast<Index>(pool.size());
  std::vector<Index> point_begin(cell_count), point_end(cell_count), tree_order;
  tree_order.reserve(body_count);
  auto const depth_first = [&](auto const& self, int id) -> void {
    Node const& node = nodes[id];
    point_begin[id] = static_cast<Index>(tree_order.size());
    if (node.leaf)
      for (std::size_t i = node.body_begin; i < node.body_begin + node.body_count; ++i)
        tree_order.push_back(static_cast<Index>(i));
    for (int child : node.children)
      self(self, child);
    point_end[id] = static_cast<Index>(tree_order.size());
  };
  int const root = top.front().node;
  depth_first(depth_first, root);
  std::vector<int> breadth_first{root};
  std::vector<Index> number(cell_count, -1);
  number[root] = 0;
  for (std::size_t i = 0; i < breadth_first.size(); ++i)
    for (int child : nodes[breadth_first[i]].children) {
      number[child] = static_cast<Index>(breadth_first.size());
      breadth_first.push_back(child);
    }

  using Tree = Octree<Kokkos::HostSpace>;
  Tree& tree = result.tree;
  auto const alloc = [](std::string const& label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
  };
  tree.topology.children =
      decltype(tree.topology.children)(alloc("treetrav::EssentialTree::children"), cell_count, 8);
  tree.topology.parent =
      decltype(tree.topology.parent)(alloc("treetrav::EssentialTree::parent"), cell_count);
  tree.topology.point_begin =
      decltype(tree.topology.parent)(alloc("treetrav::EssentialTree::point_begin"), cell_count);
  tree.topology.point_end =
      decltype(tree.topology.parent)(alloc("treetrav::EssentialTree::point_end"), cell_count);
  tree.mass = Tree::scalar_view(alloc("treetrav::EssentialTree::mass"), cell_count);
  tree.center_of_mass =
      Tree::vector_view(alloc("treetrav::EssentialTree::center_of_mass"), cell_count, 3);
  tree.cell_center =
      Tree::vector_view(alloc("treetrav::EssentialTree::cell_center"), cell_count, 3);
  tree.cell_size = Tree::scalar_view(alloc("treetrav::EssentialTree::cell_size"), cell_count);
  if (quadrupoles)
    tree.quadrupole =
        Tree::vector_view(alloc("treetrav::EssentialTree::quadrupole"), cell_count,
                          Quadrupoles::quadrupole_columns);
  tree.topology.parent(0) = -1;
  for (Index i = 0; i < cell_count; ++i) {
    int const id = breadth_first[i];
    Node const& node = nodes[id];
    for (int slot = 0; slot < 8; ++slot) {
      Index const child = slot < int(node.children.size()) ? number[node.children[slot]] : -1;
      tree.topology.children(i, slot) = child;
      if (child >= 0)
        tree.topology.parent(child) = i;
    }
    tree.topology.point_begin(i) = point_begin[id];
    tree.topology.point_end(i) = point_end[id];
    tree.mass(i) = node.mass;
    for (int k = 0; k < 3; ++k) {
      tree.center_of_mass(i, k) = node.com[k];
      tree.cell_center(i, k) = node.center[k];
    }
    tree.cell_size(i) = node.size;
    if (quadrupoles)
      for (int j = 0; j < Quadrupoles::quadrupole_columns; ++j)
        tree.quadrupole(i, j) = node.quadrupole[j];
  }
  Index const rows_total = next_row;
  result.bodies =
      allocate_points<Kokkos::HostSpace>("treetrav::EssentialTree::bodies", rows_total, 3);
  tree.points.points =
      allocate_points<Kokkos::HostSpace>("treetrav::EssentialTree::tree_bodies", body_count, 3);
  tree.points.original_index = Kokkos::View<Index*, Kokkos::HostSpace>(
      alloc("treetrav::EssentialTree::original_index"), body_count);
  tree.body_mass = Tree::scalar_view(alloc("treetrav::EssentialTree::body_mass"), body_count);
  result.local_order =
      Kokkos::View<Index*, Kokkos::HostSpace>(alloc("treetrav::EssentialTree::local_order"), n);
  Index local = 0;
  for (Index position = 0; position < body_count; ++position) {
    std::size_t const i = tree_order[position];
    Index const row = pool.index[i];
    for (int k = 0; k < 3; ++k) {
      tree.points.points.coordinates(position, k) = pool.x[3 * i + k];
      result.bodies.coordinates(row, k) = pool.x[3 * i + k];
    }
    tree.points.original_index(position) = row;
    tree.body_mass(position) = pool.mass[i];
    if (row < n)
      result.local_order(local++) = row;
  }
  if (local != n || body_count != rows_total)
    throw std::logic_error("essential tree: " + std::to_string(local) + " of " + std::to_string(n) +
                           " local bodies placed, " + std::to_string(body_count) + " bodies for " +
                           std::to_string(rows_total) + " rows");
  Kokkos::Profiling::popRegion();
  return result;
}

namespace {

// One body as partition() and by_rows() move it.
struct PackedBody {
  double x[3], v[3], mass, potential;
  std::int64_t id, row;
  float a[3];
  std::int32_t type;
  Index cost;
  std::int32_t domain;
  std::int8_t bin;
};

// Indices 0..size-1 grouped by the rank `rank_of` gives each, in index order
// within a rank (a counting sort), and how many go to each of p ranks: the
// send order and counts of an MPI_Alltoallv.
template <class RankOf>
std::vector<std::size_t> grouped_by_rank(std::size_t size, int p, RankOf const& rank_of,
                                         std::vector<int>& counts) {
  counts.assign(p, 0);
  std::vector<int> rank(size);
  for (std::size_t i = 0; i < size; ++i)
    ++counts[rank[i] = rank_of(i)];
  std::vector<std::size_t> next(p, 0), order(size);
  for (int r = 1; r < p; ++r)
    next[r] = next[r - 1] + std::size_t(counts[r - 1]);
  for (std::size_t i = 0; i < size; ++i)
    order[next[rank[i]]++] = i;
  return order;
}

// This rank's bodies order[0], order[1], ..., each with `rank` as its domain.
std::vector<PackedBody> pack(nbody::BodyStates const& local, int rank, std::vector<std::size_t> const& order) {
  bool const potentials = local.state.potentials.extent(0) != 0,
             types = local.state.types.extent(0) != 0;
  std::vector<PackedBody> packed(order.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    std::size_t const i = order[j];
    PackedBody& b = packed[j];
    for (int k = 0; k < 3; ++k) {
      b.x[k] = local.state.coordinates(i, k);
      b.v[k] = local.state.velocities(i, k);
      b.a[k] = local.accelerations(i, k);
    }
    b.mass = local.state.masses(i);
    b.potential = potentials ? local.state.potentials(i) : 0;
    b.id = local.state.ids(i);
    b.row = local.rows(i);
    b.type = types ? local.state.types(i) : 1;
    b.cost = local.costs(i);
    b.bin = local.bins(i);
    b.domain = rank;
  }
  return packed;
}

bool by_row(PackedBody const& a, PackedBody const& b) { return a.row < b.row; }

// `bodies` (ordered by row) as BodyStates with the time, box, metadata and
// optional arrays of `like`, the domains of `ranks` ranks.
nbody::BodyStates unpack(std::vector<PackedBody> const& bodies, nbody::BodyStates const& like,
                         int ranks) {
  bool const potentials = like.state.potentials.extent(0) != 0,
             types = like.state.types.extent(0) != 0;
  std::size_t const total = bodies.size();
  io::Snapshot state = io::allocate_snapshot(total, potentials);
  state.time = like.state.time;
  state.box_size = like.state.box_size;
  state.metadata = like.state.metadata;
  if (types)
    state.types = decltype(state.types)("treetrav::nbody::BodyStates::types", total);
  nbody::BodyStates result = nbody::bodies_of(state);
  result.domains = decltype(result.domains)("treetrav::nbody::BodyStates::domains", total);
  result.domain_ranks = ranks;
  for (std::size_t i = 0; i < total; ++i) {
    PackedBody const& b = bodies[i];
    for (int k = 0; k < 3; ++k) {
      result.state.coordinates(i, k) = b.x[k];
      result.state.velocities(i, k) = b.v[k];
      result.accelerations(i, k) = b.a[k];
    }
    result.state.masses(i) = b.mass;
    if (potentials)
      result.state.potentials(i) = b.potential;
    result.state.ids(i) = b.id;
    if (types)
      result.state.types(i) = b.type;
    result.costs(i) = b.cost;
    result.bins(i) = b.bin;
    result.rows(i) = b.row;
    result.domains(i) = b.domain;
  }
  return result;
}

} // namespace

namespace {

// A body's place on the Morton curve of all bodies (code, then row: the
// order domain_of sorts by), its weight, and where it is held.
struct CurveKey {
  std::uint64_t code;
  std::int64_t row;
  std::int64_t weight;
  std::int64_t index;  // in the holder's bodies
  std::int32_t holder;
  friend bool operator<(CurveKey const& a, CurveKey const& b) {
    return a.code != b.code ? a.code < b.code : a.row < b.row;
  }
};

// A body's new rank, sent back to its holder.
struct Assignment {
  std::int64_t index;
  std::int32_t rank;
};

} // namespace

// The keys travel, not the bodies: a sample sort puts them in curve order
// across the ranks (splitters from a regular sample, one MPI_Alltoallv);
// each rank then knows its keys' positions and the weight before them
// (MPI_Exscan), the pieces' starts follow from one MPI_Allreduce of counts
// (domain_of's rule, the same clamps on every rank), and each key's rank goes
// back to the body's holder. Only then do the bodies move, once, and only
// those whose rank changes leave their holder.
nbody::BodyStates NbodyDomain::partition(nbody::BodyStates const& held) const {
  int const p = comm_.size(), me = comm_.rank();
  std::size_t const m = held.size();
  std::int64_t const n = sum(static_cast<std::int64_t>(m));
  if (n < p)
    throw InputError(fmt::format("nbody: {} bodies cannot be shared by {} MPI ranks (at least one each)", n, p));
  std::vector<std::int32_t> destination(m, me);
  bool const carried = held.domains.extent(0) == m && held.domain_ranks == p;
  if (min(carried ? 1 : 0) == 1) {
    // The decomposition the bodies carry (a restart on as many ranks).
    for (std::size_t i = 0; i < m; ++i)
      destination[i] = held.domains(i);
  } else {
    // The cube of all bodies' float positions (min and max are exact in any order).
    auto const& x = held.state.coordinates;
    Coordinate bounds[6];
    for (int k = 0; k < 3; ++k)
      bounds[k] = infinity, bounds[3 + k] = infinity;
    for (std::size_t i = 0; i < m; ++i)
      for (int k = 0; k < 3; ++k) {
        Coordinate const v = static_cast<Coordinate>(x(i, k));
        bounds[k] = std::min(bounds[k], v);
        bounds[3 + k] = std::min(bounds[3 + k], -v);
      }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, bounds, 6, MPI_FLOAT, MPI_MIN, comm_.get()), "MPI_Allreduce");
    Coordinate lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
      lo[k] = bounds[k], hi[k] = -bounds[3 + k];
    RootCube const cube = treetrav::detail::cube_around(lo, hi);
    std::vector<CurveKey> keys(m);
    for (std::size_t i = 0; i < m; ++i)
      keys[i] = {treetrav::detail::morton_code(cube, Coordinate(x(i, 0)), Coordinate(x(i, 1)),
                                               Coordinate(x(i, 2))),
                 held.rows(i), std::max<std::int64_t>(1, held.costs(i)), std::int64_t(i), me};
    std::sort(keys.begin(), keys.end());

    std::vector<CurveKey> const splitters = detail::splitters_of(comm_, keys);
    std::vector<int> counts(p, 0), received;
    for (CurveKey const& key : keys) // sorted: the ranks come in order
      ++counts[std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin()];
    std::vector<CurveKey> sorted = all_to_all(comm_, keys, counts, received);
    std::sort(sorted.begin(), sorted.end());

    // Each key's position on the curve and the weight before it.
    std::int64_t mine[2] = {std::int64_t(sorted.size()), 0}, before[2] = {0, 0};
    for (CurveKey const& key : sorted)
      mine[1] += key.weight;
    check_mpi(MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, comm_.get()), "MPI_Exscan");
    if (me == 0)
      before[0] = before[1] = 0;
    std::int64_t const total = sum(mine[1]);
    // Piece r starts at the first body whose preceding weight W reaches r
    // W_total / P: the number of bodies with W P < r W_total (W grows along
    // the curve), counted by every rank over its keys and summed.
    std::vector<std::int64_t> starts(p + 1, 0);
    {
      // first[r]: the keys for which r is the least piece with W P < r W_total.
      std::vector<std::int64_t> first(p + 1, 0);
      std::int64_t weight = before[1];
      int r = 1;
      for (CurveKey const& key : sorted) {
        while (r < p && weight * p >= std::int64_t(r) * total)
          ++r;
        ++first[r];
        weight += key.weight;
      }
      for (int q = 1; q < p; ++q)
        starts[q] = starts[q - 1] + first[q];
      starts[0] = 0;
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, starts.data() + 1, p - 1, MPI_INT64_T, MPI_SUM, comm_.get()),
              "MPI_Allreduce");
    starts[p] = n;
    for (int r = 1; r < p; ++r) // at least one body each
      starts[r] = std::clamp(starts[r], starts[r - 1] + 1, n - std::int64_t(p - r));

    // Each key's rank, back to the holder of its body.
    std::vector<int> answer_counts;
    std::vector<std::size_t> const to_holders =
        grouped_by_rank(sorted.size(), p, [&](std::size_t i) { return sorted[i].holder; }, answer_counts);
    std::vector<Assignment> answers(sorted.size());
    for (std::size_t j = 0; j < to_holders.size(); ++j) {
      std::size_t const i = to_holders[j];
      std::int64_t const position = before[0] + std::int64_t(i);
      int const rank = int(std::upper_bound(starts.begin() + 1, starts.end(), position) - starts.begin()) - 1;
      answers[j] = {sorted[i].index, rank};
    }
    for (Assignment const& answer : all_to_all(comm_, answers, answer_counts, received))
      destination[std::size_t(answer.index)] = answer.rank;
  }

  // The bodies to their ranks.
  std::vector<int> send_counts, recv_counts;
  std::vector<PackedBody> const outgoing =
      pack(held, me, grouped_by_rank(m, p, [&](std::size_t i) { return destination[i]; }, send_counts));
  std::vector<PackedBody> share = all_to_all(comm_, outgoing, send_counts, recv_counts);
  std::sort(share.begin(), share.end(), by_row);
  nbody::BodyStates result = unpack(share, held, p);
  // As domain_of gives them: no recorded decomposition.
  result.domains = {};
  result.domain_ranks = 1;
  return result;
}

void require_unique_ids(Communicator const& comm, Kokkos::View<ParticleId*, Kokkos::HostSpace> ids,
                        std::string const& what) {
  int const p = comm.size();
  auto const owner = [p](ParticleId id) {
    return int(static_cast<std::uint64_t>(id) % static_cast<std::uint64_t>(p));
  };
  std::vector<int> counts, received;
  std::vector<ParticleId> outgoing;
  for (std::size_t i : grouped_by_rank(ids.extent(0), p, [&](std::size_t i) { return owner(ids(i)); }, counts))
    outgoing.push_back(ids(i));
  std::vector<ParticleId> mine = all_to_all(comm, outgoing, counts, received);
  std::sort(mine.begin(), mine.end());
  // The least repeated id of all ranks (none: the largest value).
  ParticleId repeated = std::numeric_limits<ParticleId>::max();
  bool found = false;
  for (std::size_t i = 1; i < mine.size(); ++i)
    if (mine[i] == mine[i - 1]) {
      repeated = mine[i];
      found = true;
      break;
    }
  int any = found ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  if (any == 0)
    return;
  static_assert(sizeof(ParticleId) == sizeof(std::int64_t), "sent as MPI_INT64_T");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &repeated, 1, MPI_INT64_T, MPI_MIN, comm.get()), "MPI_Allreduce");
  throw InputError(fmt::format("{}: particle id {} appears more than once: particle ids must differ", what,
                               repeated));
}

// The bodies go to the ranks of their rows' blocks (MPI_Alltoallv) rather than
// being written where they are through point or hyperslab-union selections: a
// rank's Morton domain is scattered over the rows, a selection of thousands of
// runs; moved once, every rank writes one contiguous run per dataset, which
// collective MPI-IO does best, and the rows come in order for the diagnostics.
nbody::BodyStates NbodyDomain::by_rows(nbody::BodyStates const& local) const {
  int const p = comm_.size();
  auto const total = static_cast<std::size_t>(sum(static_cast<std::int64_t>(local.size())));
  std::vector<std::int64_t> ends(p);
  for (int r = 0; r < p; ++r)
    ends[r] = static_cast<std::int64_t>(block_of(total, r, p).end);
  std::vector<int> send_counts, recv_counts;
  std::vector<PackedBody> const packed = pack(
      local, comm_.rank(), grouped_by_rank(local.size(), p, [&](std::size_t i) {
        return int(std::upper_bound(ends.begin(), ends.end(), local.rows(i)) - ends.begin());
      }, send_counts));
  std::vector<PackedBody> mine = all_to_all(comm_, packed, send_counts, recv_counts);
  std::sort(mine.begin(), mine.end(), by_row);
  return unpack(mine, local, p);
}

// Floating-point sums depend on their order: each rank goes on from the sums
// of the ranks before it (a chain of messages of a few doubles), so every rank
// gets one process's bits without the bodies of the others.
nbody::Diagnostics NbodyDomain::measure(io::Snapshot const& rows) const {
  static_assert(std::is_trivially_copyable_v<nbody::Diagnostics>, "sent as bytes");
  int const me = comm_.rank(), p = comm_.size();
  nbody::Diagnostics sums;
  if (me > 0)
    check_mpi(MPI_Recv(&sums, sizeof(sums), MPI_BYTE, me - 1, 0, comm_.get(), MPI_STATUS_IGNORE),
              "MPI_Recv");
  sums = nbody::measure(rows, sums);
  if (me + 1 < p)
    check_mpi(MPI_Send(&sums, sizeof(sums), MPI_BYTE, me + 1, 0, comm_.get()), "MPI_Send");
  check_mpi(MPI_Bcast(&sums, sizeof(sums), MPI_BYTE, p - 1, comm_.get()), "MPI_Bcast");
  return sums;
}

} // namespace treetrav::distributed
