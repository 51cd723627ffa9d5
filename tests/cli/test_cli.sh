#!/usr/bin/env bash
# The treetrav CLI as a user runs it: exit codes, messages, no partial output.
#   TREETRAV=/path/to/treetrav bash tests/cli/test_cli.sh
# Exits non-zero when any check fails; ends with "N passed, N failed".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

generate() { "$TREETRAV" generate "$@"; }

# --- help and info ----------------------------------------------------------
expect_success "--help exits 0" "$TREETRAV" --help
expect_contains "--help lists generate" generate "$out"
expect_success "generate --help exits 0" generate --help
expect_contains "generate --help documents --dist" "--dist" "$out"
expect_contains "generate --help lists presets" "geocity2" "$out"
expect_success "info exits 0" "$TREETRAV" info
expect_contains "info lists backends" "backends" "$out"
expect_contains "info lists the openmp backend" "openmp" "$out"

# Commands started side by side, each its own MPI singleton in an MPI build,
# all succeed (they once removed each other's Open MPI session directory).
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$TREETRAV" info >"$work/side-$i.log" 2>&1 &
  pids+=($!)
done
side_by_side=0
for pid in "${pids[@]}"; do wait "$pid" && side_by_side=$((side_by_side + 1)); done
if ((side_by_side == 8)); then pass "8 commands side by side all exit 0"; else
  fail "8 commands side by side all exit 0" "$(cat "$work"/side-*.log)"; fi

# --- generating each kind of input -------------------------------------------
expect_success "generate uniform" generate --dist uniform -n 1000 --dim 7 --seed 1 -o "$work/uniform.h5"
expect_contains "generate prints where it wrote" "$work/uniform.h5" "$out"
run h5ls -r "$work/uniform.h5"
expect_contains "uniform file holds (1000, 7) coordinates" "/Points/Coordinates Dataset {1000, 7}" \
  "$(tr -s ' ' <<<"$out")"

expect_success "generate clustered" \
  generate --dist clustered -n 500 --dim 3 --clusters 4 --width 0.1 --seed 2 -o "$work/clustered.h5"
run h5ls -r "$work/clustered.h5"
expect_contains "clustered file holds (500, 3) coordinates" "/Points/Coordinates Dataset {500, 3}" \
  "$(tr -s ' ' <<<"$out")"

expect_success "generate preset geocity2" generate --dist geocity2 -n 300 -o "$work/geocity2.h5"
run h5ls -r "$work/geocity2.h5"
expect_contains "geocity2 file holds 2-D coordinates" "/Points/Coordinates Dataset {300, 2}" \
  "$(tr -s ' ' <<<"$out")"
run h5dump -H "$work/geocity2.h5"
expect_contains "point file records its generator" 'ATTRIBUTE "generator"' "$out"
expect_contains "point file records its seed" 'ATTRIBUTE "seed"' "$out"

expect_success "generate plummer" generate --dist plummer -n 200 --seed 3 -o "$work/plummer.h5"
run h5ls -r "$work/plummer.h5"
flat=$(tr -s ' ' <<<"$out")
for dataset in "Coordinates Dataset {200, 3}" "Velocities Dataset {200, 3}" \
  "Masses Dataset {200}" "ParticleIDs Dataset {200}"; do
  expect_contains "plummer file holds /PartType1/$dataset" "/PartType1/$dataset" "$flat"
done
run h5dump -H "$work/plummer.h5"
expect_contains "plummer file has a GADGET header" 'ATTRIBUTE "NumPart_Total"' "$out"
expect_contains "plummer file records its generator" 'ATTRIBUTE "generator"' "$out"

# A Hernquist sphere is a snapshot too, and an N-body run starts from it.
expect_success "generate hernquist" generate --dist hernquist -n 300 --seed 3 -o "$work/hernquist.h5"
run h5ls -r "$work/hernquist.h5"
expect_contains "hernquist file holds its velocities" "/PartType1/Velocities Dataset {300, 3}" \
  "$(tr -s ' ' <<<"$out")"
expect_success "nbody from the hernquist snapshot" "$TREETRAV" nbody --ics "$work/hernquist.h5" --dt 0.001 \
  --steps 2 -o "$work/hernquist-run"

