#pragma once

// A whole N-body run: the step loop of a Simulation with its snapshots,
// diagnostics, checkpoints and progress line.
#include <treetrav/io/collective.hpp>
#include <treetrav/nbody/checkpoint.hpp>
#include <treetrav/nbody/diagnostics.hpp>
#include <treetrav/core/detail/take.hpp>
#include <treetrav/core/progress.hpp>
#include <treetrav/nbody/simulation.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace treetrav::nbody {

// The files of a run directory: snapshots of the first and the last state and
// every `snapshot_every` steps; checkpoints of the first and the last step and
// every `checkpoint_every` steps and/or after `checkpoint_seconds` of wall time.
// The first checkpoint comes before the first snapshot (it records the initial
// conditions and the configuration), every later one after its step's
// snapshot, so a run killed at any moment has a checkpoint to resume from or
// has written nothing yet.
struct OutputOptions {
  std::string directory;
  std::int64_t snapshot_every = 0;    // 0: the first and the last state only
  std::int64_t checkpoint_every = 0;  // 0: none by step count
  double checkpoint_seconds = 0;      // 0: none by wall-clock time
  // The newest two: should the newest be unreadable, the run resumes from the other.
  static constexpr int checkpoints_kept = 2;
};

struct RunSettings {
  Configuration configuration;
  OutputOptions output;
  std::int64_t last_step = 0;
  std::string backend;  // recorded in snapshots and checkpoints
  std::function<void(std::string const&)> warn = [](std::string const&) {};
  // Distributed runs (none: one process): each rank integrates its share of
  // the bodies; every `rebalance_every` steps (0: never) the ranks cut the
  // Morton curve anew by the bodies' measured costs. Snapshots and
  // checkpoints hold all bodies in their rows, as one process writes them:
  // one file, every rank writing its block of rows (Domain::by_rows).
  std::shared_ptr<Domain const> domain;
  std::int64_t rebalance_every = 8;
  // Count each force evaluation's interactions (Simulation::count_interactions).
  bool count_interactions = false;
};

struct RunResult {
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double time = 0;  // at last_step
  PhaseTimes times;
  std::int64_t sub_steps = 0;  // force evaluations of the steps (block steps: several per step)
  double wall_seconds = 0;
  Diagnostics initial;
  Diagnostics final;  // of the last snapshot
  Drift drift;        // of the last snapshot
  int snapshots = 0;
  int checkpoints = 0;
};

namespace detail {

// The progress line's detail: the simulated time.
inline std::string time_text(double time) { return fmt::format("t = {:.6g}", time); }

template <class ExecutionSpace, class Strategy>
class RunLoop {
 public:
  // `held`: every body, or a distributed run's rank's rows of them (any
  // split: the ranks partition them).
  RunLoop(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings, BodyStates held,
          std::int64_t step, Progress& progress)
      : settings_(settings), space_(space), strategy_(strategy), progress_(progress) {
    result_.first_step = step;
    if (Domain const* domain = settings.domain.get()) {
      local_ = domain->partition(treetrav::detail::take(held));
      simulation_.emplace(space, strategy, settings.configuration, local_, step, settings.domain);
    } else {
      local_ = held;
      simulation_.emplace(space, strategy, settings.configuration, local_.state, step);
    }
    simulation_->count_interactions(settings.count_interactions);
  }

  // Step 0 of a fresh run: its forces and diagnostics (the reference of the
  // drifts), measured before anything is created, so that a run failing here
  // leaves nothing; then the run directory, the first checkpoint and the first
  // snapshot.
  void start() {
    local_ = BodyStates{}; // the simulation holds the bodies; it computes their accelerations
    simulation_->compute_accelerations();
    Measured first = measure(nullptr);
    on_rank_zero([&] {
      if (int const removed = prepare_fresh_directory(settings_.output.directory); removed > 0)
        settings_.warn(fmt::format("removed {} temporary file(s) of writes that were interrupted", removed));
    });
    result_.initial = first.now;
    write_checkpoint(&first);
    write_snapshot(first);
  }

  // A run killed between its first checkpoint and its first snapshot resumes
  // from step 0 without the snapshot: it is written here (its potentials need
  // the octree, so the forces of step 0 are evaluated again: the same bits).
  void resume(Checkpoint const& checkpoint) {
    result_.initial = checkpoint.initial;
    if (checkpoint.step == 0 &&
        !std::filesystem::exists(snapshot_path(settings_.output.directory, 0))) {
      simulation_->compute_accelerations();
      write_snapshot(measure(nullptr));
    }
    // The next kick's accelerations and the bins as checkpointed (at step 0
    // the same bits as those just computed).
    simulation_->set_accelerations(local_.accelerations);
    simulation_->set_bins(local_.bins);
    simulation_->set_tree_positions(checkpoint.tree_positions);
    local_ = BodyStates{}; // the simulation holds the bodies now
  }

