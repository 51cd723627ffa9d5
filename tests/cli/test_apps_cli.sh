#!/usr/bin/env bash
# The application subcommands (pc, nn, knn, vp, bt, bh-force) as a user runs
# them: result shapes and metadata, identical results under every strategy,
# special inputs, and mistakes that must fail cleanly without output.
#   TREETRAV=/path/to/treetrav bash tests/cli/test_apps_cli.sh
# Needs h5ls, h5dump and h5diff (hdf5-tools); the special-input checks also
# /usr/bin/python3 with h5py. Exits non-zero when any check fails; ends with
# "N passed, N failed".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# expect_shape FILE DATASET SHAPE: e.g. expect_shape out.h5 /Results/Counts "{150}"
expect_shape() {
  local listing
  listing=$(h5ls -r "$1" 2>&1 | tr -s ' ')
  expect_contains "$(basename "$1"): $2 is $3" "$2 Dataset $3" "$listing"
}

# expect_same_dataset NAME A B DATASET: bit-identical values.
expect_same_dataset() {
  run h5diff "$2" "$3" "$4" "$4"
  if [[ $status -eq 0 ]]; then pass "$1"; else fail "$1: $4 differs" "$out$err"; fi
}

# expect_attributes FILE NAME...: /RunMetadata holds each attribute.
expect_attributes() {
  local file=$1 header name
  shift
  header=$(h5dump -A -g /RunMetadata "$file" 2>&1)
  for name in "$@"; do expect_contains "$(basename "$file") records $name" "ATTRIBUTE \"$name\"" "$header"; done
}

# python CODE: runs CODE with h5py and numpy imported (for the special inputs).
python() {
  /usr/bin/python3 -c "import sys, h5py, numpy as np
$1" "${@:2}"
}

tt() { "$TREETRAV" "$@"; }

strategies=(recursive autoropes)
for extra in lockstep fsm hybrid regtt; do  # later strategies, when this build has them
  if tt knn --help 2>/dev/null | grep -qw "$extra"; then strategies+=("$extra"); fi
done
# The searches also run without a tree (brute) and as auto picks.
search_strategies=("${strategies[@]}" brute auto)

# --- inputs --------------------------------------------------------------------
expect_success "generate reference" tt generate --dist clustered -n 600 --dim 3 --clusters 6 --seed 1 -o "$work/ref.h5"
expect_success "generate queries" tt generate --dist uniform -n 150 --dim 3 --seed 2 -o "$work/queries.h5"
expect_success "generate 2-D queries" tt generate --dist uniform -n 20 --dim 2 --seed 3 -o "$work/queries2d.h5"
expect_success "generate a single point" tt generate --dist uniform -n 1 --dim 3 --seed 4 -o "$work/one.h5"
expect_success "generate snapshot" tt generate --dist plummer -n 300 --seed 5 -o "$work/snap.h5"

expect_success "knn --help" tt knn --help
expect_contains "knn --help documents --self" "excludes itself" "$out"
expect_contains "knn --help lists the strategies" "autoropes" "$out"
expect_success "bh-force --help" tt bh-force --help
expect_contains "bh-force --help documents --softening" "--softening" "$out"

# --- every search under every strategy -------------------------------------------
# search APP SHAPE-DATASET SHAPE OPTIONS...: runs APP under each strategy on the
# queries, checks the shape and that every strategy gives recursive's results
# (radius: the tree strategies; the others also brute force and auto).
search() {
  local app=$1 dataset=$2 shape=$3 strategy result list=("${search_strategies[@]}")
  shift 3
  [[ $app != radius ]] || list=("${strategies[@]}")
  for strategy in "${list[@]}"; do
    result=$work/$app-$strategy.h5
    expect_success "$app --strategy $strategy" tt "$app" --reference "$work/ref.h5" --queries "$work/queries.h5" \
      --strategy "$strategy" -o "$result" "$@"
    expect_shape "$result" "$dataset" "$shape"
    [[ $strategy == recursive ]] ||
      expect_same_dataset "$app: $strategy equals recursive" "$work/$app-recursive.h5" "$result" /Results
  done
}

