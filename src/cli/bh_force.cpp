// treetrav bh-force: one Barnes-Hut force evaluation on the bodies of an
// N-body snapshot, over the N-body step's Morton octree built on the execution
// space in use; optionally its accuracy against direct summation.
#include "run_app.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/force_errors.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/trees/octree.hpp>

#include <cmath>
#include <limits>
#include <memory>

namespace treetrav::cli {
namespace {

struct BarnesHutCommandOptions {
  std::string snapshot;
  BarnesHutOptions physics;
  std::string multipole = "monopole";
  std::string opening = "barnes-hut";
  int group_size = GroupWalk{}.group_size;
  bool error_report = false;
  Index error_sample = 10000;
  std::uint64_t error_seed = 1;
  RunOptions run;
};

// The snapshot's bodies in the engine's float precision.
struct Bodies {
  io::HostPointSet positions;
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses;
};

Bodies read_bodies(std::string const& path) {
  auto const snapshot = io::read_snapshot(path);
  if (snapshot.size() > static_cast<std::size_t>(std::numeric_limits<Index>::max()))
    throw InputError(fmt::format("--snapshot {}: {} bodies, more than an Index can count", path,
                                 snapshot.size()));
  auto const n = static_cast<Index>(snapshot.size());
  Bodies bodies{allocate_points<Kokkos::HostSpace>("treetrav::cli::bodies", n, 3),
                Kokkos::View<Coordinate*, Kokkos::HostSpace>(
                    Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::cli::masses"), n)};
  bool in_range = true;
  for (Index i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      bodies.positions.coordinates(i, k) = static_cast<Coordinate>(snapshot.coordinates(i, k));
      in_range = in_range && std::isfinite(bodies.positions.coordinates(i, k));
    }
    bodies.masses(i) = static_cast<Coordinate>(snapshot.masses(i));
    in_range = in_range && std::isfinite(bodies.masses(i)) && bodies.masses(i) > 0;
  }
  if (!in_range)
    throw InputError("--snapshot " + path + ": coordinates or masses exceed the float range");
  return bodies;
}

// What --error-report measured, for the summary.
struct ErrorReport {
  bool requested = false;
  Index sample_size = 0;
  std::uint64_t seed = 1;
  ForceErrors errors;
  double seconds = 0;
};

// bh: the Application of run_application (run_app.hpp).
struct BarnesHutForce {
  static constexpr char const* tree_name = Octree<Kokkos::HostSpace>::name;
  Bodies bodies;
  int leaf_size;
  bool sorted; // bodies in the octree's leaf order
  BarnesHutOptions options;
  std::shared_ptr<ErrorReport> report;

  template <class Space>
  struct Setup {
    Octree<typename Space::memory_space> tree;
    PointSet<typename Space::memory_space> bodies;
    Kokkos::View<Coordinate*, typename Space::memory_space> masses;
  };
  template <class Space>
  struct Output {
    Space space;
    Setup<Space> setup;
    Kokkos::View<Coordinate**, Kokkos::LayoutLeft, typename Space::memory_space> accelerations;
  };

  template <class Space, class Strategy>
  Setup<Space> setup(Space const& space, Strategy const&) const {
    auto const device_bodies = copy_points(space, bodies.positions, "treetrav::cli::bodies");
    auto const masses = Kokkos::create_mirror_view_and_copy(space, bodies.masses);
    return {build_morton_octree(space, device_bodies, masses, leaf_size,
                                options.multipole == Multipole::quadrupole),
            device_bodies, masses};
  }
  template <class Space, class Strategy>
  Output<Space> traverse(Space const& space, Setup<Space> const& setup, Strategy strategy) const {
    Kokkos::View<Index const*, typename Space::memory_space> order;
    if (sorted || strategy_t<Strategy>::group_walk)
      order = setup.tree.points.original_index;
    return {space, setup,
            barnes_hut_accelerations(space, setup.tree, setup.bodies, options, strategy, order)};
  }
  // Doubles for the file; a non-finite value fails the run before anything is
  // written. The error report's direct summation runs here, on the backend.
  template <class Space>
  io::QueryResults collect(Output<Space> const& output) const {
    auto const host =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, output.accelerations);
    io::QueryResults results;
    results.accelerations = io::QueryResults::HostMatrix<double>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::cli::accelerations"),
        host.extent(0), 3);
    Index non_finite = 0;
    for (std::size_t i = 0; i < host.extent(0); ++i) {
      bool finite = true;
      for (int k = 0; k < 3; ++k) {
        results.accelerations(i, k) = host(i, k);
        finite = finite && std::isfinite(host(i, k));
      }
      non_finite += finite ? 0 : 1;
    }
    if (non_finite > 0)
      throw InputError(fmt::format(
          "{} of {} bodies got a non-finite acceleration: coincident bodies with --softening {:g}; "
          "pass a positive --softening",
          non_finite, host.extent(0), options.softening));
    if (report->requested) {
      Kokkos::Timer timer;
      auto const sample =
          sample_bodies(output.setup.bodies.size(), report->sample_size, report->seed);
      auto const exact = direct_accelerations(
          output.space, output.setup.bodies,
          Kokkos::View<Coordinate const*, typename Space::memory_space>(output.setup.masses),
          sample, options.softening, options.gravity);
      report->errors = force_errors(host, sample, exact);
      report->seconds = timer.seconds();
      results.error_sample =
          io::QueryResults::HostVector<std::int64_t>("treetrav::cli::error_sample", sample.size());
      results.error_exact =
          io::QueryResults::HostMatrix<double>("treetrav::cli::error_exact", sample.size(), 3);
      for (std::size_t s = 0; s < sample.size(); ++s) {
        results.error_sample(s) = sample[s];
        for (int k = 0; k < 3; ++k)
          results.error_exact(s, k) = exact[s * 3 + k];
      }
    }
    return results;
  }
};

} // namespace

