#pragma once

// MPI for treetrav's distributed runs (built with -DTREETRAV_ENABLE_MPI=ON):
// the program's MPI lifetime, a communicator's ranks, and the collective
// exchanges the distributed algorithms are written in (all standard MPI
// collectives; no protocol of our own).
#include <treetrav/io/row_share.hpp>

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace treetrav::distributed {

// Throws std::runtime_error naming `call` and MPI's message unless `error` is MPI_SUCCESS.
void check_mpi(int error, char const* call);

// MPI for the lifetime of a program: initialised here (only the main thread
// calls MPI) unless something already did, finalised on destruction if
// initialised here. Errors on MPI_COMM_WORLD are returned, so check_mpi can
// report them, instead of aborting the job.
class Environment {
public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(Environment const&) = delete;
  Environment& operator=(Environment const&) = delete;

  // Whether MPI is initialised and not yet finalised (in any program).
  static bool active();

private:
  bool owned_ = false;
  std::string session_directory_; // this process's own (a singleton's), removed at the end
};

// What memory MPI may be handed. `host`: host memory only; arrays in a GPU's
// memory pass through page-locked host staging on their way, as any MPI
// allows. `device`: a GPU's memory too (a GPU-aware MPI: Open MPI or MPICH
// over a UCX built with CUDA, Cray MPICH with its GPU support enabled):
// device arrays travel as they are, between the GPUs of a node by peer copies
// (NVLink), and never touch the host. Claiming `device` for an MPI without
// GPU support makes it read device addresses as host memory, which crashes.
enum class MpiMemory { host, device };

// `device` where this MPI says at run time that it takes CUDA memory (Open
// MPI's MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support), else
// `host`. An MPI that takes it without saying so (Open MPI built without
// CUDA over a UCX built with it) needs `device` given.
MpiMemory reported_mpi_memory();

// A communicator's size and this process's rank in it, its rank among the
// processes on the same node (local_rank picks the GPU), and the memory its
// MPI may be handed.
class Communicator {
public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, MpiMemory memory = MpiMemory::host);
  MPI_Comm get() const { return comm_; }
  MpiMemory memory() const { return memory_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }

private:
  MPI_Comm comm_;
  MpiMemory memory_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// Runs `step` on every process of `comm`. When it throws on any, every
// process throws the exception of the lowest rank that failed (its message;
// InputError and std::invalid_argument keep their type, others become
// std::runtime_error), so that no rank is left waiting in the next collective
// call and rank 0 can report what another rank found (a bad row of an input).
void collectively(MPI_Comm comm, std::function<void()> const& step);

// Rows [begin, end) of n that rank `rank` of `size` holds: contiguous blocks,
// the first n % size ranks one row more (io::RowShare: how the ranks read
// their inputs).
using Block = io::RowBlock;
inline Block block_of(std::size_t n, int rank, int size) { return io::RowShare{rank, size}.of(n); }

namespace detail {

inline int byte_count(std::size_t elements, std::size_t element_size) {
  std::size_t const bytes = elements * element_size;
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw std::runtime_error("MPI message of " + std::to_string(bytes) + " bytes exceeds 2^31 - 1");
  return static_cast<int>(bytes);
}

inline std::vector<int> displacements(std::vector<int> const& counts) {
  std::vector<int> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r)
    offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

// MPI_Alltoallv's exchange as point-to-point messages of raw bytes:
// send_bytes[r] bytes from out + send_offsets[r] to rank r, recv_bytes[r]
// bytes from rank r into in + recv_offsets[r], in pieces below 2^31 (MPI's
// counts are ints; pieces between two ranks arrive in the order they were
// sent). The receives are posted first; arrived(r), where given, runs as
// soon as all of rank r's bytes are in. `out` and `in` may be any memory
// comm's MPI may be handed (comm.memory()). Collective.
void exchange_bytes(Communicator const& comm, void const* out, std::vector<std::size_t> const& send_bytes,
                    std::vector<std::size_t> const& send_offsets, void* in,
                    std::vector<std::size_t> const& recv_bytes, std::vector<std::size_t> const& recv_offsets,
                    int tag, std::function<void(int)> const& arrived = {});

} // namespace detail

// MPI_Alltoallv of trivially copyable values: `send` holds the values for rank
// 0, then rank 1, ..., send_counts[r] of them for rank r. Returns what every
// rank sent this one, in rank order; recv_counts[r] values came from rank r.
template <class T>
std::vector<T> all_to_all(Communicator const& comm, std::vector<T> const& send,
                          std::vector<int> const& send_counts, std::vector<int>& recv_counts) {
  static_assert(std::is_trivially_copyable_v<T>, "all_to_all sends raw bytes");
  int const p = comm.size();
  recv_counts.assign(p, 0);
  check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm.get()),
      "MPI_Alltoall");
  std::vector<int> send_bytes(p), recv_bytes(p);
  for (int r = 0; r < p; ++r) {
    send_bytes[r] = detail::byte_count(send_counts[r], sizeof(T));
    recv_bytes[r] = detail::byte_count(recv_counts[r], sizeof(T));
  }
  auto const send_offsets = detail::displacements(send_bytes);
  auto const recv_offsets = detail::displacements(recv_bytes);
  detail::byte_count(std::size_t(send_offsets[p]) + std::size_t(recv_offsets[p]), 1);
  std::vector<T> received(recv_offsets[p] / sizeof(T));
  check_mpi(MPI_Alltoallv(send.data(), send_bytes.data(), send_offsets.data(), MPI_BYTE,
                          received.data(), recv_bytes.data(), recv_offsets.data(), MPI_BYTE,
                          comm.get()),
            "MPI_Alltoallv");
  return received;
}

// MPI_Allgather of one trivially copyable value per rank, in rank order.
template <class T>
std::vector<T> all_gather(Communicator const& comm, T const& value) {
  static_assert(std::is_trivially_copyable_v<T>, "all_gather sends raw bytes");
  std::vector<T> values(comm.size());
  check_mpi(
      MPI_Allgather(&value, sizeof(T), MPI_BYTE, values.data(), sizeof(T), MPI_BYTE, comm.get()),
      "MPI_Allgather");
  return values;
}

// MPI_Gatherv onto `root`: the ranks' `values` concatenated in rank order (empty elsewhere).
template <class T>
std::vector<T> gather(Communicator const& comm, std::vector<T> const& values, int root = 0) {
  static_assert(std::is_trivially_copyable_v<T>, "gather sends raw bytes");
  int const bytes = detail::byte_count(values.size(), sizeof(T));
  std::vector<int> counts(comm.rank() == root ? comm.size() : 0);
  check_mpi(MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm.get()),
            "MPI_Gather");
  std::vector<int> offsets;
  std::vector<T> all;
  if (comm.rank() == root) {
    offsets = detail::displacements(counts);
    all.resize(offsets.back() / sizeof(T));
  }
  check_mpi(MPI_Gatherv(values.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(),
                        MPI_BYTE, root, comm.get()),
            "MPI_Gatherv");
  return all;
}

} // namespace treetrav::distributed
