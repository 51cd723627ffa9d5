#!/usr/bin/env python3
"""The README's xi(r) plot: a clustered set in a periodic box (clumps of
Gaussian blobs of many sizes, a Soneira-Peebles-like hierarchy, and a
uniform background), its pair counts by `treetrav paircount --box`, and
xi = DD/RR - 1 against r, beside a uniform set of the same size.

    /usr/bin/python3 perf/paircount/xi_plot.py TREETRAV OUT.png
"""
import os
import subprocess
import sys
import tempfile

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

treetrav, out = sys.argv[1], sys.argv[2]
side, n = 100.0, 50_000
rng = np.random.default_rng(34)


def clustered():
    """Three levels of clumps: 40 centres, each with 8 sub-centres, each
    with points; radii shrinking by 4 per level; a fifth of the points
    uniform; wrapped into the box."""
    centres = rng.random((40, 3)) * side
    sub = (centres[:, None, :] + rng.normal(scale=6.0, size=(40, 8, 3))).reshape(-1, 3)
    m = int(0.8 * n)
    pick = rng.integers(0, len(sub), m)
    points = sub[pick] + rng.normal(scale=1.5, size=(m, 3)) * rng.choice([0.25, 1.0], (m, 1))
    points = np.concatenate([points, rng.random((n - m, 3)) * side])
    return np.mod(points, side).astype(np.float32) % np.float32(side)


def xi(points, tmp, name):
    path = os.path.join(tmp, name + ".h5")
    with h5py.File(path, "w") as f:
        g = f.create_group("Points")
        g.create_dataset("Coordinates", data=points)
        g.attrs["NumPoints"], g.attrs["Dimension"] = np.int64(len(points)), np.int32(3)
    result = os.path.join(tmp, name + "-dd.h5")
    subprocess.run([treetrav, "paircount", "--reference", path, "--bins", "14", "--range", "0.3,20",
                    "--box", f"{side},{side},{side}", "-o", result], check=True)
    with h5py.File(result, "r") as f:
        e = f["/PairCounts/Edges"][()]
        return np.sqrt(e[1:] * e[:-1]), f["/PairCounts/Xi"][()], f["/PairCounts/Counts"][()]


with tempfile.TemporaryDirectory() as tmp:
    r, xi_c, dd_c = xi(clustered(), tmp, "clustered")
    _, xi_u, dd_u = xi((rng.random((n, 3)) * side).astype(np.float32), tmp, "uniform")
fig, ax = plt.subplots(figsize=(5.5, 3.6))
ax.loglog(r, np.clip(xi_c, 1e-4, None), "o-", label="clustered (3-level clumps)")
ax.errorbar(r, np.abs(xi_u) + 1e-4, yerr=1 / np.sqrt(np.maximum(dd_u, 1)), fmt="s--", ms=3,
            label="uniform: |xi| with its Poisson error")
ax.set_xlabel("r"), ax.set_ylabel("xi(r) = DD/RR - 1")
ax.set_title(f"treetrav paircount --box: {n:,} points, box {side:g}", fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("xi clustered:", np.round(xi_c, 3).tolist())
print("xi uniform:", np.round(xi_u, 4).tolist())
