#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/io/hdf5.hpp>
#ifdef TREETRAV_ENABLE_MPI
#include <treetrav/distributed/communicator.hpp>
#endif

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

namespace treetrav::cli {

std::string command_line_message(InputError const& error) {
  // The library's parameters and the flags that set them.
  static constexpr std::pair<char const*, char const*> flags[] = {
      {"k", "-k"},
      {"radius", "-r"},
      {"leaf_size", "--leaf-size"},
      {"strategy", "--strategy"},
      {"placement", "--placement"},
      {"regtt_mode", "--regtt-mode"},
      {"reorder_depth", "--reorder-depth"},
      {"multipole", "--multipole"},
      {"opening", "--opening"},
      {"alpha", "--alpha"},
      {"refit", "--refit"},
      {"theta", "--theta"},
      {"softening", "--softening"},
      {"chunk", "--chunk"},
      {"exclude_self", "--self"},
      {"backend", "--backend"},
      {"box", "--box"},
      {"edges", "--edges"},
      {"bins", "--bins"},
      {"reference", "--reference"},
      {"queries", "--queries"},
  };
  for (auto const& [parameter, flag] : flags)
    if (error.parameter() == parameter)
      return flag + error.detail();
  return error.what();
}

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

#ifdef TREETRAV_ENABLE_MPI
void add_gpu_aware_mpi_option(CLI::App& command, RuntimeOptions& options) {
  command
      .add_option("--gpu-aware-mpi", options.gpu_aware_mpi,
                  "Over several ranks on GPUs: hand MPI the GPUs' arrays as they are (on: the MPI "
                  "takes device memory, as Open MPI over a CUDA-enabled UCX does; off: stage them "
                  "through host memory; auto: on where the MPI says it takes CUDA memory)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
}

distributed::MpiMemory mpi_memory(RuntimeOptions const& options) {
  if (options.gpu_aware_mpi == "auto")
    return distributed::reported_mpi_memory();
  return options.gpu_aware_mpi == "on" ? distributed::MpiMemory::device : distributed::MpiMemory::host;
}
#endif

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

#ifdef TREETRAV_ENABLE_MPI
namespace {

// The CPUs this process may run on (all of them where that cannot be asked).
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set))
        cpus.push_back(cpu);
#endif
  if (cpus.empty())
    for (int cpu = 0; cpu < static_cast<int>(std::thread::hardware_concurrency()); ++cpu)
      cpus.push_back(cpu);
  return cpus;
}

// Several ranks on one node share its cores. Unbound by the launcher (mpirun
// --bind-to none, srun without binding), every rank sees all of them, and
// OpenMP's spread binding puts every rank's threads on the same places, the
// main threads (which drive MPI and the GPU) all on the first: the ranks then
// take turns on one core, and a busy-polling MPI exchange crawls. So unless
// the user chose OMP_PLACES, rank r of the node's n takes the r-th n-th of the
// CPUs as its places. A rank the launcher bound keeps its own CPUs. The
// thread count, unless given, is the CPUs a rank has.
void share_cores(int local_rank, int local_size, int& threads) {
  auto const cpus = allowed_cpus();
  std::size_t const online = std::max(1u, std::thread::hardware_concurrency());
  bool const unbound = cpus.size() >= online;
  // A rank's share of the CPUs it sees (a bound rank sees its own).
  std::size_t const share = std::max<std::size_t>(1, unbound ? cpus.size() / local_size : cpus.size());
  if (unbound && cpus.size() >= std::size_t(local_size) && std::getenv("OMP_PLACES") == nullptr) {
    std::string places;
    for (std::size_t i = local_rank * share; i < (local_rank + 1) * share; ++i)
      places += (places.empty() ? "{" : ",{") + std::to_string(cpus[i]) + "}";
    setenv("OMP_PLACES", places.c_str(), 1);
  }
  if (threads == 0)
    threads = static_cast<int>(share);
}

} // namespace
#endif

KokkosSession::KokkosSession(RuntimeOptions const& options, [[maybe_unused]] Ranks ranks)
    : backend_(options.backend.empty() ? default_backend() : parse_backend(options.backend)) {
  int threads = options.threads, device = -1;
#ifdef TREETRAV_ENABLE_MPI
  if (distributed::Environment::active()) {
    distributed::Communicator const world;
    rank_ = world.rank();
    ranks_ = world.size();
    if (ranks == Ranks::one && ranks_ > 1)
      throw InputError(
          fmt::format("this subcommand runs on one MPI rank, not {} (pc, radius, nn, knn, vp, bt, paircount and "
                      "nbody run on several): start it without mpirun -np or srun -n",
                      ranks_));
    if (world.local_size() > 1)
      share_cores(world.local_rank(), world.local_size(), threads);
#if defined(KOKKOS_ENABLE_CUDA)
    int gpus = 0;
    cudaError_t const error = cudaGetDeviceCount(&gpus);
    if (error != cudaSuccess && error != cudaErrorNoDevice)
      throw std::runtime_error(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error));
    if (gpus > 0)
      device = world.local_rank() % gpus;
#endif
  }
#endif
  // Kokkos warns when OpenMP binding is unset; spread threads unless the user chose.
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
#if KOKKOS_VERSION >= 40000
  Kokkos::InitializationSettings settings;
  if (threads > 0)
    settings.set_num_threads(threads);
  if (device >= 0)
    settings.set_device_id(device);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments arguments;
  if (threads > 0)
    arguments.num_threads = threads;
  if (device >= 0)
    arguments.device_id = device;
  Kokkos::initialize(arguments);
#endif
}

KokkosSession::~KokkosSession() { Kokkos::finalize(); }

}  // namespace treetrav::cli
