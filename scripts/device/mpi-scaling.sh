#!/usr/bin/env bash
# Distributed batch kNN on the lent 2-GPU machine (the `device` tool), from the
# repository root, with what was built here carried in .device/mpi/:
#   treetrav  (CUDA + OpenMP + Serial build with MPI, stripped)
#   lib/      shared libraries the image may lack (HDF5, libgomp, ...)
#   ompi/     Debian's OpenMPI runtime (orterun, orted, libraries, plugins, PMIx)
#             under its own prefix, used through OPAL_PREFIX: the image's own
#             mpirun, if any, is reported but not used (the binary links Debian's libmpi);
#             lib/ and ompi/ may come as lib.tar.xz and ompi.tar.xz (unpacked first)
# Then N-body step times (below). kNN weak scaling: P GPUs (one rank each) search P x 1M reference points uniform
# in the box [0, 100]^3 with P x 1M queries uniform in the ball of radius 50 at
# its centre, k = 10, queries in Morton order; 1 GPU runs the plain
# single-tree search. The 2-GPU results are compared with one GPU's on the same
# 2M/2M input (they must be identical). Logs and a CSV go to $OUT.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
dir=$PWD/.device/mpi
echo "image mpirun: $(command -v mpirun || echo none)" | tee "$out/env.txt"
nvidia-smi -L | tee -a "$out/env.txt"
# Archives unpack outside the carried folder (nothing carried twice).
unpacked=/tmp/tt-mpi
for name in ompi lib; do
  if [[ -e $dir/$name.tar.xz ]]; then
    mkdir -p "$unpacked/$name" && tar xJf "$dir/$name.tar.xz" -C "$unpacked/$name"
  elif [[ -d $dir/$name ]]; then
    mkdir -p "$unpacked" && ln -sfn "$dir/$name" "$unpacked/$name"
  fi
done
ompi=$unpacked/ompi
# Or Debian's OpenMPI packages unpacked as one prefix (.device/mpi-prefix.tar.xz,
# as redesign-ab.sh carries it), with a treetrav built here against it
# (TREETRAV_BINARY, the kNN part only: TREETRAV_SKIP_NBODY=1).
if [[ -f $PWD/.device/mpi-prefix.tar.xz ]]; then
  [[ -d $unpacked/usr ]] || { mkdir -p "$unpacked" && tar xJf "$PWD/.device/mpi-prefix.tar.xz" -C "$unpacked"; }
  ompi=$unpacked/usr
fi
export OPAL_PREFIX=$ompi PMIX_INSTALL_PREFIX=$ompi/lib/x86_64-linux-gnu/pmix2
# OpenMPI's own libraries first; of lib/, only those the image lacks (ldd's
# "not found", three levels down), so the image's own stay first otherwise.
mkdir -p /tmp/tt-lib
export LD_LIBRARY_PATH=$ompi/syslib:$ompi/lib/x86_64-linux-gnu:$ompi/lib/x86_64-linux-gnu/openmpi/lib:/tmp/tt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$ompi/bin:$PATH
treetrav=${TREETRAV_BINARY:-$dir/treetrav}
for _ in 1 2 3; do
  for missing in $(ldd "$treetrav" 2>/dev/null | awk '/not found/ {print $1}'); do
    cp -n "$unpacked/lib/$missing" /tmp/tt-lib/ 2>/dev/null
  done
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# Shared memory without cross-process reads (containers often forbid them).
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMP_PROC_BIND=spread OMP_PLACES=threads
mpirun=$ompi/bin/mpirun
[[ -x $mpirun ]] || mpirun=$ompi/bin/mpirun.openmpi
ldd "$treetrav" | grep "not found" && echo "missing libraries" >&2
work=$(mktemp -d)
per_gpu=${TREETRAV_PER_GPU:-1000000}  # points and queries per GPU (smaller for a dry run)

python3 - "$work" "$per_gpu" <<'EOF'
import sys, h5py, numpy as np
def write(path, x):
    with h5py.File(path, "w") as f:
        f.create_dataset("/Points/Coordinates", data=x.astype(np.float32))
for millions in (1, 2):
    n = millions * int(sys.argv[2])
    rng = np.random.default_rng(millions)
    write(f"{sys.argv[1]}/box{millions}.h5", rng.random((n, 3)) * 100)
    v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
    write(f"{sys.argv[1]}/sphere{millions}.h5", 50 + v * (50 * rng.random(n) ** (1 / 3))[:, None])
EOF

csv=$out/knn-weak-scaling.csv
echo "gpus,n_reference,n_queries,repeat,read_s,build_s,traverse_s" >"$csv"
# run GPUS MILLIONS REPEAT OUTPUT: one knn run, its summary's times into the CSV.
run() {
  local gpus=$1 millions=$2 repeat=$3 output=$4
  local log=$out/knn-$gpus-gpu-${millions}M.log
  # One GPU: one rank under mpirun too (the plain single-tree search runs).
  timeout 100 "$mpirun" -np "$gpus" --bind-to none "$treetrav" knn --reference "$work/box$millions.h5" --queries "$work/sphere$millions.h5" \
    -k 10 --sort sfc -o "$output" >>"$log" 2>&1
  echo "rc=$? gpus=$gpus ${millions}M repeat $repeat" >>"$log"
  python3 - "$log" "$gpus" "$millions" "$repeat" "$per_gpu" >>"$csv" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().strip().splitlines()
line = [l for l in text if "Wrote" in l][-1]
times = [re.search(rf"{w} ([0-9.e+-]+) s", line).group(1) for w in ("Read", "build", "traverse")]
n = int(sys.argv[3]) * int(sys.argv[5])
print(",".join([sys.argv[2], str(n), str(n), sys.argv[4], *times]))
EOF
}
for repeat in 1 2 3; do
  run 1 1 "$repeat" "$work/one-1M.h5"
  run 2 2 "$repeat" "$work/two-2M.h5"
