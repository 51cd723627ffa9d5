// N-body forces on the default execution space (the GPU in a CUDA build): time
// against accuracy. For each walk (per-body strategy or group walk) x
// multipole order x opening criterion x theta: the Morton octree's build,
// moments (and quadrupoles) and forces, each the median of --repeats fenced
// runs after a warm-up, and the relative force error against direct summation
// in double on a random sample of bodies (the same sample and reference for
// every configuration). Optionally the all-pairs direct sum in float over
// every body (--direct-all), the brute-force baseline. It times a refit of the
// octree (refit_octree, to the same positions: its cost does not depend on
// how far the bodies moved), as an N-body run's steps between builds do
// instead of the build and moments. Beside the moments the step uses (one
// upward pass) it times the same moments
// as the treefix leaffix (treefix/octree.hpp, rooted tree and levels rebuilt
// from the parents) and checks both give the same bits. Writes CSV rows to
// --out and the reference sample (index, exact ax, ay, az) to --reference-out.
#include <treetrav/apps/barnes_hut.hpp>
#include <treetrav/apps/force_errors.hpp>
#include <treetrav/core/backends.hpp>
#include <treetrav/core/fp32_peak.hpp>
#include <treetrav/generators/generators.hpp>
#include <treetrav/io/snapshot.hpp>
#include <treetrav/trees/octree.hpp>
#include <treetrav/treefix/octree.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

struct Settings {
  std::string snapshot;
  Index plummer = 0;
  std::string dist = "plummer"; // what --plummer N generates
  std::uint64_t seed = 1;
  float softening = 0.01f;
  int leaf_size = 8;
  int group_size = 64;
  bool unpacked = false;
  std::vector<std::string> walks{"autoropes", "group"};
  std::vector<std::string> multipoles{"monopole", "quadrupole"};
  std::vector<std::string> openings{"com-offset"};
  std::vector<float> thetas{0.3f, 0.4f, 0.5f, 0.6f, 0.7f};
  std::vector<float> alphas{0.0005f, 0.001f, 0.0025f, 0.005f, 0.01f}; // --openings relative
  int repeats = 3;
  Index sample = 10000;
  bool direct_all = false;
  std::string out;
  std::string reference_out;
  std::string label;
};

struct Bodies {
  PointSet<Memory> positions;
  Kokkos::View<Coordinate*, Memory> masses;
};

Bodies load(Settings const& settings) {
  Kokkos::DefaultHostExecutionSpace const host_space;
  io::Snapshot const snapshot =
      settings.plummer == 0         ? io::read_snapshot(settings.snapshot)
      : settings.dist == "hernquist" ? generators::hernquist(host_space, settings.plummer, settings.seed)
      : settings.dist == "clustered-box"
          ? generators::clustered_box(host_space, settings.plummer, settings.seed)
          : generators::plummer(host_space, settings.plummer, settings.seed);
  Index const n = static_cast<Index>(snapshot.size());
  auto host = allocate_points<Kokkos::HostSpace>("bench::bodies", n, 3);
  Kokkos::View<Coordinate*, Kokkos::HostSpace> masses("bench::masses", n);
  for (Index i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k)
      host.coordinates(i, k) = static_cast<Coordinate>(snapshot.coordinates(i, k));
    masses(i) = static_cast<Coordinate>(snapshot.masses(i));
  }
  Space space;
  return {copy_points(space, host, "bench::bodies"),
          Kokkos::create_mirror_view_and_copy(space, masses)};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// All pairs in float, tiles of sources staged in team scratch: the GPU
// direct sum the tree codes are measured against.
struct AllPairs {
  static constexpr int tile = 256;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> x;
  Kokkos::View<Coordinate const*, Memory> mass;
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> acceleration;
  Coordinate softening2;

