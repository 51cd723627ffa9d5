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
  bodies of several ranks: a group's box spans only its rank's bodies, and
  no group packs children of a shared cell; forces differ at the walk's own
  error, a few 1e-4): positions and velocities after 20 steps within 1e-3 of
  their scale (max |x_P - x_1| / max |x_1|); their accelerations (p99 of the
  relative error) and potentials (over the walk, theta 0.6; largest error
  over the largest potential) as close to a direct sum at their own
  positions as one process's (within 1.5x; potentials below 1e-3);
- a 2-rank run killed before and inside a write and restarted on 2 ranks ends
  bit-identical to the uninterrupted run (per-body and group walks: the
  checkpoint keeps the decomposition and the costs); its checkpoint restarted
  on 1 and on 4 ranks ends identical to the one-process run (per-body walks);
- the ranks write each snapshot and checkpoint together into one file
  (parallel HDF5): on 2 and 4 ranks every dataset and attribute of the
  snapshots, and the checkpoints' bodies, equal one process's; bodies of two
  particle types on 3 ranks (ranks without bodies of a type) too; a 4-rank
  checkpoint restarted on 2 ranks ends as one process; a write that cannot
  create its file fails alike on every rank (exit 2), leaving the run
  directory as it was;
- each rank reads only its block of the rows of the initial conditions and
  of the checkpoint it restarts from (the rows read per rank in --timings),
  and the ranks partition the bodies among themselves; a bad value or a
  repeated particle id in one rank's rows stops every rank with one message;
- group walks on a 40k clustered box on 3 ranks, first evaluation: the
  accelerations of the 50 bodies farthest from one process's and of 400 others
  no farther from a direct sum than one process's (largest error within 1.5x);
- only rank 0 prints the summary; mistakes under mpirun exit 2.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import json
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
BOUND = 1e-3
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


def attributes(path):
    """Every attribute of every object of an HDF5 file, by "object@name"."""
    found = {}

    def visit(name, item):
        for key, value in item.attrs.items():
            found[f"{name}@{key}"] = np.asarray(value)

    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return found


def same_attributes(a, b, skip=()):
    x, y = attributes(a), attributes(b)
    for name in sorted(set(x) | set(y)):
        if any(name.startswith(prefix) for prefix in skip):
            continue
        if name not in x or name not in y:
            return False, f"attribute {name} missing in {a if name not in x else b}"
        if x[name].dtype != y[name].dtype or x[name].shape != y[name].shape or x[name].tobytes() != y[name].tobytes():
            return False, f"attribute {name} differs between {a} and {b}: {x[name]} vs {y[name]}"
    return True, ""


def rows_read(timings):
    """The rows of the initial conditions or checkpoint each rank read (--timings)."""
    try:
        with open(timings) as f:
            return json.load(f)["rows_read"]
    except (OSError, KeyError, ValueError) as e:
        return repr(e)


def temporaries(directory):
    return sorted(p.name for p in Path(directory).iterdir() if ".tmp." in p.name)


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


def force_error(run, softening, step=20):
    """A checkpoint's accelerations (the last evaluation's, at its positions)
    against a direct sum (G = 1): the 99th percentile of |a - a_exact| / |a_exact|."""
    x = datasets(Path(run) / f"checkpoint_{step:06d}.h5")
    r, m = x["Checkpoint/Coordinates"].astype(np.float64), x["Checkpoint/Masses"].astype(np.float64)
    d = r[None, :, :] - r[:, None, :]
    d2 = (d**2).sum(axis=2) + softening**2
    np.fill_diagonal(d2, np.inf)
    exact = (m[None, :, None] * d / d2[:, :, None] ** 1.5).sum(axis=1)
    error = np.linalg.norm(x["Checkpoint/Accelerations"] - exact, axis=1) / np.linalg.norm(exact, axis=1)
    return float(np.percentile(error, 99))


