// SM-centric placement on the default execution space (the GPU in a CUDA
// build), the measurements of Wu et al. ICS15:
//  - figure6.csv: single-kernel times of the six applications under the
//    hardware placement, SM-centric (chunks dealt to SMs in turn), affinity
//    (with the workers per SM found by hill climbing, §5.1) and persistent
//    threads with an affinity-ordered queue (§6.1's baseline); hillclimb.csv:
//    the climb;
//  - figure8.csv: the transformation's overhead, (T_smcentric - T_hardware) /
//    T_hardware with every SM filled (§6.4);
//  - corun.csv: all pairs of the applications on two streams, ANTT and STP
//    (§6.1, Figures 3-4) with the hardware's scheduling and with SM
//    partitions (workers per SM by hill climbing on half the SMs, then a few
//    splits); each kernel walks an evenly spread subset of its queries sized
//    to last about --corun-ms alone, so that every pair fits a short run;
//  - summary.md: the averages beside the paper's.
// Every placement's results are checked against the hardware run's, and
// every chunk is counted to have run exactly once.
#include <treetrav/apps/workloads.hpp>
#include <treetrav/schedule/corun.hpp>
#include <treetrav/schedule/detail/sm_centric_launch.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace {

using namespace treetrav;
using Space = Kokkos::DefaultExecutionSpace;

struct Settings {
  Index n = 1000000;
  Index bodies = 500000;
  int repeats = 5;
  std::vector<std::string> apps = workload_names();
  bool single = true;
  bool coruns = true;
  bool steal = true;    // PlacementOptions::steal (false: the paper's binding of chunks to SMs)
  double corun_ms = 20; // a co-run kernel's time alone (its queries scaled to it)
  int splits = 5;       // SM partitions tried per pair: SMs * i / (splits + 1)
  int corun_runs = 7;   // least invocations of each kernel in a co-run (§6.1)
  std::string out = "perf/results/placement";
};

double median_ms(Space const& space, Workload<Space> const& w, AnyPlacement const& placement,
                 int repeats) {
  return time_alone<Space>(
      space, [&](Space const& instance) { w.run(instance, placement); }, repeats);
}

double geomean(std::vector<double> const& v) {
  double s = 0;
  for (double x : v)
    s += std::log(x);
  return v.empty() ? 0 : std::exp(s / v.size());
}

template <class Placement>
AnyPlacement with_workers(Placement placement, int workers) {
  placement.options.workers_per_sm = workers;
  return placement;
}

// One counted run: every chunk once? how many left their planned SM?
struct Check {
  bool exact = true;
  bool once = true;
  Index moved = 0;
  int fit = 0;
  double plan_ms = 0;
};

Check check(Space const& space, Workload<Space> const& w, AnyPlacement placement,
            std::vector<double> const& reference) {
  PlacementReport report;
  report.count_chunks = true;
  placement_options(placement).report = &report;
  w.run(space, placement);
  space.fence();
  Check c;
  c.exact = w.results() == reference;
  for (int runs : report.chunk_runs)
    c.once = c.once && runs == 1;
  c.once = c.once && !report.chunk_runs.empty();
  c.moved = report.moved_chunks;
  c.fit = report.workers_per_sm;
  c.plan_ms = report.plan_seconds * 1e3;
  return c;
}

