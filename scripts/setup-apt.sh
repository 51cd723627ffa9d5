#!/usr/bin/env bash
# Installs the Debian 12 packages treetrav builds against (skipped when present).
#   scripts/setup-apt.sh          build and test dependencies
#   scripts/setup-apt.sh source   also a deb-src entry, for `apt-get source trilinos`
set -euo pipefail

packages=(
  build-essential cmake patch dpkg-dev
  libhdf5-dev hdf5-tools
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  slurm-wlm munge
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev
  python3-h5py python3-numpy python3-matplotlib
  python3-venv python3-dev
)
sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

need_update=0
if [[ ${1:-} == source ]] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # A fresh machine has no deb-src entry: derive one from the existing Debian
  # entry (same suites and components), so no mirror name lives in this repo.
  debian=/etc/apt/sources.list.d/debian.sources
  if [[ -f $debian ]]; then
    sed -e 's/^Types: deb$/Types: deb-src/' "$debian" | "${sudo[@]}" tee /etc/apt/sources.list.d/treetrav-deb-src.sources >/dev/null
  else
    grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | "${sudo[@]}" tee /etc/apt/sources.list.d/treetrav-deb-src.list >/dev/null
  fi
  need_update=1
fi

if ((${#missing[@]} || need_update)); then
  echo "[setup-apt] installing: ${missing[*]:-(deb-src entry only)}" >&2
  "${sudo[@]}" apt-get update -qq >&2
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
fi
