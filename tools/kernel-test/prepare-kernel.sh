#!/usr/bin/env bash
# Downloads (and caches) Debian's kernel, its modules and headers, busybox, and builds gpio-sim.ko
# out of tree, for the kernel-level tests (see tools/kernel-test/README.md).
#
#   prepare-kernel.sh CACHE_DIR
#
# Leaves in CACHE_DIR/out: vmlinux (uncompressed, PVH-bootable), configfs.ko, i2c-dev.ko,
# i2c-stub.ko, gpio-sim.ko, busybox, and kernel-version. Every step is skipped when its output
# exists. Facts behind each step: ../shared/notes/kernel-level-tests.md.
set -euo pipefail

cache=${1:?usage: prepare-kernel.sh CACHE_DIR}
mkdir -p "$cache/dl" "$cache/out"
cd "$cache"
log() { echo "kernel-test: $*" >&2; }

# The kernel ABI: what Debian's linux-image-amd64 depends on now (the mirror keeps only the
# current one). Override with KERNEL_TEST_KVER=6.1.0-57-amd64.
kver=${KERNEL_TEST_KVER:-$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')}
[ -n "$kver" ] || { log "cannot tell Debian's kernel version (apt-cache depends linux-image-amd64 failed); run 'apt-get update' or set KERNEL_TEST_KVER"; exit 1; }
version=$(apt-cache show "linux-image-$kver" 2>/dev/null | awk '/^Version:/{print $2; exit}')
[ -n "$version" ] || { log "no package linux-image-$kver in the apt lists; run 'apt-get update'"; exit 1; }
series=${kver%%-*}; series=${series%.*}   # 6.1.0-57-amd64 -> 6.1
common=${kver%-amd64}-common

if [ -f out/kernel-version ] && [ "$(cat out/kernel-version)" = "$kver $version" ] && [ -f out/gpio-sim.ko ] && [ -f out/vmlinux ]; then
  exit 0
fi
rm -f out/kernel-version
log "preparing kernel $kver ($version) in $cache"

fetch() { # package [version]
  local pkg=$1 ver=${2:-}
  if ! ls dl/"${pkg}"_*.deb >/dev/null 2>&1; then
    log "downloading $pkg${ver:+ $ver}"
    (cd dl && apt-get download -q "$pkg${ver:+=$ver}" >/dev/null 2>&1) || {
      log "apt-get download $pkg failed; refreshing the package lists"; apt-get update -q >/dev/null 2>&1 || true
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
