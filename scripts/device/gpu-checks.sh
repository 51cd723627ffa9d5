#!/usr/bin/env bash
# Runs on the lent GPU machine (the `device` tool), from the repository root,
# with binaries built here and carried in .device/ (bin-cuda: the CUDA build,
# bin-cpu: the OpenMP build, lib: fallback shared libraries). The matrix step
# runs treetrav-studies (the build's perf/treetrav-studies). Logs go to $OUT.
# Env: TREETRAV_TESTS (test binaries to run; default all in bin-cuda),
# TREETRAV_ONLY (bench apps), TREETRAV_MATRIX_DIR (bench output under $OUT),
# TREETRAV_SWEEP_DEPTHS, TREETRAV_MATRIX_TIMEOUT, TREETRAV_BENCH_N,
# TREETRAV_TREEFIX_BENCH_ARGS (perf/bench_treefix's options), SANITIZE_TIMEOUT,
# TREETRAV_NBODY_N, TREETRAV_NBODY_STEPS.
#   scripts/device/gpu-checks.sh [info] [tests] [sanitize] [hybrid-sanitize] [treefix-sanitize]
#                                [treefix-bench] [nbody] [matrix] [hostbench]
# Each step carries only what it runs: e.g. the treefix steps need test_treefix,
# test_treefix_octree and bench_treefix in bin-cuda, not treetrav.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
cuda=.device/bin-cuda
cpu=.device/bin-cpu
steps=${*:-info tests sanitize matrix hostbench}
probe=$(find "$cuda" -maxdepth 1 -type f -perm -u+x | head -n 1)
if ldd "$probe" | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ldd "$probe" | grep "not found" && echo "missing libraries" >&2
# Libraries the device image never has (Debian's Google Benchmark).
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.device/lib-extra
export OMP_PROC_BIND=spread OMP_PLACES=threads
work=$(mktemp -d)
nvidia-smi -L >"$out/device.log" 2>&1

