#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Kokkos 3.4 prints its OMP_PROC_BIND advice to stdout, where CTest's test
  // discovery (--gtest_list_tests) read each line as a test name. Threads
  // unbound is what tests want anyway; a value set by the caller stays.
  setenv("OMP_PROC_BIND", "false", /*overwrite=*/0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
