#pragma once

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/nbody/configuration.hpp>
#include <treetrav/nbody/domain.hpp>
#include <treetrav/nbody/essential_tree.hpp>
#include <treetrav/nbody/potential.hpp>
#include <treetrav/trees/octree.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace treetrav::nbody {

// Seconds spent per phase, summed over the run; every timer stops after a
// fence, so device work is charged to the phase that launched it.
struct PhaseTimes {
  double tree_build = 0;      // Morton codes, sort, hierarchy, bodies in tree order
  double center_of_mass = 0;  // cell masses, centres of mass (and quadrupoles) of a new octree
  double refit = 0;           // the octree refitted: bodies moved, cubes grown, moments summed anew
  double forces = 0;          // barnes_hut_accelerations
  double integration = 0;     // kicks, drifts, time bins
  double diagnostics = 0;     // potentials for the snapshots
  double io = 0;              // device-to-host copies and snapshot/checkpoint writes
  double rebalance = 0;       // distributed runs: cutting the Morton curve anew, moving the bodies that change rank
  std::int64_t force_evaluations = 0;
  std::int64_t tree_builds = 0, refits = 0;  // how the evaluations got their octrees
  std::int64_t body_forces = 0;  // bodies whose force was evaluated, summed over the evaluations
  // Distributed runs, this rank: cells and bodies of other ranks in its essential trees, summed.
  std::int64_t imported_cells = 0, imported_bodies = 0;
  // With count_interactions(): cells taken whole and bodies met, summed over the bodies' forces.
  std::int64_t cell_interactions = 0, body_interactions = 0;
  // Wall time of each step (its force evaluations, kicks and drifts, fenced;
  // not the initial forces, snapshots or checkpoints).
  std::vector<double> step_seconds;

  // The median of step_seconds (0 without steps): what a step costs once the
  // first one has paid the one-time costs (kernel loading, first allocations).
  double median_step_seconds() const {
    if (step_seconds.empty()) return 0;
    std::vector<double> sorted = step_seconds;
    auto const middle = sorted.begin() + sorted.size() / 2;
    std::nth_element(sorted.begin(), middle, sorted.end());
    return *middle;
  }
};

// The largest bin a run may use: steps down to dt / 2^max_time_bin.
inline constexpr int max_time_bin = 30;

namespace detail {

// False for NaN and +-infinity (without <cmath>, which device code may lack).
KOKKOS_INLINE_FUNCTION bool is_finite(double value) { return value - value == 0; }

// bodies = float(positions); counts the bodies that do not fit a float.
template <class Positions, class Bodies>
struct CastPositions {
  Positions positions;
  Bodies bodies;
  KOKKOS_FUNCTION void operator()(Index i, Index& non_finite) const {
    bool finite = true;
    for (int k = 0; k < 3; ++k) {
      bodies(i, k) = static_cast<Coordinate>(positions(i, k));
      finite = finite && is_finite(bodies(i, k));
    }
    non_finite += finite ? 0 : 1;
  }
};

// Block time steps on an integer timeline: a base step dt is 2^max_bin ticks
// and a body in bin k steps by 2^(max_bin - k) ticks. Bin 0 (and max_bin 0:
// fixed steps) is dt itself.
struct Timeline {
  int max_bin;
  double tick;  // dt / 2^max_bin, exact

