#pragma once

// Tests are written once and instantiated for every enabled backend (the
// TEST_EXECSPACE idea of Kokkos' own suite, via GoogleTest typed tests):
//   TYPED_TEST_SUITE(MySuite, treetrav::test::ExecutionSpaces);
#include <treetrav/core/config.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

namespace treetrav::test {

// GoogleTest's Types<> cannot be empty: assemble a plain list first.
template <class... Ts>
struct TypeList {};
template <class... A, class... B>
TypeList<A..., B...> concat(TypeList<A...>, TypeList<B...>);
template <class... Ts>
::testing::Types<Ts...> to_gtest_types(TypeList<Ts...>);

#ifdef TREETRAV_ENABLE_SERIAL
using SerialSpaces = TypeList<Kokkos::Serial>;
#else
using SerialSpaces = TypeList<>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
using OpenMPSpaces = TypeList<Kokkos::OpenMP>;
#else
using OpenMPSpaces = TypeList<>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
using CudaSpaces = TypeList<Kokkos::Cuda>;
#else
using CudaSpaces = TypeList<>;
#endif

using HostSpaceList = decltype(concat(SerialSpaces{}, OpenMPSpaces{}));
using HostExecutionSpaces = decltype(to_gtest_types(HostSpaceList{}));
using ExecutionSpaces = decltype(to_gtest_types(concat(HostSpaceList{}, CudaSpaces{})));

// Names typed-test instances by backend ("Serial", "OpenMP", "Cuda").
struct SpaceName {
  template <class Space>
  static std::string GetName(int) {
    return Space::name();
  }
};

}  // namespace treetrav::test
