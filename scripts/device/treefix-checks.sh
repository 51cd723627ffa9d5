#!/usr/bin/env bash
# Treefix on the lent GPU machine (the `run` tool), from the repository root,
# with the CUDA build's treefix binaries carried in .device/bin-cuda-tf (and
# fallback shared libraries in .device/lib). Logs and results go to $OUT.
#   scripts/device/treefix-checks.sh [tests] [sanitize] [bench -- BENCH_ARGS...]
# tests: every test_* binary there; sanitize: compute-sanitizer memcheck of
# the Cuda cases of test_treefix and test_treefix_octree; bench:
# perf/bench_treefix into $OUT/treefix.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
bin=.device/bin-cuda-tf
if ldd "$bin/bench_treefix" | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ldd "$bin/bench_treefix" | grep "not found" && echo "missing libraries" >&2
export OMP_PROC_BIND=spread OMP_PLACES=threads

steps=()
bench_args=()
while (($#)); do
  if [[ $1 == -- ]]; then
    shift
    bench_args=("$@")
    break
  fi
  steps+=("$1")
  shift
done
((${#steps[@]})) || steps=(tests sanitize bench)

nvidia-smi -L >"$out/device.log" 2>&1
for step in "${steps[@]}"; do
  started=$SECONDS
  case $step in
  tests)
    for t in "$bin"/test_*; do
      echo "== $t"
      timeout 300 "$t" --gtest_brief=1 2>&1 | tail -n 30
      echo "rc=${PIPESTATUS[0]}"
    done >"$out/gpu-tests.log" 2>&1
    grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
    ;;
  sanitize)
    for t in test_treefix test_treefix_octree; do
      [[ -x $bin/$t ]] || continue
      echo "== compute-sanitizer --tool memcheck $t (Cuda)"
      timeout "${SANITIZE_TIMEOUT:-400}" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bin/$t" --gtest_filter='*Cuda*' --gtest_brief=1 2>&1 | tail -n 20
      echo "rc=${PIPESTATUS[0]}"
    done >"$out/sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|PASSED|FAILED|rc=" "$out/sanitizer.log"
    ;;
  bench)
    mkdir -p "$out/treefix"
    "$bin/bench_treefix" --out "$out/treefix" "${bench_args[@]}" >"$out/treefix/bench.log" 2>&1
    echo "bench rc=$?"
    tail -n 5 "$out/treefix/bench.log"
    ;;
  esac
  echo "$step: $((SECONDS - started)) s"
done
