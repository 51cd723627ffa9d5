#pragma once

#include <treetrav/apps/detail/compiled.hpp>
#include <treetrav/core/allocate.hpp>
#include <treetrav/core/detail/workspace_arrays.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/core/point_set.hpp>
#include <treetrav/traversal/traverse.hpp>
#include <treetrav/trees/octree.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace treetrav {

// How a cell taken whole pulls: its mass at its centre of mass (monopole), or
// also its quadrupole moment about the centre of mass (the octree must carry
// quadrupoles: build_morton_octree computes them).
enum class Multipole { monopole, quadrupole };

// When a cell of side s, centre c and centre of mass m may be taken whole by
// a body at distance d from m (a group: d from the group's bounding box):
//   barnes_hut  s < theta d, and the body (box) does not touch the cell
//               (Barnes & Hut 1986);
//   com_offset  d > s / theta + |m - c|, and the body (box) does not touch
//               the cell (Barnes 1994's b_max form, as Bonsai uses): a cell
//               whose mass sits off-centre opens sooner, which bounds the
//               worst-case error that the classic criterion leaves unbounded.
//   relative    G M b^p < alpha |a| d^(p+2), b = s + 2 |m - c| (c the
//               cell's centre), and the body (box) does not touch the cell:
//               the cell's error term (the first one the expansion leaves
//               out: p = 2 for monopoles, 3 with quadrupoles) against the
//               body's own acceleration |a| from the previous evaluation (a
//               group: its smallest), as GADGET's relative criterion
//               (Springel 2005) and GOTHIC's acceleration criterion do. It
//               bounds each body's error relative to its force, which a fixed
//               angle does not where the density varies by decades. b is the
//               side of the cube about the centre of mass that holds the cell:
//               a cell whose mass sits in a corner errs as that larger cell
//               would (with the side alone, a clustered box's worst forces
//               erred by 8% at the alpha that kept its p99 below 1e-3;
//               perf/results/nbody/issue35/).
// theta = 0 (relative: alpha = 0) opens every cell: direct summation.
enum class Opening { barnes_hut, com_offset, relative };

inline char const* to_string(Multipole multipole) {
  return multipole == Multipole::quadrupole ? "quadrupole" : "monopole";
}
inline char const* to_string(Opening opening) {
  switch (opening) {
  case Opening::com_offset:
    return "com-offset";
  case Opening::relative:
    return "relative";
  default:
    return "barnes-hut";
  }
}

// Throw InputError naming the value when unknown.
inline Multipole parse_multipole(std::string const& name) {
  if (name == "monopole")
    return Multipole::monopole;
  if (name == "quadrupole")
    return Multipole::quadrupole;
  throw InputError("multipole", ": unknown order '" + name + "' (known: monopole, quadrupole)");
}
inline Opening parse_opening(std::string const& name) {
  if (name == "barnes-hut")
    return Opening::barnes_hut;
  if (name == "com-offset")
    return Opening::com_offset;
  if (name == "relative")
    return Opening::relative;
  throw InputError("opening",
                   ": unknown criterion '" + name + "' (known: barnes-hut, com-offset, relative)");
}

struct BarnesHutOptions {
  Coordinate theta = 0.5f;     // opening angle (see Opening)
  Coordinate softening = 0.0f; // Plummer softening length epsilon
  Coordinate gravity = 1.0f;   // G
  Multipole multipole = Multipole::monopole;
  Opening opening = Opening::barnes_hut;
  Coordinate alpha = 0.0025f; // the relative criterion's tolerance (see Opening)
};

// Floating-point operations of one interaction as detail::Acceleration::add writes
// them (a fused multiply-add two, the reciprocal square root one): a body or
// monopole 20 (the count N-body codes quote), a quadrupole cell 54.
inline constexpr int body_interaction_flops = 20;
inline constexpr int quadrupole_interaction_flops = 54;
inline constexpr int cell_interaction_flops(Multipole order) {
  return order == Multipole::quadrupole ? quadrupole_interaction_flops : body_interaction_flops;
}

// The relative criterion's first evaluation has no previous accelerations:
// they are estimated with these options first (GADGET does the same).
inline BarnesHutOptions relative_estimate_options(BarnesHutOptions options) {
  options.opening = Opening::com_offset;
  options.theta = 0.5f;
  return options;
}

// What active_bodies says of a body: it walks (its force is evaluated); it
// is foreign (never walks, and lies outside its group walk's box: a
// distributed run's imported body). Neither: it rests.
inline constexpr std::uint8_t walking_body = 1, foreign_body = 2;

