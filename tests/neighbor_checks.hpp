#pragma once

// The one check of neighbour results against the brute-force oracle.
#include "oracles.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <string>

namespace treetrav::test {

// Every result row must equal brute force exactly: same indices, same distances.
template <class Results>
inline void expect_equal_to_brute_force(Results const& results, BruteNeighbors const& expected,
                                        std::string const& what) {
  auto indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.indices);
  auto distances = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.distances);
  ASSERT_EQ(indices.extent(1), std::size_t(expected.k)) << what;
  int mismatches = 0;
  for (std::size_t q = 0; q < indices.extent(0); ++q)
    for (int j = 0; j < expected.k; ++j) {
      bool const same = indices(q, j) == expected.indices[q * expected.k + j] &&
                        distances(q, j) == expected.distances[q * expected.k + j];
      if (!same && ++mismatches <= 3)
        ADD_FAILURE() << what << ": query " << q << " neighbour " << j << ": got (" << indices(q, j)
                      << ", " << distances(q, j) << "), brute force ("
                      << expected.indices[q * expected.k + j] << ", "
                      << expected.distances[q * expected.k + j] << ")";
    }
  EXPECT_EQ(mismatches, 0) << what;
}

} // namespace treetrav::test
