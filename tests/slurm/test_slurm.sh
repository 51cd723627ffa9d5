#!/usr/bin/env bash
# The Slurm templates (scripts/slurm/) submitted to a real Slurm on this
# machine: Debian's slurm-wlm and munge (installed by scripts/setup-apt.sh),
# a private munged, slurmctld and slurmd on localhost with their own
# configuration, state, sockets and ports under a temporary directory (no
# system file touched; the daemons started here are stopped here). The node
# declares two GPUs (GRES on two harmless character devices, /dev/null and
# /dev/zero: the CPU build runs the GPU template's commands; what is checked is
# Slurm's allocation and binding).
#   TREETRAV=build-cpu/treetrav bash tests/slurm/test_slurm.sh
# Checks: both templates' jobs complete (sbatch --wait) with exit 0; the CPU
# template's 2-rank knn and the GPU template's 2-rank pc write /Results equal
# to one process, with one summary naming 2 ranks; the GPU template gives each
# task its own GPU. Needs root (slurmd starts jobs as their user).
set -u
: "${TREETRAV:?set TREETRAV to the treetrav binary}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$repo/tests/cli/harness.sh"
limit=${TREETRAV_SLURM_TIMEOUT:-120}  # seconds for the daemons to come up and for each job

for tool in munged slurmctld slurmd sbatch sinfo h5diff; do
  command -v "$tool" >/dev/null || { fail "$tool is not installed (scripts/setup-apt.sh installs it)"; exit 1; }
done
[[ $(id -u) == 0 ]] || { fail "the local Slurm needs root (slurmd starts jobs as their user)"; exit 1; }

slurm=$work/slurm
mkdir -p "$slurm"/{state,spool,log}
chmod 700 "$slurm"
pids=()
stop_daemons() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap stop_daemons EXIT

# munge: its own key, socket and files.
mungekey --create --keyfile="$slurm/munge.key" 2>/dev/null ||
  dd if=/dev/urandom of="$slurm/munge.key" bs=1024 count=1 status=none
chmod 600 "$slurm/munge.key"
munged --foreground --force --key-file="$slurm/munge.key" --socket="$slurm/munge.socket" \
  --pid-file="$slurm/munged.pid" --log-file="$slurm/log/munged.log" --seed-file="$slurm/munge.seed" \
  >"$slurm/log/munged.out" 2>&1 &
pids+=($!)

# Two free ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
# The node as slurmd sees it (sockets, cores, threads, memory).
node=$(slurmd -C | grep '^NodeName=')
cat >"$slurm/slurm.conf" <<EOF
ClusterName=treetrav-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$slurm/munge.socket
CredType=cred/munge
StateSaveLocation=$slurm/state
SlurmdSpoolDir=$slurm/spool
SlurmctldPidFile=$slurm/slurmctld.pid
SlurmdPidFile=$slurm/slurmd.pid
SlurmctldLogFile=$slurm/log/slurmctld.log
SlurmdLogFile=$slurm/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
GresTypes=gpu
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
$node NodeAddr=127.0.0.1 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
printf 'NodeName=%s Name=gpu File=%s\n' "$host" /dev/null "$host" /dev/zero >"$slurm/gres.conf"
export SLURM_CONF=$slurm/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$slurm/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$slurm/log/slurmd.out" 2>&1 &
pids+=($!)

daemon_logs() {
  squeue -o "%i %j %T %r" 2>&1
  tail -n "${TREETRAV_SLURM_LOG_LINES:-5}" "$slurm"/log/*
}
up=0
for ((i = 0; i < limit; ++i)); do
  if [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]]; then up=1; break; fi
  sleep 1
done
if ((up)); then pass "slurmctld and slurmd up on localhost, node idle"; else
  fail "the local Slurm did not come up in ${limit} s" "$(daemon_logs)"
  echo "$passed passed, $failed failed"
  exit 1
fi

# Inputs and the one-process results the jobs must reproduce.
expect_success "generate reference" "$TREETRAV" generate --dist covtype7 -n 4000 --seed 5 -o "$work/ref.h5"
expect_success "generate queries" "$TREETRAV" generate --dist covtype7 -n 2000 --seed 6 -o "$work/q.h5"
expect_success "knn on one process" "$TREETRAV" knn --reference "$work/ref.h5" --queries "$work/q.h5" -k 8 \
  -o "$work/knn-one.h5"
expect_success "pc on one process" "$TREETRAV" pc --reference "$work/ref.h5" --self -r 0.2 -o "$work/pc-one.h5"

# submit NAME EXPECTED_RESULT TEMPLATE SBATCH_OPTIONS... -- COMMAND...: one job, waited for.
submit() {
  local name=$1 template=$2
  shift 2
  local options=()
  while [[ $1 != -- ]]; do options+=("$1"); shift; done
  shift
  run timeout "$limit" sbatch --wait --time=5 --chdir="$work" --output="$work/$name-%j.out" "${options[@]}" \
    "$repo/scripts/slurm/$template" "$@"
  job_output=$(cat "$work/$name"-*.out 2>/dev/null)
  if [[ $status -eq 0 ]]; then pass "$name: job completed, exit 0"; else
    fail "$name: sbatch --wait exit $status" "$err
$job_output
$(daemon_logs)"
  fi
}

# same_results NAME A B: /Results of A and B equal (h5diff compares exactly).
same_results() {
  if h5diff "$2" "$3" /Results /Results >/dev/null 2>&1; then pass "$1"; else fail "$1" "$(h5diff -r "$2" "$3" /Results /Results | head)"; fi
}
one_summary() {
  local lines
  lines=$(grep -c "Wrote" <<<"$job_output")
  if [[ $lines == 1 ]] && grep -q "ranks 2" <<<"$job_output"; then pass "$1"; else fail "$1" "$job_output"; fi
}

submit cpu treetrav-cpu.sbatch --ntasks-per-node=2 --cpus-per-task=1 -- \
  "$TREETRAV" knn --reference "$work/ref.h5" --queries "$work/q.h5" -k 8 -o "$work/knn-slurm.h5"
same_results "CPU template: knn on 2 ranks equals one process" "$work/knn-one.h5" "$work/knn-slurm.h5"
one_summary "CPU template: one summary, naming 2 ranks"

submit gpu treetrav-gpu.sbatch --ntasks-per-node=2 --gpus-per-task=1 --cpus-per-task=1 -- \
  "$TREETRAV" pc --reference "$work/ref.h5" --self -r 0.2 -o "$work/pc-slurm.h5"
same_results "GPU template: pc on 2 ranks equals one process" "$work/pc-one.h5" "$work/pc-slurm.h5"
one_summary "GPU template: one summary, naming 2 ranks"

submit gpu-binding treetrav-gpu.sbatch --ntasks-per-node=2 --gpus-per-task=1 --cpus-per-task=1 -- \
  /bin/sh -c 'echo "task $SLURM_PROCID gpu $CUDA_VISIBLE_DEVICES"'
gpus=$(grep '^task ' <<<"$job_output" | sort)
if [[ $gpus == $'task 0 gpu 0\ntask 1 gpu 1' ]]; then pass "GPU template: each task gets its own GPU"; else
  fail "GPU template: each task gets its own GPU" "$job_output"
fi

echo "$passed passed, $failed failed"
((failed == 0))
