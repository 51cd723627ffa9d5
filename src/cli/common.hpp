#pragma once

#include <treetrav/core/backends.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

namespace treetrav::cli {

// Options every compute subcommand shares.
struct RuntimeOptions {
  int threads = 0;  // 0: Kokkos' default
  std::string backend;  // empty: default_backend()
};

void add_runtime_options(CLI::App& command, RuntimeOptions& options, bool with_backend = true);

// Initialises Kokkos for the lifetime of a subcommand's run (after parsing, so
// --threads takes effect and --help never starts a device).
class KokkosSession {
 public:
  explicit KokkosSession(RuntimeOptions const& options);
  ~KokkosSession();
  KokkosSession(KokkosSession const&) = delete;
  KokkosSession& operator=(KokkosSession const&) = delete;
  Backend backend() const { return backend_; }

 private:
  Backend backend_;
};

// Each subcommand registers itself and its callback on the app.
void add_info_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_treefix_commands(CLI::App& app);  // treefix, treefix-generate
void add_search_commands(CLI::App& app);  // pc, nn, knn, vp, bt
void add_bh_force_command(CLI::App& app);
void add_nbody_command(CLI::App& app);

}  // namespace treetrav::cli