// Returns each application's time under the hardware placement.
std::map<std::string, double> single_kernels(Settings const& s,
                                             std::map<std::string, Workload<Space>>& workloads,
                                             std::ostream& md) {
  Space space;
  std::ofstream fig6(s.out + "/figure6.csv"), fig8(s.out + "/figure8.csv"),
      climb(s.out + "/hillclimb.csv");
  fig6 << "app,queries,hardware_ms,smcentric_ms,affinity_ms,affinity_workers_per_sm,persistent_ms,"
          "affinity_plan_ms,speedup_affinity_over_hardware,speedup_affinity_over_persistent,"
          "speedup_smcentric_over_hardware,moved_chunks_affinity,chunks_once,results_identical\n";
  fig8 << "app,hardware_ms,smcentric_ms,workers_per_sm,overhead_percent\n";
  climb << "app,workers_per_sm,ms\n";
  std::vector<double> over_hw, over_pt, overheads;
  std::map<std::string, double> hardware_ms;
  md << "## Single kernels (Figure 6) and overhead (Figure 8)\n\n| app | hardware ms | SM-centric "
        "ms | "
        "affinity ms (workers/SM) | persistent ms | affinity / hardware | affinity / persistent | "
        "overhead |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (auto const& app : s.apps) {
    auto const& w = workloads.at(app);
    w.run(space, Hardware{});
    space.fence();
    auto const reference = w.results();
    double const hardware = median_ms(space, w, Hardware{}, s.repeats);
    hardware_ms[app] = hardware;
    SmCentric smcentric;
    smcentric.options.steal = s.steal;
    Check const smc_check = check(space, w, smcentric, reference);
    double const smc = median_ms(space, w, smcentric, s.repeats);
    // §5.1: from all that fit (filling) down while it gets faster.
    Affinity affinity;
    affinity.options.steal = s.steal;
    Check const aff_check = check(space, w, affinity, reference);
    std::vector<std::pair<int, double>> trace;
    int const best = hill_climb_workers(
        aff_check.fit,
        [&](int workers) {
          return median_ms(space, w, with_workers(affinity, workers), std::min(s.repeats, 3));
        },
        &trace);
    for (auto const& [workers, ms] : trace)
      climb << fmt::format("{},{},{:.4f}\n", app, workers, ms);
    AnyPlacement const tuned = with_workers(affinity, best);
    double const aff = median_ms(space, w, tuned, s.repeats);
    Persistent persistent;
    persistent.options.steal = s.steal;
    Check const pt_check = check(space, w, persistent, reference);
    double const pt = median_ms(space, w, persistent, s.repeats);
    bool const once = smc_check.once && aff_check.once && pt_check.once;
    bool const exact = smc_check.exact && aff_check.exact && pt_check.exact;
    fig6 << fmt::format(
        "{},{},{:.4f},{:.4f},{:.4f},{},{:.4f},{:.2f},{:.4f},{:.4f},{:.4f},{},{},{}\n", app,
        w.queries, hardware, smc, aff, best, pt, aff_check.plan_ms, hardware / aff, pt / aff,
        hardware / smc, aff_check.moved, once, exact);
    double const overhead = 100 * (smc - hardware) / hardware;
    fig8 << fmt::format("{},{:.4f},{:.4f},{},{:.2f}\n", app, hardware, smc, smc_check.fit,
                        overhead);
    md << fmt::format(
        "| {} | {:.3f} | {:.3f} | {:.3f} ({}) | {:.3f} | {:.3f} | {:.3f} | {:+.1f}% |\n", app,
        hardware, smc, aff, best, pt, hardware / aff, pt / aff, overhead);
    fmt::print("{:4} hardware {:8.3f} ms  smcentric {:8.3f}  affinity {:8.3f} ({} per SM)  "
               "persistent {:8.3f}  "
               "plan {:.1f} ms  moved {}  once {}  exact {}\n",
               app, hardware, smc, aff, best, pt, aff_check.plan_ms, aff_check.moved,
               once ? "yes" : "NO", exact ? "yes" : "NO");
    over_hw.push_back(hardware / aff);
    over_pt.push_back(pt / aff);
    overheads.push_back(overhead);
    if (!once || !exact)
      throw std::runtime_error(app + ": a placement ran a chunk twice or changed results");
  }
  double mean_overhead = 0;
  for (double o : overheads)
    mean_overhead += o / overheads.size();
  md << fmt::format(
      "\nGeometric means: affinity over hardware {:.3f}x (paper: 1.21x over the original "
      "kernels), affinity over persistent threads {:.3f}x; mean overhead {:+.2f}% (paper: "
      "2.8%).\n\n",
      geomean(over_hw), geomean(over_pt), mean_overhead);
  return hardware_ms;
}

