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
# HDF5 of the build's flavour: parallel (MPI-IO: the ranks of a distributed
# run write one snapshot together) with MPI, else serial. Debian installs both
# side by side (libhdf5-openmpi-dev: h5pcc, libhdf5-dev: h5cc); a build
# directory that changes flavour forgets the other one's cached wrapper,
# headers and libraries, so that they all come from one flavour.
set(HDF5_PREFER_PARALLEL ${TREETRAV_ENABLE_MPI})
# (The first configure keeps the HDF5_* the user gave: HDF5_ROOT, a wrapper.)
if(DEFINED TREETRAV_HDF5_PARALLEL AND NOT "${TREETRAV_HDF5_PARALLEL}" STREQUAL "${TREETRAV_ENABLE_MPI}")
  get_cmake_property(_treetrav_cached CACHE_VARIABLES)
  foreach(_treetrav_variable IN LISTS _treetrav_cached)
    if(_treetrav_variable MATCHES "^HDF5_")
      unset(${_treetrav_variable} CACHE)
    endif()
  endforeach()
endif()
set(TREETRAV_HDF5_PARALLEL ${TREETRAV_ENABLE_MPI} CACHE INTERNAL "The HDF5 flavour cached: parallel or not")
find_package(HDF5 REQUIRED COMPONENTS C)
if(TREETRAV_ENABLE_MPI AND NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "TREETRAV_ENABLE_MPI needs parallel HDF5 (MPI-IO), found a serial one "
                      "(${HDF5_INCLUDE_DIRS}): install Debian's libhdf5-openmpi-dev "
                      "(scripts/setup-apt.sh) or set HDF5_ROOT to a parallel build")
endif()
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
if(TREETRAV_ENABLE_MPI)
  # Debian's OpenMPI (openmpi-bin, libopenmpi-dev) or any MPI-3 implementation; the C
  # bindings only (MPI-3 dropped the C++ ones), so a binary runs on any ABI-compatible
  # libmpi (Open MPI 4.1 and 5 alike).
  find_package(MPI 3 REQUIRED COMPONENTS C)
endif()

message(STATUS "treetrav: Kokkos ${Kokkos_VERSION}, devices: ${Kokkos_DEVICES}; Kokkos Kernels ${KokkosKernels_VERSION} (${KokkosKernels_DIR})")
if(Kokkos_ENABLE_CUDA)
  # Thrust ships with the CUDA Toolkit (CCCL); the GPU paths use it for sorts.
  find_package(CUDAToolkit REQUIRED)
endif()
