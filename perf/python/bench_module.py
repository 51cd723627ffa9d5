#!/usr/bin/env python3
"""The Python module on the GPU beside bench_search and the Python tools a
user would pick instead, on the same data in one run.

The shape of perf/peers/compare.py at --n (1M: reference points filling
[0, 100)^3, queries filling its inscribed sphere, float32), k = 10:
  treetrav numpy    KDTree(backend="cuda").query(numpy): queries copied to the
                    GPU, results (int64 indices, float32 distances) back
  treetrav torch    the same on torch CUDA tensors in and out: no host trip
  treetrav cupy     the same on CuPy arrays
  treetrav openmp   the module's host backend, all cores
  bench_search      perf/bench_search's knn_sorted (--bench-json, run beside)
  copies            the bytes the numpy call moves (queries in, results out),
                    copied alone with torch: what "plus the copies" adds
  scipy             cKDTree(workers=-1), pykdtree (all cores), jztree (JAX)
Medians after warm-ups; answers checked against scipy's on every contender.
Writes results.md and results.json to --out.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from compare import K, all_cpus, jztree_runner, median_ms, shape  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--bench-json", help="bench_search --json of the same data (knn_sorted)")
    parser.add_argument("--data", help="write the reference and query .f32 files here and stop")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    reference, queries, _ = shape(args.n, 1)
    if args.data:
        reference.tofile(os.path.join(args.data, "r.f32"))
        queries.tofile(os.path.join(args.data, "q.f32"))
        return
    all_cpus()
    os.makedirs(args.out, exist_ok=True)
    rows, log = [], open(os.path.join(args.out, "log.txt"), "w")

    def add(tool, phase, ms, note=""):
        rows.append({"tool": tool, "phase": phase, "median_ms": ms, "note": note})
        print(f"{tool:28s} {phase:12s} {ms:10.3f} ms {note}", flush=True)

    import scipy.spatial

    t0 = time.perf_counter()
    ref_tree = scipy.spatial.cKDTree(reference)
    ref_d, ref_i = ref_tree.query(queries, k=K, workers=-1)
    log.write(f"scipy oracle in {time.perf_counter() - t0:.2f} s\n")

    def check(tool, d, i):
        d, i = np.asarray(d), np.asarray(i)
        same = float(np.mean(i == ref_i))
        close = bool(np.allclose(d, ref_d, rtol=1e-5, atol=1e-5))
        note = f"indices equal to scipy's: {same:.6f}; distances within 1e-5: {close}"
        log.write(f"check {tool}: {note}\n")
        return note

    add("scipy cKDTree (16 cores)", "build", median_ms(lambda: scipy.spatial.cKDTree(reference), 1, 3))
    add("scipy cKDTree (16 cores)", "knn", median_ms(lambda: ref_tree.query(queries, k=K, workers=-1), 1, 3))
    try:
        import pykdtree.kdtree as pk

        pt = pk.KDTree(reference)
        add("pykdtree (16 cores)", "build", median_ms(lambda: pk.KDTree(reference), 1, 3))
        d, i = pt.query(queries, k=K)
        add("pykdtree (16 cores)", "knn", median_ms(lambda: pt.query(queries, k=K), 1, 3), check("pykdtree", d, i))
    except Exception as e:
        log.write(f"pykdtree: {type(e).__name__}: {e}\n")

    import treetrav

    log.write(f"treetrav {treetrav.__version__}, backends {treetrav.backends()}\n")
    for backend in [b for b in ("openmp",) if b in treetrav.backends()]:
        tree = treetrav.KDTree(reference, backend=backend)
        add(f"treetrav {backend} (16 cores)", "build",
            median_ms(lambda: treetrav.KDTree(reference, backend=backend), 1, 3))
        d, i = tree.query(queries, k=K)
        add(f"treetrav {backend} (16 cores)", "knn", median_ms(lambda: tree.query(queries, k=K), 2, 5),
            check(f"treetrav {backend}", d, i))
    if "cuda" in treetrav.backends():
        import torch

        tree = treetrav.KDTree(reference, backend="cuda")
        add("treetrav cuda, numpy", "build",
            median_ms(lambda: treetrav.KDTree(reference, backend="cuda"), 2, 7))
        d, i = tree.query(queries, k=K)
        add("treetrav cuda, numpy", "knn", median_ms(lambda: tree.query(queries, k=K), 3, args.repeats),
            check("treetrav cuda numpy", d, i))
        r_t, q_t = torch.from_numpy(reference).cuda(), torch.from_numpy(queries).cuda()
        t_tree = treetrav.KDTree(r_t, backend="cuda")

        def torch_query():
            out = t_tree.query(q_t, k=K)
            torch.cuda.synchronize()
            return out

        d, i = torch_query()
        assert d.is_cuda and i.is_cuda and i.dtype == torch.int64
        add("treetrav cuda, torch", "knn", median_ms(torch_query, 3, args.repeats),
            check("treetrav cuda torch", d.cpu(), i.cpu()))
        add("treetrav cuda, torch", "build",
            median_ms(lambda: (treetrav.KDTree(r_t, backend="cuda"), torch.cuda.synchronize()), 2, 7))
        # The copies the numpy call makes: queries in, indices (int64) and
        # distances (float32) out, to and from pageable numpy memory.
        host_i = np.empty((args.n, K), np.int64)
        host_d = np.empty((args.n, K), np.float32)

        def copies():
            q = torch.from_numpy(queries).cuda()
            torch.from_numpy(host_i).copy_(i)
            torch.from_numpy(host_d).copy_(d)
            torch.cuda.synchronize()
            return q

        add("copies of the numpy call", "copies", median_ms(copies, 3, args.repeats),
            f"{queries.nbytes / 1e6:.0f} MB in, {(host_i.nbytes + host_d.nbytes) / 1e6:.0f} MB out, "
            "into arrays reused")

        def fresh_copies():  # as a call returning new arrays must: their pages are new
            q = torch.from_numpy(queries).cuda()
            torch.from_numpy(np.empty((args.n, K), np.int64)).copy_(i)
            torch.from_numpy(np.empty((args.n, K), np.float32)).copy_(d)
            torch.cuda.synchronize()
            return q

        add("copies of the numpy call", "fresh copies", median_ms(fresh_copies, 3, args.repeats),
            "the same, into new numpy arrays")
        try:
            import cupy

            c_q = cupy.asarray(queries)
            c_tree = treetrav.KDTree(cupy.asarray(reference), backend="cuda")

            def cupy_query():
                out = c_tree.query(c_q, k=K)
                cupy.cuda.Device().synchronize()
                return out

            d, i = cupy_query()
            assert isinstance(i, cupy.ndarray)
            add("treetrav cuda, cupy", "knn", median_ms(cupy_query, 3, args.repeats),
                check("treetrav cuda cupy", cupy.asnumpy(d), cupy.asnumpy(i)))
        except Exception as e:
            log.write(f"cupy: {type(e).__name__}: {e}\n")
    if args.bench_json:
        with open(args.bench_json) as f:
            report = json.load(f)
        for phase in ("build", "knn_sorted"):
            if phase in report.get("phases", {}):
                add("bench_search (C++)", phase, report["phases"][phase]["median_ms"], report.get("device", ""))
    try:
        jz = jztree_runner(reference, queries)
        rnn, inn = jz()
        add("jztree (JAX, GPU)", "end_to_end", median_ms(jz, 2, 7),
            check("jztree", np.asarray(rnn), np.asarray(inn)))
    except Exception as e:
        log.write(f"jztree: {type(e).__name__}: {e}\n")

    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"n": args.n, "k": K, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"Medians in ms, n = {args.n} reference points and queries, k = {K}.\n\n")
        f.write("| tool | phase | ms | check |\n| --- | --- | ---: | --- |\n")
        for r in rows:
            f.write(f"| {r['tool']} | {r['phase']} | {r['median_ms']:.3f} | {r['note']} |\n")
    log.close()


if __name__ == "__main__":
    main()
