# Sourced by the device scripts (mpi-scaling.sh, nbody-mps.sh), from the
# repository root: $out, Debian's OpenMPI carried in .device/mpi-prefix.tar.xz
# unpacked and relocated (OPAL_PREFIX; $mpirun), and $treetrav, the CUDA +
# MPI CLI: TREETRAV_BINARY, else .device/treetrav.xz (a CLI built earlier,
# stripped), else built here on all cores into build-device/mpi.
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
started=$SECONDS
cache=/root/.cache/treetrav
export PATH=/usr/local/cuda/bin:$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-12
# shellcheck source=scripts/device/carried-kokkos.sh
source "$root/scripts/device/carried-kokkos.sh"
nvidia-smi -L | tee "$out/env.txt"
nproc | sed 's/^/cores: /' | tee -a "$out/env.txt"
gpus_here=$(nvidia-smi -L | wc -l)

# Debian's OpenMPI as one prefix, relocated by OPAL_PREFIX; of its deps/,
# only the libraries the image lacks.
prefix=/tmp/tt-mpi/usr
[[ -d $prefix ]] || { mkdir -p /tmp/tt-mpi && tar xJf "$root/.device/mpi-prefix.tar.xz" -C /tmp/tt-mpi; }
lib=$prefix/lib/x86_64-linux-gnu
mkdir -p /tmp/tt-lib
export OPAL_PREFIX=$prefix PMIX_INSTALL_PREFIX=$lib/pmix2 PATH=$prefix/bin:$PATH
export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib:/tmp/tt-lib:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
missing_libraries() { # binaries...: copy from deps/ what ldd does not find, three levels down
  local _ name
  for _ in 1 2 3; do
    for name in $(ldd "$@" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
      cp -n "$prefix/deps/$name" /tmp/tt-lib/ 2>/dev/null
    done
  done
}
missing_libraries "$prefix/bin/orted" "$lib/libmpi.so.40" "$lib"/hdf5/openmpi/libhdf5.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# ob1 over shared memory: left to choose, Open MPI took UCX's PML there,
# which bypasses the BTLs (and ran the exchanges at a crawl).
export OMPI_MCA_pml=ob1 OMPI_MCA_osc=^ucx
# Shared memory without cross-process reads (containers often forbid them),
# unless TREETRAV_VADER_COPY names a mechanism (cma: process_vm_readv);
# TREETRAV_VADER_FRAGMENT sets the copy-in/copy-out fragment size in bytes.
export OMPI_MCA_btl_vader_single_copy_mechanism=${TREETRAV_VADER_COPY:-none}
[[ -n ${TREETRAV_VADER_FRAGMENT:-} ]] && export OMPI_MCA_btl_vader_max_send_size=$TREETRAV_VADER_FRAGMENT
# No OMP_PLACES: the CLI gives each rank of a node its own share of the cores.
unset OMP_PLACES OMP_PROC_BIND
mpirun=$prefix/bin/mpirun.openmpi

treetrav=${TREETRAV_BINARY:-}
# Or one built on the 2-core machine (scripts/build.sh cuda, MPI on), carried
# stripped and compressed as .device/treetrav.xz.
if [[ -z $treetrav && -f $root/.device/treetrav.xz ]]; then
  xz -dc "$root/.device/treetrav.xz" >/tmp/treetrav && chmod +x /tmp/treetrav && treetrav=/tmp/treetrav
fi
if [[ -z $treetrav ]]; then
  link_kokkos
  build=$root/build-device/mpi
  mkdir -p "$build"
  kokkos=$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" \
    -DKokkosKernels_ROOT="$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90" \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_90 \
    -DTREETRAV_ENABLE_TESTS=OFF -DTREETRAV_ENABLE_BENCHMARKS=OFF -DTREETRAV_ENABLE_MPI=ON \
    -DMPI_CXX_COMPILER="$prefix/bin/mpicxx.openmpi" -DMPI_C_COMPILER="$prefix/bin/mpicc.openmpi" \
    -DHDF5_ROOT="$lib/hdf5/openmpi" -DHDF5_C_COMPILER_EXECUTABLE="$prefix/bin/none" \
    -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON >"$out/configure.log" 2>&1 || { tail -n 40 "$out/configure.log"; exit 1; }
  grep -E "MPI|HDF5" "$out/configure.log" | head -n 5
  start=$SECONDS
  ninja -C "$build" -j "$(nproc)" treetrav_cli >"$out/build.log" 2>&1 || { grep -E -A5 "error" "$out/build.log" | head -n 60; exit 1; }
  echo "CLI built in $((SECONDS - start)) s on $(nproc) cores" | tee -a "$out/env.txt"
  treetrav=$build/treetrav
fi
missing_libraries "$treetrav"
ldd "$treetrav" | grep "not found" && echo "missing libraries" >&2
