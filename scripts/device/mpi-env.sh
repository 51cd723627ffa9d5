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

# Debian's OpenMPI and parallel HDF5 as one prefix, relocated by
# OPAL_PREFIX; of its deps/, only the libraries the image lacks.
# TREETRAV_MPI_STACK=ucx: the MPI is PyPI's Open MPI 5 over a CUDA-enabled
# UCX instead (.device/gpu-mpi.tar.xz, scripts/device/pack-gpu-mpi.sh),
# which takes device memory (the CLI's --gpu-aware-mpi on); Debian's prefix
# then gives only parallel HDF5, which links to libmpi.so.40, the same ABI.
stack=${TREETRAV_MPI_STACK:-debian}
prefix=/tmp/tt-mpi/usr
[[ -d $prefix ]] || { mkdir -p /tmp/tt-mpi && tar xJf "$root/.device/mpi-prefix.tar.xz" -C /tmp/tt-mpi; }
lib=$prefix/lib/x86_64-linux-gnu
mkdir -p /tmp/tt-lib
cuda_lib=/usr/local/cuda/targets/x86_64-linux/lib
missing_libraries() { # binaries...: copy from deps/ what ldd does not find, three levels down
  local _ name
  for _ in 1 2 3; do
    for name in $(ldd "$@" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
      cp -n "$prefix/deps/$name" /tmp/tt-lib/ 2>/dev/null
    done
  done
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ $stack == ucx ]]; then
  gpu_mpi=/tmp/tt-gpu-mpi
  [[ -d $gpu_mpi ]] || { mkdir -p $gpu_mpi && tar xJf "$root/.device/gpu-mpi.tar.xz" -C $gpu_mpi; }
  export OPAL_PREFIX=$gpu_mpi/ompi PATH=$gpu_mpi/ompi/bin:$PATH OMPI_CC=${OMPI_CC:-gcc-12}
  # This UCX before the wheel's own (Open MPI's RUNPATH), the wheel's
  # libmpi.so.40 before Debian's (in $lib beside HDF5).
  export LD_LIBRARY_PATH=$gpu_mpi/ucx/lib:$gpu_mpi/ompi/lib:$gpu_mpi/ompi/lib/openmpi:$lib:/tmp/tt-lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # UCX's memory-type cache learns device allocations from hooks that miss
  # those of a shared libcudart (Kokkos links that one): it then takes device
  # arrays for host memory, and the exchanges fail (MPI_ERR_INTERN, or a
  # fault). Off, UCX asks the driver about each buffer
  # (perf/results/mpi/README.md, the GPU-aware MPI).
  export OMPI_MCA_pml=ucx UCX_MEMTYPE_CACHE=${UCX_MEMTYPE_CACHE:-n}
  missing_libraries "$lib"/hdf5/openmpi/libhdf5.so
  mpirun=$gpu_mpi/ompi/bin/mpirun
  mpicc=$gpu_mpi/ompi/bin/mpicc
  "$gpu_mpi/ucx/bin/ucx_info" -v | head -n 1 | tee -a "$out/env.txt"
else
  export OPAL_PREFIX=$prefix PMIX_INSTALL_PREFIX=$lib/pmix2 PATH=$prefix/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$lib/openmpi/lib:/tmp/tt-lib:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  missing_libraries "$prefix/bin/orted" "$lib/libmpi.so.40" "$lib"/hdf5/openmpi/libhdf5.so
  export OMPI_MCA_btl=self,vader
  # ob1 over shared memory: left to choose, Open MPI took UCX's PML there,
  # which bypasses the BTLs (and ran the exchanges at a crawl).
  export OMPI_MCA_pml=ob1 OMPI_MCA_osc=^ucx
  # Shared memory without cross-process reads (containers often forbid them),
  # unless TREETRAV_VADER_COPY names a mechanism (cma: process_vm_readv);
  # TREETRAV_VADER_FRAGMENT sets the copy-in/copy-out fragment size in bytes.
  export OMPI_MCA_btl_vader_single_copy_mechanism=${TREETRAV_VADER_COPY:-none}
  [[ -n ${TREETRAV_VADER_FRAGMENT:-} ]] && export OMPI_MCA_btl_vader_max_send_size=$TREETRAV_VADER_FRAGMENT
  mpirun=$prefix/bin/mpirun.openmpi
  mpicc=$prefix/bin/mpicc.openmpi
fi
# No OMP_PLACES: the CLI gives each rank of a node its own share of the cores.
unset OMP_PLACES OMP_PROC_BIND

treetrav=${TREETRAV_BINARY:-}
# Or one built on the 2-core machine (scripts/build.sh cuda, MPI on), carried
# stripped and compressed as .device/treetrav.xz.
if [[ -z $treetrav && -f $root/.device/treetrav.xz ]]; then
  xz -dc "$root/.device/treetrav.xz" >/tmp/treetrav && chmod +x /tmp/treetrav && treetrav=/tmp/treetrav
fi
if [[ -z $treetrav ]]; then
  link_kokkos
  build=$root/build-device/mpi-$stack
  mkdir -p "$build"
  kokkos=$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" \
    -DKokkosKernels_ROOT="$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90" \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_90 \
    -DTREETRAV_ENABLE_TESTS=$([[ -n ${TREETRAV_DEVICE_TESTS:-} ]] && echo ON || echo OFF) -DTREETRAV_ENABLE_BENCHMARKS=OFF -DTREETRAV_ENABLE_MPI=ON \
    -DMPI_C_COMPILER="$mpicc" \
    -DHDF5_ROOT="$lib/hdf5/openmpi" -DHDF5_C_COMPILER_EXECUTABLE="$prefix/bin/none" \
    -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON >"$out/configure.log" 2>&1 || { tail -n 40 "$out/configure.log"; exit 1; }
  grep -E "MPI|HDF5" "$out/configure.log" | head -n 5
  start=$SECONDS
  # TREETRAV_DEVICE_TESTS: test_distributed too (Cuda cases over the ranks).
  ninja -C "$build" -j "$(nproc)" treetrav_cli ${TREETRAV_DEVICE_TESTS:+test_distributed} >"$out/build.log" 2>&1 ||
    { grep -E -A5 "error" "$out/build.log" | head -n 60; exit 1; }
  echo "CLI built in $((SECONDS - start)) s on $(nproc) cores" | tee -a "$out/env.txt"
  treetrav=$build/treetrav
fi
missing_libraries "$treetrav"
ldd "$treetrav" | grep "not found" && echo "missing libraries" >&2
