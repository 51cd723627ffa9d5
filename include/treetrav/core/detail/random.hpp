#pragma once
// Counter-based random streams for the deterministic generators (points,
// bodies, trees, treefix weights): every point or vertex owns a stream keyed
// by (seed, purpose, index), so the output is a pure function of the arguments,
// identical for any host space and thread count.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace treetrav::detail {

inline constexpr double pi = 3.14159265358979323846;

template <class ExecutionSpace>
constexpr void require_host_space() {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "treetrav generators fill host memory: pass a host execution space");
}

// The SplitMix64 output function: a bijective 64-bit mixer with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Separates the streams of different draws made from one seed. The point
// generators' purposes are named here (clump: a sphere of the clustered box's
// hierarchy); the tree generators take 16-19 (treefix/generators.hpp), the
// ill-conditioned weights 20 (treefix/accuracy.hpp).
enum class Purpose : std::uint64_t { point = 1, cluster = 2, body = 3, clump = 4 };

// Draw k of stream (seed, purpose, index) is mix64(key + (k + 1) * gamma): a
// SplitMix64 sequence started at a key hashed from the triple, so any point's
// numbers can be computed without the others'.
class RandomStream {
 public:
  RandomStream(std::uint64_t seed, Purpose purpose, std::uint64_t index)
      : state_(mix64(mix64(seed ^ mix64(static_cast<std::uint64_t>(purpose))) + index)) {}

  std::uint64_t next_bits() { return mix64(state_ += gamma); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_bits() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1): safe to take the logarithm of.
  double uniform_open() { return (static_cast<double>(next_bits() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform in [0, 1) with 24 random bits: a float that never rounds up to 1.
  float uniform_float() { return static_cast<float>(next_bits() >> 40) * 0x1.0p-24f; }
  // Standard normal by Box-Muller; the second variate of each pair is kept for the next call.
  double normal() {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return spare_normal_;
    }
    double const radius = std::sqrt(-2.0 * std::log(uniform_open()));
    double const angle = 2.0 * pi * uniform();
    spare_normal_ = radius * std::sin(angle);
    has_spare_normal_ = true;
    return radius * std::cos(angle);
  }

 private:
  static constexpr std::uint64_t gamma = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio
  std::uint64_t state_;
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace treetrav::detail
