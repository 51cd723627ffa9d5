#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/io/hdf5.hpp>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace treetrav::cli {

CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& text) {
        return text.empty() ? std::string("must name a file (got an empty name)") : "";
      },
      "");
}

void add_runtime_options(CLI::App& command, RuntimeOptions& options, bool with_backend) {
  command.add_option("--threads", options.threads, "Host threads (0: Kokkos' default)")
      ->check(at_least(0));
  if (with_backend)
    command.add_option("--backend", options.backend,
                       "Kokkos execution space: cuda, openmp or serial (default: fastest enabled)");
}

bool same_file(std::string const& a, std::string const& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

void refuse_inputs(FileOption const& output, std::vector<FileOption> const& inputs) {
  for (auto const& input : inputs)
    if (same_file(output.path, input.path))
      throw InputError(fmt::format(
          "{} {} is the {} file {}: an output never replaces an input; choose another name",
          output.option, output.path, input.option, input.path));
}

void check_output_file(FileOption const& output, std::vector<FileOption> const& inputs) {
  refuse_inputs(output, inputs);
  try {
    io::output_target(output.path);
  } catch (InputError const& e) {
    throw InputError(output.option + " " + e.what());
  }
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
