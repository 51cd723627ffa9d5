#!/usr/bin/env python3
"""Summarises the Nsight Compute CSV of scripts/device/regtt-checks.sh (step ncu)
as a markdown table: per application, the autoropes kernel against REGTT's
Tree_BFT and Tree_DFT kernels (non-lockstep), with Zhang et al.'s Figure 6
metrics: global load sectors per request (M_MEM; nvprof's
gld_transactions_per_request) and branch uniformity (100 - M_BD; nvprof's
branch_efficiency), plus active threads per executed instruction.

    perf/regtt_ncu_summary.py ncu.csv > ncu.md
"""
import csv
import sys

METRICS = {
    "time": "gpu__time_duration.sum",
    "sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "uniform": "smsp__sass_average_branch_targets_threads_uniform.pct",
    "threads": "smsp__thread_inst_executed_per_inst_executed.ratio",
}


def number(text):
    return float(text.replace(",", "")) if text else 0.0


def kernel_kind(name):
    for key, kind in (("RegttDftKernel", "REGTT DFT"), ("RegttBftKernel", "REGTT BFT"),
                      ("AutoropesKernel", "autoropes")):
        if key in name:
            return kind
    return None


def main(path):
    rows = {}  # (app, input, strategy, depth, kind) -> sums
    context = None
    header = None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                _, app, input_name, strategy, _, depth = line.split()
                strategy = {"regtt-order-bits": "regtt (order bits)"}.get(strategy, strategy)
                context = (app, input_name, strategy, depth)
                header = None
                continue
            fields = next(csv.reader([line]))
            if fields and fields[0] == "ID":
                header = {name: i for i, name in enumerate(fields)}
                continue
            if not header or not fields or not fields[0].isdigit() or context is None:
                continue
            kind = kernel_kind(fields[header["Kernel Name"]])
            if kind is None:
                continue
            if context[2] == "regtt (order bits)":
                kind += " (order bits)"
            values = {k: number(fields[header[m]]) for k, m in METRICS.items() if m in header}
            entry = rows.setdefault(context + (kind,), {"time": 0, "sectors": 0, "requests": 0,
                                                         "uniform_w": 0, "threads_w": 0, "launches": 0})
            entry["time"] += values.get("time", 0)
            entry["sectors"] += values.get("sectors", 0)
            entry["requests"] += values.get("requests", 0)
            entry["uniform_w"] += values.get("uniform", 0) * values.get("time", 0)
            entry["threads_w"] += values.get("threads", 0) * values.get("time", 0)
            entry["launches"] += 1
    print("| app | input | kernel | reorder depth | launches | ms (under ncu) | sectors / load request "
          "(M_MEM) | branch uniformity % (100 - M_BD) | active threads / instruction |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for (app, input_name, strategy, depth, kind), e in rows.items():
        time = e["time"]
        print("| {} | {} | {} | {} | {} | {:.3f} | {:.2f} | {:.1f} | {:.1f} |".format(
            app, input_name, kind, depth if strategy != "autoropes" else "-", e["launches"], time / 1e6,
            e["sectors"] / e["requests"] if e["requests"] else 0,
            e["uniform_w"] / time if time else 0, e["threads_w"] / time if time else 0))


if __name__ == "__main__":
    main(sys.argv[1])
