#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/communicator.hpp>
#endif

#include <CLI/CLI.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace treetrav::cli {

// The exit codes of every subcommand (documented in the README).
// 0: success, and --help and --version.
inline constexpr int exit_bad_input = 2; // any parse, option or input error; nothing written
inline constexpr int exit_internal_error = 3;

namespace detail {

// `text` as a T, whole: integers without a fraction or exponent, floating-point
// values finite and within T's range; nothing otherwise.
template <class T>
std::optional<T> parse_number(std::string const& text) {
  if constexpr (std::is_integral_v<T>) {
    T value{};
    char const* const end = text.data() + text.size();
    auto const [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc{} || stop != end)
      return std::nullopt;
    return value;
  } else {
    char* stop = nullptr;
    double const value = std::strtod(text.c_str(), &stop);
    if (text.empty() || stop != text.c_str() + text.size() || !std::isfinite(value) ||
        std::abs(value) > static_cast<double>(std::numeric_limits<T>::max()))
      return std::nullopt;
    return static_cast<T>(value);
  }
}

template <class T>
char const* number_kind() {
  return std::is_integral_v<T> ? "an integer" : "a finite number";
}

// A validator accepting the T values for which accepts(value) holds; its
// message reads "must be <kind> <what> (got '<text>')".
template <class T, class Accepts>
CLI::Validator number_validator(std::string const& what, Accepts accepts) {
  std::string const description =
      what.empty() ? number_kind<T>() : fmt::format("{} {}", number_kind<T>(), what);
  return CLI::Validator(
      [description, accepts](std::string& text) -> std::string {
        auto const value = parse_number<T>(text);
        if (value && accepts(*value))
          return {};
        return fmt::format("must be {} (got '{}')", description, text);
      },
      what);
}

} // namespace detail

// Validators of option values whose messages say, readably, what is accepted;
// CLI11 puts the option's name first: "--threads: must be an integer >= 0 (got '-2')".
// They also check the conversion, so that "abc" and "1.5" get the same message.
template <class T>
CLI::Validator at_least(T minimum) {
  return detail::number_validator<T>(fmt::format(">= {}", minimum),
                                     [minimum](T value) { return value >= minimum; });
}
template <class T>
CLI::Validator in_range(T minimum, T maximum) {
  return detail::number_validator<T>(fmt::format("in {}..{}", minimum, maximum),
                                     [=](T value) { return minimum <= value && value <= maximum; });
}
// A finite number > 0.
template <class T>
CLI::Validator positive() {
  return detail::number_validator<T>("> 0", [](T value) { return value > 0; });
}
// Any finite number.
template <class T>
CLI::Validator finite() {
  return detail::number_validator<T>("", [](T) { return true; });
}
// A path that is not empty.
CLI::Validator file_name();

// Options every compute subcommand shares.
struct RuntimeOptions {
  int threads = 0;  // 0: Kokkos' default
  std::string backend;  // empty: default_backend()
  std::string gpu_aware_mpi = "auto";  // MPI builds: auto, on or off
};

void add_runtime_options(CLI::App& command, RuntimeOptions& options, bool with_backend = true);

#ifdef TREETRAV_ENABLE_MPI
// --gpu-aware-mpi, for the commands whose exchanges can take device arrays,
// and what it says: the memory MPI may be handed (auto: what the MPI reports).
void add_gpu_aware_mpi_option(CLI::App& command, RuntimeOptions& options);
distributed::MpiMemory mpi_memory(RuntimeOptions const& options);
#endif

// The message of a library InputError as the command line says it: the
// library names an argument by its parameter ("k", "leaf_size"), the
// command line by the flag that sets it ("-k", "--leaf-size").
std::string command_line_message(InputError const& error);

// A file a subcommand reads or writes, and the option that names it.
struct FileOption {
  std::string option; // "--reference", "-o", ...
  std::string path;
};

// Whether two paths name the same file: the same device and inode once links
// are followed (so another spelling, a symbolic link or a hard link of a file
// is that file). False when either does not exist.
bool same_file(std::string const& a, std::string const& b);

// Throws InputError naming both options when `output` is one of `inputs`.
void refuse_inputs(FileOption const& output, std::vector<FileOption> const& inputs);

// Before any work, so that a failing run creates and touches nothing: `output`
// can be written atomically (io::output_target: its directory exists, it is no
// directory and has no other hard link; a symbolic link is followed) and is
// none of `inputs`. Throws InputError naming the options.
void check_output_file(FileOption const& output, std::vector<FileOption> const& inputs);

// How many MPI ranks a subcommand can run on.
enum class Ranks { one, many };

// Initialises Kokkos for the lifetime of a subcommand's run (after parsing, so
// --threads takes effect and --help never starts a device). Under mpirun or
// srun (builds with MPI), each rank gets its own execution space: the GPU of
// its rank on the node (local rank modulo the GPUs it sees) and, unless
// --threads says, its share of the node's cores. A Ranks::one subcommand
// started on several ranks is refused (InputError).
class KokkosSession {
 public:
   explicit KokkosSession(RuntimeOptions const& options, Ranks ranks = Ranks::one);
   ~KokkosSession();
   KokkosSession(KokkosSession const&) = delete;
   KokkosSession& operator=(KokkosSession const&) = delete;
   Backend backend() const { return backend_; }
   int rank() const { return rank_; }         // this process's MPI rank (0 without MPI)
   int ranks() const { return ranks_; }       // MPI ranks of the run (1 without MPI)
   bool prints() const { return rank_ == 0; } // only rank 0 prints summaries and progress

 private:
  Backend backend_;
  int rank_ = 0, ranks_ = 1;
};

// Each subcommand registers itself and its callback on the app.
void add_info_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_treefix_commands(CLI::App& app);  // treefix, treefix-generate
void add_search_commands(CLI::App& app);  // pc, nn, knn, vp, bt
void add_bh_force_command(CLI::App& app);
void add_nbody_command(CLI::App& app);
void add_paircount_command(CLI::App& app);

}  // namespace treetrav::cli
