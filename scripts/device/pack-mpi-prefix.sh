#!/usr/bin/env bash
# Packs Debian's OpenMPI and parallel HDF5 (what scripts/setup-apt.sh
# installed here) into one relocatable prefix for the lent GPU machines,
# whose image has no MPI: .device/mpi-prefix.tar.xz, unpacked there under
# /tmp/tt-mpi and used through OPAL_PREFIX (redesign-ab.sh, mpi-scaling.sh).
# Holds the packages' own files (headers, compiler wrappers, mpirun, orted,
# the MCA plugins) and every shared library they load that the image may
# lack (ldd, C library left out); no documentation. Binaries named as
# arguments (a treetrav built here, say) bring the libraries they load too.
#   scripts/device/pack-mpi-prefix.sh [BINARY...]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
packages=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15
  libhdf5-openmpi-103-1 libhdf5-openmpi-dev libhdf5-openmpi-hl-100 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libfabric1 libucx0 libsz2 libaec0)
for package in "${packages[@]}"; do
  dpkg -L "$package" | while read -r path; do
    [[ -f $path && ! $path =~ ^/usr/share/(doc|man|lintian)/ ]] || continue
    mkdir -p "$stage$(dirname "$path")"
    cp -a "$path" "$stage$path"
  done
  # Symbolic links of the package (libraries' .so names, wrappers).
  dpkg -L "$package" | while read -r path; do
    [[ -L $path ]] || continue
    mkdir -p "$stage$(dirname "$path")"
    cp -a "$path" "$stage$path"
  done
done
# The libraries those load, but the C library's own, in usr/deps: the
# device scripts take from there only what the image lacks (ldd's "not
# found"), so the image's own libraries stay first.
lib=$stage/usr/lib/x86_64-linux-gnu
mkdir -p "$stage/usr/deps"
{ { find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) -print0; printf '%s\0' "$@"; } |
  xargs -0 ldd 2>/dev/null || true; } |
  awk '/=> \// {print $3}' | sort -u |
  { grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt)\.so|/usr/local/' || true; } |
  while read -r dependency; do
    [[ -e $lib/$(basename "$dependency") ]] || cp -L "$dependency" "$stage/usr/deps/"
  done
mkdir -p "$repo/.device"
tar cJf "$repo/.device/mpi-prefix.tar.xz" -C "$stage" usr etc 2>/dev/null ||
  tar cJf "$repo/.device/mpi-prefix.tar.xz" -C "$stage" usr
ls -l "$repo/.device/mpi-prefix.tar.xz"
