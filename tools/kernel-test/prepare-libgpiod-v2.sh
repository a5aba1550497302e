#!/usr/bin/env bash
# Fetches (and caches) libgpiod v2's development files for the kernel test's v2 variant: Debian's
# libgpiod-dev from bookworm-backports (2.1.3), built against bookworm's glibc, so its libgpiod.a
# links into a -static-executable Swift build on this Debian 12 host (trixie's 2.2.1 is built
# against glibc 2.41 and may not). See tools/kernel-test/README.md.
#
#   prepare-libgpiod-v2.sh CACHE_DIR
#
# Leaves in CACHE_DIR/libgpiod-v2: root/ (the package unpacked: usr/include/gpiod.h,
# usr/lib/<triplet>/libgpiod.a; no shared library) and pkgconfig/libgpiod.pc pointing at it, for
# PKG_CONFIG_PATH (its -I and -L then come before the host's v1 files). apt runs with a private
# state (its own sources list, lists and cache under CACHE_DIR/libgpiod-v2/apt): the host's apt
# configuration is not touched. A prepared copy is used as it is; delete CACHE_DIR/libgpiod-v2 to
# fetch again. KT_DEBIAN_MIRROR overrides the mirror (default: the one the host's apt sources use).
set -euo pipefail

cache=${1:?usage: prepare-libgpiod-v2.sh CACHE_DIR}
dir=$cache/libgpiod-v2
log() { echo "kernel-test: $*" >&2; }
triplet=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
root=$dir/root
pc=$dir/pkgconfig/libgpiod.pc
if [ -s "$pc" ] && [ -f "$root/usr/lib/$triplet/libgpiod.a" ] && [ -f "$root/usr/include/gpiod.h" ]; then
  exit 0
fi

# The Debian mirror the host already uses: a deb822 stanza for bookworm, else any non-security
# one, else a one-line sources.list entry, else Debian's redirector.
mirror_of_host() {
  local m=""
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    m=$(awk 'BEGIN { RS = ""; FS = "\n" }
      /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); print u[2]; exit } }' \
      /etc/apt/sources.list.d/*.sources)
    [ -n "$m" ] || m=$(awk '/^URIs:/ && !/security/ { print $2; exit }' /etc/apt/sources.list.d/*.sources)
  fi
  [ -n "$m" ] || m=$(awk '/^deb / && !/security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
    /etc/apt/sources.list 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}
mirror=${KT_DEBIAN_MIRROR:-$(mirror_of_host)}

rm -rf "$dir"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/dl" "$root" "$dir/pkgconfig"
echo "deb $mirror bookworm-backports main" > "$dir/apt/sources.list"
apt=(-q -o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache")
log "downloading libgpiod-dev from bookworm-backports ($mirror)"
apt-get "${apt[@]}" update > "$dir/apt/update.log" 2>&1 ||
  { cat "$dir/apt/update.log" >&2; log "apt-get update (bookworm-backports, private state) failed"; exit 1; }
(cd "$dir/dl" && apt-get "${apt[@]}" download libgpiod-dev/bookworm-backports) > "$dir/apt/download.log" 2>&1 ||
  { cat "$dir/apt/download.log" >&2; log "apt-get download libgpiod-dev/bookworm-backports failed"; exit 1; }
deb=$(ls "$dir"/dl/libgpiod-dev_*.deb)
dpkg -x "$deb" "$root"
# Static linking only: no shared library may be found through these files (the .so links point
# into libgpiod3, which is not unpacked).
rm -f "$root/usr/lib/$triplet"/*.so "$root/usr/lib/$triplet"/*.so.*
[ -f "$root/usr/lib/$triplet/libgpiod.a" ] || { log "$deb has no usr/lib/$triplet/libgpiod.a"; exit 1; }
if grep -q GPIOD_LINE_BULK_MAX_LINES "$root/usr/include/gpiod.h"; then
  log "$deb's gpiod.h is the v1 API (it defines GPIOD_LINE_BULK_MAX_LINES)"
  exit 1
fi
version=$(dpkg-deb -f "$deb" Version)
upstream=${version#*:}
upstream=${upstream%%-*}
cat > "$pc.tmp" <<EOF
# libgpiod v2 $version from bookworm-backports, unpacked for the kernel test (static only).
prefix=$root/usr
includedir=\${prefix}/include
libdir=\${prefix}/lib/$triplet

Name: libgpiod
Description: libgpiod v2 (kernel test)
Version: $upstream
Libs: -L\${libdir} -lgpiod
Cflags: -I\${includedir}
EOF
mv "$pc.tmp" "$pc"
rm -rf "$dir/apt/lists" "$dir/apt/cache"
log "libgpiod-dev $version ready in $dir"
