#pragma once

#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/core/point_set.hpp>

#include <algorithm>
#include <cstdint>
#include <future>
#include <limits>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace treetrav {

// Batch jobs larger than the device: queries stay on the host and go to the
// device a chunk at a time.
struct BatchOptions {
  Index chunk = 0;  // queries per chunk; 0: what fits in half the free device memory, at most max_chunk
  // The default's cap: a few million queries fill any GPU, and smaller chunks
  // let reading, searching and writing overlap (and a progress line move).
  static constexpr Index max_chunk = Index{1} << 22;
};

namespace detail {

// Free memory of the device behind `space`; unbounded for host spaces.
template <class ExecutionSpace>
std::size_t free_bytes(ExecutionSpace const&) {
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) throw std::runtime_error("cudaMemGetInfo failed");
    return free;
#endif
  }
  return std::numeric_limits<std::size_t>::max();
}

// Rows [begin, end) of host points, as a point set of their own.
inline PointSet<Kokkos::HostSpace> host_rows(PointSet<Kokkos::HostSpace> const& points, Index begin, Index end) {
  auto rows = allocate_points<Kokkos::HostSpace>("treetrav::batch::rows", end - begin, points.dimension());
  for (int k = 0; k < points.dimension(); ++k)
    std::copy(&points.coordinates(begin, k), &points.coordinates(begin, k) + (end - begin), &rows.coordinates(0, k));
  return rows;
}

}  // namespace detail

// Queries per chunk: options.chunk, or what fits in half the device's free
// memory at `bytes_per_query` (the query's row, its results, scratch), at
// most BatchOptions::max_chunk.
template <class ExecutionSpace>
Index chunk_size(ExecutionSpace const& space, Index queries, BatchOptions const& options,
                 std::size_t bytes_per_query) {
  if (options.chunk < 0) throw InputError("chunk", " must be >= 0 (got " + std::to_string(options.chunk) + ")");
  if (options.chunk > 0) return std::min(options.chunk, std::max<Index>(queries, 1));
  std::size_t const fits = detail::free_bytes(space) / 2 / std::max<std::size_t>(bytes_per_query, 1);
  return static_cast<Index>(std::max<std::size_t>(
      1, std::min<std::size_t>({fits, std::size_t(BatchOptions::max_chunk), std::size_t(std::max<Index>(queries, 1))})));
}

// Runs `search` (device queries -> results on the host) over n queries
// chunk by chunk. load(first, count) gives the host queries of a chunk; it
// runs on a host thread of its own a chunk ahead (reading the next queries
// from a file, say, while the device searches). consume(first, results)
// runs on another, so that while the host consumes chunk i (writes it to a
// file, say) the device already works on chunk i + 1. Chunks are consumed in
// order; `report(done, n)` is called after each. Neither load nor consume
// may launch Kokkos kernels (they run beside the searches).
template <class ExecutionSpace, class Load, class Search, class Consume, class Report>
void for_each_chunk(ExecutionSpace const& space, Index n, Index chunk, Load const& load,
                    Search const& search, Consume const& consume, Report const& report) {
  Kokkos::Profiling::pushRegion("treetrav::for_each_chunk");
  auto load_from = [&](Index begin) {
    return std::async(std::launch::async, [&load, begin, count = std::min(chunk, n - begin)] {
      return load(begin, count);
    });
  };
  auto next = load_from(0);
  std::future<void> consuming;
  for (Index begin = 0; begin < n; begin += chunk) {
    Index const end = std::min(n, begin + chunk);
    auto const rows = next.get();
    if (end < n)
      next = load_from(end);
    auto results = search(copy_points(space, rows, "treetrav::batch::queries"));
    if (consuming.valid())
      consuming.get(); // in order, and errors surface here
    consuming = std::async(std::launch::async, [&consume, begin, results = std::move(results)] {
      consume(begin, results);
    });
    report(end, n);
  }
  if (consuming.valid())
    consuming.get();
  Kokkos::Profiling::popRegion();
}

// The same over queries in host memory.
template <class ExecutionSpace, class Search, class Consume, class Report>
void for_each_chunk(ExecutionSpace const& space, PointSet<Kokkos::HostSpace> const& queries,
                    Index chunk, Search const& search, Consume const& consume,
                    Report const& report) {
  for_each_chunk(
      space, queries.size(), chunk,
      [&](Index begin, Index count) {
        return count == queries.size() ? queries : detail::host_rows(queries, begin, begin + count);
      },
      search, consume, report);
}

}  // namespace treetrav
