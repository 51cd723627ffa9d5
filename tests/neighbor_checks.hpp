#pragma once

// The one check of neighbour results against the brute-force oracle.
#include "oracles.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <string>

namespace treetrav::test {

// Every result row must equal brute force exactly: same indices, same
// distances. Row q of `results` is row first_row + q of `expected` (a rank's
// block of the queries).
template <class Results>
inline void expect_equal_to_brute_force(Results const& results, BruteNeighbors const& expected,
                                        std::string const& what, std::size_t first_row = 0) {
  auto indices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.indices);
  auto distances = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, results.distances);
  ASSERT_EQ(indices.extent(1), std::size_t(expected.k)) << what;
  int mismatches = 0;
  for (std::size_t q = 0; q < indices.extent(0); ++q)
    for (int j = 0; j < expected.k; ++j) {
      std::size_t const at = (first_row + q) * expected.k + j;
      bool const same =
          indices(q, j) == expected.indices[at] && distances(q, j) == expected.distances[at];
      if (!same && ++mismatches <= 3)
        ADD_FAILURE() << what << ": query " << first_row + q << " neighbour " << j << ": got ("
                      << indices(q, j) << ", " << distances(q, j) << "), brute force ("
                      << expected.indices[at] << ", " << expected.distances[at] << ")";
    }
  EXPECT_EQ(mismatches, 0) << what;
}

} // namespace treetrav::test
