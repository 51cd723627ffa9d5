#!/usr/bin/env bash
# Configures and builds treetrav.
#   scripts/build.sh [cpu|cuda] [BUILD_DIR]     (defaults: cpu, build-cpu / build-cuda)
# Kokkos: $Kokkos_ROOT if set (a user's own Kokkos >= 3.4), else the cached
# bootstrap build (scripts/bootstrap-kokkos.sh). Kokkos Kernels: $KokkosKernels_ROOT
# if set, else (with the bootstrap Kokkos) scripts/bootstrap-kokkos-kernels.sh;
# with a user's own Kokkos and no $KokkosKernels_ROOT, CMake looks in Kokkos's
# prefix. CUDA arch: $TREETRAV_CUDA_ARCH (a Kokkos arch name, default
# HOPPER90). MPI (distributed runs): on unless TREETRAV_MPI=OFF. Extra CMake
# flags: $TREETRAV_CMAKE_FLAGS. Targets: $TREETRAV_TARGETS (default: all).
set -euo pipefail
config=${1:-cpu}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${2:-$repo/build-$config}
arch=${TREETRAV_CUDA_ARCH:-HOPPER90}

"$repo/scripts/setup-apt.sh"
flags=(-DCMAKE_BUILD_TYPE=${TREETRAV_BUILD_TYPE:-Release} -DTREETRAV_ENABLE_MPI=${TREETRAV_MPI:-ON})
if [[ -n ${Kokkos_ROOT:-} ]]; then
  flags+=(-DKokkos_ROOT="$Kokkos_ROOT")
  kokkos=$Kokkos_ROOT
else
  kokkos=$("$repo/scripts/bootstrap-kokkos.sh" "$config" "$arch" | tail -n 1)
  flags+=(-DKokkos_ROOT="$kokkos")
  # Kokkos Kernels built against that Kokkos, unless the user brings one.
  if [[ -z ${KokkosKernels_ROOT:-} ]]; then
    KokkosKernels_ROOT=$("$repo/scripts/bootstrap-kokkos-kernels.sh" "$config" "$arch" | tail -n 1)
  fi
fi
if [[ -n ${KokkosKernels_ROOT:-} ]]; then
  flags+=(-DKokkosKernels_ROOT="$KokkosKernels_ROOT")
fi
if [[ $config == cuda ]]; then
  case "$arch" in
  HOPPER90) sm=sm_90 ;; AMPERE80) sm=sm_80 ;; AMPERE86) sm=sm_86 ;; VOLTA70) sm=sm_70 ;;
  *) echo "build.sh: set CMAKE flags for arch $arch yourself" >&2; sm=sm_90 ;;
  esac
  flags+=(-DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$sm")
fi
# ccache, when the machine has it, makes a rebuild after a small change cheap
# (CPU builds; nvcc_wrapper is not one ccache knows)
# (TREETRAV_CCACHE=OFF or CCACHE_DISABLE=1 to measure a cold build).
if [[ $config == cpu && ${TREETRAV_CCACHE:-ON} != OFF ]] && command -v ccache >/dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# shellcheck disable=SC2086
cmake -S "$repo" -B "$build" "${flags[@]}" ${TREETRAV_CMAKE_FLAGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j "${TREETRAV_JOBS:-$(nproc)}" ${TREETRAV_TARGETS:+--target $TREETRAV_TARGETS}