search pc /Results/Counts "{150}" -r 0.1
search nn /Results/NeighborIndices "{150, 1}"
search knn /Results/NeighborIndices "{150, 5}" -k 5
expect_shape "$work/knn-autoropes.h5" /Results/NeighborDistances "{150, 5}"
search vp /Results/NeighborIndices "{150, 1}"
search bt /Results/NeighborIndices "{150, 5}" -k 5
search radius /Results/ListOffsets "{151}" -r 0.1
expect_failure "radius takes tree strategies only" "--strategy" tt radius --reference "$work/ref.h5" \
  --queries "$work/queries.h5" -r 0.1 --strategy brute -o "$failures/out.h5"

# radius lists are the brute-force lists (nearest first, ties by index), and
# their lengths are pc's counts.
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
  run python '
r = h5py.File(sys.argv[1])["/Points/Coordinates"][()]
q = h5py.File(sys.argv[2])["/Points/Coordinates"][()]
res = h5py.File(sys.argv[3])["/Results"]
off, idx, dist = res["ListOffsets"][()], res["ListIndices"][()], res["ListDistances"][()]
counts = h5py.File(sys.argv[4])["/Results/Counts"][()]
d2 = ((r[None, :, :] - q[:, None, :]) ** 2).sum(-1, dtype=np.float32)
bad = 0
for i in range(len(q)):
    near = np.flatnonzero(d2[i] <= np.float32(0.1) * np.float32(0.1))
    near = near[np.lexsort((near, d2[i][near]))]
    got = idx[off[i]:off[i + 1]]
    bad += not (np.array_equal(got, near) and off[i + 1] - off[i] == counts[i])
    bad += not np.all(np.diff(dist[off[i]:off[i + 1]]) >= 0)
print("mismatches", bad)
' "$work/ref.h5" "$work/queries.h5" "$work/radius-autoropes.h5" "$work/pc-autoropes.h5"
  expect_contains "radius lists equal brute force and pc counts" "mismatches 0" "$out"
fi

# --- batches in chunks -----------------------------------------------------------
# Queries read, searched and written 7 at a time (150 queries: 22 chunks, the
# last short) give the file of one chunk, under a fixed strategy and auto.
for job in "knn -k 5" "pc -r 0.1" "radius -r 0.1" "knn -k 5 --strategy auto" "knn -k 5 --sort sfc"; do
  # shellcheck disable=SC2086
  expect_success "$job in one chunk" tt $job --reference "$work/ref.h5" --queries "$work/queries.h5" \
    -o "$work/one-chunk.h5"
  # shellcheck disable=SC2086
  expect_success "$job in chunks" tt $job --reference "$work/ref.h5" --queries "$work/queries.h5" --chunk 7 \
    -o "$work/chunks.h5"
  expect_contains "$job reports its chunks" "in 22 chunks of 7 queries" "$out"
  expect_same_dataset "$job: chunks equal one chunk" "$work/one-chunk.h5" "$work/chunks.h5" /Results
done
run h5dump -A -g /RunMetadata "$work/chunks.h5"
expect_contains "chunked runs record their chunk" 'ATTRIBUTE "chunk"' "$out"
expect_failure "--chunk with --self" "--self" tt knn --reference "$work/ref.h5" --self --chunk 5 \
  -o "$failures/out.h5"
expect_failure "--chunk -1" "--chunk" tt knn --reference "$work/ref.h5" --queries "$work/queries.h5" --chunk -1 \
  -o "$failures/out.h5"
