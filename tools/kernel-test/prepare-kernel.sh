#!/usr/bin/env bash
# Downloads (and caches) Debian's kernel, its modules and headers, busybox, and builds gpio-sim.ko
# out of tree, for the kernel-level tests (see tools/kernel-test/README.md).
#
#   prepare-kernel.sh CACHE_DIR
#
# Leaves in CACHE_DIR/out: vmlinux (uncompressed, PVH-bootable), configfs.ko, i2c-dev.ko,
# i2c-stub.ko, gpio-sim.ko, busybox, config and kernel-version. The downloads stay in
# CACHE_DIR/dl (about 215 MB). Facts behind each step: tools/kernel-test/README.md.
set -euo pipefail

cache=${1:?usage: prepare-kernel.sh CACHE_DIR}
mkdir -p "$cache/dl" "$cache/out"
cd "$cache"
log() { echo "kernel-test: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
outputs=(vmlinux configfs.ko i2c-dev.ko i2c-stub.ko gpio-sim.ko busybox)

# A prepared kernel is used as it is, without asking apt (which takes seconds and would move to a
# newer kernel whenever Debian publishes one): delete CACHE_DIR/out, or set KERNEL_TEST_KVER, to
# change kernels.
if [ -f out/kernel-version ]; then
  complete=1
  for f in "${outputs[@]}"; do [ -s "out/$f" ] || complete=0; done
  cached=$(cut -d' ' -f1 out/kernel-version)
  if [ "$complete" = 1 ] && { [ -z "${KERNEL_TEST_KVER:-}" ] || [ "$KERNEL_TEST_KVER" = "$cached" ]; }; then
    exit 0
  fi
fi

# The kernel ABI: what Debian's linux-image-amd64 depends on now (the mirror keeps only the
# current one). Override with KERNEL_TEST_KVER=6.1.0-57-amd64.
kver=${KERNEL_TEST_KVER:-$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')}
[ -n "$kver" ] || { log "cannot tell Debian's kernel version (apt-cache depends linux-image-amd64 failed); run 'apt-get update' or set KERNEL_TEST_KVER"; exit 1; }
version=$(apt-cache show "linux-image-$kver" 2>/dev/null | awk '/^Version:/{print $2; exit}')
[ -n "$version" ] || { log "no package linux-image-$kver in the apt lists; run 'apt-get update'"; exit 1; }
series=${kver%%-*}; series=${series%.*}   # 6.1.0-57-amd64 -> 6.1
common=${kver%-amd64}-common

# Everything in out/ belongs to one kernel version: start it afresh.
rm -rf out && mkdir out
log "preparing kernel $kver ($version) in $cache"

fetch() { # package [version]: into dl/, unless that exact version is there (.deb file names
  # spell an epoch's ':' as '%3a'); older versions of the same package are removed.
  local pkg=$1 ver=${2:-}
  local pattern="${pkg}_${ver:+${ver//:/%3a}_}*.deb"
  if ! compgen -G "dl/$pattern" >/dev/null; then
    rm -f dl/"${pkg}"_*.deb
    log "downloading $pkg${ver:+ $ver}"
    (cd dl && apt-get download -q "$pkg${ver:+=$ver}" >/dev/null 2>&1) || {
      log "apt-get download $pkg failed; refreshing the package lists"; as_root apt-get update -q >/dev/null 2>&1 || true
      (cd dl && apt-get download -q "$pkg${ver:+=$ver}") ; }
  fi
}
fetch "linux-image-$kver" "$version"
fetch "linux-headers-$kver" "$version"
fetch "linux-headers-$common" "$version"
fetch "linux-kbuild-$series" "$version"
fetch "linux-source-$series" "$version"
fetch busybox-static

if [ ! -f out/vmlinux ]; then
  log "extracting the kernel and modules"
  rm -rf x && mkdir x
  dpkg-deb --fsys-tarfile dl/linux-image-"$kver"_*.deb | tar -x -C x ./boot ./lib/modules 2>/dev/null || \
    dpkg-deb --fsys-tarfile dl/linux-image-"$kver"_*.deb | tar -x -C x
  mods=$(ls -d x/lib/modules/*/kernel 2>/dev/null | head -1)
  [ -n "$mods" ] || mods=$(ls -d x/usr/lib/modules/*/kernel | head -1)
  for m in fs/configfs/configfs.ko drivers/i2c/i2c-dev.ko drivers/i2c/i2c-stub.ko; do
    f="$mods/$m"; [ -f "$f" ] || { [ -f "$f.xz" ] && xz -dc "$f.xz" > "$f"; }
    cp "$f" out/
  done
  # Boot the uncompressed ELF through its PVH note: decompressing the XZ bzImage under TCG costs ~7 s.
  vmlinuz=$(ls x/boot/vmlinuz-*)
  off=$(LC_ALL=C grep -abo -m1 -P '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
  tail -c +$((off + 1)) "$vmlinuz" | xz -dc > out/vmlinux.tmp 2>/dev/null || true
  [ -s out/vmlinux.tmp ] || { log "could not unpack vmlinux from $vmlinuz"; exit 1; }
  mv out/vmlinux.tmp out/vmlinux
  cp x/boot/config-* out/config
  rm -rf x/lib x/usr
fi

if [ ! -f out/busybox ]; then
  rm -rf bb && mkdir bb
  dpkg-deb --fsys-tarfile dl/busybox-static_*.deb | tar -x -C bb ./bin/busybox
  cp bb/bin/busybox out/busybox
  rm -rf bb
fi

if [ ! -f out/gpio-sim.ko ]; then
  log "building gpio-sim.ko out of tree (Debian's kernel has CONFIG_GPIO_SIM unset)"
  rm -rf kh gpiosim && mkdir kh gpiosim
  for p in linux-headers-"$kver" linux-headers-"$common" linux-kbuild-"$series"; do dpkg -x dl/"$p"_*.deb kh; done
  # The amd64 headers' Makefile includes the common tree by an absolute path; point it here.
  sed -i "s#^include /usr/src/#include $PWD/kh/usr/src/#" kh/usr/src/linux-headers-"$kver"/Makefile
  # Only three files are needed from the source package, at exactly the kernel's version
  # (gpio-sim reads gpiolib internals).
  dpkg-deb --fsys-tarfile dl/linux-source-"$series"_*.deb | tar -x -O ./usr/src/linux-source-"$series".tar.xz | xz -dc |
    tar -x -C gpiosim linux-source-"$series"/drivers/gpio/gpio-sim.c linux-source-"$series"/drivers/gpio/gpiolib.h linux-source-"$series"/kernel/irq/irq_sim.c
  src=gpiosim/linux-source-"$series"
  cp "$src"/drivers/gpio/gpio-sim.c gpiosim/gpio-sim-core.c
  cp "$src"/drivers/gpio/gpiolib.h gpiosim/gpiolib.h
  # irq_sim is not built into Debian's kernel either; compile it into the module. irq_to_desc is
  # not exported to modules, so use generic_handle_irq instead (same effect for a simple IRQ).
  sed 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$src"/kernel/irq/irq_sim.c > gpiosim/irq_sim.c
  grep -q 'generic_handle_irq(irqnum);' gpiosim/irq_sim.c || { log "the irq_sim.c patch did not apply to this kernel's source"; exit 1; }
  printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-core.o irq_sim.o\n' > gpiosim/Kbuild
  make -s -C kh/usr/src/linux-headers-"$kver" M="$PWD/gpiosim" modules >gpiosim/build.log 2>&1 || { tail -20 gpiosim/build.log >&2; log "building gpio-sim.ko failed"; exit 1; }
  cp gpiosim/gpio-sim.ko out/
fi
echo "$kver $version" > out/kernel-version
log "kernel $kver ready"
