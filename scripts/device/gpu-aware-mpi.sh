#!/usr/bin/env bash
# Distributed searches over a GPU-aware MPI (the `device` tool, from the
# repository root): PyPI's Open MPI 5 over a CUDA-enabled UCX
# (.device/gpu-mpi.tar.xz, scripts/device/pack-gpu-mpi.sh), with the CLI's
# exchanges handing MPI the device arrays (--gpu-aware-mpi on) against the
# same MPI fed through page-locked host staging (off). Carried in .device/ as
# for mpi-scaling.sh (kokkos-cuda, kk-cuda, mpi-prefix.tar.xz for parallel
# HDF5) and gpu-mpi.tar.xz. The CLI and test_distributed are built there with
# that MPI unless TREETRAV_BINARY names a CLI. Ranks share the GPUs round
# robin (one GPU: all of them, under MPS, as real runs would not; the A/B
# of the transport holds on any count). With P = TREETRAV_RANKS (default 2)
# and N = TREETRAV_PER_RANK (default 1M):
#   tests      test_distributed's Cuda cases on P ranks, on and off;
#   kNN        P x N uniform points in [0, 100]^3 against P x N queries in the
#              inscribed ball, k = 10, sorted: one rank, then P ranks off and
#              on (TREETRAV_REPEATS, default 3), search_s from the files;
#   identical  every P-rank file (kNN, pc, radius lists; kNN with --chunk a
#              third of a rank's block) equal to one rank's;
#   N-body     a Plummer sphere (TREETRAV_BODIES, default 1M), autoropes and
#              group walks: one rank, then P ranks off and on; step times
#              and the last snapshot against one rank's;
#   sanitizer  compute-sanitizer memcheck on P ranks, a small kNN, on.
# Logs and summary.txt in $OUT.
set -u
export TREETRAV_MPI_STACK=ucx TREETRAV_DEVICE_TESTS=${TREETRAV_DEVICE_TESTS-1}
# shellcheck source=scripts/device/mpi-env.sh
source "$PWD/scripts/device/mpi-env.sh"
ranks=${TREETRAV_RANKS:-2}
per_rank=${TREETRAV_PER_RANK:-1000000}
n=$((ranks * per_rank))
work=$(mktemp -d)
summary=$out/summary.txt
# Ranks that share a GPU need MPS, else each waits out the others' time slices.
if ((ranks > gpus_here)); then
  export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && echo "MPS on: $ranks ranks on $gpus_here GPU(s)" | tee -a "$summary"
fi
launch() { # ranks, command...
  local p=$1
  shift
  timeout 300 "$mpirun" -np "$p" --bind-to none "$@" # one node: the ranks inherit this environment
}
quiet() { grep -v -E "dlopen error|Perhaps a missing symbol|^ *$"; }

python3 - "$work" "$n" 20000 <<'EOF'
import sys, h5py, numpy as np
def write(path, x):
    with h5py.File(path, "w") as f:
        f.create_dataset("/Points/Coordinates", data=x.astype(np.float32))
for n in map(int, sys.argv[2:]):
    rng = np.random.default_rng(n)
    write(f"{sys.argv[1]}/box{n}.h5", rng.random((n, 3)) * 100)
    v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
    write(f"{sys.argv[1]}/ball{n}.h5", 50 + v * (50 * rng.random(n) ** (1 / 3))[:, None])
EOF

# Which UCX settings let device arrays through here, the first that works
# kept for the runs below: mpi-env.sh's (the memory-type cache off), the
# cache on (UCX as it is: failed on one H200, perf/results/mpi/README.md),
# UCX's older protocols.
for v in "" "UCX_MEMTYPE_CACHE=y" "UCX_PROTO_ENABLE=n" none; do
  [[ $v == none ]] && { echo "GPU-aware: no UCX setting worked" | tee -a "$summary"; break; }
  rm -f "$work/variant.h5"
  # shellcheck disable=SC2086
  env $v timeout 60 "$mpirun" -np "$ranks" --bind-to none "$treetrav" knn --reference "$work/box20000.h5" \
    --queries "$work/ball20000.h5" -k 10 --sort sfc --strategy autoropes --gpu-aware-mpi on \
    -o "$work/variant.h5" >>"$out/runs.log" 2>&1
  code=$?
  echo "GPU-aware on, ${v:-the UCX settings of mpi-env.sh}: exit $code" | tee -a "$summary"
  if ((code == 0)); then
    # shellcheck disable=SC2163,SC2086
    [[ -n $v ]] && export $v
    break
  fi
