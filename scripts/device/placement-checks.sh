#!/usr/bin/env bash
# Runs on the lent GPU machine (the `device` tool), from the repository root,
# with the CUDA build's test_placement and bench_placement carried in
# .device/smcentric/bin (lib: shared libraries the image may lack).
# SM-centric placement (issue 13): the GPU tests (every job once, counted on
# the GPU; identical results under every placement and strategy),
# compute-sanitizer memcheck and racecheck on them, then perf/bench_placement
# (Figures 6 and 8, co-runs for Figures 3-4). At most 8 files in $OUT.
#   scripts/device/placement-checks.sh [tests] [bench] [sanitize]
# Env: PLACEMENT_BENCH_ARGS (bench_placement's options), PLACEMENT_BENCH_TIMEOUT,
# TESTS_TIMEOUT, SANITIZE_TIMEOUT (per sanitizer run). Sanitizers run the short
# test (every job once) first; the long one (identical results) gets what is left.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
dir=.device/smcentric
bin=$dir/bin
steps=${*:-tests bench sanitize}
log=$out/checks.log
export OMP_PROC_BIND=spread OMP_PLACES=threads
if ldd "$bin"/* | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{
  nvidia-smi -L
  ls "$bin"
  ldd "$bin"/* | grep "not found"
} >"$log" 2>&1
for step in $steps; do
  started=$SECONDS
  case $step in
  tests)
    echo "== test_placement (Cuda, and the host-only clustering tests)"
    timeout "${TESTS_TIMEOUT:-150}" "$bin/test_placement" --gtest_filter='*Cuda*:AffinityClusters*:HillClimb*' 2>&1 | tail -n 40
    echo "rc=${PIPESTATUS[0]}"
    ;;
  sanitize)
    for run in 'memcheck Placement/Cuda.EveryJob*' 'racecheck Placement/Cuda.EveryJob*' \
      'memcheck Placement/Cuda.IdenticalResults*'; do
      read -r tool filter <<<"$run"
      echo "== compute-sanitizer --tool $tool test_placement $filter"
      timeout "${SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$bin/test_placement" --gtest_filter="$filter" 2>&1 | tail -n 15
      echo "rc=${PIPESTATUS[0]}"
    done
    ;;
  bench)
    echo "== bench_placement ${PLACEMENT_BENCH_ARGS:-}"
    # shellcheck disable=SC2086
    timeout "${PLACEMENT_BENCH_TIMEOUT:-300}" "$bin/bench_placement" --out "$out/placement" \
      ${PLACEMENT_BENCH_ARGS:-} >"$out/bench.log" 2>&1
    echo "rc=$?"
    tail -n 30 "$out/bench.log"
    ;;
  esac >>"$log" 2>&1
  echo "$step: $((SECONDS - started)) s" >>"$log"
done
grep -E "^== |rc=|PASSED|FAILED|ERROR SUMMARY|chunks ran off|: [0-9]+ s$" "$log"
