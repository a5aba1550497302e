#!/bin/busybox sh
# /init of the kernel-test guest: mounts the pseudo file systems, loads i2c-dev, i2c-stub (one
# register file at 0x68) and gpio-sim (one chip "plumb-imu" with one line "MPU_INT"), then runs
# /test/guest.sh and powers off. Everything it prints goes to the first serial port (the host's
# console log); Plumb's frames go to the second (ttyS1).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc none /proc
mount -t sysfs none /sys
mount -t devtmpfs none /dev
mount -t tmpfs none /tmp
echo "guest: kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime) s"
fail() { echo "guest: SETUP FAIL: $*"; echo "KERNEL-TEST RESULT: FAIL"; poweroff -f; }
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
for d in /sys/class/i2c-dev/i2c-*; do
  [ "$(cat $d/name)" = "SMBus stub driver" ] && export STUB_BUS=/dev/$(basename $d)
done
[ -n "$STUB_BUS" ] || fail "no i2c-stub bus"
echo "guest: i2c-stub at $STUB_BUS, gpio-sim $SIM_CHIP (label plumb-imu), pull $SIM_PULL"
if [ -x /test/guest.sh ]; then
  /test/guest.sh
else
  echo "KERNEL-TEST RESULT: PASS (setup only)"
fi
poweroff -f