done

csv=$out/knn.csv
echo "ranks,gpu_aware,n,repeat,build_s,traverse_s,search_s" >"$csv"
knn() { # ranks, on|off, size, repeat, output
  local p=$1 mode=$2 size=$3 repeat=$4 output=$5
  rm -f "$output"
  launch "$p" "$treetrav" knn --reference "$work/box$size.h5" --queries "$work/ball$size.h5" -k 10 \
    --sort sfc --strategy autoropes --gpu-aware-mpi "$mode" -o "$output" 2>&1 | quiet >>"$out/runs.log"
  python3 - "$output" "$p" "$mode" "$size" "$repeat" >>"$csv" <<'EOF'
import sys, h5py
output, *row = sys.argv[1:]
try:
    a = h5py.File(output, "r")["RunMetadata"].attrs
    print(",".join(row + [f"{a['build_s']:.4f}", f"{a['traverse_s']:.4f}", f"{a['search_s']:.4f}"]))
except Exception as e:
    print(",".join(row + ["failed", "", ""]))
EOF
}
knn 1 off "$n" 1 "$work/knn-1.h5"
for repeat in $(seq "${TREETRAV_REPEATS:-3}"); do
  for mode in off on; do knn "$ranks" "$mode" "$n" "$repeat" "$work/knn-$mode.h5"; done
done
cat "$csv"
# --chunk over ranks: each rank's block in about three calls, GPU-aware on.
launch "$ranks" "$treetrav" knn --reference "$work/box$n.h5" --queries "$work/ball$n.h5" -k 10 --sort sfc \
  --strategy autoropes --gpu-aware-mpi on --chunk $((per_rank / 3 + 1)) -o "$work/knn-chunked.h5" 2>&1 | quiet >>"$out/runs.log"
for app in pc radius; do
  for p in 1 "$ranks"; do
    launch "$p" "$treetrav" "$app" --reference "$work/box$n.h5" --queries "$work/ball$n.h5" -r 1 --sort sfc \
      --strategy autoropes --gpu-aware-mpi on -o "$work/$app-$p.h5" 2>&1 | quiet >>"$out/runs.log"
  done
done
python3 - "$work" "$ranks" "$csv" <<'EOF' | tee -a "$summary"
import csv, statistics, sys, h5py, numpy as np
work, p, table = sys.argv[1], sys.argv[2], sys.argv[3]
def same(a, b, keys):
    try:
        x, y = (h5py.File(f"{work}/{f}.h5", "r")["Results"] for f in (a, b))
        return all(np.array_equal(x[k][()], y[k][()]) for k in keys)
    except Exception as e:
        return f"failed ({e})"
for mode in ("off", "on", "chunked"):
    print(f"kNN: {p} ranks, GPU-aware {'on, --chunk a third of a block' if mode == 'chunked' else mode}, "
          "equal to 1 rank (every index and distance):",
          same("knn-1", f"knn-{mode}", ("NeighborIndices", "NeighborDistances")))
print(f"pc: {p} ranks (on) equal to 1 rank:", same("pc-1", f"pc-{p}", ("Counts",)))
print(f"radius lists: {p} ranks (on) equal to 1 rank:",
      same("radius-1", f"radius-{p}", ("ListOffsets", "ListIndices", "ListDistances")))
rows = list(csv.DictReader(open(table)))
for mode in ("off", "on"):
    t = [float(r["search_s"]) for r in rows if r["ranks"] == p and r["gpu_aware"] == mode and r["search_s"]]
    if t:
        print(f"kNN search_s, {p} ranks, GPU-aware {mode}: median {statistics.median(t):.4f} s of {t}")
