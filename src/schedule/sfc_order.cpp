#include <treetrav/schedule/sfc_order.hpp>

namespace treetrav {

#ifdef TREETRAV_ENABLE_SERIAL
TREETRAV_MORTON_ORDER_ON(, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
TREETRAV_MORTON_ORDER_ON(, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
TREETRAV_MORTON_ORDER_ON(, Kokkos::Cuda)
#endif

} // namespace treetrav
