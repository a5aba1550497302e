#!/usr/bin/env bash
# Installs the Debian packages Plumb builds against, when they are missing, and says what it
# installs. Used by `make run`, `make test` and CI on a fresh Debian 12 machine.
#
#   tools/scripts/install-deps.sh [extra-package ...]
#
# Always: libi2c-dev (libi2c, i2c/smbus.h), libgpiod-dev (gpiod.h: libgpiod 1.6, the v1 API, on
# Debian 12; 2.2, the v2 API, on Debian 13 — Plumb builds against either), pkg-config, the C
# toolchain pieces SwiftPM links with (the C++ library's headers of the system's gcc: 12 on
# Debian 12, 14 on Debian 13), and python3 with venv for the test-side reference clients
# (pymavlink, allantools). Runs apt-get as root, or through sudo.
set -euo pipefail

gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1 || true)
if [ -z "$gcc_major" ]; then
  case $(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") in
    trixie) gcc_major=14 ;;
    *) gcc_major=12 ;;
  esac
fi
packages=(libi2c-dev libgpiod-dev pkg-config gcc libc6-dev "libstdc++-$gcc_major-dev" python3 python3-venv "$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "plumb: these Debian packages are missing: ${missing[*]}" >&2
  echo "plumb: run as root, or install sudo, or install them yourself: apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "plumb: installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/plumb-apt.log 2>&1; then
  echo "plumb: apt-get install failed; refreshing the package lists and trying again" >&2
  "${sudo[@]}" apt-get update >>/tmp/plumb-apt.log 2>&1 || true
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/plumb-apt.log 2>&1; then
    echo "plumb: could not install ${missing[*]}; apt-get's output is in /tmp/plumb-apt.log" >&2
    tail -n 5 /tmp/plumb-apt.log >&2
    exit 1
  fi
fi