for step in $steps; do
  started=$SECONDS
  case $step in
  info)
    {
      nvidia-smi -L
      "$cuda/treetrav" info
      "$cuda/treetrav" generate --dist covtype7 -n 100000 --seed 1 -o "$work/ref.h5"
      "$cuda/treetrav" generate --dist covtype7 -n 100000 --seed 2 -o "$work/q.h5"
      "$cuda/treetrav" generate --dist plummer -n 100000 --seed 3 -o "$work/plummer.h5"
      "$cuda/treetrav" inspect "$work/ref.h5"
      "$cuda/treetrav" inspect "$work/plummer.h5"
      for s in autoropes lockstep fsm; do
        "$cuda/treetrav" knn --backend cuda --strategy $s --reference "$work/ref.h5" --queries "$work/q.h5" -k 8 -o "$work/knn-$s.h5"
      done
      cmp <("$cuda/treetrav" inspect "$work/knn-autoropes.h5" | grep -v -i -E "^file|strategy|_s|time") \
        <("$cuda/treetrav" inspect "$work/knn-fsm.h5" | grep -v -i -E "^file|strategy|_s|time") && echo "knn results summaries equal (autoropes vs fsm)"
      "$cuda/treetrav" bh-force --backend cuda --strategy fsm --snapshot "$work/plummer.h5" --softening 0.01 -o "$work/bh.h5"
      # GPU-only CLI paths the tests do not cover: N-body steps and treefix.
      "$cuda/treetrav" nbody --backend cuda --plummer 10000 --dt 0.001 --steps 5 -q -o "$work/nbody"
      "$cuda/treetrav" treefix-generate --shape random -n 100000 -o "$work/tree.h5"
      for method in bfs euler; do
        "$cuda/treetrav" treefix --backend cuda --op leaffix --method $method --input "$work/tree.h5" -o "$work/leaffix-$method.h5"
      done
    } >"$out/info.log" 2>&1
    echo "info: rc=$?"
    ;;
  tests)
    for t in ${TREETRAV_TESTS:-"$cuda"/test_*}; do
      echo "== $t"
      timeout 600 "$t" --gtest_brief=1 2>&1 | tail -n 30
      echo "rc=${PIPESTATUS[0]}"
    done >"$out/gpu-tests.log" 2>&1
    grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
    ;;
  sanitize)
    {
      for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool test_sfc_order (Cuda)"
        timeout 900 compute-sanitizer --tool $tool --error-exitcode 9 "$cuda/test_sfc_order" --gtest_filter='*Cuda*' 2>&1 | tail -n 15
        echo "rc=${PIPESTATUS[0]}"
        echo "== compute-sanitizer --tool $tool test_barnes_hut StrategiesAgreeBitwise (Cuda)"
        timeout 900 compute-sanitizer --tool $tool --error-exitcode 9 "$cuda/test_barnes_hut" --gtest_filter='*Cuda*Bitwise*' 2>&1 | tail -n 15
        echo "rc=${PIPESTATUS[0]}"
      done
    } >"$out/sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|rc=" "$out/sanitizer.log"
    ;;
  hybrid-sanitize)
    # Every hybrid phase on the GPU under memcheck and racecheck: guided (kNN)
    # and unguided (point correlation) profiles, then the FSM executor.
    {
      "$cuda/treetrav" generate --dist covtype7 -n 4000 --seed 1 -o "$work/small-ref.h5"
      "$cuda/treetrav" generate --dist covtype7 -n 4000 --seed 2 -o "$work/small-q.h5"
      for tool in memcheck racecheck; do
        for app in "knn -k 8" "pc --radius 0.05"; do
          echo "== compute-sanitizer --tool $tool treetrav $app --strategy hybrid"
          # shellcheck disable=SC2086
          timeout 600 compute-sanitizer --tool $tool --error-exitcode 9 "$cuda/treetrav" $app --backend cuda \
            --strategy hybrid --reference "$work/small-ref.h5" --queries "$work/small-q.h5" -o "$work/hybrid-$tool.h5" 2>&1 | tail -n 6
          echo "rc=${PIPESTATUS[0]}"
        done
      done
    } >"$out/hybrid-sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|rc=" "$out/hybrid-sanitizer.log"
    ;;
  treefix-sanitize)
    # The treefix kernels (named functors, CUB's scan through the gather and
    # scatter iterators) and the octree moments under memcheck.
    for t in test_treefix test_treefix_octree; do
      [[ -x $cuda/$t ]] || continue
      echo "== compute-sanitizer --tool memcheck $t (Cuda)"
      timeout "${SANITIZE_TIMEOUT:-400}" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$cuda/$t" --gtest_filter='*Cuda*' --gtest_brief=1 2>&1 | tail -n 20
      echo "rc=${PIPESTATUS[0]}"
    done >"$out/treefix-sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|PASSED|FAILED|rc=" "$out/treefix-sanitizer.log"
    ;;
  treefix-bench)
    mkdir -p "$out/treefix"
    # shellcheck disable=SC2086
    "$cuda/bench_treefix" --out "$out/treefix" ${TREETRAV_TREEFIX_BENCH_ARGS:-} >"$out/treefix/bench.log" 2>&1
    echo "treefix-bench: rc=$?"
    tail -n 5 "$out/treefix/bench.log"
    ;;
  nbody)
    # One Plummer run on the GPU with per-phase timings (tree build, centre of
    # mass, forces), e.g. to compare the moments' method.
    "$cuda/treetrav" nbody --backend cuda --plummer "${TREETRAV_NBODY_N:-1000000}" --seed 1 --dt 0.001 \
      --steps "${TREETRAV_NBODY_STEPS:-10}" --softening 0.01 --theta 0.5 -q -o "$work/nbody-run" \
      --timings "$out/nbody-timings.json" >"$out/nbody.log" 2>&1
    echo "nbody: rc=$?"
    tail -n 3 "$out/nbody.log"
    ;;
  matrix)
    # shellcheck disable=SC2086
    dir=$out/${TREETRAV_MATRIX_DIR:-.}
    mkdir -p "$dir"
    timeout "${TREETRAV_MATRIX_TIMEOUT:-500}" "$cuda/treetrav-studies" bench --n 200000 --bodies 1000000 --repeats 5 \
      ${TREETRAV_ONLY:+--only $TREETRAV_ONLY} --sweep-depths ${TREETRAV_SWEEP_DEPTHS:-1 2 3 4 6 8 10 12} \
      --out "$dir" >"$dir/matrix.log" 2>&1
    echo "matrix ${TREETRAV_ONLY:-}: rc=$?"
    tail -n 3 "$dir/matrix.log"
    ;;
  hostbench)
    OMP_NUM_THREADS=16 TREETRAV_BENCH_N=${TREETRAV_BENCH_N:-100000} timeout 900 "$cpu/bench_host_traversals" \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_out="$out/host-bench.json" --benchmark_out_format=json >"$out/host-bench.log" 2>&1
    echo "hostbench: rc=$?"
    grep -E "median" "$out/host-bench.log" | head -40
    ;;
  esac
  echo "$step: $((SECONDS - started)) s"
done
rm -rf "$work"
