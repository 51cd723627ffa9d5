#!/usr/bin/env python3
"""Distributed N-body runs as a user runs them, under mpirun.

    /usr/bin/python3 tests/distributed/test_nbody_distributed.py TREETRAV MPIEXEC

A 2,000-body Plummer sphere, 20 steps with block time steps (up to 8
sub-steps), quadrupole cells, snapshots and checkpoints every 5 steps, the
bodies re-cut by their measured costs every 4 steps:
- per-body walks (autoropes) on 2 and 4 ranks write snapshots identical, every
  dataset byte for byte through h5py, to one process (the essential tree holds
  exactly the cells of the one-process octree that the walks reach, with the
  same moments), on 1 and 2 threads per rank;
- group walks on 2 ranks are identical across thread counts, and match one
  process within the stated bound (their groups differ where a cell holds
  bodies of several ranks): positions and velocities after 20 steps within
  1e-5 of their scale (max |x_P - x_1| / max |x_1|);
- a 2-rank run killed before and inside a write and restarted on 2 ranks ends
  bit-identical to the uninterrupted run (per-body and group walks: the
  checkpoint keeps the decomposition and the costs); its checkpoint restarted
  on 1 and on 4 ranks ends identical to the one-process run (per-body walks);
- only rank 0 prints the summary; mistakes under mpirun exit 2.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

TREETRAV, MPIEXEC = sys.argv[1], sys.argv[2]
# CI runs as root on 2 cores; OpenMPI refuses both unless told. No thread binding: ranks share the cores.
# Threads wait passively: ranks x threads exceed the cores.
ENV = dict(os.environ, OMP_PROC_BIND="false", OMP_WAIT_POLICY="passive", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
BOUND = 1e-5
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS: {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL: {name}", flush=True)
        for line in str(detail).splitlines()[-20:]:
            print(f"    | {line}")


def command(ranks, args):
    line = [TREETRAV, "nbody", *map(str, args)]
    return [MPIEXEC, "--oversubscribe", "-np", str(ranks), *line] if ranks > 1 else line


def nbody(ranks, *args):
    return subprocess.run(command(ranks, args), capture_output=True, text=True, env=ENV, timeout=300)


def datasets(path):
    """Every dataset of an HDF5 file by name, and the snapshot's time."""
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, item: found.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
        found["Time"] = np.array(f["Header"].attrs["Time"]) if "Header" in f else None
        if "RunMetadata" in f:
            for key in ("kinetic_energy", "potential_energy", "total_energy"):
                if key in f["RunMetadata"].attrs:
                    found[key] = np.array(f["RunMetadata"].attrs[key])
    return found


def identical(a, b, names=None):
    """Whether two files hold the same bytes in every dataset (or those named); a message when not."""
    x, y = datasets(a), datasets(b)
    for name in names or sorted(set(x) | set(y)):
        if name not in x or name not in y:
            return False, f"{name} missing in {a if name not in x else b}"
        u, v = np.asarray(x[name]), np.asarray(y[name])
        if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
            return False, f"{name} differs between {a} and {b}"
    return True, ""


def same_run(a, b, steps=(0, 5, 10, 15, 20)):
    for step in steps:
        ok, why = identical(Path(a) / f"snapshot_{step:06d}.h5", Path(b) / f"snapshot_{step:06d}.h5")
        if not ok:
            return False, why
    return True, ""


def relative_difference(a, b, step=20):
    x, y = datasets(Path(a) / f"snapshot_{step:06d}.h5"), datasets(Path(b) / f"snapshot_{step:06d}.h5")
    worst = 0.0
    for name in ("PartType1/Coordinates", "PartType1/Velocities"):
        worst = max(worst, float(np.abs(x[name] - y[name]).max() / np.abs(y[name]).max()))
    return worst


work = Path(tempfile.mkdtemp())
RUN = ["--plummer", 2000, "--seed", 3, "--dt", 0.01, "--eta", 0.05, "--max-bin", 3, "--steps", 20, "--softening",
       0.05, "--theta", 0.6, "--multipole", "quadrupole", "--snapshot-every", 5, "--checkpoint-every", 5,
       "--rebalance-every", 4, "--quiet"]
GROUP = [*RUN, "--strategy", "group", "--group-size", 16, "--opening", "com-offset"]
start_time = time.monotonic()

