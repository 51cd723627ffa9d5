#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

namespace treetrav {

// Coordinates are float and indices 32-bit throughout the engine (the papers'
// kernels and the GPU's memory bandwidth both favour the narrow types).
using Coordinate = float;
using Index = std::int32_t;
using ParticleId = std::int64_t;

// Point sets may have any dimension in [1, max_dimension], chosen at run time
// (brute-force search takes them all); trees take up to max_tree_dimension
// (their packed rows, trees/packed_points.hpp): beyond a dozen dimensions
// every tree visits nearly all its leaves anyway.
inline constexpr int max_dimension = 4096;
inline constexpr int max_tree_dimension = 16;

inline constexpr Coordinate infinity = std::numeric_limits<Coordinate>::infinity();

// Builders never make a tree deeper than this, so traversal stacks have a
// fixed size in registers / local memory.
inline constexpr int max_tree_depth = 64;

}  // namespace treetrav

// The backends a build offers: Kokkos' execution spaces, but the serial one
// only where no threaded host space stands beside the GPU. A CUDA build's host
// backend is OpenMP (on one thread it walks as Serial does); compiling every
// search and application once more for Serial cost a third of that build's
// host code. Host-only builds keep Serial, the tests' bit-for-bit reference.
#if defined(KOKKOS_ENABLE_SERIAL) && !(defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOS_ENABLE_OPENMP))
#define TREETRAV_ENABLE_SERIAL
#endif

// The qualifier of a reduction or scan functor's join() parameters: Kokkos
// before 3.7 calls join() with volatile references only, Kokkos 4 refuses a
// join() that takes them. Write join(TREETRAV_JOIN_ARGUMENT value_type& a,
// TREETRAV_JOIN_ARGUMENT value_type const& b) and const_cast the qualifier away
// (nothing else touches the values meanwhile).
#if KOKKOS_VERSION >= 30700
#define TREETRAV_JOIN_ARGUMENT
#else
#define TREETRAV_JOIN_ARGUMENT volatile
#endif
