#!/usr/bin/env bash
# The GPU search engine on the lent GPU machine (the `device` tool), from the
# repository root, with binaries built here and carried in .device/search/:
#   bin-cuda/ (bench_search and tests of a CUDA build), bin-cpu/bench_search (OpenMP),
#   peers/ (cudakdtree_driver, arborx_driver: built against your own checkouts),
#   lib/ (shared libraries the image lacks), whl/ (pykdtree, jztree wheels).
# Any of these may come as DIR.tar.xz (unpacked here first). Logs and tables go to $OUT.
#   scripts/device/search-checks.sh [tests] [sanitize] [compare] [seven] [ncu] [kernels] [build-kernels] [batch]
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
dir=${TREETRAV_DEVICE_DIR:-.device/search}
cuda=$dir/bin-cuda
for archive in "$dir"/*.tar.xz; do
  [[ -e $archive ]] || continue
  mkdir -p "${archive%.tar.xz}" && tar xJf "$archive" -C "${archive%.tar.xz}"
done
# Only the libraries the image lacks (ldd's "not found", followed three levels
# down), so the image's own stay first for everything else.
mkdir -p /tmp/tt-lib
export LD_LIBRARY_PATH=/tmp/tt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for _ in 1 2 3; do
  for binary in "$dir"/bin-cuda/* "$dir"/bin-cpu/*; do
    for missing in $(ldd "$binary" 2>/dev/null | awk '/not found/ {print $1}'); do
      cp -n "$dir/lib/$missing" /tmp/tt-lib/ 2>/dev/null
    done
  done
done
ldd "$dir"/bin-cuda/bench_search | grep "not found" && echo "missing libraries" >&2
export OMP_PROC_BIND=spread OMP_PLACES=threads
if ls $dir/whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $dir/whl/*.whl &&
    export PYTHONPATH=/tmp/site
fi
work=$(mktemp -d)
steps=${*:-tests sanitize compare seven ncu kernels}
# The headline shape, once: 1M uniform references in a 100^3 box, 1M queries
# uniform in the inscribed ball (r.f32, q.f32 in $work).
sphere_shape() {
  [[ -f $work/q.f32 ]] && return
  python3 - "$work" <<'EOF'
import sys, numpy as np
rng = np.random.default_rng(1); n = 1000000
(rng.random((n, 3)) * 100).astype(np.float32).tofile(sys.argv[1] + "/r.f32")
v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
(50 + v * (50 * rng.random(n) ** (1 / 3))[:, None]).astype(np.float32).tofile(sys.argv[1] + "/q.f32")
EOF
}
# Leaf sizes of the 7-D step (16 unless given); the compare and per-kernel
# steps take the library's default unless TREETRAV_LEAF_SIZES names one.
leaves=${TREETRAV_LEAF_SIZES:-16}
leaf_option=${TREETRAV_LEAF_SIZES:+--leaf-size ${TREETRAV_LEAF_SIZES%% *}}
# Every kernel of one cold bench_search pass over the phase $3 (reference file
# $1, queries $2): its duration, registers, local-memory traffic and active
# warps, then the kernels' total.
kernel_table() {
  timeout 200 ncu --clock-control none --kernel-name-base demangled --csv \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$cuda/bench_search" --reference "$1" --queries "$2" -k 10 --radius 1.3365 $leaf_option \
    --phases "$3" --warmup 0 --repeats 1 2>/dev/null | grep '^"' >"$work/ncu.csv"
  python3 - "$work/ncu.csv" <<'PY'
import csv, sys
kernels = {}
for row in csv.DictReader(open(sys.argv[1])):
    kernels.setdefault((int(row["ID"]), row["Kernel Name"]), {})[row["Metric Name"]] = row["Metric Value"].replace(",", "")
total = 0
for (i, name), m in sorted(kernels.items()):
    short = name.split("treetrav::")[-1].split("<")[0] if "treetrav::" in name else name.split("<")[0]
    local = [int(float(m[f"l1tex__t_bytes_pipe_lsu_mem_local_op_{op}.sum"])) >> 20 for op in ("ld", "st")]
    us = float(m["gpu__time_duration.sum"]) / 1e3
    total += us
    print(f"{i:4d} {us:9.1f} us  regs {m['launch__registers_per_thread']:>3}"
          f"  local ld/st {local[0]:5d}/{local[1]:5d} MiB"
          f"  warps {float(m['sm__warps_active.avg.pct_of_peak_sustained_active']):5.1f}%  {short}")
print(f"     {total:9.1f} us  all kernels")
PY
}

for step in $steps; do
  case $step in
  tests)
    for t in ${TREETRAV_TESTS:-test_trees test_search_apps test_sfc_order}; do
      echo "== $t (Cuda)"
      timeout 600 "$cuda/$t" --gtest_filter='*Cuda*' --gtest_brief=1 2>&1 | tail -n 25
      echo "rc=${PIPESTATUS[0]}"
    done >"$out/gpu-tests.log" 2>&1
    grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
    ;;
  sanitize)
    # Tree builds (sort, radix nodes, bottom-up bounds with atomic arrivals),
    # kNN and radius walks under memcheck; the same and the Morton sorts'
    # shared-memory box reductions (test_sfc_order) under racecheck, but the
    # radius lists (racecheck ran past 240 s there).
    {
      for run in ${TREETRAV_SANITIZE_RUNS:-memcheck:test_search_apps:'*Cuda*Chunked*' \
        memcheck:test_search_apps:'*Cuda*RadiusLists*' memcheck:test_trees:'*Cuda*' \
        memcheck:test_sfc_order:'*Cuda*' racecheck:test_search_apps:'*Cuda*Chunked*' \
        racecheck:test_trees:'*Cuda*' racecheck:test_sfc_order:'*Cuda*'}; do
        IFS=: read -r tool test filter <<<"$run"
        echo "== compute-sanitizer --tool $tool $test $filter"
        timeout ${TREETRAV_SANITIZE_TIMEOUT:-240} compute-sanitizer --tool "$tool" --error-exitcode 9 \
          "$cuda/$test" --gtest_filter="$filter" 2>&1 | tail -n 8
        echo "rc=${PIPESTATUS[0]}"
      done
    } >"$out/sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|RACECHECK SUMMARY|rc=" "$out/sanitizer.log"
    ;;
  compare)
    echo "nproc $(nproc), OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
    peers=()
    [[ -x $dir/peers/cudakdtree_driver ]] && peers+=(--cudakdtree $dir/peers/cudakdtree_driver)
    [[ -x $dir/peers/arborx_driver ]] && peers+=(--arborx $dir/peers/arborx_driver)
    PYTHONUNBUFFERED=1 timeout 560 python3 ${TREETRAV_COMPARE:-perf/peers/compare.py} --sizes ${TREETRAV_SIZES:-1e4 1e5 1e6 1e7} \
      --treetrav "$cuda/bench_search" --treetrav-cpu $dir/bin-cpu/bench_search "${peers[@]}" \
      ${TREETRAV_LEAF_SIZES:+--leaf-size $TREETRAV_LEAF_SIZES} --strategies ${TREETRAV_STRATEGIES:-autoropes} --cpu-max ${TREETRAV_CPU_MAX:-1e6} \
      --repeats ${TREETRAV_REPEATS:-20} --work "$work" --out "$out/compare" 2>&1 | tee "$out/compare.txt" | tail -n 60
    ;;
  seven)
    # The papers' 7-D shapes, 200k references + 200k queries, k = 8: uniform
    # (Rand_Dim7) and a 64-cluster Gaussian mixture in the unit cube.
    python3 - "$work" <<'PY'
import sys, numpy as np
for name, seed in (("uniform", 1), ("clustered", 2)):
    rng = np.random.default_rng(seed)
    centres, widths = rng.random((64, 7)), 0.02 + 0.08 * rng.random(64)
    for part in ("ref", "q"):
        n = 200000
        if name == "uniform":
            x = rng.random((n, 7))
        else:
            c = rng.integers(0, 64, n)
            x = centres[c] + rng.normal(size=(n, 7)) * widths[c, None]
        x.astype(np.float32).tofile(f"{sys.argv[1]}/{name}-{part}.f32")
PY
    for name in uniform clustered; do
      for leaf in $leaves; do
        echo "== $name 7-D, 200k x 200k, k = 8, leaf $leaf"
        "$cuda/bench_search" --reference "$work/$name-ref.f32" --queries "$work/$name-q.f32" --dimension 7 -k 8 \
          --radius 0.05 --leaf-size $leaf --phases build knn_sorted knn_presorted knn_unsorted \
          --json "$out/seven-$name-$leaf.json"
      done
    done 2>&1 | tee "$out/seven.txt"
    ;;
  ncu)
    # Global-memory sectors per request of the kNN kernel, sorted queries.
    sphere_shape
    timeout 300 ncu --kernel-name-base demangled --kernel-name regex:AutoropesKernel --launch-skip 2 --launch-count 1 \
      --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,gpu__time_duration.sum \
      "$cuda/bench_search" --reference "$work/r.f32" --queries "$work/q.f32" -k 10 $leaf_option --phases knn_presorted \
      --warmup 1 --repeats 2 >"$out/ncu.txt" 2>&1
    echo "ncu: rc=$?"
    grep -E "Autoropes|sectors|requests|hit_rate|bytes|warps_active|thread_inst|duration" "$out/ncu.txt" | head -20
    ;;
  kernels)
    # Every kernel of each phase with its duration, registers and local-memory
    # traffic (one cold pass per phase, 1M box references / 1M sphere queries).
    sphere_shape
    for phase in build sort knn_presorted knn_unsorted radius_count radius_search; do
      echo "== $phase"
      kernel_table "$work/r.f32" "$work/q.f32" $phase
    done 2>&1 | tee "$out/kernels.txt"
    ;;
  build-kernels)
    # Every kernel of the BVH build with its duration, 1M and 10M uniform
    # points in a box (the phase where ArborX leads at 10M).
    python3 - "$work" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(1)
for n in (1000000, 10000000):
    (rng.random((n, 3)) * 100).astype(np.float32).tofile(f"{sys.argv[1]}/box-{n}.f32")
PY
    for n in 1000000 10000000; do
      echo "== build, $n uniform points (bench_search builds twice: its tree and the timed one)"
      kernel_table "$work/box-$n.f32" "$work/box-1000000.f32" build
    done 2>&1 | tee "$out/build-kernels.txt"
    ;;
  batch)
    # A batch job larger than one chunk through the CLI (issue #19, item 4):
    # kNN k = 10 of 100M uniform queries against 10M uniform points, streamed
    # in chunks into the HDF5 output, under a pseudo-terminal (script) so the
    # progress bar shows; then 4,000 sampled rows against scipy's cKDTree, and
    # 10M of the queries in chunks of 1M against one chunk, file for file.
    n_ref=${TREETRAV_BATCH_REFERENCE:-10000000} n_queries=${TREETRAV_BATCH_QUERIES:-100000000}
    batch=${TREETRAV_BATCH_DIR:-$work}
    mkdir -p "$batch"
    {
      df -h "$batch" | tail -n 1
      time "$cuda/treetrav" generate --dist uniform -n "$n_ref" --dim 3 --seed 1 -o "$batch/ref.h5"
      time "$cuda/treetrav" generate --dist uniform -n "$n_queries" --dim 3 --seed 2 -o "$batch/q.h5"
      ls -l "$batch"
      echo "== treetrav knn, $n_queries queries x $n_ref points, k = 10"
      timing=$(command -v /usr/bin/time >/dev/null && echo "/usr/bin/time -v")
      script -qefc "$timing $cuda/treetrav knn --reference $batch/ref.h5 --queries $batch/q.h5 -k 10 \
        --sort sfc -o $batch/knn.h5" "$out/batch-terminal.txt" >/dev/null
      echo "rc=$?"
      tr '\r' '\n' <"$out/batch-terminal.txt" | grep -E "query|knn:|Maximum resident|Elapsed" | tail -n 12
      ls -l "$batch/knn.h5"
      timeout 300 python3 - "$batch" <<'PY'
import sys, h5py, numpy as np
from scipy.spatial import cKDTree
d = sys.argv[1]
reference = h5py.File(d + "/ref.h5")["/Points/Coordinates"][()]
queries = h5py.File(d + "/q.h5")["/Points/Coordinates"]
results = h5py.File(d + "/knn.h5")["/Results"]
rows = np.sort(np.random.default_rng(7).choice(queries.shape[0], 4000, replace=False))
q = queries[rows].astype(np.float64)
idx = results["NeighborIndices"][rows]
expected, _ = cKDTree(reference).query(q, k=10, workers=-1)
got = np.sort(np.sqrt(((reference[idx].astype(np.float64) - q[:, None, :]) ** 2).sum(-1)), axis=1)
bad = int((np.abs(got - expected) > 1e-5 * np.maximum(1.0, expected)).any(axis=1).sum())
print(f"check: {bad} of {len(rows)} sampled rows differ from scipy's cKDTree")
PY
      echo "== 10M of the queries: chunks of 1M against one chunk"
      python3 - "$batch" <<'PY'
import sys, h5py
d = sys.argv[1]
with h5py.File(d + "/q.h5") as f, h5py.File(d + "/q10.h5", "w") as g:
    g.create_dataset("/Points/Coordinates", data=f["/Points/Coordinates"][:10000000])
PY
      rm -f "$batch/q.h5" "$batch/knn.h5"
      for chunk in 1000000 10000000; do
        "$cuda/treetrav" knn --reference "$batch/ref.h5" --queries "$batch/q10.h5" -k 10 --sort sfc --chunk $chunk \
          -o "$batch/knn-$chunk.h5" | tail -n 1
      done
      python3 - "$batch" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
a, b = h5py.File(d + "/knn-1000000.h5")["/Results"], h5py.File(d + "/knn-10000000.h5")["/Results"]
same = all(np.array_equal(a[name][()], b[name][()]) for name in ("NeighborIndices", "NeighborDistances"))
print("chunks of 1M equal one chunk: " + ("yes" if same else "NO"))
PY
    } >"$out/batch.txt" 2>&1
    cat "$out/batch.txt"
    ;;
  esac
done
rm -rf "$work"
