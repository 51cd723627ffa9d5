# Installs the build tree, then configures, builds and runs a small project
# that only does find_package(treetrav).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/install
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/downstream/project -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/install -DKokkos_DIR=${Kokkos_DIR}
  -DKokkosKernels_DIR=${KokkosKernels_DIR}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the downstream project failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the downstream project failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/downstream ${WORK_DIR}/points.h5 RESULT_VARIABLE rc
  OUTPUT_VARIABLE out)
message(STATUS "${out}")
if(rc OR NOT out MATCHES "read back 100 points in 3 dimensions")
  message(FATAL_ERROR "the downstream program failed (${rc})")
endif()
