// treetrav nbody: a Barnes-Hut N-body simulation (leapfrog, fixed dt) with
// snapshots, diagnostics, checkpoints and restart.
#include "common.hpp"
#include "run_app.hpp"

#include <treetrav/core/detail/take.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/fp32_peak.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/io/hdf5.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/nbody/run.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/nbody_domain.hpp>
#endif

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <system_error>
#include <variant>

namespace treetrav::cli {
namespace {

namespace fs = std::filesystem;

// Up to this many bodies the energy diagnostic's potential is exact (theta 0,
// O(n^2) at each snapshot); beyond, it uses the forces' theta.
constexpr std::int64_t exact_potential_bodies = 20000;
// --eta without --max-bin: steps down to dt / 2^10.
constexpr int default_max_bin = 10;

struct NbodyOptions {
  std::string ics;
  Index plummer = 0;
  std::uint64_t seed = 1;
  std::string output;
  std::string restart;
  std::int64_t steps = 0;
  nbody::Configuration physics;  // dt, forces, leaf_size, potential_theta, eta, max_bin as given
  std::string multipole = "monopole";
  std::string opening = "barnes-hut";
  int group_size = GroupWalk{}.group_size;
  std::string strategy = Autoropes::name;
  std::int64_t snapshot_every = 0;
  std::int64_t checkpoint_every = 0;
  double checkpoint_seconds = 0;
  std::string timings;
  bool count_interactions = false;
  bool quiet = false;
  double progress_seconds = 10;
  std::int64_t rebalance_every = 8;
  RuntimeOptions runtime;
};

// The options a trajectory depends on: a restart takes them from the
// checkpoint, and any given again must agree with it.
struct TrajectoryOptions {
  CLI::Option* ics;
  CLI::Option* plummer;
  CLI::Option* seed;
  CLI::Option* dt;
  CLI::Option* theta;
  CLI::Option* softening;
  CLI::Option* gravity;
  CLI::Option* leaf_size;
  CLI::Option* refit;
  CLI::Option* potential_theta;
  CLI::Option* multipole;
  CLI::Option* opening;
  CLI::Option* alpha;
  CLI::Option* group_size;
  CLI::Option* eta;
  CLI::Option* max_bin;
  CLI::Option* strategy;
};

void validate(NbodyOptions const& options, TrajectoryOptions const& given) {
  bool const restarting = !options.restart.empty();
  if (!restarting) {
    if (given.ics->count() == 0 && given.plummer->count() == 0)
      throw InputError("initial conditions needed: --ics FILE or --plummer N (or --restart DIR)");
    if (options.output.empty()) throw InputError("--output DIR is required (or --restart DIR)");
    if (given.dt->count() == 0) throw InputError("--dt is required (a restart takes it from the checkpoint)");
  } else if (!options.output.empty()) {
    if (!same_file(options.output, options.restart))
      throw InputError("--restart continues in its own directory; drop --output " + options.output);
  }
  if (given.max_bin->count() > 0 && given.eta->count() == 0) throw InputError("--max-bin applies to --eta only");
  if (given.group_size->count() > 0 && options.strategy != GroupWalk::name)
    throw InputError("--group-size applies to --strategy group only");
  // No output replaces an input: the run directory and --timings against --ics.
  if (given.ics->count() > 0) {
    std::vector<FileOption> const ics{{"--ics", options.ics}};
    refuse_inputs(restarting ? FileOption{"--restart", options.restart}
                             : FileOption{"-o", options.output},
                  ics);
    if (!options.timings.empty())
      refuse_inputs({"--timings", options.timings}, ics);
  }
}

// --timings FILE, before anything is created: it may lie in the run directory
// (created by the run) but is none of the run's files; elsewhere its directory
// must exist (check_output_file).
void check_timings(std::string const& path, std::string const& run_directory) {
  if (path.empty()) return;
  fs::path const target(path);
  std::error_code error;
  bool const in_run =
      fs::weakly_canonical(target.has_parent_path() ? target.parent_path() : fs::path("."),
                           error) == fs::weakly_canonical(run_directory, error);
  if (in_run && nbody::is_run_file(target.filename().string()))
    throw InputError("--timings " + path +
                     " names a file of the run (snapshot_ or checkpoint_NNNNNN.h5): choose "
                     "another name");
  if (!in_run || fs::exists(run_directory, error))
    check_output_file({"--timings", path}, {});
}

std::string describe_initial_conditions(NbodyOptions const& options, TrajectoryOptions const& given) {
  if (given.plummer->count() > 0) return fmt::format("plummer n={} seed={}", options.plummer, options.seed);
  return "ics " + options.ics;
}

// The initial conditions, or (`share`: a rank of a distributed run) its
// rows of them: a file's rows read alone; a generated model made whole on
// every rank (its bodies come from one random sequence) and cut.
io::SnapshotRows load_initial_conditions(NbodyOptions const& options, TrajectoryOptions const& given,
                                         io::RowShare share) {
  if (given.plummer->count() == 0) return io::read_snapshot(options.ics, share);
  io::Snapshot const all = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, options.plummer, options.seed);
  io::RowBlock const block = share.of(all.size());
  io::SnapshotRows rows{io::allocate_snapshot(block.size(), all.potentials.extent(0) != 0), block.begin, all.size()};
  io::Snapshot& mine = rows.bodies;
  mine.time = all.time;
  mine.box_size = all.box_size;
  mine.metadata = all.metadata;
  for (std::size_t i = 0; i < block.size(); ++i) {
    std::size_t const row = block.begin + i;
    for (int k = 0; k < 3; ++k)
      mine.coordinates(i, k) = all.coordinates(row, k), mine.velocities(i, k) = all.velocities(row, k);
    mine.masses(i) = all.masses(row);
    mine.ids(i) = all.ids(row);
    if (all.potentials.extent(0) != 0) mine.potentials(i) = all.potentials(row);
  }
  return rows;
}

// A restart refuses options that would change the checkpoint's trajectory.
void require_same_trajectory(NbodyOptions const& options, TrajectoryOptions const& given,
                             nbody::Checkpoint const& checkpoint) {
  nbody::Configuration const& stored = checkpoint.configuration;
  std::vector<std::string> conflicts;
  auto compare = [&](CLI::Option const* option, auto requested, auto recorded) {
    if (option->count() > 0 && requested != recorded)
      conflicts.push_back(fmt::format("{} {} (the checkpoint has {})", option->get_name(), requested, recorded));
  };
  compare(given.dt, options.physics.dt, stored.dt);
  compare(given.theta, options.physics.forces.theta, stored.forces.theta);
  compare(given.softening, options.physics.forces.softening, stored.forces.softening);
  compare(given.gravity, options.physics.forces.gravity, stored.forces.gravity);
  compare(given.leaf_size, options.physics.leaf_size, stored.leaf_size);
  compare(given.refit, options.physics.refit, stored.refit);
  compare(given.potential_theta, options.physics.potential_theta, stored.potential_theta);
  compare(given.multipole, options.multipole, std::string(to_string(stored.forces.multipole)));
  compare(given.opening, options.opening, std::string(to_string(stored.forces.opening)));
  compare(given.alpha, options.physics.forces.alpha, stored.forces.alpha);
  compare(given.eta, options.physics.eta, stored.eta);
  compare(given.max_bin, options.physics.max_bin, stored.max_bin);
  // Group and per-body walks sum different interactions: a restart keeps the walk.
  if (given.strategy->count() > 0 && (options.strategy == GroupWalk::name) != (stored.group_size > 0))
    conflicts.push_back(fmt::format("--strategy {} (the checkpoint was made with {} walks)", options.strategy,
                                    stored.group_size > 0 ? "group (--strategy group)" : "per-body"));
  compare(given.group_size, options.group_size, stored.group_size);
  if (given.ics->count() > 0 || given.plummer->count() > 0) {
    std::string const requested = describe_initial_conditions(options, given);
    if (requested != stored.initial_conditions)
      conflicts.push_back(
          fmt::format("initial conditions '{}' (the checkpoint has '{}')", requested, stored.initial_conditions));
  }
  if (conflicts.empty()) return;
  std::string list;
  for (auto const& conflict : conflicts) list += "\n  " + conflict;
  throw InputError(fmt::format("--restart {}: the checkpoint of step {} belongs to another configuration; a restart "
                               "continues the same trajectory, so drop or correct:{}",
                               options.restart, checkpoint.step, list));
}

// One instantiation per backend x strategy; a fresh run and a restart share it.
nbody::RunResult run(Backend backend, ForceStrategy strategy, nbody::RunSettings const& settings,
                     io::SnapshotRows* initial_conditions, nbody::Checkpoint* checkpoint,
                     Progress& progress) {
  return dispatch_backend(backend, [&](auto const& space) {
    return std::visit(
        [&](auto tag) -> nbody::RunResult {
          using Space = std::decay_t<decltype(space)>;
          if constexpr (runs_on_v<decltype(tag), Space>) {
            // Handed over: the run lets them go once the simulation holds the bodies.
            if (checkpoint != nullptr)
              return nbody::run_from_checkpoint(space, tag, settings, treetrav::detail::take(*checkpoint), progress);
            return nbody::run_from_initial_conditions(space, tag, settings,
                                                      treetrav::detail::take(initial_conditions->bodies), progress,
                                                      static_cast<std::int64_t>(initial_conditions->first_row));
          } else {
            throw InputError(fmt::format("--strategy {} runs on host backends only, not on --backend {}",
                                         decltype(tag)::name, to_string(backend)));
          }
        },
        strategy);
  });
}

// --count-interactions: the force walks' interactions per body force, their
// flops as Acceleration::add writes them, and the rate over the forces'
// time (tree build and moments excluded), beside the GPU's FP32 peak.
nlohmann::json interactions_json(nbody::Configuration const& c, nbody::PhaseTimes const& t,
                                 double peak) {
  double const body_forces = std::max<double>(1, static_cast<double>(t.body_forces));
  int const cell_flops = cell_interaction_flops(c.forces.multipole);
  double const flops = double(t.cell_interactions) * cell_flops +
                       double(t.body_interactions) * body_interaction_flops;
  double const rate = t.forces > 0 ? flops / t.forces : 0;
  nlohmann::json json = {{"cell_per_body_force", double(t.cell_interactions) / body_forces},
                         {"body_per_body_force", double(t.body_interactions) / body_forces},
                         {"flops_per_cell", cell_flops},
                         {"flops_per_body", body_interaction_flops},
                         {"flops", flops},
                         {"force_flops_per_second", rate}};
  if (peak > 0) {
    json["fp32_peak_flops_per_second"] = peak;
    json["fraction_of_fp32_peak"] = rate / peak;
  }
  return json;
}

// Checks, across the ranks of a distributed run, that no particle id repeats
// (each rank's rows were checked as read; one process read them all).
void require_unique_ids([[maybe_unused]] nbody::RunSettings const& settings,
                        [[maybe_unused]] Kokkos::View<ParticleId*, Kokkos::HostSpace> ids,
                        [[maybe_unused]] std::string const& what) {
#ifdef TREETRAV_ENABLE_MPI
  if (settings.domain) distributed::require_unique_ids(distributed::Communicator{}, ids, what);
#endif
}

// Runs `step` on every rank; when it throws on any, every rank throws the
// first failing rank's error (none waits in a collective call).
template <class Step>
void on_every_rank([[maybe_unused]] nbody::RunSettings const& settings, Step const& step) {
#ifdef TREETRAV_ENABLE_MPI
  if (settings.domain) return distributed::collectively(MPI_COMM_WORLD, step);
#endif
  step();
}

// The rows of the input each rank read, in rank order.
std::vector<std::int64_t> rows_read_of([[maybe_unused]] nbody::RunSettings const& settings, std::int64_t rows) {
#ifdef TREETRAV_ENABLE_MPI
  if (settings.domain) return distributed::all_gather(distributed::Communicator{}, rows);
#endif
  return {rows};
}

void write_timings(std::string const& path, nbody::RunSettings const& settings, std::string const& strategy,
                   int threads, double fp32_peak, int ranks, std::vector<std::int64_t> const& rows_read,
                   nbody::RunResult const& result) {
  auto const& t = result.times;
  auto const& c = settings.configuration;
  std::int64_t const steps = result.last_step - result.first_step;
  double const evaluations = std::max<double>(1, static_cast<double>(t.force_evaluations));
  // A fixed step is one evaluation and its kicks; block steps add all their sub-steps.
  double const per_step =
      steps > 0 && c.block_steps()
          ? (t.tree_build + t.center_of_mass + t.refit + t.forces + t.integration) / static_cast<double>(steps)
          : (t.tree_build + t.center_of_mass + t.refit + t.forces) / evaluations +
                (steps > 0 ? t.integration / static_cast<double>(steps) : 0.0);
  nlohmann::json json = {
      {"bodies", c.bodies},
      {"first_step", result.first_step},
      {"last_step", result.last_step},
      {"steps", steps},
      {"time", result.time},
      {"backend", settings.backend},
      {"strategy", strategy},
      {"threads", threads},
      {"ranks", ranks},
      {"mpi_memory", settings.domain && settings.domain->takes_device_memory() ? "device" : "host"},
      // Of the initial conditions or the checkpoint, per rank: each its block, never the whole file.
      {"rows_read", rows_read},
      {"dt", c.dt},
      {"theta", c.forces.theta},
      {"softening", c.forces.softening},
      {"leaf_size", c.leaf_size},
      {"refit", c.refit},
      {"potential_theta", c.potential_theta},
      {"initial_conditions", c.initial_conditions},
      {"multipole", to_string(c.forces.multipole)},
      {"opening", to_string(c.forces.opening)},
      {"alpha", c.forces.alpha},
      {"group_size", c.group_size},
      {"eta", c.eta},
      {"max_bin", c.max_bin},
      {"force_evaluations", t.force_evaluations},
      {"tree_builds", t.tree_builds},
      {"refits", t.refits},
      {"body_forces", t.body_forces},
      {"imported_cells", t.imported_cells},  // rank 0's essential trees (distributed runs)
      {"imported_bodies", t.imported_bodies},
      {"sub_steps", result.sub_steps},
      {"snapshots", result.snapshots},
      {"checkpoints", result.checkpoints},
      {"seconds",
       {{"tree_build", t.tree_build},
        {"center_of_mass", t.center_of_mass},
        {"refit", t.refit},
        {"forces", t.forces},
        {"integration", t.integration},
        {"diagnostics", t.diagnostics},
        {"io", t.io},
        {"rebalance", t.rebalance},
        {"wall", result.wall_seconds}}},
      {"seconds_per_force_evaluation",
       {{"tree_build", t.tree_build / evaluations},
        {"center_of_mass", t.center_of_mass / evaluations},
        {"refit", t.refit / evaluations},
        {"forces", t.forces / evaluations}}},
      {"seconds_per_step", per_step},
      {"seconds_per_step_median", t.median_step_seconds()},
      {"energy_drift", result.drift.energy},
      {"momentum_drift", result.drift.momentum},
      {"angular_momentum_drift", result.drift.angular_momentum},
      {"treetrav_version", TREETRAV_VERSION_STRING}};
  if (t.cell_interactions + t.body_interactions > 0) json["interactions"] = interactions_json(c, t, fp32_peak);
  // Atomically, like every other output (and, like them, through a symbolic link).
  fs::path const target = io::output_target(path);
  fs::path const temporary =
      target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), ::getpid());
  {
    std::ofstream out(temporary);
    out << json.dump(2) << '\n';
    if (!out.flush()) throw InputError("--timings " + path + ": cannot write");
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    throw InputError("--timings " + path + ": cannot replace it");
  }
}