void add_bh_force_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "bh-force",
      "Barnes-Hut gravitational accelerations of the bodies of an N-body snapshot (GPU octree)");
  auto options = std::make_shared<BarnesHutCommandOptions>();
  command->add_option("--snapshot", options->snapshot, "SWIFT/GADGET snapshot (HDF5)")
      ->required()
      ->check(file_name());
  command->add_option("--theta", options->physics.theta, "Opening angle (see --opening)")
      ->check(at_least<Coordinate>(0))
      ->capture_default_str();
  command->add_option("--softening", options->physics.softening, "Plummer softening length")
      ->check(at_least<Coordinate>(0))
      ->capture_default_str();
  command->add_option("--gravity", options->physics.gravity, "Gravitational constant G")
      ->check(finite<Coordinate>())
      ->capture_default_str();
  command
      ->add_option("--multipole", options->multipole,
                   "Cells taken whole pull as: monopole (mass at the centre of mass) or quadrupole "
                   "(with the "
                   "quadrupole moment)")
      ->check(CLI::IsMember({"monopole", "quadrupole"}))
      ->capture_default_str();
  command
      ->add_option("--opening", options->opening,
                   "Opening criterion: barnes-hut (a cell of side s at distance d from its centre "
                   "of mass is taken whole when s < theta d), com-offset (when d > s / theta + "
                   "|centre of mass - centre|, as Bonsai) or relative (when G M b^p < alpha |a| "
                   "d^(p+2), b = s + 2 |centre of mass - centre|, p = 2 for monopoles and 3 with "
                   "quadrupoles, |a| the body's "
                   "acceleration from a first com-offset pass at theta 0.5: GADGET's relative "
                   "criterion; --theta is then unused); a cell that contains the body (group: "
                   "touches its box) always opens")
      ->check(CLI::IsMember({"barnes-hut", "com-offset", "relative"}))
      ->capture_default_str();
  command
      ->add_option("--alpha", options->physics.alpha,
                   "--opening relative: the tolerance alpha (smaller: more accurate)")
      ->check(at_least<Coordinate>(0))
      ->capture_default_str();
  command
      ->add_option("--group-size", options->group_size,
                   "--strategy group: bodies per group walk (at most 64; octree cells of at most "
                   "this many bodies)")
      ->check(in_range(1, 64))
      ->capture_default_str();
  command->add_flag(
      "--error-report", options->error_report,
      "Also compare with direct summation (double, on the backend) on a random sample of bodies: "
      "median, 99th percentile and maximum relative force error (stored with the sample)");
  command
      ->add_option("--error-sample", options->error_sample,
                   "--error-report: bodies sampled (all if fewer)")
      ->check(at_least(Index{1}))
      ->capture_default_str();
  command->add_option("--error-seed", options->error_seed, "--error-report: seed of the sample")
      ->check(at_least(std::uint64_t{0}))
      ->capture_default_str();
  add_run_options(*command, options->run, StrategySet::barnes_hut);
  command->footer("Results: /Results/Accelerations (n_bodies, 3), double, in the snapshot's body "
                  "order; with --error-report "
                  "also /Results/ErrorSample (sampled bodies) and /Results/ErrorSampleExact (their "
                  "direct-summation "
                  "accelerations), and the error statistics as /RunMetadata attributes "
                  "error_median, error_p99, error_max.");

  command->callback([options] {
    options->physics.multipole = parse_multipole(options->multipole);
    options->physics.opening = parse_opening(options->opening);
    BarnesHutStrategy const strategy = force_strategy_from(options->run, options->group_size);
    check_output_file({"-o", options->run.output}, {{"--snapshot", options->snapshot}});
    KokkosSession session(options->run.runtime);

    RunRecord record;
    record.placement = placement_from(options->run);
    record.application = "bh";
    record.backend = session.backend();
    options->run.leaf_size = leaf_size_of(options->run, /*forces=*/true);
    record.leaf_size = options->run.leaf_size;
    record.sort = options->run.sort;
    Kokkos::Timer timer;
    auto const bodies = read_bodies(options->snapshot);
    record.read_s = timer.seconds();
    record.n_reference = record.n_queries = bodies.positions.size();
    record.dimension = 3;
    record.parameters.set("snapshot", options->snapshot)
        .set("theta", static_cast<double>(options->physics.theta))
        .set("softening", static_cast<double>(options->physics.softening))
        .set("gravity", static_cast<double>(options->physics.gravity))
        .set("multipole", options->multipole)
        .set("opening", options->opening);
    if (options->physics.opening == Opening::relative)
      record.parameters.set("alpha", static_cast<double>(options->physics.alpha));
    if (trait_of(strategy, [](auto tag) { return decltype(tag)::group_walk; }))
      record.parameters.set("group_size", static_cast<double>(options->group_size));

    auto report = std::make_shared<ErrorReport>();
    report->requested = options->error_report;
    report->sample_size = options->error_sample;
    report->seed = options->error_seed;
    auto results = run_application(BarnesHutForce{bodies, options->run.leaf_size,
                                                  options->run.sorted(), options->physics, report},
                                   strategy, record);
    if (report->requested) {
      auto const& e = report->errors;
      record.parameters.set("error_sample_size", static_cast<double>(e.sample.size()))
          .set("error_seed", static_cast<double>(report->seed))
          .set("error_median", e.median)
          .set("error_p99", e.p99)
          .set("error_max", e.max)
          .set("error_mean", e.mean)
          .set("error_rms", e.rms)
          .set("error_direct_s", report->seconds);
    }
    write_and_summarize(results, record, options->run.output);
    if (report->requested)
      fmt::print("bh-force: relative force error against direct summation (double, backend {}) on "
                 "{} of {} bodies: "
                 "median {:.3e}, 99th percentile {:.3e}, maximum {:.3e} (mean {:.3e}; direct "
                 "summation {:.3g} s).\n",
                 to_string(record.backend), report->errors.sample.size(), record.n_queries,
                 report->errors.median, report->errors.p99, report->errors.max, report->errors.mean,
                 report->seconds);
  });
}

} // namespace treetrav::cli
