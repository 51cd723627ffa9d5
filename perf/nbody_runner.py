#!/usr/bin/env python3
"""N-body on the GPU: time against force accuracy, treetrav against pytreegrav.

Runs on the device machine (scripts/device/nbody-checks.sh) and writes CSV,
JSON and a markdown summary into --out:

  1. bodies: a Plummer sphere (treetrav generate), positions and masses
     rounded to float32 so that both codes see bit-identical bodies;
  2. treetrav's sweep (perf/bench_nbody): walk (per-body autoropes, group) x
     multipole (monopole, quadrupole) x theta, com-offset opening (group
     walks also barnes-hut), at the
     N-body softening (0.01) and at softening 0; the all-pairs float direct
     sum over every body; each configuration's errors against one direct
     summation in double on a sample of 10,000 bodies;
  3. pytreegrav's CudaAccel on the same bodies at softening 0 (its spline
     softening is not Plummer's; without softening both compute Newton's
     force), timed the same way (warm-up, median of repeats) and measured
     against the same sample and reference;
  4. full N-body steps (treetrav nbody) at the fastest configurations with
     p99 <= 1e-3 and <= 1e-4, at N and at --big bodies;
  5. the energy drift over 1000 block steps of a 100k-body Plummer sphere, in
     each of the --drift-args configurations.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

import h5py
import numpy as np


def run(command, log, timeout=None):
    """Runs a command, echoing it and its output to `log`; returns stdout."""
    print("$ " + " ".join(command), file=log, flush=True)
    started = time.time()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    print(result.stdout, file=log, flush=True)
    print(f"(rc {result.returncode}, {time.time() - started:.1f} s)", file=log, flush=True)
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} failed with {result.returncode}: {result.stdout[-2000:]}")
    return result.stdout


def round_to_float32(path):
    """Positions and masses become float32 values (still stored as float64)."""
    with h5py.File(path, "r+") as f:
        for name in ("/PartType1/Coordinates", "/PartType1/Masses"):
            data = f[name][...]
            f[name][...] = data.astype(np.float32).astype(np.float64)


def relative_errors(approximate, reference):
    """Per sampled body |a - a_exact| / |a_exact|, and the nearest-rank statistics bh-force reports."""
    bodies = reference[:, 0].astype(np.int64)
    exact = reference[:, 1:4]
    diff = np.linalg.norm(approximate[bodies].astype(np.float64) - exact, axis=1)
    relative = np.sort(diff / np.linalg.norm(exact, axis=1))
    rank = lambda p: relative[min(len(relative), max(1, math.ceil(p / 100 * len(relative)))) - 1]
    return {"err_median": rank(50), "err_p99": rank(99), "err_max": relative[-1], "err_mean": relative.mean()}


def pytreegrav_sweep(snapshot, reference_csv, thetas, repeats, out_csv, log):
    """pytreegrav's CudaAccel on the bodies of `snapshot`, without softening."""
    import site

    if os.environ.get("TREETRAV_PY_SITE"):  # where the device script installed the wheels (.pth files too)
        site.addsitedir(os.environ["TREETRAV_PY_SITE"])
    import numpy

    if numpy.lib.NumpyVersion(numpy.__version__) >= "2.5.0":
        numpy.row_stack = numpy.vstack  # removed in numpy 2.5; pytreegrav still calls it
    import pytreegrav
    from pytreegrav.cuda import CudaAccel, is_available

    if not is_available():
        raise RuntimeError("pytreegrav.cuda: no CUDA device available to numba")
    with h5py.File(snapshot, "r") as f:
        pos = f["/PartType1/Coordinates"][...]
        m = f["/PartType1/Masses"][...]
    reference = np.loadtxt(reference_csv, delimiter=",", skiprows=1)
    rows = []
    started = time.time()
    tree = pytreegrav.ConstructTree(pos, m)  # first call: numba compiles the build
    compile_and_build = time.time() - started
    builds = []
    for _ in range(repeats):
        started = time.time()
        tree = pytreegrav.ConstructTree(pos, m)
        builds.append(time.time() - started)
    started = time.time()
    accel = CudaAccel(tree)  # packs and uploads the tree
    upload = time.time() - started
    print(f"pytreegrav {pytreegrav.__file__}: tree build (CPU, numba) first {compile_and_build:.2f} s, then "
          f"median {np.median(builds):.3f} s; CudaAccel pack+upload {upload:.3f} s", file=log, flush=True)
    for theta in thetas:
        accel(pos, G=1.0, theta=theta)  # warm-up (the first compiles the kernel)
        seconds = []
        for _ in range(repeats):
            started = time.time()
            a = accel(pos, G=1.0, theta=theta)
            seconds.append(time.time() - started)
        row = {"code": "pytreegrav CudaAccel", "theta": theta, "forces_ms": 1e3 * float(np.median(seconds)),
               "tree_build_cpu_ms": 1e3 * float(np.median(builds)), "upload_ms": 1e3 * upload}
        row.update(relative_errors(a, reference))
        rows.append(row)
        print(f"pytreegrav theta {theta}: {row['forces_ms']:.1f} ms, p99 {row['err_p99']:.2e}", file=log, flush=True)
    with open(out_csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def run_phase(name, action, summary, skip, save, log, deadline=None):
    """Runs one phase; a failure is recorded and the next phases still run. A
    phase that would start after `deadline` (time.time()) is recorded as skipped."""
    if name in skip:
        return
    if deadline is not None and time.time() > deadline:
        summary.setdefault("skipped_for_time", []).append(name)
        save()
        return
    started = time.time()
    try:
        action()
    except Exception as error:
        print(f"phase {name} failed: {error!r}", file=log, flush=True)
        summary[f"{name}_error"] = repr(error)
    summary.setdefault("seconds", {})[name] = time.time() - started
    save()


def read_sweep(path, label):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["label"] == label]


