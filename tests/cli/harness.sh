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


# expect_contains NAME TEXT HAYSTACK
expect_contains() {
  if grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1: no '$2' in output" "$3"; fi
}

# expect_failure NAME TEXT CMD...: the contract for bad input: exit 2, one
# line on stderr mentioning TEXT, and nothing written into $failures (which
# is emptied for the next check).
expect_failure() {
  local name=$1 text=$2 left
  shift 2
  run "$@"
  if [[ $status -ne 2 ]]; then
    fail "$name: exit $status, not 2" "$out$err"
  elif ! grep -qF -- "$text" <<<"$err"; then
    fail "$name: stderr does not mention '$text'" "$err"
  elif [[ $(wc -l <"$work/stderr") -ne 1 ]]; then
    fail "$name: stderr is not one line" "$err"
  else
    pass "$name"
  fi
  left=$(ls -A "$failures")
  if [[ -z $left ]]; then pass "$name: nothing written"; else fail "$name: wrote files" "$left"; fi
  rm -rf "${failures:?}"/* "${failures:?}"/.[!.]*
}
