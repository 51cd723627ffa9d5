"""One GPU pair count of bench_paircount.py's shape, for a profiler:
python3 profile_group.py N [LEAFSIZE]. The first call is the warm-up (a
profiler skips it: ncu --launch-skip 1), the second the one to look at."""

import sys

import numpy as np
import treetrav

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
leafsize = int(sys.argv[2]) if len(sys.argv) > 2 else None
rng = np.random.default_rng(n)  # bench_paircount.py's points
data = (rng.random((n, 3)) * 1000.0).astype(np.float32)
data = np.minimum(data, np.nextafter(np.float32(1000.0), np.float32(0)))
edges = treetrav.log_edges(0.1, 50.0, 20)
for _ in range(2):
    result = treetrav.paircount(data, edges, boxsize=1000.0, backend="cuda", leafsize=leafsize)
print(n, "points,", int(result.counts.sum()), "pairs in the bins")
