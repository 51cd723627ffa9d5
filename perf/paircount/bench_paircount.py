#!/usr/bin/env python3
"""Pair counts in radial bins beside Corrfunc and TreeCorr (issue 34).

    python3 perf/paircount/bench_paircount.py --n 1000000 10000000 --out DIR

N uniform points in a periodic box of side 1000, 20 logarithmic bins from
0.1 to 50, the autocorrelation (each pair of distinct points once): the
treetrav module on the GPU (CuPy arrays in) and on the host cores (OpenMP),
Corrfunc's theory.DD (built from its source package on this machine, every
core, float64 points: the same values as treetrav's float32 ones) and
TreeCorr's NNCorrelation (bin_slop 0: exact; periodic metric; --treecorr-max
points at most, it is the slowest). Same points and the same bin edges for
every contender, in one run; medians of --repeats timed calls after one
warm-up, each call end to end (tree or grid built inside). Counts are
checked equal to Corrfunc's (which counts each pair twice). Writes
results.json and results.md into --out as each result comes in.
"""
import argparse
import json
import os
import statistics
import time

import numpy as np

import treetrav

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, nargs="+", default=[1_000_000])
parser.add_argument("--box", type=float, default=1000.0)
parser.add_argument("--bins", type=int, default=20)
parser.add_argument("--rmin", type=float, default=0.1)
parser.add_argument("--rmax", type=float, default=50.0)
parser.add_argument("--threads", type=int, default=os.cpu_count())
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--treecorr-max", type=int, default=1_000_000)
# treetrav's strategies and leaf sizes (0: the library's); above 2M points
# only the first of each.
parser.add_argument("--strategies", nargs="+", default=["group", "autoropes"])
parser.add_argument("--leafsizes", type=int, nargs="+", default=[0])
# The host backend only up to this many points (its larger runs are long).
parser.add_argument("--host-max", type=int, default=10**12)
# uniform, or clustered: 80% of the points in 2,000 Gaussian clumps of
# widths log-uniform in [2, 20] (wrapped into the box), 20% uniform: many
# more close pairs, and deep, uneven trees.
parser.add_argument("--shapes", nargs="+", default=["uniform"], choices=["uniform", "clustered"])
parser.add_argument("--clustered-max", type=int, default=2_000_000)
parser.add_argument("--out", default=".")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)

rows = []


def record(**row):
    rows.append(row)
    print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("| n | contender | seconds (median) | x Corrfunc | counts |\n|---:|---|---:|---:|---|\n")
        for r in rows:
            base = next((b["seconds"] for b in rows
                         if b["n"] == r["n"] and b["tool"] == "Corrfunc" and "seconds" in b), None)
            speed = f"{base / r['seconds']:.1f}" if base and r.get("seconds") else ""
            f.write(f"| {r['n'] if isinstance(r['n'], str) else format(r['n'], ',')} | {r['tool']} | {r.get('seconds', float('nan')):.4g} | {speed} | "
                    f"{r.get('check', r.get('error', ''))} |\n")


def median_seconds(call, repeats, sync=lambda: None):
    call()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def make_points(n, shape):
    rng = np.random.default_rng(n)
    if shape == "uniform":
        points = rng.random((n, 3)) * args.box
    else:
        centres = rng.random((2000, 3)) * args.box
        widths = np.exp(rng.uniform(np.log(2.0), np.log(20.0), 2000))
        clumped = int(0.8 * n)
        which = rng.integers(0, 2000, clumped)
        points = np.concatenate([centres[which] + rng.normal(size=(clumped, 3)) * widths[which, None],
                                 rng.random((n - clumped, 3)) * args.box])
        points = np.mod(points, args.box)
    points = points.astype(np.float32)
    return np.minimum(points, np.nextafter(np.float32(args.box), np.float32(0)))


edges = treetrav.log_edges(args.rmin, args.rmax, args.bins)
for n, shape in [(n, shape) for shape in args.shapes for n in args.n
                 if shape == "uniform" or n <= args.clustered_max]:
    points = make_points(n, shape)
    n_label = n if shape == "uniform" else f"{n} {shape}"
    x64 = [np.ascontiguousarray(points[:, k], dtype=np.float64) for k in range(3)]
    reference = None

    try:
        from Corrfunc.theory.DD import DD

        def corrfunc():
            return DD(autocorr=1, nthreads=args.threads, binfile=np.asarray(edges), X1=x64[0],
                      Y1=x64[1], Z1=x64[2], periodic=True, boxsize=args.box, verbose=False)

        seconds, out = median_seconds(corrfunc, args.repeats if n <= 2_000_000 else 3)
        reference = np.asarray(out["npairs"], dtype=np.uint64) // 2
        record(n=n_label, tool="Corrfunc", seconds=seconds, threads=args.threads,
               counts=reference.tolist(), check="the reference (ordered pairs / 2)")
    except Exception as error:  # noqa: BLE001 - recorded, the others still run
        record(n=n_label, tool="Corrfunc", error=repr(error))

    def check(counts):
        if reference is None:
            return "no Corrfunc to compare"
        counts = np.asarray(counts, dtype=np.uint64)
        if np.array_equal(counts, reference):
            return "equal to Corrfunc's"
        return f"DIFFER from Corrfunc's in {int((counts != reference).sum())} bins, by {(counts.astype(np.int64) - reference.astype(np.int64)).tolist()}"

    for backend in [b for b in ("cuda", "openmp") if b in treetrav.backends() and
                    (b == "cuda" or n <= args.host_max)]:
        if backend == "cuda":
            import cupy

            data = cupy.asarray(points)
            sync = cupy.cuda.Device().synchronize
        else:
            data, sync = points, (lambda: None)

        small = n <= 2_000_000
        for strategy in args.strategies if small else args.strategies[:1]:
            # The host backend: the first leaf size only (its runs are long).
            for leafsize in args.leafsizes if small and backend == "cuda" else args.leafsizes[:1]:
                def count():
                    return treetrav.paircount(data, edges, boxsize=args.box, backend=backend,
                                              strategy=strategy, leafsize=leafsize or None)

                seconds, out = median_seconds(count, args.repeats if small else 2, sync)
                tool = f"treetrav {backend} {strategy}" + (f" leaf {leafsize}" if leafsize else "")
                record(n=n_label, tool=tool, seconds=seconds, counts=np.asarray(out.counts).tolist(),
                       check=check(out.counts), xi=np.asarray(out.xi).tolist())

    if n <= args.treecorr_max:
        try:
            import treecorr

            catalog = treecorr.Catalog(x=x64[0], y=x64[1], z=x64[2])

            def tc():
                nn = treecorr.NNCorrelation(min_sep=args.rmin, max_sep=args.rmax, nbins=args.bins,
                                            bin_slop=0, metric="Periodic", xperiod=args.box,
                                            yperiod=args.box, zperiod=args.box)
                nn.process(catalog, num_threads=args.threads)
                return nn

            seconds, nn = median_seconds(tc, 1)
            counts = np.rint(nn.npairs).astype(np.uint64)
            record(n=n_label, tool="TreeCorr", seconds=seconds, counts=counts.tolist(),
                   check=check(counts) + ("" if reference is None else
                                          f"; TreeCorr edges {np.asarray(nn.left_edges).tolist()[:2]}..."))
        except Exception as error:  # noqa: BLE001
            record(n=n_label, tool="TreeCorr", error=repr(error))