void summarize(nbody::RunSettings const& settings, std::string const& strategy, int ranks,
               nbody::RunResult const& result) {
  auto const& t = result.times;
  std::int64_t const steps = result.last_step - result.first_step;
  fmt::print("nbody: {} bodies, steps {} to {} (t = {:.6g}), backend {}, ranks {}, strategy {}: {:.3g} "
             "steps/s, median step {:.3g} ms. Tree build {:.3g} s ({} builds), "
             "centre of mass {:.3g} s, refits {:.3g} s ({}), forces {:.3g} s, integration {:.3g} s, diagnostics {:.3g} "
             "s, I/O {:.3g} s, wall "
             "{:.3g} s. Since the start: {}. Wrote {} snapshots and {} checkpoints to {}.\n",
             settings.configuration.bodies, result.first_step, result.last_step, result.time,
             settings.backend, ranks, strategy,
             result.wall_seconds > 0 ? steps / result.wall_seconds : 0.0, t.median_step_seconds() * 1e3,
             t.tree_build, t.tree_builds,
             t.center_of_mass, t.refit, t.refits, t.forces, t.integration, t.diagnostics, t.io, result.wall_seconds,
             nbody::describe(result.drift, result.initial), result.snapshots, result.checkpoints,
             settings.output.directory);
}

