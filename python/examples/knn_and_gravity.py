"""A short tour of treetrav from Python: nearest neighbours the scipy way,
radius searches and pair counts, brute force at high dimension, and
Barnes-Hut gravity with a few leapfrog steps. Runs on the CPU build in a few
seconds; on a CUDA build, pass --backend cuda (and --torch for GPU arrays).

    python python/examples/knn_and_gravity.py [--backend cuda] [--torch]
"""

import argparse
import time

import numpy as np

import treetrav
from treetrav import nbody

parser = argparse.ArgumentParser()
parser.add_argument("--backend", default=None, help=f"one of {treetrav.backends()}")
parser.add_argument("--torch", action="store_true", help="GPU arrays from PyTorch (CUDA build)")
parser.add_argument("--n", type=int, default=200_000, help="data points (queries: half as many)")
args = parser.parse_args()

rng = np.random.default_rng(0)
data = rng.random((args.n, 3), dtype=np.float32)
queries = rng.random((args.n // 2, 3), dtype=np.float32)
if args.torch:
    import torch

    data, queries = torch.from_numpy(data).cuda(), torch.from_numpy(queries).cuda()

# 1. k nearest neighbours: cKDTree's interface, the answers of scipy.
tree = treetrav.KDTree(data, backend=args.backend)
start = time.perf_counter()
distances, indices = tree.query(queries, k=10)
print(f"{tree}: 10 neighbours of {len(queries)} points in {time.perf_counter() - start:.3f} s;"
      f" {type(indices).__module__}.{type(indices).__name__} {tuple(indices.shape)}")
if not args.torch:
    import scipy.spatial

    reference = scipy.spatial.cKDTree(data).query(queries, k=10)[1]
    print(f"  equal to scipy's cKDTree: {np.mean(indices == reference):.6f} of the indices")

# 2. Radius searches and pair counts.
counts = tree.query_ball_point(queries[:5], r=0.02, return_length=True)
print("points within 0.02 of the first 5 queries:", counts.tolist())
print("pairs within 0.01 and 0.02:",
      tree.count_neighbors(treetrav.KDTree(queries, backend=args.backend), [0.01, 0.02]))

# 3. Brute force at a dimension trees do not help with.
embeddings = rng.standard_normal((20_000, 128), dtype=np.float32)
d, i = treetrav.knn_brute(embeddings, embeddings[:1000], k=5, backend=args.backend)
print("brute force, d = 128: self is the nearest of each:", bool(np.all(np.asarray(i)[:, 0] == np.arange(1000))))

# 4. Barnes-Hut gravity and a few leapfrog steps of a Plummer sphere.
n = args.n // 10
radius = 1.0 / np.sqrt(rng.random(n) ** (-2.0 / 3.0) - 1.0)
direction = rng.standard_normal((n, 3))
pos = radius[:, None] * direction / np.linalg.norm(direction, axis=1)[:, None]
vel = np.zeros_like(pos)
masses = np.full(n, 1.0 / n)
force = dict(theta=0.5, softening=0.01, multipole="quadrupole", backend=args.backend)
acc = treetrav.bh_accelerations(pos, masses, **force)
print(f"accelerations of {n} bodies: shape {acc.shape}, |a| median {np.median(np.linalg.norm(acc, axis=1)):.3f}")
pos, vel = nbody.leapfrog(pos, vel, masses, dt=1e-3, steps=5, **force)
print(f"after 5 leapfrog steps: mean |v| = {np.mean(np.linalg.norm(vel, axis=1)):.4f}")
