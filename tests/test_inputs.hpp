#pragma once

// Shared inputs and strategy lists for the traversal tests.
#include "oracles.hpp"
#include "strategies/reversed.hpp"

#include <treetrav/generators/generators.hpp>
#include <treetrav/traversal/strategies.hpp>

#include <string>
#include <vector>

namespace treetrav::test {

// Every strategy the space can run (the recursive reference is host-only).
// Host backends emulate lockstep warps of 32 lanes and of an odd 5 lanes.
// REGTT runs plain (depth 0), with one-word keys, with keys of a few words
// (radix passes on CUDA) and of over 16 (a comparison sort on CUDA), without
// reordering, with order bits, and at the automatic depth (binary trees);
// lockstep and not. Its depths depend
// on the tree's arity (an octree's top tree widens eight-fold per level).
template <class Space, int Arity = 2, class F>
void for_each_strategy(F&& f) {
  f(Autoropes{});
  f(Reversed{}); // the tests' own strategy (strategies/reversed.hpp)
  f(Lockstep{});
  f(FsmLockstep{});
  f(Hybrid{});
  f(Hybrid{2});
  constexpr bool binary = Arity == 2;
  f(Regtt{0, RegttMode::lockstep});
  f(Regtt{binary ? 3 : 1, RegttMode::nonlockstep});
  f(Regtt{binary ? 5 : 2, RegttMode::lockstep});
  f(Regtt{binary ? 7 : 3, RegttMode::nonlockstep});
  f(Regtt{binary ? 11 : 5, RegttMode::lockstep});
  f(Regtt{binary ? 4 : 2, RegttMode::lockstep, 32, false});
  f(Regtt{binary ? 5 : 2, RegttMode::nonlockstep, 32, true, 0, nullptr, true});
  // The automatic depth's probes on octrees cost more than the host tests
  // should (test_regtt covers them).
  if constexpr (binary) f(Regtt{Regtt::automatic, RegttMode::nonlockstep});
  if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
    f(Recursive{});
    f(Lockstep{5});
    f(FsmLockstep{5});
    f(Hybrid{3, 5});
    f(Regtt{binary ? 6 : 3, RegttMode::lockstep, 5});
  }
}

template <class Strategy>
std::string strategy_name(Strategy const& strategy) {
  if constexpr (std::is_same_v<Strategy, Regtt>)
    return std::string("regtt-") + to_string(strategy.mode) + "-d" +
           (strategy.depth == Regtt::automatic ? std::string("auto") : std::to_string(strategy.depth)) + "-w" +
           std::to_string(strategy.warp_size) + (strategy.reorder ? "" : "-unsorted") +
           (strategy.order_bits ? "-order-bits" : "");
  else if constexpr (std::is_same_v<Strategy, Hybrid>)
    return "hybrid-d" + std::to_string(strategy.depth) + "-w" + std::to_string(strategy.warp_size);
  else if constexpr (Strategy::warp_based)
    return std::string(Strategy::name) + "-w" + std::to_string(strategy.warp_size);
  else return Strategy::name;
}

struct SearchCase {
  std::string name;
  HostPoints reference;
  HostPoints queries;
  int leaf_size;
  Coordinate radius;  // a PC radius that catches a handful of neighbours
};

inline HostPoints first_points(HostPoints const& points, Index n) {
  HostPoints out = allocate_points<Kokkos::HostSpace>("test::first", n, points.dimension());
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < points.dimension(); ++k) out.coordinates(i, k) = points.coordinates(i, k);
  return out;
}

// Each point `copies` times (exact ties for the index tie-break).
inline HostPoints repeated(HostPoints const& points, int copies) {
  HostPoints out = allocate_points<Kokkos::HostSpace>("test::repeated", points.size() * copies, points.dimension());
  for (Index i = 0; i < out.size(); ++i)
    for (int k = 0; k < points.dimension(); ++k) out.coordinates(i, k) = points.coordinates(i % points.size(), k);
  return out;
}

inline HostPoints plummer_positions(Index n, std::uint64_t seed) {
  auto snapshot = generators::plummer(Kokkos::DefaultHostExecutionSpace{}, n, seed);
  HostPoints out = allocate_points<Kokkos::HostSpace>("test::plummer", n, 3);
  for (Index i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) out.coordinates(i, k) = static_cast<Coordinate>(snapshot.coordinates(i, k));
  return out;
}

// The case a search runs on: `c` itself, or for self searches (the reference
// points are the queries, each skipping its own point) `limit` of its points
// spread over the set (same shape, a shallower tree): a self search walks from
// every reference point, five times the queries of the larger cases.
inline SearchCase searched_case(SearchCase const& c, bool self, Index limit = 400) {
  if (!self)
    return c;
  SearchCase s = c;
  Index const n = c.reference.size();
  if (n > limit) {
    s.reference = allocate_points<Kokkos::HostSpace>("test::self", limit, c.reference.dimension());
    for (Index i = 0; i < limit; ++i)
      for (int k = 0; k < c.reference.dimension(); ++k)
        s.reference.coordinates(i, k) = c.reference.coordinates(std::int64_t(i) * n / limit, k);
    s.name += "-every" + std::to_string(n / limit);
  }
  s.queries = s.reference;
  return s;
}

// Uniform, clustered and Plummer inputs at several sizes, including one point,
// exactly one leaf, leaf-size boundaries, duplicates and identical points.
// Made afresh per call: Views must not outlive Kokkos::finalize.
inline std::vector<SearchCase> search_cases() {
  Kokkos::DefaultHostExecutionSpace host;
  std::vector<SearchCase> c;
    auto uniform3 = generators::uniform(host, 1200, 3, 11);
    auto queries3 = generators::uniform(host, 300, 3, 12);
    c.push_back({"uniform3-1200", uniform3, queries3, 8, 0.06f});
    c.push_back({"rand-dim7-1500", generators::uniform(host, 1500, 7, 13), generators::uniform(host, 300, 7, 14), 16,
                 0.35f});
    c.push_back({"clustered7-1500", generators::clustered(host, 1500, 7, 12, 0.05, 15),
                 generators::clustered(host, 300, 7, 12, 0.05, 15), 8, 0.05f});
    c.push_back({"clustered2-1500", generators::clustered(host, 1500, 2, 30, 0.02, 16),
                 generators::uniform(host, 300, 2, 17), 4, 0.01f});
    c.push_back({"plummer-1000", plummer_positions(1000, 18), plummer_positions(200, 19), 8, 0.1f});
    // Four coordinates: the first dimension past a 4-float row's three.
    c.push_back({"uniform4-600", generators::uniform(host, 600, 4, 20), generators::uniform(host, 150, 4, 21), 8,
                 0.15f});
    c.push_back({"one-point", first_points(uniform3, 1), queries3, 8, 0.5f});
    for (Index n : {8, 9, 16, 17})
      c.push_back({"uniform3-" + std::to_string(n) + "-leaf8", first_points(uniform3, n), queries3, 8, 0.3f});
    c.push_back({"duplicates-3x200", repeated(first_points(uniform3, 200), 3), queries3, 8, 0.1f});
    c.push_back({"identical-64", repeated(first_points(uniform3, 1), 64), queries3, 8, 0.5f});
    return c;
}

}  // namespace treetrav::test
