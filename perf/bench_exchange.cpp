// The distributed searches' transport, alone: every rank sends `bytes` of a
// device array, split evenly among the other ranks, and receives as much
// into a device array (the answers' exchange of a distributed kNN), staged
// through host memory in the ways an MPI without GPU support allows, and
// copies `result bytes` from the device into a new host array (the results).
// Times are the slowest rank's, medians over the repeats after one warm-up.
// With "gpu-aware" as the fourth argument, also the device arrays handed to
// MPI as they are (a GPU-aware MPI: the distributed searches' --gpu-aware-mpi
// on), their bytes checked on arrival.
//   mpirun -np P bench_exchange [bytes] [result_bytes] [repeats] [gpu-aware]
#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Device = Kokkos::DefaultExecutionSpace::memory_space;
#ifdef KOKKOS_ENABLE_CUDA
using Pinned = Kokkos::CudaHostPinnedSpace;
#else
using Pinned = Kokkos::HostSpace;
#endif
template <class Space>
using Bytes = Kokkos::View<char*, Space>;

int rank_, size_;

double slowest(double seconds) {
  double max = 0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

// The slowest rank's time of step(): the first call's, and the median over
// `repeats` after it.
struct Times {
  double first, median;
};
Times time_of(int repeats, std::function<void()> const& step) {
  std::vector<double> times;
  for (int i = 0; i <= repeats; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    Kokkos::Timer timer;
    step();
    Kokkos::fence();
    times.push_back(slowest(timer.seconds()));
  }
  std::sort(times.begin() + 1, times.end());
  return {times[0], times[1 + repeats / 2]};
}

struct Plan {
  std::vector<int> counts, offsets;
};
Plan plan(std::size_t bytes) {
  Plan p{std::vector<int>(size_, 0), std::vector<int>(size_ + 1, 0)};
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      p.counts[r] = int(bytes / (size_ - 1));
  for (int r = 0; r < size_; ++r)
    p.offsets[r + 1] = p.offsets[r] + p.counts[r];
  return p;
}

void alltoallv(char const* send, char* received, Plan const& p) {
  MPI_Alltoallv(send, p.counts.data(), p.offsets.data(), MPI_BYTE, received, p.counts.data(),
                p.offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
}

// Receives posted first; as each arrives its part goes to the device.
void pointwise(char const* send, char* received, Plan const& p, Bytes<Device> const& to) {
  std::vector<MPI_Request> receives(size_, MPI_REQUEST_NULL), sends(size_, MPI_REQUEST_NULL);
  for (int r = 0; r < size_; ++r)
    if (p.counts[r] > 0) {
      MPI_Irecv(received + p.offsets[r], p.counts[r], MPI_BYTE, r, 7, MPI_COMM_WORLD, &receives[r]);
      MPI_Isend(send + p.offsets[r], p.counts[r], MPI_BYTE, r, 7, MPI_COMM_WORLD, &sends[r]);
    }
  Kokkos::DefaultExecutionSpace space;
  for (;;) {
    int r = MPI_UNDEFINED;
    MPI_Waitany(size_, receives.data(), &r, MPI_STATUS_IGNORE);
    if (r == MPI_UNDEFINED)
      break;
    auto const part = std::make_pair(std::size_t(p.offsets[r]), std::size_t(p.offsets[r + 1]));
    Kokkos::deep_copy(space, Kokkos::subview(to, part),
                      Kokkos::subview(Kokkos::View<char*, Pinned, Kokkos::MemoryUnmanaged>(
                                          received, p.offsets[size_]),
                                      part));
  }
  MPI_Waitall(size_, sends.data(), MPI_STATUSES_IGNORE);
}

// Device arrays straight to MPI: receives posted first, then the sends.
void direct(char const* send, char* received, Plan const& p) {
  std::vector<MPI_Request> requests;
  for (int r = 0; r < size_; ++r)
    if (p.counts[r] > 0) {
      requests.push_back(MPI_REQUEST_NULL);
      MPI_Irecv(received + p.offsets[r], p.counts[r], MPI_BYTE, r, 8, MPI_COMM_WORLD, &requests.back());
    }
  for (int r = 0; r < size_; ++r)
    if (p.counts[r] > 0) {
      requests.push_back(MPI_REQUEST_NULL);
      MPI_Isend(send + p.offsets[r], p.counts[r], MPI_BYTE, r, 8, MPI_COMM_WORLD, &requests.back());
    }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

// The byte at position j of the part rank `from` sends any rank.
KOKKOS_INLINE_FUNCTION char pattern(int from, std::size_t j) { return char((from * 31 + j * 7) & 0xff); }

// Bytes of `received` that differ from what the senders' patterns say.
std::size_t wrong_bytes(Bytes<Device> const& received, Plan const& p) {
  std::size_t wrong = 0;
  for (int r = 0; r < size_; ++r) {
    std::size_t bad = 0;
    std::size_t const first = std::size_t(p.offsets[r]);
    Kokkos::parallel_reduce(
        "wrong_bytes", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, p.counts[r]),
        KOKKOS_LAMBDA(std::size_t j, std::size_t & sum) { sum += received(first + j) != pattern(r, j); }, bad);
    wrong += bad;
  }
  return wrong;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_rank = 0;
  MPI_Comm_rank(local, &local_rank);
  // The node's GPUs round robin (ranks may share one, under MPS).
  int device = local_rank;
#ifdef KOKKOS_ENABLE_CUDA
  int gpus = 1;
  if (cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0)
    device = local_rank % gpus;
#endif
#if KOKKOS_VERSION >= 40000
  Kokkos::initialize(Kokkos::InitializationSettings().set_device_id(device));
#else
  Kokkos::InitArguments arguments;
  arguments.device_id = device;
  Kokkos::initialize(arguments);
#endif
  {
    std::size_t const bytes = argc > 1 ? std::stoull(argv[1]) : std::size_t(66) << 20;
    std::size_t const result_bytes = argc > 2 ? std::stoull(argv[2]) : std::size_t(80) << 20;
    int const repeats = argc > 3 ? std::atoi(argv[3]) : 5;
    bool const gpu_aware = argc > 4 && std::string(argv[4]) == "gpu-aware";
    Plan const p = plan(bytes);
    std::size_t const n = std::size_t(p.offsets[size_]);
    Bytes<Device> send("send", n), received("received", n), results("results", result_bytes);
    Bytes<Kokkos::HostSpace> host_send("host_send", n), host_received("host_received", n);
    Bytes<Pinned> pinned_send("pinned_send", n), pinned_received("pinned_received", n),
        pinned_results("pinned_results", result_bytes);
    auto const others = std::make_pair(std::size_t(0), n);
    auto row = [&](char const* name, Times t, std::size_t moved) {
      if (rank_ == 0)
        std::printf("%-44s %9.2f ms %8.2f GB/s  (first %.2f ms)\n", name, 1e3 * t.median,
                    moved / t.median / 1e9, 1e3 * t.first);
    };
    if (rank_ == 0)
      std::printf("%d ranks, %zu bytes out and in per rank, results %zu bytes, median of %d\n",
                  size_, n, result_bytes, repeats);
    if (gpu_aware) {
      // Each rank's parts patterned by sender and position, so that the
      // receiver can check every byte.
      for (int r = 0; r < size_; ++r) {
        std::size_t const first = std::size_t(p.offsets[r]);
        int const me = rank_;
        Kokkos::parallel_for(
            "pattern", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, p.counts[r]),
            KOKKOS_LAMBDA(std::size_t j) { send(first + j) = pattern(me, j); });
      }
      Kokkos::fence();
      row("device arrays to MPI, Isend/Irecv", time_of(repeats, [&] { direct(send.data(), received.data(), p); }),
          n);
      std::size_t wrong = wrong_bytes(received, p), all = 0;
      MPI_Allreduce(&wrong, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (rank_ == 0)
        std::printf("%-44s %zu\n", "  wrong bytes received (all ranks)", all);
      Kokkos::deep_copy(received, char(0));
      row("device arrays to MPI, Alltoallv", time_of(repeats, [&] { alltoallv(send.data(), received.data(), p); }),
          n);
      wrong = wrong_bytes(received, p);
      MPI_Allreduce(&wrong, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (rank_ == 0)
        std::printf("%-44s %zu\n", "  wrong bytes received (all ranks)", all);
    }
    row("MPI_Alltoallv, host arrays", time_of(repeats, [&] {
          alltoallv(host_send.data(), host_received.data(), p);
        }), n);
    row("MPI_Alltoallv, pinned host arrays", time_of(repeats, [&] {
          alltoallv(pinned_send.data(), pinned_received.data(), p);
        }), n);
    row("device to new host array", time_of(repeats, [&] {
          Bytes<Kokkos::HostSpace> fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fresh"), n);
          Kokkos::deep_copy(fresh, send);
        }), n);
    row("device to kept host array", time_of(repeats, [&] { Kokkos::deep_copy(host_send, send); }), n);
    row("device to pinned array", time_of(repeats, [&] { Kokkos::deep_copy(pinned_send, send); }), n);
    row("pinned allocation", time_of(repeats, [&] {
          Bytes<Pinned> fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fresh"), n);
        }), n);
    row("staged: new host arrays + Alltoallv", time_of(repeats, [&] {
          Bytes<Kokkos::HostSpace> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "out"), n),
              in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "in"), n);
          Kokkos::deep_copy(out, send);
          alltoallv(out.data(), in.data(), p);
          Kokkos::deep_copy(received, in);
        }), n);
    row("staged: kept host arrays + Alltoallv", time_of(repeats, [&] {
          Kokkos::deep_copy(host_send, send);
          alltoallv(host_send.data(), host_received.data(), p);
          Kokkos::deep_copy(received, host_received);
        }), n);
    row("staged: pinned arrays + Alltoallv", time_of(repeats, [&] {
          Kokkos::deep_copy(pinned_send, send);
          alltoallv(pinned_send.data(), pinned_received.data(), p);
          Kokkos::deep_copy(received, pinned_received);
        }), n);
    row("staged: pinned arrays + Isend/Irecv", time_of(repeats, [&] {
          Kokkos::deep_copy(Kokkos::subview(pinned_send, others), Kokkos::subview(send, others));
          Kokkos::fence();
          pointwise(pinned_send.data(), pinned_received.data(), p, received);
        }), n);
    row("results: device to new host array", time_of(repeats, [&] {
          Bytes<Kokkos::HostSpace> fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fresh"),
                                         result_bytes);
          Kokkos::deep_copy(fresh, results);
        }), result_bytes);
    row("results: via pinned, host threads copy", time_of(repeats, [&] {
          Bytes<Kokkos::HostSpace> fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fresh"),
                                         result_bytes);
          Kokkos::deep_copy(pinned_results, results);
          Kokkos::parallel_for(
              Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, result_bytes / 4096 + 1),
              [&](std::size_t page) {
                std::size_t const begin = page * 4096, end = std::min(result_bytes, begin + 4096);
                if (begin < end)
                  std::memcpy(fresh.data() + begin, pinned_results.data() + begin, end - begin);
              });
        }), result_bytes);
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