namespace detail {

// What a walk reads of a cell to decide on it, in one 32-byte record.
struct alignas(16) CellGeometry {
  Coordinate com[3];
  // com_offset: (s / theta + |m - c|)^2 (infinite at theta = 0);
  // relative: G M b^p (Opening).
  Coordinate open2;
  Coordinate center[3];
  Coordinate half; // half the side
};

// What a cell taken whole contributes. quadrupole: xx, yy, zz, xy, xz, yz of
// the traceless Q_ij = sum m (3 d_i d_j - |d|^2 delta_ij), d = x - centre of
// mass, and the trace T = sum m |d|^2, which softening makes count.
template <Multipole Order>
struct FarField;
template <>
struct alignas(16) FarField<Multipole::monopole> {
  Coordinate com[3];
  Coordinate mass;
};
template <>
struct alignas(16) FarField<Multipole::quadrupole> {
  Coordinate com[3];
  Coordinate mass;
  Coordinate quadrupole[6];
  Coordinate trace;
  // Fills the record to 48 bytes, zeroed: the walk loads records in 16-byte
  // pieces, and a padding byte never written is an uninitialised read to
  // compute-sanitizer's initcheck.
  Coordinate unused;
};

// A body of an opened leaf (group walks), and a body as its lane holds it.
struct alignas(16) BodyRecord {
  Coordinate x[3];
  Coordinate mass;
  Index position; // in tree order: a body skips itself
};
struct QueryBody {
  Coordinate x[3];
  Index position;
};
struct GroupBox {
  Coordinate low[3], high[3];
  Coordinate tolerance; // relative: alpha times the group's smallest previous |a|
};

// The octree's cells as the walk reads them.
template <class MemorySpace, Multipole Order>
struct PackCells {
  Octree<MemorySpace> tree;
  Kokkos::View<CellGeometry*, MemorySpace> geometry;
  Kokkos::View<FarField<Order>*, MemorySpace> far_field;
  Coordinate theta;
  Opening opening;
  Coordinate gravity;

  KOKKOS_FUNCTION void operator()(Index node) const {
    CellGeometry g;
    FarField<Order> f;
    double offset2 = 0;
    for (int k = 0; k < 3; ++k) {
      g.com[k] = f.com[k] = tree.center_of_mass(node, k);
      g.center[k] = tree.cell_center(node, k);
      double const offset = double(g.com[k]) - g.center[k];
      offset2 += offset * offset;
    }
    g.half = tree.cell_size(node) / 2;
    double const open = theta > 0 ? double(tree.cell_size(node)) / theta + math::sqrt(offset2) : 0;
    g.open2 = theta > 0 ? static_cast<Coordinate>(open * open) : infinity;
    if (opening == Opening::relative) {
      double const b = double(tree.cell_size(node)) + 2 * math::sqrt(offset2); // Opening
      double const error_term = Order == Multipole::quadrupole ? b * b * b : b * b;
      double const g_abs = gravity < 0 ? -double(gravity) : double(gravity);
      g.open2 = static_cast<Coordinate>(g_abs * tree.mass(node) * error_term);
    }
    f.mass = tree.mass(node);
    if constexpr (Order == Multipole::quadrupole) {
      for (int j = 0; j < 6; ++j)
        f.quadrupole[j] = tree.quadrupole(node, j);
      f.trace = tree.quadrupole(node, 6);
      f.unused = 0;
    }
    geometry(node) = g;
    far_field(node) = f;
  }
};

// The Barnes-Hut walk, shared by every quantity summed over it (Interaction:
// acceleration, potential). The queries are the bodies, in the caller's
// order. A cell that contains the body (a group: touches its box) always
// opens, so a body never feels itself through a cell; at theta = 0 every cell
// opens and the sum is direct summation. Per-body strategies use visit();
// GroupWalk the group interface (visitor.hpp); both apply the same
// criterion, a group's with its bounding box.
template <class MemorySpace, class Interaction, Multipole Order>
struct BarnesHutWalk {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "BarnesHutWalk needs a Kokkos memory space");
  using memory_space = MemorySpace;
  using state_type = typename Interaction::state_type;
  using group_type = GroupBox;
  using node_record_type = FarField<Order>;
  using point_record_type = BodyRecord;
  using query_record_type = QueryBody;
  static constexpr bool guided = false;
  static constexpr bool group_walk = true;