  KOKKOS_INLINE_FUNCTION std::int64_t ticks(int bin) const { return std::int64_t(1) << (max_bin - bin); }
  KOKKOS_INLINE_FUNCTION double half_step(int bin) const { return double(ticks(bin)) * tick / 2; }
  KOKKOS_INLINE_FUNCTION bool boundary(int bin, std::int64_t at) const { return at % ticks(bin) == 0; }
};

// The next tick at which some body's step ends.
template <class Bins>
struct NextEvent {
  Bins bins;
  Timeline timeline;
  std::int64_t now;
  KOKKOS_FUNCTION void operator()(Index i, std::int64_t& next) const {
    std::int64_t const step = timeline.ticks(bins(i));
    std::int64_t const end = (now / step + 1) * step;
    next = end < next ? end : next;
  }
};

// Opening half kick of the bodies whose step starts now, then every body
// drifts to `next`; the float bodies follow. Counts non-finite bodies.
template <class Vectors, class Accelerations, class Bodies, class Bins>
struct KickDrift {
  Vectors x, v;
  Accelerations a;
  Bodies bodies;
  Bins bins;
  Timeline timeline;
  std::int64_t now;
  double drift;  // (next - now) ticks
  KOKKOS_FUNCTION void operator()(Index i, Index& non_finite) const {
    int const bin = bins(i);
    bool const starts = timeline.boundary(bin, now);
    double const half = timeline.half_step(bin);
    bool finite = true;
    for (int k = 0; k < 3; ++k) {
      if (starts) v(i, k) += half * a(i, k);
      x(i, k) += drift * v(i, k);
      bodies(i, k) = static_cast<Coordinate>(x(i, k));
      finite = finite && is_finite(bodies(i, k));
    }
    non_finite += finite ? 0 : 1;
  }
};

// Marks the bodies whose step ends at `now`; counts them.
template <class Bins, class Active>
struct MarkActive {
  Bins bins;
  Active active;
  Timeline timeline;
  std::int64_t now;
  KOKKOS_FUNCTION void operator()(Index i, Index& count) const {
    bool const ends = timeline.boundary(bins(i), now);
    active(i) = ends ? 1 : 0;
    count += ends ? 1 : 0;
  }
};

// The active bodies in tree order (the work items of per-body walks).
template <class Order, class Active, class List>
struct ListActive {
  using value_type = Index;
  Order tree_order;
  Active active;
  List list;
  KOKKOS_FUNCTION void operator()(Index position, Index& before, bool final) const {
    Index const body = tree_order(position);
    if (!active(body)) return;
    if (final) list(before) = body;
    ++before;
  }
};

// The bin the acceleration criterion asks for: the smallest k with
// dt / 2^k <= eta sqrt(softening / |a|), at most max_bin.
KOKKOS_INLINE_FUNCTION int wanted_bin(double dt, double eta, double softening, double a2, int max_bin) {
  double const a = a2 > 0 ? math::sqrt(a2) : 0;
  double const wanted = a > 0 ? eta * math::sqrt(softening / a) : dt;
  int bin = 0;
  double step = dt;
  while (bin < max_bin && step > wanted) step /= 2, ++bin;
  return bin;
}

// Closing half kick of the bodies whose step ended now, then their next bin:
// finer at once, coarser by one bin when `now` lies on the coarser grid.
template <class Vectors, class Accelerations, class Bins, class Active>
struct KickAndBin {
  Vectors v;
  Accelerations a;
  Bins bins;
  Active active;  // empty: all bodies ended their step
  Timeline timeline;
  std::int64_t now;
  double dt, eta, softening;
  KOKKOS_FUNCTION void operator()(Index i, Index& non_finite) const {
    if (active.extent(0) != 0 && !active(i)) return;
    int const bin = bins(i);
    double const half = timeline.half_step(bin);
    bool finite = true;
    double a2 = 0;
    for (int k = 0; k < 3; ++k) {
      v(i, k) += half * a(i, k);
      finite = finite && is_finite(v(i, k));
      a2 += double(a(i, k)) * a(i, k);
    }
    non_finite += finite ? 0 : 1;
    if (eta <= 0) return;
    int const wanted = wanted_bin(dt, eta, softening, a2, timeline.max_bin);
    if (wanted > bin) bins(i) = static_cast<std::int8_t>(wanted);
    else if (wanted < bin && timeline.boundary(bin - 1, now)) bins(i) = static_cast<std::int8_t>(bin - 1);
  }
};

// Every body's first bin, from the accelerations of the initial state.
template <class Accelerations, class Bins>
struct InitialBins {
  Accelerations a;
  Bins bins;
  double dt, eta, softening;
  int max_bin;
  KOKKOS_FUNCTION void operator()(Index i) const {
    double a2 = 0;
    for (int k = 0; k < 3; ++k) a2 += double(a(i, k)) * a(i, k);
    bins(i) = static_cast<std::int8_t>(eta > 0 ? wanted_bin(dt, eta, softening, a2, max_bin) : 0);
  }
};

// The interactions of the bodies whose force was evaluated (all when `active` is empty):
// their cells taken whole (`cells_only`) or all of them.
template <class Counts, class Active>
struct SumInteractions {
  Counts counts, cell_counts;
  Active active;
  bool cells_only;
  KOKKOS_FUNCTION void operator()(Index i, std::int64_t& sum) const {
    if (active.extent(0) == 0 || active(i) != 0) sum += cells_only ? cell_counts(i) : counts(i);
  }
};

// The essential tree's rows to walk: this rank's (rows 0..local-1), all or
// its active ones; the other ranks' bodies are foreign.
template <class Marked, class Active>
struct MarkWalked {
  Marked marked;
  Active active;
  Index local;
  bool all;
  KOKKOS_FUNCTION void operator()(Index i) const {
    marked(i) = i >= local ? foreign_body : all || active(i) ? walking_body : 0;
  }
};

// The forces (and costs) of the walked bodies, rows 0..n-1 of the essential tree's.
template <class Accelerations, class Costs, class Marked>
struct KeepForces {
  Accelerations from, into;
  Costs costs_from, costs_into;
  Marked walked;
  KOKKOS_FUNCTION void operator()(Index i) const {
    if ((walked(i) & walking_body) == 0) return;
    for (int k = 0; k < 3; ++k) into(i, k) = from(i, k);
    costs_into(i) = costs_from(i);
  }
};

}  // namespace detail

