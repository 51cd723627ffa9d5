#!/usr/bin/env python3
"""Plots a treetrav nbody run: its drifts against time and a projected density image.

    scripts/plot_nbody.py RUN_DIR [-o OUTPUT_DIR] [--snapshot FILE] [--axis z]

Reads every RUN_DIR/snapshot_NNNNNN.h5 (SWIFT/GADGET layout) and writes
  OUTPUT_DIR/drift.png    relative energy drift, momentum and angular momentum
                          drifts (the /RunMetadata attributes) against /Header Time
  OUTPUT_DIR/density.png  mass surface density of the last snapshot (or --snapshot)
                          projected along --axis, log scale
OUTPUT_DIR defaults to RUN_DIR. Needs h5py, numpy and matplotlib; renders with
the Agg backend, so no display is needed.
"""

import argparse
import pathlib
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # before pyplot: headless, whatever MPLBACKEND says
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

SNAPSHOT_NAME = re.compile(r"snapshot_(\d{6,})\.h5")


def snapshots(run_dir):
    """The run's snapshot files, by step."""
    found = [(int(m.group(1)), path) for path in run_dir.iterdir() if (m := SNAPSHOT_NAME.fullmatch(path.name))]
    return [path for _, path in sorted(found)]


def drift_series(paths):
    """Time and the three drifts of every snapshot that records them."""
    names = ("energy_drift", "momentum_drift", "angular_momentum_drift")
    rows = []
    for path in paths:
        with h5py.File(path, "r") as f:
            metadata = f["RunMetadata"].attrs if "RunMetadata" in f else {}
            if all(name in metadata for name in names):
                rows.append([float(f["Header"].attrs["Time"])] + [float(metadata[name]) for name in names])
    return np.array(rows).reshape(-1, 4)


def plot_drift(series, output):
    figure, (energy, momenta) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    time = series[:, 0]
    energy.plot(time, series[:, 1], marker=".")
    energy.axhline(0, color="grey", linewidth=0.5)
    energy.set_ylabel(r"$(E - E_0) / |E_0|$")
    energy.set_title("Energy drift")
    # Drifts start at exactly 0: a log scale shows the later ones.
    later = time > time[0]
    momenta.semilogy(time[later], np.abs(series[later, 2]), marker=".", label=r"$|P - P_0| / \sum m|v|$")
    momenta.semilogy(time[later], np.abs(series[later, 3]), marker=".",
                     label=r"$|L - L_0| / \sum m|x \times v|$")
    momenta.set_xlabel("time")
    momenta.set_ylabel("drift")
    momenta.legend()
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def plot_density(path, axis, bins, output):
    with h5py.File(path, "r") as f:
        x = f["PartType1/Coordinates"][()]
        m = f["PartType1/Masses"][()]
        time = float(f["Header"].attrs["Time"])
    # About one body per pixel in the core: finer bins would show shot noise.
    bins = bins or int(np.clip(np.sqrt(len(m)), 32, 512))
    plane = [k for k in range(3) if k != "xyz".index(axis)]
    centre = np.average(x, axis=0, weights=m)
    # Frame the inner 90% of the mass: outliers would shrink the core to a dot.
    radius = np.quantile(np.linalg.norm(x - centre, axis=1), 0.9)
    edges = [np.linspace(centre[k] - radius, centre[k] + radius, bins + 1) for k in plane]
    mass, _, _ = np.histogram2d(x[:, plane[0]], x[:, plane[1]], bins=edges, weights=m)
    density = mass / (2 * radius / bins) ** 2
    # Empty pixels at the colour scale's floor (black) rather than off the log scale.
    floor = density[density > 0].min()
    figure, ax = plt.subplots(figsize=(6, 5.2))
    image = ax.imshow(np.maximum(density, floor).T, origin="lower", cmap="magma", interpolation="nearest",
                      extent=[edges[0][0], edges[0][-1], edges[1][0], edges[1][-1]],
                      norm=matplotlib.colors.LogNorm(vmin=floor))
    figure.colorbar(image, ax=ax, label="projected mass density")
    ax.set_xlabel("xyz"[plane[0]])
    ax.set_ylabel("xyz"[plane[1]])
    ax.set_title(f"{path.name}, t = {time:.4g}, {len(m)} bodies")
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=pathlib.Path, help="directory of a treetrav nbody run")
    parser.add_argument("-o", "--output", type=pathlib.Path, help="where the PNGs go (default: RUN_DIR)")
    parser.add_argument("--snapshot", type=pathlib.Path, help="density of this snapshot (default: the last)")
    parser.add_argument("--axis", choices="xyz", default="z", help="projection axis (default: z)")
    parser.add_argument("--bins", type=int, help="pixels per side (default: sqrt(bodies), 32 to 512)")
    args = parser.parse_args()

    paths = snapshots(args.run_dir) if args.run_dir.is_dir() else []
    if not paths:
        sys.exit(f"plot_nbody.py: no snapshot_NNNNNN.h5 in {args.run_dir}")
    output = args.output or args.run_dir
    output.mkdir(parents=True, exist_ok=True)

    series = drift_series(paths)
    if len(series) == 0:
        print("plot_nbody.py: no snapshot records drifts (/RunMetadata); drift.png skipped", file=sys.stderr)
    else:
        plot_drift(series, output / "drift.png")
        print(f"wrote {output / 'drift.png'} ({len(series)} snapshots)")
    plot_density(args.snapshot or paths[-1], args.axis, args.bins, output / "density.png")
    print(f"wrote {output / 'density.png'}")


if __name__ == "__main__":
    main()
