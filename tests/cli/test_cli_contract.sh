#!/usr/bin/env bash
# The contract every subcommand keeps (README "Command line"):
# - every mistake in the command line exits 2 with one line naming the option
#   and what it accepts, --help and --version exit 0;
# - no output ever replaces an input: -o (or --timings, or a run directory)
#   naming an input directly, as D/./in.h5, by a relative path, through a
#   symbolic link or as a hard link is refused and the input's bytes stay;
# - an -o that is a symbolic link is followed (the link stays and leads to the
#   new file), one with other hard links is refused.
#   TREETRAV=/path/to/treetrav bash tests/cli/test_cli_contract.sh
# Exits non-zero when any check fails; ends with "N passed, N failed".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

tt() { "$TREETRAV" "$@"; }

in=$work/inputs
mkdir "$in"
expect_success "generate points" tt generate --dist uniform -n 300 --dim 3 --seed 1 -o "$in/points.h5"
expect_success "generate queries" tt generate --dist uniform -n 40 --dim 3 --seed 2 -o "$in/queries.h5"
expect_success "generate a snapshot" tt generate --dist plummer -n 100 --seed 3 -o "$in/bodies.h5"
expect_success "generate a tree" tt treefix-generate --shape random -n 200 --seed 4 -o "$in/tree.h5"
points=$in/points.h5
output=(-o "$failures/out.h5")

# --- one check per class of command-line mistake -------------------------------------
expect_failure "conversion: -k abc" "-k: must be an integer in 1..128 (got 'abc')" \
  tt knn --reference "$points" --self -k abc "${output[@]}"
expect_failure "conversion: --steps abc" "--steps: must be an integer >= 0 (got 'abc')" \
  tt nbody --plummer 10 --dt 0.1 --steps abc -o "$failures/run"
expect_failure "conversion: a fraction for an integer" "--leaf-size: must be an integer >= 1 (got '1.5')" \
  tt knn --reference "$points" --self --leaf-size 1.5 "${output[@]}"
expect_failure "range: --threads -2, the bound printed readably" "--threads: must be an integer >= 0 (got '-2')" \
  tt knn --reference "$points" --self --threads -2 "${output[@]}"
for command in "knn --reference $points --self ${output[*]}" "bh-force --snapshot $in/bodies.h5 ${output[*]}" \
  "nbody --plummer 10 --dt 0.1 --steps 1 -o $failures/run"; do
  # shellcheck disable=SC2086
  expect_failure "range: --leaf-size 0 (${command%% *})" "--leaf-size: must be an integer >= 1 (got '0')" \
    tt $command --leaf-size 0
done
expect_failure "range: -r nan" "--radius: must be a finite number > 0 (got 'nan')" \
  tt pc --reference "$points" --self -r nan "${output[@]}"
expect_failure "range: --dt -1" "--dt: must be a finite number > 0 (got '-1')" \
  tt nbody --plummer 10 --dt -1 --steps 1 -o "$failures/run"
expect_failure "range: --seed -1 (64-bit unsigned)" "--seed: must be an integer >= 0 (got '-1')" \
  tt generate --dist uniform -n 10 --seed -1 "${output[@]}"
expect_failure "range: --snapshot-every -1" "--snapshot-every: must be an integer >= 0 (got '-1')" \
  tt nbody --plummer 10 --dt 0.1 --steps 1 --snapshot-every -1 -o "$failures/run"
expect_failure "range: --width inf" "--width: must be a finite number > 0 (got 'inf')" \
  tt generate --dist clustered -n 10 --width inf "${output[@]}"
expect_failure "enumeration: --sort zigzag" "--sort: zigzag not in {none,sfc}" \
  tt knn --reference "$points" --self --sort zigzag "${output[@]}"
expect_failure "enumeration: --strategy sideways" "--strategy" \
  tt knn --reference "$points" --self --strategy sideways "${output[@]}"
expect_failure "enumeration: --backend abacus" "--backend" \
  tt knn --reference "$points" --self --backend abacus "${output[@]}"
expect_failure "missing option" "--reference is required" tt knn --self "${output[@]}"
expect_failure "missing subcommand" "A subcommand is required" tt
expect_failure "unknown option" "--bogus" tt knn --reference "$points" --self --bogus "${output[@]}"
expect_failure "unknown subcommand" "unknown subcommand 'sideways'" tt sideways
expect_failure "repeated option" "-k: At Most 1 required but received 2" \
  tt knn --reference "$points" --self -k 1 -k 2 "${output[@]}"
expect_failure "conflicting options: --queries and --self" "--queries excludes --self" \
  tt knn --reference "$points" --queries "$in/queries.h5" --self "${output[@]}"
expect_failure "conflicting options: --ics and --plummer" "--ics excludes --plummer" \
  tt nbody --ics "$in/bodies.h5" --plummer 10 --dt 0.1 --steps 1 -o "$failures/run"
expect_failure "an option that needs another: --seed without --plummer" "--seed requires --plummer" \
  tt nbody --ics "$in/bodies.h5" --seed 3 --dt 0.1 --steps 1 -o "$failures/run"
expect_failure "empty file name" "--reference: must name a file (got an empty name)" \
  tt knn --reference "" --self "${output[@]}"
expect_failure "empty output name" "--output: must name a file (got an empty name)" \
  tt knn --reference "$points" --self -o ""
expect_success "--help exits 0" tt --help
expect_success "knn --help exits 0" tt knn --help
expect_success "--version exits 0" tt --version

# --- no output replaces an input -----------------------------------------------------
# Each spelling of the input file: directly, with ./, relative to another
# working directory, a symbolic link, a hard link.
mkdir "$in/elsewhere"
spellings() {
  local file=$1 name
  name=$(basename "$file")
  ln -sf "$file" "$in/link-$name"
  ln -f "$file" "$in/hard-$name"
  echo "$file" "$in/./$name" "../$name" "$in/link-$name" "$in/hard-$name"
}

