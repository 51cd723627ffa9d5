#!/usr/bin/env bash
# Builds kokkos-tools' space-time-stack for the device scripts
# (rank-memory.sh, nbody-ab.sh, mpi-scaling.sh): .device/kp_space_time_stack.so,
# without MPI (each process prints its own high water), with Kokkos'
# page-locked host space counted apart from device memory (upstream counts
# every space named Cuda* as CUDA). The source: a checkout of
# github.com/kokkos/kokkos-tools (fetched, not committed), its path the argument.
#   scripts/device/build-space-time-stack.sh /path/to/kokkos-tools
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tools=$1
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$tools/profiling/space-time-stack/kp_space_time_stack.cpp" "$stage/"
sed -i -e 's/enum Space { SPACE_HOST, SPACE_CUDA,/enum Space { SPACE_HOST, SPACE_CUDA, SPACE_CUDAHOSTPINNED,/' \
  -e 's/enum { NSPACES = 5 };/enum { NSPACES = 6 };/' \
  -e 's|^  if (strncmp(handle.name, "Cuda", 4) == 0) return SPACE_CUDA;|  if (strcmp(handle.name, "CudaHostPinned") == 0) return SPACE_CUDAHOSTPINNED;\n&|' \
  -e 's|^    case SPACE_CUDA: return "CUDA";|&\n    case SPACE_CUDAHOSTPINNED: return "CUDAHOSTPINNED";|' "$stage/kp_space_time_stack.cpp"
grep -q SPACE_CUDAHOSTPINNED "$stage/kp_space_time_stack.cpp"
mkdir -p "$repo/.device"
g++ -shared -O2 -fPIC -std=c++17 -DUSE_MPI=0 -I"$tools/profiling/all" -I"$tools/common/makefile-only" \
  -I"$tools/common" -o "$repo/.device/kp_space_time_stack.so" "$stage/kp_space_time_stack.cpp"
ls -l "$repo/.device/kp_space_time_stack.so"
