#!/usr/bin/env python3
"""Tables and the time-against-accuracy plot from perf/nbody_runner.py's output.

    plot_nbody_accuracy.py RESULTS_DIR     (holding sweep.csv, pytreegrav.csv, summary.json)

Writes RESULTS_DIR/curve.md (one table per input: every configuration's
times and errors, and per curve the fastest time at p99 <= 1e-3 and <= 1e-4)
and RESULTS_DIR/curve.png (time of tree + moments + forces against the 99th
percentile relative force error, log-log; the all-pairs direct sum and
pytreegrav as points and a curve). Needs matplotlib (Agg backend).
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def curve_name(row):
    if row["walk"] == "direct-all-pairs":
        return "direct sum (all pairs, float)"
    walk = "group walk" if row["walk"] == "group" else f"per-body walk ({row['walk']})"
    extra = ""
    if row["walk"] == "group" and (row["group_size"] != "64" or row["packed"] != "1" or row["leaf_size"] != "8"):
        extra = f", group {row['group_size']}{'' if row['packed'] == '1' else ' unpacked'}, leaf {row['leaf_size']}"
    elif row["leaf_size"] != "8":
        extra = f", leaf {row['leaf_size']}"
    return f"{walk}, {row['multipole']}, {row['opening']}{extra}"


def fastest_at(rows, bound):
    ok = [r for r in rows if float(r["err_p99"]) <= bound]
    return min(ok, key=lambda r: float(r["total_ms"])) if ok else None


def main():
    directory = sys.argv[1]
    sweep = read(os.path.join(directory, "sweep.csv"))
    pytreegrav = read(os.path.join(directory, "pytreegrav.csv"))
    lines = []
    labels = sorted({r["label"] for r in sweep})
    for label in labels:
        rows = [r for r in sweep if r["label"] == label]
        lines.append(f"### {label} ({rows[0]['bodies']} bodies, softening {rows[0]['softening']}, {rows[0]['device']})\n")
        lines.append("| configuration | theta | tree ms | moments ms | quadrupoles ms | forces ms | total ms | "
                     "median | p99 | max |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in sorted(rows, key=lambda r: (curve_name(r), -float(r["theta"]))):
            lines.append(f"| {curve_name(r)} | {r['theta']} | {float(r['tree_ms']):.2f} | {float(r['moments_ms']):.2f} | "
                         f"{float(r['quadrupoles_ms']):.2f} | {float(r['forces_ms']):.2f} | {float(r['total_ms']):.2f} | "
                         f"{float(r['err_median']):.2e} | {float(r['err_p99']):.2e} | {float(r['err_max']):.2e} |")
        lines.append("")
        lines.append("Fastest per curve at a given 99th-percentile error (tree + moments + forces):\n")
        lines.append("| curve | p99 <= 1e-3 | p99 <= 1e-4 |")
        lines.append("| --- | --- | --- |")
        for name in sorted({curve_name(r) for r in rows}):
            cells = []
            for bound in (1e-3, 1e-4):
                best = fastest_at([r for r in rows if curve_name(r) == name], bound)
                cells.append(f"{float(best['total_ms']):.2f} ms (theta {best['theta']}, p99 {float(best['err_p99']):.1e})"
                             if best else "not reached")
            lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
        lines.append("")
    if pytreegrav:
        lines.append("### pytreegrav CudaAccel (monopole, its own opening criterion), same bodies, softening 0\n")
        lines.append("| theta | forces ms (CudaAccel call) | tree build ms (CPU) | pack+upload ms | median | p99 | max |")
        lines.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in pytreegrav:
            lines.append(f"| {r['theta']} | {float(r['forces_ms']):.1f} | {float(r['tree_build_cpu_ms']):.0f} | "
                         f"{float(r['upload_ms']):.0f} | {float(r['err_median']):.2e} | {float(r['err_p99']):.2e} | "
                         f"{float(r['err_max']):.2e} |")
        lines.append("")
    with open(os.path.join(directory, "curve.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

    figure, axes = plt.subplots(1, max(1, len(labels)), figsize=(7 * max(1, len(labels)), 5.5), squeeze=False)
    for axis, label in zip(axes[0], labels):
        rows = [r for r in sweep if r["label"] == label]
        for name in sorted({curve_name(r) for r in rows}):
            points = sorted(((float(r["err_p99"]), float(r["total_ms"])) for r in rows if curve_name(r) == name))
            style = "*" if name.startswith("direct") else "o-"
            axis.loglog([p[0] for p in points], [p[1] for p in points], style, label=name, markersize=4)
        if label.endswith("eps0") and pytreegrav:
            points = sorted((float(r["err_p99"]), float(r["forces_ms"])) for r in pytreegrav)
            axis.loglog([p[0] for p in points], [p[1] for p in points], "s--", label="pytreegrav CudaAccel (forces only)")
        for bound in (1e-3, 1e-4):
            axis.axvline(bound, color="grey", linewidth=0.5)
        axis.set_xlabel("99th percentile relative force error")
        axis.set_ylabel("tree + moments + forces (ms)")
        axis.set_title(f"{label} ({rows[0]['device']})", fontsize=9)
        axis.legend(fontsize=6)
        axis.grid(True, which="both", linewidth=0.2)
    figure.tight_layout()
    figure.savefig(os.path.join(directory, "curve.png"), dpi=120)
    summary_path = os.path.join(directory, "summary.json")
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            summary = json.load(f)
        print(json.dumps({k: summary[k] for k in summary if k.startswith("step") or k == "chosen"}, indent=1)[:3000])


if __name__ == "__main__":
    main()
