#!/usr/bin/env bash
# Issue 31's checks on the lent GPU machine (the `device` tool), run from the
# repository root. The machine has nvcc, CMake, ninja, GCC 12 and the
# libraries treetrav builds against (Ubuntu's HDF5, GoogleTest, CLI11, fmt,
# nlohmann-json) but no Kokkos: .device/ carries what scripts/bootstrap-kokkos.sh
# and scripts/bootstrap-kokkos-kernels.sh installed here (kokkos-cuda, kk-cuda,
# kokkos-cpu, kk-cpu), Debian's Google Benchmark (bm/usr, which perf/ builds
# against) and, for the A/B, the tree before the redesign (old/: `git archive`).
# Everything is built there, on its 16 cores, in build-device/ (ignored: kept
# between the calls of one warm machine).
#   scripts/device/redesign-ab.sh build [SECONDS]  configure, start the builds, wait up to SECONDS
#     (TREETRAV_AB_OLD_PHASES=1: the old tree's two longest CLI units by nvcc-phases.sh, its
#     benchmarks only; the new tree's CLI, benchmarks and tests with TREETRAV_AB_JOBS jobs;
#     TREETRAV_AB_CLI_ONLY=1: the new tree's CLI alone; TREETRAV_AB_TESTS: these tests
#     only, no distributed one; TREETRAV_AB_OLD_TARGETS: the old tree's targets, no CLI)
#   scripts/device/redesign-ab.sh wait [SECONDS]   wait for them
#   scripts/device/redesign-ab.sh phases [SECONDS] the old CLI's two longest units by nvcc-phases.sh
#   scripts/device/redesign-ab.sh tests            every GoogleTest case on Cuda
#   scripts/device/redesign-ab.sh sanitize         compute-sanitizer memcheck on the GPU searches and forces
#   scripts/device/redesign-ab.sh ab               bench_search (1M box / 1M ball, k = 10) and the
#                                                  1M-body step, old and new alternately; host kNN too
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
build=$root/build-device
cache=/root/.cache/treetrav
export PATH=/usr/local/cuda/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-12
export OMP_PROC_BIND=spread OMP_PLACES=threads

# shellcheck source=scripts/device/carried-kokkos.sh
source "$root/scripts/device/carried-kokkos.sh"

configure() { # source dir, build dir, cuda|cpu
  local kokkos=$cache/kokkos-3.4.1-e3e389ae-$3 kk=$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-$3
  [[ $3 == cuda ]] && kokkos=$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90 &&
    kk=$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90
  mkdir -p "$2"
  # A compiler launcher that logs each object's wall, user and sys seconds.
  printf '%s\n' '#!/bin/bash' 'out=; prev=; for a in "$@"; do [[ $prev == -o ]] && out=$a; prev=$a; done' \
    "exec /usr/bin/time -f \"%e %U %S \$out\" -a -o '$2/timed.log' \"\$@\"" >"$2.timecc"
  chmod +x "$2.timecc"
  local with_mpi=$mpi
  [[ $1 == "$root/.device/old" && -n ${TREETRAV_AB_OLD_PHASES:-} ]] && with_mpi=OFF
  local flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" -DKokkosKernels_ROOT="$kk"
    -DCMAKE_CXX_COMPILER_LAUNCHER="$2.timecc"
    -DTREETRAV_ENABLE_MPI=$with_mpi -Dbenchmark_DIR="$root/.device/bm/usr/lib/x86_64-linux-gnu/cmake/benchmark")
  [[ $with_mpi == ON ]] && flags+=("${mpi_flags[@]}")
  if [[ $3 == cuda ]]; then
    flags+=(-DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_90)
  else
    flags+=(-DCMAKE_CXX_COMPILER=g++-12 -DCMAKE_C_COMPILER=gcc-12)
  fi
  cmake -S "$1" -B "$2" "${flags[@]}" >"$2.configure.log" 2>&1 || {
    echo "configure $2 failed"
    tail -n 30 "$2.configure.log"
    if [[ $with_mpi == ON ]]; then
      echo "configuring $2 again without MPI"
      rm -rf "$2" && mkdir -p "$2"
      flags=("${flags[@]/-DTREETRAV_ENABLE_MPI=ON/-DTREETRAV_ENABLE_MPI=OFF}")
      cmake -S "$1" -B "$2" "${flags[@]}" >"$2.configure.log" 2>&1 || tail -n 30 "$2.configure.log"
    fi
  }
  grep -E "MPI|HDF5" "$2.configure.log" | head -n 5
}

