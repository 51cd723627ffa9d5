#!/usr/bin/env python3
"""treetrav nbody as a user runs it.

    /usr/bin/python3 tests/nbody/test_nbody_cli.py TREETRAV PLOT_SCRIPT

- kill and restart: a run SIGKILLed at start-up, then before and inside the
  write of every file it makes (test hooks pause the writer there), resumed
  each time with --restart (with the full options: the first kills come before
  any checkpoint is complete), ends with snapshots and checkpoints
  bit-identical to an uninterrupted run (datasets and attributes compared with
  h5py);
- snapshots read back with h5py carry the SWIFT/GADGET names and diagnostics;
- mistakes fail with exit 2 and a message and leave no directory or file; a
  diverging run says what it leaves (the files complete before it diverged);
- no "nan" in any summary, log, timings or file of a valid run (one body at
  rest, a Plummer sphere of one body: drifts from 0 are absolute);
- the progress line: plain lines in a pipe, rewritten (\\r) on a terminal,
  none with --quiet; --timings JSON; ICs from a file; the plotting script.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import json
import math
import os
import pathlib
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

TREETRAV, PLOT_SCRIPT = sys.argv[1], sys.argv[2]
ENV = dict(os.environ, OMP_PROC_BIND="false")
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS: {name}")
    else:
        failed += 1
        print(f"FAIL: {name}")
        for line in str(detail).splitlines()[-20:]:
            print(f"    | {line}")


def nbody(*args, env=ENV):
    """Runs treetrav nbody to completion; returns the CompletedProcess."""
    return subprocess.run([TREETRAV, "nbody", *map(str, args)], capture_output=True, text=True, env=env)


def listing(directory):
    return sorted(p.name for p in pathlib.Path(directory).iterdir())


def flatten(path):
    """Every dataset's values and every attribute of an HDF5 file, by name."""
    items = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            for key, value in obj.attrs.items():
                items[f"{name}@{key}"] = np.asarray(value)
            if isinstance(obj, h5py.Dataset):
                items[name] = obj[()]
        visit("/", f)
        f.visititems(visit)
    return items


def same_files(a, b):
    """Names of the datasets and attributes that differ between two files ("" if none)."""
    fa, fb = flatten(a), flatten(b)
    if fa.keys() != fb.keys():
        return f"different contents: {sorted(fa.keys() ^ fb.keys())}"
    differ = [k for k in fa if fa[k].dtype != fb[k].dtype or fa[k].shape != fb[k].shape
              or fa[k].tobytes() != fb[k].tobytes()]
    return ", ".join(differ)


work = pathlib.Path(tempfile.mkdtemp(prefix="treetrav-nbody-cli-"))
RUN = ["--plummer", 1500, "--seed", 5, "--dt", 0.01, "--steps", 60, "--softening", 0.05, "--theta", 0.6,
       "--snapshot-every", 20, "--checkpoint-every", 10, "--quiet"]

# ------------------------------------------------------------ the reference
reference = work / "reference"
started = time.monotonic()
result = nbody(*RUN, "--threads", 1, "-o", reference, "--timings", reference / "timings.json")
reference_seconds = time.monotonic() - started
check("uninterrupted run succeeds", result.returncode == 0, result.stderr)
check("snapshots at 0, 20, 40, 60 and the newest two checkpoints",
      listing(reference) == ["checkpoint_000050.h5", "checkpoint_000060.h5", "snapshot_000000.h5",
                             "snapshot_000020.h5", "snapshot_000040.h5", "snapshot_000060.h5", "timings.json"],
      listing(reference))
check("--quiet: no progress on stderr", result.stderr == "", result.stderr)
check("summary on stdout", "1500 bodies, steps 0 to 60" in result.stdout and "energy drift" in result.stdout,
      result.stdout)