  RunResult advance() {
    OutputOptions const& output = settings_.output;
    std::int64_t const last_step = settings_.last_step;
    progress_.begin(simulation_->current_step(), last_step);
    while (simulation_->current_step() < last_step) {
      std::int64_t const step = simulation_->current_step() + 1;
      try {
        if (settings_.domain && settings_.rebalance_every > 0 && (step - 1) % settings_.rebalance_every == 0)
          rebalance();
        simulation_->step();
        bool const last = step == last_step;
        std::optional<Measured> measured; // a snapshot's state, which a checkpoint of the step takes too
        if (last || (output.snapshot_every > 0 && step % output.snapshot_every == 0)) {
          measured = measure(&result_.initial);
          write_snapshot(*measured);
        }
        // After the snapshot: a checkpoint of step s > 0 implies its snapshot is complete.
        bool const checkpoint_due =
            (output.checkpoint_every > 0 && step % output.checkpoint_every == 0) ||
            (output.checkpoint_seconds > 0 &&
             since_checkpoint_.seconds() >= output.checkpoint_seconds);
        if (last || checkpoint_due)
          write_checkpoint(measured ? &*measured : nullptr);
        progress_.update(step, time_text(simulation_->time()));
      } catch (InputError const& failure) {
        // Divergence (or a failed write): what is complete stays, and the message says so.
        throw InputError(
            fmt::format("{}. {} keeps the snapshots and checkpoints completed before step {}: the "
                        "results so far",
                        failure.what(), settings_.output.directory, step));
      }
    }
    progress_.finish(simulation_->current_step(), time_text(simulation_->time()));
    result_.last_step = simulation_->current_step();
    result_.time = simulation_->time();
    result_.times = simulation_->times();
    result_.sub_steps = sub_steps_before_ + simulation_->sub_steps();
    result_.wall_seconds = wall_.seconds();
    return result_;
  }

 private:
   // A snapshot of the current state with its diagnostics.
   struct Measured {
     io::Snapshot snapshot;
     BodyStates rows; // a distributed run's: this rank's block of rows, whose state `snapshot` is
     Diagnostics now;
     Drift change; // from the reference (zero for the reference itself)
   };

   // The current state with potentials and its diagnostics, their drift from
   // `initial` (none: this state is the reference) in the snapshot's metadata.
   Measured measure(Diagnostics const* initial) {
     std::int64_t const step = simulation_->current_step();
     Domain const* domain = settings_.domain.get();
     // A distributed run: this rank's block of the rows, not all bodies.
     Measured measured;
     if (domain)
       measured.rows = domain->by_rows(simulation_->bodies(true));
     measured.snapshot = domain ? measured.rows.state : simulation_->state(true);
     Kokkos::Timer timer;
     measured.now = domain ? domain->measure(measured.snapshot) : nbody::measure(measured.snapshot);
     if (!measured.now.finite())
       throw InputError(fmt::format(
           "step {} (t = {:g}): the energy or momentum is not finite (bodies at one point "
           "without softening, or the integration diverged); nothing written for this step",
           step, simulation_->time()));
     if (initial != nullptr)
       measured.change = drift(*initial, measured.now);
     io::Metadata& metadata = measured.snapshot.metadata;
     metadata = to_metadata(settings_.configuration);
     metadata.set("application", "nbody")
         .set("treetrav_version", TREETRAV_VERSION_STRING)
         .set("backend", settings_.backend)
         .set("strategy", Strategy::name)
         .set("step", static_cast<double>(step))
         .set("initial_total_energy",
              initial != nullptr ? initial->total_energy() : measured.now.total_energy());
     add_to_metadata(metadata, measured.now);
     add_to_metadata(metadata, measured.change);
     simulation_->times().diagnostics += timer.seconds();
     return measured;
   }

   void write_snapshot(Measured const& measured) {
     std::int64_t const step = simulation_->current_step();
     Kokkos::Timer timer;
     std::string const path = snapshot_path(settings_.output.directory, step);
     io::write_snapshot(path, measured.snapshot, writers());
     simulation_->times().io += timer.seconds();
     ++result_.snapshots;
     result_.final = measured.now;
     result_.drift = measured.change;
     progress_.log(fmt::format("step {} t = {:.6g}: E = {:.10g}, {} -> {}", step,
                               measured.snapshot.time, measured.now.total_energy(),
                               describe(measured.change, result_.initial), path));
   }

