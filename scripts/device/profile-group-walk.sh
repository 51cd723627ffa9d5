#!/usr/bin/env bash
# Nsight Compute's view of the group walk's kernel on the module built
# elsewhere and carried (TREETRAV_PREBUILT=DIR as in python-bench.sh:
# DIR/bin/_core*.so or .so.xz), for the pair counts
# (perf/paircount/profile_group.py: bench_paircount.py's shape) or Barnes-Hut
# (perf/python/bench_gravity.py: a Plummer sphere):
#   TREETRAV_PREBUILT=.device/prebuilt scripts/device/profile-group-walk.sh paircount|gravity [N ...]
# $OUT gets, per N: details-APP-N.txt (every section of the walk's kernel)
# and sass-APP-N.txt (its instructions with the most warp stalls).
set -u
out=${OUT:-/tmp/out}
root=$PWD
mkdir -p "$out" /tmp/tt-module/treetrav
cp -r "$root/python/treetrav/." /tmp/tt-module/treetrav/
for f in "$root/${TREETRAV_PREBUILT:?}"/bin/_core*.so*; do
  case $f in
  *.xz) xz -dc "$f" >/tmp/tt-module/treetrav/"$(basename "${f%.xz}")" ;;
  *) cp "$f" /tmp/tt-module/treetrav/ ;;
  esac
done
export PYTHONPATH=/tmp/tt-module
app=${1:?paircount or gravity}
shift
case $app in
paircount) run=(python3 "$root/perf/paircount/profile_group.py") ;;
gravity) run=(python3 "$root/perf/python/bench_gravity.py" --repeats 1) ;;
*) echo "profile-group-walk.sh: paircount or gravity, not $app" >&2; exit 2 ;;
esac
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/info.txt"
for n in "${@:-1000000}"; do
  case $app in
  paircount) args=("$n") ;;
  gravity) args=(--n "$n") ;;
  esac
  "${run[@]}" "${args[@]}" | tee -a "$out/info.txt"
  ncu --target-processes all --kernel-name-base demangled -k regex:CudaGroupWalkLaunch \
    --launch-skip 1 --launch-count 1 --set full --import-source no -f -o /tmp/tt-pc-"$n" \
    "${run[@]}" "${args[@]}" >/tmp/tt-ncu-"$n".log 2>&1 ||
    { tail -n 20 /tmp/tt-ncu-"$n".log; continue; }
  ncu --import /tmp/tt-pc-"$n".ncu-rep --page details >"$out/details-$app-$n.txt"
  ncu --import /tmp/tt-pc-"$n".ncu-rep --page source --print-source sass --csv \
    >/tmp/tt-sass-"$n".csv 2>&1
  python3 - "$n" "$out" "$app" <<'PY'
import csv, sys
n, out, app = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.reader(open(f"/tmp/tt-sass-{n}.csv")))
head = next((i for i, r in enumerate(rows) if "Source" in r), None)
if head is None:
    open(f"{out}/sass-{app}-{n}.txt", "w").write("".join(",".join(r) + "\n" for r in rows[:40]))
    sys.exit()
cols = rows[head]
stall = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
key = cols.index(stall) if stall else None
body = [r for r in rows[head + 1:] if len(r) == len(cols)]
def value(r):
    try:
        return float(r[key].replace(",", ""))
    except (TypeError, ValueError):
        return 0.0
total = sum(value(r) for r in body) or 1.0
with open(f"{out}/sass-{app}-{n}.txt", "w") as f:
    f.write(f"columns: {cols}\n{len(body)} instructions, stall samples {total:.0f}\n")
    for r in sorted(body, key=value, reverse=True)[:60]:
        f.write(f"{100 * value(r) / total:5.1f}% " + " | ".join(r[:3]) + "\n")
PY
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Local Memory|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|Issue Slots Busy|Warp Cycles Per Issued|Block Limit" "$out/details-$app-$n.txt" | head -n 30
  head -n 25 "$out/sass-$app-$n.txt"
done
