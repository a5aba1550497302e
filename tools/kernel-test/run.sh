#!/usr/bin/env bash
# make kernel-test: Plumb's real Linux HAL against the real kernel's i2c-stub and gpio-sim drivers
# in a QEMU guest, built against libgpiod v1 and against v2. See tools/kernel-test/README.md for
# what it proves and how.
#
#   tools/kernel-test/run.sh          (from any directory; `make kernel-test` runs it)
#
# Installs what is missing, prepares Debian's kernel and libgpiod v2's static library (cached),
# builds a statically linked Plumb and the chip harness against each libgpiod (v1: the host's
# libgpiod-dev 1.6; v2: bookworm-backports' 2.1.3) and plumb-monitor, builds one initramfs per
# variant, boots both under QEMU (TCG, side by side), and checks what came out on the host.
# Prints PASS only when every check passes on both; exits 0 (pass), 1 (fail) or 124 (time limit).
#
# Knobs (environment):
#   KT_EDGES=500          data-ready edges at 100 Hz in Plumb's main run (at least 300)
#   KT_VARIANTS="v1 v2"   which builds to test (both for a PASS; one alone to debug it)
#   KT_TIME_LIMIT=1200    seconds for the whole script (cold: downloads and two release builds)
#   KT_QEMU_TIMEOUT=180   seconds for each guest to boot, test and power off
#   KT_ICOUNT=shift=4,sleep=off   QEMU -icount: the guest's clock counts instructions (2^shift ns
#                         each), so host load cannot delay an edge; "off": the host's clock
#   KT_CACHE=${PLUMB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/plumb}/kernel-test
#                         downloads, kernel, modules, libgpiod v2 (outside the checkout, so a
#                         fresh clone, as CI makes, finds them); run artifacts go to
#                         .build/kernel-test-run
#   SWIFT=swift           the Swift driver (PATH gets /opt/swift/usr/bin first)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH=/opt/swift/usr/bin:$PATH
KT_EDGES=${KT_EDGES:-500}
KT_VARIANTS=${KT_VARIANTS:-v1 v2}
KT_TIME_LIMIT=${KT_TIME_LIMIT:-1200}
KT_QEMU_TIMEOUT=${KT_QEMU_TIMEOUT:-180}
KT_ICOUNT=${KT_ICOUNT:-shift=4,sleep=off}
KT_CACHE=${KT_CACHE:-${PLUMB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/plumb}/kernel-test}
SWIFT=${SWIFT:-swift}
log() { echo "kernel-test: $*" >&2; }

# The time limit: the script runs itself again under timeout(1). timeout puts itself and what it
# runs in a process group of their own and signals that whole group when time is up, so nothing it
# started (swift build, gcc, QEMU) outlives it; Ctrl-C and SIGTERM here are forwarded to it.
if [ -z "${KT_UNDER_TIMEOUT:-}" ]; then
  export KT_UNDER_TIMEOUT=1 KT_EDGES KT_VARIANTS KT_TIME_LIMIT KT_QEMU_TIMEOUT KT_ICOUNT KT_CACHE SWIFT
  timeout --kill-after=15 "$KT_TIME_LIMIT" bash "$here/run.sh" "$@" &
  limited=$!
  trap 'kill -TERM "$limited" 2>/dev/null || true' INT TERM HUP
  status=0
  wait "$limited" || status=$?
  while kill -0 "$limited" 2>/dev/null; do wait "$limited" || status=$?; done
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "kernel-test: FAIL: the time limit of $KT_TIME_LIMIT s was exceeded (KT_TIME_LIMIT)"
    exit 124
  fi
  exit "$status"
fi

