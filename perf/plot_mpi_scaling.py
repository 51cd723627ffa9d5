#!/usr/bin/env python3
"""Weak- and strong-scaling efficiency of the distributed kNN against GPUs,
from scripts/device/mpi-scaling.sh's CSVs (one curve per CSV, labelled by
the part of its name before "-knn-scaling.csv"). The measure is search_s
where the CSV has it (the searches alone; over several ranks the distributed
call), else traverse_s.
   plot_mpi_scaling.py OUT.png PER_GPU STRONG CSV..."""
import csv
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out, per_gpu, strong = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fig, (weak_axes, strong_axes) = plt.subplots(1, 2, figsize=(10, 4))
for number, path in enumerate(sys.argv[4:]):
    color = f"C{number}"
    rows = list(csv.DictReader(open(path)))
    column = "search_s" if "search_s" in rows[0] else "traverse_s"

    def median(p, n):
        values = [float(r[column]) for r in rows if int(r["gpus"]) == p and int(r["n_reference"]) == n]
        return statistics.median(values) if values else None

    gpus = sorted({int(r["gpus"]) for r in rows})
    label = f"{Path(path).name.replace('-knn-scaling.csv', '')} ({column})"
    t1 = median(1, per_gpu)
    weak = [(p, t1 / median(p, p * per_gpu)) for p in gpus if median(p, p * per_gpu)]
    weak_axes.plot(*zip(*weak), marker="o", color=color, label=label)
    s1 = median(1, strong)
    if s1:
        speedup = [(p, s1 / median(p, strong) / p) for p in gpus if median(p, strong)]
        strong_axes.plot(*zip(*speedup), marker="o", color=color, label=label)
for axes, title, target in ((weak_axes, f"weak: {per_gpu:,} / {per_gpu:,} per GPU", {2: 0.9, 4: 0.85}),
                            (strong_axes, f"strong: {strong:,} / {strong:,}", {4: 0.8})):
    axes.plot(list(target), list(target.values()), "k*", markersize=12, label="issue 32's targets")
    axes.set_title(f"kNN k = 10, {title}")
    axes.set_xlabel("GPUs (H200)")
    axes.set_ylabel("parallel efficiency")
    axes.set_xticks([1, 2, 4])
    axes.set_ylim(0, 1.6)
    axes.axhline(1, color="grey", linewidth=0.5)
    axes.grid(alpha=0.3)
weak_axes.legend(fontsize=7)
strong_axes.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out, dpi=120)
print(f"wrote {out}")
