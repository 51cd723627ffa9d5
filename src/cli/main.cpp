// treetrav: the command-line front door. One subcommand per job; each parses
// its own options (CLI11), starts Kokkos, and writes its output atomically.
#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/version.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/communicator.hpp>
#endif

#include <fmt/core.h>

#include <exception>
#include <string>

namespace {

// "knn " when the knn subcommand was given, "" otherwise: where --help helps.
std::string command_path(CLI::App const& app) {
  std::string path;
  for (CLI::App const* command = &app; !command->get_subcommands().empty();) {
    command = command->get_subcommands().front();
    path += command->get_name() + " ";
  }
  return path;
}

} // namespace

int main(int argc, char** argv) {
#ifdef TREETRAV_ENABLE_MPI
  // Before anything parses argv (MPI may take its own arguments out of it).
  treetrav::distributed::Environment mpi(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Every rank parses the same command line and reads the same inputs, so
  // mistakes are the same on every rank: rank 0 names them.
  bool const speaks = rank == 0;
#else
  bool const speaks = true;
#endif
  CLI::App app{"treetrav: repeated tree traversals (kNN, NN, PC, VP, BT, Barnes-Hut) on CPUs and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TREETRAV_VERSION_STRING);
  treetrav::cli::add_info_command(app);
  treetrav::cli::add_generate_command(app);
  treetrav::cli::add_inspect_command(app);
  treetrav::cli::add_treefix_commands(app);
  treetrav::cli::add_search_commands(app);
  treetrav::cli::add_paircount_command(app);
  treetrav::cli::add_bh_force_command(app);
  treetrav::cli::add_nbody_command(app);
  // One exit-code contract (README "Command line"): 0 on success and for --help
  // and --version; 2 for every mistake in the command line or the input files,
  // CLI11's own (conversion, range, missing, unknown, repeated or conflicting
  // option) included, with one line naming the option; 3 for internal errors.
  try {
    app.parse(argc, argv);
  } catch (CLI::Success const& e) {
    return speaks ? app.exit(e) : 0;
  } catch (CLI::ParseError const& e) {
    if (!speaks)
      return treetrav::cli::exit_bad_input;
    // CLI11 reports "treetrav sideways" or "treetrav --bogus" as a missing
    // subcommand: name the word instead.
    auto const extra = app.remaining();
    std::string const message =
        app.get_subcommands().empty() && !extra.empty()
            ? fmt::format("unknown {} '{}'", extra.front()[0] == '-' ? "option" : "subcommand",
                          extra.front())
            : e.what();
    fmt::print(stderr, "treetrav: error: {} (see treetrav {}--help)\n", message, command_path(app));
    return treetrav::cli::exit_bad_input;
  } catch (treetrav::InputError const& e) {
    if (speaks)
      fmt::print(stderr, "treetrav: error: {}\n", treetrav::cli::command_line_message(e));
    return treetrav::cli::exit_bad_input;
  } catch (std::exception const& e) {
    // A bug may strike one rank alone while the others wait for it: end them all.
    fmt::print(stderr, "treetrav: internal error: {}\n", e.what());
#ifdef TREETRAV_ENABLE_MPI
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks > 1)
      MPI_Abort(MPI_COMM_WORLD, treetrav::cli::exit_internal_error);
#endif
    return treetrav::cli::exit_internal_error;
  }
  return 0;
}