# A NaN in a later chunk fails the run with the file's row, after earlier
# chunks were written: nothing is left, and an existing output is kept.
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
  cp "$work/queries.h5" "$work/nan-queries.h5"
  python 'h5py.File(sys.argv[1], "r+")["/Points/Coordinates"][100, 2] = np.nan' "$work/nan-queries.h5"
  expect_failure "a NaN query in chunk 15" "row 100, column 2" tt knn --reference "$work/ref.h5" \
    --queries "$work/nan-queries.h5" --chunk 7 -o "$failures/out.h5"
  before=$(cksum <"$work/chunks.h5")
  run tt knn --reference "$work/ref.h5" --queries "$work/nan-queries.h5" --chunk 7 -o "$work/chunks.h5"
  if [[ $status -eq 2 && $(cksum <"$work/chunks.h5") == "$before" ]]; then
    pass "a failed chunked run keeps the existing output"
  else
    fail "a failed chunked run: exit $status, or the existing output changed" "$err"
  fi
fi

# Exact searches on different trees agree (ties broken by index alike).
for dataset in /Results/NeighborIndices /Results/NeighborDistances; do
  expect_same_dataset "vp equals nn: $dataset" "$work/nn-autoropes.h5" "$work/vp-autoropes.h5" "$dataset"
  expect_same_dataset "bt equals knn: $dataset" "$work/knn-autoropes.h5" "$work/bt-autoropes.h5" "$dataset"
done

expect_attributes "$work/knn-autoropes.h5" application tree strategy sort backend threads leaf_size k n_reference \
  n_queries read_s build_s traverse_s
expect_attributes "$work/knn-auto.h5" requested_strategy auto_reason auto_probe_s
run h5dump -A -g /RunMetadata "$work/knn-brute.h5"
expect_contains "brute force records no tree" '"none"' "$out"
# auto records the tree of the strategy it picked (none for brute force).
run h5dump -A -a /RunMetadata/strategy -a /RunMetadata/tree "$work/knn-auto.h5"
if grep -q '"brute"' <<<"$out"; then auto_tree='"none"'; else auto_tree='"bvh"'; fi
expect_contains "auto records the tree of its pick" "$auto_tree" "$out"
if [[ " ${strategies[*]} " == *" hybrid "* ]]; then
  expect_attributes "$work/knn-hybrid.h5" hybrid_depth hybrid_profile_s hybrid_transfer_s hybrid_schedule_s \
    hybrid_execute_s
fi
if [[ " ${strategies[*]} " == *" regtt "* ]]; then
  expect_attributes "$work/knn-regtt.h5" regtt_mode regtt_depth regtt_chunks regtt_model_s regtt_bft_s regtt_sort_s \
    regtt_dft_s
  # Both modes, fixed depths (one- and multi-word keys), order bits.
  for options in "--regtt-mode lockstep --reorder-depth 4" "--regtt-mode nonlockstep --reorder-depth 9" \
    "--regtt-mode lockstep --reorder-depth 6 --regtt-order-bits"; do
    # shellcheck disable=SC2086
    expect_success "knn --strategy regtt $options" tt knn --reference "$work/ref.h5" --queries "$work/queries.h5" \
      -k 5 --strategy regtt $options -o "$work/knn-regtt-options.h5"
    expect_same_dataset "knn regtt $options equals recursive" "$work/knn-recursive.h5" "$work/knn-regtt-options.h5" \
      /Results
    # shellcheck disable=SC2086
    expect_success "pc --strategy regtt $options" tt pc --reference "$work/ref.h5" --queries "$work/queries.h5" \
      -r 0.1 --strategy regtt $options -o "$work/pc-regtt-options.h5"
    expect_same_dataset "pc regtt $options equals recursive" "$work/pc-recursive.h5" "$work/pc-regtt-options.h5" \
      /Results
  done
  run h5dump -A -g /RunMetadata "$work/pc-regtt-options.h5"
  expect_contains "pc records REGTT's mode" '"lockstep"' "$out"
fi

