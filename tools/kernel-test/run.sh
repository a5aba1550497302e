#!/usr/bin/env bash
# make kernel-test: Plumb's real Linux HAL against the real kernel's i2c-stub and gpio-sim drivers
# in a QEMU guest. See tools/kernel-test/README.md for what it proves and how.
#
#   tools/kernel-test/run.sh          (from any directory; `make kernel-test` runs it)
#
# Installs what is missing, prepares Debian's kernel (cached), builds a statically linked Plumb,
# plumb-monitor and the chip harness, builds the initramfs, boots it under QEMU (TCG), and checks
# what came out on the host. Prints PASS or FAIL; exits 0 (pass), 1 (fail) or 124 (time limit).
#
# Knobs (environment):
#   KT_EDGES=500          data-ready edges at 100 Hz in Plumb's main run (at least 300)
#   KT_TIME_LIMIT=1200    seconds for the whole script (cold: downloads and a release build)
#   KT_QEMU_TIMEOUT=180   seconds for the guest to boot, test and power off
#   KT_ICOUNT=shift=4,sleep=off   QEMU -icount: the guest's clock counts instructions (2^shift ns
#                         each), so host load cannot delay an edge; "off": the host's clock
#   KT_CACHE=<repo>/.cache/kernel-test   downloads, kernel, modules, run artifacts
#   SWIFT=swift           the Swift driver (PATH gets /opt/swift/usr/bin first)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH=/opt/swift/usr/bin:$PATH
KT_EDGES=${KT_EDGES:-500}
KT_TIME_LIMIT=${KT_TIME_LIMIT:-1200}
KT_QEMU_TIMEOUT=${KT_QEMU_TIMEOUT:-180}
KT_ICOUNT=${KT_ICOUNT:-shift=4,sleep=off}
KT_CACHE=${KT_CACHE:-$repo/.cache/kernel-test}
SWIFT=${SWIFT:-swift}
log() { echo "kernel-test: $*" >&2; }

# The time limit: the script runs itself again under timeout(1). timeout puts itself and what it
# runs in a process group of their own and signals that whole group when time is up, so nothing it
# started (swift build, gcc, QEMU) outlives it; Ctrl-C and SIGTERM here are forwarded to it.
if [ -z "${KT_UNDER_TIMEOUT:-}" ]; then
  export KT_UNDER_TIMEOUT=1 KT_EDGES KT_TIME_LIMIT KT_QEMU_TIMEOUT KT_ICOUNT KT_CACHE SWIFT
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

