// treetrav-studies corun: two applications sharing one GPU on two streams (Wu et al.
// ICS15 §6.1), first with the hardware's scheduling, then with an SM
// partition between them (SM-centric placement); prints ANTT and STP.
#include "studies.hpp"

// The CLI's, through treetrav_cli_common.
#include "common.hpp"
#include "run_app.hpp"

#include <treetrav/apps/workloads.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/schedule/corun.hpp>
#include <treetrav/schedule/detail/sm_centric_launch.hpp>

#include <fmt/core.h>

namespace treetrav::cli {
namespace {

struct CorunOptions {
  std::vector<std::string> pair;
  Index n = 200000;
  Index bodies = 200000;
  int split = 0;
  std::vector<int> workers{0, 0};
  int runs = 7;
  RuntimeOptions runtime;
};

template <class Space>
void run_corun(Space const& space, CorunOptions const& options) {
  if constexpr (!placement_runs_on_v<SmCentric, Space>) {
    throw InputError(fmt::format("corun partitions SMs between two placed kernels; a placement "
                                 "on --backend {} {}",
                                 Space::name(), placement_refusal<Space>()));
  } else {
    auto const size = [&](std::string const& app) {
      return app == "bh" ? options.bodies : options.n;
    };
    auto const a = make_workload(space, options.pair[0], size(options.pair[0]), 1);
    auto const b = make_workload(space, options.pair[1], size(options.pair[1]), 2);
    Workspace sm_table;
    int const sms = treetrav::detail::hardware_sms(space, PlacementOptions{}, sm_table);
    if (sms < 2)
      throw InputError(fmt::format("corun splits {}'s SMs (threads) between two kernels; it has {}",
                                   Space::name(), sms));
    int const split = options.split > 0 ? options.split : sms / 2;
    if (split >= sms)
      throw InputError(fmt::format("--split must be below the {} SMs of {} (got {})", sms,
                                   Space::name(), split));
    auto kernel = [](Workload<Space> const& w,
                     AnyPlacement const& placement) -> CorunKernel<Space> {
      return [&w, placement](Space const& instance) { w.run(instance, placement); };
    };
    double const alone_a = time_alone<Space>(space, kernel(a, Hardware{}));
    double const alone_b = time_alone<Space>(space, kernel(b, Hardware{}));
    auto const base = corun<Space>(space, kernel(a, Hardware{}), kernel(b, Hardware{}), alone_a,
                                   alone_b, options.runs);
    SmCentric pa, pb;
    pa.options.sms = split;
    pa.options.workers_per_sm = options.workers[0];
    pb.options.first_sm = split;
    pb.options.workers_per_sm = options.workers[1];
    auto const smc =
        corun<Space>(space, kernel(a, pa), kernel(b, pb), alone_a, alone_b, options.runs);
    auto const line = [&](std::string const& config, CorunResult const& r) {
      fmt::print("{:28} {} {:.3f} ms ({} runs), {} {:.3f} ms ({} runs); STP {:.3f}, ANTT {:.3f}\n",
                 config, a.app, r.together_a, r.runs_a, b.app, r.together_b, r.runs_b, r.stp(),
                 r.antt());
    };
    fmt::print("corun {} ({} queries) + {} ({} queries) on {}; alone: {:.3f} ms and {:.3f} ms\n",
               a.app, a.queries, b.app, b.queries, describe_execution_space<Space>(), alone_a,
               alone_b);
    line("hardware", base);
    line(fmt::format("smcentric SMs [0,{}) | [{},{})", split, split, sms), smc);
    fmt::print(
        "SM partition over hardware: STP {:+.1f}%, ANTT {:.3f}x{}\n",
        100 * (smc.stp() / base.stp() - 1), base.antt() / smc.antt(),
        is_cuda_space_v<Space> ? "" : " (host backends: the kernels alternate, nothing overlaps)");
  }
}

} // namespace

void add_corun_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "corun",
      "Two applications sharing the GPU on two streams (Wu et al. ICS15): ANTT and STP with the "
      "hardware's scheduling and with an SM partition between them");
  auto options = std::make_shared<CorunOptions>();
  command->add_option("--pair", options->pair, "the two applications, e.g. knn,bh")
      ->required()
      ->delimiter(',')
      ->expected(2)
      ->check(CLI::IsMember(workload_names()));
  command->add_option("-n", options->n, "points and queries of a search (generated, clustered 7-D)")
      ->check(at_least(Index{1}))
      ->capture_default_str();
  command->add_option("--bodies", options->bodies, "bodies of bh (a generated Plummer sphere)")
      ->check(at_least(Index{1}))
      ->capture_default_str();
  command
      ->add_option("--split", options->split,
                   "SMs of the first application (the rest: the second); 0: half")
      ->check(at_least(0))
      ->capture_default_str();
  command
      ->add_option("--workers-per-sm", options->workers,
                   "active workers per SM of each (0: as many as fit)")
      ->delimiter(',')
      ->expected(2)
      ->check(at_least(0));
  command->add_option("--runs", options->runs, "least invocations of each kernel in a co-run")
      ->check(at_least(1))
      ->capture_default_str();
  add_runtime_options(*command, options->runtime);
  command->callback([options] {
    KokkosSession session(options->runtime);
    dispatch_backend(session.backend(), [&](auto const& space) { run_corun(space, *options); });
  });
}

} // namespace treetrav::cli