def fastest(rows, bound):
    """The tree configuration with the least total time at p99 <= bound."""
    # (nbody has no unpacked groups)
    ok = [r for r in rows if r["walk"] != "direct-all-pairs" and not (r["walk"] == "group" and r["packed"] == "0")
          and float(r["err_p99"]) <= bound]
    return min(ok, key=lambda r: float(r["total_ms"])) if ok else None


def nbody_step(treetrav, backend, config, bodies_args, steps, softening, work, name, log):
    """Per-step timings of a treetrav nbody run in `config` (a sweep row)."""
    timings = os.path.join(work, f"{name}.json")
    run([treetrav, "nbody", "--backend", backend, *bodies_args, "--dt", "0.001", "--steps", str(steps),
         "--softening", str(softening), "--theta", config["theta"], "--multipole", config["multipole"],
         "--opening", config["opening"], "--strategy", config["walk"], "--potential-theta", config["theta"],
         "--leaf-size", config["leaf_size"], *(["--group-size", config["group_size"]] if config["walk"] == "group" else []),
         "--quiet", "-o", os.path.join(work, name), "--timings", timings], log, timeout=900)
    with open(timings) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treetrav", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--out", required=True, help="results: sweep.csv, pytreegrav.csv, summary.json, runner.log")
    parser.add_argument("--work", required=True, help="scratch (bodies, run directories): not copied back")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("-n", type=int, default=1000000)
    parser.add_argument("--big", type=int, default=10000000, help="bodies of the large run (0: none)")
    parser.add_argument("--thetas", default="0.2 0.25 0.3 0.35 0.4 0.5 0.6 0.7 0.8")
    parser.add_argument("--classic-thetas", default="0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.65 0.7",
                        help="group walks under the barnes-hut criterion")
    parser.add_argument("--pytreegrav-thetas", default="0.3 0.4 0.5 0.6 0.7 0.8 1.0")
    parser.add_argument("--repeats", type=int, default=3)
    drift_common = ("--plummer 100000 --seed 2 --dt 0.0078125 --steps 1000 --softening 0.01 --strategy group "
                    "--multipole quadrupole --opening com-offset --potential-theta 0 --snapshot-every 100")
    parser.add_argument("--drift-args", default=f"{drift_common} --eta 0.025 --max-bin 4 --theta 0.4;"
                        f"{drift_common} --eta 0.02 --max-bin 5 --theta 0.3",
                        help="';'-separated treetrav nbody configurations of the drift runs")
    parser.add_argument("--skip", default="", help="phases to leave out: sweep steps drift pytreegrav variants big")
    parser.add_argument("--chosen", help="a previous run's summary.json: its chosen configurations (for --skip sweep)")
    args = parser.parse_args()
    skip = set(args.skip.replace(",", " ").split())
    out, work = args.out, args.work
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(out, "runner.log"), "a")
    summary = {"n": args.n}
    if args.chosen:
        with open(args.chosen) as f:
            summary["chosen"] = json.load(f)["chosen"]
    sweep_csv = os.path.join(out, "sweep.csv")
    snapshot = os.path.join(work, "plummer.h5")
    label = f"plummer-{args.n}"

    def save():
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1, default=str)

    def phase(name, action):
        run_phase(name, action, summary, skip, save, log)

    run([args.treetrav, "generate", "--dist", "plummer", "-n", str(args.n), "--seed", "1", "-o", snapshot], log)
    round_to_float32(snapshot)
    thetas = args.thetas.split()
    bench = [args.bench, "--snapshot", snapshot, "--repeats", str(args.repeats), "--out", sweep_csv]

    # In order of what the issue asks first, so that a run cut short keeps the most.
    def sweep():
        run([*bench, "--softening", "0.01", "--walks", "group", "autoropes", "--multipoles", "quadrupole",
             "monopole", "--openings", "com-offset", "--thetas", *thetas, "--direct-all", "--label",
             label + "-eps0.01"], log, timeout=900)
        # The classic criterion for the group walks, finer around p99 = 1e-3.
        run([*bench, "--softening", "0.01", "--walks", "group", "--multipoles", "quadrupole", "monopole",
             "--openings", "barnes-hut", "--thetas", *args.classic_thetas.split(), "--label", label + "-eps0.01"],
            log, timeout=600)
        rows = read_sweep(sweep_csv, label + "-eps0.01")
        summary["chosen"] = {"1e-3": fastest(rows, 1e-3), "1e-4": fastest(rows, 1e-4)}

    def steps():
        for bound, config in summary.get("chosen", {}).items():
            if config is not None:
                summary[f"step_{bound}"] = nbody_step(args.treetrav, args.backend, config, ["--ics", snapshot], 20,
                                                      0.01, work, f"nbody-{args.n}-p99-{bound}", log)

    def drift():
        summary["drift"] = []
        for index, configuration in enumerate(args.drift_args.split(";")):
            timings = os.path.join(work, f"nbody-drift-100k-{index}.json")
            run([args.treetrav, "nbody", "--backend", args.backend, *configuration.split(), "--quiet", "-o",
                 os.path.join(work, f"drift-{index}"), "--timings", timings], log, timeout=900)
            with open(timings) as f:
                summary["drift"].append(json.load(f))
            save()

    def comparison():
        run([*bench, "--softening", "0", "--walks", "group", "autoropes", "--multipoles", "quadrupole", "monopole",
             "--openings", "com-offset", "--thetas", *thetas, "--label", label + "-eps0", "--reference-out",
             os.path.join(work, "reference-eps0.csv")], log, timeout=900)
        summary["pytreegrav"] = pytreegrav_sweep(snapshot, os.path.join(work, "reference-eps0.csv"),
                                                 [float(t) for t in args.pytreegrav_thetas.split()], args.repeats,
                                                 os.path.join(out, "pytreegrav.csv"), log)

    def variants():
        # Group and leaf sizes around the defaults (64, 8); groups without packing.
        for group, leaf, extra in (("32", "8", []), ("64", "16", []), ("32", "16", []), ("64", "8", ["--unpacked"])):
            run([*bench, "--softening", "0.01", "--walks", "group", "--multipoles", "quadrupole", "--openings",
                 "com-offset", "--thetas", "0.3", "0.4", "0.5", "0.6", "--group-size", group, "--leaf-size", leaf,
                 *extra, "--label", label + "-eps0.01"], log, timeout=600)

    def big():
        chosen = summary.get("chosen", {})
        for bound, config in chosen.items():
            if config is None:
                continue
            run([args.bench, "--plummer", str(args.big), "--seed", "5", "--softening", "0.01", "--walks",
                 config["walk"], "--multipoles", config["multipole"], "--openings", config["opening"], "--thetas",
                 config["theta"], "--leaf-size", config["leaf_size"], "--group-size", config["group_size"] or "64",
                 "--repeats", "2", "--out", sweep_csv, "--label", f"plummer-{args.big}-eps0.01"],
                log, timeout=900)
        if chosen.get("1e-3") is not None:
            summary[f"step_{args.big}"] = nbody_step(args.treetrav, args.backend, chosen["1e-3"],
                                                     ["--plummer", str(args.big), "--seed", "5"], 5, 0.01, work,
                                                     f"nbody-{args.big}-p99-1e-3", log)

    phase("sweep", sweep)
    phase("steps", steps)
    phase("drift", drift)
    phase("pytreegrav", comparison)
    phase("variants", variants)
    if args.big > 0:
        phase("big", big)
    print(json.dumps({k: v for k, v in summary.items() if k != "pytreegrav"}, indent=1, default=str)[:6000])


if __name__ == "__main__":
    sys.exit(main())
