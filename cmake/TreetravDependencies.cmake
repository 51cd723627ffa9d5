# Finds treetrav's dependencies the standard way. Kokkos comes from
# -DKokkos_ROOT=... (a user's own >= 3.4) or from scripts/bootstrap-kokkos.sh.
find_package(Kokkos 3.4 REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
if(TREETRAV_ENABLE_MPI)
  # Debian's OpenMPI (openmpi-bin, libopenmpi-dev) or any MPI-3 implementation.
  find_package(MPI 3 REQUIRED COMPONENTS CXX)
endif()

message(STATUS "treetrav: Kokkos ${Kokkos_VERSION}, devices: ${Kokkos_DEVICES}")
if(Kokkos_ENABLE_CUDA)
  # Thrust ships with the CUDA Toolkit (CCCL); the GPU paths use it for sorts.
  find_package(CUDAToolkit REQUIRED)
endif()
