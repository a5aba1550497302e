# shellcheck shell=bash
# Shared by the scripts in tools/platforms (sourced, not run): where the caches live, the Debian
# mirror, running as root, and running a command inside the Debian 13 chroot without leaving a
# mount behind. See tools/platforms/README.md.

platforms_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$platforms_dir/../.." && pwd)

# Big downloads and environments live outside the clone, so a fresh clone (CI) reuses them.
PLUMB_CACHE=${PLUMB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/plumb}
# The Debian 13 environment: trixie's swiftlang, libgpiod 2, libi2c 4.4 (debian13.sh prepare).
DEBIAN13_DIR=$PLUMB_CACHE/debian13
DEBIAN13_ROOT=$DEBIAN13_DIR/root
# Inside the chroot: the copy of the tree that is built, and the arm64 sysroot (arm64.sh).
CHROOT_SOURCE=/build/plumb
# shellcheck disable=SC2034
CHROOT_SYSROOT=/opt/sysroot-arm64

tag=${tag:-platforms}
say() { echo "$tag: $*" >&2; }
die() {
  echo "$tag: FAIL: $*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "this step needs root ($1): run as root or install sudo"
  fi
}

# The Debian mirror this machine's apt already uses (deb822 .sources or a one-line sources.list),
# so the chroot fetches from where apt here does; DEBIAN_MIRROR overrides.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    echo "$DEBIAN_MIRROR"
    return
  fi
  local uri
  uri=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' |
    grep -E '/debian/?$' | head -1)
  [ -n "$uri" ] || uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' |
    grep -E '/debian/?$' | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}

# Installs host packages that are missing (apt-get, through sudo when not root).
host_packages() {
  "$repo/tools/scripts/install-deps.sh" "$@"
}

# Runs a bash command line inside the Debian 13 chroot as root, with /proc, /sys, /dev and
# /dev/pts bound from the host in a private mount namespace: the mounts vanish with the command,
# however it ends. The environment is rebuilt from nothing (no host PATH or Swift leaks in) but
# for what pip needs to reach PyPI from here (the host's CA bundle and pip settings) and the
# variables named in CHROOT_PASS.
in_debian13() {
  local command=$1
  [ -x "$DEBIAN13_ROOT/usr/bin/apt-get" ] || die "no Debian 13 environment at $DEBIAN13_ROOT (run tools/platforms/debian13.sh prepare)"
  local environment=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8
    TERM=dumb DEBIAN_FRONTEND=noninteractive)
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    as_root install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$DEBIAN13_ROOT/etc/plumb-host/ca.crt"
    environment+=(PIP_CERT=/etc/plumb-host/ca.crt SSL_CERT_FILE=/etc/plumb-host/ca.crt
      REQUESTS_CA_BUNDLE=/etc/plumb-host/ca.crt)
  fi
  local name
  for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT http_proxy https_proxy \
    no_proxy ${CHROOT_PASS:-}; do
    [ -n "${!name:-}" ] && environment+=("$name=${!name}")
  done
  as_root cp -L /etc/resolv.conf "$DEBIAN13_ROOT/etc/resolv.conf" 2>/dev/null || true
  # CHROOT_BINDS: more "HOST_DIR:DIR_INSIDE" pairs to bind (a cache, say).
  as_root unshare --mount --propagation private -- bash -c '
    root=$1 binds=$2; shift 2
    for d in proc sys dev dev/pts; do mount --bind "/$d" "$root/$d" || exit 70; done
    mount -t tmpfs -o mode=1777 none "$root/dev/shm" 2>/dev/null || true
    for pair in $binds; do
      mkdir -p "${pair%%:*}" "$root${pair#*:}" && mount --bind "${pair%%:*}" "$root${pair#*:}" || exit 70
    done
    exec chroot "$root" /usr/bin/env -i "$@"
  ' bind "$DEBIAN13_ROOT" "${CHROOT_BINDS:-}" "${environment[@]}" bash -c "$command"
}

