"""Barnes-Hut accelerations from the module on the GPU, timed (an A/B of
two builds runs it once per build on the same bodies):

    python3 perf/python/bench_gravity.py --n 1000000 [--save a.npy] [--compare b.npy]

A Plummer sphere (seeded, radii cut at 30 scale radii), equal masses, CuPy
arrays in and out; the median of --repeats calls after one warm-up, each
call end to end (octree, moments, walk). --save writes the accelerations,
--compare prints the largest difference from a saved run's."""

import argparse
import json
import statistics
import time

import cupy
import numpy as np
import treetrav

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=1_000_000)
parser.add_argument("--repeats", type=int, default=10)
parser.add_argument("--theta", type=float, default=0.5)
parser.add_argument("--save")
parser.add_argument("--compare")
args = parser.parse_args()

rng = np.random.default_rng(args.n)
u = rng.uniform(1e-6, 1.0, args.n)
r = np.minimum(1.0 / np.sqrt(u ** (-2.0 / 3.0) - 1.0), 30.0)
direction = rng.normal(size=(args.n, 3))
direction /= np.linalg.norm(direction, axis=1)[:, None]
pos = cupy.asarray((direction * r[:, None]).astype(np.float32))
masses = cupy.full(args.n, 1.0 / args.n, dtype=cupy.float32)


def call():
    return treetrav.bh_accelerations(pos, masses, theta=args.theta, softening=1e-3,
                                     backend="cuda")


call()
cupy.cuda.Device().synchronize()
times = []
for _ in range(args.repeats):
    t0 = time.perf_counter()
    a = call()
    cupy.cuda.Device().synchronize()
    times.append(time.perf_counter() - t0)
a = cupy.asnumpy(a)
row = {"n": args.n, "theta": args.theta, "ms": 1e3 * statistics.median(times)}
if args.save:
    np.save(args.save, a)
if args.compare:
    b = np.load(args.compare)
    row["largest difference"] = float(np.abs(a - b).max())
    row["identical"] = bool(np.array_equal(a, b))
print(json.dumps(row))