# --sort sfc changes which thread serves which query, never the results' order.
for app_options in "knn -k 5" "pc -r 0.1"; do
  read -r app option value <<<"$app_options"
  expect_success "$app --sort sfc" tt "$app" --reference "$work/ref.h5" --queries "$work/queries.h5" \
    "$option" "$value" --strategy autoropes --sort sfc -o "$work/$app-sorted.h5"
  expect_same_dataset "$app --sort sfc equals unsorted" "$work/$app-recursive.h5" "$work/$app-sorted.h5" /Results
done
# --placement (which SM, or on the host which thread, runs which queries)
# never changes the results; nor does --workers-per-sm.
for placement in smcentric affinity persistent; do
  for args in "knn -k 5" "pc -r 0.1" "vp --strategy fsm" "bt -k 5 --strategy lockstep"; do
    read -r -a words <<<"$args"
    app=${words[0]}
    workers=()
    [[ $placement == persistent ]] || workers=(--workers-per-sm 2)
    expect_success "$app --placement $placement" tt "$app" --reference "$work/ref.h5" --queries "$work/queries.h5" \
      "${words[@]:1}" --placement "$placement" "${workers[@]}" -o "$work/$app-$placement.h5"
    expect_same_dataset "$app --placement $placement equals recursive" "$work/$app-recursive.h5" \
      "$work/$app-$placement.h5" /Results
  done
done
run h5dump -A -g /RunMetadata "$work/knn-affinity.h5"
expect_contains "knn records its placement" '"affinity"' "$out"
expect_failure "unknown --placement" "--placement" tt knn --reference "$work/ref.h5" --queries "$work/queries.h5" \
  --placement everywhere -o "$failures/knn.h5"
expect_failure "negative --workers-per-sm" "--workers-per-sm" tt knn --reference "$work/ref.h5" \
  --queries "$work/queries.h5" --placement smcentric --workers-per-sm -1 -o "$failures/knn.h5"
expect_failure "--placement with --strategy regtt" "--placement" tt knn --reference "$work/ref.h5" \
  --queries "$work/queries.h5" --strategy regtt --placement affinity -o "$failures/knn.h5"
expect_failure "--workers-per-sm with persistent threads" "--workers-per-sm" tt knn --reference "$work/ref.h5" \
  --queries "$work/queries.h5" --placement persistent --workers-per-sm 2 -o "$failures/knn.h5"
# A build for CUDA and OpenMP offers no serial backend (core/config.hpp).
has_serial=false
tt info | grep -q "backends .*serial" && has_serial=true
if $has_serial; then
  expect_failure "--placement on the serial backend" "--placement" tt knn --reference "$work/ref.h5" \
    --queries "$work/queries.h5" --placement smcentric --backend serial -o "$failures/knn.h5"
else
  expect_failure "--backend serial where it is not built" "backend" tt knn --reference "$work/ref.h5" \
    --queries "$work/queries.h5" --backend serial -o "$failures/knn.h5"
fi

expect_failure "unknown --sort" "--sort" tt knn --reference "$work/ref.h5" --queries "$work/queries.h5" \
  --sort zigzag -o "$failures/knn.h5"
expect_attributes "$work/pc-autoropes.h5" radius
run h5dump -A -g /RunMetadata "$work/knn-autoropes.h5"
expect_contains "knn records the BVH" '"bvh"' "$out"

host_backend=openmp
$has_serial && host_backend=serial
expect_success "knn on the $host_backend backend, 1 thread" tt knn --reference "$work/ref.h5" --queries "$work/queries.h5" \
  -k 5 --backend $host_backend --threads 1 -o "$work/knn-serial.h5"
expect_contains "knn prints a summary" "queries/s" "$out"
expect_contains "knn summary reports the mean distance" "Mean neighbour distance" "$out"
expect_same_dataset "$host_backend equals the default backend" "$work/knn-autoropes.h5" "$work/knn-serial.h5" /Results

