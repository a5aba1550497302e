#!/bin/busybox sh
# /init of the kernel-test guest: mounts the pseudo file systems, loads i2c-dev, i2c-stub (one
# register file at 0x68) and gpio-sim (one chip "plumb-imu" with one line "MPU_INT"), then runs
# /test/guest.sh and powers off. Everything it prints goes to the first serial port (the host's
# console log); Plumb's frames go to the second (ttyS1), the results for the host to the third
# (ttyS2). Modules are loaded with insmod in dependency order: Debian's linux-image has no
# modules.dep (depmod runs at install time).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc none /proc
mount -t sysfs none /sys
mount -t devtmpfs none /dev
mount -t tmpfs none /tmp
echo "guest: kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime) s"
fail() {
  echo "guest: SETUP FAIL: $*"
  stty -F /dev/ttyS2 raw -echo 2>/dev/null
  printf 'KT-SETUP-FAIL %s\nKT-END\n' "$*" > /dev/ttyS2
  poweroff -f
}
insmod /lib/modules/configfs.ko || fail "insmod configfs"
insmod /lib/modules/gpio-sim.ko || fail "insmod gpio-sim"
insmod /lib/modules/i2c-dev.ko || fail "insmod i2c-dev"
insmod /lib/modules/i2c-stub.ko chip_addr=0x68 || fail "insmod i2c-stub"
mount -t configfs none /sys/kernel/config || fail "mount configfs"
g=/sys/kernel/config/gpio-sim/plumb
mkdir $g $g/bank0 $g/bank0/line0 || fail "gpio-sim configfs"
echo plumb-imu > $g/bank0/label
echo 1 > $g/bank0/num_lines
echo MPU_INT > $g/bank0/line0/name
echo 1 > $g/live || fail "gpio-sim live"
export SIM_DEV=$(cat $g/dev_name) SIM_CHIP=$(cat $g/bank0/chip_name)
export SIM_PULL=/sys/devices/platform/$SIM_DEV/$SIM_CHIP/sim_gpio0/pull
[ -w "$SIM_PULL" ] || fail "no gpio-sim pull file $SIM_PULL"
for d in /sys/class/i2c-dev/i2c-*; do
  [ "$(cat $d/name)" = "SMBus stub driver" ] && export STUB_BUS=/dev/$(basename $d)
done
[ -n "$STUB_BUS" ] || fail "no i2c-stub bus"
echo "guest: i2c-stub at $STUB_BUS, gpio-sim $SIM_CHIP (label plumb-imu), uptime $(cut -d' ' -f1 /proc/uptime) s"
if [ -x /test/guest.sh ]; then
  /test/guest.sh
else
  fail "no /test/guest.sh"
fi
poweroff -f
