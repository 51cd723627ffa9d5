#!/usr/bin/env bash
# The Python module's CUDA build on the GPU machine, its timings beside
# bench_search, scipy, pykdtree and jztree on the same data
# (perf/python/bench_module.py), its tests there (CUDA and OpenMP backends,
# torch and CuPy arrays) and where a torch query's time goes
# (perf/python/profile_query.py), all in one call:
#   scripts/device/python-bench.sh [N]        (N: points and queries, default 1M)
#   TREETRAV_SANITIZE=1: also a few calls under compute-sanitizer memcheck
# Carry: .device/kokkos-cuda .device/kk-cuda .device/bm and .device/wheels
# (pip download --no-deps --only-binary=:all: --python-version 3.12 --platform
# manylinux_2_28_x86_64 ... nanobind scikit-build-core pathspec packaging
# pykdtree jztree jztree-cu13). $OUT gets info.txt (device, build),
# results.md and results.json, bench_search.json, log.txt (answer checks),
# pytest.log and profile.txt, each written as soon as it is done.
#   TREETRAV_TRACE_SYNCS=1: also syncs.txt, the Kokkos calls of one torch
#   query (perf/python/trace_syncs.py with perf/python/kokkos_events.c)
#   TREETRAV_TRACE_CUDA=1: also cuda-calls.txt, its CUDA runtime calls and
#   their stacks (perf/python/cuda_calls.c)
#   TREETRAV_PREBUILT=DIR: no build; the module and bench_search from DIR/bin
#   (plain or .xz; the libraries they need beyond the image's in DIR/lib)
#   TREETRAV_SAVE_MODULE=1: after the build, $OUT/bin/_core*.so.xz, to carry
#   back as TREETRAV_PREBUILT (bench_search and the benchmarks are built only
#   for the search phase)
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
cache=/root/.cache/treetrav
n=${1:-1000000}
export PATH=/usr/local/cuda/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-12
unset OMP_PROC_BIND OMP_PLACES
# shellcheck source=scripts/device/carried-kokkos.sh
source "$root/scripts/device/carried-kokkos.sh"
link_kokkos
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/info.txt"

