#!/usr/bin/env python3
"""A bench_paircount.py results.json as a bar chart of seconds per contender
and size (log scale): python3 plot_times.py results.json out.png [title]."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [r for r in json.load(open(sys.argv[1])) if "seconds" in r]
# n: a size (uniform points) or "<size> <shape>"
sizes = sorted({r["n"] for r in rows}, key=lambda n: (isinstance(n, str), str(n) if isinstance(n, str) else n))
fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.2), squeeze=False)
for ax, n in zip(axes[0], sizes):
    mine = [r for r in rows if r["n"] == n]
    names = [r["tool"].replace("treetrav ", "") for r in mine]
    colours = ["tab:gray" if not r["tool"].startswith("treetrav") else
               "tab:green" if "cuda" in r["tool"] else "tab:blue" for r in mine]
    ax.barh(names, [r["seconds"] for r in mine], color=colours)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("seconds (median, end to end)")
    ax.set_title(f"{n:,} points" if isinstance(n, int) else f"{n} points")
    for y, r in enumerate(mine):
        ax.text(r["seconds"], y, f" {r['seconds']:.3g}", va="center", fontsize=8)
fig.suptitle(sys.argv[3] if len(sys.argv) > 3 else "pair counts, 20 log bins 0.1-50, box 1000")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
