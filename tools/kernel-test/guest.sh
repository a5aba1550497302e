#!/bin/sh
# The kernel-level test inside the QEMU guest (busybox sh), run by /init once i2c-stub and gpio-sim
# are up. /init exports STUB_BUS (/dev/i2c-N of i2c-stub), SIM_CHIP, SIM_PULL (the gpio-sim line's
# `pull` file). Everything the host checks goes to the third serial port (/dev/ttyS2) as "KT-..."
# lines at the end; Plumb's frames go to the second (/dev/ttyS1); people read the console (ttyS0).
# /test/plumb and /test/fake-mpu are one variant's (kt.variant=v1 or v2: built against libgpiod
# v1 or v2); the host boots one guest per variant.
#
# Steps: 1. which clock the kernel stamps gpio-sim edges with (fake-mpu reads one event itself);
# 2. Plumb's main run: fake-mpu plays the chip and raises kt.edges edges at 100 Hz from Plumb's
# "STATUS=configured: ..." on (READY=1 follows once the estimator has converged); 3. the error
# paths: Plumb pointed at 0x69 (no chip there), at a line that does not exist (by name and by
# offset), at a chip that does not exist (by label, path and name), and at a line another
# consumer holds.
PATH=/bin
results=/tmp/results.txt
edges=$(sed -n 's/.*kt\.edges=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
edges=${edges:-500}
variant=$(sed -n 's/.*kt\.variant=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
: > $results
say() { echo "$*" >> $results; }

say "KT-GUEST kernel=$(uname -r) stub=$STUB_BUS chip=$SIM_CHIP pull=$SIM_PULL edges=$edges variant=$variant"
say "KT-UPTIME start $(cut -d' ' -f1 /proc/uptime)"

# The board: the committed kernel-test board with i2c-stub's bus.
sed "s#\"bus\": \"[^\"]*\"#\"bus\": \"$STUB_BUS\"#" /test/kernel-test-board.json > /tmp/board.json

# 1. The clock of the kernel's edge timestamps.
echo "guest: probing the edge timestamp clock"
/test/fake-mpu probe-clock --chip plumb-imu --line MPU_INT --pull "$SIM_PULL" >> $results 2>&1

# 2. Plumb against the emulated chip. --duration is only a safety net: fake-mpu stops Plumb with
# SIGTERM one period after the last edge.
echo "guest: plumb run with $edges edges at 100 Hz"
/test/fake-mpu run --bus "$STUB_BUS" --pull "$SIM_PULL" --edges "$edges" \
  --notify /tmp/plumb-notify.sock --plumb-stderr /tmp/plumb-main.err -- \
  /test/plumb run --board /tmp/board.json --duration $((edges / 100 + 60)) >> $results 2>&1
say "KT-HARNESS-EXIT $?"
cat /tmp/plumb-main.err
sed 's/^/KT-PLUMB-STDERR main /' /tmp/plumb-main.err >> $results

# 3. Error paths: each must fail with the documented message and exit status.
error_case() { # name sed-expression [command that runs plumb, e.g. a line holder]
  name=$1
  sed "$2" /tmp/board.json > /tmp/board-$name.json
  shift 2
  "$@" /test/plumb run --board /tmp/board-$name.json --serial /tmp/frames-$name.bin \
    --duration 2 2> /tmp/plumb-$name.err
  rc=$?
  echo "guest: error case $name: exit $rc: $(tail -1 /tmp/plumb-$name.err)"
  say "KT-CASE $name exit=$rc"
  sed "s/^/KT-PLUMB-STDERR $name /" /tmp/plumb-$name.err >> $results
}
error_case missing-chip 's#"address": "0x68"#"address": "0x69"#'
error_case missing-line-name 's#"line": "MPU_INT"#"line": "NO_SUCH_LINE"#'
error_case missing-line-offset 's#"line": "MPU_INT"#"line": 7#'
error_case missing-chip-label 's#"chip": "plumb-imu"#"chip": "no-such-chip"#'
error_case missing-chip-path 's#"chip": "plumb-imu"#"chip": "/dev/gpiochip9"#'
error_case missing-chip-name 's#"chip": "plumb-imu"#"chip": "gpiochip9"#'
error_case busy-line 's#^##' /test/fake-mpu hold-line --chip plumb-imu --line MPU_INT --

say "KT-UPTIME end $(cut -d' ' -f1 /proc/uptime)"
say "KT-REALTIME $(date +%s)"
say "KT-END"
stty -F /dev/ttyS2 raw -echo 2>/dev/null
cat $results > /dev/ttyS2
echo "guest: done"
