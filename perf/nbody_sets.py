#!/usr/bin/env python3
"""N-body forces and steps on three sets of bodies: time against force accuracy.

Runs on the device machine (scripts/device/nbody-sets.sh) and writes CSV and
JSON into --out. The sets (treetrav generate, positions and masses rounded
to float32 so that every code sees the same bodies):

  plummer        the Plummer sphere (Henon units)
  hernquist      a galaxy model: a Hernquist sphere, a 1/r cusp (Henon units)
  clustered-box  a Soneira-Peebles hierarchy of clumps in the unit cube

Phases, in order of what issue 35 asks first (a run cut short keeps the most):

  sweep       perf/bench_nbody on every set: the group walk with quadrupoles
              under each criterion (relative: --alphas; com-offset and
              barnes-hut: --thetas); each configuration's errors against a
              direct sum in double on a sample of 10,000 bodies, its
              interactions a body and flop rate;
  choose      per criterion, the one setting (alpha or theta) that keeps p99
              <= 1e-3 on every set at the least summed time;
  steps       treetrav nbody at the relative criterion's chosen setting on
              every set: the median full step (tree, moments, forces, kicks
              and drift), and one run counting its interactions;
  pytreegrav  pytreegrav's CudaAccel on the same bodies without softening,
              beside treetrav's sweep at softening 0 against one reference;
  big         10M-body Plummer sphere: the sweep's chosen setting, forces and
              steps;
  drift       energy drift over 1000 block steps of a 100k-body Hernquist
              sphere at the chosen setting;
  pytreegrav  (above) last: the longest.
"""
import argparse
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbody_runner import pytreegrav_sweep, round_to_float32, run, run_phase  # noqa: E402

# Softening per set: Henon units for the spheres (their scale radii ~0.3-0.6),
# a tenth of the mean spacing of 1M bodies for the unit box.
SOFTENING = {"plummer": 0.01, "hernquist": 0.01, "clustered-box": 0.001}


def read_rows(path, labels):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["label"] in labels]


def setting_of(row):
    return float(row["alpha"]) if row["opening"] == "relative" else float(row["theta"])