case $KT_EDGES in '' | *[!0-9]*) log "KT_EDGES must be a number, not '$KT_EDGES'"; exit 64 ;; esac
[ "$KT_EDGES" -ge 300 ] || { log "KT_EDGES must be at least 300 (the estimator needs 1.5 s to declare rest, and the checks 1 s at rest)"; exit 64; }
variants=()
for v in $KT_VARIANTS; do
  case " ${variants[*]} " in *" $v "*) continue ;; esac
  case $v in v1 | v2) variants+=("$v") ;; *) log "KT_VARIANTS takes v1 and v2, not '$v'"; exit 64 ;; esac
done
[ "${#variants[@]}" -gt 0 ] || { log "KT_VARIANTS is empty: name v1, v2 or both"; exit 64; }

# Run artifacts stay with the checkout (two checkouts may share the cache and run at once).
work=$repo/.build/kernel-test-run
mkdir -p "$work" "$KT_CACHE"
qemu_pids=()
cleanup() {
  local pid
  for pid in "${qemu_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping QEMU (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
}
trap cleanup EXIT
trap 'log "stopped by a signal"; exit 143' INT TERM HUP

fail() { echo "kernel-test: FAIL: $*"; exit 1; }
milliseconds() { echo $(($(date +%s%N) / 1000000)); }
seconds() { printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100)); }
started=$(milliseconds)
step_started=$started
timings=()
step() { # name [what to say]: closes the previous step's timing
  local now
  now=$(milliseconds)
  [ -n "${step_name:-}" ] && timings+=("$step_name $(seconds $((now - step_started)))")
  step_name=$1
  step_started=$now
  [ -n "${2:-}" ] && log "$2"
  return 0
}
has() { # variant: whether KT_VARIANTS names it
  local v
  for v in "${variants[@]}"; do [ "$v" = "$1" ] && return 0; done
  return 1
}

# 1. Host packages: QEMU, cpio, the C toolchain and the static libi2c/libgpiod (v1), python3.
step packages "host packages"
command -v "$SWIFT" >/dev/null 2>&1 || fail "no Swift toolchain: install Swift 6 to /opt/swift or set SWIFT"
"$repo/tools/scripts/install-deps.sh" qemu-system-x86 cpio make bc xz-utils binutils
triplet=$(gcc -dumpmachine)
for f in /usr/lib/$triplet/libi2c.a /usr/lib/$triplet/libgpiod.a; do
  [ -f "$f" ] || fail "$f is missing (libi2c-dev and libgpiod-dev ship the static libraries)"
done
grep -q GPIOD_LINE_BULK_MAX_LINES /usr/include/gpiod.h ||
  fail "/usr/include/gpiod.h is not libgpiod v1 (the v1 variant builds against the host's libgpiod-dev 1.x)"

# 2. Debian's kernel, its modules, busybox, and gpio-sim.ko built out of tree (cached). The
# cache is shared by every checkout on the machine: one preparation at a time (flock).
step kernel "Debian kernel, modules, gpio-sim.ko (cache: $KT_CACHE)"
exec {cache_lock}>"$KT_CACHE/.prepare.lock"
flock "$cache_lock"
"$here/prepare-kernel.sh" "$KT_CACHE"
out=$KT_CACHE/out

# 3. libgpiod v2 for the v2 variant: bookworm-backports' libgpiod-dev, unpacked (cached).
v2_pkgconfig=$KT_CACHE/libgpiod-v2/pkgconfig
v2_root=$KT_CACHE/libgpiod-v2/root/usr
if has v2; then
  step libgpiod-v2 "libgpiod v2 (bookworm-backports)"
  "$here/prepare-libgpiod-v2.sh" "$KT_CACHE"
fi
flock --unlock "$cache_lock"