void warn(std::string const& message) { fmt::print(stderr, "treetrav: warning: {}\n", message); }

}  // namespace

void add_nbody_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "nbody", "Barnes-Hut N-body simulation: leapfrog steps, snapshots, diagnostics, checkpoint/restart");
  auto options = std::make_shared<NbodyOptions>();
  options->physics.forces.softening = 0.01f;
  TrajectoryOptions given{};
  given.ics =
      command
          ->add_option("--ics", options->ics, "Initial conditions: a SWIFT/GADGET snapshot (HDF5)")
          ->check(file_name());
  given.plummer = command
                      ->add_option("--plummer", options->plummer,
                                   "Initial conditions: a Plummer sphere of N bodies")
                      ->check(at_least(Index{1}))
                      ->excludes(given.ics);
  given.seed = command->add_option("--seed", options->seed, "Seed of --plummer")
                   ->capture_default_str()
                   ->check(at_least(std::uint64_t{0}))
                   ->needs(given.plummer);
  command
      ->add_option("-o,--output", options->output,
                   "Run directory: snapshots and checkpoints (created)")
      ->check(file_name());
  command
      ->add_option(
          "--restart", options->restart,
          "Continue the run in DIR from its last complete checkpoint (its configuration is kept); "
          "without one, start it there from the initial conditions and --dt given")
      ->check(file_name());
  command->add_option("--steps", options->steps, "Run until this step (a restart continues to it)")
      ->required()
      ->check(at_least(std::int64_t{0}));
  given.dt = command->add_option("--dt", options->physics.dt, "Time step (fixed)")
                 ->check(positive<double>());
  given.theta =
      command->add_option("--theta", options->physics.forces.theta, "Barnes-Hut opening angle")
          ->capture_default_str()
          ->check(at_least<Coordinate>(0));
  given.softening =
      command
          ->add_option("--softening", options->physics.forces.softening, "Plummer softening length")
          ->capture_default_str()
          ->check(at_least<Coordinate>(0));
  given.gravity =
      command->add_option("--gravity", options->physics.forces.gravity, "Gravitational constant G")
          ->capture_default_str()
          ->check(finite<Coordinate>());
  given.leaf_size =
      command->add_option("--leaf-size", options->physics.leaf_size, "Most bodies per octree leaf")
          ->capture_default_str()
          ->check(at_least(1));
  given.refit =
      command
          ->add_option("--refit", options->physics.refit,
                       "Refit the octree to the moved bodies (moments anew, cells grown to hold them) while its "
                       "cells' mean volume growth, (side / built side)^3 - 1, stays at or below this; then build "
                       "it anew (0: a new octree every force evaluation; one process only)")
          ->capture_default_str()
          ->check(at_least(0.0));
  given.multipole =
      command
          ->add_option("--multipole", options->multipole,
                       "Cells taken whole pull as monopole or quadrupole (see bh-force --help)")
          ->capture_default_str()
          ->check(CLI::IsMember({"monopole", "quadrupole"}));
  given.opening = command
                      ->add_option("--opening", options->opening,
                                   "Opening criterion: barnes-hut, com-offset or relative (see bh-force "
                                   "--help; relative: each body's previous acceleration)")
                      ->capture_default_str()
                      ->check(CLI::IsMember({"barnes-hut", "com-offset", "relative"}));
  given.alpha = command
                    ->add_option("--alpha", options->physics.forces.alpha,
                                 "--opening relative: the tolerance alpha (smaller: more accurate)")
                    ->capture_default_str()
                    ->check(at_least<Coordinate>(0));
  given.group_size = command
                         ->add_option("--group-size", options->group_size,
                                      "--strategy group: bodies per group walk (at most 64)")
                         ->capture_default_str()
                         ->check(in_range(1, 64));
  given.eta = command
                  ->add_option("--eta", options->physics.eta,
                               "Block time steps: body i steps by the largest dt / 2^k not above eta sqrt("
                               "softening / |a_i|) (0: every body steps by --dt)")
                  ->check(at_least(0.0));
  given.max_bin = command
                      ->add_option("--max-bin", options->physics.max_bin,
                                   "--eta: the deepest time bin (smallest step dt / 2^max-bin)")
                      ->check(in_range(0, nbody::max_time_bin));
  given.potential_theta =
      command
          ->add_option("--potential-theta", options->physics.potential_theta,
                       fmt::format("Opening angle of the potential energy diagnostic "
                                   "(default: 0, exact, up to {} bodies; else --theta)",
                                   exact_potential_bodies))
          ->check(at_least<Coordinate>(0));
  given.strategy =
      command
          ->add_option("--strategy", options->strategy,
                       "Traversal strategy: " + strategy_names<ForceStrategy>() +
                           " (recursive: host backends only); the per-body walks give the same forces, group "
                           "walks (group) their own (at least as accurate); a restart keeps the kind")
          ->capture_default_str();
  command
      ->add_option("--snapshot-every", options->snapshot_every,
                   "Snapshot every K steps (0: only the first and the last state)")
      ->capture_default_str()
      ->check(at_least(std::int64_t{0}));
  command
      ->add_option("--checkpoint-every", options->checkpoint_every,
                   "Checkpoint every M steps (0: never by count)")
      ->capture_default_str()
      ->check(at_least(std::int64_t{0}));
  command
      ->add_option(
          "--checkpoint-seconds", options->checkpoint_seconds,
          "Checkpoint after a step once T seconds have passed since the last (0: never by time)")
      ->capture_default_str()
      ->check(at_least(0.0));
  command
      ->add_option("--timings", options->timings,
                   "Write per-phase timings and the drifts as JSON to FILE")
      ->check(file_name());
  command->add_flag("--count-interactions", options->count_interactions,
                    "Count each force evaluation's interactions (cells taken whole, bodies met) into "
                    "--timings with their flops and the force walk's FLOP/s (one process; the counting "
                    "walk carries two counters more a body)");
  command->add_flag("-q,--quiet", options->quiet, "No progress line and no per-snapshot log");
  command
      ->add_option("--rebalance-every", options->rebalance_every,
                   "Under mpirun: every K steps, cut the bodies' Morton curve anew by their measured costs "
                   "(0: never)")
      ->capture_default_str()
      ->check(at_least(std::int64_t{0}));
  command
      ->add_option("--progress-seconds", options->progress_seconds,
                   "Seconds between progress lines when stderr is not a terminal")
      ->capture_default_str()
      ->check(positive<double>());
  add_runtime_options(*command, options->runtime);
