// treetrav bh-force: one Barnes-Hut force evaluation on the bodies of an
// N-body snapshot.
#include "run_app.hpp"

#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/io/points.hpp>
#include <treetrav/io/snapshot.hpp>

#include <cmath>
#include <limits>

namespace treetrav::cli {
namespace {

struct BarnesHutCommandOptions {
  std::string snapshot;
  BarnesHutOptions physics;
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
    throw InputError(fmt::format("--snapshot {}: {} bodies, more than an Index can count", path, snapshot.size()));
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
    in_range = in_range && std::isfinite(bodies.masses(i));
  }
  if (!in_range) throw InputError("--snapshot " + path + ": coordinates or masses exceed the float range");
  return bodies;
}

// bh: the Application of run_application (run_app.hpp).
struct BarnesHutForce {
  static constexpr char const* tree_name = Octree<Kokkos::HostSpace>::name;
  Bodies bodies;
  int leaf_size;
  bool sorted;  // bodies in the octree's leaf order
  BarnesHutOptions options;

  template <class Space>
  struct Setup {
    Octree<typename Space::memory_space> tree;
    PointSet<typename Space::memory_space> bodies;
  };

  template <class Space, class Strategy>
  Setup<Space> setup(Space const& space, Strategy const&) const {
    return {Octree<typename Space::memory_space>(space, bodies.positions, bodies.masses, leaf_size),
            copy_points(space, bodies.positions, "treetrav::cli::bodies")};
  }
  template <class Space, class Strategy>
  auto traverse(Space const& space, Setup<Space> const& setup, Strategy strategy) const {
    Kokkos::View<Index const*, typename Space::memory_space> order;
    if (sorted) order = setup.tree.points.original_index;
    return barnes_hut_accelerations(space, setup.tree, setup.bodies, options, strategy, order);
  }
  // Doubles for the file; a non-finite value fails the run before anything is written.
  template <class Accelerations>
  io::QueryResults collect(Accelerations const& accelerations) const {
    auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, accelerations);
    io::QueryResults results;
    results.accelerations = io::QueryResults::HostMatrix<double>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "treetrav::cli::accelerations"), host.extent(0), 3);
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
    return results;
  }
};

}  // namespace

void add_bh_force_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("bh-force", "Barnes-Hut gravitational accelerations of the bodies of an N-body snapshot");
  auto options = std::make_shared<BarnesHutCommandOptions>();
  command->add_option("--snapshot", options->snapshot, "SWIFT/GADGET snapshot (HDF5, /PartType1)")
      ->required()
      ->check(file_name());
  command
      ->add_option("--theta", options->physics.theta,
                   "Opening angle: a cell is used whole when size < theta * distance")
      ->check(at_least<Coordinate>(0))
      ->capture_default_str();
  command->add_option("--softening", options->physics.softening, "Plummer softening length")
      ->check(at_least<Coordinate>(0))
      ->capture_default_str();
  command->add_option("--gravity", options->physics.gravity, "Gravitational constant G")
      ->check(finite<Coordinate>())
      ->capture_default_str();
  add_run_options(*command, options->run);
  command->footer("Results: /Results/Accelerations (n_bodies, 3), double, in the snapshot's body order.");

  command->callback([options] {
    HostStrategy const strategy = strategy_from(options->run);
    check_output_file({"-o", options->run.output}, {{"--snapshot", options->snapshot}});
    KokkosSession session(options->run.runtime);

    RunRecord record;
    record.application = "bh";
    record.backend = session.backend();
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
        .set("gravity", static_cast<double>(options->physics.gravity));

    auto results = run_application(BarnesHutForce{bodies, options->run.leaf_size, options->run.sorted(), options->physics}, strategy, record);
    write_and_summarize(results, record, options->run.output);
  });
}

}  // namespace treetrav::cli
