#!/usr/bin/env bash
# The main job (README): sets up everything on a fresh Debian 12 machine,
# builds treetrav, and runs a demo batch on built-in generated inputs:
# info, generate + inspect (HDF5 round trip), a kNN batch job, a Barnes-Hut
# force evaluation and a short N-body simulation.
# Outputs go to $TREETRAV_DEMO_DIR (default ./demo-output).
#   TREETRAV_CONFIG=cuda scripts/run-demo.sh    # the GPU build (needs a GPU to run)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
config=${TREETRAV_CONFIG:-cpu}
build=${TREETRAV_BUILD_DIR:-$repo/build-$config}
out=${TREETRAV_DEMO_DIR:-$PWD/demo-output}
n=${TREETRAV_DEMO_N:-200000}
"$repo/scripts/build.sh" "$config" "$build" >/dev/null
treetrav=$build/treetrav
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "treetrav info"
"$treetrav" info

step "generate $n reference points and $n queries (covtype7: clustered 7-D) and a Plummer sphere"
"$treetrav" generate --dist covtype7 -n "$n" --seed 1 -o "$out/reference.h5"
"$treetrav" generate --dist covtype7 -n "$n" --seed 2 -o "$out/queries.h5"
"$treetrav" generate --dist plummer -n 100000 --seed 3 -o "$out/plummer.h5"

step "read them back"
"$treetrav" inspect "$out/reference.h5"
"$treetrav" inspect "$out/plummer.h5"

step "kNN batch job: k = 8 nearest reference points of every query"
"$treetrav" knn --reference "$out/reference.h5" --queries "$out/queries.h5" -k 8 -o "$out/knn.h5"
"$treetrav" inspect "$out/knn.h5"

step "Barnes-Hut: one force evaluation on the Plummer sphere"
"$treetrav" bh-force --snapshot "$out/plummer.h5" --theta 0.5 --softening 0.01 -o "$out/bh-forces.h5"

step "N-body: 100 leapfrog steps of a 10,000-body Plummer sphere (snapshots, checkpoints, diagnostics)"
rm -rf "$out/nbody"  # a fresh run refuses a directory holding an earlier run
"$treetrav" nbody --plummer 10000 --seed 4 --dt 0.005 --steps 100 --softening 0.02 --snapshot-every 25 \
  --checkpoint-every 50 -o "$out/nbody" --timings "$out/nbody/timings.json"
"$treetrav" inspect "$out/nbody/snapshot_000100.h5"
printf '\nOutputs in %s\n' "$out"
