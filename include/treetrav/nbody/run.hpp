#pragma once

// A whole N-body run: the step loop of a Simulation with its snapshots,
// diagnostics, checkpoints and progress line.
#include <treetrav/nbody/checkpoint.hpp>
#include <treetrav/nbody/diagnostics.hpp>
#include <treetrav/nbody/progress.hpp>
#include <treetrav/nbody/simulation.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <cstdint>
#include <string>

namespace treetrav::nbody {

struct OutputOptions {
  std::string directory;
  std::int64_t snapshot_every = 0;    // 0: the first and the last state only
  std::int64_t checkpoint_every = 0;  // 0: none by step count
  double checkpoint_seconds = 0;      // 0: none by wall-clock time
  // The newest two: should the newest be unreadable, the run resumes from the other.
  static constexpr int checkpoints_kept = 2;

  bool checkpointing() const { return checkpoint_every > 0 || checkpoint_seconds > 0; }
};

struct RunSettings {
  Configuration configuration;
  OutputOptions output;
  std::int64_t last_step = 0;
  std::string backend;  // recorded in snapshots and checkpoints
};

struct RunResult {
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double time = 0;  // at last_step
  PhaseTimes times;
  double wall_seconds = 0;
  Diagnostics initial;
  Diagnostics final;  // of the last snapshot
  Drift drift;        // of the last snapshot
  int snapshots = 0;
  int checkpoints = 0;
};

namespace detail {

template <class ExecutionSpace, class Strategy>
class RunLoop {
 public:
  RunLoop(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings, io::Snapshot const& state,
          std::int64_t step, Progress& progress)
      : settings_(settings), simulation_(space, strategy, settings.configuration, state, step), progress_(progress) {
    result_.first_step = step;
  }

  // Step 0 of a fresh run: its forces, the first snapshot (the reference of
  // the drifts) and, when checkpointing, a checkpoint to resume from.
  void start() {
    simulation_.compute_accelerations();
    result_.initial = measure_and_write_snapshot(nullptr);
    if (settings_.output.checkpointing()) write_checkpoint();
  }

  void resume(Checkpoint const& checkpoint) {
    simulation_.set_accelerations(checkpoint.accelerations);
    result_.initial = checkpoint.initial;
  }

  RunResult advance() {
    OutputOptions const& output = settings_.output;
    std::int64_t const last_step = settings_.last_step;
    progress_.begin(simulation_.current_step(), last_step);
    while (simulation_.current_step() < last_step) {
      simulation_.step();
      std::int64_t const step = simulation_.current_step();
      bool const last = step == last_step;
      if (last || (output.snapshot_every > 0 && step % output.snapshot_every == 0))
        measure_and_write_snapshot(&result_.initial);
      // After the snapshot: a checkpoint of step s implies its snapshot is complete.
      bool const checkpoint_due = (output.checkpoint_every > 0 && step % output.checkpoint_every == 0) ||
                                  (output.checkpoint_seconds > 0 && since_checkpoint_.seconds() >= output.checkpoint_seconds);
      if (output.checkpointing() && (last || checkpoint_due)) write_checkpoint();
      progress_.update(step, simulation_.time());
    }
    progress_.finish(simulation_.current_step(), simulation_.time());
    result_.last_step = simulation_.current_step();
    result_.time = simulation_.time();
    result_.times = simulation_.times();
    result_.wall_seconds = wall_.seconds();
    return result_;
  }

 private:
  // Writes the snapshot of the current state with its diagnostics and their
  // drift from `initial` (none: this state is the reference) and returns them.
  Diagnostics measure_and_write_snapshot(Diagnostics const* initial) {
    std::int64_t const step = simulation_.current_step();
    io::Snapshot snapshot = simulation_.state(true);
    Kokkos::Timer timer;
    Diagnostics const now = measure(snapshot);
    if (!now.finite())
      throw InputError(fmt::format("step {} (t = {:g}): the energy or momentum is not finite; nothing written", step,
                                   simulation_.time()));
    Drift const change = initial != nullptr ? drift(*initial, now) : Drift{};
    snapshot.metadata = to_metadata(settings_.configuration);
    snapshot.metadata.set("application", "nbody")
        .set("treetrav_version", TREETRAV_VERSION_STRING)
        .set("backend", settings_.backend)
        .set("strategy", Strategy::name)
        .set("step", static_cast<double>(step))
        .set("initial_total_energy", initial != nullptr ? initial->total_energy() : now.total_energy());
    add_to_metadata(snapshot.metadata, now);
    add_to_metadata(snapshot.metadata, change);
    simulation_.times().diagnostics += timer.seconds();
    timer.reset();
    std::string const path = snapshot_path(settings_.output.directory, step);
    io::write_snapshot(path, snapshot);
    simulation_.times().io += timer.seconds();
    ++result_.snapshots;
    result_.final = now;
    result_.drift = change;
    progress_.log(fmt::format("step {} t = {:.6g}: E = {:.10g} (drift {:+.3e}), momentum drift {:.2e}, angular "
                              "momentum drift {:.2e} -> {}",
                              step, snapshot.time, now.total_energy(), change.energy, change.momentum,
                              change.angular_momentum, path));
    return now;
  }

  void write_checkpoint() {
    Checkpoint checkpoint;
    checkpoint.step = simulation_.current_step();
    checkpoint.state = simulation_.state(false);
    checkpoint.accelerations = simulation_.host_accelerations();
    checkpoint.initial = result_.initial;
    checkpoint.configuration = settings_.configuration;
    checkpoint.backend = settings_.backend;
    Kokkos::Timer timer;
    nbody::write_checkpoint(checkpoint_path(settings_.output.directory, checkpoint.step), checkpoint);
    remove_old_checkpoints(settings_.output.directory, OutputOptions::checkpoints_kept);
    simulation_.times().io += timer.seconds();
    ++result_.checkpoints;
    since_checkpoint_.reset();
  }

  RunSettings settings_;
  Simulation<ExecutionSpace, Strategy> simulation_;
  Progress& progress_;
  RunResult result_;
  Kokkos::Timer wall_;
  Kokkos::Timer since_checkpoint_;
};

}  // namespace detail

// A fresh run from `initial_conditions` (step 0) to settings.last_step.
template <class ExecutionSpace, class Strategy>
RunResult run_from_initial_conditions(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings,
                                      io::Snapshot const& initial_conditions, Progress& progress) {
  detail::RunLoop<ExecutionSpace, Strategy> loop(space, strategy, settings, initial_conditions, 0, progress);
  loop.start();
  return loop.advance();
}

// A run continued from `checkpoint` to settings.last_step, exactly as the run
// that wrote the checkpoint would have continued (same binary and backend).
template <class ExecutionSpace, class Strategy>
RunResult run_from_checkpoint(ExecutionSpace const& space, Strategy strategy, RunSettings const& settings,
                              Checkpoint const& checkpoint, Progress& progress) {
  detail::RunLoop<ExecutionSpace, Strategy> loop(space, strategy, settings, checkpoint.state, checkpoint.step,
                                                 progress);
  loop.resume(checkpoint);
  return loop.advance();
}

}  // namespace treetrav::nbody
