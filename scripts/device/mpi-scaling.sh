#!/usr/bin/env bash
# Distributed kNN (and the N-body step) on the lent multi-GPU machines (the
# `device` tool: nvidia-h100-x2/x4, nvidia-h200-x2/x4), from the repository
# root, one rank per GPU. Carried in .device/ (ignored), made on the 2-core
# machine:
#   kokkos-cuda, kk-cuda   scripts/bootstrap-kokkos*.sh's CUDA installs (cp -a from the cache)
#   mpi-prefix.tar.xz      scripts/device/pack-mpi-prefix.sh: Debian's OpenMPI and parallel HDF5
#   treetrav.xz            (optional) a CLI built here, stripped: then nothing is built there
# The CLI is built there, on all its cores (CUDA + OpenMP, MPI, parallel HDF5),
# unless TREETRAV_BINARY names one. Then, with GPUS the machine's GPU counts
# (TREETRAV_GPUS, default "1 2 4" up to the GPUs there) and N = TREETRAV_PER_GPU
# (default 1M):
#   weak scaling   P GPUs search P x N reference points uniform in [0, 100]^3
#                  with P x N queries uniform in the inscribed ball, k = 10,
#                  queries in Morton order (three runs each);
#   strong scaling TREETRAV_STRONG (default 8 x N) / the same on every P;
#   identical      every P-GPU results file equal to one GPU's on the same input;
#   memory         peak host RSS (/usr/bin/time) and device memory
#                  (nvidia-smi, sampled) per rank;
#   N-body         (TREETRAV_SKIP_NBODY unset) a Plummer sphere of P x 1M
#                  bodies on P GPUs and 4M on every P, step times.
# TREETRAV_SEARCH_FLAGS: more options for every search (say, with
# TREETRAV_MPI_STACK=ucx, "--gpu-aware-mpi on": device arrays handed to MPI).
# Logs, CSVs and summary.txt go to $OUT. The CLI's times per run: read (not in
# the distributed call), build (the Morton partition among the ranks and the
# local trees), traverse (the distributed search: routing, exchanges, local
# searches, merges, results on the host; one GPU: the streamed search, its
# chunks read and written too), search_s (the results file's metadata: the
# searches alone, queries on the device to results on the host; over several
# ranks the distributed call). Efficiencies are judged on search_s.
set -u
# shellcheck source=scripts/device/mpi-env.sh
source "$PWD/scripts/device/mpi-env.sh"

work=$(mktemp -d)
per_gpu=${TREETRAV_PER_GPU:-1000000}
gpu_counts=()
for p in ${TREETRAV_GPUS:-1 2 4}; do ((p <= gpus_here)) && gpu_counts+=("$p"); done
strong=${TREETRAV_STRONG:-$((8 * per_gpu))}
# The transport alone (perf/bench_exchange.cpp, when TREETRAV_EXCHANGE_BENCH
# names its binary): a kNN's answers at 4 GPUs, 66 MiB out and in per rank,
# and 80 MiB of results to the host, with and without single-copy shared memory.
if [[ -n ${TREETRAV_EXCHANGE_BENCH:-} ]]; then
  for p in "${gpu_counts[@]}"; do
    ((p > 1)) || continue
    for copy in none cma; do
      echo "== $p ranks, vader single copy: $copy" >>"$out/exchange.txt"
      OMPI_MCA_btl_vader_single_copy_mechanism=$copy OMP_NUM_THREADS=$(($(nproc) / p)) timeout 100 \
        "$mpirun" -np "$p" --bind-to none "$TREETRAV_EXCHANGE_BENCH" $((66 << 20)) $((80 << 20)) 5 2>&1 |
        grep -v -E "dlopen error|Perhaps a missing symbol|pmix|PMIx|^ *$|^-+$|compression|startup times|comparable|suppress|PMIX_MCA" >>"$out/exchange.txt"
    done
  done
  cat "$out/exchange.txt"