  template <class Member>
  KOKKOS_FUNCTION void operator()(Member const& team) const {
    Index const n = static_cast<Index>(x.extent(0));
    Index const i = team.league_rank() * team.team_size() + team.team_rank();
    auto* const staged =
        static_cast<Coordinate*>(team.team_scratch(0).get_shmem(sizeof(Coordinate) * 4 * tile));
    Coordinate const xi[3] = {i < n ? x(i, 0) : 0, i < n ? x(i, 1) : 0, i < n ? x(i, 2) : 0};
    Coordinate a[3] = {0, 0, 0};
    for (Index base = 0; base < n; base += tile) {
      for (int t = team.team_rank(); t < tile; t += team.team_size()) {
        Index const j = base + t;
        for (int k = 0; k < 3; ++k)
          staged[4 * t + k] = j < n ? x(j, k) : 0;
        staged[4 * t + 3] = j < n ? mass(j) : 0;
      }
      team.team_barrier();
      int const count = n - base < tile ? n - base : tile;
      for (int t = 0; t < count; ++t) {
        Coordinate const dx[3] = {staged[4 * t] - xi[0], staged[4 * t + 1] - xi[1],
                                  staged[4 * t + 2] - xi[2]};
        Coordinate const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
        Coordinate const inv_r = r2 > 0 ? math::rsqrt(r2) : 0; // the body itself (softening 0)
        Coordinate const factor = staged[4 * t + 3] * inv_r * inv_r * inv_r;
        for (int k = 0; k < 3; ++k)
          a[k] += factor * dx[k];
      }
      team.team_barrier();
    }
    if (i < n)
      for (int k = 0; k < 3; ++k)
        acceleration(i, k) = a[k];
  }
};

struct Measured {
  double tree = 0, moments = 0, quadrupoles = 0, forces = 0;
  double refit = 0; // refit_octree with its moments (not in the total)
  double cell_interactions = 0, body_interactions = 0; // per body, from a counting walk after the timed ones
  double moments_treefix = 0;    // the treefix leaffix's moments, for comparison (not in the total)
  bool moments_same_bits = true; // ... equal to the step's, bit for bit
  ForceErrors errors;
};

template <class View>
bool same_bits(View const& a, View const& b) {
  auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  auto const y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
  return x.span() == y.span() &&
         std::memcmp(x.data(), y.data(), x.span() * sizeof(typename View::value_type)) == 0;
}