# 4. Plumb (each variant) and plumb-monitor, statically linked (nothing else goes into the
# initramfs). Each variant has its own scratch path, which also keeps these flags from
# invalidating the debug build `make test` uses. v2's libgpiod.pc comes first on PKG_CONFIG_PATH,
# so its -I and -L come before the host's v1 headers and libgpiod.a.
step swift "static Swift builds: plumb (${variants[*]}), plumb-monitor"
build_log=$work/swift-build.log
: > "$build_log"
swift_build() { # variant product
  local scratch=$repo/.build/kernel-test-$1
  (cd "$repo" && if [ "$1" = v2 ]; then export PKG_CONFIG_PATH=$v2_pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}; fi &&
    "$SWIFT" build -c release --static-swift-stdlib -Xswiftc -static-executable \
      --scratch-path "$scratch" --product "$2") >> "$build_log" 2>&1 ||
    { tail -30 "$build_log"; fail "swift build --product $2 ($1) failed (log: $build_log)"; }
}
for v in "${variants[@]}"; do swift_build "$v" plumb; done
# plumb-monitor runs on the host only (it reads frames, not GPIOs): built once, with the first.
swift_build "${variants[0]}" plumb-monitor
# The linker's notices about glibc functions in the toolchain's static archives (dlopen,
# getpwuid, getaddrinfo...) are expected with -static-executable; so is the one about
# getaddrinfo in UDPLink (--mavlink-udp resolves a host name once at start: a static binary
# needs the system's NSS libraries of the same glibc for that, and refuses a name it cannot
# resolve with a message; numeric addresses need nothing). Any other warning is not.
if grep -E 'warning:' "$build_log" | grep -vE '/swift_static/linux/[A-Za-z_]+\.a\(' \
  | grep -vE "HAL/LinuxHardware/UDPLink\.swift:[0-9]+: warning: Using 'getaddrinfo' in statically linked" >&2; then
  fail "the static build has warnings (above; log: $build_log)"
fi
notices=$(grep -cE 'warning:.*' "$build_log" || true)
[ "$notices" -gt 0 ] && log "($notices linker notices from the toolchain's static archives, expected with -static-executable)"
monitor=$repo/.build/kernel-test-${variants[0]}/release/plumb-monitor

# 5. The chip harness (C, static), against each variant's libgpiod.
step harness "harness (fake-mpu.c: ${variants[*]})"
for v in "${variants[@]}"; do
  mkdir -p "$work/$v"
  flags=()
  [ "$v" = v2 ] && flags=(-I"$v2_root/include" -L"$v2_root/lib/$triplet")
  gcc -O2 -Wall -Wextra -Werror -static "${flags[@]}" -o "$work/$v/fake-mpu" "$here/fake-mpu.c" \
    -lgpiod -li2c -lm || fail "building the harness against libgpiod $v failed"
done

# 6. One initramfs per variant (64 MB each, most of it the static plumb with Foundation's ICU
# data), uncompressed: gzip -1 would cost 1.5 s on the host every run and 1.2e9 guest
# instructions to unpack, to save nothing (the file never leaves this machine).
step initramfs "initramfs (${variants[*]})"
for v in "${variants[@]}"; do
  plumb=$repo/.build/kernel-test-$v/release/plumb
  rootfs=$work/$v/rootfs
  rm -rf "$rootfs"
  mkdir -p "$rootfs"/{bin,lib/modules,test,proc,sys,dev,tmp}
  cp "$here/init.sh" "$rootfs/init"
  cp "$out/busybox" "$rootfs/bin/busybox"
  cp "$out"/{configfs,i2c-dev,i2c-stub,gpio-sim}.ko "$rootfs/lib/modules/"
  if [ ! -f "$work/$v/plumb.stripped" ] || [ "$plumb" -nt "$work/$v/plumb.stripped" ]; then
    strip -o "$work/$v/plumb.stripped" "$plumb"
  fi
  cp "$work/$v/plumb.stripped" "$rootfs/test/plumb"
  cp "$work/$v/fake-mpu" "$here/guest.sh" "$here/kernel-test-board.json" "$rootfs/test/"
  chmod +x "$rootfs/init" "$rootfs/test/guest.sh"
  (cd "$rootfs" && find . | cpio -o -H newc --quiet) > "$work/$v/initramfs.cpio"
  rm -rf "$rootfs"