// The state of an N-body system on an execution space, advanced by
// kick-drift-kick leapfrog: positions and velocities in double; the tree and
// the forces in float (positions cast every step), as barnes_hut_accelerations
// takes and returns them. With block steps (Configuration::eta > 0) each
// body's step is dt / 2^bin; a base step dt is then a sequence of sub-steps,
// each drifting every body to the next time a step ends, and only the bodies
// whose step ends are kicked and have their forces evaluated (on a tree of
// all bodies); at the end of a base step every body is synchronised.
//
// With a Domain (a distributed run) the state is this rank's bodies: the
// forces walk the rank's locally essential tree (build_essential_tree, on
// the execution space), and the next step
// end and the divergence counts are agreed over all ranks.
//
// Every operation is a pure function of the state: the octree is built from
// the positions alone (with refits, Configuration::refit, from the positions
// of its last build, which are then part of the state: tree_positions()),
// each body's forces are summed in tree order (a group walk's in its group's
// fixed order), and the kicks, drifts and bin changes are element-wise, so a
// run resumed from a checkpoint of (positions, velocities, accelerations,
// bins, tree positions) continues bit-for-bit.
template <class ExecutionSpace, class Strategy>
class Simulation {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "a Kokkos execution space");

 public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Vectors = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  using Accelerations = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space>;
  using HostAccelerations = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  using Bins = Kokkos::View<std::int8_t*, memory_space>;
  using HostBins = Kokkos::View<std::int8_t*, Kokkos::HostSpace>;
  using HostTreePositions = Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

  // The system `state` (positions, velocities, masses, ids; its time is
  // ignored: step s is at configuration.time_at(s)) at step `step`. Before the
  // first step, compute_accelerations() or set_accelerations() (and, with
  // block steps, set_bins() after set_accelerations()).
  // `domain` (a distributed run's): the ranks agree on the input checks, so a
  // rank whose bodies fail them does not leave the others waiting.
  Simulation(ExecutionSpace const& space, Strategy strategy, Configuration const& configuration,
             io::Snapshot const& state, std::int64_t step, std::shared_ptr<Domain const> domain = nullptr);
  // A rank's share `bodies` of a distributed run on `domain`, with their
  // accelerations, bins and costs (set_accelerations() and set_bins() are done).
  Simulation(ExecutionSpace const& space, Strategy strategy, Configuration const& configuration,
             BodyStates const& bodies, std::int64_t step, std::shared_ptr<Domain const> domain);

  // Builds the octree over the current positions and evaluates the forces
  // of every body; with block steps, also sets every body's bin from them.
  void compute_accelerations();
  // The accelerations of the current state, from a checkpoint.
  void set_accelerations(HostAccelerations const& accelerations);
  // The bins of the current state, from a checkpoint (block steps).
  void set_bins(HostBins const& bins);
  // Refits (Configuration::refit > 0): the positions the current octree was
  // built from (float, as the bodies' rows), empty before the first force
  // evaluation; and, from a checkpoint, the same, so that the next force
  // evaluation refits the octree the checkpointed run refitted.
  HostTreePositions tree_positions();
  void set_tree_positions(HostTreePositions const& positions);
  // One kick-drift-kick step of dt (with block steps: all its sub-steps).
  // Throws InputError if a body's position or velocity stops being finite
  // (nothing of that step is kept).
  void step();

  std::int64_t current_step() const { return step_; }
  double time() const { return configuration_.time_at(step_); }
  Index size() const { return bodies_.size(); }
  PhaseTimes& times() { return times_; }
  // Whether the force evaluations count their interactions into times()
  // (one process; the counting walk carries two more counters a body).
  void count_interactions(bool on) { counting_ = on; }
  std::int64_t sub_steps() const { return sub_steps_; }

  // Copies of the current state on the host, with each body's potential when
  // asked (computed over the octree of the last force evaluation).
  io::Snapshot state(bool with_potentials);
  HostAccelerations host_accelerations();
  HostBins host_bins();
  // The state with everything that moves with a body between ranks.
  BodyStates bodies(bool with_potentials = false);

 private:
  // Throws InputError unless 1 <= bodies <= the largest Index.
  static Index body_count(io::Snapshot const& state) {
    if (state.size() < 1 || state.size() > static_cast<std::size_t>(std::numeric_limits<Index>::max()))
      throw InputError(fmt::format("nbody: {} bodies; need 1 to {}", state.size(), std::numeric_limits<Index>::max()));
    return static_cast<Index>(state.size());
  }
  static Strategy configured(Strategy strategy, Configuration const& configuration, Workspace* workspace);
  void check_finite(Index non_finite, char const* what) const;
  Kokkos::View<Index const*, memory_space> tree_order() const { return octree_.tree.points.original_index; }
  // The forces of the active bodies (all when `active_count` is the size).
  void evaluate_forces(Index active_count);
  // The octree of this evaluation in octree_: refitted while its growth
  // stays within Configuration::refit, else built anew; with its moments.
  void update_octree();
  // The same over the locally essential tree of a distributed run.
  void evaluate_distributed_forces(bool all);
  // The essential tree of this rank's float bodies for `options`.
  EssentialTree<memory_space> essential_tree(BarnesHutOptions const& options);
  // The essential tree's rows (`rows` of them) as walks read them
  // (MarkWalked): this rank's all or its active ones walking, the other
  // ranks' foreign; in the run's workspace.
  Kokkos::View<std::uint8_t const*, memory_space> walked_rows(Index rows, bool all);
  // Summed over the ranks of a distributed run.
  std::int64_t total(std::int64_t value) const { return domain_ ? domain_->sum(value) : value; }
  // One sub-step from tick `now` to the next step end; returns its tick.
  std::int64_t sub_step(std::int64_t now);
  // Never an alias (the state moves on); uninitialised, so that a Serial run
  // starts no OpenMP work.
  template <class View>
  typename View::HostMirror host_copy(View const& view) const;

  ExecutionSpace space_;
  std::unique_ptr<Workspace> workspace_;  // the run's scratch (stable address for the strategy)
  Configuration configuration_;
  Strategy strategy_;
  detail::Timeline timeline_;
  std::int64_t step_;
  std::int64_t sub_steps_ = 0;
  Vectors positions_;
  Vectors velocities_;
  PointSet<memory_space> bodies_;                  // float positions: the tree's and traversal's bodies
  Kokkos::View<Coordinate*, memory_space> masses_;  // float, for the tree
  Kokkos::View<double*, Kokkos::HostSpace> host_masses_;
  Kokkos::View<ParticleId*, Kokkos::HostSpace> host_ids_;
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> host_types_;  // carried through to the snapshots
  Accelerations accelerations_;
  Bins bins_;
  Kokkos::View<std::uint8_t*, memory_space> active_;  // bodies whose step ends at this sub-step
  Kokkos::View<Index*, memory_space> active_list_;    // the same, in tree order
  LevelledOctree<memory_space> octree_;  // of the last force evaluation, with what its refits keep
  // Refits: the bodies octree_ was built from; restore_octree_: build it
  // from them at the next evaluation (a restart).
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, memory_space> tree_positions_;
  bool restore_octree_ = false;
  PhaseTimes times_;
  std::shared_ptr<Domain const> domain_;                 // none: one process
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> rows_;  // distributed: the bodies' rows in the system
  Kokkos::View<Index*, memory_space> costs_;             // distributed: interactions of the last walk
  bool counting_ = false;                                // count_interactions()
  Kokkos::View<Index*, memory_space> counts_, cell_counts_;  // counting_: the last walk's, per body
};