  // `now`: the state just measured (the same step), whose host copies the
  // checkpoint takes rather than making a second set beside them.
  void write_checkpoint(Measured const* now = nullptr) {
    Checkpoint checkpoint;
    checkpoint.step = simulation_->current_step();
    if (Domain const* domain = settings_.domain.get()) {
      Kokkos::Timer timer;
      BodyStates const rows = now != nullptr ? now->rows : domain->by_rows(simulation_->bodies());
      simulation_->times().io += timer.seconds();
      checkpoint.state = rows.state;
      checkpoint.accelerations = rows.accelerations;
      checkpoint.bins = rows.bins;
      checkpoint.ranks = domain->ranks();
      checkpoint.domains = rows.domains;
      checkpoint.costs = rows.costs;
    } else {
      checkpoint.state = now != nullptr ? now->snapshot : simulation_->state(false);
      checkpoint.accelerations = simulation_->host_accelerations();
      checkpoint.bins = simulation_->host_bins();
      checkpoint.tree_positions = simulation_->tree_positions();
    }
    // A checkpoint holds no potentials and no snapshot metadata (the measured state does).
    checkpoint.state.potentials = {};
    if (now != nullptr && !settings_.domain)
      checkpoint.state.metadata = io::Metadata{};
    checkpoint.initial = result_.initial;
    checkpoint.configuration = settings_.configuration;
    checkpoint.backend = settings_.backend;
    Kokkos::Timer timer;
    nbody::write_checkpoint(checkpoint_path(settings_.output.directory, checkpoint.step),
                            checkpoint, writers());
    on_rank_zero([&] {
      remove_old_checkpoints(settings_.output.directory, OutputOptions::checkpoints_kept);
    });
    simulation_->times().io += timer.seconds();
    ++result_.checkpoints;
    since_checkpoint_.reset();
  }

  // The ranks cut the Morton curve anew by the costs of the bodies' last
  // force evaluation; the bodies whose rank changes move.
  void rebalance() {
    Domain const& domain = *settings_.domain;
    Kokkos::Timer timer;
    BodyStates const local = domain.partition(simulation_->bodies());
    PhaseTimes const times = simulation_->times();
    std::int64_t const step = simulation_->current_step();
    sub_steps_before_ += simulation_->sub_steps();
    simulation_.reset();
    simulation_.emplace(space_, strategy_, settings_.configuration, local, step, settings_.domain);
    simulation_->times() = times;
    simulation_->times().rebalance += timer.seconds();
  }

  // The processes that write the run's files together: the ranks, or this one.
  io::Collective writers() const {
    return settings_.domain ? settings_.domain->writers() : io::Collective{};
  }

  // `write` on rank 0 of a distributed run (else on the one process); when it
  // fails there, every rank fails.
  template <class Write>
  void on_rank_zero(Write const& write) {
    Domain const* domain = settings_.domain.get();
    if (domain == nullptr) return write();
    std::string failure;
    if (domain->rank() == 0) try {
        write();
      } catch (InputError const& e) {
        failure = e.what();
      }
    if (domain->sum(failure.empty() ? 0 : 1) > 0)
      throw InputError(domain->rank() == 0 ? failure : "rank 0 failed to write the run's files");
  }

  RunSettings settings_;
  ExecutionSpace space_;
  Strategy strategy_;
  // This rank's bodies as the run begins, until start() or resume(): then
  // the simulation holds them (on a GPU, this host copy would be a second).
  BodyStates local_;
  std::optional<Simulation<ExecutionSpace, Strategy>> simulation_;
  std::int64_t sub_steps_before_ = 0;  // of the simulations before the last rebalance
  Progress& progress_;
  RunResult result_;
  Kokkos::Timer wall_;
  Kokkos::Timer since_checkpoint_;
};

}  // namespace detail

// A fresh run from `initial_conditions` (step 0) to settings.last_step, in
// settings.output.directory (created after step 0 is known to be finite; see
// check_fresh_directory). A distributed run passes each rank's rows of them,
// the first being row `first_row` of all (io::read_snapshot(path, share)).
// They are let go once the simulation holds the bodies: a caller that hands
// them over (treetrav::detail::take: a moved-from Kokkos 3.4 View still holds
// its memory) keeps no copy through the run.
template <class ExecutionSpace, class Strategy>
RunResult run_from_initial_conditions(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings,
                                      io::Snapshot initial_conditions, Progress& progress,
                                      std::int64_t first_row = 0) {
  BodyStates held = bodies_of(initial_conditions, first_row);
  initial_conditions = io::Snapshot{};
  detail::RunLoop<ExecutionSpace, Strategy> loop(space, strategy, settings, treetrav::detail::take(held), 0,
                                                 progress);
  loop.start();
  return loop.advance();
}

// A run continued from `checkpoint` to settings.last_step, exactly as the run
// that wrote the checkpoint would have continued (same binary and backend).
// A distributed run passes each rank's rows of it (read_checkpoint(path, share)).
// Let go as run_from_initial_conditions lets its bodies go.
template <class ExecutionSpace, class Strategy>
RunResult run_from_checkpoint(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings,
                              Checkpoint checkpoint, Progress& progress) {
  BodyStates all = bodies_of(checkpoint.state, checkpoint.first_row);
  all.accelerations = checkpoint.accelerations;
  all.bins = checkpoint.bins;
  if (checkpoint.domains.extent(0) == checkpoint.state.size()) {
    all.domains = checkpoint.domains;
    all.domain_ranks = checkpoint.ranks;
    all.costs = checkpoint.costs;
  }
  detail::RunLoop<ExecutionSpace, Strategy> loop(space, strategy, settings, treetrav::detail::take(all),
                                                 checkpoint.step, progress);
  loop.resume(checkpoint);
  checkpoint = Checkpoint{};
  return loop.advance();
}

}  // namespace treetrav::nbody