  Octree<MemorySpace> tree;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> bodies;
  Kokkos::View<CellGeometry const*, MemorySpace> geometry;
  Kokkos::View<FarField<Order> const*, MemorySpace> far_field;
  Coordinate theta2;
  Opening opening;
  Interaction interaction;
  Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies; // empty: all
  // relative: each body's acceleration from the previous evaluation (bodies,
  // 3), and the tolerance alpha.
  Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> previous;
  Coordinate alpha;

  KOKKOS_FUNCTION Index query_count() const { return static_cast<Index>(bodies.extent(0)); }
  KOKKOS_FUNCTION void initialize(Index, state_type& s) const { interaction.initialize(s); }

  // The criterion for a body (box) at squared distance d2 from the centre of
  // mass that does not touch the cell; `tolerance`: the relative criterion's
  // alpha |a| (body_tolerance, or the group's in GroupBox).
  KOKKOS_FUNCTION bool far_enough(CellGeometry const& g, Coordinate d2,
                                  Coordinate tolerance) const {
    if (opening == Opening::com_offset)
      return d2 > g.open2;
    if (opening == Opening::relative) {
      Coordinate bound = tolerance * d2 * d2; // alpha |a| d^4
      if constexpr (Order == Multipole::quadrupole)
        bound *= math::sqrt(d2);
      return g.open2 < bound;
    }
    Coordinate const size = 2 * g.half;
    return size * size < theta2 * d2;
  }

  // |a|^2 of a body's previous acceleration, and alpha |a| (relative
  // criterion only; 0 otherwise).
  KOKKOS_FUNCTION Coordinate previous_magnitude2(Index body) const {
    Coordinate const a[3] = {previous(body, 0), previous(body, 1), previous(body, 2)};
    return a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
  }
  KOKKOS_FUNCTION Coordinate body_tolerance(Index body) const {
    return opening == Opening::relative ? alpha * math::sqrt(previous_magnitude2(body)) : 0;
  }

