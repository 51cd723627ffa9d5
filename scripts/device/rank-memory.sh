#!/usr/bin/env bash
# Memory per rank for the same total input on 1, 2 and 4 ranks (the `device`
# tool, from the repository root; issue 32's memory table). Carried in
# .device/ as for gpu-aware-mpi.sh (kokkos-cuda, kk-cuda, mpi-prefix.tar.xz,
# gpu-mpi.tar.xz) and kp_space_time_stack.so (kokkos-tools' space-time-stack,
# built without MPI: each process prints its own). Ranks share the node's
# GPUs round robin (one GPU: all of them, under MPS); what a rank allocates
# does not depend on that. Per rank:
#   rss_mib      peak host RSS (getrusage of the rank's process);
#   device_mib   Kokkos' high water of its CUDA space (the data: trees,
#                queries, answers, exchanged arrays, workspaces);
#   pinned_mib   Kokkos' high water of its page-locked host space (staging);
#   host_mib     Kokkos' high water of its host space (read points, results
#                on the host, N-body's host copies);
#   process_mib  the process's device memory by nvidia-smi, sampled (the
#                data and the CUDA context, libraries' handles, MPS or not).
# Jobs: kNN of TREETRAV_MEMORY_N (default 8M) uniform points in [0, 100]^3
# against as many queries in the inscribed ball, k = 10, sorted, the
# exchanges unstaged (--gpu-aware-mpi on) and staged (off); N-body, a
# Plummer sphere of TREETRAV_MEMORY_BODIES (default 4M), group walks of 64,
# quadrupoles, 2 steps, unstaged; and kNN with the job's queries in flight
# held to one rank's default chunk (4,194,304): --chunk 4194304 / P a rank
# (transport "chunk"); and the fixed footprint, the same kNN of 1000 points
# (job "fixed": the CUDA context, the libraries, MPI and UCX), which the
# summary takes off each job's figures at the same rank count. CSV and the
# high-water allocations of each run in $OUT/memory/. The space-time-stack
# tool: scripts/device/build-space-time-stack.sh.
set -u
export TREETRAV_MPI_STACK=ucx
# shellcheck source=scripts/device/mpi-env.sh
source "$PWD/scripts/device/mpi-env.sh"
n=${TREETRAV_MEMORY_N:-8000000}
bodies=${TREETRAV_MEMORY_BODIES:-4000000}
work=$(mktemp -d)
# TREETRAV_MEMORY_JOBS: which of them (a call's time may not hold all).
jobs=" ${TREETRAV_MEMORY_JOBS:-fixed knn-on knn-off knn-chunk nbody} "
wanted() { [[ $jobs == *" $1 "* ]]; }
dir=$out/memory
mkdir -p "$dir"
tool=$root/.device/kp_space_time_stack.so
export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
((gpus_here < 4)) && nvidia-cuda-mps-control -d && echo "MPS on: ranks share $gpus_here GPU(s)" | tee -a "$dir/summary.txt"

python3 - "$work" "$n" <<'EOF'
import sys, h5py, numpy as np
n = int(sys.argv[2])
def write(path, x):
    with h5py.File(path, "w") as f:
        f.create_dataset("/Points/Coordinates", data=x.astype(np.float32))
rng = np.random.default_rng(n)
write(f"{sys.argv[1]}/box.h5", rng.random((n, 3)) * 100)
v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
write(f"{sys.argv[1]}/ball.h5", 50 + v * (50 * rng.random(n) ** (1 / 3))[:, None])
write(f"{sys.argv[1]}/box-small.h5", rng.random((1000, 3)) * 100)
write(f"{sys.argv[1]}/ball-small.h5", rng.random((1000, 3)) * 100)
EOF
wanted nbody && "$treetrav" generate --dist plummer -n "$bodies" --seed 3 -o "$work/plummer.h5" >/dev/null

# A rank: its output into PREFIX.RANK.log, its peak RSS (KiB) into PREFIX.RANK.rss.
cat >"$work/rank.py" <<'EOF'
import os, resource, subprocess, sys
prefix = f"{sys.argv[1]}.{os.environ.get('OMPI_COMM_WORLD_RANK', '0')}"
with open(prefix + ".log", "w") as log:
    code = subprocess.run(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT).returncode
with open(prefix + ".rss", "w") as f:
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=f)
sys.exit(code)
EOF
(while :; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null; sleep 0.05; done \
  >"$work/gpu-memory.csv") &
sampler=$!

