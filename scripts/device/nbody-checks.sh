#!/usr/bin/env bash
# Issue #16 on the lent GPU machine (the `device` tool), from the repository
# root, with what .device/nbody carries: bin/ (CUDA build: treetrav,
# bench_nbody, test_group_walk, test_nbody, test_barnes_hut), lib/ (shared
# libraries the image lacks), whl/ (pytreegrav and, should numba lack its CUDA
# target, numba-cuda with its bindings), and a copy of this script and of
# perf/nbody_runner.py (the device runs the main checkout, which may not have
# them yet). Logs and CSV go to $OUT.
#   scripts/device/nbody-checks.sh [tests] [cli] [sanitize] [ncu] [runner]
# Env: NBODY_RUNNER_ARGS (extra perf/nbody_runner.py arguments).
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
d=.device/nbody
bin=$d/bin
if ldd "$bin/treetrav" | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export OMP_PROC_BIND=spread OMP_PLACES=threads
steps=${*:-tests cli runner sanitize ncu}
# The device tool stops a command at 600 s: each step gets at most what is left.
budget=${NBODY_BUDGET:-585}
left() { local l=$((budget - SECONDS)); ((l > 0)) && echo $l || echo 1; }
ldd "$bin/treetrav" | grep "not found" && echo "missing libraries" >&2

