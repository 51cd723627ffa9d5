#!/usr/bin/env bash
# A/B of bench_nbody builds on the lent GPU machine (the `device` tool), from
# the repository root, with no build there: each DIR holds a bench_nbody built
# on this machine (scripts/build.sh cuda, MPI off), carried with the shared
# libraries it needs in .device/nblibs (ldd's list, less the C library and
# CUDA's runtime).
#   scripts/device/nbody-ab.sh DIR...
# Every set (NB_SETS, default the issue-35 three: plummer, hernquist,
# clustered-box; NB_N bodies, default 1M; softening 0.01, the box 0.001) runs
# under every DIR in turn, the builds interleaved per set so that a drift of
# the GPU's clock hits all alike; each run is bench_nbody's median of
# NB_REPEATS fenced evaluations after a warm-up. NB_ARGS: bench_nbody's
# configuration (default: group walk, quadrupoles, relative criterion at
# alpha 0.001). NB_VARIANTS: extra arguments, one variant per ';'-separated
# entry (e.g. "--leaf-size 8;--leaf-size 16"), each a run of its own.
# NB_PROFILE=1 also runs each DIR once on the first set under Kokkos'
# space-time-stack tool (.device/kp_space_time_stack.so): every region and
# kernel's time. NB_NCU=1: Nsight Compute's full set on the group walk's
# timed launch of the last DIR, on every set (ncu-SET.txt, its details page).
# Output in $OUT: ab.csv (bench_nbody's rows, the label SET/DIR/VARIANT),
# ab.log, profile-DIR.txt.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
export LD_LIBRARY_PATH=$root/.device/nblibs:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_PROC_BIND=spread OMP_PLACES=threads
n=${NB_N:-1000000}
repeats=${NB_REPEATS:-5}
read -r -a sets <<<"${NB_SETS:-plummer hernquist clustered-box}"
config=${NB_ARGS:---walks group --multipoles quadrupole --openings relative --alphas 0.001}
IFS=';' read -r -a variants <<<"${NB_VARIANTS:-}"
((${#variants[@]})) || variants=("")
log=$out/ab.log
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv | tee -a "$log"

softening() { [[ $1 == clustered-box ]] && echo 0.001 || echo 0.01; }

if [[ ${NB_PROFILE:-0} == 1 ]]; then
  for dir in "$@"; do
    name=$(basename "$dir")
    # shellcheck disable=SC2086
    KOKKOS_PROFILE_LIBRARY=$root/.device/kp_space_time_stack.so "$dir/bench_nbody" --plummer "$n" \
      --dist "${sets[0]}" --softening "$(softening "${sets[0]}")" $config --repeats 3 --sample 1000 \
      --out /tmp/profile.csv >"$out/profile-$name.txt" 2>&1
    echo "profile $name rc=$?" | tee -a "$log"
  done
fi

if [[ ${NB_NCU:-0} == 1 ]]; then
  last=${*: -1}
  for set in "${sets[@]}"; do
    # Launches of the walk: the warm-up's estimate and walk, then the timed one.
    # shellcheck disable=SC2086
    timeout 200 ncu --clock-control none --set full --kernel-name-base mangled -k regex:CudaGroupWalkLaunch \
      --launch-skip 2 --launch-count 1 -o /tmp/ncu-$set -f "$last/bench_nbody" --plummer "$n" --dist "$set" \
      --softening "$(softening "$set")" $config --repeats 1 --sample 1000 --out /tmp/ncu.csv >/tmp/ncu-$set.log 2>&1
    echo "ncu $set rc=$?" | tee -a "$log"
    tail -n 3 /tmp/ncu-$set.log >>"$log"
    ncu -i /tmp/ncu-$set.ncu-rep --page details >"$out/ncu-$set.txt" 2>&1
  done
fi

for set in "${sets[@]}"; do
  for variant in "${variants[@]}"; do
    for dir in "$@"; do
      name=$(basename "$dir")
      start=$SECONDS
      # shellcheck disable=SC2086
      "$dir/bench_nbody" --plummer "$n" --dist "$set" --softening "$(softening "$set")" $config $variant \
        --repeats "$repeats" --out "$out/ab.csv" --label "$set/$name/${variant// /}" >>"$log" 2>&1
      echo "$set $name [$variant] rc=$? in $((SECONDS - start)) s" | tee -a "$log"
    done
  done
done
grep -E "group|rc=" "$log" | cut -c1-260