// ANTT and STP of every pair of workloads under the hardware's scheduling
// and under SM partitions. `full_ms`: each workload's time alone (hardware),
// when known.
void coruns(Settings const& s, std::map<std::string, Workload<Space>>& workloads,
            std::map<std::string, double> full_ms, std::ostream& md) {
  Space space;
  std::ofstream csv(s.out + "/corun.csv");
  csv << "pair,config,sms_a,workers_a,workers_b,queries_a,queries_b,alone_a_ms,alone_b_ms,"
         "together_a_ms,together_b_ms,runs_a,runs_b,stp,antt\n";
  PlacementOptions probe;
  Workspace sm_table;
  int const sms = detail::hardware_sms(space, probe, sm_table);
  std::map<std::string, Workload<Space>> kernels;
  std::map<std::string, double> alone;
  std::map<std::string, int> workers;
  for (auto const& app : s.apps) {
    auto const& w = workloads.at(app);
    if (!full_ms.count(app))
      full_ms[app] = median_ms(space, w, Hardware{}, std::min(s.repeats, 3));
    // Queries scaled to about corun_ms alone (all of them when shorter).
    double const scale = std::min(1.0, s.corun_ms / full_ms[app]);
    Index const queries = std::max<Index>(1, static_cast<Index>(std::lround(w.queries * scale)));
    auto const& k = kernels.emplace(app, queries < w.queries ? w.subset(queries) : w).first->second;
    alone[app] = median_ms(space, k, Hardware{}, s.repeats);
    // §5.1: the workers per SM on an even half of the SMs, by hill climbing.
    SmCentric half;
    half.options.steal = s.steal;
    half.options.sms = sms / 2;
    PlacementReport report;
    half.options.report = &report;
    k.run(space, half);
    space.fence();
    half.options.report = nullptr;
    workers[app] = hill_climb_workers(report.workers_per_sm, [&](int n) {
      return median_ms(space, k, with_workers(half, n), std::min(s.repeats, 3));
    });
    fmt::print("corun kernel {:4}: {} queries, {:.3f} ms alone, {} workers per SM\n", app,
               k.queries, alone[app], workers[app]);
  }
  std::vector<int> splits;
  for (int i = 1; i <= s.splits; ++i)
    if (int const split = static_cast<int>(std::int64_t(sms) * i / (s.splits + 1));
        split > 0 && split < sms && (splits.empty() || split != splits.back()))
      splits.push_back(split);
  std::string split_text;
  for (int split : splits)
    split_text += (split_text.empty() ? "" : ", ") + std::to_string(split);
  md << fmt::format(
      "## Co-runs (Figures 3-4)\n\nEach kernel walks an evenly spread subset of its queries "
      "sized to about {} ms alone (all of them when shorter; `queries_*` in corun.csv). Baseline: "
      "both kernels on the whole GPU, hardware scheduling, two streams. SM-centric: kernel A on "
      "SMs [0, s), B on [s, {}), workers per SM by hill climbing on half the SMs; s in {{{}}}. "
      "Each kernel is invoked again as soon as it ends until both ran at least {} times; "
      "invocations that end after the other kernel's last are not counted. Best STP and best "
      "ANTT over the splits, each with its split.\n\n| pair | baseline STP | baseline ANTT | "
      "SMC best STP (split) | SMC best ANTT (split) | STP gain | ANTT speedup "
      "|\n|---|---:|---:|---:|---:|---:|---:|\n",
      s.corun_ms, sms, split_text, s.corun_runs);
  std::vector<double> stp_gain, antt_speedup;
  auto row = [&](std::string const& pair, std::string const& config, int split, int wa, int wb,
                 Index qa, Index qb, CorunResult const& r) {
    csv << fmt::format("{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{:.4f},{:.4f}\n",
                       pair, config, split, wa, wb, qa, qb, r.alone_a, r.alone_b, r.together_a,
                       r.together_b, r.runs_a, r.runs_b, r.stp(), r.antt());
  };
  auto kernel = [](Workload<Space> const& w, AnyPlacement const& placement) -> CorunKernel<Space> {
    return [&w, placement](Space const& instance) { w.run(instance, placement); };
  };
  for (std::size_t i = 0; i < s.apps.size(); ++i)
    for (std::size_t j = i + 1; j < s.apps.size(); ++j) {
      auto const &a = s.apps[i], &b = s.apps[j];
      auto const &wa = kernels.at(a), &wb = kernels.at(b);
      std::string const pair = a + "+" + b;
      CorunResult const base = corun<Space>(space, kernel(wa, Hardware{}), kernel(wb, Hardware{}),
                                            alone[a], alone[b], s.corun_runs);
      row(pair, "hardware", sms, 0, 0, wa.queries, wb.queries, base);
      CorunResult best_stp{}, best_antt{};
      int stp_split = 0, antt_split = 0;
      for (int split : splits) {
        SmCentric pa, pb;
        pa.options.sms = split;
        pa.options.workers_per_sm = workers[a];
        pb.options.first_sm = split;
        pb.options.workers_per_sm = workers[b];
        pa.options.steal = pb.options.steal = s.steal;
        CorunResult const r =
            corun<Space>(space, kernel(wa, pa), kernel(wb, pb), alone[a], alone[b], s.corun_runs);
        row(pair, "smcentric", split, workers[a], workers[b], wa.queries, wb.queries, r);
        if (stp_split == 0 || r.stp() > best_stp.stp())
          best_stp = r, stp_split = split;
        if (antt_split == 0 || r.antt() < best_antt.antt())
          best_antt = r, antt_split = split;
      }
      stp_gain.push_back(best_stp.stp() / base.stp());
      antt_speedup.push_back(base.antt() / best_antt.antt());
      md << fmt::format(
          "| {} | {:.3f} | {:.3f} | {:.3f} ({}) | {:.3f} ({}) | {:+.1f}% | {:.3f}x |\n", pair,
          base.stp(), base.antt(), best_stp.stp(), stp_split, best_antt.antt(), antt_split,
          100 * (best_stp.stp() / base.stp() - 1), base.antt() / best_antt.antt());
      fmt::print("{:8} baseline STP {:.3f} ANTT {:.3f}; SM-centric best STP {:.3f} (split {}), "
                 "best ANTT {:.3f} (split {})\n",
                 pair, base.stp(), base.antt(), best_stp.stp(), stp_split, best_antt.antt(),
                 antt_split);
      csv.flush();
      md.flush();
    }
  md << fmt::format(
      "\nGeometric means over {} pairs: STP {:+.1f}% (paper: +33% predicted, +37% best), ANTT "
      "speedup {:.3f}x (paper: 1.33x predicted, 1.36x best).\n",
      stp_gain.size(), 100 * (geomean(stp_gain) - 1), geomean(antt_speedup));
}

} // namespace