  KOKKOS_FUNCTION bool visit(Index node, Index body, state_type& s) const {
    CellGeometry const g = geometry(node);
    Coordinate const x[3] = {bodies(body, 0), bodies(body, 1), bodies(body, 2)};
    Coordinate const dx[3] = {g.com[0] - x[0], g.com[1] - x[1], g.com[2] - x[2]};
    bool inside = true;
    for (int k = 0; k < 3; ++k) {
      Coordinate const offset = x[k] - g.center[k];
      inside = inside && offset <= g.half && -offset <= g.half;
    }
    if (!inside &&
        far_enough(g, dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2], body_tolerance(body))) {
      interaction.add(s, dx, far_field(node));
      return false;
    }
    if (!tree.topology.is_leaf(node))
      return true;
    auto const& y = tree.points.points.coordinates;
    for (Index i = tree.topology.point_begin(node); i < tree.topology.point_end(node); ++i) {
      if (tree.points.original_index(i) == body)
        continue;
      Coordinate const dxi[3] = {y(i, 0) - x[0], y(i, 1) - x[1], y(i, 2) - x[2]};
      interaction.add(s, dxi, tree.body_mass(i));
    }
    return false;
  }

  KOKKOS_FUNCTION int first_child(Index, Index, state_type const&) const { return 0; }
  // Partial sums add up (visitor.hpp: join), where the interaction's do.
  template <class Summed = Interaction>
  KOKKOS_FUNCTION auto join(state_type& s, state_type const& other) const
      -> decltype(std::declval<Summed const&>().join(s, other)) {
    interaction.join(s, other);
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const {
    interaction.finalize(body, s);
  }

  // The group interface.
  KOKKOS_FUNCTION bool active(Index body) const {
    return active_bodies.extent(0) == 0 || (active_bodies(body) & walking_body) != 0;
  }

  // A group's box and tolerance span its bodies, resting ones too (a
  // body's force is the same whichever others walk with it), but not
  // foreign ones (active_bodies' foreign_body: a distributed run's imported
  // bodies, which never walk): a box reaching out to them would open cells
  // for none of its bodies, and the essential tree holds only the cells its
  // rank's own bodies need.
  KOKKOS_FUNCTION GroupBox group(Index first, Index last) const {
    GroupBox box = bounds(first, last, true);
    if (opening == Opening::relative) {
      // The group's weakest pull decides for all its bodies: none is taken
      // whole by a cell that would be too coarse for it alone.
      Coordinate smallest = -1;
      for (Index i = first; i < last; ++i) {
        Index const body = tree.points.original_index(i);
        if (foreign(body)) continue;
        Coordinate const a2 = previous_magnitude2(body);
        smallest = smallest < 0 || a2 < smallest ? a2 : smallest;
      }
      box.tolerance = alpha * math::sqrt(smallest);
    }
    return box;
  }

  KOKKOS_FUNCTION bool foreign(Index body) const {
    return active_bodies.extent(0) != 0 && (active_bodies(body) & foreign_body) != 0;
  }

  // A cell the tree says is never one group (Octree::grouping).
  KOKKOS_FUNCTION bool splits(Index node) const {
    return tree.grouping.extent(0) != 0 && (tree.grouping(node) & Octree<MemorySpace>::never_one_group) != 0;
  }

  // The bounding box of the bodies [first, last) in tree order, foreign
  // ones left out when asked (tolerance 0; a group holds one body not foreign).
  KOKKOS_FUNCTION GroupBox bounds(Index first, Index last, bool skip_foreign = false) const {
    auto const& y = tree.points.points.coordinates;
    GroupBox box;
    bool empty = true;
    for (Index i = first; i < last; ++i) {
      if (skip_foreign && foreign(tree.points.original_index(i))) continue;
      for (int k = 0; k < 3; ++k) {
        Coordinate const v = y(i, k);
        box.low[k] = empty || v < box.low[k] ? v : box.low[k];
        box.high[k] = empty || v > box.high[k] ? v : box.high[k];
      }
      empty = false;
    }
    box.tolerance = 0;
    return box;
  }

  // Consecutive siblings' bodies [first, last) form one group only if their
  // box reaches into no other non-empty child of `parent`: a box spanning a
  // sibling's cell (sparse cells packed around a dense one, as in a galaxy's
  // halo) touches every cell of that sibling down to its leaves, and its
  // whole group would sum their bodies one by one.
  KOKKOS_FUNCTION bool packs(Index first, Index last, Index parent) const {
    if (tree.grouping.extent(0) != 0 && (tree.grouping(parent) & Octree<MemorySpace>::children_apart) != 0)
      return false;
    GroupBox const box = bounds(first, last);
    for (int slot = 0; slot < decltype(tree.topology)::arity; ++slot) {
      Index const child = tree.topology.child(parent, slot);
      if (child < 0)
        break;
      Index const begin = tree.topology.point_begin(child), end = tree.topology.point_end(child);
      if (begin == end || (begin >= first && end <= last))
        continue;
      CellGeometry const g = geometry(child);
      bool inside = true;
      for (int k = 0; k < 3; ++k)
        inside = inside && box.low[k] < g.center[k] + g.half && box.high[k] > g.center[k] - g.half;
      if (inside)
        return false;
    }
    return true;
  }

  KOKKOS_FUNCTION bool accept(Index node, GroupBox const& box) const {
    CellGeometry const g = geometry(node);
    Coordinate d2 = 0;
    bool touches = true;
    for (int k = 0; k < 3; ++k) {
      Coordinate const below = box.low[k] - g.com[k], above = g.com[k] - box.high[k];
      Coordinate const gap = below > 0 ? below : (above > 0 ? above : 0);
      d2 += gap * gap;
      touches =
          touches && box.low[k] - g.center[k] <= g.half && g.center[k] - box.high[k] <= g.half;
    }
    return !touches && far_enough(g, d2, box.tolerance);
  }

  KOKKOS_FUNCTION node_record_type node_record(Index node) const { return far_field(node); }
  KOKKOS_FUNCTION BodyRecord point_record(Index position) const {
    auto const& y = tree.points.points.coordinates;
    return BodyRecord{
        {y(position, 0), y(position, 1), y(position, 2)}, tree.body_mass(position), position};
  }
  KOKKOS_FUNCTION QueryBody query_record(Index body, Index position) const {
    return QueryBody{{bodies(body, 0), bodies(body, 1), bodies(body, 2)}, position};
  }
  KOKKOS_FUNCTION void interact(node_record_type const& f, QueryBody const& q,
                                state_type& s) const {
    Coordinate const dx[3] = {f.com[0] - q.x[0], f.com[1] - q.x[1], f.com[2] - q.x[2]};
    interaction.add(s, dx, f);
  }
  KOKKOS_FUNCTION void interact(BodyRecord const& p, QueryBody const& q, state_type& s) const {
    if (p.position == q.position)
      return;
    Coordinate const dx[3] = {p.x[0] - q.x[0], p.x[1] - q.x[1], p.x[2] - q.x[2]};
    interaction.add(s, dx, p.mass);
  }
};