done

# 7. Boot, one guest per variant, side by side: TCG (KVM is unusable on these machines), one CPU
# each (two lose edges), the PVH vmlinux (no XZ decompression), no NIC (no option ROM). ttyS0
# console, ttyS1 frames, ttyS2 results. With -icount the guest's clock advances with the
# instructions it executes (and jumps over idle time), not with the host's: a busy host, or the
# other guest, slows a run down but cannot delay an edge. cryptomgr.notests skips the kernel's
# crypto self-tests: 57 % of the boot's instructions, and nothing here uses kernel crypto.
icount=()
[ "$KT_ICOUNT" = off ] || icount=(-icount "$KT_ICOUNT")
step guest "guests (${variants[*]}): QEMU TCG ${icount[*]:-(host clock)}, $KT_EDGES edges at 100 Hz"
for v in "${variants[@]}"; do
  rm -f "$work/$v"/{console.log,frames.bin,results.txt,qemu.log}
  timeout --foreground --kill-after=5 "$KT_QEMU_TIMEOUT" \
    qemu-system-x86_64 -accel tcg "${icount[@]}" -m 256 -smp 1 -no-reboot -display none \
    -monitor none -nic none \
    -kernel "$out/vmlinux" -initrd "$work/$v/initramfs.cpio" \
    -append "console=ttyS0 panic=-1 quiet cryptomgr.notests kt.edges=$KT_EDGES kt.variant=$v" \
    -serial "file:$work/$v/console.log" -serial "file:$work/$v/frames.bin" \
    -serial "file:$work/$v/results.txt" </dev/null >"$work/$v/qemu.log" 2>&1 &
  qemu_pids+=($!)
done
guest_failures=()
for i in "${!variants[@]}"; do
  v=${variants[$i]}
  status=0
  wait "${qemu_pids[$i]}" || status=$?
  if [ "$status" -ne 0 ]; then
    tail -25 "$work/$v/console.log" 2>/dev/null | sed "s/^/  $v | /" || true
    sed "s/^/  $v | /" "$work/$v/qemu.log" >&2
    if [ "$status" -eq 124 ]; then
      guest_failures+=("$v: the guest did not power off within $KT_QEMU_TIMEOUT s (KT_QEMU_TIMEOUT; console: $work/$v/console.log)")
    else
      guest_failures+=("$v: QEMU exited with status $status (console: $work/$v/console.log)")
    fi
  fi
done
qemu_pids=()
[ "${#guest_failures[@]}" -eq 0 ] || fail "$(printf '%s; ' "${guest_failures[@]}")"

# 8. The checks, on the host.
step checks
check_status=0
check_args=()
for v in "${variants[@]}"; do
  check_args+=(--variant "$v" "$work/$v" "$repo/.build/kernel-test-$v/release/plumb" "$work/$v/fake-mpu")
done
python3 "$here/check.py" "${check_args[@]}" --monitor "$monitor" \
  --board "$here/kernel-test-board.json" --edges "$KT_EDGES" || check_status=$?
step ""
log "times: $(printf '%s, ' "${timings[@]}")total $(seconds $(($(milliseconds) - started)))"
if [ "$check_status" -ne 0 ]; then
  for v in "${variants[@]}"; do
    echo "kernel-test: $v: the guest's console (last lines):"
    tail -15 "$work/$v/console.log" 2>/dev/null | sed "s/^/  $v | /"
    echo "kernel-test: $v: console: $work/$v/console.log, results: $work/$v/results.txt, frames: $work/$v/frames.bin"
  done
  echo "kernel-test: FAIL"
  exit 1
fi
if [ "${#variants[@]}" -lt 2 ]; then
  echo "kernel-test: PASS (${variants[*]} only: KT_VARIANTS)"
else
  echo "kernel-test: PASS (${variants[*]})"
fi
