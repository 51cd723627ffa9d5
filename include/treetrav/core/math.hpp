#pragma once

#include <Kokkos_Core.hpp>

namespace treetrav::math {

// Kokkos moved its math functions out of Experimental in 3.7.
#if KOKKOS_VERSION >= 30700
using Kokkos::sqrt;
#else
using Kokkos::Experimental::sqrt;
#endif

}  // namespace treetrav::math