# ------------------------------------------------------- 1, 2 and 4 ranks
runs = {}
for name, ranks, threads, options in [("one", 1, 1, RUN), ("two", 2, 1, RUN), ("four", 4, 1, RUN),
                                      ("two-threads", 2, 2, RUN), ("group-one", 1, 1, GROUP),
                                      ("group-two", 2, 1, GROUP), ("group-two-threads", 2, 2, GROUP)]:
    runs[name] = work / name
    result = nbody(ranks, *options, "--threads", threads, "-o", runs[name], "--timings", work / f"{name}.json")
    check(f"{name}: {ranks} rank(s) x {threads} thread(s) run", result.returncode == 0, result.stderr + result.stdout)
    if ranks > 1 and result.returncode == 0:
        check(f"{name}: one summary, from rank 0, naming the ranks",
              result.stdout.count("nbody: 2000 bodies") == 1 and f"ranks {ranks}," in result.stdout, result.stdout)
for name in ("two", "four", "two-threads"):
    check(f"{name}: snapshots identical to one process (per-body walks)", *same_run(runs["one"], runs[name]))
check("group walks on 2 ranks: identical on 1 and 2 threads", *same_run(runs["group-two"], runs["group-two-threads"]))
difference = relative_difference(runs["group-two"], runs["group-one"])
print(f"group walks, 2 ranks vs 1: max relative position/velocity difference after 20 steps {difference:.3g}")
check(f"group walks on 2 ranks: within {BOUND} of one process", difference <= BOUND, difference)
with h5py.File(runs["two"] / "checkpoint_000020.h5", "r") as f:
    domains, costs = f["Checkpoint/Domains"][()], f["Checkpoint/InteractionCosts"][()]
    check("2-rank checkpoint: each body's rank and its measured cost",
          f["Checkpoint"].attrs["ranks"] == 2 and set(domains) == {0, 1} and costs.min() > 0, (set(domains), costs))

# ------------------------------------------------------- kill and restart


def killed(ranks, directory, options, where, file_name):
    """Runs until the test hook pauses rank 0 at `where` the write of `file_name`, then kills every rank."""
    env = dict(ENV, **{f"TREETRAV_TEST_PAUSE_{where}_WRITE": file_name})
    process = subprocess.Popen(command(ranks, [*options, "--threads", 1, "--restart", directory]), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline, seen = time.monotonic() + 120, ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
        line = process.stderr.readline() if ready else ""
        if not line:
            break
        seen += line
        if "test hook: paused" in line:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True, seen
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return False, seen


for label, options, reference, where, file_name in [
        ("per-body", RUN, "two", "BEFORE", "snapshot_000010.h5"),
        ("per-body", RUN, "two", "IN", "checkpoint_000015.h5"),
        ("group", GROUP, "group-two", "BEFORE", "snapshot_000015.h5")]:
    directory = work / f"killed-{label}-{file_name}"
    paused, log = killed(2, directory, options, where, file_name)
    check(f"{label}: 2 ranks killed {where.lower()} writing {file_name}", paused, log)
    if label == "per-body" and where == "BEFORE":
        for ranks in (1, 4):
            copy = work / f"{directory.name}-on-{ranks}"
            shutil.copytree(directory, copy)
            result = nbody(ranks, *options, "--threads", 1, "--restart", copy)
            check(f"{label}: the 2-rank checkpoint restarted on {ranks} rank(s) ends as one process",
                  result.returncode == 0 and same_run(runs["one"], copy, steps=(10, 15, 20))[0],
                  result.stderr + same_run(runs["one"], copy, steps=(10, 15, 20))[1])
    result = nbody(2, *options, "--threads", 1, "--restart", directory)
    ok, why = same_run(runs[reference], directory, steps=(15, 20))
    check(f"{label}: restarted on 2 ranks, bit-identical to the uninterrupted run", result.returncode == 0 and ok,
          result.stderr + why)

# ------------------------------------------------------- mistakes
result = nbody(2, "--plummer", 1, "--dt", 0.01, "--steps", 1, "-o", work / "too-few")
check("fewer bodies than ranks: exit 2, one message, nothing written",
      result.returncode == 2 and result.stderr.count("error:") == 1 and "MPI ranks" in result.stderr
      and not (work / "too-few").exists(), result.stderr)
result = nbody(2, *RUN, "--rebalance-every", -1, "-o", work / "bad-option")
check("--rebalance-every -1: exit 2", result.returncode == 2 and not (work / "bad-option").exists(), result.stderr)

print(f"{passed} passed, {failed} failed ({time.monotonic() - start_time:.0f} s)")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failed else 0)
