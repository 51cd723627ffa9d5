#include <treetrav/core/detail/sort.hpp>
#include <treetrav/core/error.hpp>
#include <treetrav/schedule/detail/regtt_kernels.hpp>
#include <treetrav/schedule/regtt.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#endif

namespace treetrav {

namespace {

// Positions of the complete arity-ary tree above `depth`, saturating at
// `limit` + 1 so that deep requests cannot overflow.
std::int64_t complete_positions(int arity, int depth, std::int64_t limit) {
  std::int64_t total = 0, level = 1;
  for (int j = 0; j < depth; ++j) {
    total += level;
    if (total > limit)
      return limit + 1;
    level *= arity;
  }
  return total;
}

constexpr std::int64_t max_positions = std::int64_t(1) << 24;
constexpr std::int64_t max_model_key_bits = std::int64_t(1) << 14;

// Least squares of y ~ rows * c over the first `used` columns (the rest stay
// 0), by the normal equations on columns scaled to unit maximum; a column
// that carries no information gets 0.
std::vector<double> least_squares(std::vector<std::vector<double>> const& rows,
                                  std::vector<double> const& y, int columns, int used) {
  std::vector<double> scale(columns, 0.0);
  for (auto const& row : rows)
    for (int j = 0; j < used; ++j)
      scale[j] = std::max(scale[j], std::abs(row[j]));
  std::vector<std::vector<double>> a(used, std::vector<double>(used + 1, 0.0));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < used; ++j) {
      double const xj = scale[j] > 0 ? rows[i][j] / scale[j] : 0;
      for (int l = 0; l < used; ++l)
        a[j][l] += xj * (scale[l] > 0 ? rows[i][l] / scale[l] : 0);
      a[j][used] += xj * y[i];
    }
  double largest = 0;
  for (int j = 0; j < used; ++j)
    largest = std::max(largest, std::abs(a[j][j]));
  std::vector<double> solution(columns, 0.0);
  std::vector<bool> pivoted(used, false);
  std::vector<int> pivot_row(used, -1);
  // Gauss-Jordan with partial pivoting; negligible pivots are skipped.
  for (int column = 0; column < used; ++column) {
    int best = -1;
    for (int r = 0; r < used; ++r)
      if (!pivoted[r] && (best < 0 || std::abs(a[r][column]) > std::abs(a[best][column])))
        best = r;
    if (best < 0 || std::abs(a[best][column]) <= 1e-12 * largest)
      continue;
    pivoted[best] = true;
    pivot_row[column] = best;
    for (int r = 0; r < used; ++r) {
      if (r == best)
        continue;
      double const factor = a[r][column] / a[best][column];
      for (int l = column; l <= used; ++l)
        a[r][l] -= factor * a[best][l];
    }
  }
  for (int column = 0; column < used; ++column)
    if (pivot_row[column] >= 0)
      solution[column] = a[pivot_row[column]][used] / a[pivot_row[column]][column] / scale[column];
  return solution;
}

} // namespace

std::int64_t regtt_top_positions(int arity, int depth) {
  return complete_positions(arity, depth, std::numeric_limits<std::int64_t>::max() / 16);
}

int regtt_key_words(int arity, int depth) {
  return static_cast<int>((regtt_top_positions(arity, depth) + 63) / 64);
}

int regtt_max_depth(int arity) {
  int depth = 0;
  while (complete_positions(arity, depth + 2, max_positions) <= max_positions)
    ++depth;
  return depth;
}

int regtt_model_max_depth(int arity, std::int64_t tree_nodes) {
  int depth = 1;
  while (depth < regtt_max_depth(arity) &&
         complete_positions(arity, depth + 1, max_model_key_bits) <= max_model_key_bits &&
         complete_positions(arity, depth + 1, max_positions) <=
             std::max<std::int64_t>(tree_nodes, 1))
    ++depth;
  return depth;
}

