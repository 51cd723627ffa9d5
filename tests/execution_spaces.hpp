#pragma once

// Tests are written once and instantiated for every enabled backend (the
// TEST_EXECSPACE idea of Kokkos' own suite, via GoogleTest typed tests):
//   TYPED_TEST_SUITE(MySuite, treetrav::test::ExecutionSpaces);
#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

namespace treetrav::test {

template <class... A, class... B>
::testing::Types<A..., B...> concat(::testing::Types<A...>, ::testing::Types<B...>);

#ifdef KOKKOS_ENABLE_SERIAL
using SerialSpaces = ::testing::Types<Kokkos::Serial>;
#else
using SerialSpaces = ::testing::Types<>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
using OpenMPSpaces = ::testing::Types<Kokkos::OpenMP>;
#else
using OpenMPSpaces = ::testing::Types<>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
using CudaSpaces = ::testing::Types<Kokkos::Cuda>;
#else
using CudaSpaces = ::testing::Types<>;
#endif

using HostExecutionSpaces = decltype(concat(SerialSpaces{}, OpenMPSpaces{}));
using ExecutionSpaces = decltype(concat(HostExecutionSpaces{}, CudaSpaces{}));

// Names typed-test instances by backend ("Serial", "OpenMP", "Cuda").
struct SpaceName {
  template <class Space>
  static std::string GetName(int) {
    return Space::name();
  }
};

}  // namespace treetrav::test