done
run 1 2 1 "$work/one-2M.h5"
python3 - "$work" <<'EOF' | tee "$out/identical.txt"
import sys, h5py, numpy as np
a, b = (h5py.File(f"{sys.argv[1]}/{n}", "r")["Results"] for n in ("one-2M.h5", "two-2M.h5"))
same = all(np.array_equal(a[k][()], b[k][()]) for k in ("NeighborIndices", "NeighborDistances"))
print(f"2M/2M kNN: 2 GPUs (2 ranks) equal to 1 GPU: {same}")
EOF
cat "$csv"
python3 - "$csv" "$per_gpu" <<'EOF' | tee "$out/summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n = int(sys.argv[2])
def best(g, size):
    return min(float(r["traverse_s"]) for r in rows if r["gpus"] == g and r["n_reference"] == str(size))
t1, t2 = best("1", n), best("2", 2 * n)
t1_2m = best("1", 2 * n)
print(f"kNN k=10 weak scaling ({n} box/{n} sphere per GPU, best of 3 traverse_s): 1 GPU {t1:.4f} s, "
      f"2 GPUs {t2:.4f} s, efficiency {t1 / t2:.2%}; 2x on 1 GPU {t1_2m:.4f} s (speed-up of 2 GPUs {t1_2m / t2:.2f}x)")
EOF

# N-body step time (autoropes, theta 0.5, softening 0.01, dt 0.001, fixed
# steps): weak scaling 1M bodies on 1 GPU against 2M on 2 GPUs, strong scaling
# 4M on 1 GPU against 4M on 2 GPUs. A step is the JSON's median step
# (seconds_per_step_median: tree or essential-tree build, moments, forces,
# kicks and drifts) plus its share of the rebalancing (every 8 steps);
# snapshots and checkpoints are not timed.
[[ -n ${TREETRAV_SKIP_NBODY:-} ]] && exit 0
steps=${TREETRAV_NBODY_STEPS:-8}
per_gpu_bodies=${TREETRAV_NBODY_PER_GPU:-1000000}
ncsv=$out/nbody-scaling.csv
echo "gpus,bodies,steps,step_s,tree_build_s,forces_s,rebalance_s,wall_s" >"$ncsv"
nbody() {
  local gpus=$1 bodies=$2
  local log=$out/nbody-$gpus-gpu-$bodies.log
  timeout 240 "$mpirun" -np "$gpus" --bind-to none "$treetrav" nbody --plummer "$bodies" --seed 1 --dt 0.001 \
    --steps "$steps" --softening 0.01 --theta 0.5 --quiet -o "$work/nbody-$gpus-$bodies" \
    --timings "$work/nbody-$gpus-$bodies.json" >>"$log" 2>&1
  echo "rc=$? gpus=$gpus bodies=$bodies" >>"$log"
  python3 - "$work/nbody-$gpus-$bodies.json" "$gpus" >>"$ncsv" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
s = t["seconds"]
step = t["seconds_per_step_median"] + s["rebalance"] / t["steps"]
print(",".join(map(str, [sys.argv[2], t["bodies"], t["steps"], step, s["tree_build"], s["forces"], s["rebalance"],
                         s["wall"]])))
EOF
  rm -rf "$work/nbody-$gpus-$bodies"
}
nbody 1 "$per_gpu_bodies"
nbody 2 $((2 * per_gpu_bodies))
nbody 1 $((4 * per_gpu_bodies))
nbody 2 $((4 * per_gpu_bodies))
cat "$ncsv"
python3 - "$ncsv" "$per_gpu_bodies" <<'EOF' | tee -a "$out/summary.txt"
import csv, sys
n = int(sys.argv[2])
rows = {(int(r["gpus"]), int(r["bodies"])): float(r["step_s"]) for r in csv.DictReader(open(sys.argv[1]))}
weak1, weak2, strong1, strong2 = (rows.get(k) for k in ((1, n), (2, 2 * n), (1, 4 * n), (2, 4 * n)))
if None in (weak1, weak2, strong1, strong2):
    print(f"N-body: a run failed (see nbody-*.log): {rows}")
else:
    print(f"N-body step: {n} bodies on 1 GPU {weak1:.4f} s, {2 * n} on 2 GPUs {weak2:.4f} s (weak-scaling "
          f"efficiency {weak1 / weak2:.2%}); {4 * n} on 1 GPU {strong1:.4f} s, on 2 GPUs {strong2:.4f} s "
          f"(strong-scaling speed-up {strong1 / strong2:.2f}x)")
EOF
rm -rf "$work"
