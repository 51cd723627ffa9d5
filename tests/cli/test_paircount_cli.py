#!/usr/bin/env python3
"""treetrav paircount and the searches' --box as a user runs them.

    /usr/bin/python3 tests/cli/test_paircount_cli.py TREETRAV [MPIEXEC]

- paircount: auto and cross, weighted, periodic or open, log and linear and
  given edges: counts equal a numpy double loop (nearest image in double,
  bins [e_b, e_b+1)), weighted sums within rounding, each strategy the same
  file; xi and RR written in a box (RR the uniform box's expectation);
- with MPIEXEC: 2 and 3 ranks give the counts of one process;
- knn and pc with --box equal a numpy brute force over the 27 images;
- mistakes fail with exit 2, one message naming the option, no output file:
  a point outside the box, an edge beyond L/2, --bins without --range,
  --weights for a file without weights, a radius of L/2.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import itertools
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

TREETRAV = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else None
ENV = dict(os.environ, OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS: {name}")
    else:
        failed += 1
        print(f"FAIL: {name}")
        for line in str(detail).splitlines()[-20:]:
            print(f"    | {line}")


def treetrav(*args, ranks=1):
    command = [TREETRAV, *map(str, args)]
    if ranks > 1:
        command = [MPIEXEC, "--oversubscribe", "-np", str(ranks), *command]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def write_points(path, points, weights=None):
    points = np.asarray(points, dtype=np.float32)
    with h5py.File(path, "w") as f:
        g = f.create_group("Points")
        g.create_dataset("Coordinates", data=points)
        g.attrs["NumPoints"] = np.int64(points.shape[0])
        g.attrs["Dimension"] = np.int32(points.shape[1])
        if weights is not None:
            g.create_dataset("Weights", data=np.asarray(weights, dtype=np.float32))


def pair_distances2(a, b, box):
    d = np.abs(a[:, None, :].astype(np.float64) - b[None, :, :].astype(np.float64))
    if box is not None:
        d = np.minimum(d, np.asarray(box, dtype=np.float32).astype(np.float64) - d)
    return (d * d).sum(axis=2)


def brute_counts(a, b, edges, box, auto, wa=None, wb=None):
    d2 = pair_distances2(a, b, box)
    e2 = np.asarray(edges) ** 2
    counts, weighted = [], []
    mask_pairs = np.triu(np.ones(d2.shape, bool), 1) if auto else np.ones(d2.shape, bool)
    products = None if wa is None else np.outer(wa.astype(np.float64), wb.astype(np.float64))
    for lo, hi in zip(e2[:-1], e2[1:]):
        m = mask_pairs & (d2 >= lo) & (d2 < hi)
        counts.append(int(m.sum()))
        if products is not None:
            weighted.append(float(products[m].sum()))
    return np.array(counts), np.array(weighted)


def read_counts(path):
    with h5py.File(path, "r") as f:
        g = f["PairCounts"]
        out = {name: g[name][()] for name in g}
        out.update({f"@{k}": v for k, v in g.attrs.items()})
        return out


rng = np.random.default_rng(7)
L = np.array([50.0, 50.0, 40.0])
with tempfile.TemporaryDirectory() as tmp:
    path = lambda name: os.path.join(tmp, name)
    # Points crowding the faces and corners, with duplicates.
    a = rng.random((900, 3)) * L
    a[::3] = np.where(rng.random((300, 3)) < 0.5, rng.random((300, 3)) * 0.5,
                      L - 1e-3 - rng.random((300, 3)) * 0.5)
    a[5::40] = a[4::40]
    a = a.astype(np.float32)
    b = (rng.random((500, 3)) * L).astype(np.float32)
    wa, wb = rng.uniform(0.5, 2, 900).astype(np.float32), rng.uniform(0.5, 2, 500).astype(np.float32)
    write_points(path("a.h5"), a, wa)
    write_points(path("b.h5"), b, wb)
    write_points(path("plain.h5"), a)

    cases = [
        ("auto periodic log", ["--bins", 10, "--range", "0.2,19.5", "--box", "50,50,40"], True, True),
        ("cross periodic linear", ["--queries", path("b.h5"), "--bins", 6, "--range", "0,20",
                                   "--spacing", "linear", "--box", "50,50,40"], False, True),
        ("auto open given edges", ["--edges", "0,1,2.5,4,8,16,30"], True, False),
        ("cross open log", ["--queries", path("b.h5"), "--bins", 5, "--range", "1,60"], False, False),
    ]
    for name, args, auto, periodic in cases:
        for weighted in (False, True):
            out = path("dd.h5")
            extra = ["--weights"] if weighted else []
            r = treetrav("paircount", "--reference", path("a.h5"), *args, *extra, "-o", out)
            if not check(f"paircount {name}{' weighted' if weighted else ''} runs", r.returncode == 0,
                         r.stderr):
                continue
            got = read_counts(out)
            q, wq = (a, wa) if auto else (b, wb)
            expected, expected_w = brute_counts(q, a, got["Edges"], L if periodic else None, auto,
                                                wq if weighted else None, wa if weighted else None)
            check(f"paircount {name}: counts equal the double loop",
                  np.array_equal(got["Counts"], expected), f"{got['Counts']} vs {expected}")
            if weighted:
                check(f"paircount {name}: weighted counts equal the double loop",
                      np.allclose(got["WeightedCounts"], expected_w, rtol=1e-9, atol=1e-9),
                      f"{got['WeightedCounts']} vs {expected_w}")
            if periodic:
                e = got["Edges"]
                shell = 4 / 3 * np.pi * (e[1:] ** 3 - e[:-1] ** 3) / L.prod()
                n_pairs = 900 * 899 / 2 if auto else 900 * 500
                rr = shell * (got["@WeightPairs"] if weighted else n_pairs)
                dd = got["WeightedCounts"] if weighted else got["Counts"]
                check(f"paircount {name}: RR and xi", np.allclose(got["RR"], rr, rtol=1e-12) and
                      np.allclose(got["Xi"], dd / rr - 1, rtol=1e-9, atol=1e-12),
                      f"{got['RR']} vs {rr}")
            else:
                check(f"paircount {name}: no xi in open space", "Xi" not in got)
            if not weighted and name.startswith("auto periodic"):
                same = True
                for strategy in ("autoropes", "lockstep", "fsm", "regtt", "hybrid"):
                    r = treetrav("paircount", "--reference", path("a.h5"), *args, "--strategy",
                                 strategy, "-o", path("s.h5"))
                    same = same and r.returncode == 0 and np.array_equal(
                        read_counts(path("s.h5"))["Counts"], got["Counts"])
                check("paircount: every strategy the same counts", same, r.stderr)
                if MPIEXEC:
                    for ranks in (2, 3):
                        r = treetrav("paircount", "--reference", path("a.h5"), *args, "-o",
                                     path("m.h5"), ranks=ranks)
                        check(f"paircount on {ranks} ranks equals one process",
                              r.returncode == 0 and
                              np.array_equal(read_counts(path("m.h5"))["Counts"], got["Counts"]),
                              r.stdout + r.stderr)

    # Periodic searches: knn and pc against the 27 images (float images).
    images = np.array(list(itertools.product((-1, 0, 1), repeat=3)), dtype=np.float32)
    box32 = L.astype(np.float32)
    shifted = b[:, None, :] + images[None, :, :] * box32  # (queries, 27, 3), float32
    d2 = ((a[None, None, :, :] - shifted[:, :, None, :]) ** 2).sum(axis=3).min(axis=1)
    r = treetrav("knn", "--reference", path("a.h5"), "--queries", path("b.h5"), "-k", 7, "--box",
                 "50,50,40", "--strategy", "autoropes", "-o", path("knn.h5"))
    if check("knn --box runs", r.returncode == 0, r.stderr):
        with h5py.File(path("knn.h5"), "r") as f:
            idx = f["/Results/NeighborIndices"][()]
        order = np.lexsort((np.broadcast_to(np.arange(900), d2.shape), d2), axis=1)[:, :7]
        check("knn --box equals the images' brute force", np.array_equal(idx, order))
    radius = 7.5
    r = treetrav("pc", "--reference", path("a.h5"), "--queries", path("b.h5"), "-r", radius,
                 "--box", "50,50,40", "-o", path("pc.h5"))
    if check("pc --box runs", r.returncode == 0, r.stderr):
        with h5py.File(path("pc.h5"), "r") as f:
            counts = f["/Results/Counts"][()]
        r2 = np.float32(radius) * np.float32(radius)
        check("pc --box equals the images' brute force",
              np.array_equal(counts, (d2 <= r2).sum(axis=1)))

    # Mistakes: exit 2, a message naming the option, no output.
    outside = a.copy()
    outside[123, 2] = 40.0
    write_points(path("outside.h5"), outside)
    mistakes = [
        ("a point outside the box", ["paircount", "--reference", path("outside.h5"), "--bins", 4,
                                     "--range", "1,10", "--box", "50,50,40"], "--reference: row 123"),
        ("an edge beyond L/2", ["paircount", "--reference", path("a.h5"), "--bins", 4, "--range",
                                "1,25", "--box", "50,50,40"], "--edges"),
        ("--bins without --range", ["paircount", "--reference", path("a.h5"), "--bins", 4],
         "--range"),
        ("the group walk with --queries", ["paircount", "--reference", path("a.h5"), "--queries",
                                           path("b.h5"), "--bins", 4, "--range", "1,10",
                                           "--strategy", "group"], "--strategy group"),
        ("--weights without weights", ["paircount", "--reference", path("plain.h5"), "--bins", 4,
                                       "--range", "1,10", "--weights"], "--weights"),
        ("pc radius of L/2", ["pc", "--reference", path("a.h5"), "--self", "-r", 20, "--box",
                              "50,50,40"], "-r"),
        ("knn query outside the box", ["knn", "--reference", path("a.h5"), "--queries",
                                       path("outside.h5"), "--box", "50,50,40"], "--queries: row 123"),
    ]
    for name, args, words in mistakes:
        out = path("never.h5")
        r = treetrav(*args, "-o", out)
        check(f"refused: {name}", r.returncode == 2 and words in r.stderr and not os.path.exists(out),
              f"exit {r.returncode}: {r.stderr}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