fi
sizes=$(for p in "${gpu_counts[@]}"; do echo $((p * per_gpu)); done; echo "$strong")
# Every size's box and ball sets: a size's first rows are the same on every
# run (one seed a size), written as float32.
python3 - "$work" $sizes <<'EOF'
import sys, h5py, numpy as np
def write(path, x):
    with h5py.File(path, "w") as f:
        f.create_dataset("/Points/Coordinates", data=x.astype(np.float32))
for n in sorted(set(int(a) for a in sys.argv[2:])):
    rng = np.random.default_rng(n)
    write(f"{sys.argv[1]}/box{n}.h5", rng.random((n, 3)) * 100)
    v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
    write(f"{sys.argv[1]}/ball{n}.h5", 50 + v * (50 * rng.random(n) ** (1 / 3))[:, None])
EOF

# A rank's peak host memory (KiB) into PREFIX.RANK, then its exit status.
cat >"$work/peak.py" <<'EOF'
import os, resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
with open(f"{sys.argv[1]}.{os.environ.get('OMPI_COMM_WORLD_RANK', '0')}", "w") as f:
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=f)
sys.exit(code)
EOF
# Device memory per process, sampled while the runs go (the peak per pid).
(while :; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
  sed "s/^/$(date +%s.%N | cut -c1-14), /"; sleep 0.05; done >"$work/gpu-memory.csv") &
sampler=$!

# TREETRAV_VARIANTS: the largest weak-scaling run under other bindings and
# copy mechanisms, twice each, with the machine's topology; then stop.
if [[ -n ${TREETRAV_VARIANTS:-} ]]; then
  { lscpu | grep -E "^(Socket|Core|Thread|NUMA node)"; lscpu -e=CPU,CORE,SOCKET,NODE | sed -n '1p;2p;17p;18p;33p;34p;49p;50p'
    nvidia-smi topo -m; } >>"$out/variants.txt" 2>&1
  p=${gpu_counts[-1]}
  n=$((p * per_gpu))
  variant() { # NAME BINDING ENV...: two runs of the P-GPU search, mpirun --bind-to BINDING, ENV set
    local name=$1 binding=$2 _
    shift 2
    for _ in 1 2; do
      env "$@" timeout 100 "$mpirun" -np "$p" --bind-to "$binding" "$treetrav" knn --reference "$work/box$n.h5" \
        --queries "$work/ball$n.h5" -k 10 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} -o "$work/variant.h5" 2>&1 |
        grep -o "traverse [0-9.e+-]* s" | sed "s/^/$name: /" >>"$out/variants.txt"
      rm -f "$work/variant.h5"
    done
  }
  variant "places per rank (the CLI's), cma" none
  variant "places per rank, no single copy" none OMPI_MCA_btl_vader_single_copy_mechanism=none
  variant "threads unbound, cma" none OMP_PLACES=threads OMP_PROC_BIND=false OMP_NUM_THREADS=$(($(nproc) / p))
  variant "one thread a rank, cma" none OMP_NUM_THREADS=1 OMP_PLACES=threads OMP_PROC_BIND=false
  variant "mpirun binds to NUMA nodes, cma" numa OMP_NUM_THREADS=$(($(nproc) / p))
  cat "$out/variants.txt"
  exit 0
fi

# The results against scipy's cKDTree (scripts/device/check-knn-scipy.py), on
# the smallest weak-scaling input, on one GPU and on the most.
if [[ -n ${TREETRAV_CHECK_SCIPY:-} ]]; then
  n=$((gpu_counts[0] * per_gpu))
  for p in 1 "${gpu_counts[-1]}"; do
    timeout 200 "$mpirun" -np "$p" --bind-to none "$treetrav" knn --reference "$work/box$n.h5" \
      --queries "$work/ball$n.h5" -k 10 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} -o "$work/scipy-$p.h5" >/dev/null 2>&1
    python3 "$root/scripts/device/check-knn-scipy.py" "$work/box$n.h5" "$work/ball$n.h5" "$work/scipy-$p.h5" 10 |
      sed "s/^/$p GPU(s): /" | tee -a "$out/scipy.txt"
    rm -f "$work/scipy-$p.h5"
  done
