"""The last snapshot of an N-body run against another run's (the device
scripts' check of several ranks against one): the largest difference of the
positions, velocities and potentials over the largest value, 0 when every
value is identical."""
import glob
import os

import h5py
import numpy as np


def difference(reference_run, run):
    last = sorted(glob.glob(reference_run + "/snapshot_*.h5"))[-1]
    worst = 0.0
    with h5py.File(last) as a, h5py.File(run + "/" + os.path.basename(last)) as b:
        for key in ("Coordinates", "Velocities", "Potentials"):
            x, y = a["PartType1/" + key][()], b["PartType1/" + key][()]
            if not np.array_equal(x, y):
                worst = max(worst, float(np.abs(x - y).max() / np.abs(x).max()))
    return worst


def described(reference_run, run):
    worst = difference(reference_run, run)
    return "identical to 1 rank" if worst == 0 else f"differs from 1 rank by {worst:.2e}"
