#!/usr/bin/env bash
# Builds Kokkos 3.4.1 from Debian's own `trilinos` source package into a cached
# prefix, applying the patches in cmake/patches/kokkos-3.4.1 (CUDA 13 + Hopper).
#
#   scripts/bootstrap-kokkos.sh cpu            # OpenMP + Serial (what tests use)
#   scripts/bootstrap-kokkos.sh cuda [ARCH]    # CUDA + OpenMP + Serial, ARCH=HOPPER90 (sm_90) default
#
# Prints the install prefix on the last line of stdout. A prefix that was built
# completely before (marker file .treetrav-complete) is reused as it is.
# Cache root: $TREETRAV_CACHE, default ~/.cache/treetrav.
set -euo pipefail

config=${1:-cpu}
arch=${2:-HOPPER90}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${TREETRAV_CACHE:-$HOME/.cache/treetrav}
jobs=${TREETRAV_JOBS:-$(nproc)}
log() { echo "[bootstrap-kokkos] $*" >&2; }

# The patch set names the cached source and builds, so a changed patch set
# builds afresh (beside the old one, which a running build may still use).
patches=$(cat "$repo"/cmake/patches/kokkos-3.4.1/*.patch | sha256sum | cut -c1-8)
case "$config" in
cpu) prefix=$cache/kokkos-3.4.1-$patches-cpu ;;
cuda) prefix=$cache/kokkos-3.4.1-$patches-cuda-$arch ;;
*)
  echo "usage: $0 cpu | cuda [ARCH]" >&2
  exit 2
  ;;
esac

# One bootstrap of a prefix at a time: a second waits, then reuses it.
mkdir -p "$cache"
exec 9>"$prefix.lock"
flock 9
if [[ -f $prefix/.treetrav-complete ]]; then
  log "reusing $prefix"
  echo "$prefix"
  exit 0
fi

# A half-built prefix (no marker) is never reused: start clean.
rm -rf "$prefix"
src=$cache/src/kokkos-3.4.1-$patches
if [[ ! -f $src/.treetrav-patched ]]; then
  "$repo/scripts/setup-apt.sh" source
  unpack=$cache/src/unpack-$patches
  rm -rf "$src" "$unpack" && mkdir -p "$unpack/dl" "$unpack/x"
  log "fetching Debian's trilinos source package"
  (cd "$unpack/dl" && apt-get source --download-only trilinos >&2)
  tarballs=("$unpack"/dl/trilinos_*.orig.tar.*)
  # Kokkos Kernels (scripts/bootstrap-kokkos-kernels.sh) comes from the same
  # tarball, unpatched: one source for every Kokkos patch set.
  log "extracting packages/kokkos and packages/kokkos-kernels from $(basename "${tarballs[0]}")"
  tar xf "${tarballs[0]}" -C "$unpack/x" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  mv "$unpack"/x/*/packages/kokkos "$src"
  kernels_src=$cache/src/kokkos-kernels-3.4.1
  if [[ ! -f $kernels_src/.treetrav-extracted ]]; then
    rm -rf "$kernels_src"
    mv "$unpack"/x/*/packages/kokkos-kernels "$kernels_src"
    touch "$kernels_src/.treetrav-extracted"
  fi
  rm -rf "$unpack"
  for p in "$repo"/cmake/patches/kokkos-3.4.1/*.patch; do
    log "applying $(basename "$p")"
    patch -d "$src" -p1 --forward --quiet <"$p"
  done
  touch "$src/.treetrav-patched"
fi

build=$cache/build/$(basename "$prefix")
build_log=$build.log
rm -rf "$build" && mkdir -p "$build"
common=(
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$prefix"
  -DCMAKE_CXX_STANDARD=17
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DKokkos_ENABLE_SERIAL=ON
  -DKokkos_ENABLE_OPENMP=ON
  -DKokkos_ENABLE_TESTS=OFF
  -DKokkos_ENABLE_EXAMPLES=OFF
)
if [[ $config == cuda ]]; then
  sm=$(sed -n "s/^CHECK_CUDA_ARCH($arch *\(sm_[0-9a-z]*\))/\1/p" "$src/cmake/kokkos_arch.cmake")
  [[ -n $sm ]] || {
    echo "bootstrap-kokkos: unknown CUDA architecture '$arch'" >&2
    exit 2
  }
  command -v nvcc >/dev/null || {
    echo "bootstrap-kokkos: nvcc not found on PATH (needed for the cuda configuration)" >&2
    exit 2
  }
  # nvcc_wrapper defaults to sm_35, which CUDA 13 rejects: pass the arch for
  # CMake's own compiler checks too.
  common+=(
    -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper"
    -DCMAKE_CXX_FLAGS="-arch=$sm"
    -DKokkos_ENABLE_CUDA=ON
    -DKokkos_ENABLE_CUDA_LAMBDA=ON
    -DKokkos_ENABLE_CUDA_CONSTEXPR=ON
    -DKokkos_ARCH_"$arch"=ON
  )
fi
log "configuring ($config) into $prefix"
cmake -S "$src" -B "$build" "${common[@]}" >"$build_log" 2>&1 ||
  { tail -n 40 "$build_log" >&2; exit 1; }
log "building with $jobs jobs"
cmake --build "$build" -j "$jobs" >>"$build_log" 2>&1 ||
  { tail -n 40 "$build_log" >&2; exit 1; }
cmake --install "$build" >>"$build_log" 2>&1
rm -rf "$build"
touch "$prefix/.treetrav-complete"
log "installed $prefix"
echo "$prefix"