# --self: the reference set is the query set and nobody is its own neighbour.
for strategy in recursive autoropes brute auto; do
  expect_success "knn --self --strategy $strategy" \
    tt knn --reference "$work/ref.h5" --self -k 4 --strategy "$strategy" -o "$work/self-$strategy.h5"
  expect_shape "$work/self-$strategy.h5" /Results/NeighborIndices "{600, 4}"
done
for strategy in autoropes brute auto; do
  expect_same_dataset "knn --self: $strategy equals recursive" "$work/self-recursive.h5" "$work/self-$strategy.h5" \
    /Results
done
expect_success "pc --self" tt pc --reference "$work/ref.h5" --self -r 0.05 -o "$work/pc-self.h5"
expect_shape "$work/pc-self.h5" /Results/Counts "{600}"

# --- Barnes-Hut ------------------------------------------------------------------
for strategy in "${strategies[@]}"; do
  result=$work/bh-$strategy.h5
  expect_success "bh-force --strategy $strategy" tt bh-force --snapshot "$work/snap.h5" --theta 0.6 \
    --softening 0.01 --strategy "$strategy" -o "$result"
  expect_contains "bh-force summary reports the rms acceleration" "RMS acceleration" "$out"
  expect_shape "$result" /Results/Accelerations "{300, 3}"
  if [[ $strategy == regtt ]]; then
    # Its breadth-first top sums a body's pulls in another order: equal up to float rounding.
    run h5diff -p 1e-4 "$work/bh-recursive.h5" "$result" /Results /Results
    if [[ $status -eq 0 ]]; then pass "bh-force: regtt within rounding of recursive"; else fail "bh-force: regtt" "$out$err"; fi
  elif [[ $strategy != recursive ]]; then
    expect_same_dataset "bh-force: $strategy equals recursive" "$work/bh-recursive.h5" "$result" /Results
  fi
done
if [[ " ${strategies[*]} " == *" regtt "* ]]; then
  # Reorder depth 1 keeps the depth-first summation order.
  expect_success "bh-force --strategy regtt --reorder-depth 1" tt bh-force --snapshot "$work/snap.h5" --theta 0.6 \
    --softening 0.01 --strategy regtt --regtt-mode lockstep --reorder-depth 1 -o "$work/bh-regtt-1.h5"
  expect_same_dataset "bh-force: regtt at depth 1 equals recursive" "$work/bh-recursive.h5" "$work/bh-regtt-1.h5" /Results
fi
expect_success "bh-force --sort sfc" tt bh-force --snapshot "$work/snap.h5" --theta 0.6 --softening 0.01 \
  --strategy autoropes --sort sfc -o "$work/bh-sorted.h5"
expect_same_dataset "bh-force --sort sfc equals unsorted" "$work/bh-recursive.h5" "$work/bh-sorted.h5" /Results
expect_attributes "$work/bh-autoropes.h5" application tree strategy backend threads leaf_size theta softening \
  n_reference n_queries read_s build_s traverse_s

# Group walks, quadrupoles, the com-offset criterion and the accuracy report.
for multipole in monopole quadrupole; do
  result=$work/bh-group-$multipole.h5
  expect_success "bh-force --strategy group --multipole $multipole --error-report" tt bh-force \
    --snapshot "$work/snap.h5" --theta 0.6 --softening 0.01 --strategy group --group-size 16 \
    --multipole "$multipole" --opening com-offset --error-report --error-sample 100 -o "$result"
  expect_contains "bh-force --error-report prints the 99th percentile" "99th percentile" "$out"
  expect_shape "$result" /Results/Accelerations "{300, 3}"
  expect_shape "$result" /Results/ErrorSample "{100}"
  expect_shape "$result" /Results/ErrorSampleExact "{100, 3}"
done
expect_attributes "$work/bh-group-quadrupole.h5" multipole opening group_size error_median error_p99 error_max \
  error_sample_size