def potential_error(run, softening, step=20):
    """A snapshot's potentials against a direct sum at its own positions (G = 1):
    the largest difference over the largest |potential|."""
    x = datasets(Path(run) / f"snapshot_{step:06d}.h5")
    r, m = x["PartType1/Coordinates"].astype(np.float64), x["PartType1/Masses"].astype(np.float64)
    d2 = ((r[:, None, :] - r[None, :, :]) ** 2).sum(axis=2) + softening**2
    np.fill_diagonal(d2, np.inf)
    exact = -(m[None, :] / np.sqrt(d2)).sum(axis=1)
    return float(np.abs(x["PartType1/Potentials"] - exact).max() / np.abs(exact).max())


work = Path(tempfile.mkdtemp())
RUN = ["--plummer", 2000, "--seed", 3, "--dt", 0.01, "--eta", 0.05, "--max-bin", 3, "--steps", 20, "--softening",
       0.05, "--theta", 0.6, "--multipole", "quadrupole", "--snapshot-every", 5, "--checkpoint-every", 5,
       "--rebalance-every", 4, "--quiet"]
# Potentials over the walk too (not exact): group walks of the potential on P ranks.
GROUP = [*RUN, "--strategy", "group", "--group-size", 16, "--opening", "com-offset", "--potential-theta", 0.6]
start_time = time.monotonic()

# ------------------------------------------------------- 1, 2 and 4 ranks
runs = {}
for name, ranks, threads, options in [("one", 1, 1, RUN), ("two", 2, 1, RUN), ("four", 4, 1, RUN),
                                      ("two-threads", 2, 2, RUN), ("group-one", 1, 1, GROUP),
                                      ("group-two", 2, 1, GROUP), ("group-two-threads", 2, 2, GROUP),
                                      ("three-gpu-aware", 3, 1, [*RUN, "--gpu-aware-mpi", "on"])]:
    runs[name] = work / name
    result = nbody(ranks, *options, "--threads", threads, "-o", runs[name], "--timings", work / f"{name}.json")
    check(f"{name}: {ranks} rank(s) x {threads} thread(s) run", result.returncode == 0, result.stderr + result.stdout)
    if ranks > 1 and result.returncode == 0:
        check(f"{name}: one summary, from rank 0, naming the ranks",
              result.stdout.count("nbody: 2000 bodies") == 1 and f"ranks {ranks}," in result.stdout, result.stdout)
for name in ("two", "four", "two-threads"):
    check(f"{name}: snapshots identical to one process (per-body walks)", *same_run(runs["one"], runs[name]))
# --gpu-aware-mpi on: the essential tree's records go point to point
# (NbodyDomain::all_to_all's path for device memory, here on host arrays).
check("3 ranks, --gpu-aware-mpi on: snapshots identical to one process", *same_run(runs["one"], runs["three-gpu-aware"]))
check("3 ranks, --gpu-aware-mpi on: recorded in the timings",
      json.loads((work / "three-gpu-aware.json").read_text()).get("mpi_memory") == "device")