// Q dx and dx.Q dx for the packed traceless quadrupole.
struct QuadrupoleTerms {
  Coordinate q_dx[3];
  Coordinate dx_q_dx;
  KOKKOS_FUNCTION QuadrupoleTerms(Coordinate const (&q)[6], Coordinate const (&dx)[3]) {
    q_dx[0] = q[0] * dx[0] + q[3] * dx[1] + q[4] * dx[2];
    q_dx[1] = q[3] * dx[0] + q[1] * dx[1] + q[5] * dx[2];
    q_dx[2] = q[4] * dx[0] + q[5] * dx[1] + q[2] * dx[2];
    dx_q_dx = dx[0] * q_dx[0] + dx[1] * q_dx[1] + dx[2] * q_dx[2];
  }
};

// Gravitational acceleration, Plummer-softened (the softened r in every
// power, as Bonsai does for the quadrupole), summed in float. dx points from
// the body to the source. The sums leave out G, applied once in finalize(),
// and are written as chains of fused multiply-adds: fewer instructions in
// the walk's innermost loop.
template <class MemorySpace>
struct Acceleration {
  struct state_type {
    Coordinate acceleration[3];
  };
  Coordinate softening2;
  Coordinate gravity;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations;

  KOKKOS_FUNCTION void initialize(state_type& s) const {
    for (int k = 0; k < 3; ++k)
      s.acceleration[k] = 0;
  }
  KOKKOS_FUNCTION Coordinate softened_distance2(Coordinate const (&dx)[3]) const {
    return softening2 + dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
  }
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3], Coordinate m) const {
    Coordinate const inv_r = math::rsqrt(softened_distance2(dx));
    Coordinate const factor = m * (inv_r * inv_r * inv_r);
    for (int k = 0; k < 3; ++k)
      s.acceleration[k] += factor * dx[k];
  }
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3],
                           FarField<Multipole::monopole> const& f) const {
    add(s, dx, f.mass);
  }
  // a = G [m dx / r^3 - Q dx / r^5 + 5/2 (dx.Q dx - eps^2 T) dx / r^7], r the
  // softened distance: the second-order Taylor expansion of the softened
  // pulls of the cell's bodies about their centre of mass. The trace term
  // vanishes without softening; left out, a cell within a few softening
  // lengths errs at second order, as a monopole does.
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3],
                           FarField<Multipole::quadrupole> const& f) const {
    Coordinate const inv_r = math::rsqrt(softened_distance2(dx));
    Coordinate const inv_r2 = inv_r * inv_r;
    Coordinate const inv_r3 = inv_r * inv_r2;
    Coordinate const inv_r5 = inv_r3 * inv_r2;
    QuadrupoleTerms const t(f.quadrupole, dx);
    Coordinate const expansion = Coordinate(2.5) * t.dx_q_dx - Coordinate(2.5) * softening2 * f.trace;
    Coordinate const radial = f.mass * inv_r3 + expansion * (inv_r5 * inv_r2);
    for (int k = 0; k < 3; ++k) {
      s.acceleration[k] += radial * dx[k];
      s.acceleration[k] -= inv_r5 * t.q_dx[k];
    }
  }
  KOKKOS_FUNCTION void join(state_type& s, state_type const& other) const {
    for (int k = 0; k < 3; ++k)
      s.acceleration[k] += other.acceleration[k];
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const {
    for (int k = 0; k < 3; ++k)
      accelerations(body, k) = gravity * s.acceleration[k];
  }
};

// The acceleration and the number of interactions it summed (cells taken
// whole and bodies of opened leaves): each body's measured cost, which
// distributed N-body runs balance, and, when `cell_costs` is given, how many
// of them were cells (their flops differ: interaction_flops). The same float
// sums as Acceleration.
template <class MemorySpace>
struct CountedAcceleration {
  struct state_type {
    typename Acceleration<MemorySpace>::state_type acceleration;
    Index cells, bodies;
  };
  Acceleration<MemorySpace> acceleration;
  Kokkos::View<Index*, MemorySpace> costs;
  Kokkos::View<Index*, MemorySpace> cell_costs; // empty: not counted apart