start() { # build dir, jobs, targets...: the CLI first (its time and CPU seconds
  # per object, timed.log: wall, user, sys, object), then the targets
  local dir=$1 jobs=$2
  shift 2
  rm -f "$dir.rc" "$dir.cli-seconds" "$dir/timed.log"
  setsid nohup bash -c "start=\$SECONDS; ninja -C '$dir' -j $jobs treetrav_cli >'$dir.log' 2>&1;
    echo \$? \$((SECONDS - start)) >'$dir.cli-seconds'; cp '$dir/timed.log' '$dir.cli-timed.log';
    ninja -C '$dir' -j $jobs $* >>'$dir.log' 2>&1; echo \$? >'$dir.rc'; echo \$((SECONDS - start)) >'$dir.seconds'" \
    >/dev/null 2>&1 </dev/null &
}

start_targets() { # build dir, jobs, targets...: no CLI first
  local dir=$1 jobs=$2
  shift 2
  rm -f "$dir.rc" "$dir/timed.log"
  setsid nohup bash -c "start=\$SECONDS; ninja -C '$dir' -j $jobs $* >'$dir.log' 2>&1; echo \$? >'$dir.rc';
    echo \$((SECONDS - start)) >'$dir.seconds'" >/dev/null 2>&1 </dev/null &
}

