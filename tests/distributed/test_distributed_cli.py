#!/usr/bin/env python3
"""Distributed batch searches as a user runs them, under mpirun.

    /usr/bin/python3 tests/distributed/test_distributed_cli.py TREETRAV MPIEXEC

- knn, nn, vp, bt, pc and radius (with --queries and with --self) on 2 and 4 ranks
  (3 too for radius lists and knn; --oversubscribe: CI has 2 cores) write /Results identical, byte for byte
  through h5py, to one process (which runs the single-tree search the other
  CLI tests check against brute force), on inputs made to tie: duplicated
  points, a lattice (many equal distances), queries outside the points' box,
  pieces of one or two points, more ranks than points; the 1-rank result is also checked
  against numpy brute force here;
- several strategies, --sort sfc and both host backends agree;
- only rank 0 prints the summary; it names the ranks;
- mistakes under mpirun fail with exit 2, one message, no output file (a bad
  row that only the last rank reads included); a subcommand that runs on one
  rank only says so.
Each rank reads only its block of rows of each input and writes its own rows
of the results.
Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on failure.
"""

import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

TREETRAV, MPIEXEC = sys.argv[1], sys.argv[2]
# CI runs as root; OpenMPI refuses that unless told. No thread binding: ranks share the cores.
ENV = dict(os.environ, OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
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


def treetrav(ranks, *args):
    """treetrav ARGS on `ranks` MPI ranks (1: a plain process); the CompletedProcess."""
    command = [TREETRAV, *map(str, args)]
    if ranks > 1:
        command = [MPIEXEC, "--oversubscribe", "-np", str(ranks), *command]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def write_points(path, points):
    with h5py.File(path, "w") as f:
        f.create_dataset("/Points/Coordinates", data=np.asarray(points, dtype=np.float32))


def results(path):
    with h5py.File(path, "r") as f:
        return {name: f["Results"][name][()] for name in f["Results"]}


def same_results(a, b):
    if a.keys() != b.keys():
        return False
    return all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
               for k in a)


work = tempfile.mkdtemp()
rng = np.random.default_rng(7)
# 3-D: a lattice (ties everywhere), clustered points, every point of a
# cluster repeated (zero distances), and queries inside and far outside.
lattice = np.stack(np.meshgrid(*[np.arange(8)] * 3, indexing="ij"), -1).reshape(-1, 3) * 0.125
cluster = rng.normal(0.5, 0.05, size=(600, 3))
reference3 = np.concatenate([lattice, cluster, cluster[:200], rng.uniform(0, 1, size=(400, 3))])
queries3 = np.concatenate([lattice[::3] + 0.0625, rng.uniform(-0.5, 1.5, size=(500, 3)), cluster[:50]])
write_points(f"{work}/ref3.h5", reference3)
write_points(f"{work}/q3.h5", queries3)
# 7-D clustered, as the papers' inputs.
for name, n in (("ref7", 3000), ("q7", 1500)):
    made = treetrav(1, "generate", "--dist", "covtype7", "-n", n, "--seed", 3 if name == "ref7" else 4, "-o",
                    f"{work}/{name}.h5")
    check(f"generate {name}", made.returncode == 0, made.stderr)
# Fewer points than ranks can share evenly: 5 points on 4 ranks.
write_points(f"{work}/ref_small.h5", rng.uniform(0, 1, size=(5, 2)))
write_points(f"{work}/q_small.h5", rng.uniform(-1, 2, size=(40, 2)))
# More ranks than points: 3 points on 4 ranks leave one rank without any.
write_points(f"{work}/ref_tiny.h5", rng.uniform(0, 1, size=(3, 2)))
# A NaN in the last row: on several ranks, only the last rank reads it.
bad_reference = rng.uniform(0, 1, size=(50, 3))
bad_reference[-1, 1] = np.nan
write_points(f"{work}/nan_ref.h5", bad_reference)
write_points(f"{work}/nan_q.h5", bad_reference)


def brute_knn(reference, queries, k, self_):
    reference = reference.astype(np.float32)
    queries = queries.astype(np.float32)
    d2 = ((queries[:, None, :] - reference[None, :, :]) ** 2).sum(-1, dtype=np.float32)
    if self_:
        np.fill_diagonal(d2, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(reference)), d2.shape), d2), axis=1)[:, :k]
    return order, np.take_along_axis(d2, order, 1)


