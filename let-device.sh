#!/usr/bin/env bash
# untracked: build the CUDA + MPI CLI, check the GPU essential tree against one rank, time it
source <(sed -n '29,97p' scripts/device/mpi-scaling.sh)
T=$treetrav
cd /tmp && mkdir -p let && cd let
$T generate --dist clustered-box -n 200000 -o box.h5 > /dev/null
$T generate --dist plummer -n 200000 -o plum.h5 > /dev/null
$T generate --dist hernquist -n 1000000 -o hern1m.h5 > /dev/null
cmp() { # a b
/usr/bin/python3 - "$1" "$2" <<'PY'
import h5py, numpy as np, sys, glob
a, b = sys.argv[1:]
fa = sorted(glob.glob(a+'/snapshot_*.h5'))[-1]; fb = sorted(glob.glob(b+'/snapshot_*.h5'))[-1]
with h5py.File(fa) as f, h5py.File(fb) as g:
    same = all(np.array_equal(f['PartType1'][d][:], g['PartType1'][d][:]) for d in ['Coordinates','Velocities','Potentials'])
    dv = np.abs(f['PartType1/Velocities'][:] - g['PartType1/Velocities'][:]).max()
print('IDENTICAL' if same else 'DIFFERENT', b, 'vs', a, 'max |dv|', dv)
PY
}
times() { /usr/bin/python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))
keys=['steps','tree_build','forces','force_evaluations','imported_cells','imported_bodies','total','wall','io','diagnostics']
print(sys.argv[1], {k:t[k] for k in t if not isinstance(t[k],(list,dict))})" "$1"; }
run() { # tag ranks input extra...
  local tag=$1 p=$2 in=$3; shift 3
  if [[ $p == 1 ]]; then $T nbody --ics $in -o r-$tag-1 --steps 8 --dt 0.0005 -q --multipole quadrupole --theta 0.6 --timings r-$tag-1.json "$@" > r-$tag-1.log 2>&1 || tail r-$tag-1.log
  else $mpirun --bind-to none -np $p $T nbody --ics $in -o r-$tag-$p --steps 8 --dt 0.0005 -q --multipole quadrupole --theta 0.6 --rebalance-every 4 --timings r-$tag-$p.json "$@" > r-$tag-$p.log 2>&1 || tail r-$tag-$p.log; fi
  times r-$tag-$p.json
}
for set in plum box; do
  for s in autoropes group; do
    run $set-$s 1 $set.h5 --strategy $s
    for p in 2 4; do run $set-$s $p $set.h5 --strategy $s; cmp r-$set-$s-1 r-$set-$s-$p; done
  done
done
run hern-a 1 hern1m.h5 --strategy autoropes
run hern-a 2 hern1m.h5 --strategy autoropes
cmp r-hern-a-1 r-hern-a-2
# memcheck of the new kernels on 2 ranks
$T generate --dist clustered-box -n 20000 -o small.h5 > /dev/null
$mpirun --bind-to none -np 2 compute-sanitizer --error-exitcode 9 --tool memcheck $T nbody --ics small.h5 -o r-san --steps 2 --dt 0.0005 -q --multipole quadrupole > san.log 2>&1; echo "memcheck rc $?"; grep -E 'ERROR SUMMARY|Invalid' san.log | head