fi

# TREETRAV_CHECK_APPS: pc and radius lists (r = 8) on the smallest input on
# one GPU and on the most, the files compared dataset by dataset; then kNN on
# 2 ranks of 200k points under compute-sanitizer.
if [[ -n ${TREETRAV_CHECK_APPS:-} ]]; then
  n=$((gpu_counts[0] * per_gpu))
  for app in pc radius; do
    for p in 1 "${gpu_counts[-1]}"; do
      timeout 200 "$mpirun" -np "$p" --bind-to none "$treetrav" "$app" --reference "$work/box$n.h5" \
        --queries "$work/ball$n.h5" -r 8 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} -o "$work/$app-$p.h5" >/dev/null 2>&1
    done
    python3 - "$work/$app-1.h5" "$work/$app-${gpu_counts[-1]}.h5" "$app" "${gpu_counts[-1]}" <<'EOF' | tee -a "$out/apps.txt"
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r")["Results"] for f in sys.argv[1:3])
names = sorted(a.keys())
same = names == sorted(b.keys()) and all(np.array_equal(a[k][()], b[k][()]) for k in names)
sizes = ", ".join(f"{k} {a[k].shape[0]}" for k in names)
print(f"{sys.argv[3]} r 8: {sys.argv[4]} GPUs equal to 1 GPU in every dataset ({sizes}): {same}")
EOF
    rm -f "$work/$app"-*.h5
  done
  python3 -c "
import h5py
for name in ('box', 'ball'):
    with h5py.File('$work/' + name + '$n.h5') as f, h5py.File('$work/small-' + name + '.h5', 'w') as g:
        g['/Points/Coordinates'] = f['/Points/Coordinates'][:200000]"
  timeout 300 "$mpirun" -np 2 --bind-to none compute-sanitizer --error-exitcode 9 --print-limit 5 "$treetrav" knn \
    --reference "$work/small-box.h5" --queries "$work/small-ball.h5" -k 10 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} \
    -o "$work/sanitized.h5" >"$work/sanitizer.log" 2>&1
  echo "compute-sanitizer, kNN 200k / 200k on 2 ranks: exit $?; $(grep -h "ERROR SUMMARY" "$work/sanitizer.log" | sort | uniq -c | tr -s ' ')" |
    tee -a "$out/apps.txt"
fi

csv=$out/knn-scaling.csv
echo "gpus,n_reference,n_queries,repeat,read_s,build_s,traverse_s,search_s,peak_rss_mib_per_rank,peak_gpu_mib_per_rank" >"$csv"
# run GPUS N REPEAT: one knn run; its times, memory into the CSV.
run() {
  local gpus=$1 n=$2 repeat=$3
  local log=$work/knn-$gpus-gpu-$n-$repeat.log output=$work/knn-$gpus-$n.h5
  local first_sample
  first_sample=$(wc -l <"$work/gpu-memory.csv")
  rm -f "$output" "$work"/rss.*
  # One GPU: one rank under mpirun too (the plain single-tree search runs).
  timeout 200 "$mpirun" -np "$gpus" --bind-to none python3 "$work/peak.py" "$work/rss" \
    "$treetrav" knn --reference "$work/box$n.h5" --queries "$work/ball$n.h5" -k 10 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} \
    -o "$output" >"$log" 2>&1
  echo "rc=$? gpus=$gpus n=$n repeat $repeat" >>"$log"
  grep -v -E "dlopen error|Perhaps a missing symbol" "$log" >>"$out/runs.log"
  sleep 0.2
  python3 - "$log" "$gpus" "$n" "$repeat" "$work" "$first_sample" "$output" >>"$csv" <<'EOF'
