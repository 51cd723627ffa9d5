#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/detail/sort.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace treetrav {

// Two kernels sharing one GPU (Wu et al. §4.1, §6.1): each runs on its own
// execution-space instance (a CUDA stream), repeatedly, so that the two
// overlap; an SM partition between them comes from their placements
// (PlacementOptions::first_sm, sms). The metrics of Eyerman & Eeckhout:
//   NTT_i = T_i(together) / T_i(alone), ANTT = mean NTT_i (lower is better),
//   STP = sum T_i(alone) / T_i(together) (higher is better).
// On host backends the two instances are one and the kernels alternate: the
// bookkeeping runs, but nothing overlaps.
struct CorunResult {
  double alone_a = 0, alone_b = 0;       // ms per invocation, alone on the whole device
  double together_a = 0, together_b = 0; // ms per invocation while both run
  int runs_a = 0, runs_b = 0; // invocations counted (those that overlapped the other kernel)
  double stp() const { return alone_a / together_a + alone_b / together_b; }
  double antt() const { return 0.5 * (together_a / alone_a + together_b / alone_b); }
};

// One invocation of a co-run kernel on the instance given, not waited for
// (the caller allocates everything beforehand: an allocation would
// synchronise the streams).
template <class ExecutionSpace>
using CorunKernel = std::function<void(ExecutionSpace const&)>;

namespace detail {

#if defined(KOKKOS_ENABLE_CUDA)
// Two streams, their Kokkos instances, and events to time invocations.
class CudaCorun {
public:
  CudaCorun() {
    // Blocking streams: Kokkos orders View allocations and frees on the
    // legacy default stream (patch 0005), which only these wait for.
    for (auto& stream : streams_)
      check_cuda(cudaStreamCreate(&stream), "stream");
  }
  ~CudaCorun() {
    for (auto event : events_)
      cudaEventDestroy(event);
    for (auto stream : streams_)
      cudaStreamDestroy(stream);
  }
  CudaCorun(CudaCorun const&) = delete;
  CudaCorun& operator=(CudaCorun const&) = delete;

  // Enqueues `runs[k]` invocations of kernel k on stream k, interleaved,
  // and returns each invocation's (start, end) in ms after a common origin.
  std::vector<std::vector<std::pair<double, double>>> run(CorunKernel<Kokkos::Cuda> const* kernels,
                                                          int const* runs) {
    std::vector<std::vector<std::pair<cudaEvent_t, cudaEvent_t>>> marks(2);
    cudaEvent_t const origin = event();
    check_cuda(cudaEventRecord(origin, streams_[0]), "record");
    check_cuda(cudaStreamWaitEvent(streams_[1], origin, 0), "wait");
    {
      // Instances live only while the streams do.
      Kokkos::Cuda const instances[2] = {Kokkos::Cuda(streams_[0]), Kokkos::Cuda(streams_[1])};
      for (int i = 0; i < std::max(runs[0], runs[1]); ++i)
        for (int k = 0; k < 2; ++k) {
          if (i >= runs[k])
            continue;
          cudaEvent_t const start = event(), end = event();
          check_cuda(cudaEventRecord(start, streams_[k]), "record");
          kernels[k](instances[k]);
          check_cuda(cudaEventRecord(end, streams_[k]), "record");
          marks[k].emplace_back(start, end);
        }
      for (auto stream : streams_)
        check_cuda(cudaStreamSynchronize(stream), "synchronize");
    }
    check_cuda(cudaGetLastError(), "kernel");
    std::vector<std::vector<std::pair<double, double>>> times(2);
    for (int k = 0; k < 2; ++k)
      for (auto const& [start, end] : marks[k])
        times[k].emplace_back(since(origin, start), since(origin, end));
    return times;
  }

private:
  cudaEvent_t event() {
    cudaEvent_t e;
    check_cuda(cudaEventCreate(&e), "event");
    events_.push_back(e);
    return e;
  }
  static double since(cudaEvent_t origin, cudaEvent_t e) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, origin, e), "elapsed time");
    return ms;
  }
  cudaStream_t streams_[2];
  std::vector<cudaEvent_t> events_;
};
#endif

// Host: the kernels alternate on one instance, each invocation timed alone.
template <class ExecutionSpace>
std::vector<std::vector<std::pair<double, double>>>
host_corun(ExecutionSpace const& space, CorunKernel<ExecutionSpace> const* kernels,
           int const* runs) {
  std::vector<std::vector<std::pair<double, double>>> times(2);
  Kokkos::Timer clock;
  for (int i = 0; i < std::max(runs[0], runs[1]); ++i)
    for (int k = 0; k < 2; ++k) {
      if (i >= runs[k])
        continue;
      double const start = clock.seconds() * 1e3;
      kernels[k](space);
      space.fence();
      times[k].emplace_back(start, clock.seconds() * 1e3);
    }
  return times;
}

} // namespace detail

// Median ms of `repeats` invocations of `kernel` alone (after one warm-up).
template <class ExecutionSpace>
double time_alone(ExecutionSpace const& space, CorunKernel<ExecutionSpace> const& kernel,
                  int repeats = 5) {
  kernel(space);
  space.fence();
  std::vector<double> times;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    Kokkos::Timer timer;
    kernel(space);
    space.fence();
    times.push_back(timer.seconds() * 1e3);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// a and b together, each invoked again as soon as it finishes until both ran
// at least `min_runs` times over the same span (§6.1, after Tuck and
// Tullsen); an invocation that ends after the other kernel's last one did
// not overlap it and is not counted. `alone_a`, `alone_b`: each kernel's
// time alone on the whole device (time_alone of its default version).
template <class ExecutionSpace>
CorunResult corun(ExecutionSpace const& space, CorunKernel<ExecutionSpace> const& a,
                  CorunKernel<ExecutionSpace> const& b, double alone_a, double alone_b,
                  int min_runs = 7) {
  if (!(alone_a > 0) || !(alone_b > 0))
    throw std::invalid_argument("corun: alone times must be > 0");
  CorunKernel<ExecutionSpace> const kernels[2] = {a, b};
  // Enough invocations of the shorter kernel to cover the longer one's.
  double const span = min_runs * std::max(alone_a, alone_b);
  int const runs[2] = {std::max(min_runs, static_cast<int>(span / alone_a + 0.5)),
                       std::max(min_runs, static_cast<int>(span / alone_b + 0.5))};
  for (auto const& kernel : kernels)
    kernel(space); // warm-up (plans, first launches)
  space.fence();
  std::vector<std::vector<std::pair<double, double>>> times;
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    detail::CudaCorun streams;
    times = streams.run(kernels, runs);
#endif
  } else {
    times = detail::host_corun(space, kernels, runs);
  }
  double const cut = std::min(times[0].back().second, times[1].back().second);
  CorunResult result{alone_a, alone_b};
  double total[2] = {0, 0};
  int counted[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    for (auto const& [start, end] : times[k])
      if (end <= cut)
        total[k] += end - start, ++counted[k];
    if (counted[k] == 0) // one invocation spanned all of the other's: it overlapped them
      total[k] = times[k].front().second - times[k].front().first, counted[k] = 1;
  }
  result.together_a = total[0] / counted[0];
  result.together_b = total[1] / counted[1];
  result.runs_a = counted[0];
  result.runs_b = counted[1];
  return result;
}

} // namespace treetrav