# ------------------------------------------------------------ kill and restart
run = work / "run"
# The full options: before the first checkpoint is complete, --restart starts from the initial conditions.
RESTART = ["--restart", run, *RUN]
FILES = ["checkpoint_000000.h5", "snapshot_000000.h5", "checkpoint_000010.h5", "snapshot_000020.h5",
         "checkpoint_000020.h5", "checkpoint_000030.h5", "snapshot_000040.h5", "checkpoint_000040.h5",
         "checkpoint_000050.h5", "snapshot_000060.h5", "checkpoint_000060.h5"]


def start(*args, pause=None):
    """Starts treetrav nbody; pause = (where, file name) arms a test hook ("BEFORE" or "IN")."""
    env = dict(ENV)
    if pause is not None:
        env[f"TREETRAV_TEST_PAUSE_{pause[0]}_WRITE"] = pause[1]
    return subprocess.Popen([TREETRAV, "nbody", *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def kill_at_pause(process, timeout=60):
    """SIGKILLs `process` once its test hook says it paused; returns (paused, stderr so far)."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stderr.readline()
        if not line:
            break
        seen += line
        if "test hook: paused" in line:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True, seen
    process.kill()
    return False, seen + process.communicate()[1]


# At start-up, before it could do anything.
process = start(*RESTART, "--threads", 1)
process.send_signal(signal.SIGKILL)
process.wait()
check("killed at start-up: nothing to resume from", not run.exists() or not any(run.glob("checkpoint_*")))
for index, name in enumerate(FILES):
    threads = 1 + index % 2  # the state does not depend on the thread count
    for where in ["BEFORE", "IN"]:
        paused, stderr = kill_at_pause(start(*RESTART, "--threads", threads, pause=(where, name)))
        check(f"killed {where.lower()} the write of {name}", paused, stderr)
        temporaries = [p.name for p in run.glob(f".{name}.tmp.*")]
        check(f"killed {where.lower()} {name}: {'a temporary only' if where == 'IN' else 'not started'}",
              not (run / name).exists() and len(temporaries) == (1 if where == "IN" else 0), listing(run))
        if index > 0 and where == "BEFORE":  # the instant after the previous file
            check(f"killed after {FILES[index - 1]}: it is complete", (run / FILES[index - 1]).exists(), listing(run))
result = nbody("--restart", run, "--steps", 60, "--threads", 2, "--quiet")
check("the last restart completes", result.returncode == 0, result.stderr)
check("no temporary left behind", not any(n.startswith(".") for n in listing(run)), listing(run))
for name in ["snapshot_000000.h5", "snapshot_000020.h5", "snapshot_000040.h5", "snapshot_000060.h5",
             "checkpoint_000050.h5", "checkpoint_000060.h5"]:
    differences = same_files(reference / name, run / name)
    check(f"{name} bit-identical to the uninterrupted run's", differences == "", differences)

# ------------------------------------------------------------ block steps: kill and restart
# Group walks with quadrupoles, block time steps and refits: the bins and the
# positions the octree was last built from travel in the checkpoints, so a run
# killed mid-write and between steps still resumes bit for bit, on another
# thread count; and the restart keeps the walk kind (a per-body strategy is
# refused).
BLOCK = ["--plummer", 1200, "--seed", 6, "--dt", 0.08, "--steps", 24, "--softening", 0.05, "--theta", 0.6,
         "--strategy", "group", "--group-size", 32, "--multipole", "quadrupole", "--opening", "com-offset",
         "--eta", 0.1, "--max-bin", 3, "--refit", 0.1, "--snapshot-every", 8, "--checkpoint-every", 4, "--quiet"]
block_reference, block_run = work / "block-reference", work / "block-run"
started = time.monotonic()
result = nbody(*BLOCK, "--threads", 1, "-o", block_reference, "--timings", block_reference / "timings.json")
block_seconds = time.monotonic() - started
check("block steps: uninterrupted run succeeds", result.returncode == 0, result.stderr)
block_timings = json.loads((block_reference / "timings.json").read_text())
check("block steps: several sub-steps per step", block_timings["sub_steps"] > 24, block_timings)
check("block steps: octrees both refitted and built anew",
      block_timings["refits"] > 0 and block_timings["tree_builds"] > 1 and
      block_timings["refits"] + block_timings["tree_builds"] == block_timings["force_evaluations"], block_timings)
killed, stderr = kill_at_pause(start(*BLOCK, "--threads", 1, "-o", block_run, pause=("IN", "checkpoint_000008.h5")))
check("block steps: killed inside the write of checkpoint 8", killed, stderr)
block_restart = ["--restart", block_run, "--steps", 24, "--snapshot-every", 8, "--checkpoint-every", 4]
result = nbody(*block_restart, "--strategy", "autoropes")
check("block steps: a restart refuses another walk kind", result.returncode == 2 and "--strategy" in result.stderr,
      result.stderr)
killed, stderr = kill_at_pause(start(*block_restart, "--threads", 1, pause=("BEFORE", "checkpoint_000020.h5")))
check("block steps: killed after checkpoint 16", killed and (block_run / "checkpoint_000016.h5").exists(), stderr)
result = nbody(*block_restart, "--threads", 2)
check("block steps: the last restart completes", result.returncode == 0, result.stderr)
for name in ["snapshot_000008.h5", "snapshot_000016.h5", "snapshot_000024.h5", "checkpoint_000024.h5"]:
    differences = same_files(block_reference / name, block_run / name)
    check(f"block steps: {name} bit-identical to the uninterrupted run's", differences == "", differences)
with h5py.File(block_run / "checkpoint_000024.h5", "r") as f:
    bins = f["Checkpoint/TimeBins"][()]
    check("block steps: the checkpoint holds the bins, several of them used",
          bins.shape == (1200,) and len(set(bins.tolist())) >= 2, np.bincount(bins))
    check("block steps: the checkpoint holds the octree's build positions",
          f["Checkpoint/TreePositions"].shape == (1200, 3) and f["Checkpoint/Configuration"].attrs["refit"] == 0.1)

# ------------------------------------------------------------ the relative criterion, counted
# --opening relative reads each body's previous acceleration: a run counts its
# interactions into --timings, and a restart with another --alpha is refused.
RELATIVE = ["--plummer", 800, "--seed", 7, "--dt", 0.02, "--steps", 6, "--softening", 0.05, "--strategy", "group",
            "--multipole", "quadrupole", "--opening", "relative", "--alpha", 0.004, "--checkpoint-every", 3,
            "--quiet"]
relative_run = work / "relative-run"
result = nbody(*RELATIVE, "--count-interactions", "-o", relative_run, "--timings", work / "relative.json")
check("relative: the run succeeds", result.returncode == 0, result.stderr)
relative_timings = json.loads((work / "relative.json").read_text()) if result.returncode == 0 else {}
counted = relative_timings.get("interactions") or {}
check("relative: --timings records the opening and alpha",
      relative_timings.get("opening") == "relative" and abs(relative_timings.get("alpha", 0) - 0.004) < 1e-9,
      relative_timings)
check("relative: cells and bodies counted a body force, fewer than all pairs",
      0 < counted.get("cell_per_body_force", 0) and 0 < counted.get("body_per_body_force", 0) and
      counted["cell_per_body_force"] + counted["body_per_body_force"] < 799, counted)
check("relative: flops are the counts' (54 a quadrupole cell, 20 a body)",
      counted.get("flops_per_cell") == 54 and counted.get("flops_per_body") == 20 and math.isclose(
          counted.get("flops", 0), relative_timings.get("body_forces", 0) *
          (54 * counted.get("cell_per_body_force", 0) + 20 * counted.get("body_per_body_force", 0)), rel_tol=1e-9),
      counted)
result = nbody("--restart", relative_run, "--steps", 9, "--alpha", 0.008)
check("relative: a restart refuses another --alpha", result.returncode == 2 and "--alpha" in result.stderr,
      result.stderr)
result = nbody("--restart", relative_run, "--steps", 9, "--quiet")
check("relative: a restart continues", result.returncode == 0, result.stderr)
result = nbody("--plummer", 100, "--dt", 0.01, "--steps", 1, "--opening", "relative", "--alpha", -1,
               "-o", work / "never-alpha")
check("--alpha -1 is refused with exit 2, naming --alpha, creating nothing",
      result.returncode == 2 and "--alpha" in result.stderr and not (work / "never-alpha").exists(), result.stderr)

# ------------------------------------------------------------ what a snapshot holds
last = reference / "snapshot_000060.h5"
with h5py.File(last, "r") as f:
    header = f["Header"].attrs
    check("Header: Time = 60 dt", header["Time"] == 60 * 0.01, header["Time"])
    check("Header: NumPart_ThisFile / NumPart_Total count PartType1",
          list(header["NumPart_ThisFile"]) == [0, 1500, 0, 0, 0, 0] and header["NumPart_Total"][1] == 1500)
    for name in ["BoxSize", "MassTable", "Redshift", "NumFilesPerSnapshot", "Dimension", "NumPart_Total_HighWord"]:
        check(f"Header: {name}", name in header)
    particles = f["PartType1"]
    shapes = {name: (particles[name].shape, particles[name].dtype.kind) for name in particles}
    check("PartType1: Coordinates, Velocities (n, 3), Masses, ParticleIDs, Potentials (n)",
          shapes == {"Coordinates": ((1500, 3), "f"), "Velocities": ((1500, 3), "f"), "Masses": ((1500,), "f"),
                     "ParticleIDs": ((1500,), "i"), "Potentials": ((1500,), "f")}, shapes)
    check("PartType1: SWIFT unit attributes", particles["Coordinates"].attrs["U_L exponent"] == 1)
    check("Units group", "Units" in f)
    check("ids are kept", sorted(particles["ParticleIDs"][()]) == list(range(1500)))
    meta = f["RunMetadata"].attrs
    for name in ["step", "dt", "theta", "softening", "strategy", "backend", "kinetic_energy", "potential_energy",
                 "total_energy", "energy_drift", "momentum_x", "angular_momentum_z", "momentum_drift",
                 "angular_momentum_drift", "initial_total_energy"]:
        check(f"RunMetadata: {name}", name in meta)
    m = particles["Masses"][()]
    v = particles["Velocities"][()]
    phi = particles["Potentials"][()]
    energy = 0.5 * np.sum(m * np.sum(v * v, axis=1)) + 0.5 * np.sum(m * phi)
    check("total_energy is K + W of the stored bodies", abs(energy - meta["total_energy"]) < 1e-12,
          (energy, meta["total_energy"]))
    check("energy drift is small", abs(meta["energy_drift"]) < 1e-4, meta["energy_drift"])

timings = json.loads((reference / "timings.json").read_text())
check("--timings: per-phase seconds",
      set(timings["seconds"]) == {"tree_build", "center_of_mass", "refit", "forces", "integration", "diagnostics",
                                  "io", "rebalance", "wall"} and timings["steps"] == 60 and timings["bodies"] == 1500, timings)
# At least half the steps take the median or longer, all within the wall time.
check("--timings: a median step time the run's wall time bounds",
      0 < timings["seconds_per_step_median"] <= 2 * timings["seconds"]["wall"] / timings["steps"], timings)

# ------------------------------------------------------------ mistakes and divergence


def expect_failure(name, text, args, directory):
    """Exit 2, `text` in stderr, and `directory` as it was (still absent if it was)."""
    before = listing(directory) if directory.exists() else None
    result = nbody(*args)
    check(f"{name}: exit 2", result.returncode == 2, result.stderr)
    check(f"{name}: says '{text}'", text in result.stderr, result.stderr)
    after = listing(directory) if directory.exists() else None
    check(f"{name}: nothing written", before == after, (before, after))


def generate_plummer(path, n, seed=9):
    subprocess.run([TREETRAV, "generate", "--dist", "plummer", "-n", str(n), "--seed", str(seed), "-o", path],
                   check=True, capture_output=True, env=ENV)


SMALL = ["--plummer", 10, "--dt", 0.01, "--steps", 3, "--quiet"]
expect_failure("restart with another --dt", "--dt 0.02 (the checkpoint has 0.01)",
               ["--restart", reference, "--steps", 80, "--dt", 0.02], reference)
expect_failure("restart with other initial conditions", "initial conditions 'plummer n=1500 seed=6'",
               ["--restart", reference, "--steps", 80, "--plummer", 1500, "--seed", 6], reference)
expect_failure("fresh run over an earlier run", "holds checkpoints of an earlier run",
               [*RUN, "-o", reference], reference)
empty = work / "empty"
empty.mkdir()
expect_failure("restart without a checkpoint or initial conditions", "give its initial conditions",
               ["--restart", empty, "--steps", 5], empty)
expect_failure("no initial conditions", "--ics FILE or --plummer N", ["--dt", 0.1, "--steps", 5, "-o", empty], empty)
expect_failure("missing ICs file", "does not exist",
               ["--ics", work / "missing.h5", "--dt", 0.1, "--steps", 5, "-o", empty], empty)
expect_failure("non-positive dt", "--dt: must be a finite number > 0",
               ["--plummer", 10, "--dt", 0, "--steps", 5, "-o", empty], empty)
# Everything checkable is checked before the run directory is created.
never = work / "never-created"
expect_failure("--timings into a missing folder", "--timings", [*SMALL, "-o", never, "--timings",
                                                                 work / "no-folder" / "t.json"], never)
expect_failure("--timings naming a file of the run", "names a file of the run",
               [*SMALL, "-o", never, "--timings", never / "checkpoint_000000.h5"], never)
coincident = work / "coincident.h5"
generate_plummer(coincident, 20)
with h5py.File(coincident, "r+") as f:
    f["PartType1/Coordinates"][1] = f["PartType1/Coordinates"][0]
expect_failure("coincident bodies without softening: stopped at step 0", "step 0",
               ["--ics", coincident, "--softening", 0, "--dt", 0.01, "--steps", 3, "-o", never], never)
a_file = work / "a-file"
a_file.write_text("not a directory")
expect_failure("-o an existing file", "is not a directory", [*SMALL, "-o", a_file], never)
check("-o an existing file: left as it was", a_file.read_text() == "not a directory")

# A directory holding only the temporary of an interrupted first write is free for a fresh run.
interrupted = work / "interrupted"
interrupted.mkdir()
(interrupted / ".checkpoint_000000.h5.tmp.12345").write_bytes(b"partial")
result = nbody(*SMALL, "-o", interrupted)
check("fresh run over an interrupted first write: runs", result.returncode == 0, result.stderr)
check("fresh run over an interrupted first write: says it removed the temporary",
      "removed 1 temporary file" in result.stderr, result.stderr)
check("fresh run over an interrupted first write: the run's files only", listing(interrupted) ==
      ["checkpoint_000000.h5", "checkpoint_000003.h5", "snapshot_000000.h5", "snapshot_000003.h5"],
      listing(interrupted))

# A run that diverges keeps what was complete before, and says so.
diverging = work / "diverging"
result = nbody("--plummer", 50, "--dt", 1e30, "--softening", 0, "--steps", 5, "-o", diverging, "--quiet")
check("diverging run: exit 2", result.returncode == 2, result.stderr)
check("diverging run: says why", "non-finite" in result.stderr and "step 1" in result.stderr, result.stderr)
check("diverging run: says what stays", "keeps the snapshots and checkpoints completed before step 1" in
      result.stderr, result.stderr)
check("diverging run: the files of step 0 stay", listing(diverging) == ["checkpoint_000000.h5", "snapshot_000000.h5"],
      listing(diverging))

# ------------------------------------------------------------ no nan in a valid run


def non_finite(path):
    """Names of the floating-point datasets and attributes of an HDF5 file that hold a NaN or infinity."""
    return [k for k, v in flatten(path).items() if v.dtype.kind == "f" and not np.all(np.isfinite(v))]


def json_non_finite(value):
    if isinstance(value, dict):
        return any(json_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(json_non_finite(v) for v in value)
    return value is None or (isinstance(value, float) and not math.isfinite(value))


one_body = work / "one-body.h5"
generate_plummer(one_body, 1)  # centred: one body at rest at the origin, E = 0
for index, (name, source) in enumerate([("--plummer 1", ["--plummer", 1]),
                                        ("a 1-body snapshot at rest", ["--ics", one_body])]):
    directory = work / f"one-body-{index}"  # (a name without "nan" in it)
    timings = work / f"{directory.name}.json"
    result = nbody(*source, "--dt", 0.1, "--steps", 4, "--snapshot-every", 2, "--progress-seconds", 1e-6,
                   "-o", directory, "--timings", timings)
    check(f"{name}: runs", result.returncode == 0, result.stderr)
    text = (result.stdout + result.stderr).lower()
    check(f"{name}: no nan in the summary and the log", not re.search(r"\b(-?nan|-?inf)\b", text), text)
    check(f"{name}: drifts from 0 reported as absolute", "absolute" in result.stdout, result.stdout)
    check(f"{name}: no nan in the timings", not json_non_finite(json.loads(timings.read_text())), timings.read_text())
    for file in sorted(directory.iterdir()):
        check(f"{name}: {file.name} all finite", non_finite(file) == [], non_finite(file))
for file in sorted(reference.glob("*.h5")):
    check(f"reference run: {file.name} all finite", non_finite(file) == [], non_finite(file))
check("reference run: no nan in the timings",
      not json_non_finite(json.loads((reference / "timings.json").read_text())))
result = subprocess.run([TREETRAV, "bh-force", "--snapshot", one_body, "-o", work / "one-body-forces.h5"],
                        capture_output=True, text=True, env=ENV)
check("bh-force on one body: runs, no nan in its summary", result.returncode == 0 and "nan" not in
      result.stdout.lower(), result.stdout + result.stderr)
check("bh-force on one body: results all finite", non_finite(work / "one-body-forces.h5") == [])

# ------------------------------------------------------------ ICs from a file
ics = work / "ics.h5"
generate_plummer(ics, 300)
from_file = work / "from-file"
result = nbody("--ics", ics, "--dt", 0.01, "--steps", 3, "-o", from_file, "--quiet")
check("--ics: runs", result.returncode == 0, result.stderr)
with h5py.File(ics, "r") as a, h5py.File(from_file / "snapshot_000000.h5", "r") as b:
    check("--ics: the first snapshot holds the initial conditions exactly",
          np.array_equal(a["PartType1/Coordinates"][()], b["PartType1/Coordinates"][()]) and
          np.array_equal(a["PartType1/Velocities"][()], b["PartType1/Velocities"][()]))

# Multi-file ICs (NumFilesPerSnapshot > 1), and several particle types carried through.
subprocess.run([TREETRAV, "generate", "--dist", "plummer", "-n", "300", "--seed", "9", "--files", "3", "-o",
                work / "split"], check=True, capture_output=True, env=ENV)
from_files = work / "from-files"
result = nbody("--ics", work / "split.1.hdf5", "--dt", 0.01, "--steps", 3, "-o", from_files, "--quiet")
check("--ics of a 3-file snapshot: runs", result.returncode == 0, result.stderr)
with h5py.File(ics, "r") as a, h5py.File(from_files / "snapshot_000000.h5", "r") as b:
    check("--ics of a 3-file snapshot: all its bodies, in the files' order",
          np.array_equal(a["PartType1/Coordinates"][()], b["PartType1/Coordinates"][()]) and
          np.array_equal(a["PartType1/ParticleIDs"][()], b["PartType1/ParticleIDs"][()]))
typed = work / "typed.h5"
with h5py.File(ics, "r") as a, h5py.File(typed, "w") as t:
    for name in ("Header", "Units", "PartType1"):
        a.copy(name, t)
    t.copy("PartType1", "PartType4")  # stars: their own bodies, 1 away
    t["PartType4/Coordinates"][...] += 1.0
    t["PartType4/ParticleIDs"][...] += 1000
    t["Header"].attrs["NumPart_ThisFile"] = t["Header"].attrs["NumPart_Total"] = np.array([0, 300, 0, 0, 300, 0],
                                                                                          dtype=np.uint32)
from_typed = work / "from-typed"
result = nbody("--ics", typed, "--dt", 0.01, "--steps", 2, "-o", from_typed, "--quiet")
check("--ics with dark matter and stars: runs", result.returncode == 0, result.stderr)
with h5py.File(from_typed / "snapshot_000002.h5", "r") as f:
    check("the stars stay PartType4, the dark matter PartType1",
          list(f["Header"].attrs["NumPart_ThisFile"]) == [0, 300, 0, 0, 300, 0] and
          sorted(f["PartType4/ParticleIDs"][()]) == list(range(1000, 1300)), list(f))
with h5py.File(typed, "a") as t:
    t.create_dataset("PartType0/Coordinates", data=np.zeros((5, 3)))
expect_failure("gas in the ICs", "gas", ["--ics", typed, "--dt", 0.01, "--steps", 2, "-o", work / "gas-run"],
               work / "gas-run")

# ------------------------------------------------------------ progress
progress_args = ["--plummer", 200, "--dt", 0.01, "--steps", 30, "--progress-seconds", 1e-6]
result = nbody(*progress_args, "-o", work / "progress-pipe")
lines = [line for line in result.stderr.splitlines() if line.startswith("step ")]
check("pipe: plain progress lines", result.returncode == 0 and "\r" not in result.stderr and
      any(re.match(r"step \d+/30 \(\d+\.\d%\)  t = [0-9.e-]+  [0-9.e+]+ steps/s  ETA ", line) for line in lines),
      result.stderr)
check("pipe: the last line is the last step", lines and lines[-1].startswith("step 30/30 (100.0%)"), lines[-1:])

controller, terminal = pty.openpty()
process = subprocess.Popen([TREETRAV, "nbody", *map(str, progress_args), "-o", work / "progress-tty"],
                           stdout=subprocess.DEVNULL, stderr=terminal, env=ENV)
os.close(terminal)
output = b""
while True:
    try:
        chunk = os.read(controller, 4096)
    except OSError:  # the terminal closed with the process
        break
    if not chunk:
        break
    output += chunk
process.wait()
os.close(controller)
check("terminal: the line is rewritten in place", process.returncode == 0 and b"\r\x1b[K" in output,
      output[-300:])

# ------------------------------------------------------------ the plotting script
try:
    import matplotlib  # noqa: F401
    have_matplotlib = True
except ImportError:
    have_matplotlib = False
if have_matplotlib:
    plots = work / "plots"
    env = {k: v for k, v in ENV.items() if k not in ("DISPLAY", "MPLBACKEND")}
    result = subprocess.run([sys.executable, PLOT_SCRIPT, reference, "-o", plots], capture_output=True, text=True,
                            env=env)
    check("plot_nbody.py runs without a display", result.returncode == 0, result.stderr)
    for name in ["drift.png", "density.png"]:
        png = plots / name
        check(f"plot_nbody.py wrote {name}",
              png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000)
else:
    print("SKIP: plot_nbody.py (no matplotlib for this Python: apt-get install python3-matplotlib)")

subprocess.run(["rm", "-rf", str(work)])
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