import glob, re, sys, h5py
log, gpus, n, repeat, work, first, output = sys.argv[1:]
text = open(log).read().strip().splitlines()
line = [l for l in text if "Wrote" in l][-1]
# (a chunked one-GPU run says "traverse in N chunks of M queries, ..., T s",
# several ranks "traverse (N calls of ...) T s")
times = [re.search(rf"{w} (?:in .*?, |\(.*?\) )?([0-9][0-9.e+-]*) s", line).group(1) for w in ("Read", "build", "traverse")]
# The searches alone (queries on the device to results on the host; over
# several ranks the whole distributed call): the measure scaling is judged by.
times.append(str(h5py.File(output, "r")["RunMetadata"].attrs["search_s"]))
rss = [int(open(f).read().split()[-1]) / 1024 for f in glob.glob(f"{work}/rss.*")]
peak = {}
for row in open(f"{work}/gpu-memory.csv").read().splitlines()[int(first):]:
    parts = [p.strip() for p in row.split(",")]
    if len(parts) == 3 and parts[2].isdigit():
        peak[parts[1]] = max(peak.get(parts[1], 0), int(parts[2]))
print(",".join([gpus, n, n, repeat, *times, f"{max(rss, default=0):.0f}",
                str(max(peak.values(), default=0))]))
EOF
}
for repeat in $(seq "${TREETRAV_REPEATS:-3}"); do
  for p in "${gpu_counts[@]}"; do run "$p" $((p * per_gpu)) "$repeat"; done
done
# TREETRAV_WEAK_ONLY: the weak-scaling runs alone.
[[ -n ${TREETRAV_WEAK_ONLY:-} ]] && gpu_counts_checked=() || gpu_counts_checked=("${gpu_counts[@]}")
# Identical results: one GPU on every P-GPU input, kept beside the P-GPU file.
for p in "${gpu_counts_checked[@]}"; do
  n=$((p * per_gpu))
  ((p > 1)) || continue
  mv "$work/knn-$p-$n.h5" "$work/keep-$p-$n.h5"
  run 1 "$n" 1
  mv "$work/knn-1-$n.h5" "$work/keep-1-$n.h5"
done
for p in "${gpu_counts_checked[@]}"; do
  run "$p" "$strong" 1
  mv "$work/knn-$p-$strong.h5" "$work/keep-$p-$strong.h5"
done
python3 - "$work" <<'EOF' | tee "$out/identical.txt"
import glob, re, sys, h5py, numpy as np
files = {tuple(map(int, re.findall(r"keep-(\d+)-(\d+)", f)[0])): f for f in glob.glob(f"{sys.argv[1]}/keep-*.h5")}
for (p, n), f in sorted(files.items()):
    if p == 1 or (1, n) not in files:
        continue
    a, b = (h5py.File(files[key], "r")["Results"] for key in ((1, n), (p, n)))
    same = all(np.array_equal(a[k][()], b[k][()]) for k in ("NeighborIndices", "NeighborDistances"))
    print(f"kNN {n} / {n}: {p} GPUs equal to 1 GPU, every index and distance: {same}")
EOF
kill "$sampler" 2>/dev/null
cat "$csv"
python3 - "$csv" "$per_gpu" "$strong" <<'EOF' | tee "$out/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n, strong = int(sys.argv[2]), int(sys.argv[3])
def median(p, size, column):
    values = [float(r[column]) for r in rows if int(r["gpus"]) == p and int(r["n_reference"]) == size]
    return statistics.median(values) if values else None
