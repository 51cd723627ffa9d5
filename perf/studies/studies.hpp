#pragma once

// treetrav-studies: the papers' studies, out of the user's CLI (issue 31).
// Each registers itself and its callback on the app; they use the CLI's
// shared helpers (treetrav_cli_common: common.hpp, run_app.hpp, auto_strategy.hpp).
#include <CLI/CLI.hpp>

namespace treetrav::cli {

void add_bench_command(CLI::App& app); // bench: the papers' matrix, --regtt: REGTT's study
void add_corun_command(CLI::App& app); // corun: Wu et al.'s co-runs

} // namespace treetrav::cli