template <class Strategy>
Measured measure(Space const& space, Bodies const& bodies, BarnesHutOptions const& options,
                 Strategy strategy, Settings const& settings, std::vector<Index> const& sample,
                 std::vector<double> const& exact) {
  std::vector<double> tree_s, moments_s, quadrupoles_s, forces_s, moments_treefix_s, refit_s;
  bool moments_same_bits = true;
  Workspace workspace; // what the repeats reuse (arrays, the walk's costs), as an N-body run's steps do
  strategy.workspace = &workspace;
  if constexpr (Strategy::group_walk) {
    strategy.group_size = settings.group_size;
    strategy.pack_siblings = !settings.unpacked;
  }
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> accelerations;
  Octree<Memory> tree;
  for (int run = 0; run <= settings.repeats; ++run) { // run 0: the warm-up
    Kokkos::Timer timer;
    auto built =
        build_morton_octree_cells(space, bodies.positions, bodies.masses, settings.leaf_size, &workspace);
    space.fence();
    tree_s.push_back(timer.seconds());
    timer.reset();
    compute_octree_moments(space, built);
    space.fence();
    moments_s.push_back(timer.seconds());
    timer.reset();
    if (options.multipole == Multipole::quadrupole)
      compute_octree_quadrupoles(space, built);
    space.fence();
    quadrupoles_s.push_back(timer.seconds());
    timer.reset();
    tree = built.tree;
    // The relative criterion reads the previous accelerations: the warm-up
    // estimates them (barnes_hut_accelerations), each timed run reads the
    // run's before, as an N-body step reads the last step's.
    if (run == 0 || options.opening != Opening::relative)
      accelerations = barnes_hut_accelerations(space, built.tree, bodies.positions, options,
                                               strategy, built.tree.points.original_index);
    else
      compute_barnes_hut_accelerations(space, built.tree, bodies.positions, options, strategy,
                                       accelerations, built.tree.points.original_index);
    space.fence();
    forces_s.push_back(timer.seconds());
    timer.reset();
    refit_octree(space, built, bodies.positions, options.multipole == Multipole::quadrupole);
    space.fence();
    refit_s.push_back(timer.seconds());
    Octree<Memory> leaffix = built.tree;
    leaffix.mass =
        typename Octree<Memory>::scalar_view("bench::leaffix_mass", leaffix.topology.size());
    leaffix.center_of_mass = typename Octree<Memory>::vector_view("bench::leaffix_center_of_mass",
                                                                  leaffix.topology.size(), 3);
    space.fence();
    timer.reset();
    {
      LevelSynchronousTreefix<Memory> method(space, rooted_tree(space, leaffix.topology));
      octree_moments(space, leaffix, method);
    }
    space.fence();
    moments_treefix_s.push_back(timer.seconds());
    if (run == 0)
      moments_same_bits = same_bits(leaffix.mass, built.tree.mass) &&
                          same_bits(leaffix.center_of_mass, built.tree.center_of_mass);
    if (run == 0 && settings.repeats > 0)
      tree_s.clear(), moments_s.clear(), quadrupoles_s.clear(), forces_s.clear(),
          moments_treefix_s.clear(), refit_s.clear();
  }
  Measured m;
  m.tree = median(tree_s);
  m.moments = median(moments_s);
  m.quadrupoles = median(quadrupoles_s);
  m.refit = median(refit_s);
  m.forces = median(forces_s);
  m.moments_treefix = median(moments_treefix_s);
  m.moments_same_bits = moments_same_bits;
  m.errors = force_errors(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, accelerations),
                          sample, exact);
  // The interactions of the last timed walk, counted by a walk of their own
  // (the counters would slow the timed one), from the same previous
  // accelerations.
  Index const n = bodies.positions.size();
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> counted("bench::counted", n, 3);
  Kokkos::deep_copy(space, counted, accelerations);
  Kokkos::View<Index*, Memory> costs("bench::costs", n), cells("bench::cell_costs", n);
  compute_barnes_hut_accelerations_and_costs(space, tree, bodies.positions, options, strategy,
                                             counted, costs,
                                             Kokkos::View<Index const*, Memory>(tree.points.original_index),
                                             {}, cells);
  std::int64_t all = 0, cell = 0;
  Kokkos::parallel_reduce(
      "bench::interactions", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(Index i, std::int64_t & sum) { sum += costs(i); }, all);
  Kokkos::parallel_reduce(
      "bench::cell_interactions", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(Index i, std::int64_t & sum) { sum += cells(i); }, cell);
  m.cell_interactions = double(cell) / n;
  m.body_interactions = double(all - cell) / n;
  // The costliest bodies: a walk's time is at least that of its longest
  // group, whatever the mean.
  {
    auto const cost = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, costs);
    auto const a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, accelerations);
    auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, bodies.positions.coordinates);
    std::vector<Index> by_cost(n);
    for (Index i = 0; i < n; ++i) by_cost[i] = i;
    std::sort(by_cost.begin(), by_cost.end(), [&](Index i, Index j) { return cost(i) > cost(j); });
    std::vector<double> magnitude(n);
    for (Index i = 0; i < n; ++i) magnitude[i] = std::hypot(a(i, 0), a(i, 1), a(i, 2));
    std::vector<double> sorted = magnitude;
    std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
    fmt::print("  costs: mean {:.0f}, p99.9 {}, max {}; the costliest bodies (cost, |x|, |a| / median |a|):",
               double(all) / n, cost(by_cost[n / 1000]), cost(by_cost[0]), sorted[n / 2]);
    for (int j = 0; j < 6 && j < n; ++j) {
      Index const i = by_cost[j];
      fmt::print(" ({}, {:.3g}, {:.3g})", cost(i), std::hypot(x(i, 0), x(i, 1), x(i, 2)), magnitude[i] / sorted[n / 2]);
    }
    fmt::print("\n");
  }
  return m;
}

} // namespace

