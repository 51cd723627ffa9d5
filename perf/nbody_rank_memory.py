#!/usr/bin/env python3
"""Peak host memory and rows read per rank of a distributed N-body run.

    nbody_rank_memory.py --treetrav BIN [--treetrav BIN2 ...] --out CSV [-n N] [--ranks "1 2 4"]

Generates an N-body Plummer sphere once (treetrav generate), then runs
`mpirun -np P treetrav nbody --ics FILE --steps 1 --theta 1 --rebalance-every 1` (a cut
of the bodies at every step) for each binary and rank count, each rank
wrapped so that it reports its own peak resident set (getrusage of the child:
ru_maxrss) and the run's --timings (rows_read; rank 0's imported cells and
bodies, the tree build's and the run's seconds). One row per binary, rank
count and rank.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

WRAP = r'''
import os, resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
with open(f"{sys.argv[1]}.{os.environ.get('OMPI_COMM_WORLD_RANK', '0')}", "w") as f:
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=f)
sys.exit(code)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--treetrav", action="append", required=True)
    parser.add_argument("--labels", help="one label per --treetrav, space-separated")
    parser.add_argument("--out", required=True)
    parser.add_argument("-n", type=int, default=1000000)
    parser.add_argument("--ranks", default="1 2 4")
    parser.add_argument("--mpiexec", default="mpiexec")
    args = parser.parse_args()
    labels = args.labels.split() if args.labels else args.treetrav
    env = dict(os.environ, OMP_PROC_BIND="false", OMP_WAIT_POLICY="passive", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    work = tempfile.mkdtemp()
    wrap = os.path.join(work, "wrap.py")
    with open(wrap, "w") as f:
        f.write(WRAP)
    ics = os.path.join(work, "ics.h5")
    subprocess.run([args.treetrav[-1], "generate", "--dist", "plummer", "-n", str(args.n), "--seed", "1", "-o", ics],
                   check=True, env=env, capture_output=True)
    rows = []
    for binary, label in zip(args.treetrav, labels):
        for ranks in (int(r) for r in args.ranks.split()):
            run = os.path.join(work, f"run-{len(rows)}")
            timings = run + ".json"
            peak = os.path.join(work, f"peak-{len(rows)}")
            line = [sys.executable, wrap, peak, binary, "nbody", "--ics", ics, "--dt", "0.001", "--steps", "1", "--theta", "1.0",
                    "--softening", "0.01", "--rebalance-every", "1", "--threads", "1", "--quiet",
                    "--snapshot-every", "0", "-o", run, "--timings", timings]
            result = subprocess.run([args.mpiexec, "-np", str(ranks), *line] if ranks > 1 else line, env=env,
                                    capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f"{label} on {ranks} ranks failed:\n{result.stderr[-2000:]}")
            with open(timings) as f:
                recorded = json.load(f)
            read = recorded.get("rows_read", [])
            for r in range(ranks):
                with open(f"{peak}.{r}") as f:
                    kib = int(f.read())
                rows.append({"binary": label, "ranks": ranks, "rank": r, "bodies": args.n,
                             "peak_rss_mib": round(kib / 1024, 1),
                             "rows_read": read[r] if r < len(read) else "",
                             # Rank 0's essential trees, summed over the run's evaluations.
                             "imported_cells_rank0": recorded.get("imported_cells", ""),
                             "imported_bodies_rank0": recorded.get("imported_bodies", ""),
                             "tree_build_s": recorded["seconds"]["tree_build"],
                             "wall_s": recorded["seconds"]["wall"]})
                print(rows[-1], flush=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
