#pragma once

// Accuracy as the yardstick of approximate gravity: exact accelerations by
// direct summation in double over all bodies, for a random sample of them, on
// the execution space (the GPU in a GPU run), and the distribution of the
// relative errors |a - a_exact| / |a_exact| over the sample.
#include <treetrav/core/error.hpp>
#include <treetrav/core/math.hpp>
#include <treetrav/core/point_set.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace treetrav {

struct ForceErrors {
  std::vector<Index> sample;     // bodies (caller order), ascending
  std::vector<double> exact;     // (sample, 3) row-major: direct summation in double
  std::vector<double> relative;  // per sampled body
  // Nearest-rank percentiles of `relative`: the smallest value with at least
  // p% of the sample at or below it.
  double median = 0, p99 = 0, max = 0;
  double mean = 0, rms = 0;
};

// min(n, size) distinct bodies of [0, n), drawn with `seed` (all when n <= size).
inline std::vector<Index> sample_bodies(Index n, Index size, std::uint64_t seed) {
  std::vector<Index> all(n);
  std::iota(all.begin(), all.end(), Index(0));
  if (size >= n) return all;
  std::mt19937_64 random(seed);
  for (Index i = 0; i < size; ++i) {  // a partial Fisher-Yates shuffle
    std::uniform_int_distribution<Index> pick(i, n - 1);
    std::swap(all[i], all[pick(random)]);
  }
  all.resize(size);
  std::sort(all.begin(), all.end());
  return all;
}

namespace detail {

// One team per sampled body: the team's threads take every team_size-th
// source, then the partial sums are added in thread order (fixed).
template <class MemorySpace>
struct DirectAccelerations {
  Kokkos::View<Coordinate**, Kokkos::LayoutLeft, MemorySpace> x;
  Kokkos::View<Coordinate const*, MemorySpace> mass;
  Kokkos::View<Index const*, MemorySpace> sample;
  Kokkos::View<double* [3], MemorySpace> exact;
  double softening2, gravity;

  template <class Member>
  KOKKOS_FUNCTION void operator()(Member const& team) const {
    Index const i = sample(team.league_rank());
    double const xi[3] = {x(i, 0), x(i, 1), x(i, 2)};
    double partial[3] = {0, 0, 0};
    Index const n = static_cast<Index>(x.extent(0));
    for (Index j = team.team_rank(); j < n; j += team.team_size()) {
      if (j == i) continue;
      double const dx[3] = {x(j, 0) - xi[0], x(j, 1) - xi[1], x(j, 2) - xi[2]};
      double const r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + softening2;
      double const factor = gravity * mass(j) / (r2 * math::sqrt(r2));
      for (int k = 0; k < 3; ++k) partial[k] += factor * dx[k];
    }
    auto* const sums = static_cast<double*>(team.team_scratch(0).get_shmem(sizeof(double) * 3 * team.team_size()));
    for (int k = 0; k < 3; ++k) sums[3 * team.team_rank() + k] = partial[k];
    team.team_barrier();
    if (team.team_rank() != 0) return;
    for (int k = 0; k < 3; ++k) {
      double sum = 0;
      for (int t = 0; t < team.team_size(); ++t) sum += sums[3 * t + k];
      exact(team.league_rank(), k) = sum;
    }
  }
};

// Nearest-rank percentile p (0 < p <= 100) of ascending `sorted`.
inline double percentile(std::vector<double> const& sorted, double p) {
  auto const rank = static_cast<std::size_t>(std::ceil(p / 100 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace detail

// Exact accelerations (sample, 3) of `sample` (bodies of `bodies`, the
// caller's order) by Plummer-softened direct summation in double over every
// body of `bodies` with `masses`, on `space`.
template <class ExecutionSpace, class MemorySpace>
std::vector<double> direct_accelerations(ExecutionSpace const& space, PointSet<MemorySpace> const& bodies,
                                         Kokkos::View<Coordinate const*, MemorySpace> masses,
                                         std::vector<Index> const& sample, double softening, double gravity) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value, "first argument: a Kokkos execution space");
  if (bodies.dimension() != 3 || masses.extent(0) != std::size_t(bodies.size()))
    throw InputError("direct summation: 3-D bodies and one mass each");
  Index const m = static_cast<Index>(sample.size());
  if (m == 0) return {};
  Kokkos::View<Index*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> const host_sample(
      const_cast<Index*>(sample.data()), sample.size());
  auto const device_sample = Kokkos::create_mirror_view_and_copy(space, host_sample);
  Kokkos::View<double* [3], MemorySpace> exact(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::ForceErrors::exact"), m);
  int const team_size = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible ? 1 : 256;
  Kokkos::TeamPolicy<ExecutionSpace> policy(space, m, team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(sizeof(double) * 3 * team_size));
  Kokkos::parallel_for("treetrav::ForceErrors::direct_sum", policy,
                       detail::DirectAccelerations<MemorySpace>{bodies.coordinates, masses, device_sample, exact,
                                                                softening * softening, gravity});
  auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, exact);
  std::vector<double> out(std::size_t(m) * 3);
  for (Index s = 0; s < m; ++s)
    for (int k = 0; k < 3; ++k) out[std::size_t(s) * 3 + k] = host(s, k);
  return out;
}

// The relative errors of `approximate(body, k)` (a host view or matrix,
// caller order) on `sample` against `exact` (sample, 3), and their statistics.
template <class Approximate>
ForceErrors force_errors(Approximate const& approximate, std::vector<Index> const& sample,
                         std::vector<double> const& exact) {
  ForceErrors errors;
  errors.sample = sample;
  errors.exact = exact;
  for (std::size_t s = 0; s < sample.size(); ++s) {
    double diff = 0, norm = 0;
    for (int k = 0; k < 3; ++k) {
      double const e = exact[s * 3 + k];
      diff += (double(approximate(sample[s], k)) - e) * (double(approximate(sample[s], k)) - e);
      norm += e * e;
    }
    // A body the others pull to exactly nothing (alone, or at the centre of symmetry).
    errors.relative.push_back(norm > 0 ? std::sqrt(diff / norm) : (diff > 0 ? INFINITY : 0.0));
  }
  if (errors.relative.empty()) return errors;
  std::vector<double> sorted = errors.relative;
  std::sort(sorted.begin(), sorted.end());
  errors.median = detail::percentile(sorted, 50);
  errors.p99 = detail::percentile(sorted, 99);
  errors.max = sorted.back();
  double sum = 0, sum2 = 0;
  for (double r : sorted) sum += r, sum2 += r * r;
  errors.mean = sum / double(sorted.size());
  errors.rms = std::sqrt(sum2 / double(sorted.size()));
  return errors;
}

}  // namespace treetrav