# Copies the tree (what git would see: no .build, .venv, .cache or .git) into the chroot at
# CHROOT_SOURCE. --checksum leaves files whose content did not change untouched, with their
# old times, so the build inside stays incremental even from a fresh clone.
sync_source_into_debian13() {
  command -v rsync >/dev/null 2>&1 || host_packages rsync
  as_root mkdir -p "$DEBIAN13_ROOT$CHROOT_SOURCE"
  as_root rsync -a --checksum --delete \
    --exclude=/.build --exclude='/.build-*' --exclude=/.venv --exclude=/.cache --exclude=/.git \
    --exclude=/build --exclude='*.profraw' \
    "$repo/" "$DEBIAN13_ROOT$CHROOT_SOURCE/"
}

# One run at a time on the environment (two would race on its apt and its build folder): held
# until the calling script exits.
lock_debian13() {
  as_root mkdir -p "$DEBIAN13_DIR"
  exec 9>>"$DEBIAN13_DIR/lock"
  flock 9
}

# What every platform target needs inside: `make test` (swiftlang, its C toolchain, the
# libraries, python3 for the reference clients), the arm64 cross build and its run (qemu-user;
# lld comes with swiftlang), and the packages (dpkg-dev's dpkg-shlibdeps, which reads the arm64
# run-time libraries' symbol files, so those are installed beside the amd64 ones; arm64 strip;
# help2man for the manual pages; lintian, which reads foreign binaries with binutils-multiarch;
# systemd-analyze), libxml2 for arm64, which the arm64 test bundle's Foundation loads, and
# chromium for `make test`'s browser check of the live page.
packages=(swiftlang libc6-dev libstdc++-14-dev libgpiod-dev libi2c-dev pkg-config make git
  python3 python3-venv python3-dev ca-certificates qemu-user lintian binutils-multiarch
  binutils-aarch64-linux-gnu systemd dpkg-dev fakeroot help2man chromium
  libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 libgpiod3:arm64 libi2c0:arm64 libxml2:arm64)

prepare_debian13() {
  as_root mkdir -p "$DEBIAN13_DIR"
  if [ ! -x "$DEBIAN13_ROOT/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null 2>&1 || host_packages debootstrap
    local mirror
    mirror=$(debian_mirror)
    say "making the Debian 13 environment with debootstrap (trixie, $mirror) in $DEBIAN13_ROOT"
    # Into a fresh folder, renamed only when complete: an interrupted run leaves nothing half made.
    as_root rm -rf "$DEBIAN13_ROOT.new"
    if ! as_root debootstrap --variant=minbase trixie "$DEBIAN13_ROOT.new" "$mirror" \
      >"$DEBIAN13_DIR/debootstrap.log" 2>&1; then
      tail -5 "$DEBIAN13_DIR/debootstrap.log" >&2
      die "debootstrap failed (log: $DEBIAN13_DIR/debootstrap.log)"
    fi
    as_root rm -rf "$DEBIAN13_ROOT"
    as_root mv "$DEBIAN13_ROOT.new" "$DEBIAN13_ROOT"
    as_root rm -f "$DEBIAN13_DIR/packages"
  fi
  # Packages: installed again whenever this list changes.
  local wanted=${packages[*]}
  if [ "$(cat "$DEBIAN13_DIR/packages" 2>/dev/null)" != "$wanted" ]; then
    say "installing in Debian 13: $wanted"
    # No services start in a chroot.
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$DEBIAN13_ROOT/usr/sbin/policy-rc.d" >/dev/null
    as_root chmod 0755 "$DEBIAN13_ROOT/usr/sbin/policy-rc.d"
    if ! in_debian13 "dpkg --add-architecture arm64 && apt-get update -q && apt-get install -y -q --no-install-recommends $wanted" \
      >"$DEBIAN13_DIR/apt.log" 2>&1; then
      tail -5 "$DEBIAN13_DIR/apt.log" >&2
      die "apt-get in Debian 13 failed (log: $DEBIAN13_DIR/apt.log)"
    fi
    echo "$wanted" | as_root tee "$DEBIAN13_DIR/packages" >/dev/null
  fi
}


# What every script does first: the lock, the environment made or updated, the tree copied in.
enter_debian13() {
  lock_debian13
  prepare_debian13
  sync_source_into_debian13
}
