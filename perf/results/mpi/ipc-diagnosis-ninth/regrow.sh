#!/usr/bin/env bash
# The regrowth probe under the UCX stack: default, cache off; 2 ranks with and without MPS.
set -u
export TREETRAV_MPI_STACK=ucx TREETRAV_BINARY=/bin/true
source "$PWD/scripts/device/mpi-env.sh"
inc=$(dirname "$(find $gpu_mpi/ompi -name mpi.h | head -1)")
nvcc -O2 -arch=sm_90 -I"$inc" .device/probe/regrow.cu -L$gpu_mpi/ompi/lib -lmpi -o /tmp/regrow 2>&1 | tail -3
run() { timeout 120 "$mpirun" -np "$1" --bind-to none /tmp/regrow "$2" 2>&1 | grep -a -v -E "dlopen error|Perhaps a missing|\*\*\*|^---|prterun|terminated by|abort\.|^ *$" ; }
for m in regrow fresh keep; do run 2 $m; run 2 $m; done
UCX_CUDA_IPC_CACHE=n run 2 fresh
UCX_CUDA_IPC_CACHE=n run 2 regrow
w=$(mktemp -d); export CUDA_MPS_PIPE_DIRECTORY=$w/p CUDA_MPS_LOG_DIRECTORY=$w/l; mkdir -p $w/p $w/l; nvidia-cuda-mps-control -d
echo MPS on
for m in regrow fresh keep; do run 2 $m; run 2 $m; done
UCX_CUDA_IPC_CACHE=n run 2 fresh
run 4 fresh
echo quit | nvidia-cuda-mps-control
echo "done in $SECONDS s"
