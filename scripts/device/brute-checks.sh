#!/usr/bin/env bash
# Runs on the lent GPU machine (the `device` tool), from the repository root,
# with the CUDA build's binaries carried in .device/brute (bin: treetrav,
# test_brute_force, bench_brute, and treetrav-studies from the build's perf/;
# lib: shared libraries the image may lack;
# brute_torch.py, a copy of perf/brute_torch.py, when the checkout lacks it).
# Brute force and --strategy auto (issue 15): GPU tests, compute-sanitizer
# memcheck, a CLI check, the dimension sweep against the trees and PyTorch
# on the same data, and `treetrav-studies bench` for auto against the best fixed
# strategy. At most 8 files in $OUT (checks.log, sweep.csv, torch.csv, matrix/).
#   scripts/device/brute-checks.sh [tests] [cli] [sweep] [sanitize] [matrix]
# Env: BRUTE_DIMENSIONS (the sweep's dimensions, default 8,16,24,32,64,128,784),
# BRUTE_TREE_DIMENSION (no tree timed beyond it, default 16), BRUTE_TILE_MIB
# (tile memories swept at d = 128, default 128,512,4096; empty: none),
# BRUTE_TF32_DIMENSIONS (PyTorch also with TF32 there, default 128,784),
# BRUTE_TEST_FILTER (test_brute_force's cases, default all), BRUTE_SANITIZE_FILTER
# (those under memcheck, default the Cuda cases but the two largest).
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
dir=.device/brute
bin=$dir/bin
steps=${*:-tests cli sweep sanitize matrix}
log=$out/checks.log
work=$(mktemp -d)
export OMP_PROC_BIND=spread OMP_PLACES=threads
if ldd "$bin/treetrav" | grep -q "not found"; then
  export LD_LIBRARY_PATH=$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if ldd "$bin/treetrav" | grep -q "libcublas.*not found"; then
  cublas=$(find / -name 'libcublas.so.13*' -not -path '/proc/*' 2>/dev/null | head -n 1)
  [[ -n $cublas ]] && export LD_LIBRARY_PATH=$(dirname "$cublas"):$LD_LIBRARY_PATH
fi
{
  nvidia-smi -L
  ldd "$bin/treetrav" | grep -E "not found|cublas|hdf5"
} >>"$log" 2>&1