cases = [
    ("knn k 8", ["knn", "--reference", "ref3.h5", "--queries", "q3.h5", "-k", 8]),
    ("knn k 20 --self", ["knn", "--reference", "ref3.h5", "--self", "-k", 20]),
    ("nn", ["nn", "--reference", "ref3.h5", "--queries", "q3.h5"]),
    ("nn --self", ["nn", "--reference", "ref3.h5", "--self"]),
    ("pc", ["pc", "--reference", "ref3.h5", "--queries", "q3.h5", "-r", 0.125]),
    ("pc --self", ["pc", "--reference", "ref3.h5", "--self", "-r", 0.2]),
    ("radius", ["radius", "--reference", "ref3.h5", "--queries", "q3.h5", "-r", 0.125]),
    ("radius --self sfc", ["radius", "--reference", "ref3.h5", "--self", "-r", 0.2, "--sort", "sfc"]),
    ("radius 7-D --self", ["radius", "--reference", "ref7.h5", "--self", "-r", 0.3]),
    ("radius 3 points", ["radius", "--reference", "ref_tiny.h5", "--queries", "q_small.h5", "-r", 0.7]),
    ("knn 7-D k 16 fsm sfc", ["knn", "--reference", "ref7.h5", "--queries", "q7.h5", "-k", 16, "--strategy", "fsm",
                             "--sort", "sfc"]),
    ("bt 7-D k 5 lockstep", ["bt", "--reference", "ref7.h5", "--queries", "q7.h5", "-k", 5, "--strategy",
                            "lockstep"]),
    ("vp 7-D recursive openmp", ["vp", "--reference", "ref7.h5", "--queries", "q7.h5", "--strategy", "recursive",
                                 "--backend", "openmp"]),
    ("pc 7-D --self hybrid", ["pc", "--reference", "ref7.h5", "--self", "-r", 0.3, "--strategy", "hybrid"]),
    ("knn 5 points k 5", ["knn", "--reference", "ref_small.h5", "--queries", "q_small.h5", "-k", 5]),
    ("knn 5 points --self k 4", ["knn", "--reference", "ref_small.h5", "--self", "-k", 4]),
    ("knn 3 points k 3", ["knn", "--reference", "ref_tiny.h5", "--queries", "q_small.h5", "-k", 3]),
    ("pc 3 points --self", ["pc", "--reference", "ref_tiny.h5", "--self", "-r", 0.5]),
]

for name, args in cases:
    paths = {a: f"{work}/{a}" if str(a).endswith(".h5") else a for a in args}
    argv = [paths[a] if isinstance(a, str) else a for a in args]
    one = treetrav(1, *argv, "-o", f"{work}/one.h5")
    check(f"{name}: one process", one.returncode == 0, one.stderr)
    if one.returncode != 0:
        continue
    expected = results(f"{work}/one.h5")
    # Three ranks (uneven blocks) too for the lists and the k nearest.
    for ranks in (2, 3, 4) if name in ("radius", "radius --self sfc", "knn k 8") else (2, 4):
        many = treetrav(ranks, *argv, "-o", f"{work}/many.h5")
        ok = many.returncode == 0
        check(f"{name}: {ranks} ranks run", ok, many.stderr)
        if ok:
            got = results(f"{work}/many.h5")
            check(f"{name}: {ranks} ranks give the one-process results bit for bit", same_results(got, expected),
                  {k: (got[k][:2], expected[k][:2]) for k in got if k in expected})
            summaries = [line for line in many.stdout.splitlines() if "Wrote" in line]
            check(f"{name}: {ranks} ranks print one summary, naming the ranks",
                  len(summaries) == 1 and f"ranks {ranks}" in summaries[0], many.stdout)
        os.remove(f"{work}/many.h5") if os.path.exists(f"{work}/many.h5") else None

def rows_read(path, name):
    with h5py.File(path, "r") as f:
        value = f["RunMetadata"].attrs[name]
    return [int(v) for v in (value.decode() if isinstance(value, bytes) else str(value)).split(",")]


def calls_recorded(path):
    """The distributed calls a run recorded, and the largest rank's queries a call."""
    with h5py.File(path, "r") as f:
        return int(f["RunMetadata"].attrs["chunks"]), int(f["RunMetadata"].attrs["chunk"])