  KOKKOS_FUNCTION void initialize(state_type& s) const {
    acceleration.initialize(s.acceleration);
    s.cells = s.bodies = 0;
  }
  template <class Source>
  KOKKOS_FUNCTION void add(state_type& s, Coordinate const (&dx)[3], Source const& source) const {
    acceleration.add(s.acceleration, dx, source);
    if constexpr (std::is_arithmetic_v<Source>)
      ++s.bodies;
    else
      ++s.cells;
  }
  KOKKOS_FUNCTION void join(state_type& s, state_type const& other) const {
    acceleration.join(s.acceleration, other.acceleration);
    s.cells += other.cells;
    s.bodies += other.bodies;
  }
  KOKKOS_FUNCTION void finalize(Index body, state_type const& s) const {
    acceleration.finalize(body, s.acceleration);
    costs(body) = s.cells + s.bodies;
    if (cell_costs.extent(0) != 0)
      cell_costs(body) = s.cells;
  }
};

// The walk of `interaction` over `tree` with `options`: its cells packed for
// this opening angle and order (the one place both are read). `previous`:
// the bodies' previous accelerations, which the relative criterion reads.
// The packed cells are arrays of `workspace` when there is one.
template <Multipole Order, class ExecutionSpace, class MemorySpace, class Interaction>
BarnesHutWalk<MemorySpace, Interaction, Order>
make_barnes_hut_walk(ExecutionSpace const& space, Octree<MemorySpace> const& tree,
                     Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> bodies,
                     BarnesHutOptions const& options, Interaction const& interaction,
                     Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies,
                     Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> previous = {},
                     Workspace* workspace = nullptr) {
  if (options.opening == Opening::relative &&
      (previous.extent(0) != bodies.extent(0) || previous.extent(1) != 3))
    throw InputError("opening", ": the relative criterion needs the bodies' previous "
                                "accelerations (bodies, 3)");
  Index const nodes = tree.topology.size();
  WorkspaceArrays<ExecutionSpace> const arrays(space, workspace);
  auto const geometry =
      arrays.template make<Kokkos::View<CellGeometry*, MemorySpace>>("treetrav::BarnesHut::geometry", nodes);
  auto const far_field =
      arrays.template make<Kokkos::View<FarField<Order>*, MemorySpace>>("treetrav::BarnesHut::far_field", nodes);
  Kokkos::parallel_for("treetrav::BarnesHut::pack_cells",
                       as_kernel_argument(Kokkos::RangePolicy<ExecutionSpace>(space, 0, nodes)),
                       PackCells<MemorySpace, Order>{tree, geometry, far_field, options.theta,
                                                     options.opening, options.gravity});
  return {tree,
          bodies,
          geometry,
          far_field,
          options.theta * options.theta,
          options.opening,
          interaction,
          active_bodies,
          previous,
          options.alpha};
}

// Checks what every Barnes-Hut sum requires of its arguments.
template <class MemorySpace>
void check_barnes_hut_arguments(char const* what, Octree<MemorySpace> const& tree,
                                PointSet<MemorySpace> const& bodies,
                                BarnesHutOptions const& options) {
  if (!(options.theta >= 0) || !std::isfinite(options.theta))
    throw InputError("theta", " must be >= 0 (got " + std::to_string(options.theta) + ")");
  if (!(options.alpha >= 0) || !std::isfinite(options.alpha))
    throw InputError("alpha", " must be >= 0 (got " + std::to_string(options.alpha) + ")");
  if (!(options.softening >= 0) || !std::isfinite(options.softening))
    throw InputError("softening", " must be >= 0 (got " + std::to_string(options.softening) + ")");
  if (bodies.size() != tree.points.size() || bodies.dimension() != 3)
    throw InputError(std::string(what) + ": the bodies must be the octree's own 3-D bodies");
  if (options.multipole == Multipole::quadrupole &&
      (tree.quadrupole.extent(0) != std::size_t(tree.topology.size()) ||
       tree.quadrupole.extent(1) != 7))
    throw InputError(std::string(what) + ": quadrupole forces need the octree's quadrupole moments "
                                         "(build_morton_octree computes them)");
}

} // namespace detail

// Barnes-Hut gravitational acceleration of every body.
template <class MemorySpace, Multipole Order = Multipole::monopole>
using BarnesHutVisitor =
    detail::BarnesHutWalk<MemorySpace, detail::Acceleration<MemorySpace>, Order>;

