#!/usr/bin/env python3
"""treetrav nbody as a user runs it.

    /usr/bin/python3 tests/nbody/test_nbody_cli.py TREETRAV PLOT_SCRIPT

- kill and restart: a run SIGKILLed mid-checkpoint-write (a test hook pauses the
  writer inside its temporary file), between steps, and at start-up, resumed
  each time with --restart, ends with snapshots and checkpoint bit-identical
  to an uninterrupted run (datasets and attributes compared with h5py);
- snapshots read back with h5py carry the SWIFT/GADGET names and diagnostics;
- mistakes and a diverging run fail with a message and write nothing;
- the progress line: plain lines in a pipe, rewritten (\\r) on a terminal,
  none with --quiet; --timings JSON; ICs from a file; the plotting script.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import json
import os
import pathlib
import pty
import re
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
check("summary on stdout", "1500 bodies, steps 0 to 60" in result.stdout and "Energy drift" in result.stdout,
      result.stdout)

# ------------------------------------------------------------ kill and restart
run = work / "run"


def start(*args, pause_at=None):
    env = dict(ENV)
    if pause_at is not None:
        env["TREETRAV_TEST_PAUSE_IN_CHECKPOINT"] = str(pause_at)
    return subprocess.Popen([TREETRAV, "nbody", *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def kill_when(process, ready, timeout=60):
    """SIGKILLs `process` as soon as ready() holds (or when it ends first); returns (killed, stderr)."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if ready():
            process.send_signal(signal.SIGKILL)
            return True, process.communicate()[1]
        time.sleep(0.002)
    return False, process.communicate()[1]


def temporary(step):
    return lambda: any(run.glob(f".checkpoint_{step:06d}.h5.tmp.*"))


def complete(step):
    return lambda: (run / f"checkpoint_{step:06d}.h5").exists()


# 1. Mid-write: the writer of checkpoint 20 pauses inside its temporary file.
killed, _ = kill_when(start(*RUN, "--threads", 1, "-o", run, pause_at=20), temporary(20))
check("killed inside the temporary file of checkpoint 20", killed)
check("the killed write left only a temporary behind",
      not (run / "checkpoint_000020.h5").exists() and temporary(20)(), listing(run))
restart = ["--restart", run, "--steps", 60, "--snapshot-every", 20, "--checkpoint-every", 10]
# 2. At start-up, before it could do anything.
kill_when(start(*restart, "--threads", 1), lambda: True)
# 3. Between steps: right after checkpoint 30 is complete.
killed, stderr = kill_when(start(*restart, "--threads", 1), complete(30))
check("killed after checkpoint 30", killed, stderr)
check("the restart resumed from checkpoint 10 (20 was never completed)",
      f"resuming from {run / 'checkpoint_000010.h5'}" in stderr, stderr)
# 4. Wherever it is a third of a run later (stepping, or writing a snapshot or checkpoint).
process = start(*restart, "--threads", 2)
time.sleep(reference_seconds / 3)
kill_when(process, lambda: True)
# 5. To the end, on two threads (the state does not depend on the thread count).
result = nbody(*restart, "--threads", 2)
check("the last restart completes", result.returncode == 0, result.stderr)
check("no temporary left behind", not any(n.startswith(".") for n in listing(run)), listing(run))
for name in ["snapshot_000000.h5", "snapshot_000020.h5", "snapshot_000040.h5", "snapshot_000060.h5",
             "checkpoint_000060.h5"]:
    differences = same_files(reference / name, run / name)
    check(f"{name} bit-identical to the uninterrupted run's", differences == "", differences)

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
      set(timings["seconds"]) == {"tree_build", "center_of_mass", "forces", "integration", "diagnostics", "io",
                                  "wall"} and timings["steps"] == 60 and timings["bodies"] == 1500, timings)

# ------------------------------------------------------------ mistakes and divergence


def expect_failure(name, text, args, directory):
    before = listing(directory) if directory.exists() else None
    result = nbody(*args)
    check(f"{name}: exit 2", result.returncode == 2, result.stderr)
    check(f"{name}: says '{text}'", text in result.stderr, result.stderr)
    after = listing(directory) if directory.exists() else None
    check(f"{name}: nothing written", before == after, (before, after))


expect_failure("restart with another --dt", "--dt 0.02 (the checkpoint has 0.01)",
               ["--restart", reference, "--steps", 80, "--dt", 0.02], reference)
expect_failure("restart with other initial conditions", "initial conditions 'plummer n=1500 seed=6'",
               ["--restart", reference, "--steps", 80, "--plummer", 1500, "--seed", 6], reference)
expect_failure("fresh run over an earlier run", "holds checkpoints of an earlier run",
               [*RUN, "-o", reference], reference)
empty = work / "empty"
empty.mkdir()
expect_failure("restart without checkpoints", "no complete checkpoint", ["--restart", empty, "--steps", 5], empty)
expect_failure("no initial conditions", "--ics FILE or --plummer N", ["--dt", 0.1, "--steps", 5, "-o", empty], empty)
expect_failure("missing ICs file", "does not exist",
               ["--ics", work / "missing.h5", "--dt", 0.1, "--steps", 5, "-o", empty], empty)
expect_failure("non-positive dt", "--dt: must be a finite number > 0", ["--plummer", 10, "--dt", 0, "--steps", 5, "-o", empty], empty)

diverging = work / "diverging"
result = nbody("--plummer", 50, "--dt", 1e30, "--softening", 0, "--steps", 5, "-o", diverging, "--quiet")
check("diverging run: exit 2", result.returncode == 2, result.stderr)
check("diverging run: says why", "non-finite" in result.stderr and "step 1" in result.stderr, result.stderr)
check("diverging run: only the valid initial snapshot", listing(diverging) == ["snapshot_000000.h5"],
      listing(diverging))

# ------------------------------------------------------------ ICs from a file
ics = work / "ics.h5"
subprocess.run([TREETRAV, "generate", "--dist", "plummer", "-n", "300", "--seed", "9", "-o", ics], check=True,
               capture_output=True, env=ENV)
from_file = work / "from-file"
result = nbody("--ics", ics, "--dt", 0.01, "--steps", 3, "-o", from_file, "--quiet")
check("--ics: runs", result.returncode == 0, result.stderr)
with h5py.File(ics, "r") as a, h5py.File(from_file / "snapshot_000000.h5", "r") as b:
    check("--ics: the first snapshot holds the initial conditions exactly",
          np.array_equal(a["PartType1/Coordinates"][()], b["PartType1/Coordinates"][()]) and
          np.array_equal(a["PartType1/Velocities"][()], b["PartType1/Velocities"][()]))

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