gpus = sorted({int(r["gpus"]) for r in rows})
for column in ("search_s", "traverse_s", "build_s"):
    t1 = median(1, n, column)
    for p in gpus:
        tp = median(p, p * n, column)
        print(f"weak {column}: {p} GPU(s), {p * n} / {p * n}: {tp:.4f} s, efficiency {t1 / tp:.1%}")
    s1 = median(1, strong, column)
    for p in gpus:
        sp = median(p, strong, column)
        if s1 and sp and strong != n:
            print(f"strong {column}: {strong} / {strong} on {p} GPU(s): {sp:.4f} s, speed-up {s1 / sp:.2f}x")
EOF
# Where the time goes: one more run per GPU count under Kokkos Tools'
# space-time-stack (regions, kernels, copies, summed over the ranks), when
# .device/kp_space_time_stack.so is carried (kokkos-tools, built here with mpicxx).
if [[ -f $root/.device/kp_space_time_stack.so && -z ${TREETRAV_WEAK_ONLY:-} ]]; then
  for p in "${gpu_counts[@]}"; do
    n=$((p * per_gpu))
    echo "== $p GPU(s), $n / $n" >>"$out/profile.log"
    KOKKOS_PROFILE_LIBRARY=$root/.device/kp_space_time_stack.so timeout 200 "$mpirun" -np "$p" --bind-to none \
      "$treetrav" knn --reference "$work/box$n.h5" --queries "$work/ball$n.h5" -k 10 --sort sfc --strategy autoropes ${TREETRAV_SEARCH_FLAGS:-} \
      -o "$work/profiled.h5" 2>&1 | grep -v -E "dlopen error|Perhaps a missing symbol|pmix|^ *$" >>"$out/profile.log"
    rm -f "$work/profiled.h5"
  done
fi
echo "kNN part done at $((SECONDS - started)) s"

# N-body step time (the issue's setting: group walks of 64, quadrupoles,
# theta 0.6, softening 0.01, dt 0.001, fixed steps): weak scaling P x 1M
# bodies on P GPUs, strong scaling 4M on each P.
# A step is the JSON's median step plus its share of the rebalancing;
# snapshots and checkpoints are not timed.
[[ -n ${TREETRAV_SKIP_NBODY:-} ]] && { rm -rf "$work"; exit 0; }
steps=${TREETRAV_NBODY_STEPS:-8}
per_gpu_bodies=${TREETRAV_NBODY_PER_GPU:-1000000}
ncsv=$out/nbody-scaling.csv
echo "gpus,bodies,steps,step_s,tree_build_s,forces_s,rebalance_s,wall_s,imported_bodies_per_rank_evaluation" >"$ncsv"
nbody() {
  local gpus=$1 bodies=$2
  local log=$out/runs.log
  timeout 120 "$mpirun" -np "$gpus" --bind-to none "$treetrav" nbody --plummer "$bodies" --seed 1 --dt 0.001 \
    --steps "$steps" --softening 0.01 --theta 0.6 --multipole quadrupole --strategy group --group-size 64 \
    --quiet -o "$work/nbody-$gpus-$bodies" \
    --timings "$work/nbody-$gpus-$bodies.json" >>"$log" 2>&1
  echo "rc=$? gpus=$gpus bodies=$bodies" >>"$log"
  python3 - "$work/nbody-$gpus-$bodies.json" "$gpus" >>"$ncsv" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
s = t["seconds"]
step = t["seconds_per_step_median"] + s["rebalance"] / t["steps"]
print(",".join(map(str, [sys.argv[2], t["bodies"], t["steps"], step, s["tree_build"], s["forces"], s["rebalance"],
                         s["wall"], t["imported_bodies"] / (int(sys.argv[2]) * t["force_evaluations"])])))
EOF
  rm -rf "$work/nbody-$gpus-$bodies"
}
for p in "${gpu_counts[@]}"; do
  ((SECONDS - started > ${TREETRAV_DEADLINE:-540})) && break
  nbody "$p" $((p * per_gpu_bodies))
  ((p < 4)) && nbody "$p" $((4 * per_gpu_bodies))
done
cat "$ncsv"
rm -rf "$work"
echo "done at $((SECONDS - started)) s"