namespace detail {

// The walk of `interaction` (which writes `accelerations`) in the order of
// `options`. The relative criterion reads each body's previous acceleration
// from the row its new one overwrites (only its own walk writes it, at the
// end).
template <class ExecutionSpace, class MemorySpace, class Strategy, class Interaction>
void walk_barnes_hut(ExecutionSpace const& space, Octree<MemorySpace> const& tree,
                     PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options,
                     Strategy strategy, Interaction const& interaction,
                     Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations,
                     Kokkos::View<Index const*, MemorySpace> order,
                     Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies,
                     TraversalMetrics<MemorySpace> const& metrics) {
  auto const run = [&](auto walk) {
    traverse(space, tree.topology, walk, strategy, order, metrics);
  };
  Kokkos::View<Coordinate const**, Kokkos::LayoutLeft, MemorySpace> const previous = accelerations;
  if (options.multipole == Multipole::quadrupole)
    run(make_barnes_hut_walk<Multipole::quadrupole>(space, tree, bodies.coordinates, options,
                                                    interaction, active_bodies, previous, workspace_of(strategy)));
  else
    run(make_barnes_hut_walk<Multipole::monopole>(space, tree, bodies.coordinates, options,
                                                  interaction, active_bodies, previous, workspace_of(strategy)));
}

// The Barnes-Hut sums, instantiated here (compiled.hpp).
template <class ExecutionSpace, class MemorySpace, class Strategy>
void compute_barnes_hut_accelerations_with(
    ExecutionSpace const& space, Octree<MemorySpace> const& tree,
    PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options, Strategy strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations,
    Kokkos::View<Index const*, MemorySpace> order,
    Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies,
    TraversalMetrics<MemorySpace> const& metrics) {
  detail::check_barnes_hut_arguments("Barnes-Hut", tree, bodies, options);
  if (accelerations.extent(0) != std::size_t(bodies.size()) || accelerations.extent(1) != 3)
    throw std::invalid_argument("Barnes-Hut: accelerations must be (bodies, 3)");
  detail::Acceleration<MemorySpace> const interaction{options.softening * options.softening,
                                                      options.gravity, accelerations};
  walk_barnes_hut(space, tree, bodies, options, strategy, interaction, accelerations, order,
                  active_bodies, metrics);
}

template <class ExecutionSpace, class MemorySpace, class Strategy>
void compute_barnes_hut_accelerations_and_costs_with(
    ExecutionSpace const& space, Octree<MemorySpace> const& tree,
    PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options, Strategy strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations,
    Kokkos::View<Index*, MemorySpace> costs, Kokkos::View<Index const*, MemorySpace> order,
    Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies,
    Kokkos::View<Index*, MemorySpace> cell_costs) {
  detail::check_barnes_hut_arguments("Barnes-Hut", tree, bodies, options);
  if (accelerations.extent(0) != std::size_t(bodies.size()) || accelerations.extent(1) != 3 ||
      costs.extent(0) != std::size_t(bodies.size()) ||
      (cell_costs.extent(0) != 0 && cell_costs.extent(0) != std::size_t(bodies.size())))
    throw std::invalid_argument(
        "Barnes-Hut: accelerations must be (bodies, 3), costs and cell costs (bodies)");
  detail::CountedAcceleration<MemorySpace> const interaction{
      {options.softening * options.softening, options.gravity, accelerations}, costs, cell_costs};
  walk_barnes_hut(space, tree, bodies, options, strategy, interaction, accelerations, order,
                  active_bodies, TraversalMetrics<MemorySpace>{});
}

// The Barnes-Hut sums on the backends treetrav::searches compiles
// (compiled.hpp); their definitions are there (src/searches/).
template <class ExecutionSpace, int Part>
struct CompiledBarnesHut {
  using memory_space = typename ExecutionSpace::memory_space;
  static void accelerations(ExecutionSpace const& space, Octree<memory_space> const& tree,
                            PointSet<memory_space> const& bodies, BarnesHutOptions const& options,
                            CompiledForceStrategy const& strategy,
                            Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> accelerations,
                            Kokkos::View<Index const*, memory_space> order,
                            Kokkos::View<std::uint8_t const*, memory_space> active_bodies,
                            TraversalMetrics<memory_space> const& metrics);
  static void accelerations_and_costs(
      ExecutionSpace const& space, Octree<memory_space> const& tree,
      PointSet<memory_space> const& bodies, BarnesHutOptions const& options,
      CompiledForceStrategy const& strategy,
      Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> accelerations,
      Kokkos::View<Index*, memory_space> costs, Kokkos::View<Index const*, memory_space> order,
      Kokkos::View<std::uint8_t const*, memory_space> active_bodies,
      Kokkos::View<Index*, memory_space> cell_costs);
};

template <class ExecutionSpace, class MemorySpace, class Strategy>
inline constexpr bool compiled_barnes_hut_v =
    compiled_search_v<ExecutionSpace,
                      std::is_same_v<MemorySpace, typename ExecutionSpace::memory_space>, Strategy,
                      BarnesHutStrategy>;

} // namespace detail

