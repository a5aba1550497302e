#!/usr/bin/env bash
# Debian packages of Plumb for Debian 13 / Raspberry Pi OS: build/deb/plumb_VERSION_arm64.deb and
# plumb_VERSION_amd64.deb, made with dpkg-deb inside the Debian 13 environment (debian13.sh) from
# release builds of Debian 13's Swift 6.0.3 with the Swift runtime linked in. See
# tools/platforms/README.md ("The package").
#
#   tools/platforms/deb.sh build   both packages, each checked by lintian (make deb)
#   tools/platforms/deb.sh test    build, then install the amd64 package into a fresh minimal
#                                  Debian 13 and check it there (make deb-test)
#
# Exit status 0 pass, 1 fail.
set -euo pipefail
# shellcheck source=tools/platforms/arm64.sh
source "$(dirname "${BASH_SOURCE[0]}")/arm64.sh"
tag=deb

version=$(sed -n 's/.*static let current = "\([^"]*\)".*/\1/p' "$repo/Sources/BuildInfo/PlumbVersion.swift")
[ -n "$version" ] || die "no version in Sources/BuildInfo/PlumbVersion.swift"
packaging=$CHROOT_SOURCE/tools/platforms/debian
# Reproducible packages: every file's time is the last commit's (or the version file's).
epoch=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || stat -c %Y "$repo/Sources/BuildInfo/PlumbVersion.swift")

# The amd64 programs: the same release build as arm64's, native, and linked by lld as arm64's are
# (GNU ld, the default here, left out the RELRO segment lintian checks for).
build_amd64() {
  local product log=$DEBIAN13_DIR/amd64-build.log
  for product in "${products[@]}"; do
    say "building amd64 release $product"
    if ! in_debian13 "cd $CHROOT_SOURCE && swift build -c release --static-swift-stdlib \
      --disable-local-rpath $hardening -Xswiftc -use-ld=lld --scratch-path .build-amd64 \
      --product $product 2>&1 |
      grep -vE '^\[[0-9]+/[0-9]+\]'; exit \${PIPESTATUS[0]}" >"$log" 2>&1; then
      tail -30 "$log" >&2
      die "the amd64 release build of $product failed (log: $log)"
    fi
    if grep -E '(^|: )warning: ' "$log" >&2; then die "the amd64 build has warnings (log: $log)"; fi
  done
}

