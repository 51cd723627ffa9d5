#!/usr/bin/env python3
"""treetrav beside the tools a user would pick instead, on identical data.

For each size n: n reference points filling the box [0, a)^3 and n queries
filling its inscribed sphere, a = n^(1/3) (ArborX's benchmark shape; for 1e6:
[0, 100)^3 and a sphere of radius 50), k = 10 neighbours, radius r chosen for
about 10 hits per query (1.336 at 1e6; the same density at every n). Every
contender gets the same float32 files. Times are medians after warm-ups, each
tool timing itself the way its authors do (events or fences); answers are
checked against scipy's cKDTree (kNN distance rows; radius counts).

Contenders (each optional; pass the paths you have):
  --treetrav     perf/bench_search of a CUDA build   (GPU)
  --treetrav-cpu perf/bench_search of an OpenMP build (CPU: OMP_NUM_THREADS, else all cores)
  --cudakdtree   perf/peers/cudakdtree_driver built against your checkout
  --arborx       perf/peers/arborx_driver built against your ArborX + Kokkos 4
  jztree, pykdtree, scipy.spatial.cKDTree, torch: imported if installed

Writes results.csv, results.md (the table at --headline n) and PNG plots of
time against n per phase to --out.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

import numpy as np

K = 10

# The CPUs this process may use, read before any OpenMP runtime is loaded: with
# OMP_PROC_BIND set (search-checks.sh sets it), libgomp binds the thread that
# loads it (importing pykdtree, torch) to its first place, one CPU, and every
# process started after that inherits the one CPU. Measured on the H100 host:
# treetrav's CPU run had its 16 threads share one core (1987 ms kNN at 1M
# against 149 ms started from a shell), scipy's workers=-1 ran one thread.
CPUS = os.sched_getaffinity(0)


def all_cpus():
    """Gives the calling thread (and what it starts) every CPU back."""
    os.sched_setaffinity(0, CPUS)


def shape(n, seed):
    """ArborX's filled box / filled sphere pair, float32."""
    rng = np.random.default_rng(seed)
    a = n ** (1.0 / 3.0)
    reference = (rng.random((n, 3)) * a).astype(np.float32)
    v = rng.normal(size=(n, 3))
    v /= np.linalg.norm(v, axis=1)[:, None]
    r = (a / 2) * rng.random(n) ** (1.0 / 3.0)
    queries = (a / 2 + v * r[:, None]).astype(np.float32)
    # About 10 reference points within r: (4/3) pi r^3 = 10 (unit density).
    radius = float((10 * 3 / (4 * np.pi)) ** (1.0 / 3.0))
    return reference, queries, radius


def jztree_runner(reference, queries):
    """jztree's kNN of the queries, compiled once (by the first call, a
    warm-up), as a JAX user runs it: a callable returning (distances,
    indices) once they are done."""
    import jax
    import jax.numpy as jnp
    from jztree.knn import knn as jztree_knn  # the package's `knn` is the module

    xr, xq = jnp.asarray(reference), jnp.asarray(queries)
    search = jax.jit(lambda r, q: jztree_knn(r, K, part_query=q))

    def run():
        rnn, inn = search(xr, xq)
        jax.block_until_ready(inn)
        return rnn, inn

    return run


def median_ms(f, warmup=2, repeats=7):
    runs = []
    for i in range(warmup + repeats):
        t = time.perf_counter()
        f()
        if i >= warmup:
            runs.append(1e3 * (time.perf_counter() - t))
    return float(np.median(runs))