def choose(rows, sets, bound):
    """Per criterion: the setting with p99 <= bound on every set, least summed total time
    (none meeting it: "<criterion>-closest", the setting of the least worst p99)."""
    chosen = {}
    for opening in sorted({r["opening"] for r in rows}):
        by_setting = {}
        for r in rows:
            if r["opening"] == opening:
                by_setting.setdefault(setting_of(r), {})[r["label"].split("@")[0]] = r
        best = None
        complete = {k: v for k, v in by_setting.items() if set(v) == set(sets)}
        if complete:
            closest = min(complete, key=lambda k: max(float(r["err_p99"]) for r in complete[k].values()))
            chosen[opening + "-closest"] = {"setting": closest, "worst_p99": max(
                float(r["err_p99"]) for r in complete[closest].values())}
        for setting, per_set in complete.items():
            if any(float(r["err_p99"]) > bound for r in per_set.values()):
                continue
            total = sum(float(r["total_ms"]) for r in per_set.values())
            if best is None or total < best[1]:
                best = (setting, total, per_set)
        if best is not None:
            chosen[opening] = {"setting": best[0], "summed_total_ms": best[1],
                               "sets": {s: {k: best[2][s][k] for k in ("total_ms", "forces_ms", "err_p99",
                                                                      "cell_interactions", "body_interactions",
                                                                      "force_gflops", "fp32_fraction")}
                                        for s in sets}}
    return chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treetrav", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", required=True, help="scratch (bodies, run directories): not copied back")
    parser.add_argument("-n", type=int, default=1000000)
    parser.add_argument("--sets", default="plummer hernquist clustered-box")
    parser.add_argument("--alphas", default="0.00025 0.0005 0.001 0.00125 0.0015 0.002 0.003 0.004 0.006")
    parser.add_argument("--thetas", default="0.3 0.35 0.4 0.45 0.5 0.55 0.6")
    parser.add_argument("--openings", default="relative com-offset barnes-hut")
    parser.add_argument("--pytreegrav-thetas", default="0.3 0.4 0.5 0.6 0.7")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--refits", default="0",
                        help="treetrav nbody --refit values for the steps, by commas or spaces (each on every set); the last one also "
                             "for the big set and the drift")
    parser.add_argument("--big", type=int, default=10000000)
    parser.add_argument("--budget", type=float, default=1e9, help="seconds: phases that would start later are skipped")
    parser.add_argument("--skip", default="", help="phases to leave out")
    parser.add_argument("--chosen", help="a previous run's summary.json (for --skip sweep)")
    args = parser.parse_args()
    started = time.time()
    skip = set(args.skip.replace(",", " ").split())
    sets = args.sets.split()
    out, work = args.out, args.work
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(out, "sets.log"), "a")
    summary = {"n": args.n, "sets": sets, "softening": {s: SOFTENING[s] for s in sets}}
    if args.chosen:
        with open(args.chosen) as f:
            summary["chosen"] = json.load(f)["chosen"]
    sweep_csv = os.path.join(out, "sets-sweep.csv")

    def save():
        with open(os.path.join(out, "sets-summary.json"), "w") as f:
            json.dump(summary, f, indent=1, default=str)

    def phase(name, action):
        run_phase(name, action, summary, skip, save, log, deadline=started + args.budget)

    snapshots = {}
    for s in sets:
        snapshots[s] = os.path.join(work, f"{s}-{args.n}.h5")
        if not os.path.exists(snapshots[s]):
            run([args.treetrav, "generate", "--dist", s, "-n", str(args.n), "--seed", "1", "-o", snapshots[s]], log)
            round_to_float32(snapshots[s])

    def bench(s, extra, label):
        run([args.bench, "--snapshot", snapshots[s], "--repeats", str(args.repeats), "--out", sweep_csv,
             "--walks", "group", "--multipoles", "quadrupole", "--label", label, *extra], log, timeout=900)

    def sweep():
        for s in sets:
            for opening in args.openings.split():
                values = ["--alphas", *args.alphas.split()] if opening == "relative" else \
                    ["--thetas", *args.thetas.split()]
                bench(s, ["--softening", str(SOFTENING[s]), "--openings", opening, *values], f"{s}@{args.n}")
        rows = read_rows(sweep_csv, {f"{s}@{args.n}" for s in sets})
        summary["chosen"] = choose(rows, sets, 1e-3)

    refits = args.refits.replace(",", " ").split()

    def step(s, snapshot, config, name, steps, count=False, refit=None):
        refit = refits[-1] if refit is None else refit
        timings = os.path.join(work, f"{name}.json")
        opening = config["opening"]
        setting = ["--alpha", str(config["setting"])] if opening == "relative" else ["--theta", str(config["setting"])]
        run([args.treetrav, "nbody", "--backend", "cuda", "--ics", snapshot, "--dt", "0.0005", "--steps", str(steps),
             "--softening", str(SOFTENING[s]), "--multipole", "quadrupole", "--opening", opening, *setting,
             "--strategy", "group", "--potential-theta", "0.5", "--snapshot-every", "0", "--quiet", "--refit", refit,
             *(["--count-interactions"] if count else []), "-o", os.path.join(work, name), "--timings", timings],
            log, timeout=900)
        with open(timings) as f:
            return json.load(f)

    def relative_choice():
        chosen = summary["chosen"]
        return chosen["relative"] if "relative" in chosen else chosen["relative-closest"]

    def steps():
        chosen = relative_choice()
        config = {"opening": "relative", "setting": chosen["setting"]}
        summary["steps"] = {}
        for refit in refits:
            # Without refits under the old key; with them, by their setting.
            key = "steps" if float(refit) == 0 else f"steps_refit_{refit}"
            summary.setdefault(key, {})
            for s in sets:
                summary[key][s] = step(s, snapshots[s], config, f"step-{s}-refit{refit}", args.steps, refit=refit)
                save()
        summary["steps_counted"] = step(sets[0], snapshots[sets[0]], config, f"step-{sets[0]}-counted",
                                        max(2, args.steps // 4), count=True)

    def comparison():
        summary["pytreegrav"] = {}
        for s in sets:
            reference = os.path.join(work, f"reference-{s}-eps0.csv")
            bench(s, ["--softening", "0", "--openings", "relative", "--alphas", *args.alphas.split(),
                      "--reference-out", reference], f"{s}@{args.n}-eps0")
            bench(s, ["--softening", "0", "--openings", "com-offset", "--thetas", *args.thetas.split()],
                  f"{s}@{args.n}-eps0")
            summary["pytreegrav"][s] = pytreegrav_sweep(
                snapshots[s], reference, [float(t) for t in args.pytreegrav_thetas.split()], args.repeats,
                os.path.join(out, f"pytreegrav-{s}.csv"), log)
            save()

    def big():
        chosen = relative_choice()
        path = os.path.join(work, f"plummer-{args.big}.h5")
        run([args.treetrav, "generate", "--dist", "plummer", "-n", str(args.big), "--seed", "5", "-o", path], log)
        round_to_float32(path)
        run([args.bench, "--snapshot", path, "--repeats", "2", "--out", sweep_csv, "--walks", "group",
             "--multipoles", "quadrupole", "--openings", "relative", "--alphas", str(chosen["setting"]),
             "--softening", "0.01", "--label", f"plummer@{args.big}"], log, timeout=900)
        summary["step_big"] = step("plummer", path, {"opening": "relative", "setting": chosen["setting"]},
                                   f"step-plummer-{args.big}", 5)

    def drift():
        chosen = relative_choice()
        path = os.path.join(work, "hernquist-100000.h5")
        run([args.treetrav, "generate", "--dist", "hernquist", "-n", "100000", "--seed", "2", "-o", path], log)
        # The last refit setting under "drift"; without refits too when it has them.
        for refit in dict.fromkeys(["0", refits[-1]] if float(refits[-1]) > 0 else [refits[-1]]):
            name = "drift" if refit == refits[-1] else f"drift_refit_{refit}"
            timings = os.path.join(work, f"{name}.json")
            run([args.treetrav, "nbody", "--backend", "cuda", "--ics", path, "--dt", "0.0078125", "--steps", "1000",
                 "--eta", "0.025", "--max-bin", "4", "--softening", "0.01", "--strategy", "group", "--multipole",
                 "quadrupole", "--opening", "relative", "--alpha", str(chosen["setting"]), "--potential-theta", "0",
                 "--refit", refit, "--snapshot-every", "500", "--quiet", "-o", os.path.join(work, name),
                 "--timings", timings], log, timeout=900)
            with open(timings) as f:
                summary[name] = json.load(f)
            save()

    phase("sweep", sweep)
    phase("steps", steps)
    if args.big > 0:
        phase("big", big)
    phase("drift", drift)
    phase("pytreegrav", comparison)
    save()


if __name__ == "__main__":
    main()
