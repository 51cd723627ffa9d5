# Shared by the CLI test scripts: a temporary work directory, pass/fail
# counting, and running a command with its exit status and output captured.
# Sourced, with TREETRAV set.
set -u
: "${TREETRAV:?set TREETRAV to the treetrav binary}"
export OMP_PROC_BIND=false

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=$work/failures  # commands that must fail write (nothing) here
mkdir "$failures"
passed=0
failed=0

pass() {
  passed=$((passed + 1))
  echo "PASS: $1"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL: $1"
  if [[ -n ${2:-} ]]; then sed 's/^/    | /' <<<"$2"; fi
}

# run CMD...: sets $status, $out and $err.
run() {
  "$@" >"$work/stdout" 2>"$work/stderr"
  status=$?
  out=$(<"$work/stdout")
  err=$(<"$work/stderr")
}

# expect_success NAME CMD...
expect_success() {
  local name=$1
  shift
  run "$@"
  if [[ $status -eq 0 ]]; then pass "$name"; else fail "$name: exit $status" "$err"; fi
}

