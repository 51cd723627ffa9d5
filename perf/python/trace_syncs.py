#!/usr/bin/env python3
"""What one KDTree.query on torch CUDA tensors asks of Kokkos: run with the
Kokkos Tools library perf/python/kokkos_events.c loaded
(KOKKOS_PROFILE_LIBRARY), it warms up, then creates the file
TREETRAV_TRACE_FILE names, so that the library prints every kernel,
reduction, deep copy, allocation and fence of one call, and removes it.
scripts/device/python-bench.sh runs it with TREETRAV_TRACE_SYNCS=1, and with
TREETRAV_TRACE_CUDA=1 under perf/python/cuda_calls.c (the CUDA runtime calls
and their stacks) instead."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from compare import K, shape  # noqa: E402

import treetrav  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
marker = os.environ["TREETRAV_TRACE_FILE"]
reference, queries, _ = shape(n, 1)
r_t, q_t = torch.from_numpy(reference).cuda(), torch.from_numpy(queries).cuda()
tree = treetrav.KDTree(r_t, backend="cuda")
for _ in range(3):
    tree.query(q_t, k=K)
torch.cuda.synchronize()
open(marker, "w").close()
print("== traced call", file=sys.stderr, flush=True)
tree.query(q_t, k=K)
print("== end of traced call", file=sys.stderr, flush=True)
os.remove(marker)
torch.cuda.synchronize()
