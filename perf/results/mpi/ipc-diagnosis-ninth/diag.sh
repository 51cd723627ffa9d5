#!/usr/bin/env bash
# DIAGNOSTIC (not committed): N-body over the GPU-aware exchange with IPC buffers.
set -u
export TREETRAV_MPI_STACK=ucx TREETRAV_DEVICE_TESTS=1
source "$PWD/scripts/device/mpi-env.sh"
work=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
q() { grep -a -v -E "dlopen error|Perhaps a missing|^ *$"; }
"$treetrav" generate --dist plummer -n 1000000 --seed 3 -o $work/p1m.h5 >/dev/null
"$treetrav" generate --dist plummer -n 200000 --seed 3 -o $work/p200k.h5 >/dev/null
nb() { # label ics extra-env...
  local l=$1 ics=$2; shift 2
  echo "== $l"
  env "$@" timeout 120 "$mpirun" -np 2 --bind-to none "$treetrav" nbody --ics $ics --steps 8 --dt 0.0005 --softening 0.01 \
    --multipole quadrupole --theta 0.6 --potential-theta 0.6 --rebalance-every 4 --strategy group --group-size 64 \
    --gpu-aware-mpi on --quiet -o $work/run-$l 2>&1 | q | grep -a -E "CHECK|error|nbody:|ERROR" | head -n 40
}
nb check1m $work/p1m.h5 TREETRAV_CHECK_EXCHANGE=1
nb plain1m $work/p1m.h5 X=1
nb noipc1m $work/p1m.h5 UCX_TLS=^cuda_ipc
nb nocache1m $work/p1m.h5 UCX_CUDA_IPC_CACHE=n
nb check200k $work/p200k.h5 TREETRAV_CHECK_EXCHANGE=1
tests=${treetrav%/treetrav}/tests/test_distributed
for f in "" --gpu-aware-mpi; do
  timeout 200 "$mpirun" -np 2 --bind-to none $tests --gtest_filter='*Cuda*' --gtest_color=no $f > $out/td$f.log 2>&1
  echo "test_distributed 2 ranks $f: rc=$? $(grep -a -E '^\[  (PASSED|FAILED) ' $out/td$f.log | sort -u | tr '\n' ' ')"
done
echo quit | nvidia-cuda-mps-control
echo "done in $((SECONDS - started)) s"