int main(int argc, char* argv[]) {
  CLI::App app("SM-centric placement and co-runs (Wu et al. ICS15) on the default execution space");
  Settings s;
  app.add_option("--n", s.n, "points and queries of the search workloads")->capture_default_str();
  app.add_option("--bodies", s.bodies, "bodies of the Barnes-Hut workload")->capture_default_str();
  app.add_option("--repeats", s.repeats, "timed runs per measurement (median)")
      ->capture_default_str();
  app.add_option("--corun-ms", s.corun_ms,
                 "co-runs: each kernel's queries scaled to about this time alone")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--splits", s.splits, "co-runs: SM partitions tried per pair")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--corun-runs", s.corun_runs, "co-runs: least invocations of each kernel")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--apps", s.apps, "applications")
      ->delimiter(',')
      ->check(CLI::IsMember(workload_names()));
  app.add_flag("!--no-single", s.single, "skip the single kernels (Figures 6 and 8)");
  app.add_flag("!--no-coruns", s.coruns, "skip the co-runs");
  app.add_flag("!--no-steal", s.steal,
               "bind every chunk to its SM as the paper does (no worker takes another SM's "
               "chunks at the tail)");
  app.add_option("--out", s.out, "output directory")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  std::filesystem::create_directories(s.out);
  Space space;
  std::ofstream md(s.out + "/summary.md");
  md << "# SM-centric placement on " << describe_execution_space<Space>() << "\n\n"
     << fmt::format(
            "{} points and queries per search (clustered 7-D, covtype7 preset, queries in Morton "
            "order), {} Plummer bodies for BH (octree leaf order, theta 0.5); autoropes; median of "
            "{} "
            "runs after a warm-up; placement plans made once per workload and reused; {}.\n\n",
            s.n, s.bodies, s.repeats,
            s.steal ? "workers take other SMs' chunks once their own SM's are done (steal)"
                    : "every chunk bound to its SM, as in the paper (--no-steal)");
  {
    std::map<std::string, Workload<Space>> workloads;
    for (auto const& name : s.apps)
      workloads.emplace(name, make_workload(space, name, name == "bh" ? s.bodies : s.n));
    std::map<std::string, double> hardware_ms;
    if (s.single)
      hardware_ms = single_kernels(s, workloads, md);
    md.flush();
    if (s.coruns)
      coruns(s, workloads, hardware_ms, md);
  }
  return 0;
}
