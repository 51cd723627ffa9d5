#!/usr/bin/env python3
"""PyTorch brute-force kNN on the points perf/bench_brute exported (--export DIR).

Per dimension: |q|^2 + |r|^2 - 2 q.r from torch.addmm over chunks of queries,
then torch.topk (the usual GEMM + top-k brute force), in float32 (TF32 off,
PyTorch's default for matmul) and, at --tf32-dimensions, with TF32 on. Median of
--repeats runs after a warm-up, CUDA-synchronised. Agreement: the fraction of
treetrav's exact neighbours (brute force, ties by index) that PyTorch returns
for the first 1000 queries. Appends to --out (CSV).

  python3 perf/brute_torch.py --data DIR --dimensions 8,32,128,784 --n-reference 1000000 \
      --n-queries 100000 -k 10 --out torch.csv
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch


def knn(reference, queries, k, chunk):
    reference_norms = (reference * reference).sum(1)
    indices = []
    for start in range(0, queries.shape[0], chunk):
        q = queries[start:start + chunk]
        d2 = torch.addmm(reference_norms, q, reference.T, beta=1.0, alpha=-2.0)
        d2 += (q * q).sum(1, keepdim=True)
        indices.append(torch.topk(d2, k, dim=1, largest=False, sorted=True).indices)
    return torch.cat(indices)


def timed(fn, repeats):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        result = fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--dimensions", default="8,32,128,784")
    parser.add_argument("--n-reference", type=int, default=1000000)
    parser.add_argument("--n-queries", type=int, default=100000)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tf32-dimensions", default="", help="also time these with TF32 on")
    parser.add_argument("--chunk-bytes", type=float, default=16e9, help="bytes of one chunk's distance matrix")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    new = not os.path.exists(args.out)
    with open(args.out, "a") as out:
        if new:
            out.write("dimension,method,ms,agreement_first_1000\n")
        for d in [int(x) for x in args.dimensions.split(",")]:
            reference = torch.from_numpy(
                np.fromfile(f"{args.data}/reference-{d}.f32", dtype=np.float32).reshape(args.n_reference, d)
            ).to(device)
            queries = torch.from_numpy(
                np.fromfile(f"{args.data}/queries-{d}.f32", dtype=np.float32).reshape(args.n_queries, d)
            ).to(device)
            exact = np.fromfile(f"{args.data}/brute-indices-{d}.i32", dtype=np.int32).reshape(-1, args.k)
            chunk = max(1, int(args.chunk_bytes // (4 * args.n_reference)))
            tf32_too = str(d) in args.tf32_dimensions.split(",")
            for tf32 in (False, True) if tf32_too else (False,):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                ms, indices = timed(lambda: knn(reference, queries, args.k, chunk), args.repeats)
                got = indices[: exact.shape[0]].cpu().numpy()
                agreement = np.mean([len(set(a) & set(b)) / args.k for a, b in zip(got, exact)])
                method = "pytorch gemm+topk" + (" tf32" if tf32 else "")
                out.write(f"{d},{method},{ms:.3f},{agreement:.5f}\n")
                out.flush()
                print(f"d={d} {method}: {ms:.1f} ms, agreement with exact {agreement:.5f}", flush=True)
            torch.backends.cuda.matmul.allow_tf32 = False
            del reference, queries
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
