#!/usr/bin/env bash
# Issue 35 on the lent GPU machine (the `device` tool), from the repository
# root: N-body forces and steps on the Plummer, Hernquist and clustered-box
# sets (perf/nbody_sets.py), with pytreegrav beside them.
#   scripts/device/nbody-sets.sh build   the CUDA CLI and bench_nbody (MPI off) on every core,
#                                        in build-device/nbody; stripped, xz-compressed into $OUT
#   scripts/device/nbody-sets.sh run     perf/nbody_sets.py with what `build` made in this call,
#                                        or with .device/nbody-bin/ (those binaries, carried)
# Both in one call: `build run`. Carry .device/kokkos-cuda, .device/kk-cuda,
# .device/bm (Debian's Google Benchmark: perf/ needs it to configure) and
# .device/nbwheels (pytreegrav). Env: NBODY_SETS_ARGS (more nbody_sets.py
# arguments), NBODY_BUDGET (seconds for the whole call, default 585: the
# device tool stops a command at 600).
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
cache=/root/.cache/treetrav
build=$root/build-device/nbody
budget=${NBODY_BUDGET:-585}
export PATH=/usr/local/cuda/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-12
# shellcheck source=scripts/device/carried-kokkos.sh
source "$root/scripts/device/carried-kokkos.sh"
bin=$root/.device/nbody-bin

for step in "$@"; do
  case $step in
  build)
    nvidia-smi -L
    link_kokkos
    kokkos=$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" \
      -DKokkosKernels_ROOT="$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90" \
      -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_90 \
      -DTREETRAV_ENABLE_MPI=OFF -DTREETRAV_ENABLE_TESTS=OFF \
      -Dbenchmark_DIR="$root/.device/bm/usr/lib/x86_64-linux-gnu/cmake/benchmark" >"$out/configure.log" 2>&1 ||
      { tail -n 30 "$out/configure.log"; exit 1; }
    start=$SECONDS
    timeout $((budget - SECONDS - 30)) ninja -C "$build" -j "$(nproc)" treetrav bench_nbody >"$out/build.log" 2>&1
    rc=$?
    echo "build rc=$rc in $((SECONDS - start)) s"
    grep -E "error|FAILED" "$out/build.log" | head -n 20
    ((rc == 0)) || exit 1
    mkdir -p "$bin"
    cp "$build/treetrav" "$build/perf/bench_nbody" "$bin/"
    strip "$bin/treetrav" "$bin/bench_nbody"
    # Each file back from $OUT at most 16 MiB: the binaries one by one (NBODY_SAVE=0: not at all).
    if [[ ${NBODY_SAVE:-1} != 0 ]]; then
      for b in treetrav bench_nbody; do xz -T0 -c "$bin/$b" >"$out/$b.xz"; done
      ls -la "$out"/*.xz
    fi
    ;;
  run)
    [[ -x $bin/treetrav ]] || { echo "no binaries in $bin"; exit 1; }
    pip install --no-deps --quiet --target /tmp/nbwheels "$root"/.device/nbwheels/*.whl 2>&1 | tail -n 2
    export PYTHONPATH=/tmp/nbwheels${PYTHONPATH:+:$PYTHONPATH}
    nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv
    # shellcheck disable=SC2086
    python3 perf/nbody_sets.py --treetrav "$bin/treetrav" --bench "$bin/bench_nbody" --out "$out" \
      --work /tmp/nbody-sets --budget $((budget - SECONDS - 120)) ${NBODY_SETS_ARGS:-}
    echo "runner rc=$?"
    tail -n 40 "$out/sets.log" | cut -c1-300
    python3 -c "import json; s = json.load(open('$out/sets-summary.json')); print(json.dumps({k: s[k] for k in s if k not in ('steps', 'steps_counted', 'drift', 'step_big')}, indent=1)[:6000])"
    ;;
  *)
    echo "unknown step $step" >&2
    exit 2
    ;;
  esac
done
