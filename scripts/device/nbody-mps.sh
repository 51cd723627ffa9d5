#!/usr/bin/env bash
# Distributed N-body on one GPU shared by 1, 2 and 4 ranks (the `device`
# tool's one-GPU kinds), from the repository root, carried as mpi-env.sh
# says. The ranks share the GPU under MPS: without it each small kernel waits
# out the other process's time slice. For each set (a Plummer sphere and a
# clustered box of TREETRAV_BODIES, default 200k; TREETRAV_BIG, default 1M,
# Plummer with group walks) and walk (autoropes; group walks of 64): 8
# steps, quadrupoles, theta 0.6, dt 0.0005, the bodies re-cut every 4 steps.
# Prints per run the step's median, per force evaluation the essential tree
# (the octree on one rank) and the forces, the bodies and cells a rank
# imports per evaluation, and the last snapshot against one rank's:
# identical, or the largest difference of positions, velocities and
# potentials (over the walk, theta 0.6) over their largest. Then
# compute-sanitizer's memcheck on 3 ranks (no MPS). Logs under $OUT.
set -u
# shellcheck source=scripts/device/mpi-env.sh
source "$PWD/scripts/device/mpi-env.sh"
work=$(mktemp -d)
n=${TREETRAV_BODIES:-200000}
big=${TREETRAV_BIG:-1000000}
"$treetrav" generate --dist plummer -n "$n" --seed 1 -o "$work/plummer.h5" >/dev/null
"$treetrav" generate --dist clustered-box -n "$n" --seed 2 -o "$work/box.h5" >/dev/null
"$treetrav" generate --dist plummer -n "$big" --seed 3 -o "$work/big.h5" >/dev/null
"$treetrav" generate --dist clustered-box -n 20000 --seed 4 -o "$work/small.h5" >/dev/null
export CUDA_MPS_PIPE_DIRECTORY=$work/mps CUDA_MPS_LOG_DIRECTORY=$work/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d

report() { # set walk ranks
  python3 - "$work/$1-$2-$3" "$work/$1-$2-1" "$3" "$1 $2" <<'EOF'
import json, sys
run, one, ranks, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
t = json.load(open(run + ".json"))
e = t["force_evaluations"]
per = t["seconds_per_force_evaluation"]
line = (f"{name:22s} {ranks} rank(s): step {1e3 * t['seconds_per_step_median']:8.2f} ms  per evaluation: tree "
        f"{1e3 * per['tree_build']:7.2f} ms  forces {1e3 * per['forces']:7.2f} ms  imported per rank "
        f"{t['imported_bodies'] / (ranks * e):9.0f} bodies {t['imported_cells'] / (ranks * e):9.0f} cells")
if ranks > 1:
    sys.path.insert(0, "scripts/device")
    from snapshot_difference import described
    line += "  " + described(one, run)
print(line, flush=True)
EOF
}
run() { # set walk ranks input
  local dir=$work/$1-$2-$3 strategy=(--strategy "$2")
  [[ $2 == group ]] && strategy+=(--group-size 64)
  timeout 150 "$mpirun" -np "$3" --bind-to none "$treetrav" nbody --ics "$4" --steps 8 --dt 0.0005 \
    --softening 0.01 --multipole quadrupole --theta 0.6 --potential-theta 0.6 --rebalance-every 4 \
    "${strategy[@]}" --quiet -o "$dir" --timings "$dir.json" >>"$out/runs.log" 2>&1 ||
    { echo "$1 $2 $3 ranks: failed (log: runs.log)"; return; }
  report "$1" "$2" "$3"
}
for set in plummer box; do
  for walk in autoropes group; do
    for ranks in 1 2 4; do run "$set" "$walk" "$ranks" "$work/$set.h5"; done
  done
done
for ranks in 1 2 4; do
  ((SECONDS - started > ${TREETRAV_DEADLINE:-500})) && break
  run big group "$ranks" "$work/big.h5"
done
echo quit | nvidia-cuda-mps-control
# memcheck: group walks, quadrupoles, a clustered box on 3 ranks.
if ((SECONDS - started < ${TREETRAV_DEADLINE:-500})); then
  timeout 150 "$mpirun" -np 3 --bind-to none compute-sanitizer --tool memcheck --error-exitcode 9 "$treetrav" nbody \
    --ics "$work/small.h5" --steps 2 --dt 0.0005 --softening 0.01 --multipole quadrupole --theta 0.6 \
    --strategy group --group-size 64 --quiet -o "$work/memcheck" >"$out/memcheck.log" 2>&1
  echo "memcheck on 3 ranks: exit $? ($(grep -c "ERROR SUMMARY: 0 errors" "$out/memcheck.log") of 3 ranks with 0 errors)"
fi
rm -rf "$work"
echo "done at $((SECONDS - started)) s"