# So is a clustered box (Soneira-Peebles clumps in the unit cube, at rest),
# the same on any thread count.
expect_success "generate clustered-box" generate --dist clustered-box -n 300 --seed 3 \
  -o "$work/clustered-box.h5"
run h5ls -r "$work/clustered-box.h5"
expect_contains "clustered-box file holds its coordinates" "/PartType1/Coordinates Dataset {300, 3}" \
  "$(tr -s ' ' <<<"$out")"
expect_success "nbody from the clustered-box snapshot" "$TREETRAV" nbody --ics "$work/clustered-box.h5" \
  --dt 0.001 --steps 2 -o "$work/clustered-box-run"
expect_success "generate clustered-box on 1 thread" generate --dist clustered-box -n 300 --seed 3 \
  --threads 1 -o "$work/clustered-box-1thread.h5"
if cmp -s <(h5dump -d /PartType1/Coordinates "$work/clustered-box.h5" | tail -n +2) \
  <(h5dump -d /PartType1/Coordinates "$work/clustered-box-1thread.h5" | tail -n +2); then
  pass "clustered-box does not depend on the thread count"
else
  fail "clustered-box differs between thread counts"
fi

# Same options, other thread count: the same numbers.
expect_success "generate clustered on 1 thread" generate --dist clustered -n 500 --dim 3 \
  --clusters 4 --width 0.1 --seed 2 --threads 1 -o "$work/clustered-1thread.h5"
if cmp -s <(h5dump -d /Points/Coordinates "$work/clustered.h5" | tail -n +2) \
  <(h5dump -d /Points/Coordinates "$work/clustered-1thread.h5" | tail -n +2); then
  pass "output does not depend on the thread count"
else
  fail "output differs between thread counts"
fi

# --- mistakes: clear message, non-zero exit, no file -------------------------
expect_failure "unknown option" "--bogus" generate --dist uniform -n 10 --bogus -o "$failures/a.h5"
expect_failure "unknown --dist" "gaussian" generate --dist gaussian -n 10 -o "$failures/a.h5"
expect_failure "-n 0" "-n" generate --dist uniform -n 0 -o "$failures/a.h5"
expect_failure "--dim 4097 (more than a point set takes)" "--dim" generate --dist uniform -n 10 --dim 4097 \
  -o "$failures/a.h5"
expect_success "--dim 1024" generate --dist uniform -n 10 --dim 1024 -o "$work/wide.h5"
expect_failure "--width 0" "--width" generate --dist clustered -n 10 --width 0 -o "$failures/a.h5"
expect_failure "--dim with plummer" "--dim" generate --dist plummer -n 10 --dim 2 -o "$failures/a.h5"
expect_failure "negative --seed" "--seed" generate --dist uniform -n 10 --seed -1 -o "$failures/a.h5"
expect_failure "missing -o" "--output" generate --dist uniform -n 10
expect_failure "missing --dist" "--dist" generate -n 10 -o "$failures/a.h5"
expect_failure "output into a missing directory" "$failures/missing" \
  generate --dist uniform -n 10 -o "$failures/missing/a.h5"

# A failed generate leaves an existing file as it was.
before=$(cksum <"$work/uniform.h5" 2>/dev/null)
expect_failure "invalid -n over an existing file" "-n" generate --dist uniform -n 0 -o "$work/uniform.h5"
expect_failure "invalid --dist over an existing file" "nosuch" \
  generate --dist nosuch -n 10 -o "$work/uniform.h5"
if [[ -f $work/uniform.h5 && $(cksum <"$work/uniform.h5") == "$before" ]]; then
  pass "existing output left intact"
else
  fail "existing output was modified by a failed generate"
fi

# --- inspect (when this build has it) -----------------------------------------
if "$TREETRAV" inspect --help >/dev/null 2>&1; then
  expect_failure "inspect a missing file" "$work/absent.h5" "$TREETRAV" inspect "$work/absent.h5"
  echo "not HDF5" >"$work/text.h5"
  expect_failure "inspect a non-HDF5 file" "$work/text.h5" "$TREETRAV" inspect "$work/text.h5"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