template <class ExecutionSpace, class Strategy>
Strategy Simulation<ExecutionSpace, Strategy>::configured(Strategy strategy, Configuration const& configuration,
                                                          Workspace* workspace) {
  strategy.workspace = workspace;
  if constexpr (Strategy::group_walk) {
    if (configuration.group_size < 1) throw std::invalid_argument("nbody: group walks need a group size");
    strategy.group_size = configuration.group_size;
  } else if (configuration.group_size != 0) {
    throw std::invalid_argument("nbody: a group size is for group walks only");
  }
  if (configuration.block_steps() && !(configuration.forces.softening > 0))
    throw InputError("nbody: block steps (eta > 0) need a positive softening (dt_i = eta sqrt(softening / |a_i|))");
  if (!(configuration.refit >= 0) || !detail::is_finite(configuration.refit))
    throw InputError("refit", fmt::format(" {}: the octree's growth before a rebuild must be finite and at "
                                          "least 0 (0: a new octree every force evaluation)",
                                          configuration.refit));
  if (configuration.max_bin < 0 || configuration.max_bin > max_time_bin)
    throw InputError(fmt::format("nbody: the deepest time bin must be in [0, {}] (got {})", max_time_bin,
                                 configuration.max_bin));
  return strategy;
}

template <class ExecutionSpace, class Strategy>
Simulation<ExecutionSpace, Strategy>::Simulation(ExecutionSpace const& space, Strategy strategy,
                                                 Configuration const& configuration, io::Snapshot const& state,
                                                 std::int64_t step, std::shared_ptr<Domain const> domain)
    : space_(space),
      workspace_(std::make_unique<Workspace>()),
      configuration_(configuration),
      strategy_(configured(strategy, configuration, workspace_.get())),
      timeline_{configuration.block_steps() ? configuration.max_bin : 0,
                configuration.dt / double(std::int64_t(1) << (configuration.block_steps() ? configuration.max_bin : 0))},
      step_(step),
      positions_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::positions"),
                 body_count(state), 3),
      velocities_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::velocities"),
                  state.size(), 3),
      bodies_(allocate_points<memory_space>("treetrav::nbody::Simulation::bodies", body_count(state), 3)),
      host_masses_(host_copy(state.masses)),
      host_ids_(host_copy(state.ids)),
      host_types_(host_copy(state.types)),
      bins_(Kokkos::view_alloc(space, "treetrav::nbody::Simulation::bins"), state.size()),
      active_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::active"),
              state.size()),
      active_list_(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::active_list"),
                   state.size()) {
  Kokkos::deep_copy(space_, positions_, state.coordinates);
  Kokkos::deep_copy(space_, velocities_, state.velocities);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::masses"), state.size());
  for (std::size_t i = 0; i < state.size(); ++i) masses(i) = static_cast<Coordinate>(state.masses(i));
  masses_ = Kokkos::create_mirror_view_and_copy(space_, masses);
  Index non_finite = 0;
  Kokkos::parallel_reduce("treetrav::nbody::Simulation::cast_positions",
                          Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                          detail::CastPositions<Vectors, typename PointSet<memory_space>::coordinates_view>{
                              positions_, bodies_.coordinates},
                          non_finite);
  if (domain) {
    if (configuration.refit > 0)
      throw InputError("refit", fmt::format(" {}: refits are for one process (several ranks build their "
                                            "essential trees anew every force evaluation); use 0",
                                            configuration.refit));
    if (configuration.forces.opening == Opening::relative)
      throw InputError("opening", ": the relative criterion runs in one process only (the essential "
                                  "trees of several ranks are cut by the geometric criteria)");
    non_finite = domain->sum(non_finite);
    domain_ = std::move(domain);
  }
  if (non_finite > 0)
    throw InputError(fmt::format("nbody: {} bodies lie outside the float range of the tree", non_finite));
}

