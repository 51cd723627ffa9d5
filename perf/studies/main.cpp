// treetrav-studies: the papers' benchmark matrix and REGTT study (bench) and
// Wu et al.'s co-runs (corun), with the CLI's options and exit codes: 0 on
// success and for --help and --version, 2 for a mistake in the command line,
// 3 for internal errors.
#include "studies.hpp"

#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <exception>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{"treetrav-studies: the papers' benchmark matrix, REGTT study and co-runs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TREETRAV_VERSION_STRING);
  treetrav::cli::add_bench_command(app);
  treetrav::cli::add_corun_command(app);
  try {
    app.parse(argc, argv);
  } catch (CLI::Success const& e) {
    return app.exit(e);
  } catch (CLI::ParseError const& e) {
    auto const extra = app.remaining();
    std::string const message =
        app.get_subcommands().empty() && !extra.empty()
            ? fmt::format("unknown {} '{}'", extra.front()[0] == '-' ? "option" : "subcommand",
                          extra.front())
            : e.what();
    std::string const command =
        app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ";
    fmt::print(stderr, "treetrav-studies: error: {} (see treetrav-studies {}--help)\n", message,
               command);
    return treetrav::cli::exit_bad_input;
  } catch (treetrav::InputError const& e) {
    fmt::print(stderr, "treetrav-studies: error: {}\n", e.what());
    return treetrav::cli::exit_bad_input;
  } catch (std::exception const& e) {
    fmt::print(stderr, "treetrav-studies: internal error: {}\n", e.what());
    return treetrav::cli::exit_internal_error;
  }
  return 0;
}
