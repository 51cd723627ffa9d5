# Finds treetrav's dependencies the standard way. Kokkos comes from
# -DKokkos_ROOT=... (a user's own >= 3.4) or from scripts/bootstrap-kokkos.sh;
# Kokkos Kernels from -DKokkosKernels_ROOT=... (one built against that Kokkos),
# else from Kokkos's own prefix, else from the cache of
# scripts/bootstrap-kokkos-kernels.sh beside the cached Kokkos.
find_package(Kokkos 3.4 REQUIRED)
get_filename_component(_treetrav_kokkos_prefix "${Kokkos_DIR}/../../.." ABSOLUTE)
get_filename_component(_treetrav_kokkos_name "${_treetrav_kokkos_prefix}" NAME)
get_filename_component(_treetrav_kokkos_parent "${_treetrav_kokkos_prefix}" DIRECTORY)
file(GLOB _treetrav_kernels_prefixes "${_treetrav_kokkos_parent}/kokkos-kernels-*-on-${_treetrav_kokkos_name}")
find_package(KokkosKernels REQUIRED
  HINTS "${_treetrav_kokkos_prefix}" ${_treetrav_kernels_prefixes})
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
if(TREETRAV_ENABLE_MPI)
  # Debian's OpenMPI (openmpi-bin, libopenmpi-dev) or any MPI-3 implementation.
  find_package(MPI 3 REQUIRED COMPONENTS CXX)
endif()

message(STATUS "treetrav: Kokkos ${Kokkos_VERSION}, devices: ${Kokkos_DEVICES}; Kokkos Kernels ${KokkosKernels_VERSION} (${KokkosKernels_DIR})")
if(Kokkos_ENABLE_CUDA)
  # Thrust ships with the CUDA Toolkit (CCCL); the GPU paths use it for sorts.
  find_package(CUDAToolkit REQUIRED)
endif()