template <class ExecutionSpace, class Strategy>
Simulation<ExecutionSpace, Strategy>::Simulation(ExecutionSpace const& space, Strategy strategy,
                                                 Configuration const& configuration, BodyStates const& bodies,
                                                 std::int64_t step, std::shared_ptr<Domain const> domain)
    : Simulation(space, strategy, configuration, bodies.state, step, std::move(domain)) {
  rows_ = bodies.rows;
  // The essential tree orders equal codes by index, as one process orders them by row.
  bool ascending = rows_.extent(0) == std::size_t(size());
  for (std::size_t i = 1; ascending && i < rows_.extent(0); ++i) ascending = rows_(i - 1) < rows_(i);
  if (!ascending) throw std::invalid_argument("nbody: a rank's bodies must be ordered by row, one row each");
  costs_ = Kokkos::create_mirror_view_and_copy(space_, bodies.costs);
  set_accelerations(bodies.accelerations);
  set_bins(bodies.bins);
}

template <class ExecutionSpace, class Strategy>
EssentialTree<typename ExecutionSpace::memory_space>
Simulation<ExecutionSpace, Strategy>::essential_tree(BarnesHutOptions const& options) {
  return build_essential_tree(space_, *domain_, bodies_, masses_, rows_, options, configuration_.leaf_size,
                              options.multipole == Multipole::quadrupole, configuration_.group_size,
                              workspace_.get());
}