RegttDepthModel::RegttDepthModel(int arity, std::int64_t tree_nodes,
                                 std::vector<RegttProbe> const& probes)
    : arity_(arity), tree_nodes_(tree_nodes), bft_(3, 0.0), sort_(2, 0.0), dft_(3, 0.0) {
  if (probes.empty())
    return;
  int const m = static_cast<int>(probes.size());
  std::vector<std::vector<double>> bft_rows, sort_rows, dft_rows;
  std::vector<double> bft_y, sort_y, dft_y;
  for (auto const& probe : probes) {
    double const d = probe.depth, top = top_nodes(probe.depth), rest = rest_nodes(probe.depth);
    // Columns: the per-node cost's c, b, a (lowest order first, so that fewer
    // probes drop the highest orders).
    bft_rows.push_back({top, top * d, top * d * d});
    dft_rows.push_back({rest, rest * d, rest * d * d});
    sort_rows.push_back({top, 1.0});
    bft_y.push_back(probe.bft);
    dft_y.push_back(probe.dft);
    sort_y.push_back(probe.sort);
  }
  auto const bft = least_squares(bft_rows, bft_y, 3, std::min(3, m));
  auto const dft = least_squares(dft_rows, dft_y, 3, std::min(3, m));
  sort_ = least_squares(sort_rows, sort_y, 2, std::min(2, m));
  // Stored as a, b, c.
  bft_ = {bft[2], bft[1], bft[0]};
  dft_ = {dft[2], dft[1], dft[0]};
}

double RegttDepthModel::top_nodes(int depth) const {
  return static_cast<double>(regtt_top_positions(arity_, depth));
}

double RegttDepthModel::rest_nodes(int depth) const {
  return std::max(0.0, static_cast<double>(tree_nodes_) - top_nodes(depth));
}

double RegttDepthModel::predict(int depth) const {
  double const d = depth;
  auto quadratic = [&](std::vector<double> const& c) { return (c[0] * d + c[1]) * d + c[2]; };
  double const bft = std::max(0.0, top_nodes(depth) * quadratic(bft_));
  double const sort = std::max(0.0, sort_[0] * top_nodes(depth) + sort_[1]);
  double const dft = std::max(0.0, rest_nodes(depth) * quadratic(dft_));
  return bft + sort + dft;
}

int RegttDepthModel::best_depth(int lo, int hi) const {
  int best = lo;
  for (int depth = lo + 1; depth <= hi; ++depth)
    if (predict(depth) < predict(best))
      best = depth;
  return best;
}

std::vector<int> regtt_probe_depths(int max_depth, int count) {
  std::vector<int> depths;
  if (max_depth < 1)
    return depths;
  if (max_depth <= count) {
    for (int d = 1; d <= max_depth; ++d)
      depths.push_back(d);
    return depths;
  }
  for (int i = 0; i < count; ++i) {
    int const d = 1 + static_cast<int>(std::lround(double(i) * (max_depth - 1) / (count - 1)));
    if (depths.empty() || d != depths.back())
      depths.push_back(d);
  }
  return depths;
}

char const* to_string(RegttMode mode) {
  return mode == RegttMode::lockstep ? "lockstep" : "nonlockstep";
}

RegttMode parse_regtt_mode(std::string const& name) {
  if (name == "lockstep")
    return RegttMode::lockstep;
  if (name == "nonlockstep")
    return RegttMode::nonlockstep;
  throw InputError("regtt_mode", ": unknown mode '" + name + "' (known: lockstep, nonlockstep)");
}

} // namespace treetrav

