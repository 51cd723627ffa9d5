#!/usr/bin/env bash
# perf/'s treetrav-studies (built with TREETRAV_ENABLE_BENCHMARKS) as a user
# runs it: corun's co-runs, and mistakes that must fail cleanly.
#   TREETRAV=/path/to/treetrav-studies bash tests/cli/test_studies_cli.sh
# Exits non-zero when any check fails; ends with "N passed, N failed".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

tt() { "$TREETRAV" "$@"; }

expect_success "bench --help" tt bench --help
expect_contains "bench --help lists --regtt" "--regtt" "$out"
expect_failure "bench: --placement with --regtt" "--placement" tt bench --regtt --placement smcentric \
  --out "$failures/bench"
expect_success "corun --help" tt corun --help

expect_failure "corun on the serial backend" "--backend" tt corun --pair knn,bh -n 3000 \
  --bodies 2000 --backend serial
# corun: a pair on two instances, the hardware's and a partition's.
expect_success "corun knn,bh" tt corun --pair knn,bh -n 3000 --bodies 2000 --runs 2 --backend openmp
expect_contains "corun reports STP and ANTT" "STP" "$out"
expect_contains "corun reports the partition" "smcentric SMs" "$out"
expect_failure "corun: one application" "--pair" tt corun --pair knn
expect_failure "corun: unknown application" "--pair" tt corun --pair knn,sort

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