# refused NAME INPUT CMD... (the command's output named by @OUT@): for each
# spelling of INPUT as @OUT@, run in $in/elsewhere: exit 2, a message naming
# the input's option, the input's bytes unchanged and nothing written.
refused() {
  local name=$1 input=$2 spelling before arguments argument
  shift 2
  before=$(cksum <"$input")
  for spelling in $(spellings "$input"); do
    arguments=()
    for argument in "$@"; do arguments+=("${argument//@OUT@/$spelling}"); done
    (cd "$in/elsewhere" && "${arguments[@]}") >"$work/stdout" 2>"$work/stderr"
    status=$?
    err=$(<"$work/stderr")
    if [[ $status -eq 2 && $err == *"an output never replaces an input"* && $(cksum <"$input") == "$before" ]]; then
      pass "$name: refused as $spelling, input unchanged"
    else
      fail "$name as $spelling: exit $status" "$err"
    fi
  done
  rm -f "$in"/link-* "$in"/hard-*
  [[ -z $(ls -A "$in/elsewhere") ]] && pass "$name: nothing written" || fail "$name: wrote files" "$(ls -A "$in/elsewhere")"
}

for app in nn vp; do
  refused "$app -o = --reference" "$points" tt "$app" --reference "$points" --queries "$in/queries.h5" -o @OUT@
  refused "$app -o = --queries" "$in/queries.h5" tt "$app" --reference "$points" --queries "$in/queries.h5" -o @OUT@
done
for app in knn bt; do
  refused "$app -o = --reference" "$points" tt "$app" --reference "$points" --queries "$in/queries.h5" -k 2 -o @OUT@
  refused "$app -o = --queries" "$in/queries.h5" tt "$app" --reference "$points" --queries "$in/queries.h5" -k 2 -o @OUT@
done
refused "pc -o = --reference" "$points" tt pc --reference "$points" --self -r 0.1 -o @OUT@
refused "pc -o = --queries" "$in/queries.h5" tt pc --reference "$points" --queries "$in/queries.h5" -r 0.1 -o @OUT@
refused "bh-force -o = --snapshot" "$in/bodies.h5" tt bh-force --snapshot "$in/bodies.h5" -o @OUT@
refused "treefix -o = --input" "$in/tree.h5" tt treefix --op leaffix --input "$in/tree.h5" -o @OUT@
refused "nbody -o = --ics" "$in/bodies.h5" tt nbody --ics "$in/bodies.h5" --dt 0.01 --steps 1 -o @OUT@
refused "nbody --timings = --ics" "$in/bodies.h5" \
  tt nbody --ics "$in/bodies.h5" --dt 0.01 --steps 1 -o "$failures/run" --timings @OUT@
[[ ! -e $failures/run ]] && pass "nbody: no run directory after a refused --timings" ||
  fail "nbody: a refused --timings left the run directory"
rm -rf "${failures:?}"/*

# --- files checked against themselves -------------------------------------------------
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  cp "$points" "$work/contradicts.h5"
  /usr/bin/python3 -c "import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f: f['Points'].attrs['NumPoints'] = 1000" "$work/contradicts.h5"
  expect_failure "a points file whose NumPoints contradicts its rows" "NumPoints is 1000" \
    tt knn --reference "$work/contradicts.h5" --self "${output[@]}"
  cp "$in/bodies.h5" "$work/same-ids.h5"
  /usr/bin/python3 -c "import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f: f['PartType1/ParticleIDs'][7] = f['PartType1/ParticleIDs'][3]" \
    "$work/same-ids.h5"
  expect_failure "a snapshot with a repeated particle id" "appears at rows 3 and 7" \
    tt nbody --ics "$work/same-ids.h5" --dt 0.01 --steps 1 -o "$failures/run"
  expect_failure "inspect: the same file" "appears at rows 3 and 7" tt inspect "$work/same-ids.h5"
else
  echo "SKIP: self-consistency checks need /usr/bin/python3 with h5py"
fi

# --- an output that is a link ------------------------------------------------------
results=$work/results
mkdir "$results"
tt generate --dist uniform -n 5 --seed 9 -o "$results/old.h5" >/dev/null
ln -s old.h5 "$results/link.h5"
expect_success "-o a symbolic link: written" tt knn --reference "$points" --self -k 2 -o "$results/link.h5"
if [[ -L $results/link.h5 && $(readlink "$results/link.h5") == old.h5 ]] &&
  h5ls "$results/old.h5/Results/NeighborIndices" >/dev/null 2>&1; then
  pass "-o a symbolic link: the link stays and leads to the results"
else
  fail "-o a symbolic link: the link was replaced or its target not written" "$(ls -l "$results")"
fi
ln -s new.h5 "$results/dangling.h5"
expect_success "-o a dangling symbolic link: written" tt knn --reference "$points" --self -k 2 \
  -o "$results/dangling.h5"
[[ -L $results/dangling.h5 && -f $results/new.h5 ]] && pass "-o a dangling link: its target is created" ||
  fail "-o a dangling link: its target is not created" "$(ls -l "$results")"
ln "$results/new.h5" "$results/second-name.h5"
before=$(cksum <"$results/new.h5")
expect_failure "-o a file with another hard link" "has 2 hard links" \
  tt knn --reference "$points" --self -k 2 -o "$results/new.h5"
[[ $(cksum <"$results/new.h5") == "$before" ]] && pass "-o with another hard link: the file is unchanged" ||
  fail "-o with another hard link: the file changed"
expect_failure "-o a directory" "is a directory" tt knn --reference "$points" --self -o "$results"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