int main(int argc, char** argv) {
  Settings settings;
  CLI::App app{"N-body forces: time against accuracy (walk x multipole x opening x theta)"};
  app.add_option("--snapshot", settings.snapshot, "Bodies: a SWIFT/GADGET snapshot");
  app.add_option("--plummer", settings.plummer,
                 "Bodies: a Plummer sphere of N bodies (instead of --snapshot)");
  app.add_option("--dist", settings.dist, "What --plummer N generates instead of a Plummer sphere")
      ->check(CLI::IsMember({"plummer", "hernquist", "clustered-box"}))
      ->capture_default_str();
  app.add_option("--seed", settings.seed, "Seed of --plummer")->capture_default_str();
  app.add_option("--softening", settings.softening, "Plummer softening")->capture_default_str();
  app.add_option("--leaf-size", settings.leaf_size, "Octree leaf capacity")->capture_default_str();
  app.add_option("--group-size", settings.group_size, "Group walk: bodies per group")
      ->capture_default_str();
  app.add_flag("--unpacked", settings.unpacked,
               "Group walk: one group per small node (no packing of siblings)");
  app.add_option("--walks", settings.walks, "Strategies: autoropes, lockstep, fsm, hybrid, group")
      ->capture_default_str();
  app.add_option("--multipoles", settings.multipoles, "monopole, quadrupole")
      ->capture_default_str();
  app.add_option("--openings", settings.openings, "barnes-hut, com-offset, relative")
      ->capture_default_str();
  app.add_option("--thetas", settings.thetas, "Opening angles (barnes-hut, com-offset)")
      ->capture_default_str();
  app.add_option("--alphas", settings.alphas, "Tolerances of the relative criterion")
      ->capture_default_str();
  app.add_option("--repeats", settings.repeats,
                 "Timed runs per configuration (after a warm-up; 0: the warm-up only)")
      ->capture_default_str();
  app.add_option("--sample", settings.sample, "Bodies of the accuracy sample")
      ->capture_default_str();
  app.add_flag("--direct-all", settings.direct_all,
               "Also time the all-pairs float direct sum over every body");
  app.add_option("--out", settings.out, "CSV file (appended; a header when new)")->required();
  app.add_option("--reference-out", settings.reference_out,
                 "Write the sample and its exact accelerations (CSV)");
  app.add_option("--label", settings.label, "A name for this run's rows (e.g. the input)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (settings.snapshot.empty() == (settings.plummer == 0)) {
    fmt::print(stderr, "bench_nbody: give one of --snapshot and --plummer\n");
    return 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  {
    Space space;
    std::string const device = describe_execution_space<Space>();
    Kokkos::Timer timer;
    Bodies const bodies = load(settings);
    Index const n = bodies.positions.size();
    fmt::print("bench_nbody: {} bodies on {} (loaded in {:.2f} s), softening {:g}\n", n, device,
               timer.seconds(), settings.softening);
    timer.reset();
    auto const sample = sample_bodies(n, settings.sample, 1);
    auto const exact = direct_accelerations(space, bodies.positions,
                                            Kokkos::View<Coordinate const*, Memory>(bodies.masses),
                                            sample, settings.softening, 1.0);
    fmt::print("direct summation in double for {} sampled bodies: {:.3f} s\n", sample.size(),
               timer.seconds());
    if (!settings.reference_out.empty()) {
      std::ofstream reference(settings.reference_out);
      reference << "body,ax,ay,az\n";
      char line[160];
      for (std::size_t s = 0; s < sample.size(); ++s) {
        std::snprintf(line, sizeof line, "%d,%.17g,%.17g,%.17g\n", sample[s], exact[3 * s],
                      exact[3 * s + 1], exact[3 * s + 2]);
        reference << line;
      }
    }
    bool const fresh = !std::ifstream(settings.out).good();
    std::ofstream csv(settings.out, std::ios::app);
    if (fresh)
      csv << "label,device,bodies,softening,leaf_size,walk,group_size,packed,multipole,opening,"
             "theta,tree_ms,moments_ms,"
             "quadrupoles_ms,forces_ms,total_ms,err_median,err_p99,err_max,err_mean,sample,moments_"
             "treefix_ms,"
             "moments_same_bits,alpha,cell_interactions,body_interactions,force_gflops,"
             "fp32_fraction,refit_ms\n";
    double const peak = fp32_peak_flops_per_second(space);
    auto row = [&](std::string const& walk, std::string const& multipole,
                   std::string const& opening, double theta, double alpha, Measured const& m) {
      double const total = m.tree + m.moments + m.quadrupoles + m.forces;
      // Flops as Acceleration::add writes them, over the timed walk.
      double const flops =
          n * (m.cell_interactions *
                   (multipole == "quadrupole" ? quadrupole_interaction_flops
                                              : body_interaction_flops) +
               m.body_interactions * body_interaction_flops);
      double const rate = m.forces > 0 ? flops / m.forces : 0;
      csv << fmt::format("{},{},{},{:g},{},{},{},{},{},{},{:g},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{"
                         ":.4e},{:.4e},{:.4e},{:.4e},{},"
                         "{:.4f},{},{:g},{:.1f},{:.1f},{:.1f},{:.4f},{:.4f}\n",
                         settings.label, device, n, settings.softening, settings.leaf_size, walk,
                         walk == "group" ? settings.group_size : 0,
                         walk == "group" && !settings.unpacked ? 1 : 0, multipole, opening, theta,
                         1e3 * m.tree, 1e3 * m.moments, 1e3 * m.quadrupoles, 1e3 * m.forces,
                         1e3 * total, m.errors.median, m.errors.p99, m.errors.max, m.errors.mean,
                         sample.size(), 1e3 * m.moments_treefix, m.moments_same_bits ? 1 : 0,
                         alpha, m.cell_interactions, m.body_interactions, rate * 1e-9,
                         peak > 0 ? rate / peak : 0.0, 1e3 * m.refit);
      csv.flush();
      fmt::print("{:>9} {:>10} {:>10} {} {:.4f}: tree {:7.3f} ms, moments {:6.3f}, quadrupoles "
                 "{:6.3f}, forces "
                 "{:9.3f} ms, total {:9.3f} ms | error median {:.2e} p99 {:.2e} max {:.2e} | "
                 "interactions a body {:.0f} cells + {:.0f} bodies, {:.0f} GFLOP/s ({:.1f}% of "
                 "FP32 peak) | refit {:6.3f} ms | moments as the treefix leaffix {:6.3f} ms{}\n",
                 walk, multipole, opening, opening == "relative" ? "alpha" : "theta",
                 opening == "relative" ? alpha : theta, 1e3 * m.tree, 1e3 * m.moments,
                 1e3 * m.quadrupoles, 1e3 * m.forces, 1e3 * total, m.errors.median, m.errors.p99,
                 m.errors.max, m.cell_interactions, m.body_interactions, rate * 1e-9,
                 peak > 0 ? 100 * rate / peak : 0.0, 1e3 * m.refit, 1e3 * m.moments_treefix,
                 m.moments_same_bits ? " (same bits)" : " (BITS DIFFER)");
      std::fflush(stdout);
    };
    if (settings.direct_all) {
      Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Memory> acceleration("bench::direct", n, 3);
      int const team_size = is_cuda_space_v<Space> ? AllPairs::tile : 1;
      Kokkos::TeamPolicy<Space> policy(space, (n + team_size - 1) / team_size, team_size);
      policy.set_scratch_size(0, Kokkos::PerTeam(sizeof(Coordinate) * 4 * AllPairs::tile));
      AllPairs const kernel{bodies.positions.coordinates, bodies.masses, acceleration,
                            settings.softening * settings.softening};
      std::vector<double> seconds;
      for (int run = 0; run < 2; ++run) { // run 0: the warm-up (module load)
        Kokkos::Timer t;
        Kokkos::parallel_for("bench::all_pairs", policy, kernel);
        space.fence();
        seconds.push_back(t.seconds());
      }
      Measured m;
      m.forces = seconds.back();
      m.errors = force_errors(
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, acceleration), sample, exact);
      m.body_interactions = double(n); // every body meets every body, itself at distance 0
      row("direct-all-pairs", "-", "-", 0, 0, m);
    }
    for (auto const& walk : settings.walks)
      for (auto const& multipole : settings.multipoles)
        for (auto const& opening : settings.openings) {
          bool const relative = parse_opening(opening) == Opening::relative;
          for (float parameter : relative ? settings.alphas : settings.thetas) {
            float const theta = relative ? 0.0f : parameter;
            BarnesHutOptions options{theta, settings.softening, 1.0f, parse_multipole(multipole),
                                     parse_opening(opening)};
            options.alpha = relative ? parameter : options.alpha;
            Measured const m = std::visit(
                [&](auto strategy) -> Measured {
                  using Strategy = decltype(strategy);
                  if constexpr (!runs_on_v<Strategy, Space>)
                    throw InputError("--walks recursive runs on host backends only");
                  else
                    return measure(space, bodies, options, strategy, settings, sample, exact);
                },
                parse_strategy<ForceStrategy>(walk));
            row(walk, multipole, opening, theta, relative ? parameter : 0.0, m);
          }
        }
  }
  return 0;
}