expect_success "bh-force --theta 0 --error-report over every body" tt bh-force --snapshot "$work/snap.h5" \
  --theta 0 --softening 0.01 --strategy group --multipole quadrupole --error-report -o "$work/bh-exact.h5"
expect_shape "$work/bh-exact.h5" /Results/ErrorSample "{300}"
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  run /usr/bin/python3 -c "import sys, h5py
f = h5py.File(sys.argv[1], 'r'); m = f['RunMetadata'].attrs
sys.exit(0 if m['error_max'] < 1e-5 and m['error_median'] <= m['error_p99'] <= m['error_max'] else 1)" \
    "$work/bh-exact.h5"
  if [[ $status -eq 0 ]]; then pass "theta 0 is direct summation to float rounding"; else fail "theta 0 errors" "$err"; fi
fi

# --- special inputs: identical, duplicated and single points ---------------------------
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
  # points FILE ARRAY-EXPRESSION: a points file holding float32 coordinates.
  points() {
    python "with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('/Points/Coordinates', data=np.asarray($2, dtype=np.float32))" "$1"
  }
  # check NAME PYTHON-CONDITION FILE: the condition holds over the results of FILE.
  check() {
    run python "f = h5py.File(sys.argv[1], 'r'); r = f['Results']
sys.exit(0 if ($2) else 1)" "$3"
    if [[ $status -eq 0 ]]; then pass "$1"; else fail "$1" "$err"; fi
  }
  points "$work/identical.h5" "np.full((20, 3), 0.25)"
  points "$work/duplicates.h5" "np.tile(np.random.default_rng(7).random((50, 3)), (2, 1))"

  for strategy in recursive autoropes brute; do
    expect_success "knn on identical points ($strategy)" tt knn --reference "$work/identical.h5" --self -k 3 \
      --strategy "$strategy" -o "$work/identical-$strategy.h5"
    # Each point's neighbours are the lowest other indices, all at distance 0.
    check "identical points: lowest other indices, distance 0 ($strategy)" \
      "all(list(r['NeighborIndices'][q]) == [i for i in range(20) if i != q][:3] for q in range(20))
       and not r['NeighborDistances'][:].any()" "$work/identical-$strategy.h5"
  done
  expect_success "nn on duplicated points" tt nn --reference "$work/duplicates.h5" --self -o "$work/duplicates.h5.out"
  check "duplicated points: each finds its twin at distance 0" \
    "(r['NeighborIndices'][:, 0] == (np.arange(100) + 50) % 100).all() and not r['NeighborDistances'][:].any()" \
    "$work/duplicates.h5.out"
  expect_success "pc on identical points" tt pc --reference "$work/identical.h5" --self -r 0.001 -o "$work/pc-identical.h5"
  check "identical points: every other point within r" "(r['Counts'][:] == 19).all()" "$work/pc-identical.h5"

  expect_success "nn against a single point" tt nn --reference "$work/one.h5" --queries "$work/queries.h5" -o "$work/one-nn.h5"
  check "single point: every query finds index 0" "(r['NeighborIndices'][:] == 0).all()" "$work/one-nn.h5"
  expect_success "pc --self on a single point" tt pc --reference "$work/one.h5" --self -r 1 -o "$work/one-pc.h5"
  check "single point, --self: it counts nobody" "(r['Counts'][:] == 0).all()" "$work/one-pc.h5"

  # Two coincident bodies: an infinite pull without softening, finite with it.
  cp "$work/snap.h5" "$work/coincident.h5"
  python "with h5py.File(sys.argv[1], 'r+') as f:
    x = f['PartType1/Coordinates']
    x[1] = x[0]" "$work/coincident.h5"
  expect_failure "bh-force on coincident bodies without softening" "--softening" \
    tt bh-force --snapshot "$work/coincident.h5" -o "$failures/out.h5"
  expect_success "bh-force on coincident bodies with softening" \
    tt bh-force --snapshot "$work/coincident.h5" --softening 0.01 -o "$work/coincident-out.h5"
