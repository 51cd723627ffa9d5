#!/usr/bin/env bash
# REGTT on the lent GPU machine (the `run` tool), from the repository root,
# with the CUDA build's binaries carried in .device/regtt/bin (treetrav,
# treetrav-studies from the build's perf/ for the bench step, and whichever
# of test_regtt, test_search_apps, test_barnes_hut, test_sfc_order were
# built; the tests step runs those present) and fallback shared
# libraries in .device/regtt/lib; either may come as DIR.tar.xz (unpacked
# here first). Logs and results go to $OUT:
#   gpu-tests.log   the Cuda instances of the REGTT-carrying test suites
#   sanitizer.log   compute-sanitizer memcheck + racecheck on REGTT's kernels
#   regtt/          treetrav-studies bench --regtt (regtt.md, regtt.csv, regtt-sweep.csv, bench.log)
#   ncu.csv         Nsight Compute: sectors per load request and branch
#                   uniformity of the autoropes and REGTT kernels (Figure 6;
#                   perf/regtt_ncu_summary.py makes the table)
#   scripts/device/regtt-checks.sh [tests] [sanitize] [bench] [ncu]
# Env: REGTT_BENCH_ARGS (extra bench arguments), REGTT_BENCH_TIMEOUT,
# REGTT_SANITIZE_TOOLS (default "memcheck racecheck"), REGTT_SANITIZE_TESTS
# (0: no memcheck of test_regtt),
# REGTT_NCU_N (points per ncu input, default 200000), REGTT_DEADLINE (seconds
# from the start by which every step has ended, default 570: the bench gets
# what the later steps leave, sanitizer and ncu runs stop when time is up).
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
dir=.device/regtt
bin=$dir/bin
for archive in "$dir"/*.tar.xz; do
  [[ -e $archive ]] || continue
  mkdir -p "${archive%.tar.xz}" && tar xJf "$archive" -C "${archive%.tar.xz}"
done
# Only the libraries the image lacks (ldd's "not found", followed three levels
# down), so the image's own stay first for everything else.
mkdir -p /tmp/regtt-lib
export LD_LIBRARY_PATH=/tmp/regtt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for _ in 1 2 3; do
  for binary in "$bin"/*; do
    for missing in $(ldd "$binary" 2>/dev/null | awk '/not found/ {print $1}'); do
      cp -n "$dir/lib/$missing" /tmp/regtt-lib/ 2>/dev/null
    done
  done
done
ldd "$bin/treetrav" | grep "not found" && echo "missing libraries" >&2
export OMP_PROC_BIND=spread OMP_PLACES=threads
steps=${*:-tests bench sanitize ncu}
deadline=$((SECONDS + ${REGTT_DEADLINE:-570}))
left() { echo $((deadline - SECONDS)); }
work=$(mktemp -d)
tt=$bin/treetrav

read -ra queue <<<"$steps"
for ((i = 0; i < ${#queue[@]}; ++i)); do
  step=${queue[i]}
  later=$((${#queue[@]} - i - 1)) # steps still to run after this one
  started=$SECONDS
  case $step in
  tests)
    {
      nvidia-smi -L
      for t in test_regtt test_search_apps test_barnes_hut test_sfc_order; do
        [[ -x $bin/$t ]] || continue
        echo "== $t (Cuda)"
        timeout 240 "$bin/$t" --gtest_filter='*Cuda*:RegttNumbering*:RegttDepthModel*' 2>&1 |
          grep -E "^\[ +(OK|FAILED|PASSED) |Failure|Expected|Which|actual|error" | tail -n 60
        echo "rc=${PIPESTATUS[0]}"
      done
    } >"$out/gpu-tests.log" 2>&1
    grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
    ;;
  sanitize)
    {
      "$tt" generate --dist covtype7 -n 3000 --seed 1 -o "$work/s-ref.h5"
      "$tt" generate --dist covtype7 -n 1000 --seed 2 -o "$work/s-q.h5"
      "$tt" generate --dist plummer -n 3000 --seed 3 -o "$work/s-bodies.h5"
      for tool in ${REGTT_SANITIZE_TOOLS:-memcheck racecheck}; do
        # Guided and unguided, both modes, one-word, radix-pass and comparison-sorted keys.
        for run in "knn -k 8 --regtt-mode lockstep --reorder-depth 5" \
          "knn -k 8 --regtt-mode nonlockstep --reorder-depth 9 --regtt-order-bits" \
          "pc -r 0.05 --regtt-mode nonlockstep --reorder-depth 7" \
          "pc -r 0.05 --regtt-mode lockstep --reorder-depth auto"; do
          (($(left) > 30)) || break
          echo "== compute-sanitizer --tool $tool treetrav $run"
          # shellcheck disable=SC2086
          timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$tt" $run --strategy regtt \
            --backend cuda --reference "$work/s-ref.h5" --queries "$work/s-q.h5" -o "$work/s-$tool.h5" 2>&1 |
            tail -n 4
          echo "rc=${PIPESTATUS[0]}"
        done
        for mode in lockstep nonlockstep; do
          (($(left) > 30)) || break
          echo "== compute-sanitizer --tool $tool treetrav bh-force --regtt-mode $mode --reorder-depth 3"
          timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$tt" bh-force --strategy regtt \
            --regtt-mode $mode --reorder-depth 3 --backend cuda --snapshot "$work/s-bodies.h5" --softening 0.01 \
            -o "$work/s-bh-$tool.h5" 2>&1 | tail -n 4
          echo "rc=${PIPESTATUS[0]}"
        done
      done
      if [[ -x $bin/test_regtt && ${REGTT_SANITIZE_TESTS:-1} == 1 ]] && (($(left) > 150)); then
        echo "== compute-sanitizer --tool memcheck test_regtt (Cuda)"
        timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/test_regtt" \
          --gtest_filter='*Cuda*:-*Automatic*' --gtest_brief=1 2>&1 | tail -n 6
        echo "rc=${PIPESTATUS[0]}"
      fi
    } >"$out/sanitizer.log" 2>&1
    grep -E "^== |ERROR SUMMARY|RACECHECK SUMMARY|rc=" "$out/sanitizer.log"
    ;;
  bench)
    mkdir -p "$out/regtt"
    # shellcheck disable=SC2086
    # Room for the later steps (sanitize, ncu), if any.
    limit=$(($(left) - (later > 0 ? 150 : 10)))
    ((limit > ${REGTT_BENCH_TIMEOUT:-330})) && limit=${REGTT_BENCH_TIMEOUT:-330}
    timeout "$limit" "$bin/treetrav-studies" bench --regtt --n 200000 --bodies 1000000 --repeats 3 \
      --out "$out/regtt" ${REGTT_BENCH_ARGS:-} >"$out/regtt/bench.log" 2>&1
    echo "bench rc=$?"
    tail -n 2 "$out/regtt/bench.log"
    ;;
  ncu)
    # One clustered input per tree: autoropes and REGTT (non-lockstep, at the
    # depth the bench's model chose, else 6) under Nsight Compute.
    n=${REGTT_NCU_N:-200000}
    "$tt" generate --dist covtype7 -n "$n" --seed 1 -o "$work/ref.h5" >/dev/null
    "$tt" generate --dist covtype7 -n "$n" --seed 2 -o "$work/q.h5" >/dev/null
    "$tt" generate --dist plummer -n "$n" --seed 3 -o "$work/bodies.h5" >/dev/null
    metrics=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__sass_average_branch_targets_threads_uniform.pct,smsp__thread_inst_executed_per_inst_executed.ratio
    : >"$out/ncu.csv"
    for app in pc nn knn vp bt bh; do
      input=covtype7
      [[ $app == bh ]] && input=plummer
      depth=$(awk -F, -v a=$app -v i=$input '$1==a && $2==i && $3=="regtt" && $18=="nonlockstep" {print $13}' \
        "$out/regtt/regtt.csv" 2>/dev/null | head -n 1)
      case $app in
      pc) args=(pc -r 0.05 --reference "$work/ref.h5" --queries "$work/q.h5") ;;
      knn | bt) args=("$app" -k 8 --reference "$work/ref.h5" --queries "$work/q.h5") ;;
      bh) args=(bh-force --snapshot "$work/bodies.h5" --theta 0.5 --softening 0.01) ;;
      *) args=("$app" --reference "$work/ref.h5" --queries "$work/q.h5") ;;
      esac
      # Guided searches also with order bits, at the bench's depth for them.
      ordered=$(awk -F, -v a=$app -v i=$input '$1==a && $2==i && $3=="regtt" && $18=="nonlockstep/order-bits" {print $13}' \
        "$out/regtt/regtt.csv" 2>/dev/null | head -n 1)
      variants=(autoropes regtt)
      [[ -n $ordered ]] && variants+=(regtt-order-bits)
      for variant in "${variants[@]}"; do
        (($(left) > 15)) || break 2
        options=(--strategy regtt --regtt-mode nonlockstep --reorder-depth "${depth:-6}")
        [[ $variant == autoropes ]] && options=(--strategy autoropes)
        [[ $variant == regtt-order-bits ]] && options=(--strategy regtt --regtt-mode nonlockstep --reorder-depth "$ordered" --regtt-order-bits)
        echo "# $app $input $variant depth ${options[5]:--}" >>"$out/ncu.csv"
        timeout $(($(left) < 60 ? $(left) : 60)) ncu --csv --page raw --print-units base --metrics "$metrics" \
          --kernel-name-base demangled --kernel-name regex:'AutoropesKernel|RegttDftKernel|RegttBftKernel' \
          "$tt" "${args[@]}" --backend cuda "${options[@]}" -o "$work/ncu-out.h5" 2>&1 | grep -E '^"' >>"$out/ncu.csv"
      done
    done
    echo "ncu: $(grep -c '^"[0-9]' "$out/ncu.csv") kernels profiled"
    ;;
  esac
  echo "$step: $((SECONDS - started)) s"
done
rm -rf "$work"