for step in $steps; do
  case $step in
  tests)
    {
      nvidia-smi -L
      "$bin/treetrav" info
      for t in test_group_walk test_nbody test_barnes_hut test_treefix_octree; do
        [[ -x $bin/$t ]] || continue
        echo "== $t (Cuda)"
        timeout 150 "$bin/$t" --gtest_brief=1 --gtest_filter='*/Cuda.*' 2>&1 | tail -n 25
        echo "rc=${PIPESTATUS[0]}"
      done
    } >"$out/gpu-tests.log" 2>&1
    grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
    ;;
  cli)
    # The CLI's GPU paths no test covers (bh-force and nbody share kernels across
    # translation units): every per-body strategy gives the same bits, group
    # walks at least their accuracy; a short group / quadrupole / block-step run.
    {
      w=/tmp/nbody-cli
      rm -rf "$w" && mkdir -p "$w"
      "$bin/treetrav" generate --dist plummer -n 200000 --seed 3 -o "$w/p.h5"
      for s in autoropes lockstep fsm group; do
        "$bin/treetrav" bh-force --backend cuda --snapshot "$w/p.h5" --theta 0.5 --softening 0.01 \
          --multipole quadrupole --opening com-offset --strategy $s --error-report -o "$w/bh-$s.h5" | tail -n 1
      done
      python3 - "$w" <<'PY'
import sys, h5py, numpy as np
w = sys.argv[1]
a = {s: h5py.File(f"{w}/bh-{s}.h5", "r") for s in ("autoropes", "lockstep", "fsm", "group")}
same = all(np.array_equal(a["autoropes"]["Results/Accelerations"][()], a[s]["Results/Accelerations"][()])
           for s in ("lockstep", "fsm"))
p99 = {s: a[s]["RunMetadata"].attrs["error_p99"] for s in a}
print("per-body strategies bit-identical:", same, "| p99:", p99)
print("CLI CHECK", "PASSED" if same and p99["group"] <= 1.01 * p99["autoropes"] else "FAILED")
PY
      "$bin/treetrav" nbody --backend cuda --plummer 20000 --dt 0.015625 --eta 0.05 --max-bin 4 --steps 20 \
        --softening 0.01 --strategy group --multipole quadrupole --opening com-offset --theta 0.5 \
        --snapshot-every 10 --checkpoint-every 10 -q -o "$w/run" --timings "$w/run.json"
      echo "nbody rc=$?"
      "$bin/treetrav" nbody --backend cuda --restart "$w/run" --steps 30 -q
      echo "nbody restart rc=$?"
    } >"$out/cli.log" 2>&1
    grep -E "CLI CHECK|rc=|drift" "$out/cli.log"
    ;;
  sanitize)
    {
      for tool in memcheck racecheck; do
        # racecheck: the group walk kernel (the one using shared memory; the
        # reductions inside Kokkos draw warp-level warnings of their own).
        filter='*/Cuda.ThetaZero*:*/Cuda.ActiveBodies*:*/Cuda.Potentials*'
        kernels=()
        if [[ $tool == racecheck ]]; then
          filter='*/Cuda.ActiveBodies*'
          kernels=(--kernel-name kns=CudaGroupWalkLaunch)
        fi
        echo "== compute-sanitizer --tool $tool ${kernels[*]} test_group_walk ($filter)"
        timeout $(($(left) / 4)) compute-sanitizer --tool $tool "${kernels[@]}" --error-exitcode 9 \
          "$bin/test_group_walk" --gtest_brief=1 --gtest_filter="$filter" 2>&1 | tail -n 8
        echo "rc=${PIPESTATUS[0]}"
        echo "== compute-sanitizer --tool $tool ${kernels[*]} test_nbody (Cuda: block-step checkpoint, group walks)"
        timeout $(($(left) / 3)) compute-sanitizer --tool $tool "${kernels[@]}" --error-exitcode 9 "$bin/test_nbody" \
          --gtest_brief=1 --gtest_filter='*/Cuda.BlockStepCheckpoint*' 2>&1 | tail -n 8
        echo "rc=${PIPESTATUS[0]}"
      done
    } >"$out/sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|rc=" "$out/sanitizer.log"
    ;;
  ncu)
    # The group walk kernel of one 1M-body force evaluation (quadrupole,
    # com-offset, theta 0.5): where its time goes.
    timeout $(($(left) / 2)) ncu --kernel-name-base mangled --kernel-name regex:CudaGroupWalkLaunch --launch-skip 1 \
      --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      "$bin/bench_nbody" --plummer 1000000 --walks group --multipoles quadrupole --thetas 0.5 --repeats 1 \
      --sample 100 --out /tmp/ncu-sweep.csv >"$out/ncu.log" 2>&1
    echo "ncu: rc=$?"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Theoretical Occ" \
      "$out/ncu.log" | head -12
    # Every kernel of one build + moments + quadrupoles + group walk (the warm-up run): device time per kernel.
    timeout $(left) ncu --metrics gpu__time_duration.sum --csv --page raw "$bin/bench_nbody" --plummer 1000000 \
      --walks group --multipoles quadrupole --thetas 0.5 --repeats 0 --sample 100 --out /tmp/ncu-all.csv \
      >"$out/ncu-kernels.csv" 2>&1
    echo "ncu kernels: rc=$?"
    ;;
  runner)
    site=/tmp/nbody-py
    rm -rf "$site"
    python3 -m pip install --quiet --no-deps --target "$site" "$d"/whl/pytreegrav-*.whl
    if ! PYTHONPATH=$site python3 -c "from numba import cuda; assert cuda.is_available()" 2>/dev/null; then
      echo "numba has no working CUDA target: installing numba-cuda and its bindings"
      python3 -m pip install --quiet --no-deps --target "$site" "$d"/whl/numba_cuda-*.whl "$d"/whl/cuda_*.whl
    fi
    python3 -c "import numba, numpy; print('numba', numba.__version__, 'numpy', numpy.__version__)"
    runner=perf/nbody_runner.py
    [[ -f $d/nbody_runner.py ]] && runner=$d/nbody_runner.py
    TREETRAV_PY_SITE=$site timeout $(($(left) - ${NBODY_RESERVE:-150})) python3 "$runner" --treetrav "$bin/treetrav" \
      --bench "$bin/bench_nbody" --out "$out/runner" --work /tmp/nbody-work ${NBODY_RUNNER_ARGS:-}
    echo "runner: rc=$?"
    ;;
  esac
done