for step in $steps; do
  started=$SECONDS
  case $step in
  tests)
    echo "== test_brute_force (Serial, OpenMP, Cuda)" >>"$log"
    timeout 150 "$bin/test_brute_force" --gtest_filter="${BRUTE_TEST_FILTER:-*}" --gtest_brief=1 >>"$log" 2>&1
    echo "tests: rc=$?" | tee -a "$log"
    ;;
  sanitize)
    echo "== compute-sanitizer --tool memcheck test_brute_force (Cuda)" >>"$log"
    timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/test_brute_force" \
      --gtest_filter="${BRUTE_SANITIZE_FILTER:-*Cuda*:-*HighDimensional*:*EqualsTheTreeStrategies*}" \
      --gtest_brief=1 >>"$log" 2>&1
    echo "memcheck: rc=$?" | tee -a "$log"
    grep -E "ERROR SUMMARY" "$log" | tail -n 1
    ;;
  cli)
    {
      echo "== CLI on the GPU: auto, brute and a tree agree"
      "$bin/treetrav" generate --dist covtype7 -n 200000 --seed 1 -o "$work/ref.h5"
      "$bin/treetrav" generate --dist covtype7 -n 200000 --seed 2 -o "$work/q.h5"
      for s in auto brute fsm; do
        "$bin/treetrav" knn --backend cuda --strategy $s --reference "$work/ref.h5" --queries "$work/q.h5" -k 8 \
          -o "$work/knn-$s.h5"
      done
      "$bin/treetrav" pc --backend cuda --reference "$work/ref.h5" --self -r 0.05 -o "$work/pc-auto.h5"
      "$bin/treetrav" pc --backend cuda --strategy brute --reference "$work/ref.h5" --self -r 0.05 \
        -o "$work/pc-brute.h5"
      "$bin/treetrav" generate --dist clustered --dim 784 --clusters 10 -n 20000 --seed 3 -o "$work/ref784.h5"
      "$bin/treetrav" generate --dist clustered --dim 784 --clusters 10 -n 2000 --seed 4 -o "$work/q784.h5"
      "$bin/treetrav" knn --backend cuda --reference "$work/ref784.h5" --queries "$work/q784.h5" -k 10 \
        -o "$work/knn784-auto.h5"
      "$bin/treetrav" knn --backend openmp --strategy brute --reference "$work/ref784.h5" \
        --queries "$work/q784.h5" -k 10 -o "$work/knn784-openmp.h5"
      python3 - "$work" <<'EOF'
import sys, h5py, numpy as np
w = sys.argv[1]
def same(a, b):
    fa, fb = h5py.File(f"{w}/{a}", "r"), h5py.File(f"{w}/{b}", "r")
    ok = all(np.array_equal(fa["Results"][k][:], fb["Results"][k][:]) for k in fa["Results"])
    print(f"{a} == {b}: {ok} (auto picked {fa['RunMetadata'].attrs.get('strategy')})")
    return ok
ok = same("knn-auto.h5", "knn-brute.h5") & same("knn-fsm.h5", "knn-brute.h5") & same("pc-auto.h5", "pc-brute.h5")
ok &= same("knn784-auto.h5", "knn784-openmp.h5")
sys.exit(0 if ok else 1)
EOF
    } >>"$log" 2>&1
    echo "cli: rc=$?" | tee -a "$log"
    ;;
  sweep)
    echo "== bench_brute: kNN k=10, 1M x 100k, d = 8..784" >>"$log"
    dims=${BRUTE_DIMENSIONS:-8,16,24,32,64,128,784}
    tiles=()
    [[ -z ${BRUTE_TILE_MIB-128,512,4096} ]] || tiles=(--tile-mib "${BRUTE_TILE_MIB-128,512,4096}")
    timeout 240 "$bin/bench_brute" --n-reference 1000000 --n-queries 100000 -k 10 --dimensions "$dims" \
      --max-tree-dimension "${BRUTE_TREE_DIMENSION:-16}" --full-tree-dimension "${BRUTE_FULL_TREE_DIMENSION:-16}" "${tiles[@]}" --tile-dimensions 128 --repeats 3 \
      --out "$work/sweep" --export "$work/data" >>"$log" 2>&1
    echo "sweep: rc=$?" | tee -a "$log"
    cp "$work/sweep/sweep.csv" "$out/"  # sweep.md: the same rows
    echo "== PyTorch GEMM + topk on the same data" >>"$log"
    torch_script=perf/brute_torch.py
    [[ -f $torch_script ]] || torch_script=$dir/brute_torch.py
    PYTHONUNBUFFERED=1 timeout 150 python3 "$torch_script" --data "$work/data" --dimensions "$dims" \
      --tf32-dimensions "${BRUTE_TF32_DIMENSIONS-128,784}" --n-reference 1000000 --n-queries 100000 -k 10 --repeats 2 --out "$out/torch.csv" \
      >>"$log" 2>&1
    echo "torch: rc=$?" | tee -a "$log"
    rm -rf "$work/data"
    ;;
  matrix)
    echo "== treetrav-studies bench: search apps, with brute and auto" >>"$log"
    # Written as it goes, straight into $OUT: a run cut short still returns its rows.
    timeout "${BRUTE_MATRIX_TIMEOUT:-240}" "$bin/treetrav-studies" bench --n 200000 --repeats 3 --only pc,nn,knn,vp,bt \
      --out "$out/matrix" >>"$log" 2>&1
    echo "matrix: rc=$?" | tee -a "$log"
    rm -f "$out/matrix/depth-sweep.csv"  # no sweep asked for
    ;;
  esac
  echo "== $step took $((SECONDS - started)) s" | tee -a "$log"
done
rm -rf "$work"
grep -E "rc=|PASSED|FAILED|ERROR SUMMARY|==|auto picked|brute [0-9]" "$log" | tail -n 60