#ifdef TREETRAV_ENABLE_MPI
  add_gpu_aware_mpi_option(*command, options->runtime);
#endif
  command->footer(
      "Files in the run directory, named by step: snapshot_NNNNNN.h5 (SWIFT/GADGET: /Header Time, "
      "/PartType1/Coordinates, Velocities, Masses, ParticleIDs, Potentials; diagnostics as "
      "/RunMetadata "
      "attributes) and checkpoint_NNNNNN.h5 (the first before the first snapshot, the last, and by "
      "--checkpoint-every "
      "or --checkpoint-seconds; the newest two kept). All are written atomically. A run killed at "
      "any moment resumes "
      "with --restart DIR and ends bit-identical to an uninterrupted run on the same backend; "
      "before its first "
      "checkpoint was complete, --restart DIR needs the initial conditions and --dt again (give "
      "--restart DIR with "
      "every option in a job that may be requeued: it starts the run or continues it).");

  command->callback([options, given] {
    validate(*options, given);
    options->physics.forces.multipole = parse_multipole(options->multipole);
    options->physics.forces.opening = parse_opening(options->opening);
    ForceStrategy strategy = parse_strategy<ForceStrategy>(options->strategy);
    bool const restarting = !options->restart.empty();
    nbody::RunSettings settings;
    settings.output.directory = restarting ? options->restart : options->output;
    settings.output.snapshot_every = options->snapshot_every;
    settings.output.checkpoint_every = options->checkpoint_every;
    settings.output.checkpoint_seconds = options->checkpoint_seconds;
    settings.last_step = options->steps;
    std::string const& directory = settings.output.directory;
    check_timings(options->timings, directory);
    KokkosSession session(options->runtime, Ranks::many);
    settings.backend = to_string(session.backend());
    // Under mpirun every rank makes the same checks; rank 0 speaks and writes.
    bool const speaks = session.prints();
    settings.warn = speaks ? warn : [](std::string const&) {};
    settings.rebalance_every = options->rebalance_every;
    settings.count_interactions = options->count_interactions;
#ifdef TREETRAV_ENABLE_MPI
    if (session.ranks() > 1)
      settings.domain = std::make_shared<distributed::NbodyDomain>(
          distributed::Communicator(MPI_COMM_WORLD, mpi_memory(options->runtime)));
#endif
    Progress progress(stderr, !options->quiet && speaks, options->progress_seconds);
    // Each rank reads its block of the rows of the initial conditions or the
    // checkpoint, never the whole file; the ranks then partition the bodies.
    io::RowShare const share{session.rank(), session.ranks()};
    std::int64_t rows_read = 0;

    // A restart continues from the newest complete checkpoint; without one (a
    // run killed before its first checkpoint was complete) it starts from the
    // initial conditions, which must then be given again, as a fresh run does.
    std::optional<nbody::Checkpoint> checkpoint;
    if (restarting) {
      if (!speaks) {
      } else if (int const removed = nbody::remove_abandoned_temporaries(directory); removed > 0) {
        warn(fmt::format("removed {} temporary file(s) of writes that were interrupted", removed));
      }
      checkpoint = nbody::read_latest_checkpoint(directory, settings.warn, share);
      // Each rank reads the directory itself: a read failing on one node only
      // would leave that rank a step behind the others. They agree first.
      if (settings.domain) {
        std::int64_t const step = checkpoint ? checkpoint->step : -1;
        std::int64_t const lowest = settings.domain->min(step);
        std::int64_t const highest = -settings.domain->min(-step);
        if (lowest != highest)
          throw InputError(fmt::format(
              "--restart {}: the MPI ranks found different checkpoints (steps {} to {}; -1: "
              "none): a checkpoint did not read back on every node",
              directory, lowest, highest));
      }
      if (!checkpoint &&
          (given.dt->count() == 0 || (given.ics->count() == 0 && given.plummer->count() == 0)))
        throw InputError(
            "--restart " + directory +
            ": no complete checkpoint to resume from (the run was killed before its first "
            "checkpoint "
            "was complete, or never started): give its initial conditions (--ics or --plummer) and "
            "--dt to start it from the beginning");
    }
    if (!checkpoint)
      nbody::check_fresh_directory(directory, restarting ? "--restart" : "-o");

    nbody::RunResult result;
    if (checkpoint) {
      require_same_trajectory(*options, given, *checkpoint);
      if (checkpoint->backend != settings.backend)
        settings.warn(fmt::format(
            "the checkpoint was written on backend {}: continuing on {} is valid but rounds "
            "differently from an uninterrupted run",
            checkpoint->backend, settings.backend));
      if (options->steps <= checkpoint->step) {
        if (speaks)
          fmt::print(
            "nbody: the checkpoint in {} is at step {}, at or beyond --steps {}: nothing to do.\n",
            directory, checkpoint->step, options->steps);
        return;
      }
      settings.configuration = checkpoint->configuration;
      if (given.strategy->count() == 0 && checkpoint->configuration.group_size > 0) strategy = GroupWalk{};
      progress.log(
          fmt::format("resuming from {}", nbody::checkpoint_path(directory, checkpoint->step)));
      rows_read = static_cast<std::int64_t>(checkpoint->state.size());
      require_unique_ids(settings, checkpoint->state.ids, nbody::checkpoint_path(directory, checkpoint->step));
      result = run(session.backend(), strategy, settings, nullptr, &*checkpoint, progress);
    } else {
      // A bad row fails the rank that reads it; every rank reports it.
      io::SnapshotRows initial_conditions;
      on_every_rank(settings, [&] { initial_conditions = load_initial_conditions(*options, given, share); });
      rows_read = static_cast<std::int64_t>(initial_conditions.bodies.size());
      require_unique_ids(settings, initial_conditions.bodies.ids,
                         given.plummer->count() > 0 ? std::string("--plummer") : "--ics " + options->ics);
      settings.configuration = options->physics;
      settings.configuration.group_size = trait_of(strategy, [](auto tag) { return decltype(tag)::group_walk; }) ? options->group_size : 0;
      if (given.max_bin->count() == 0 && settings.configuration.block_steps())
        settings.configuration.max_bin = default_max_bin;
      settings.configuration.initial_conditions = describe_initial_conditions(*options, given);
      settings.configuration.initial_time = initial_conditions.bodies.time;
      settings.configuration.bodies = static_cast<std::int64_t>(initial_conditions.total);
      if (given.potential_theta->count() == 0)
        settings.configuration.potential_theta =
            settings.configuration.bodies <= exact_potential_bodies ? 0.0f : options->physics.forces.theta;
      if (restarting)
        progress.log("no complete checkpoint in " + directory + ": starting from the beginning");
      result = run(session.backend(), strategy, settings, &initial_conditions, nullptr, progress);
    }
    std::string const strategy_name = std::visit([](auto tag) { return std::string(decltype(tag)::name); }, strategy);
    std::vector<std::int64_t> const rows_read_by_rank = rows_read_of(settings, rows_read);
    if (!speaks) return;
    summarize(settings, strategy_name, session.ranks(), result);
    if (!options->timings.empty())
      write_timings(options->timings, settings, strategy_name,
                    dispatch_backend(session.backend(), [](auto const& space) { return space.concurrency(); }),
                    dispatch_backend(session.backend(),
                                     [](auto const& space) { return fp32_peak_flops_per_second(space); }),
                    session.ranks(), rows_read_by_rank, result);
  });
}

}  // namespace treetrav::cli