# One package, assembled in the environment's /tmp and checked by lintian. $1: amd64 or arm64;
# $2: the folder of its release programs (in the environment).
assemble() {
  local arch=$1 programs=$2
  say "packaging plumb $version for $arch"
  in_debian13 "
    set -euo pipefail
    export SOURCE_DATE_EPOCH=$epoch
    arch=$arch; programs=$programs; version=$version; packaging=$packaging
    products='${products[*]}'
    cd $CHROOT_SOURCE
    top=\$(sed -n '1s/^plumb (\\([^)]*\\)).*/\\1/p' \$packaging/changelog)
    [ \"\$top\" = \"\$version\" ] || { echo \"deb: tools/platforms/debian/changelog starts at \$top, the version is \$version: add an entry\" >&2; exit 1; }
    root=/tmp/plumb-deb/\$arch/root
    rm -rf /tmp/plumb-deb/\$arch && mkdir -p \$root/DEBIAN
    strip=strip; [ \$arch = arm64 ] && strip=aarch64-linux-gnu-strip
    install -d \$root/usr/bin
    for p in \$products; do
      \$strip --strip-unneeded --remove-section=.comment --remove-section=.note -o \$root/usr/bin/\$p \$programs/\$p
      chmod 0755 \$root/usr/bin/\$p
    done
    # The unit, pointed at the packaged program (the repository's points at /usr/local/bin).
    install -d \$root/usr/lib/systemd/system
    sed 's#/usr/local/bin/plumb#/usr/bin/plumb#' tools/systemd/plumb.service > \$root/usr/lib/systemd/system/plumb.service
    grep -q '^ExecStart=/usr/bin/plumb ' \$root/usr/lib/systemd/system/plumb.service
    install -D -m 0644 \$packaging/plumb.sysusers \$root/usr/lib/sysusers.d/plumb.conf
    install -D -m 0644 \$packaging/60-plumb.rules \$root/usr/lib/udev/rules.d/60-plumb.rules
    install -d \$root/usr/share/plumb/boards
    install -m 0644 Boards/*.json \$root/usr/share/plumb/boards/
    # Documentation, compressed as Debian wants it.
    doc=\$root/usr/share/doc/plumb
    install -d \$doc
    install -m 0644 \$packaging/copyright \$doc/copyright
    gzip -9n < \$packaging/changelog > \$doc/changelog.gz
    gzip -9n < README.md > \$doc/README.md.gz
    gzip -9n < Boards/README.md > \$doc/boards.md.gz
    gzip -9n < Sources/Telemetry/FORMATS.md > \$doc/FORMATS.md.gz
    gzip -9n < tools/systemd/README.md > \$doc/systemd.md.gz
    gzip -9n < tools/plumb-cal/CALIBRATION-FILE.md > \$doc/CALIBRATION-FILE.md.gz
    # Manual pages from each program's --help and --version (the amd64 build runs here; the
    # pages are the same for every architecture).
    install -d \$root/usr/share/man/man1
    for p in \$products; do
      help2man --no-info --no-discard-stderr --section=1 --source='Plumb' --name=\"\$(
        $CHROOT_SOURCE/.build-amd64/release/\$p --help | sed -n '1s/^[^ ]* — //p')\" \
        $CHROOT_SOURCE/.build-amd64/release/\$p | gzip -9n > \$root/usr/share/man/man1/\$p.1.gz
    done
    for s in postinst prerm postrm; do install -m 0755 \$packaging/\$s \$root/DEBIAN/\$s; done
    # The packaged (stripped) programs run with nothing but Debian 13's libraries (arm64 ones
    # under qemu-aarch64, from the arm64 run-time packages installed here, not the sysroot), say
    # the version, and give the golden frames byte for byte.
    run=; [ \$arch = arm64 ] && run=qemu-aarch64
    for p in \$products; do
      line=\$(\$run \$root/usr/bin/\$p --version)
      [ \"\$line\" = \"\$p \$version\" ] || { echo \"deb: packaged \$p --version: '\$line'\" >&2; exit 1; }
    done
    \$run \$root/usr/bin/plumb run --board Boards/simulated.json --fast --duration 10 --format binary \
      --serial /tmp/plumb-deb/\$arch/frames.bin 2>/dev/null
    cmp /tmp/plumb-deb/\$arch/frames.bin Tests/PlumbRuntimeTests/Golden/run-simulated-10s-binary.bin >&2 ||
      { echo \"deb: the packaged \$arch plumb does not give the golden frames\" >&2; exit 1; }
    echo \"deb: the packaged \$arch programs run\${run:+ (under \$run)}, say \$version, and give the golden frames\" >&2
    # Dependencies from the libraries the programs need, as dpkg-shlibdeps finds them (the
    # arm64 run-time libraries are installed beside the amd64 ones for their symbol files).
    mkdir -p /tmp/plumb-deb/\$arch/debian
    printf 'Source: plumb\n\nPackage: plumb\nArchitecture: any\n' > /tmp/plumb-deb/\$arch/debian/control
    # (Its notes about merged /usr's diversions of the dynamic loader are expected on Debian 13.)
    shlibs=\$(cd /tmp/plumb-deb/\$arch && DEB_HOST_ARCH=\$arch dpkg-shlibdeps -O \
      \$(for p in \$products; do echo root/usr/bin/\$p; done) 2>/tmp/plumb-deb/\$arch/shlibdeps.err |
      sed -n 's/^shlibs:Depends=//p')
    grep -vE 'diversions involved|diversion by libc6' /tmp/plumb-deb/\$arch/shlibdeps.err >&2 || true
    [ -n \"\$shlibs\" ] || { echo 'deb: dpkg-shlibdeps found no dependencies' >&2; exit 1; }
    size=\$(du -sk --exclude=DEBIAN \$root | cut -f1)
    sed -e \"s/@VERSION@/\$version/\" -e \"s/@ARCH@/\$arch/\" -e \"s/@INSTALLED_SIZE@/\$size/\" \
      -e \"s/@SHLIBS_DEPENDS@/\$shlibs/\" \$packaging/control.in > \$root/DEBIAN/control
    (cd \$root && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z |
      xargs -0 md5sum > DEBIAN/md5sums)
    find \$root -exec touch -h -d @\$SOURCE_DATE_EPOCH {} +
    mkdir -p $CHROOT_SOURCE/build/deb
    deb=$CHROOT_SOURCE/build/deb/plumb_\${version}_\$arch.deb
    dpkg-deb --root-owner-group -Zxz --build \$root \$deb >/dev/null
    echo \"deb: \$(basename \$deb): Depends: \$(sed -n 's/^Depends: //p' \$root/DEBIAN/control)\" >&2
    # lintian: no error; its warnings are shown (tools/platforms/README.md says what it said).
    chmod 0644 \$deb
    runuser -u nobody -- lintian --tag-display-limit 0 --display-level '>=warning' \$deb \
      > /tmp/plumb-deb/\$arch/lintian.txt 2>&1 || true
    sed 's/^/  lintian: /' /tmp/plumb-deb/\$arch/lintian.txt >&2
    if grep -q '^E:' /tmp/plumb-deb/\$arch/lintian.txt; then
      echo \"deb: lintian reports errors for \$(basename \$deb)\" >&2
      exit 1
    fi
  " || die "packaging for $arch failed"
  mkdir -p "$repo/build/deb"
  cp "$DEBIAN13_ROOT$CHROOT_SOURCE/build/deb/plumb_${version}_$arch.deb" "$repo/build/deb/"
}

build_packages() {
  prepare_sysroot
  build_release
  build_amd64
  assemble amd64 "$CHROOT_SOURCE/.build-amd64/release"
  assemble arm64 "$release_dir"
  say "built: build/deb/plumb_${version}_amd64.deb, build/deb/plumb_${version}_arm64.deb"
}

# A fresh minimal Debian 13 (debootstrap's minbase, kept as a tarball and unpacked anew for every
# run), the amd64 package installed into it with apt as a user would (so its Depends must be
# complete), then what a user relies on: the programs run and say the package's version, the
# simulated board runs, the plumb user and its groups exist, systemd accepts the unit, and the
# package removes and purges cleanly.
install_test() {
  local dir=$DEBIAN13_DIR/install-test pristine=$DEBIAN13_DIR/minbase.tar
  if [ ! -s "$pristine" ]; then
    say "making a minimal Debian 13 for the install test (debootstrap, cached as $pristine)"
    as_root rm -rf "$dir"
    as_root debootstrap --variant=minbase trixie "$dir" "$(debian_mirror)" >"$DEBIAN13_DIR/minbase.log" 2>&1 ||
      die "debootstrap failed (log: $DEBIAN13_DIR/minbase.log)"
    as_root tar -C "$dir" -cf "$pristine.new" .
    as_root mv "$pristine.new" "$pristine"
  fi
  as_root rm -rf "$dir" && as_root mkdir -p "$dir"
  as_root tar -C "$dir" -xf "$pristine"
  as_root cp "$repo/build/deb/plumb_${version}_amd64.deb" "$dir/tmp/"
  local saved=$DEBIAN13_ROOT
  DEBIAN13_ROOT=$dir
  # The downloaded dependencies are kept between runs (the archive folder is bound in).
  CHROOT_BINDS=$DEBIAN13_DIR/apt-archives:/var/cache/apt/archives in_debian13 "
    set -e
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d
    apt-get update -q >/dev/null
    # man-db as on any installed system: systemd-analyze verify looks up the unit's man page.
    apt-get install -y -q --no-install-recommends /tmp/plumb_${version}_amd64.deb man-db >/tmp/install.log 2>&1 ||
      { tail -20 /tmp/install.log; exit 1; }
    echo \"deb: installed: \$(dpkg-query -W -f='\${Package} \${Version} \${Architecture}' plumb)\" >&2
    for p in plumb plumb-monitor plumb-probe plumb-cal; do
      line=\$(\$p --version)
      [ \"\$line\" = \"\$p $version\" ] || { echo \"deb: \$p --version says '\$line', not '\$p $version'\" >&2; exit 1; }
      man -w \$p >/dev/null 2>&1 || [ -f /usr/share/man/man1/\$p.1.gz ]
    done
    echo 'deb: every program says its version: $version' >&2
    plumb run --board /usr/share/plumb/boards/simulated.json --duration 3 > /tmp/frames.txt 2>/tmp/run.err ||
      { cat /tmp/run.err; exit 1; }
    frames=\$(grep -c '^\\\$PLMB' /tmp/frames.txt || true)
    [ \"\$frames\" -ge 250 ] || { echo \"deb: plumb run gave \$frames frames in 3 s\" >&2; head -3 /tmp/frames.txt; cat /tmp/run.err; exit 1; }
    echo \"deb: plumb run --board /usr/share/plumb/boards/simulated.json --duration 3: \$frames text frames, exit 0\" >&2
    getent passwd plumb | grep -q ':/var/lib/plumb:' || { echo 'deb: no plumb user with home /var/lib/plumb' >&2; exit 1; }
    getent group i2c >/dev/null && getent group gpio >/dev/null || { echo 'deb: the i2c and gpio groups are missing' >&2; exit 1; }
    echo 'deb: the plumb user and the i2c and gpio groups exist' >&2
    systemd-analyze verify /usr/lib/systemd/system/plumb.service
    echo 'deb: systemd-analyze verify plumb.service: no complaint' >&2
    apt-get remove -y -q plumb >/dev/null && [ ! -e /usr/bin/plumb ]
    apt-get purge -y -q plumb >/dev/null && ! dpkg-query -W plumb >/dev/null 2>&1
    echo 'deb: removed and purged cleanly' >&2
  " 2>&1 || {
    DEBIAN13_ROOT=$saved
    die "the amd64 package failed its install test in a fresh Debian 13"
  }
  DEBIAN13_ROOT=$saved
  say "PASS: plumb_${version}_amd64.deb installs, runs and purges in a fresh Debian 13"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
command=${1:-build}
case $command in build | test) ;; *)
  echo "usage: $0 [build | test]" >&2
  exit 64
  ;;
esac
enter_debian13
build_packages
[ "$command" = test ] && install_test
exit 0