one = [float(r["search_s"]) for r in rows if r["ranks"] == "1" and r["search_s"]]
print(f"kNN search_s, 1 rank: {one}")
EOF

# N-body: a Plummer sphere of TREETRAV_BODIES (default 1M) bodies, 8 steps,
# quadrupoles, theta 0.6, re-cut every 4; one rank, then P ranks off and on.
bodies=${TREETRAV_BODIES:-1000000}
"$treetrav" generate --dist plummer -n "$bodies" --seed 3 -o "$work/plummer.h5" >/dev/null
nbody() { # ranks, on|off, walk
  local p=$1 mode=$2 walk=$3 dir=$work/nbody-$1-$2-$3 strategy=(--strategy "$3")
  [[ $walk == group ]] && strategy+=(--group-size 64)
  launch "$p" "$treetrav" nbody --ics "$work/plummer.h5" --steps 8 --dt 0.0005 --softening 0.01 \
    --multipole quadrupole --theta 0.6 --potential-theta 0.6 --rebalance-every 4 "${strategy[@]}" \
    --gpu-aware-mpi "$mode" --quiet -o "$dir" --timings "$dir.json" 2>&1 | quiet >>"$out/runs.log"
  python3 - "$dir" "$work/nbody-1-off-$walk" "$p" "$mode" "$walk" <<'EOF' | tee -a "$summary"
import json, sys
run, one, p, mode, walk = sys.argv[1:]
try:
    t = json.load(open(run + ".json"))
except Exception as e:
    sys.exit(print(f"nbody {walk}, {p} ranks, GPU-aware {mode}: failed ({e})"))
per = t["seconds_per_force_evaluation"]
line = (f"nbody {walk:9s} {p} rank(s), GPU-aware {mode:3s}: step {1e3 * t['seconds_per_step_median']:7.2f} ms, "
        f"essential tree {1e3 * per['tree_build']:6.2f} ms, forces {1e3 * per['forces']:6.2f} ms a force evaluation")
if p != "1":
    sys.path.insert(0, "scripts/device")
    from snapshot_difference import described
    line += ", " + described(one, run)
print(line)
EOF
}
for walk in ${TREETRAV_NBODY_WALKS:-autoropes group}; do
  nbody 1 off "$walk"
  for mode in off on; do nbody "$ranks" "$mode" "$walk"; done
done

tests=${treetrav%/treetrav}/tests/test_distributed
if [[ -x $tests ]]; then
  for mode in off on; do
    flag=
    [[ $mode == on ]] && flag=--gpu-aware-mpi
    launch "$ranks" "$tests" --gtest_filter='*Cuda*' --gtest_color=no $flag >"$out/test-distributed-$mode.log" 2>&1
    echo "test_distributed, Cuda cases, $ranks ranks, GPU-aware $mode: rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$out/test-distributed-$mode.log" | sort -u | tr '\n' ' ')" |
      tee -a "$summary"
  done
fi

if [[ -z ${TREETRAV_SKIP_SANITIZER:-} ]]; then
  # UCX probes the CUDA driver (calls that fail by design: no context yet,
  # host pointers), which the sanitizer counts as API errors: memory errors only.
  launch "$ranks" compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 --print-limit 5 "$treetrav" knn \
    --reference "$work/box20000.h5" --queries "$work/ball20000.h5" -k 10 --sort sfc --strategy autoropes \
    --gpu-aware-mpi on -o "$work/sanitized.h5" >"$out/sanitizer.log" 2>&1
  echo "compute-sanitizer memcheck, kNN 20k on $ranks ranks, GPU-aware on: rc=$? $(grep -c 'ERROR SUMMARY: 0 errors' "$out/sanitizer.log") ranks with 0 errors" |
    tee -a "$summary"
fi
[[ -n ${CUDA_MPS_PIPE_DIRECTORY:-} ]] && echo quit | nvidia-cuda-mps-control
echo "done in $((SECONDS - started)) s" | tee -a "$summary"