# The old CLI's two longest units by nvcc-phases.sh, in the background (the
# compile lines of the configured old tree, without its timing launcher).
start_old_phases() {
  local unit line
  for unit in search bench; do
    line=$(ninja -C "$build/old" -t commands treetrav_cli |
      grep -F -- "-o CMakeFiles/treetrav_cli.dir/src/cli/$unit.cpp.o " | tail -n 1)
    line=${line#*.timecc }
    (cd "$build/old" && setsid nohup "$root/scripts/device/nvcc-phases.sh" "$build/old-phases-$unit.log" $line \
      >/dev/null 2>&1 </dev/null &)
  done
}

# The old units' phases so far, and the CPU seconds of the steps still running.
old_phases() {
  local unit
  for unit in search bench; do
    [[ -f $build/old-phases-$unit.log ]] || continue
    echo "== old src/cli/$unit.cpp, nvcc phases (name, CPU s, wall s)"
    cat "$build/old-phases-$unit.log"
  done
  ps -eo pid,etimes,times,args --sort=-times | grep -E "cicc|ptxas|cc1plus" | grep -v grep | cut -c1-260
}

wait_builds() { # seconds
  local deadline=$((SECONDS + $1)) dir done
  while :; do
    done=1
    for dir in "$build"/new "$build"/old "$build"/new-cpu "$build"/old-cpu; do
      [[ -d $dir ]] && [[ ! -f $dir.rc ]] && done=0
    done
    ((done)) && break
    ((SECONDS >= deadline)) && break
    sleep 10
  done
  for dir in "$build"/new "$build"/old "$build"/new-cpu "$build"/old-cpu; do
    [[ -d $dir ]] || continue
    echo "== $(basename "$dir"): rc=$(cat "$dir.rc" 2>/dev/null || echo running) seconds=$(cat "$dir.seconds" 2>/dev/null) cli (rc seconds): $(cat "$dir.cli-seconds" 2>/dev/null)"
    [[ -f $dir.cli-timed.log ]] && awk '{u += $2 + $3} END {printf "   CLI: %d objects, %.0f CPU s\n", NR, u}' "$dir.cli-timed.log" &&
      cp "$dir.cli-timed.log" "$out/cli-$(basename "$dir")-per-object.txt"
    [[ -f $dir/timed.log ]] && cp "$dir/timed.log" "$out/all-$(basename "$dir")-per-object.txt"
    grep -E "error|FAILED" "$dir.log" | head -n 20
    tail -n 2 "$dir.log"
    cp "$dir.log" "$out/build-$(basename "$dir").log" 2>/dev/null
  done
}

# MPI (test_distributed on Cuda) where the image has an MPI and a parallel
# HDF5 built against it, or from .device/mpi-prefix.tar.xz: Debian's OpenMPI
# and parallel HDF5 packages unpacked (dpkg -x) into one prefix, relocated by
# OPAL_PREFIX; both trees alike, so that the CLIs compare, but for
# TREETRAV_AB_OLD_PHASES, where the old tree stays without (the new CLI then
# compiles more than the old did).
mpi=OFF
mpiexec=mpiexec
mpi_flags=()
if command -v mpicxx >/dev/null && [[ -d /usr/lib/x86_64-linux-gnu/hdf5/openmpi ]]; then mpi=ON; fi
if [[ $mpi == OFF && -f $root/.device/mpi-prefix.tar.xz ]]; then
  prefix=/tmp/tt-mpi/usr
  [[ -d $prefix ]] || { mkdir -p /tmp/tt-mpi && tar xJf "$root/.device/mpi-prefix.tar.xz" -C /tmp/tt-mpi; }
  lib=$prefix/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$prefix PMIX_INSTALL_PREFIX=$lib/pmix2 PATH=$prefix/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  mpi=ON
  mpiexec=$prefix/bin/mpiexec.openmpi
  mpi_flags=(-DMPI_C_COMPILER="$prefix/bin/mpicc.openmpi"
    -DHDF5_ROOT="$lib/hdf5/openmpi" -DHDF5_C_COMPILER_EXECUTABLE="$prefix/bin/none"
    -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON)
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

step=${1:-}
case $step in
build)
  nvidia-smi -L
  echo "MPI: $mpi ($(command -v mpicxx) $(ls -d /usr/lib/x86_64-linux-gnu/hdf5/* 2>/dev/null | tr '\n' ' '))"
  link_kokkos
  mkdir -p "$build"
  if [[ -n ${TREETRAV_AB_CLI_ONLY:-} ]]; then
    # The new tree's CLI alone, on every core (for mpi-scaling.sh: TREETRAV_BINARY).
    configure "$root" "$build/new" cuda
    start "$build/new" "$(nproc)" treetrav_cli
    wait_builds "${2:-500}"
    exit 0
  fi
  if [[ -z ${TREETRAV_AB_CPU_ONLY:-} ]]; then
    configure "$root" "$build/new" cuda
    configure "$root/.device/old" "$build/old" cuda
  fi
  if [[ -n ${TREETRAV_AB_CPU:-} ]]; then
    configure "$root" "$build/new-cpu" cpu
    configure "$root/.device/old" "$build/old-cpu" cpu
  fi
  tests=${TREETRAV_AB_TESTS:-$(grep -o 'treetrav_add_test(test_[a-z_]*' tests/CMakeLists.txt | sed 's/.*(//' | tr '\n' ' ')}
  distributed=
  [[ -z ${TREETRAV_AB_TESTS:-} ]] && grep -q 'TREETRAV_ENABLE_MPI:BOOL=ON' "$build/new/CMakeCache.txt" 2>/dev/null &&
    distributed=test_distributed
  if [[ -n ${TREETRAV_AB_OLD_PHASES:-} ]]; then
    # The old CLI's two longest units (over half an hour each, more than one
    # sitting) phase by phase beside the rest (nvcc-phases.sh); the old tree
    # builds only its benchmarks.
    start_old_phases
    start "$build/new" ${TREETRAV_AB_JOBS:-10} bench_search bench_nbody $distributed "$tests"
    start_targets "$build/old" 2 bench_search bench_nbody
  elif [[ -z ${TREETRAV_AB_CPU_ONLY:-} ]]; then
    # The two CLIs side by side, as many jobs each: the same machine and load.
    start "$build/new" ${TREETRAV_AB_JOBS:-8} bench_search bench_nbody $distributed "$tests"
    if [[ -n ${TREETRAV_AB_OLD_TARGETS:-} ]]; then
      # The old tree's benchmarks alone (no CLI first).
      start_targets "$build/old" ${TREETRAV_AB_OLD_JOBS:-8} $TREETRAV_AB_OLD_TARGETS
    else
      start "$build/old" 8 bench_search bench_nbody
    fi
  else
    rm -rf "$build/new" "$build/old"
  fi
  if [[ -n ${TREETRAV_AB_CPU:-} ]]; then
    start "$build/new-cpu" ${TREETRAV_AB_CPU} bench_search
    start "$build/old-cpu" ${TREETRAV_AB_CPU} bench_search
  fi
  wait_builds "${2:-500}"
  old_phases | tee "$out/old-phases.txt"
  ;;
wait)
  link_kokkos
  wait_builds "${2:-500}"
  old_phases | tee "$out/old-phases.txt"
  ;;