template <class ExecutionSpace, class Strategy>
Kokkos::View<std::uint8_t const*, typename ExecutionSpace::memory_space>
Simulation<ExecutionSpace, Strategy>::walked_rows(Index rows, bool all) {
  auto const marked = treetrav::detail::WorkspaceArrays<ExecutionSpace>(space_, workspace_.get())
                          .template make<Kokkos::View<std::uint8_t*, memory_space>>(
                              "treetrav::nbody::Simulation::essential_active", rows);
  Kokkos::parallel_for("treetrav::nbody::Simulation::mark_walked", Kokkos::RangePolicy<ExecutionSpace>(space_, 0, rows),
                       detail::MarkWalked<decltype(marked), decltype(active_)>{marked, active_, size(), all});
  return marked;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::evaluate_distributed_forces(bool all) {
  Kokkos::Timer timer;
  EssentialTree<memory_space> const essential = essential_tree(configuration_.forces);
  times_.imported_cells += essential.imported_cells;
  times_.imported_bodies += essential.imported_bodies;
  times_.tree_build += timer.seconds();
  timer.reset();
  // The work items: this rank's active bodies in tree order (per-body walks),
  // or every tree position with this rank's active bodies marked (group walks).
  Index const rows = essential.bodies.size();
  // Per-evaluation arrays in the run's workspace: on a GPU an allocation and its release each wait for the device.
  treetrav::detail::WorkspaceArrays<ExecutionSpace> const arrays(space_, workspace_.get());
  auto const marked = walked_rows(rows, all);
  Kokkos::View<Index const*, memory_space> order = essential.local_order;
  if constexpr (Strategy::group_walk) {
    order = essential.tree.points.original_index;
  } else if (!all) {
    Index listed = 0;
    Kokkos::parallel_scan("treetrav::nbody::Simulation::list_active", Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                          detail::ListActive<Kokkos::View<Index const*, memory_space>, decltype(active_),
                                             decltype(active_list_)>{essential.local_order, active_, active_list_},
                          listed);
    order = Kokkos::subview(active_list_, std::make_pair(Index(0), listed));
  }
  auto const accelerations =
      arrays.template make<Accelerations>("treetrav::nbody::Simulation::essential_accelerations", rows, 3);
  auto const costs = arrays.template make<Kokkos::View<Index*, memory_space>>("treetrav::nbody::Simulation::essential_costs", rows);
  compute_barnes_hut_accelerations_and_costs(space_, essential.tree, essential.bodies, configuration_.forces, strategy_,
                                             accelerations, costs, order,
                                             marked);
  // Rows 0..n-1 of the essential tree's bodies are this rank's.
  Kokkos::parallel_for("treetrav::nbody::Simulation::keep_forces",
                       Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                       detail::KeepForces<Accelerations, Kokkos::View<Index*, memory_space>, decltype(marked)>{
                           accelerations, accelerations_, costs, costs_, marked});
  space_.fence();
  times_.forces += timer.seconds();
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::evaluate_forces(Index active_count) {
  bool const first = accelerations_.extent(0) != std::size_t(size());
  if (first)
    accelerations_ = Accelerations(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::accelerations"), size(),
        3);
  if (domain_) {
    evaluate_distributed_forces(active_count == size());
    ++times_.force_evaluations;
    times_.body_forces += active_count;
    return;
  }
  update_octree();
  Kokkos::Timer timer;
  bool const all = active_count == size();
  Kokkos::View<std::uint8_t const*, memory_space> active;
  // Bodies in tree (Morton) order: neighbouring work items walk similar paths.
  Kokkos::View<Index const*, memory_space> order = tree_order();
  if (!all) {
    active = active_;
    if constexpr (!Strategy::group_walk) {
      Index listed = 0;
      Kokkos::parallel_scan("treetrav::nbody::Simulation::list_active",
                            Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                            detail::ListActive<Kokkos::View<Index const*, memory_space>, decltype(active_),
                                               decltype(active_list_)>{tree_order(), active_, active_list_},
                            listed);
      order = Kokkos::subview(active_list_, std::make_pair(Index(0), listed));
    }
  }
  // The relative criterion's first evaluation has no previous accelerations to read.
  if (first && configuration_.forces.opening == Opening::relative)
    compute_barnes_hut_accelerations(space_, octree_.tree, bodies_, relative_estimate_options(configuration_.forces),
                                     strategy_, accelerations_, order, active);
  if (counting_) {
    if (counts_.extent(0) != std::size_t(size())) {
      counts_ = Kokkos::View<Index*, memory_space>("treetrav::nbody::Simulation::counts", size());
      cell_counts_ = Kokkos::View<Index*, memory_space>("treetrav::nbody::Simulation::cell_counts", size());
    }
    compute_barnes_hut_accelerations_and_costs(space_, octree_.tree, bodies_, configuration_.forces, strategy_,
                                               accelerations_, counts_, order, active, cell_counts_);
  } else {
    compute_barnes_hut_accelerations(space_, octree_.tree, bodies_, configuration_.forces, strategy_, accelerations_,
                                     order, active);
  }
  space_.fence();
  times_.forces += timer.seconds();
  if (counting_) {
    std::int64_t cells = 0, all_interactions = 0;
    using Sum = detail::SumInteractions<Kokkos::View<Index*, memory_space>, Kokkos::View<std::uint8_t const*, memory_space>>;
    Kokkos::parallel_reduce("treetrav::nbody::Simulation::sum_interactions",
                            Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                            Sum{counts_, cell_counts_, active, true}, cells);
    Kokkos::parallel_reduce("treetrav::nbody::Simulation::sum_interactions",
                            Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                            Sum{counts_, cell_counts_, active, false}, all_interactions);
    times_.cell_interactions += cells;
    times_.body_interactions += all_interactions - cells;
  }
  ++times_.force_evaluations;
  times_.body_forces += active_count;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::update_octree() {
  bool const quadrupoles = configuration_.forces.multipole == Multipole::quadrupole;
  bool const refits = configuration_.refit > 0;
  Kokkos::Timer timer;
  if (refits && restore_octree_) {
    octree_ = build_morton_octree_cells(space_, PointSet<memory_space>(tree_positions_), masses_,
                                        configuration_.leaf_size, workspace_.get());
    restore_octree_ = false;
    space_.fence();
    times_.tree_build += timer.seconds();
    timer.reset();
  }
  if (refits && octree_.tree.topology.size() > 0) {
    double const growth = refit_octree(space_, octree_, bodies_, quadrupoles);
    space_.fence();
    times_.refit += timer.seconds();
    timer.reset();
    if (growth <= configuration_.refit) {
      ++times_.refits;
      return;
    }
  }
  // In the run's workspace: every build reuses the last one's arrays.
  octree_ = build_morton_octree_cells(space_, bodies_, masses_, configuration_.leaf_size, workspace_.get());
  if (refits) {
    if (tree_positions_.extent(0) != std::size_t(size()))
      tree_positions_ = allocate_view<decltype(tree_positions_)>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "treetrav::nbody::Simulation::tree_positions"),
          size(), 3);
    Kokkos::deep_copy(space_, tree_positions_, bodies_.coordinates);
  }
  space_.fence();
  times_.tree_build += timer.seconds();
  ++times_.tree_builds;
  timer.reset();
  compute_octree_multipoles(space_, octree_, quadrupoles);
  space_.fence();
  times_.center_of_mass += timer.seconds();
}

template <class ExecutionSpace, class Strategy>
typename Simulation<ExecutionSpace, Strategy>::HostTreePositions Simulation<ExecutionSpace, Strategy>::tree_positions() {
  HostTreePositions const host = host_copy(tree_positions_);
  space_.fence();
  return host;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::set_tree_positions(HostTreePositions const& positions) {
  if (positions.extent(0) == 0) return;
  if (!(configuration_.refit > 0))
    throw std::invalid_argument("nbody: tree positions are for runs that refit their octree");
  if (positions.extent(0) != static_cast<std::size_t>(size()) || positions.extent(1) != 3)
    throw std::invalid_argument("nbody: tree positions and bodies differ in shape");
  tree_positions_ = Kokkos::create_mirror_view_and_copy(space_, positions);
  restore_octree_ = true;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::compute_accelerations() {
  octree_ = {};  // built anew
  restore_octree_ = false;
  evaluate_forces(size());
  Kokkos::parallel_for("treetrav::nbody::Simulation::initial_bins",
                       Kokkos::RangePolicy<ExecutionSpace>(space_, 0, size()),
                       detail::InitialBins<Accelerations, Bins>{accelerations_, bins_, configuration_.dt,
                                                                configuration_.eta, configuration_.forces.softening,
                                                                timeline_.max_bin});
  space_.fence();
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::set_accelerations(HostAccelerations const& accelerations) {
  if (accelerations.extent(0) != static_cast<std::size_t>(size()) || accelerations.extent(1) != 3)
    throw std::invalid_argument("nbody: accelerations and bodies differ in shape");
  accelerations_ = Kokkos::create_mirror_view_and_copy(space_, accelerations);
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::set_bins(HostBins const& bins) {
  if (bins.extent(0) != static_cast<std::size_t>(size()))
    throw std::invalid_argument("nbody: time bins and bodies differ in number");
  for (std::size_t i = 0; i < bins.extent(0); ++i)
    if (bins(i) < 0 || bins(i) > timeline_.max_bin)
      throw InputError(fmt::format("nbody: body {} is in time bin {}, outside [0, {}]", i, int(bins(i)),
                                   timeline_.max_bin));
  Kokkos::deep_copy(space_, bins_, bins);
  space_.fence();
}

template <class ExecutionSpace, class Strategy>
std::int64_t Simulation<ExecutionSpace, Strategy>::sub_step(std::int64_t now) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  Kokkos::Timer timer;
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  if (timeline_.max_bin == 0) next = now + 1;
  else
    Kokkos::parallel_reduce("treetrav::nbody::Simulation::next_event", Policy(space_, 0, size()),
                            detail::NextEvent<Bins>{bins_, timeline_, now}, Kokkos::Min<std::int64_t>(next));
  if (domain_) next = domain_->min(next);
  Index non_finite = 0;
  Kokkos::parallel_reduce(
      "treetrav::nbody::Simulation::kick_drift", Policy(space_, 0, size()),
      detail::KickDrift<Vectors, Accelerations, typename PointSet<memory_space>::coordinates_view, Bins>{
          positions_, velocities_, accelerations_, bodies_.coordinates, bins_, timeline_, now,
          double(next - now) * timeline_.tick},
      non_finite);
  times_.integration += timer.seconds();
  check_finite(total(non_finite), "position (or one beyond the float range)");
  timer.reset();
  Index active_count = size();
  if (timeline_.max_bin > 0)
    Kokkos::parallel_reduce("treetrav::nbody::Simulation::mark_active", Policy(space_, 0, size()),
                            detail::MarkActive<Bins, decltype(active_)>{bins_, active_, timeline_, next},
                            active_count);
  times_.integration += timer.seconds();
  evaluate_forces(active_count);
  timer.reset();
  Kokkos::View<std::uint8_t*, memory_space> active;
  if (active_count < size()) active = active_;
  non_finite = 0;
  Kokkos::parallel_reduce(
      "treetrav::nbody::Simulation::kick", Policy(space_, 0, size()),
      detail::KickAndBin<Vectors, Accelerations, Bins, decltype(active)>{
          velocities_, accelerations_, bins_, active, timeline_, next, configuration_.dt, configuration_.eta,
          double(configuration_.forces.softening)},
      non_finite);
  times_.integration += timer.seconds();
  check_finite(total(non_finite), "acceleration or velocity");
  ++sub_steps_;
  return next;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::step() {
  if (accelerations_.extent(0) != static_cast<std::size_t>(size()))
    throw std::logic_error("nbody: step() before the accelerations of the state are known");
  Kokkos::Timer timer;
  std::int64_t const end = std::int64_t(1) << timeline_.max_bin;
  for (std::int64_t now = 0; now < end;) now = sub_step(now);
  space_.fence();
  times_.step_seconds.push_back(timer.seconds());
  ++step_;
}

template <class ExecutionSpace, class Strategy>
void Simulation<ExecutionSpace, Strategy>::check_finite(Index non_finite, char const* what) const {
  if (non_finite > 0)
    throw InputError(fmt::format(
        "step {} (t = {:g}): {} of {} bodies got a non-finite {}; the integration diverged (the time step dt too "
        "large for softening {:g}, or bodies at one point without softening); nothing of this step was written",
        step_ + 1, configuration_.time_at(step_ + 1), non_finite, total(size()), what,
        configuration_.forces.softening));
}

template <class ExecutionSpace, class Strategy>
template <class View>
typename View::HostMirror Simulation<ExecutionSpace, Strategy>::host_copy(View const& view) const {
  typename View::HostMirror copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, view.label()), view.layout());
  Kokkos::deep_copy(space_, copy, view);
  return copy;
}

template <class ExecutionSpace, class Strategy>
io::Snapshot Simulation<ExecutionSpace, Strategy>::state(bool with_potentials) {
  io::Snapshot snapshot;
  if (with_potentials) {
    if (octree_.tree.topology.size() == 0 && !domain_)
      throw std::logic_error("nbody: potentials before any force evaluation");
    Kokkos::Timer timer;
    Kokkos::View<double*, memory_space> potentials;
    if (domain_) {
      // Over the essential tree of the potential's opening angle; rows 0..n-1 are this rank's.
      EssentialTree<memory_space> const essential = essential_tree(configuration_.potential_options());
      Kokkos::View<Index const*, memory_space> const order =
          Strategy::group_walk ? essential.tree.points.original_index : essential.local_order;
      // Group walks: this rank's bodies walk, the imported ones are foreign (outside the groups' boxes).
      potentials = Kokkos::subview(gravitational_potentials(space_, essential.tree, essential.bodies,
                                                            configuration_.potential_options(), strategy_, order,
                                                            walked_rows(essential.bodies.size(), true)),
                                   std::make_pair(Index(0), size()));
    } else {
      potentials = gravitational_potentials(space_, octree_.tree, bodies_, configuration_.potential_options(), strategy_,
                                            tree_order());
    }
    space_.fence();
    times_.diagnostics += timer.seconds();
    timer.reset();
    snapshot.potentials = host_copy(potentials);
    space_.fence();
    times_.io += timer.seconds();
  }
  Kokkos::Timer timer;
  snapshot.time = time();
  snapshot.coordinates = host_copy(positions_);
  snapshot.velocities = host_copy(velocities_);
  snapshot.masses = host_copy(host_masses_);
  snapshot.ids = host_copy(host_ids_);
  snapshot.types = host_copy(host_types_);
  space_.fence();
  times_.io += timer.seconds();
  return snapshot;
}

template <class ExecutionSpace, class Strategy>
typename Simulation<ExecutionSpace, Strategy>::HostAccelerations
Simulation<ExecutionSpace, Strategy>::host_accelerations() {
  Kokkos::Timer timer;
  HostAccelerations const host = host_copy(accelerations_);
  space_.fence();
  times_.io += timer.seconds();
  return host;
}

template <class ExecutionSpace, class Strategy>
typename Simulation<ExecutionSpace, Strategy>::HostBins Simulation<ExecutionSpace, Strategy>::host_bins() {
  HostBins const host = host_copy(bins_);
  space_.fence();
  return host;
}

template <class ExecutionSpace, class Strategy>
BodyStates Simulation<ExecutionSpace, Strategy>::bodies(bool with_potentials) {
  BodyStates bodies = bodies_of(state(with_potentials));
  bodies.accelerations = host_accelerations();
  bodies.bins = host_bins();
  if (domain_) {
    bodies.rows = rows_;
    Kokkos::deep_copy(space_, bodies.costs, costs_);
    space_.fence();
  }
  return bodies;
}

}  // namespace treetrav::nbody