work=$KT_CACHE/run
scratch=$repo/.build/kernel-test
mkdir -p "$work"
qemu_pid=
cleanup() {
  if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
    log "stopping QEMU (pid $qemu_pid)"
    kill -TERM "$qemu_pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
  fi
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

# 1. Host packages: QEMU, cpio, the C toolchain and the static libi2c/libgpiod, python3 (checks).
step packages "host packages"
command -v "$SWIFT" >/dev/null 2>&1 || fail "no Swift toolchain: install Swift 6 to /opt/swift or set SWIFT"
"$repo/tools/scripts/install-deps.sh" qemu-system-x86 cpio make bc xz-utils binutils
for f in /usr/lib/x86_64-linux-gnu/libi2c.a /usr/lib/x86_64-linux-gnu/libgpiod.a; do
  [ -f "$f" ] || fail "$f is missing (libi2c-dev and libgpiod-dev ship the static libraries)"
done

# 2. Debian's kernel, its modules, busybox, and gpio-sim.ko built out of tree (cached).
step kernel "Debian kernel, modules, gpio-sim.ko (cache: $KT_CACHE)"
"$here/prepare-kernel.sh" "$KT_CACHE"
out=$KT_CACHE/out

# 3. Plumb and plumb-monitor, statically linked (nothing else goes into the initramfs). Their own
# scratch path keeps these flags from invalidating the debug build `make test` uses.
step swift "static Swift build: plumb, plumb-monitor"
build_log=$work/swift-build.log
: > "$build_log"
for product in plumb plumb-monitor; do
  (cd "$repo" && "$SWIFT" build -c release --static-swift-stdlib -Xswiftc -static-executable \
    --scratch-path "$scratch" --product "$product") >> "$build_log" 2>&1 ||
    { tail -30 "$build_log"; fail "swift build --product $product failed (log: $build_log)"; }
done
# The linker's notices about glibc functions in the toolchain's static archives (dlopen,
# getpwuid, getaddrinfo...) are expected with -static-executable; any other warning is not.
if grep -E 'warning:' "$build_log" | grep -vE '/swift_static/linux/[A-Za-z_]+\.a\(' >&2; then
  fail "the static build has warnings (above; log: $build_log)"
fi
notices=$(grep -cE 'warning:.*' "$build_log" || true)
[ "$notices" -gt 0 ] && log "($notices linker notices from the toolchain's static archives, expected with -static-executable)"
plumb=$scratch/release/plumb
monitor=$scratch/release/plumb-monitor

# 4. The chip harness (C, static).
step harness "harness (fake-mpu.c)"
gcc -O2 -Wall -Wextra -Werror -static -o "$work/fake-mpu" "$here/fake-mpu.c" -lgpiod -li2c -lm ||
  fail "building the harness failed"

# 5. The initramfs (64 MB, most of it the static plumb with Foundation's ICU data), uncompressed:
# gzip -1 would cost 1.5 s on the host every run and 1.2e9 guest instructions to unpack, to save
# nothing (the file never leaves this machine).
step initramfs "initramfs"
rootfs=$work/rootfs
rm -rf "$rootfs"
mkdir -p "$rootfs"/{bin,lib/modules,test,proc,sys,dev,tmp}
cp "$here/init.sh" "$rootfs/init"
cp "$out/busybox" "$rootfs/bin/busybox"
cp "$out"/{configfs,i2c-dev,i2c-stub,gpio-sim}.ko "$rootfs/lib/modules/"
if [ ! -f "$work/plumb.stripped" ] || [ "$plumb" -nt "$work/plumb.stripped" ]; then
  strip -o "$work/plumb.stripped" "$plumb"
fi
cp "$work/plumb.stripped" "$rootfs/test/plumb"
cp "$work/fake-mpu" "$here/guest.sh" "$here/kernel-test-board.json" "$rootfs/test/"
chmod +x "$rootfs/init" "$rootfs/test/guest.sh"
(cd "$rootfs" && find . | cpio -o -H newc --quiet) > "$work/initramfs.cpio"
rm -rf "$rootfs"

# 6. Boot: TCG (KVM is unusable on these machines), one CPU (two lose edges), the PVH vmlinux
# (no XZ decompression), no NIC (no option ROM). ttyS0 console, ttyS1 frames, ttyS2 results.
# With -icount the guest's clock advances with the instructions it executes (and jumps over idle
# time), not with the host's: a busy host slows the run down but cannot delay an edge.
# cryptomgr.notests skips the kernel's crypto self-tests: 57 % of the boot's instructions, and
# nothing here uses kernel crypto.
icount=()
[ "$KT_ICOUNT" = off ] || icount=(-icount "$KT_ICOUNT")
step guest "guest: QEMU TCG ${icount[*]:-(host clock)}, $KT_EDGES edges at 100 Hz"
rm -f "$work"/{console.log,frames.bin,results.txt}
timeout --foreground --kill-after=5 "$KT_QEMU_TIMEOUT" \
  qemu-system-x86_64 -accel tcg "${icount[@]}" -m 256 -smp 1 -no-reboot -display none \
  -monitor none -nic none \
  -kernel "$out/vmlinux" -initrd "$work/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 quiet cryptomgr.notests kt.edges=$KT_EDGES" \
  -serial "file:$work/console.log" -serial "file:$work/frames.bin" \
  -serial "file:$work/results.txt" </dev/null >"$work/qemu.log" 2>&1 &
qemu_pid=$!
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=
if [ "$qemu_status" -ne 0 ]; then
  tail -25 "$work/console.log" 2>/dev/null || true
  cat "$work/qemu.log" >&2
  [ "$qemu_status" -eq 124 ] && fail "the guest did not power off within $KT_QEMU_TIMEOUT s (KT_QEMU_TIMEOUT; console: $work/console.log)"
  fail "QEMU exited with status $qemu_status (console: $work/console.log)"
fi

# 7. The checks, on the host.
step checks
check_status=0
python3 "$here/check.py" --run "$work" --monitor "$monitor" --plumb "$plumb" \
  --board "$here/kernel-test-board.json" --edges "$KT_EDGES" || check_status=$?
step ""
log "times: $(printf '%s, ' "${timings[@]}")total $(seconds $(($(milliseconds) - started)))"
if [ "$check_status" -ne 0 ]; then
  echo "kernel-test: the guest's console (last lines):"
  tail -15 "$work/console.log" 2>/dev/null | sed 's/^/  | /'
  echo "kernel-test: console: $work/console.log, results: $work/results.txt, frames: $work/frames.bin"
  echo "kernel-test: FAIL"
  exit 1
fi
echo "kernel-test: PASS"