// Writes the accelerations (bodies, 3) of the bodies the octree was built
// over, given in the caller's order in `bodies`, into `accelerations`: of
// every body, or of those `active_bodies` marks walking (bodies; empty: all), whose
// work items `order` lists (per-body strategies) or whose tree positions it
// maps (GroupWalk; see traverse()). Other rows are left as they are. Under
// the relative criterion a body's row must hold its previous acceleration
// (an N-body step's last one, or relative_estimate_options' sum), which the
// walk reads before it overwrites it.
template <class ExecutionSpace, class MemorySpace, class Strategy>
void compute_barnes_hut_accelerations(
    ExecutionSpace const& space, Octree<MemorySpace> const& tree,
    PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options, Strategy strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, typename Octree<MemorySpace>::memory_space>
        accelerations,
    Kokkos::View<Index const*, typename Octree<MemorySpace>::memory_space> order = {},
    Kokkos::View<std::uint8_t const*, typename Octree<MemorySpace>::memory_space> active_bodies =
        {},
    TraversalMetrics<typename Octree<MemorySpace>::memory_space> const& metrics = {}) {
  if constexpr (detail::compiled_barnes_hut_v<ExecutionSpace, MemorySpace, Strategy>)
    detail::CompiledBarnesHut<ExecutionSpace, detail::compiled_part_v<ExecutionSpace, Strategy,
                                                                      BarnesHutStrategy>>::
        accelerations(
        space, tree, bodies, options, detail::compiled_strategy<BarnesHutStrategy>(strategy),
        accelerations, order, active_bodies, metrics);
  else
    detail::compute_barnes_hut_accelerations_with(space, tree, bodies, options, strategy,
                                                  accelerations, order, active_bodies, metrics);
}

// compute_barnes_hut_accelerations that also writes each walked body's number
// of interactions into `costs` (bodies) and, when given, how many of them
// were cells taken whole into `cell_costs` (bodies).
template <class ExecutionSpace, class MemorySpace, class Strategy>
void compute_barnes_hut_accelerations_and_costs(
    ExecutionSpace const& space, Octree<MemorySpace> const& tree,
    PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options, Strategy strategy,
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations,
    Kokkos::View<Index*, MemorySpace> costs, Kokkos::View<Index const*, MemorySpace> order,
    Kokkos::View<std::uint8_t const*, MemorySpace> active_bodies = {},
    Kokkos::View<Index*, MemorySpace> cell_costs = {}) {
  if constexpr (detail::compiled_barnes_hut_v<ExecutionSpace, MemorySpace, Strategy>)
    detail::CompiledBarnesHut<ExecutionSpace, detail::compiled_part_v<ExecutionSpace, Strategy,
                                                                      BarnesHutStrategy>>::
        accelerations_and_costs(
        space, tree, bodies, options, detail::compiled_strategy<BarnesHutStrategy>(strategy),
        accelerations, costs, order, active_bodies, cell_costs);
  else
    detail::compute_barnes_hut_accelerations_and_costs_with(space, tree, bodies, options, strategy,
                                                            accelerations, costs, order,
                                                            active_bodies, cell_costs);
}

// Accelerations (bodies, 3) of the bodies the octree was built over, given in
// the caller's order in `bodies`. Under the relative criterion they are first
// estimated with relative_estimate_options.
template <class ExecutionSpace, class MemorySpace, class Strategy>
Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> barnes_hut_accelerations(
    ExecutionSpace const& space, Octree<MemorySpace> const& tree,
    PointSet<MemorySpace> const& bodies, BarnesHutOptions const& options, Strategy strategy,
    Kokkos::View<Index const*, typename Octree<MemorySpace>::memory_space> order = {},
    TraversalMetrics<typename Octree<MemorySpace>::memory_space> const& metrics = {}) {
  detail::check_barnes_hut_arguments("Barnes-Hut", tree, bodies, options);
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> accelerations(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::BarnesHut::accelerations"),
      bodies.size(), 3);
  if (options.opening == Opening::relative)
    compute_barnes_hut_accelerations(space, tree, bodies, relative_estimate_options(options),
                                     strategy, accelerations, order);
  compute_barnes_hut_accelerations(space, tree, bodies, options, strategy, accelerations, order, {},
                                   metrics);
  return accelerations;
}

} // namespace treetrav
