// treetrav: the command-line front door. One subcommand per job; each parses
// its own options (CLI11), starts Kokkos, and writes its output atomically.
#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <exception>

int main(int argc, char** argv) {
  CLI::App app{"treetrav: repeated tree traversals (kNN, NN, PC, VP, BT, Barnes-Hut) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TREETRAV_VERSION_STRING);
  treetrav::cli::add_info_command(app);
  treetrav::cli::add_generate_command(app);
  treetrav::cli::add_bench_command(app);
  treetrav::cli::add_inspect_command(app);
  treetrav::cli::add_treefix_commands(app);
  treetrav::cli::add_search_commands(app);
  treetrav::cli::add_bh_force_command(app);
  treetrav::cli::add_nbody_command(app);
  try {
    app.parse(argc, argv);
  } catch (CLI::ParseError const& e) {
    return app.exit(e);
  } catch (treetrav::InputError const& e) {
    fmt::print(stderr, "treetrav: error: {}\n", e.what());
    return 2;
  } catch (std::exception const& e) {
    fmt::print(stderr, "treetrav: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
