#include <treetrav/distributed/communicator.hpp>

#include <treetrav/core/error.hpp>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>

#include <sys/types.h>
#include <unistd.h>

namespace treetrav::distributed {

void check_mpi(int error, char const* call) {
  if (error == MPI_SUCCESS)
    return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(error, message, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(message, length));
}

namespace {

// Whether a launcher (mpiexec, srun, a PMI server) started this process.
bool launched() {
  for (char const* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                           "MPI_LOCALNRANKS", "SLURM_STEP_ID"})
    if (std::getenv(name) != nullptr)
      return true;
  return false;
}

// A singleton's own Open MPI session directory, gone with it (none: "").
void remove_session_directory(std::string const& directory) {
  std::error_code ignored;
  if (!directory.empty())
    std::filesystem::remove_all(directory, ignored);
}

} // namespace

Environment::Environment(int& argc, char**& argv) {
  if (active())
    return;
  // A process no launcher started is a world of one. Open MPI then starts a
  // runtime daemon and probes the network transports (UCX) before
  // MPI_Init returns: about 0.4 s of every command a user types, more than a
  // small job's work. Tell it there is no one to talk to, unless the user set
  // these; other MPIs ignore the variables.
  if (!launched()) {
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    // Isolated singletons all name their session directory alike
    // (<tmp>/ompi.<host>.<uid>/jf.0/1): two commands running at once removed
    // it under each other, and MPI_Init failed. Each gets a directory of its own.
    // Named by the process id: a killed process's directory stays behind,
    // and the next command removes those whose process is gone.
    if (std::getenv("OMPI_MCA_orte_tmpdir_base") == nullptr) {
      char const* tmp = std::getenv("TMPDIR");
      std::filesystem::path const parent(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
      std::string const prefix = "treetrav-mpi-";
      std::error_code ignored;
      for (auto const& entry : std::filesystem::directory_iterator(parent, ignored)) {
        std::string const name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0)
          continue;
        long const pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
          std::filesystem::remove_all(entry.path(), ignored);
      }
      auto const mine = parent / (prefix + std::to_string(::getpid()));
      std::filesystem::remove_all(mine, ignored); // a dead process's, of the same id
      if (std::filesystem::create_directory(mine, ignored)) {
        session_directory_ = mine.string();
        setenv("OMPI_MCA_orte_tmpdir_base", session_directory_.c_str(), 1);
      }
    }
  }
  int provided = 0;
  int const initialised = MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (initialised != MPI_SUCCESS)
    remove_session_directory(session_directory_);
  check_mpi(initialised, "MPI_Init_thread");
  owned_ = true;
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

Environment::~Environment() {
  if (owned_)
    MPI_Finalize();
  remove_session_directory(session_directory_);
}

bool Environment::active() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

MpiMemory reported_mpi_memory() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // Open MPI: the header says what it was built with, the call what the run has.
  if (MPIX_Query_cuda_support() == 1)
    return MpiMemory::device;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported == 1)
    return MpiMemory::device;
#endif
  return MpiMemory::host;
}

Communicator::Communicator(MPI_Comm comm, MpiMemory memory) : comm_(comm), memory_(memory) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  // The ranks that share this node's memory, numbered in the communicator's order.
  MPI_Comm node;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

namespace detail {

void exchange_bytes(Communicator const& comm, void const* out, std::vector<std::size_t> const& send_bytes,
                    std::vector<std::size_t> const& send_offsets, void* in,
                    std::vector<std::size_t> const& recv_bytes, std::vector<std::size_t> const& recv_offsets,
                    int tag, std::function<void(int)> const& arrived) {
  constexpr std::size_t piece = std::size_t(1) << 30;
  int const p = comm.size();
  std::vector<MPI_Request> receives, sends;
  std::vector<int> receiving_from, pieces_left(p, 0);
  for (int r = 0; r < p; ++r)
    for (std::size_t at = 0; at < recv_bytes[r]; at += piece) {
      receives.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Irecv(static_cast<char*>(in) + recv_offsets[r] + at,
                          int(std::min(piece, recv_bytes[r] - at)), MPI_BYTE, r, tag, comm.get(),
                          &receives.back()),
                "MPI_Irecv");
      receiving_from.push_back(r);
      ++pieces_left[r];
    }
  for (int r = 0; r < p; ++r)
    for (std::size_t at = 0; at < send_bytes[r]; at += piece) {
      sends.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(static_cast<char const*>(out) + send_offsets[r] + at,
                          int(std::min(piece, send_bytes[r] - at)), MPI_BYTE, r, tag, comm.get(), &sends.back()),
                "MPI_Isend");
    }
  for (;;) {
    int i = MPI_UNDEFINED;
    check_mpi(MPI_Waitany(int(receives.size()), receives.data(), &i, MPI_STATUS_IGNORE), "MPI_Waitany");
    if (i == MPI_UNDEFINED)
      break;
    if (--pieces_left[receiving_from[i]] == 0 && arrived)
      arrived(receiving_from[i]);
  }
  check_mpi(MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

} // namespace detail

void collectively(MPI_Comm comm, std::function<void()> const& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int first = failure ? rank : size;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size)
    return;
  enum Kind : int { other, input, argument };
  int kind = other;
  std::string message = "unknown error";
  if (rank == first) {
    try {
      std::rethrow_exception(failure);
    } catch (InputError const& e) {
      kind = input, message = e.what();
    } catch (std::invalid_argument const& e) {
      kind = argument, message = e.what();
    } catch (std::exception const& e) {
      message = e.what();
    } catch (...) {
    }
  }
  int header[2] = {kind, static_cast<int>(message.size())};
  check_mpi(MPI_Bcast(header, 2, MPI_INT, first, comm), "MPI_Bcast");
  message.resize(header[1]);
  check_mpi(MPI_Bcast(message.data(), header[1], MPI_CHAR, first, comm), "MPI_Bcast");
  if (header[0] == input)
    throw InputError(message);
  if (header[0] == argument)
    throw std::invalid_argument(message);
  throw std::runtime_error(message);
}

} // namespace treetrav::distributed
