#!/usr/bin/env python3
"""Where the time of one KDTree.query on torch CUDA tensors goes: the CUDA
kernels, copies and runtime calls (cudaMalloc, cudaFree, synchronisations)
of a few calls, by torch.profiler (CUPTI sees every kernel of the process,
Kokkos' too). The shape of bench_module.py, 1M / 1M, k = 10."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from compare import K, shape  # noqa: E402

import treetrav  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
reference, queries, _ = shape(n, 1)
r_t, q_t = torch.from_numpy(reference).cuda(), torch.from_numpy(queries).cuda()
tree = treetrav.KDTree(r_t, backend="cuda")
for _ in range(3):
    tree.query(q_t, k=K)
torch.cuda.synchronize()
calls = 5
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(calls):
        tree.query(q_t, k=K)
    torch.cuda.synchronize()
print(f"{calls} calls of KDTree.query, torch CUDA tensors, n = {n}, k = {K}")
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=70))
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=20, max_name_column_width=70))