else
  echo "SKIP: special-input checks need /usr/bin/python3 with h5py and numpy"
fi

# --- auto: what it picked, run by hand, gives the same results ------------------
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  for app_options in "knn -k 5" "pc -r 0.1" "bt -k 7"; do
    read -r app option value <<<"$app_options"
    expect_success "$app --strategy auto" tt "$app" --reference "$work/ref.h5" --queries "$work/queries.h5" \
      "$option" "$value" -o "$work/$app-picked-auto.h5"
    expect_contains "$app --strategy auto says what it picked" "auto (a " "$out"
    run python "m = h5py.File(sys.argv[1], 'r')['RunMetadata'].attrs
print(m['strategy'], m['sort'], m['requested_strategy'])" "$work/$app-picked-auto.h5"
    read -r picked sort requested <<<"$out"
    expect_contains "$app: auto is recorded as requested" "auto" "$requested"
    expect_success "$app --strategy $picked --sort $sort (auto's pick)" tt "$app" --reference "$work/ref.h5" \
      --queries "$work/queries.h5" "$option" "$value" --strategy "$picked" --sort "$sort" -o "$work/$app-picked.h5"
    expect_same_dataset "$app: auto equals its pick ($picked, $sort)" "$work/$app-picked-auto.h5" \
      "$work/$app-picked.h5" /Results
  done
fi

# --- beyond the trees' dimensions: brute force, auto picks it, trees refuse -----
expect_success "generate 130-D reference" tt generate --dist clustered -n 400 --dim 130 --clusters 4 --seed 8 \
  -o "$work/ref130.h5"
expect_success "generate 130-D queries" tt generate --dist uniform -n 40 --dim 130 --seed 9 -o "$work/queries130.h5"
wide=(--reference "$work/ref130.h5" --queries "$work/queries130.h5")
expect_success "knn --strategy brute, 130-D" tt knn "${wide[@]}" -k 6 --strategy brute -o "$work/knn130-brute.h5"
expect_shape "$work/knn130-brute.h5" /Results/NeighborIndices "{40, 6}"
expect_success "knn --strategy auto, 130-D" tt knn "${wide[@]}" -k 6 -o "$work/knn130-auto.h5"
expect_contains "auto picks brute beyond the trees' dimensions" "picked brute" "$out"
expect_same_dataset "130-D: auto equals brute" "$work/knn130-brute.h5" "$work/knn130-auto.h5" /Results
expect_success "pc --strategy brute, 130-D" tt pc "${wide[@]}" -r 2 --strategy brute -o "$work/pc130.h5"
expect_shape "$work/pc130.h5" /Results/Counts "{40}"
expect_failure "a tree beyond its dimensions" "brute-force strategy (brute" tt knn "${wide[@]}" --strategy fsm \
  -o "$failures/out.h5"
expect_contains "the tree's error names its limit" "at most 16" "$err"

# --- mistakes: clear message, non-zero exit, no output ------------------------------
ref=(--reference "$work/ref.h5")
queries=(--queries "$work/queries.h5")
output=(-o "$failures/out.h5")
expect_failure "-k 0" "-k" tt knn "${ref[@]}" "${queries[@]}" -k 0 "${output[@]}"
expect_failure "-k larger than the reference set" "-k 2 exceeds" tt bt --reference "$work/one.h5" "${queries[@]}" -k 2 "${output[@]}"
expect_failure "-r 0" "-r" tt pc "${ref[@]}" "${queries[@]}" -r 0 "${output[@]}"
expect_failure "-r nan" "-r" tt pc "${ref[@]}" "${queries[@]}" -r nan "${output[@]}"
expect_failure "pc without -r" "--radius" tt pc "${ref[@]}" "${queries[@]}" "${output[@]}"
expect_failure "--theta -1" "--theta" tt bh-force --snapshot "$work/snap.h5" --theta -1 "${output[@]}"
expect_failure "unknown --multipole" "--multipole" tt bh-force --snapshot "$work/snap.h5" --multipole octupole \
  "${output[@]}"