phases)
  # The old CLI's two longest units alone, phase by phase, for SECONDS; the
  # phases so far and the CPU seconds of those still running.
  link_kokkos
  mkdir -p "$build"
  TREETRAV_AB_OLD_PHASES=1 configure "$root/.device/old" "$build/old" cuda
  start_old_phases
  sleep "${2:-120}"
  cat "$build"/old-phases-*.log.command 2>/dev/null | cut -c1-300
  old_phases | tee "$out/old-phases.txt"
  ;;
tests)
  for t in "$build"/new/tests/test_*; do
    [[ -x $t && -f $t ]] || continue
    echo "== $(basename "$t") (Cuda)"
    timeout 300 "$t" --gtest_filter='*Cuda*' --gtest_brief=1 2>&1 | tail -n 15
    echo "rc=${PIPESTATUS[0]}"
  done >"$out/gpu-tests.log" 2>&1
  if [[ -x $build/new/tests/test_distributed ]]; then
    echo "== test_distributed (Cuda, 2 ranks)"
    timeout 300 "$mpiexec" -n 2 "$build/new/tests/test_distributed" --gtest_filter='*Cuda*:MortonPartition*' \
      --gtest_brief=1 2>&1 | tail -n 15
    echo "rc=${PIPESTATUS[0]}"
  fi >>"$out/gpu-tests.log" 2>&1
  grep -E "^== |PASSED|FAILED|rc=" "$out/gpu-tests.log"
  ;;
sanitize)
  for run in ${TREETRAV_SANITIZE_RUNS:-test_search_apps:'*Cuda*' test_brute_force:'*Cuda*' \
    test_placement:'*Cuda*' test_barnes_hut:'*Cuda*' test_group_walk:'*Cuda*' test_trees:'*Cuda*'}; do
    IFS=: read -r test filter <<<"$run"
    echo "== compute-sanitizer memcheck $test $filter"
    timeout ${TREETRAV_SANITIZE_TIMEOUT:-150} compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$build/new/tests/$test" --gtest_filter="$filter" --gtest_brief=1 2>&1 | tail -n 6
    echo "rc=${PIPESTATUS[0]}"
  done >"$out/sanitizer.log" 2>&1
  grep -E "^== |ERROR SUMMARY|PASSED|FAILED|rc=" "$out/sanitizer.log"
  ;;
ab)
  work=$(mktemp -d)
  # perf/peers/compare.py's shape at 1M: the box [0, 100)^3 and its inscribed ball.
  python3 - "$work" <<'PY'
import sys, numpy as np
n, rng = 1000000, np.random.default_rng(1)
a = n ** (1 / 3)
(rng.random((n, 3)) * a).astype(np.float32).tofile(sys.argv[1] + "/r.f32")
v = rng.normal(size=(n, 3)); v /= np.linalg.norm(v, axis=1)[:, None]
r = (a / 2) * rng.random(n) ** (1 / 3)
(a / 2 + v * r[:, None]).astype(np.float32).tofile(sys.argv[1] + "/q.f32")
PY
  {
    for round in 1 2; do
      for tree in old new; do
        [[ -x $build/$tree/perf/bench_search ]] || continue
        echo "== bench_search $tree round $round (Cuda)"
        "$build/$tree/perf/bench_search" --reference "$work/r.f32" --queries "$work/q.f32" -k 10 \
          --radius 1.3365 --warmup 5 --repeats 30 --json "$out/search-$tree-$round.json"
      done
    done
    for round in 1 2; do
      for tree in old new; do
        [[ -x $build/$tree/perf/bench_nbody ]] || continue
        echo "== bench_nbody $tree round $round (Cuda)"
        "$build/$tree/perf/bench_nbody" --plummer 1000000 --walks group --multipoles quadrupole \
          --thetas 0.5 --repeats 10 --sample 1000 --label "$tree" --out "$out/nbody-ab.csv" | tail -n 3
      done
    done
    for round in 1 2 3; do
      for tree in old new; do
        [[ -x $build/$tree-cpu/perf/bench_search ]] || continue
        echo "== bench_search $tree round $round (OpenMP, $(nproc) threads)"
        "$build/$tree-cpu/perf/bench_search" --reference "$work/r.f32" --queries "$work/q.f32" -k 10 \
          --radius 1.3365 --warmup 1 --repeats 5 --phases knn_unsorted knn_sorted \
          --json "$out/search-$tree-cpu-$round.json"
      done
    done
  } 2>&1 | tee "$out/ab.log"
  ;;
*)
  echo "usage: $0 build|wait|phases|tests|sanitize|ab" >&2
  exit 2
  ;;
esac