csv=$dir/rank-memory.csv
echo "job,transport,ranks,rank,rc,rss_mib,device_mib,pinned_mib,host_mib,process_mib" >"$csv"
measure() { # job, transport, ranks, command...
  local job=$1 transport=$2 p=$3 prefix=$work/$1-$2-$3 first
  shift 3
  first=$(wc -l <"$work/gpu-memory.csv")
  KOKKOS_PROFILE_LIBRARY=$tool timeout 300 "$mpirun" -np "$p" --bind-to none python3 "$work/rank.py" "$prefix" "$@" \
    >"$prefix.mpirun.log" 2>&1
  echo "$job $transport $p ranks: rc=$?" >>"$dir/summary.txt"
  sleep 0.3
  for f in "$prefix".*.log; do
    [[ $f == *.mpirun.log ]] && continue
    r=${f%.log}
    r=${r##*.}
    cp "$f" "$dir/$job-$transport-$p-rank$r.txt"
  done
  python3 - "$prefix" "$job" "$transport" "$p" "$work/gpu-memory.csv" "$first" >>"$csv" <<'EOF'
import glob, re, sys
prefix, job, transport, p, samples, first = sys.argv[1:]
peak = {}
for row in open(samples).read().splitlines()[int(first):]:
    parts = [x.strip() for x in row.split(",")]
    if len(parts) == 2 and parts[1].isdigit():
        peak[parts[0]] = max(peak.get(parts[0], 0), int(parts[1]))
processes = sorted(peak.values(), reverse=True)
for r in range(int(p)):
    text = open(f"{prefix}.{r}.log").read()
    spaces = dict(re.findall(r"KOKKOS (\w+) SPACE:\n=+ *\nMAX MEMORY ALLOCATED: ([0-9.e+]+) kB", text))
    rss = int(open(f"{prefix}.{r}.rss").read()) / 1024
    mib = lambda name: f"{float(spaces[name]) / 1024:.0f}" if name in spaces else ""
    rc = "0" if "Wrote" in text or "wrote" in text else "?"
    # nvidia-smi names processes, not ranks: the ranks' figures, largest first.
    process = str(processes[r]) if r < len(processes) else ""
    print(",".join([job, transport, p, str(r), rc, f"{rss:.0f}", mib("CUDA"), mib("CUDAHOSTPINNED"), mib("HOST"),
                    process]))
EOF
}
for p in 1 2 4; do
  wanted fixed && measure fixed on "$p" "$treetrav" knn --reference "$work/box-small.h5" \
    --queries "$work/ball-small.h5" -k 10 --sort sfc --strategy autoropes --gpu-aware-mpi on -o "$work/knn-fixed-$p.h5"
  for transport in on off; do
    [[ $p == 1 && $transport == off ]] && continue
    wanted "knn-$transport" && measure knn "$transport" "$p" "$treetrav" knn --reference "$work/box.h5" \
      --queries "$work/ball.h5" -k 10 --sort sfc --strategy autoropes --gpu-aware-mpi "$transport" \
      -o "$work/knn-$transport-$p.h5"
  done
  wanted knn-chunk && measure knn chunk "$p" "$treetrav" knn --reference "$work/box.h5" --queries "$work/ball.h5" \
    -k 10 --sort sfc --strategy autoropes --gpu-aware-mpi on --chunk $((4194304 / p)) -o "$work/knn-chunk-$p.h5"
  wanted nbody && measure nbody on "$p" "$treetrav" nbody --ics "$work/plummer.h5" --steps 2 --dt 0.0005 \
    --softening 0.01 --multipole quadrupole --theta 0.6 --strategy group --group-size 64 --gpu-aware-mpi on \
    --quiet -o "$work/nbody-$p"
  rm -rf "$work"/knn-*.h5 "$work/nbody-$p"
done
kill "$sampler"
[[ -n ${CUDA_MPS_PIPE_DIRECTORY:-} ]] && echo quit | nvidia-cuda-mps-control
cat "$csv"
python3 - "$csv" <<'EOF' | tee -a "$dir/summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def top(job, transport, p, key):
    mine = [r for r in rows if (r["job"], r["transport"], r["ranks"]) == (job, transport, p) and r[key]]
    return max((float(r[key]) for r in mine), default=None)
for job, transport in sorted({(r["job"], r["transport"]) for r in rows}):
    line = []
    for p in ("1", "2", "4"):
        if top(job, transport, p, "rss_mib") is None:
            continue
        fields = [f"{p}: RSS {top(job, transport, p, 'rss_mib'):.0f}"]
        for key, name in (("device_mib", "CUDA space"), ("pinned_mib", "pinned"), ("host_mib", "host space"),
                          ("process_mib", "process")):
            value = top(job, transport, p, key)
            fields.append(f"{name} {value:.0f}" if value is not None else f"{name} -")
        # Above the fixed footprint (a 1000-point job at the same rank count).
        for key, name in (("rss_mib", "RSS"), ("process_mib", "process")):
            fixed, value = top("fixed", "on", p, key), top(job, transport, p, key)
            if job != "fixed" and fixed is not None and value is not None:
                fields.append(f"{name} above fixed {value - fixed:.0f}")
        line.append(", ".join(fields))
    print(f"{job} ({transport}), the largest rank's MiB: " + " | ".join(line))
EOF
rm -rf "$work"
echo "done in $((SECONDS - started)) s" | tee -a "$dir/summary.txt"
