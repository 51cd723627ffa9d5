#include <treetrav/distributed/communicator.hpp>

#include <cstdlib>

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
  }
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  owned_ = true;
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

Environment::~Environment() {
  if (owned_)
    MPI_Finalize();
}

bool Environment::active() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
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

Block block_of(std::size_t n, int rank, int size) {
  std::size_t const base = n / size, extra = n % size, r = rank;
  std::size_t const begin = r * base + (r < extra ? r : extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

} // namespace treetrav::distributed
