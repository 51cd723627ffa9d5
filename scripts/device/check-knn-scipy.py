#!/usr/bin/env python3
"""A kNN results file against scipy's cKDTree on the same inputs (float64
distances of the float32 points): every distance equal within float32
rounding, every index equal where the k-th and (k+1)-th distances differ.
   check-knn-scipy.py REFERENCE.h5 QUERIES.h5 RESULTS.h5 K"""
import sys

import h5py
import numpy as np
from scipy.spatial import cKDTree

reference, queries, results, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
points = h5py.File(reference, "r")["/Points/Coordinates"][()].astype(np.float64)
query = h5py.File(queries, "r")["/Points/Coordinates"][()].astype(np.float64)
with h5py.File(results, "r") as f:
    indices = f["Results/NeighborIndices"][()]
    distances = f["Results/NeighborDistances"][()].astype(np.float64)
expected_d, expected_i = cKDTree(points).query(query, k=k + 1, workers=-1)
close = np.allclose(distances, expected_d[:, :k], rtol=2e-6, atol=1e-5)
# Rows whose neighbours are unambiguous: no tie at any rank up to k + 1.
gaps = np.diff(expected_d, axis=1) > 1e-5 * np.maximum(expected_d[:, 1:], 1)
clear = gaps.all(axis=1)
same = (indices[clear] == expected_i[clear, :k]).all()
print(f"{results}: {len(query)} queries, distances equal to scipy's: {close}; "
      f"indices equal on the {clear.sum()} untied rows: {same}")
sys.exit(0 if close and same else 1)
