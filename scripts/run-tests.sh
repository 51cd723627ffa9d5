#!/usr/bin/env bash
# The test command (README): sets up everything on a fresh Debian 12 machine
# (packages, Kokkos bootstrap), builds the CPU configuration (OpenMP + Serial),
# runs the whole suite under ctest, then installs the Python package into a
# virtual environment and runs its tests (python/tests) with pytest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TREETRAV_BUILD_DIR:-$repo/build-cpu}
# The tests need no benchmarks (perf/, built by scripts/build.sh and the
# device scripts); leaving them out keeps CI's 2 cores on what it runs.
TREETRAV_CMAKE_FLAGS="-DTREETRAV_ENABLE_BENCHMARKS=OFF ${TREETRAV_CMAKE_FLAGS:-}" \
  "$repo/scripts/build.sh" cpu "$build"
cd "$build"
# OpenMP tests share the machine's cores: no thread binding, and threads that
# sleep at barriers rather than spin (two tests at once on 2 cores: spinning made
# an OpenMP test 6-30x slower than alone).
OMP_PROC_BIND=false OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} ctest --output-on-failure --timeout 900 -j "${TREETRAV_TEST_JOBS:-2}" "$@"

# The Python package: `pip install .` into build-cpu/python-venv. It builds in
# this build directory (scikit-build-core's build-dir), so only the module's
# own units compile; the options keep the directory's tests configured.
venv=$build/python-venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check numpy scipy pytest "scikit-build-core>=0.10" "nanobind>=2.0"
CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation "$repo" \
  --config-settings=build-dir="$build" --config-settings=cmake.define.TREETRAV_ENABLE_TESTS=ON
OMP_PROC_BIND=false "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests"