namespace treetrav::detail {

template <class ExecutionSpace>
void RegttSorter<ExecutionSpace>::sort(ExecutionSpace const& space,
                                       RegttKeys<memory_space> const& keys, Index items,
                                       std::int64_t bits,
                                       Kokkos::View<Index*, memory_space> const& sorted) {
  int const words = static_cast<int>(keys.extent(1));
  RegttKeyLess const less{keys.data(), keys.stride(1), words};
  Kokkos::parallel_for("treetrav::regtt::iota", Kokkos::RangePolicy<ExecutionSpace>(space, 0, items),
                       RegttIota<memory_space>{sorted});
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
#if defined(KOKKOS_ENABLE_CUDA)
    if (words <= radix_word_limit)
      radix_passes(space, keys, items, bits, sorted);
    else
      thrust::stable_sort(thrust::cuda::par.on(space.cuda_stream()), sorted.data(),
                          sorted.data() + items, less);
    check_cuda(cudaGetLastError(), "treetrav::regtt sort");
#endif
  } else {
    static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible,
                  "REGTT sorts on host spaces with std::stable_sort");
    (void)bits;
    space.fence();
    std::stable_sort(sorted.data(), sorted.data() + items, less);
  }
}

template <class ExecutionSpace>
void RegttSorter<ExecutionSpace>::radix_passes(ExecutionSpace const& space,
                                               RegttKeys<memory_space> const& keys, Index items,
                                               std::int64_t bits,
                                               Kokkos::View<Index*, memory_space> const& sorted) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (is_cuda_space_v<ExecutionSpace>) {
    int const words = static_cast<int>(keys.extent(1));
    grow(space, items);
    Kokkos::View<Index*, memory_space> in = sorted, out = order_buffer_;
    for (int word = words - 1; word >= 0; --word) {
      RegttWord const* word_keys = keys.data() + word * keys.stride(1);
      if (words > 1) {
        // The keys of this pass in the current order.
        Kokkos::parallel_for("treetrav::regtt::gather_word",
                             Kokkos::RangePolicy<ExecutionSpace>(space, 0, items),
                             RegttGatherWord<memory_space>{keys, in, key_in_, word});
        word_keys = key_in_.data();
      }
      // The last word holds bits - 64 (words - 1) bits, at its top.
      int const begin_bit = word == words - 1 ? static_cast<int>(64 * words - bits) : 0;
      auto const radix = [&](void* storage, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(storage, bytes, word_keys, key_out_.data(),
                                               in.data(), out.data(), items, begin_bit, 64,
                                               space.cuda_stream());
      };
      std::size_t bytes = 0;
      check_cuda(radix(nullptr, bytes), "treetrav::regtt radix sort size");
      if (bytes > storage_.extent(0))
        storage_ = Kokkos::View<unsigned char*, memory_space>(
            Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                               "treetrav::RegttSorter::storage"),
            bytes);
      check_cuda(radix(storage_.data(), bytes), "treetrav::regtt radix sort");
      std::swap(in, out);
    }
    if (in.data() != sorted.data())
      Kokkos::deep_copy(space, Kokkos::subview(sorted, std::make_pair(0, items)),
                        Kokkos::subview(in, std::make_pair(0, items)));
    return;
  }
#endif
  (void)space, (void)keys, (void)items, (void)bits, (void)sorted;
  throw std::logic_error("REGTT's radix passes run on CUDA only");
}

template <class ExecutionSpace>
void RegttSorter<ExecutionSpace>::grow(ExecutionSpace const& space, Index items) {
  if (key_out_.extent(0) >= static_cast<std::size_t>(items))
    return;
  auto alloc = [&](char const* label) {
    return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label));
  };
  key_in_ = Kokkos::View<RegttWord*, memory_space>(alloc("treetrav::RegttSorter::key_in"), items);
  key_out_ = Kokkos::View<RegttWord*, memory_space>(alloc("treetrav::RegttSorter::key_out"), items);
  order_buffer_ = Kokkos::View<Index*, memory_space>(alloc("treetrav::RegttSorter::order"), items);
}

#ifdef KOKKOS_ENABLE_SERIAL
template class RegttSorter<Kokkos::Serial>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
template class RegttSorter<Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
template class RegttSorter<Kokkos::Cuda>;
#endif

} // namespace treetrav::detail