expect_failure "unknown --opening" "--opening" tt bh-force --snapshot "$work/snap.h5" --opening sideways "${output[@]}"
expect_failure "--group-size 65" "--group-size" tt bh-force --snapshot "$work/snap.h5" --strategy group \
  --group-size 65 "${output[@]}"
expect_failure "--error-sample 0" "--error-sample" tt bh-force --snapshot "$work/snap.h5" --error-report \
  --error-sample 0 "${output[@]}"
expect_failure "2-D queries against a 3-D reference" "2-D" tt knn "${ref[@]}" --queries "$work/queries2d.h5" "${output[@]}"
expect_failure "missing reference file" "$work/absent.h5" \
  tt nn --reference "$work/absent.h5" "${queries[@]}" "${output[@]}"
expect_failure "a points file as snapshot" "$work/ref.h5" tt bh-force --snapshot "$work/ref.h5" "${output[@]}"
expect_failure "unknown --strategy" "--strategy" tt vp "${ref[@]}" "${queries[@]}" --strategy sideways "${output[@]}"
expect_failure "unknown --backend" "--backend" tt vp "${ref[@]}" "${queries[@]}" --backend abacus "${output[@]}"
if [[ " ${strategies[*]} " == *" regtt "* ]]; then
  for depth in -1 x 3x 99; do
    expect_failure "--reorder-depth $depth" "--reorder-depth" \
      tt knn "${ref[@]}" "${queries[@]}" --strategy regtt --reorder-depth "$depth" "${output[@]}"
  done
  expect_failure "unknown --regtt-mode" "--regtt-mode" \
    tt pc "${ref[@]}" "${queries[@]}" -r 0.1 --strategy regtt --regtt-mode sideways "${output[@]}"
  expect_failure "bh-force --reorder-depth beyond an octree's" "--reorder-depth" \
    tt bh-force --snapshot "$work/snap.h5" --strategy regtt --reorder-depth 8 "${output[@]}"
fi
expect_failure "both --queries and --self" "--self" tt knn "${ref[@]}" "${queries[@]}" --self "${output[@]}"
expect_failure "neither --queries nor --self" "--queries" tt knn "${ref[@]}" "${output[@]}"
expect_failure "--self on a single point" "--self" tt knn --reference "$work/one.h5" --self "${output[@]}"
expect_failure "--leaf-size 0" "--leaf-size" tt knn "${ref[@]}" "${queries[@]}" --leaf-size 0 "${output[@]}"
expect_failure "output into a missing directory" "$failures/missing" \
  tt knn "${ref[@]}" "${queries[@]}" -o "$failures/missing/out.h5"
if tt info | grep -q cuda; then
  expect_failure "recursive on cuda" "host backends only" \
    tt knn "${ref[@]}" "${queries[@]}" --backend cuda --strategy recursive "${output[@]}"
fi

# A failed run leaves an existing output as it was.
existing=$work/knn-autoropes.h5
before=$(cksum <"$existing")
run tt knn "${ref[@]}" "${queries[@]}" -k 0 -o "$existing"
run tt pc "${ref[@]}" --queries "$work/queries2d.h5" -r 0.1 -o "$existing"
run tt bh-force --snapshot "$work/snap.h5" --theta -1 -o "$existing"
run tt knn --reference "$work/one.h5" --self -o "$existing"
if [[ $(cksum <"$existing") == "$before" ]]; then
  pass "existing output left intact by failed runs"
else
  fail "existing output was modified by a failed run"
fi
left=$(ls -A "$work" | grep '\.tmp\.' || true)
if [[ -z $left ]]; then pass "no temporary files left behind"; else fail "temporary files left behind" "$left"; fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
