# `pip install .` (scikit-build-core, SKBUILD set): the Kokkos and Kokkos
# Kernels that scripts/build.sh uses, from the same cache
# (scripts/bootstrap-kokkos*.sh build them once), unless the user gives
# Kokkos_ROOT. TREETRAV_CUDA=ON builds the CUDA configuration: the CUDA
# bootstrap's nvcc_wrapper compiles everything. Included before project():
# the compiler is chosen here.
option(TREETRAV_CUDA "pip install: the CUDA (+ OpenMP) configuration" OFF)
set(TREETRAV_CUDA_ARCH "HOPPER90" CACHE STRING "pip install with TREETRAV_CUDA: the Kokkos arch")
if(NOT Kokkos_ROOT)
  if(TREETRAV_CUDA)
    set(_treetrav_config cuda)
  else()
    set(_treetrav_config cpu)
  endif()
  foreach(_treetrav_script IN ITEMS bootstrap-kokkos bootstrap-kokkos-kernels)
    execute_process(
      COMMAND "${CMAKE_CURRENT_LIST_DIR}/../scripts/${_treetrav_script}.sh" ${_treetrav_config} ${TREETRAV_CUDA_ARCH}
      OUTPUT_VARIABLE _treetrav_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _treetrav_result)
    if(NOT _treetrav_result EQUAL 0)
      message(FATAL_ERROR "scripts/${_treetrav_script}.sh ${_treetrav_config} failed (${_treetrav_result})")
    endif()
    string(REGEX REPLACE ".*\n" "" _treetrav_prefix "${_treetrav_prefix}")
    if(_treetrav_script STREQUAL bootstrap-kokkos)
      set(Kokkos_ROOT "${_treetrav_prefix}" CACHE PATH "Kokkos (pip install: the bootstrap's)")
    else()
      set(KokkosKernels_ROOT "${_treetrav_prefix}" CACHE PATH "Kokkos Kernels (pip install: the bootstrap's)")
    endif()
  endforeach()
endif()
if(TREETRAV_CUDA AND NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER "${Kokkos_ROOT}/bin/nvcc_wrapper")
  string(TOLOWER "${TREETRAV_CUDA_ARCH}" _treetrav_arch)
  string(REGEX REPLACE "[^0-9]" "" _treetrav_sm "${_treetrav_arch}")
  set(CMAKE_CXX_FLAGS "-arch=sm_${_treetrav_sm} ${CMAKE_CXX_FLAGS}")
endif()