def run_json(cmd, log, env=None):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env, preexec_fn=all_cpus)
    log.write(p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {p.returncode}")
    start = p.stdout.find("{")
    return json.loads(p.stdout[start:p.stdout.rfind("}") + 1]) if start >= 0 else {}


def read(path, dtype, shape_=None):
    a = np.fromfile(path, dtype=dtype)
    return a.reshape(shape_) if shape_ else a


def check_knn(name, indices, reference, queries, ref_dist, rows, log):
    """Distances of the reported neighbours, recomputed in float64, against
    scipy's: equal rows up to float32 rounding; counts the rows that differ."""
    idx = indices.reshape(-1, K)[rows]
    d = np.sqrt(((reference[idx].astype(np.float64) - queries[rows, None, :]) ** 2).sum(-1))
    d.sort(axis=1)
    bad = int((np.abs(d - ref_dist) > 1e-5 * np.maximum(1.0, ref_dist)).any(axis=1).sum())
    log.write(f"check {name}: {bad} of {len(rows)} sampled kNN rows differ from scipy\n")
    return bad


# Panels of the cost plot: a title and the phases it shows (a tool's variants,
# such as cudaKDTree's balanced and spatial trees, are separate lines).
PANELS = [
    ("tree build", ("build", "build_balanced", "build_spatial")),
    ("kNN, Morton-sorted queries (sort counted but cudaKDTree's)", ("knn_sorted", "knn_balanced_sorted", "knn_spatial_sorted")),
    ("kNN, queries in input order", ("knn", "knn_unsorted", "knn_balanced_unsorted", "knn_spatial_unsorted")),
    ("build + kNN", ("end_to_end",)),
    ("radius count (~10 hits)", ("radius_count", "radius_count_sorted", "radius_count_balanced",
                                 "radius_count_spatial")),
    ("radius search, neighbour lists", ("radius_search",)),
]


def plot(rows, path, log):
    """Time against n, one panel per phase group: every tool keeps one colour,
    every (tool, variant) one line; the legend names them in each panel."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.write("matplotlib missing: no plot\n")
        return
    tools = sorted({r[0] for r in rows})
    colour = {t: plt.cm.tab10(i % 10) for i, t in enumerate(tools)}
    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(2, 3, figsize=(16, 10))
    for ax, (title, phases) in zip(axes.flat, PANELS):
        for tool in tools:
            variants = [p for p in phases if any(r[0] == tool and r[2] == p for r in rows)]
            for style, phase in zip(styles, variants):
                pts = sorted((n, ms) for t, n, p, ms in rows if t == tool and p == phase)
                label = tool + ("" if len(variants) == 1 else f" ({phase})")
                ax.loglog(*zip(*pts), marker="o", linestyle=style, color=colour[tool], label=label)
        ax.set_title(title)
        ax.set_xlabel("points = queries")
        ax.set_ylabel("ms (median)")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def replot(csv_path):
    """Redraws cost-curves.png beside a results.csv of an earlier run."""
    with open(csv_path) as f:
        rows = [(r["tool"], int(r["n"]), r["phase"], float(r["median_ms"])) for r in csv.DictReader(f)]
    plot(rows, os.path.join(os.path.dirname(csv_path), "cost-curves.png"), sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6, 1e7])
    ap.add_argument("--headline", type=float, default=1e6)
    ap.add_argument("--treetrav")
    ap.add_argument("--treetrav-cpu")
    ap.add_argument("--cudakdtree")
    ap.add_argument("--arborx")
    ap.add_argument("--leaf-size", type=int, nargs="+", default=[None],
                    help="treetrav leaf sizes to time (default: bench_search's, the library's default)")
    ap.add_argument("--strategies", nargs="+", default=["autoropes"], help="treetrav strategies (GPU runs)")
    ap.add_argument("--cpu-max", type=float, default=1e6, help="largest n for the CPU contenders")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--work", default="/tmp/treetrav-compare")
    ap.add_argument("--out", default="compare-out")
    ap.add_argument("--plot", metavar="CSV", help="only redraw the plot of an earlier run's results.csv")
    args = ap.parse_args()
    if args.plot:
        return replot(args.plot)
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "compare.log"), "w")
    rows = []  # (tool, n, phase, ms)
    # The CPU contenders' threads: OMP_NUM_THREADS when set (pykdtree reads it too), else all CPUs.
    cpu_threads = os.environ.get("OMP_NUM_THREADS", str(len(CPUS)))

    def add(tool, n, phase, ms):
        rows.append((tool, n, phase, ms))
        print(f"{tool:28s} n={n:>9d} {phase:28s} {ms:10.3f} ms", flush=True)

    for n in map(int, args.sizes):
        all_cpus()  # for the in-process contenders: an earlier import bound this thread
        reference, queries, radius = shape(n, seed=n)
        ref_path, q_path = f"{args.work}/ref-{n}.f32", f"{args.work}/q-{n}.f32"
        reference.tofile(ref_path)
        queries.tofile(q_path)
        sample = np.random.default_rng(0).choice(n, size=min(n, 20000), replace=False)
        try:
            from scipy.spatial import cKDTree

            tree = cKDTree(reference)
            ref_dist, _ = tree.query(queries[sample], k=K)
            ref_counts = tree.query_ball_point(queries[sample], radius, return_length=True)
            if n <= args.cpu_max:
                add("scipy cKDTree (all cores)", n, "build", median_ms(lambda: cKDTree(reference), 1, 3))
                add("scipy cKDTree (all cores)", n, "knn",
                    median_ms(lambda: tree.query(queries, k=K, workers=-1), 1, 3))
        except ImportError:
            sys.exit("scipy is needed for the reference answers")
        try:
            import pykdtree.kdtree as pk

            if n <= args.cpu_max:
                pt = pk.KDTree(reference)
                add("pykdtree (all cores)", n, "build", median_ms(lambda: pk.KDTree(reference), 1, 3))
                add("pykdtree (all cores)", n, "knn", median_ms(lambda: pt.query(queries, k=K), 1, 3))
        except ImportError:
            log.write("pykdtree not installed\n")

        for label, binary in (("treetrav (GPU)", args.treetrav), ("treetrav (CPU)", args.treetrav_cpu)):
            if not binary or (label.endswith("(CPU)") and n > args.cpu_max):
                continue
            gpu = "GPU" in label
            for strategy, leaf in [(s, l) for s in (args.strategies if gpu else ["autoropes"]) for l in args.leaf_size]:
                tool = label + (f" {strategy}" if strategy != "autoropes" else "") + (
                    f" leaf {leaf}" if len(args.leaf_size) > 1 else "")
                prefix = f"{args.work}/tt-{n}-{leaf or 'default'}-{strategy}"
                run_json([binary, "--reference", ref_path, "--queries", q_path, "--dimension", "3", "-k", str(K),
                          "--strategy", strategy,
                          "--radius", str(radius), "--repeats", str(args.repeats if gpu else 5),
                          "--warmup", "3" if gpu else "2", "--json", prefix + ".json", "--dump", prefix]
                         + ([] if leaf is None else ["--leaf-size", str(leaf)])
                         + ([] if gpu else ["--phases", "build", "sort", "knn_sorted", "knn_presorted", "knn_unsorted", "radius_count"]), log,
                         env=None if gpu else dict(os.environ, OMP_NUM_THREADS=cpu_threads))
                with open(prefix + ".json") as f:
                    report = json.load(f)
                log.write(f"{tool}: {report.get('device')}, {report.get('threads')} threads\n")
                for phase, v in report.get("phases", {}).items():
                    add(tool, n, phase, v["median_ms"])
                check_knn(tool, read(prefix + ".knn_indices.i32", np.int32), reference, queries, ref_dist, sample,
                          log)
                counts = read(prefix + ".counts.i64", np.int64)[sample]
                log.write(f"check {tool}: {int((counts != ref_counts).sum())} sampled radius counts differ\n")

        if args.cudakdtree:
            prefix = f"{args.work}/cukd-{n}"
            report = run_json([args.cudakdtree, ref_path, q_path, str(radius), prefix, str(args.repeats)], log)
            for phase, ms in report.get("phases", {}).items():
                add("cudaKDTree", n, phase, ms)
            check_knn("cudaKDTree", read(prefix + ".knn_indices.i32", np.int32), reference, queries, ref_dist,
                      sample, log)
        if args.arborx:
            prefix = f"{args.work}/arborx-{n}"
            report = run_json([args.arborx, ref_path, q_path, str(K), str(radius), prefix, str(args.repeats)], log)
            for phase, ms in report.get("phases", {}).items():
                add("ArborX", n, phase, ms)
            check_knn("ArborX", read(prefix + ".knn_indices.i32", np.int32), reference, queries, ref_dist, sample,
                      log)
        try:
            jz = jztree_runner(reference, queries)
            inn = jz()[1]
            add("jztree", n, "end_to_end", median_ms(jz, 2, 7))
            check_knn("jztree", np.asarray(inn, dtype=np.int32), reference, queries, ref_dist, sample, log)
        except Exception as e:  # optional contender: report why it is missing
            log.write(f"jztree: {type(e).__name__}: {e}\n")
        try:
            import torch

            if torch.cuda.is_available() and n <= 1e5:
                r_t = torch.from_numpy(reference).cuda()
                q_t = torch.from_numpy(queries).cuda()

                def brute():
                    out = [torch.topk(torch.cdist(q_t[i:i + 8192], r_t), K, largest=False)
                           for i in range(0, n, 8192)]
                    torch.cuda.synchronize()
                    return out

                add("torch brute force", n, "knn", median_ms(brute, 1, 3))
        except ImportError:
            pass
        log.flush()

    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tool", "n", "phase", "median_ms"])
        w.writerows(rows)
    headline = int(args.headline)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"Medians in ms, n = {headline} reference points and queries, k = {K}.\n\n")
        f.write("| tool | phase | ms |\n| --- | --- | ---: |\n")
        for tool, n, phase, ms in rows:
            if n == headline:
                f.write(f"| {tool} | {phase} | {ms:.3f} |\n")
    plot(rows, os.path.join(args.out, "cost-curves.png"), log)


if __name__ == "__main__":
    main()
