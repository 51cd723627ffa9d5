#!/usr/bin/env bash
# The CPU seconds of each nvcc phase of one translation unit, for units too
# long to finish in one sitting on the device machine:
#   scripts/device/nvcc-phases.sh LOG COMMAND...
# COMMAND is the one a build runs for the object (nvcc_wrapper or nvcc ...
# -c SOURCE -o OBJECT). nvcc's own steps (its --dryrun) run one by one, except
# that the host compiler's pass starts beside the device compiler's (cicc,
# then ptxas) instead of after them: it needs cudafe++'s output and, at its
# end, the host stubs cicc writes; a placeholder stands in for those (a few
# hundred KB of registration code), so its time is a lower bound. LOG gets
# "phase user+sys_s wall_s" as each step ends; a step still running when the
# sitting ends shows in `ps -o times,args` (ps-running.txt of the caller).
set -u
log=$1
shift
# Without the dependency-file flags (-MD -MT X -MF X): nvcc_wrapper makes
# those a second nvcc run, which --show would print beside the compile.
cmd=()
while (($# > 0)); do
  case $1 in
  -MD | -MMD) ;;
  -MT | -MF | -MQ) shift ;;
  *) cmd+=("$1") ;;
  esac
  shift
done
[[ ${cmd[0]} == *nvcc_wrapper ]] && mapfile -t cmd < <("${cmd[@]}" --show | xargs -n 1 printf '%s\n')
echo "command: ${cmd[*]}" >"$log.command"
dir=$(mktemp -d /tmp/nvcc-phases.XXXXXX)
"${cmd[@]}" --dryrun --keep --keep-dir "$dir" 2>"$dir/dryrun.txt" >/dev/null
: >"$log"

# One dryrun step, timed: `step NAME LINE`.
step() {
  local name=$1 line=$2 t0=$SECONDS
  /usr/bin/time -f "%U %S" -o "$dir/$name.time" bash -c "cd '$dir' && $setup $line" \
    >"$dir/$name.out" 2>&1
  local rc=$?
  read -r user sys <"$dir/$name.time" 2>/dev/null
  echo "$name $(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN {printf "%.1f", u + s}') $((SECONDS - t0)) rc=$rc" >>"$log"
  return $rc
}

# nvcc's environment lines (NAME=value) go before every step.
setup=
steps=()
while IFS= read -r line; do
  line=${line#\#\$ }
  if [[ $line =~ ^[A-Za-z_][A-Za-z_0-9]*= ]]; then
    # The steps come expanded but for $CICC_PATH and the tools' own lookups;
    # the lists (INCLUDES="-I..." "...") are not needed.
    [[ $line =~ ^[A-Za-z_][A-Za-z_0-9]*=[^\ \"]*$ ]] && setup+="export $line; "
  else
    steps+=("$line")
  fi
done < <(grep '^#\$ ' "$dir/dryrun.txt")

host= device=()
n=0
for line in "${steps[@]}"; do
  n=$((n + 1))
  case $line in
  *cicc* | *ptxas* | *fatbinary*) device+=("$line") ;;
  *" -c -x c++"* | *" -c "*cudafe1.cpp*) host=$line ;;
  *) step "pre$n" "$line" || exit 1 ;;
  esac
done
[[ -n $host ]] || { echo "no host step in $dir/dryrun.txt" >>"$log"; exit 1; }

# The host pass beside the device's, on a copy with placeholder stubs.
(
  mkdir -p "$dir/host"
  cp "$dir"/*.cudafe1.cpp "$dir/host/"
  for f in "$dir"/*.cudafe1.cpp; do
    printf '#include "crt/host_runtime.h"\n' >"$dir/host/$(basename "${f%.cpp}").stub.c"
  done
  line=${host//$dir\//$dir/host/}
  line=$(sed -E 's/ -o ("[^"]*"|[^ ]*)/ -o host-placeholder.o/' <<<"$line")
  dir=$dir/host step host-placeholder "$line"
) &
for line in "${device[@]}"; do
  name=$(awk '{print $1}' <<<"$line" | sed 's|.*/||; s|"||g')
  step "$name" "$line" || break
done
wait
echo "done $dir" >>"$log"