for name, ranks in (("one", 1), ("two", 2), ("four", 4)):
    check(f"{name}: each rank holds its block of the generated bodies before the partition",
          rows_read(work / f"{name}.json") == [2000 // ranks] * ranks, rows_read(work / f"{name}.json"))
BODIES = [f"Checkpoint/{name}" for name in ("Coordinates", "Velocities", "Masses", "ParticleIDs", "Accelerations",
                                            "TimeBins")]
for name in ("two", "four"):
    check(f"{name}: snapshot attributes (header, units, run metadata) identical to one process",
          *same_attributes(runs["one"] / "snapshot_000020.h5", runs[name] / "snapshot_000020.h5"))
    for step in (15, 20):
        check(f"{name}: checkpoint {step}'s bodies identical to one process",
              *identical(runs["one"] / f"checkpoint_{step:06d}.h5", runs[name] / f"checkpoint_{step:06d}.h5", BODIES))
    check(f"{name}: checkpoint configuration identical to one process",
          *same_attributes(runs["one"] / "checkpoint_000020.h5", runs[name] / "checkpoint_000020.h5",
                           skip=("Checkpoint@ranks",)))
    check(f"{name}: no temporary left", not temporaries(runs[name]), temporaries(runs[name]))
check("group walks on 2 ranks: identical on 1 and 2 threads", *same_run(runs["group-two"], runs["group-two-threads"]))
difference = relative_difference(runs["group-two"], runs["group-one"])
print(f"group walks, 2 ranks vs 1: max relative position/velocity difference after 20 steps {difference:.3g}")
check(f"group walks on 2 ranks: within {BOUND} of one process", difference <= BOUND, difference)
errors = [force_error(runs[name], 0.05) for name in ("group-one", "group-two")]
print(f"group walks' accelerations against a direct sum (p99), 1 and 2 ranks: {errors[0]:.3g}, {errors[1]:.3g}")
check("group walks on 2 ranks: forces as close to a direct sum as one process's (p99 within 1.5x)",
      errors[1] <= 1.5 * errors[0], errors)
errors = [potential_error(runs[name], 0.05) for name in ("group-one", "group-two")]
print(f"group walks' potentials (theta 0.6) against a direct sum, 1 and 2 ranks: {errors[0]:.3g}, {errors[1]:.3g}")
check("group walks on 2 ranks: potentials as close to a direct sum as one process's (within 1.5x, below 1e-3)",
      errors[1] <= 1.5 * errors[0] and errors[1] < 1e-3, errors)
with h5py.File(runs["two"] / "checkpoint_000020.h5", "r") as f:
    domains, costs = f["Checkpoint/Domains"][()], f["Checkpoint/InteractionCosts"][()]
    check("2-rank checkpoint: each body's rank and its measured cost",
          f["Checkpoint"].attrs["ranks"] == 2 and set(domains) == {0, 1} and costs.min() > 0, (set(domains), costs))
# The 4-rank checkpoint of step 15 (its decomposition of 4 ranks) on 2.
copy = work / "four-on-2"
shutil.copytree(runs["four"], copy)
for name in ("snapshot_000020.h5", "checkpoint_000020.h5"):
    (copy / name).unlink()
result = nbody(2, *RUN, "--threads", 1, "--restart", copy, "--timings", work / "four-on-2.json")
check("the 4-rank checkpoint restarted on 2 ranks: each rank read its half of the checkpoint's rows",
      rows_read(work / "four-on-2.json") == [1000, 1000], rows_read(work / "four-on-2.json"))
check("per-body: the 4-rank checkpoint restarted on 2 ranks ends as one process",
      result.returncode == 0 and same_run(runs["one"], copy, steps=(20,))[0],
      result.stderr + same_run(runs["one"], copy, steps=(20,))[1])

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
    if where == "IN":
        check("killed inside a write: one temporary for both ranks, the file not under its name",
              len(temporaries(directory)) == 1 and temporaries(directory)[0].startswith(f".{file_name}.tmp.")
              and not (directory / file_name).exists(), temporaries(directory))
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

# ------------------------------------------------------- a write that fails
# The snapshot of step 4 links into /proc, where nobody (root neither) can
# create the temporary: every rank fails on it. Each rank's exit status is
# recorded by a shell around it (mpirun reports one status for the job).
failing = work / "failing"
SHORT = ["--plummer", 200, "--seed", 5, "--dt", 0.01, "--snapshot-every", 2, "--checkpoint-every", 2, "--quiet",
         "--threads", 1]
result = nbody(2, *SHORT, "--steps", 2, "-o", failing)
check("failing write: the first 2 steps run", result.returncode == 0, result.stderr)
(failing / "snapshot_000004.h5").symlink_to("/proc/1/treetrav-cannot-write-here.h5")
before = {p.name: p.read_bytes() for p in failing.iterdir() if p.is_file()}
wrapped = [MPIEXEC, "--oversubscribe", "-np", "2", "sh", "-c",
           f'"$0" "$@"; echo $? > {work}/status.$OMPI_COMM_WORLD_RANK', TREETRAV, "nbody",
           *map(str, [*SHORT, "--steps", 4, "--restart", failing])]
result = subprocess.run(wrapped, capture_output=True, text=True, env=ENV, timeout=300)
statuses = [(work / f"status.{rank}").read_text().strip() if (work / f"status.{rank}").exists() else None
            for rank in (0, 1)]
check("failing write: every rank exits 2", statuses == ["2", "2"], (statuses, result.stderr))
check("failing write: one message naming the file",
      result.stderr.count("error:") == 1 and "snapshot_000004.h5: cannot create" in result.stderr, result.stderr)
after = {p.name: p.read_bytes() for p in failing.iterdir() if p.is_file()}
check("failing write: the run directory as it was, no temporary", after == before and not temporaries(failing),
      (sorted(after), temporaries(failing)))

# ------------------------------------------------------- two particle types on 3 ranks
# Rows 0-299 dark matter, 300-599 stars: the first rank's block holds no
# stars, the last one's no dark matter.
subprocess.run([TREETRAV, "generate", "--dist", "plummer", "-n", "300", "--seed", "9", "-o", work / "dm.h5"],
               check=True, capture_output=True, env=ENV)
with h5py.File(work / "dm.h5", "r") as a, h5py.File(work / "typed.h5", "w") as t:
    for name in ("Header", "Units", "PartType1"):
        a.copy(name, t)
    t.copy("PartType1", "PartType4")
    t["PartType4/Coordinates"][...] += 1.0
    t["PartType4/ParticleIDs"][...] += 1000
    t["Header"].attrs["NumPart_ThisFile"] = t["Header"].attrs["NumPart_Total"] = np.array([0, 300, 0, 0, 300, 0],
                                                                                          dtype=np.uint32)
typed = {}
for ranks in (1, 3):
    typed[ranks] = work / f"typed-{ranks}"
    result = nbody(ranks, "--ics", work / "typed.h5", "--dt", 0.01, "--steps", 2, "--softening", 0.05, "--quiet",
                   "--threads", 1, "-o", typed[ranks], "--timings", work / f"typed-{ranks}.json")
    check(f"two particle types on {ranks} rank(s): runs", result.returncode == 0, result.stderr)
    check(f"two particle types on {ranks} rank(s): each rank read its block of the rows of --ics, no more",
          rows_read(work / f"typed-{ranks}.json") == [600 // ranks] * ranks, rows_read(work / f"typed-{ranks}.json"))
for name in ("snapshot_000002.h5", "checkpoint_000002.h5"):
    check(f"two particle types, 3 ranks: {name} identical to one process",
          *identical(typed[1] / name, typed[3] / name,
                     None if name.startswith("snapshot") else [*BODIES, "Checkpoint/ParticleTypes"]))
check("two particle types, 3 ranks: snapshot attributes identical to one process",
      *same_attributes(typed[1] / "snapshot_000002.h5", typed[3] / "snapshot_000002.h5"))

# ------------------------------------------------------- clumps, bodies on one spot, tiny leaves
# A clustered box (a deep, unbalanced top) with every body three times at
# one place: leaves at the finest level, shared by ranks, and cells shared
# by ranks that split though few of their bodies lie on any one rank.
subprocess.run([TREETRAV, "generate", "--dist", "clustered-box", "-n", "1500", "--seed", "4", "-o", work / "box.h5"],
               check=True, capture_output=True, env=ENV)
with h5py.File(work / "box.h5", "r") as a, h5py.File(work / "triple.h5", "w") as t:
    for name in ("Header", "Units"):
        a.copy(name, t)
    for name in ("Coordinates", "Velocities", "Masses", "ParticleIDs"):
        values = a[f"PartType1/{name}"][()]
        if name == "ParticleIDs":
            t[f"PartType1/{name}"] = np.concatenate([values, values + 10**6, values + 2 * 10**6])
        else:
            t[f"PartType1/{name}"] = np.concatenate([values, values, values])
    t["Header"].attrs["NumPart_ThisFile"] = t["Header"].attrs["NumPart_Total"] = np.array([0, 4500, 0, 0, 0, 0],
                                                                                          dtype=np.uint32)
for leaf, extra in ((1, ["--opening", "com-offset", "--theta", 0.8]), (4, ["--multipole", "quadrupole"]),
                    (4, ["--strategy", "group", "--group-size", 8])):
    triple = {}
    for ranks in (1, 3):
        triple[ranks] = work / f"triple-{leaf}-{len(extra)}-{ranks}"
        result = nbody(ranks, "--ics", work / "triple.h5", "--dt", 0.001, "--steps", 2, "--softening", 0.01,
                       "--leaf-size", leaf, *extra, "--quiet", "--threads", 1, "-o", triple[ranks])
        check(f"clumps, bodies three to a spot, leaves of {leaf}, {' '.join(map(str, extra))} on {ranks} rank(s): runs",
              result.returncode == 0, result.stderr)
    check(f"clumps, bodies three to a spot, leaves of {leaf}, {' '.join(map(str, extra))}: 3 ranks identical to one",
          *identical(triple[1] / "snapshot_000002.h5", triple[3] / "snapshot_000002.h5"))

# ------------------------------------------------------- group walks' forces on a clustered box
# A 40k clustered box on 3 ranks, group walks, the first force evaluation:
# clumps whose cells hold few bodies of one rank and many of another, where a
# group of one rank's bodies may only be a cell the essential tree holds for
# it. Accelerations of the 50 bodies that differ most from one process's and
# of 400 others against a direct sum over all bodies: no worse than one
# process's (the largest error within 1.5x).
subprocess.run([TREETRAV, "generate", "--dist", "clustered-box", "-n", "40000", "--seed", "3", "-o",
                work / "clumps.h5"], check=True, capture_output=True, env=ENV)


def accelerations_of(run):
    x = datasets(Path(run) / "checkpoint_000000.h5")
    return (x["Checkpoint/Coordinates"].astype(np.float64), x["Checkpoint/Masses"].astype(np.float64),
            x["Checkpoint/Accelerations"].astype(np.float64))


clumps = {}
for ranks in (1, 3):
    clumps[ranks] = work / f"clumps-{ranks}"
    result = nbody(ranks, "--ics", work / "clumps.h5", "--dt", 0.0005, "--steps", 0, "--softening", 0.01,
                   "--strategy", "group", "--multipole", "quadrupole", "--theta", 0.6, "--quiet", "--threads", 1,
                   "-o", clumps[ranks])
    check(f"clustered box, group walks on {ranks} rank(s): runs", result.returncode == 0, result.stderr)
(r, m, one), (_, _, three) = accelerations_of(clumps[1]), accelerations_of(clumps[3])
apart = np.linalg.norm(three - one, axis=1) / np.linalg.norm(one, axis=1)
rows = np.unique(np.concatenate([np.argsort(apart)[-50:], np.random.default_rng(0).choice(len(r), 400, replace=False)]))
d = r[None, :, :] - r[rows, None, :]
d2 = (d**2).sum(axis=2) + 0.01**2
d2[np.arange(len(rows)), rows] = np.inf
exact = (m[None, :, None] * d / d2[:, :, None] ** 1.5).sum(axis=1)
errors = [float((np.linalg.norm(a[rows] - exact, axis=1) / np.linalg.norm(exact, axis=1)).max()) for a in (one, three)]
print(f"clustered box, group walks' accelerations against a direct sum (largest of {len(rows)}), 1 and 3 ranks: "
      f"{errors[0]:.3g}, {errors[1]:.3g}")
check("clustered box, group walks on 3 ranks: forces no farther from a direct sum than one process's (within 1.5x)",
      errors[1] <= 1.5 * errors[0], errors)

# A bad value or a repeated id in one rank's rows: every rank stops, one message names it.
for name, change, words in [
        ("nan", lambda t: t["PartType4/Coordinates"].__setitem__((250, 1), np.nan),
         ["/PartType4/Coordinates", "row 250", "NaN"]),
        ("repeated-id", lambda t: t["PartType4/ParticleIDs"].__setitem__(250, t["PartType1/ParticleIDs"][10]),
         ["appears more than once"])]:
    bad = work / f"typed-{name}.h5"
    shutil.copy(work / "typed.h5", bad)
    with h5py.File(bad, "r+") as t:
        change(t)
    result = nbody(3, "--ics", bad, "--dt", 0.01, "--steps", 2, "--softening", 0.05, "--quiet", "--threads", 1,
                   "-o", work / f"out-{name}")
    check(f"{name} in the last rank's rows of --ics on 3 ranks: exit 2, one message naming it, nothing written",
          result.returncode == 2 and result.stderr.count("error:") == 1 and all(w in result.stderr for w in words)
          and not (work / f"out-{name}").exists(), result.stderr)

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
