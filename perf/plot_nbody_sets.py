#!/usr/bin/env python3
"""Time against p99 force error on the three N-body sets (perf/nbody_sets.py's CSV).

    plot_nbody_sets.py --sweep SOFTENED.csv [--sweep-eps0 EPS0.csv] [--pytreegrav-dir DIR
                       --pytreegrav-prefix PREFIX] --out PNG

(--sweep-eps0 defaults to --sweep: nbody_sets.py writes both kinds of rows into one file.)

One panel a set: treetrav's group walk with quadrupoles under each opening
criterion (tree, moments and forces of one evaluation), at the set's softening
and, beside pytreegrav's CudaAccel (its force call alone; its tree is built on
the CPU), without softening.
"""
import argparse
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SETS = ("plummer", "hernquist", "clustered-box")
TITLES = {"plummer": "Plummer sphere", "hernquist": "Hernquist sphere (galaxy model)",
          "clustered-box": "clustered box (Soneira-Peebles)"}
STYLE = {"relative": ("tab:red", "o"), "com-offset": ("tab:blue", "s"), "barnes-hut": ("tab:green", "^")}


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def curve(sweep, label, opening):
    picked = [r for r in sweep if r["label"] == label and r["opening"] == opening]
    picked.sort(key=lambda r: float(r["err_p99"]))
    return [float(r["err_p99"]) for r in picked], [float(r["total_ms"]) for r in picked]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep", required=True)
    parser.add_argument("--sweep-eps0")
    parser.add_argument("--pytreegrav-dir")
    parser.add_argument("--pytreegrav-prefix", default="h200-run1-",
                        help="the pytreegrav CSVs are PREFIXpytreegrav-SET.csv")
    parser.add_argument("--title", default="treetrav group walk with quadrupoles on one NVIDIA H200, "
                                           "against pytreegrav on the same bodies")
    parser.add_argument("-n", type=int, default=1000000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    softened = rows(args.sweep)
    eps0 = rows(args.sweep_eps0 or args.sweep)
    figure, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    for axis, name in zip(axes, SETS):
        for opening, (color, marker) in STYLE.items():
            x, y = curve(softened, f"{name}@{args.n}", opening)
            if x:
                axis.plot(x, y, marker=marker, color=color, label=f"treetrav {opening} (softened)")
            x, y = curve(eps0, f"{name}@{args.n}-eps0", opening)
            if x:
                axis.plot(x, y, marker=marker, color=color, linestyle=":", mfc="none",
                          label=f"treetrav {opening}, no softening")
        if args.pytreegrav_dir:
            path = os.path.join(args.pytreegrav_dir, f"{args.pytreegrav_prefix}pytreegrav-{name}.csv")
            if os.path.exists(path):
                peer = rows(path)
                axis.plot([float(r["err_p99"]) for r in peer], [float(r["forces_ms"]) for r in peer], marker="x",
                          color="black", linestyle="--", label="pytreegrav CudaAccel, no softening (forces only)")
        axis.axvline(1e-3, color="grey", linewidth=0.8)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("p99 relative force error (10,000 sampled bodies)")
        axis.set_title(f"{TITLES[name]}, {args.n:,} bodies")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms per force evaluation (tree, moments, forces)")
    axes[0].legend(fontsize=7)
    figure.suptitle(args.title)
    figure.tight_layout()
    figure.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