# --chunk over ranks: each rank's block searched that many queries a call (the
# ranks make as many calls as the rank with the most chunks, the others with
# no queries) gives the one-process file.
chunked = [
    ("knn k 8 --chunk 60 (a last call of no queries)",
     ["knn", "--reference", "ref3.h5", "--queries", "q3.h5", "-k", 8, "--chunk", 60]),
    ("pc --chunk 50", ["pc", "--reference", "ref3.h5", "--queries", "q3.h5", "-r", 0.125, "--chunk", 50]),
    ("radius --chunk 29", ["radius", "--reference", "ref3.h5", "--queries", "q3.h5", "-r", 0.125, "--chunk", 29]),
    ("knn 5 points k 5 --chunk 1", ["knn", "--reference", "ref_small.h5", "--queries", "q_small.h5", "-k", 5,
                                    "--chunk", 1]),
]
for name, args in chunked:
    argv = [f"{work}/{a}" if str(a).endswith(".h5") else a for a in args]
    whole = [a for i, a in enumerate(argv) if a != "--chunk" and (i == 0 or argv[i - 1] != "--chunk")]
    one = treetrav(1, *whole, "-o", f"{work}/one.h5")
    check(f"{name}: one process", one.returncode == 0, one.stderr)
    if one.returncode != 0:
        continue
    expected = results(f"{work}/one.h5")
    for ranks in (3, 4):
        many = treetrav(ranks, *argv, "-o", f"{work}/many.h5")
        check(f"{name}: {ranks} ranks run", many.returncode == 0, many.stderr)
        if many.returncode == 0:
            check(f"{name}: {ranks} ranks give the one-process results bit for bit",
                  same_results(results(f"{work}/many.h5"), expected))
            # The calls recorded: as many as the largest block has chunks.
            chunk = int(argv[argv.index("--chunk") + 1])
            blocks = rows_read(f"{work}/many.h5", "rows_read_queries")
            calls, largest = calls_recorded(f"{work}/many.h5")
            check(f"{name}: {ranks} ranks record {calls} calls of at most {largest} queries",
                  calls == max(-(-b // chunk) for b in blocks) and largest == min(chunk, max(blocks)),
                  (blocks, calls, largest))
        os.remove(f"{work}/many.h5") if os.path.exists(f"{work}/many.h5") else None

# Rank-local input: each rank reads only its block of each file's rows, and
# the run's metadata records how many rows every rank read.
n_ref, n_q = 3000, 1500  # ref7.h5, q7.h5
for ranks, self_ in ((1, False), (3, False), (4, False), (4, True)):
    argv = ["knn", "--reference", f"{work}/ref7.h5", *(["--self"] if self_ else ["--queries", f"{work}/q7.h5"]),
            "-k", 5, "-o", f"{work}/rows.h5"]
    run = treetrav(ranks, *argv)
    check(f"rows read on {ranks} ranks{' --self' if self_ else ''}: run", run.returncode == 0, run.stderr)
    if run.returncode == 0:
        ref_rows, q_rows = rows_read(f"{work}/rows.h5", "rows_read_reference"), rows_read(f"{work}/rows.h5",
                                                                                        "rows_read_queries")
        share_ref, share_q = -(-n_ref // ranks), -(-n_q // ranks)  # ceil: a rank's block
        check(f"rows read on {ranks} ranks{' --self' if self_ else ''}: one entry a rank, every row read once, "
              "no rank beyond its block",
              len(ref_rows) == ranks == len(q_rows) and sum(ref_rows) == n_ref and max(ref_rows) <= share_ref
              and (sum(q_rows) == 0 if self_ else sum(q_rows) == n_q and max(q_rows) <= share_q),
              (ref_rows, q_rows, n_ref, n_q))
        if ranks > 1 and not self_:
            # No --chunk: a rank's block in one call (it fits; at most 4,194,304 queries a call).
            calls, largest = calls_recorded(f"{work}/rows.h5")
            check(f"rows read on {ranks} ranks: each block searched in one call", calls == 1 and largest == max(q_rows),
                  (calls, largest, q_rows))

# The single-process results the ranks matched, against brute force.
reference = h5py.File(f"{work}/ref3.h5")["Points/Coordinates"][()]
queries = h5py.File(f"{work}/q3.h5")["Points/Coordinates"][()]
for k, self_ in ((8, False), (20, True)):
    argv = ["knn", "--reference", f"{work}/ref3.h5", *(["--self"] if self_ else ["--queries", f"{work}/q3.h5"]),
            "-k", k, "-o", f"{work}/bf.h5"]
    run = treetrav(4, *argv)
    if run.returncode == 0:
        got = results(f"{work}/bf.h5")
        indices, d2 = brute_knn(reference, reference if self_ else queries, k, self_)
        check(f"knn k {k}{' --self' if self_ else ''} on 4 ranks equals brute force (rows, ties by row)",
              np.array_equal(got["NeighborIndices"], indices)
              and np.allclose(got["NeighborDistances"], np.sqrt(d2), rtol=1e-5, atol=1e-6))
    os.remove(f"{work}/bf.h5") if os.path.exists(f"{work}/bf.h5") else None

# --gpu-aware-mpi: the memory the exchanges hand MPI, recorded in the
# metadata; on host backends MPI gets the arrays themselves either way, so
# every setting gives the same file; auto asks the MPI (Debian's Open MPI
# says it takes no CUDA memory).
knn_argv = ["knn", "--reference", f"{work}/ref7.h5", "--queries", f"{work}/q7.h5", "-k", 6]
files = {}
for setting, recorded in (("off", "host"), ("on", "device"), ("auto", None)):
    run = treetrav(3, *knn_argv, "--gpu-aware-mpi", setting, "-o", f"{work}/aware-{setting}.h5")
    check(f"--gpu-aware-mpi {setting} on 3 ranks: run", run.returncode == 0, run.stderr)
    if run.returncode == 0:
        with h5py.File(f"{work}/aware-{setting}.h5", "r") as f:
            memory = f["RunMetadata"].attrs["mpi_memory"]
        memory = memory.decode() if isinstance(memory, bytes) else str(memory)
        check(f"--gpu-aware-mpi {setting}: mpi_memory recorded as {recorded or 'the MPI reports'}",
              memory == recorded if recorded else memory in ("host", "device"), memory)
        files[setting] = results(f"{work}/aware-{setting}.h5")
if len(files) == 3:
    check("--gpu-aware-mpi off, on and auto give the same results file on host backends",
          same_results(files["off"], files["on"]) and same_results(files["off"], files["auto"]))

# Mistakes under mpirun: exit 2, one message (rank 0's), no output.
mistakes = [
    ("--gpu-aware-mpi yes", ["knn", "--reference", f"{work}/ref3.h5", "--self", "-k", 3, "--gpu-aware-mpi",
                             "yes"], "--gpu-aware-mpi"),
    ("-k 0", ["knn", "--reference", f"{work}/ref3.h5", "--queries", f"{work}/q3.h5", "-k", 0], "-k"),
    ("-k beyond the points", ["knn", "--reference", f"{work}/ref_small.h5", "--self", "-k", 5], "exceeds"),
    ("dimension mismatch", ["knn", "--reference", f"{work}/ref3.h5", "--queries", f"{work}/q7.h5"], "--queries"),
    ("missing file", ["pc", "--reference", f"{work}/absent.h5", "--self", "-r", 1], "absent.h5"),
    ("brute force on several ranks", ["knn", "--reference", f"{work}/ref3.h5", "--self", "-k", 3, "--strategy",
                                      "brute"], "--strategy"),
    ("auto asked for on several ranks", ["pc", "--reference", f"{work}/ref3.h5", "--self", "-r", 0.1,
                                         "--strategy", "auto"], "--strategy"),
    ("generate on several ranks", ["generate", "--dist", "plummer", "-n", 100], "one MPI rank"),
    ("a NaN in the last rank's rows of --reference", ["knn", "--reference", f"{work}/nan_ref.h5", "--queries",
                                                      f"{work}/q3.h5", "-k", 3], "nan_ref.h5"),
    ("a NaN in the last rank's rows of --queries", ["pc", "--reference", f"{work}/ref3.h5", "--queries",
                                                    f"{work}/nan_q.h5", "-r", 0.1], "row 49"),
]
for name, args, needle in mistakes:
    run = treetrav(2, *args, "-o", f"{work}/bad.h5")
    messages = [line for line in run.stderr.splitlines() if line.startswith("treetrav: error:")]
    check(f"mistake on 2 ranks, {name}: exit 2, one message naming it, no output",
          run.returncode == 2 and len(messages) == 1 and needle in messages[0]
          and not os.path.exists(f"{work}/bad.h5") and not os.path.exists(f"{work}/run"),
          f"exit {run.returncode}\n{run.stderr}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
