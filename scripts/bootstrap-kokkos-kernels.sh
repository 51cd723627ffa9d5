#!/usr/bin/env bash
# Builds Kokkos Kernels 3.4.1 from Debian's own `trilinos` source package
# (packages/kokkos-kernels, the same tarball as Kokkos) against the cached
# Kokkos of scripts/bootstrap-kokkos.sh, into a cached prefix.
#
#   scripts/bootstrap-kokkos-kernels.sh cpu            # OpenMP + Serial
#   scripts/bootstrap-kokkos-kernels.sh cuda [ARCH]    # CUDA + OpenMP + Serial, cuBLAS as TPL
#
# Lean on purpose: only the BLAS component, no explicit instantiation (treetrav
# instantiates the one GEMM it calls; in the CUDA configuration that GEMM is
# cuBLAS's, through Kokkos Kernels' TPL layer), no host BLAS, no cuSPARSE. The
# library is then a handful of files: minutes of nvcc, not hours.
#
# Prints the install prefix on the last line of stdout; a prefix built
# completely before (marker .treetrav-complete) is reused. Concurrent runs
# for the same prefix wait for each other (flock). Cache root: $TREETRAV_CACHE.
set -euo pipefail

config=${1:-cpu}
arch=${2:-HOPPER90}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${TREETRAV_CACHE:-$HOME/.cache/treetrav}
jobs=${TREETRAV_JOBS:-$(nproc)}
log() { echo "[bootstrap-kokkos-kernels] $*" >&2; }

case "$config" in
cpu | cuda) ;;
*)
  echo "usage: $0 cpu | cuda [ARCH]" >&2
  exit 2
  ;;
esac

kokkos=$("$repo/scripts/bootstrap-kokkos.sh" "$config" "$arch" | tail -n 1)
# Named after the Kokkos prefix it is built against (which names Kokkos's
# patch set and configuration): a changed Kokkos builds a new Kokkos Kernels.
prefix=$cache/kokkos-kernels-3.4.1-on-$(basename "$kokkos")

mkdir -p "$cache"
exec 9>"$prefix.lock"
flock 9

if [[ -f $prefix/.treetrav-complete ]]; then
  log "reusing $prefix"
  echo "$prefix"
  exit 0
fi

rm -rf "$prefix"
# bootstrap-kokkos.sh extracts packages/kokkos-kernels along with Kokkos; a
# cache made before it did so fetches the tarball once more.
src=$cache/src/kokkos-kernels-3.4.1
if [[ ! -f $src/.treetrav-extracted ]]; then
  "$repo/scripts/setup-apt.sh" source
  dl=$cache/src/dl-kokkos-kernels
  rm -rf "$dl" "$src" && mkdir -p "$dl/x"
  log "fetching Debian's trilinos source package"
  (cd "$dl" && apt-get source --download-only trilinos >&2)
  tarballs=("$dl"/trilinos_*.orig.tar.*)
  log "extracting packages/kokkos-kernels from $(basename "${tarballs[0]}")"
  tar xf "${tarballs[0]}" -C "$dl/x" --wildcards '*/packages/kokkos-kernels/*'
  mv "$dl"/x/*/packages/kokkos-kernels "$src"
  rm -rf "$dl"
  touch "$src/.treetrav-extracted"
fi

build=$cache/build/$(basename "$prefix")
build_log=$build.log
rm -rf "$build" && mkdir -p "$build"
flags=(
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$prefix"
  -DCMAKE_CXX_STANDARD=17
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DKokkos_ROOT="$kokkos"
  -DKokkosKernels_ENABLED_COMPONENTS=BLAS
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF
  -DKokkosKernels_INST_DOUBLE=OFF
  -DKokkosKernels_INST_FLOAT=OFF
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF
  -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF
  -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
  -DKokkosKernels_ENABLE_TESTS=OFF
  -DKokkosKernels_ENABLE_EXAMPLES=OFF
)
if [[ $config == cuda ]]; then
  # The architecture Kokkos was built for (nvcc_wrapper's default, sm_35, is
  # one CUDA 13 rejects in CMake's own compiler checks).
  sm=$(grep -o -m 1 'arch=sm_[0-9a-z]*' "$kokkos"/lib*/cmake/Kokkos/KokkosTargets.cmake | head -n 1 | cut -d= -f2)
  [[ -n $sm ]] || {
    echo "bootstrap-kokkos-kernels: no CUDA architecture in $kokkos's KokkosTargets.cmake" >&2
    exit 2
  }
  flags+=(
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper"
    -DCMAKE_CXX_FLAGS="-arch=$sm"
    -DKokkosKernels_ENABLE_TPL_CUBLAS=ON
  )
else
  flags+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=OFF)
fi
log "configuring ($config) against $kokkos into $prefix"
cmake -S "$src" -B "$build" "${flags[@]}" >"$build_log" 2>&1 ||
  { tail -n 40 "$build_log" >&2; exit 1; }
log "building with $jobs jobs"
cmake --build "$build" -j "$jobs" >>"$build_log" 2>&1 ||
  { tail -n 40 "$build_log" >&2; exit 1; }
cmake --install "$build" >>"$build_log" 2>&1
rm -rf "$build"
touch "$prefix/.treetrav-complete"
log "installed $prefix"
echo "$prefix"
