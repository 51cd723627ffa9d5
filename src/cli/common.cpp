#include "common.hpp"

#include <treetrav/core/error.hpp>

#include <cstdlib>

namespace treetrav::cli {

void add_runtime_options(CLI::App& command, RuntimeOptions& options, bool with_backend) {
  command.add_option("--threads", options.threads, "Host threads (0: Kokkos' default)")
      ->check(CLI::NonNegativeNumber);
  if (with_backend)
    command.add_option("--backend", options.backend,
                       "Kokkos execution space: cuda, openmp or serial (default: fastest enabled)");
}

KokkosSession::KokkosSession(RuntimeOptions const& options)
    : backend_(options.backend.empty() ? default_backend() : parse_backend(options.backend)) {
  // Kokkos warns when OpenMP binding is unset; spread threads unless the user chose.
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
#if KOKKOS_VERSION >= 40000
  Kokkos::InitializationSettings settings;
  if (options.threads > 0) settings.set_num_threads(options.threads);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments arguments;
  if (options.threads > 0) arguments.num_threads = options.threads;
  Kokkos::initialize(arguments);
#endif
}

KokkosSession::~KokkosSession() { Kokkos::finalize(); }

}  // namespace treetrav::cli