deps=/tmp/tt-pydeps
python3 -m pip install -q --no-deps --no-index --target "$deps" "$root"/.device/wheels/*.whl 2>&1 | tail -n 3
export PYTHONPATH=$deps
kokkos=$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90
kk=$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90
build=$root/build-device/python
bench_search=$build/perf/bench_search
bench_env=()
if [[ -n ${TREETRAV_PREBUILT:-} ]]; then
  # Built elsewhere with the same nvcc for sm_90 (the module, bench_search and
  # the CLI in TREETRAV_PREBUILT/bin, the libraries they need beyond the
  # image's in TREETRAV_PREBUILT/lib, Debian's OpenMPI and parallel HDF5 from
  # .device/mpi-prefix.tar.xz): no build here.
  prebuilt=/tmp/tt-prebuilt
  mkdir -p "$prebuilt" /tmp/tt-mpi /tmp/tt-module/treetrav
  cp -r "$root/$TREETRAV_PREBUILT/." "$prebuilt/"
  for packed in "$prebuilt"/bin/*.xz; do # binaries may come xz-compressed
    [[ -f $packed ]] && xz -d "$packed"
  done
  chmod +x "$prebuilt"/bin/*
  tar xJf "$root/.device/mpi-prefix.tar.xz" -C /tmp/tt-mpi
  mpilib=/tmp/tt-mpi/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$mpilib:$mpilib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  mkdir -p "$prebuilt/lib"
  [[ -f $prebuilt/lib.tar.xz ]] && tar xJf "$prebuilt/lib.tar.xz" -C "$prebuilt/lib"
  # The libraries bench_search needs beyond the image's (HDF5's own), for it
  # alone: Python keeps the image's.
  bench_env=(env "LD_LIBRARY_PATH=$prebuilt/lib:$LD_LIBRARY_PATH")
  export OPAL_PREFIX=/tmp/tt-mpi/usr
  cp -r "$root/python/treetrav/." /tmp/tt-module/treetrav/
  cp "$prebuilt"/bin/_core*.so /tmp/tt-module/treetrav/
  bench_search=$prebuilt/bin/bench_search
  echo "prebuilt: $(ls "$prebuilt/bin" | tr '\n' ' ')" | tee -a "$out/info.txt"
  ldd /tmp/tt-module/treetrav/_core*.so | grep "not found" | tee -a "$out/info.txt"
  "${bench_env[@]}" ldd "$bench_search" | grep "not found" | tee -a "$out/info.txt"
else
phases=" ${TREETRAV_PHASES:-search tests profile} "
benchmarks=OFF
[[ $phases == *" search "* ]] && benchmarks=ON
start=$(date +%s)
CMAKE_GENERATOR=Ninja CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python3 -m pip wheel -q --no-deps \
  --no-build-isolation -w /tmp/tt-wheel "$root" \
  --config-settings=build-dir="$build" \
  --config-settings=cmake.define.TREETRAV_CUDA=ON \
  --config-settings=cmake.define.Kokkos_ROOT="$kokkos" \
  --config-settings=cmake.define.KokkosKernels_ROOT="$kk" \
  --config-settings=cmake.define.TREETRAV_ENABLE_BENCHMARKS=$benchmarks \
  --config-settings=cmake.define.benchmark_DIR="$root/.device/bm/usr/lib/x86_64-linux-gnu/cmake/benchmark" \
  >/tmp/tt-pip-wheel.log 2>&1 || { echo "pip wheel failed"; tail -n 40 /tmp/tt-pip-wheel.log | tee -a "$out/info.txt"; exit 1; }
if [[ $benchmarks == ON ]]; then
  cmake --build "$build" --target bench_search -j "$(nproc)" >/tmp/tt-bench-build.log 2>&1 ||
    { echo "bench_search failed"; tail -n 20 /tmp/tt-bench-build.log | tee -a "$out/info.txt"; }
fi
echo "build (module, library, searches$([[ $benchmarks == ON ]] && echo ", bench_search")): $(( $(date +%s) - start )) s" | tee -a "$out/info.txt"
python3 -m pip install -q --no-deps --target /tmp/tt-module /tmp/tt-wheel/treetrav-*.whl
if [[ -n ${TREETRAV_SAVE_MODULE:-} ]]; then
  mkdir -p "$out/bin"
  xz -T0 -3 -c /tmp/tt-module/treetrav/_core*.so >"$out/bin/$(basename /tmp/tt-module/treetrav/_core*.so).xz"
  ls -la "$out/bin" | tee -a "$out/info.txt"
fi
fi
export PYTHONPATH=/tmp/tt-module:$deps

# Phases (TREETRAV_PHASES, default "search tests profile"): search (the
# kNN timings beside the peers), tests (pytest), profile (a torch query's
# profile), paircount (perf/paircount/bench_paircount.py beside Corrfunc,
# built here from the carried .device/corrfunc-2.5.3-src.tar.gz with the
# GSL of .device/gsl-prefix.tar.gz, and TreeCorr from .device/pcwheels;
# writes paircount.json and paircount.md; TREETRAV_PAIRCOUNT_ARGS: more
# options of bench_paircount.py). Making those here: Corrfunc's sdist
# (pip download leaves it in /tmp/pip-unpack-*) without its tests/data files
# over 100 kB, as corrfunc-2.5.3/; Debian's libgsl27, libgslcblas0 and
# libgsl-dev (apt-get download, dpkg -x) as prefix/{include,lib} with a
# prefix/bin/gsl-config printing that prefix's --cflags and --libs; pcwheels:
# treecorr, lsstdesc.coord, pyyaml, and wurlitzer and future (Corrfunc's
# Python layer imports them).
phases=" ${TREETRAV_PHASES:-search tests profile} "
if [[ $phases == *" paircount "* ]]; then
  echo "== pair counts beside Corrfunc and TreeCorr"
  pc=/tmp/tt-pc
  rm -rf "$pc" && mkdir -p "$pc/src"
  tar xzf "$root/.device/corrfunc-2.5.3-src.tar.gz" -C "$pc/src"
  # Corrfunc's build wants GSL: Debian's, unpacked (.device/gsl-prefix.tar.gz).
  tar xzf "$root/.device/gsl-prefix.tar.gz" -C "$pc"
  export PATH=$pc/prefix/bin:$PATH LD_LIBRARY_PATH=$pc/prefix/lib:${LD_LIBRARY_PATH:-}
  start=$(date +%s)
  (cd "$pc/src/corrfunc-2.5.3" && python3 -m pip install -q --no-deps --no-build-isolation \
    --target "$pc/site" . >"$pc/corrfunc-build.log" 2>&1) ||
    { echo "Corrfunc build failed"; tail -n 15 "$pc/corrfunc-build.log"; }
  python3 -m pip install -q --no-deps --no-index --target "$pc/site" "$root"/.device/pcwheels/*.whl \
    2>&1 | tail -n 3
  echo "Corrfunc and TreeCorr installed in $(( $(date +%s) - start )) s"
  PYTHONPATH=$PYTHONPATH:$pc/site timeout "${TREETRAV_PAIRCOUNT_TIMEOUT:-420}" python3 \
    "$root/perf/paircount/bench_paircount.py" --n ${TREETRAV_PAIRCOUNT_N:-1000000 10000000} \
    --out "$pc/out" ${TREETRAV_PAIRCOUNT_ARGS:-} 2>&1 | tail -n 30
  cp "$pc/out/results.json" "$out/paircount.json" 2>/dev/null
  cp "$pc/out/results.md" "$out/paircount.md" 2>/dev/null
fi

if [[ $phases == *" search "* ]]; then
echo "== timings, n = $n"
work=$(mktemp -d)
python3 "$root/perf/python/bench_module.py" --n "$n" --data "$work"
"${bench_env[@]}" "$bench_search" --reference "$work/r.f32" --queries "$work/q.f32" -k 10 --radius 1.3365 \
  --warmup 5 --repeats 30 --phases build knn_sorted --json "$out/bench_search.json" >/dev/null 2>&1
timeout 300 python3 "$root/perf/python/bench_module.py" --n "$n" --bench-json "$out/bench_search.json" \
  --out "$out" 2>&1 | tail -n 20

fi

if [[ $phases == *" tests "* ]]; then
echo "== pytest (CUDA build)"
(cd /tmp && timeout 240 python3 -m pytest -v -p no:cacheprovider "$root/python/tests" >"$out/pytest.log" 2>&1)
grep -E "FAILED|ERROR|Fatal|passed|failed" "$out/pytest.log" | tail -n 12

fi

if [[ $phases == *" profile "* ]]; then
echo "== profile of a torch query"
timeout 120 python3 "$root/perf/python/profile_query.py" "$n" >"$out/profile.txt" 2>&1
head -n 45 "$out/profile.txt"
fi

if [[ -n ${TREETRAV_TRACE_SYNCS:-} ]]; then
  echo "== what one torch query asks of Kokkos (perf/python/kokkos_events.c)"
  gcc -shared -fPIC -O1 -o /tmp/tt-kokkos-events.so "$root/perf/python/kokkos_events.c" &&
    KOKKOS_PROFILE_LIBRARY=/tmp/tt-kokkos-events.so TREETRAV_TRACE_FILE=/tmp/tt-trace-on \
      timeout 120 python3 "$root/perf/python/trace_syncs.py" "$n" >"$out/syncs.txt" 2>&1
  sed -n '/== traced call/,/== end of traced call/p' "$out/syncs.txt" | head -n 80
fi

if [[ -n ${TREETRAV_TRACE_CUDA:-} ]]; then
  echo "== the CUDA runtime calls of one torch query, with their stacks (perf/python/cuda_calls.c)"
  gcc -shared -fPIC -O1 -o /tmp/tt-cuda-calls.so "$root/perf/python/cuda_calls.c" -ldl &&
    LD_PRELOAD=/tmp/tt-cuda-calls.so TREETRAV_TRACE_FILE=/tmp/tt-trace-on \
      timeout 120 python3 "$root/perf/python/trace_syncs.py" "$n" >"$out/cuda-calls.txt" 2>&1
  sed -n '/== traced call/,/== end of traced call/p' "$out/cuda-calls.txt" | grep "^cuda:" | sort | uniq -c
fi

if [[ -n ${TREETRAV_SANITIZE:-} ]]; then
  echo "== compute-sanitizer memcheck: kNN, radius, Barnes-Hut, periodic searches, pair counts on torch arrays"
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 python3 - <<'PY' 2>&1 | tail -n 4 | tee -a "$out/info.txt"
import numpy as np, torch, treetrav
rng = np.random.default_rng(1)
data = torch.from_numpy(rng.random((20000, 3), dtype=np.float32)).cuda()
x = torch.from_numpy(rng.random((5000, 3), dtype=np.float32)).cuda()
tree = treetrav.KDTree(data, backend="cuda")
d, i = tree.query(x, k=10)
c = tree.query_ball_point(x, 0.05, return_length=True)
lists = tree.query_ball_point(x[:100].cpu().numpy(), 0.05)
a = treetrav.bh_accelerations(data, torch.ones(20000, device="cuda") / 20000, backend="cuda")
box = treetrav.KDTree(data, backend="cuda", boxsize=1.0)
bd, bi = box.query(x, k=10)
bc = box.query_ball_point(x, 0.05, return_length=True)
pc = treetrav.paircount(data, treetrav.log_edges(0.01, 0.3, 8), boxsize=1.0, backend="cuda",
                        weights=torch.ones(20000, device="cuda"))
torch.cuda.synchronize()
print("sanitized run done", int(i[0, 0]), int(c.sum()), len(lists), float(a.abs().sum()),
      int(bi[0, 0]), int(bc.sum()), int(pc.counts.sum()))
PY
fi
