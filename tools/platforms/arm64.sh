#!/usr/bin/env bash
# Plumb for arm64 (a Raspberry Pi 3/4/5 or Zero 2 W on 64-bit Raspberry Pi OS), cross-built on this
# machine with Debian 13's own Swift 6.0.3 against an arm64 sysroot made of Debian 13's packages,
# and run under qemu-aarch64 (user-mode emulation). See tools/platforms/README.md.
#
#   tools/platforms/arm64.sh build    release build of plumb, plumb-monitor, plumb-probe, plumb-cal
#                                     into build/arm64/ (make cross-arm64)
#   tools/platforms/arm64.sh test     the release and debug builds under qemu-aarch64: the golden
#                                     outputs byte for byte, and the test suites listed below
#                                     (make arm64-test)
#
# Both run inside the Debian 13 environment (debian13.sh, cached). Exit status 0 pass, 1 fail.
set -euo pipefail
tag=arm64
# shellcheck source=tools/platforms/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

triple=aarch64-unknown-linux-gnu
# The tools a board needs (and the packages carry).
products=(plumb plumb-monitor plumb-probe plumb-cal)
# Test targets (and one suite) run under qemu-aarch64: those that run in-process, covering the
# maths, the formats, the driver on the simulated chip, the loop, recordings, calibration, the
# HIL golden frames (HILTests.GoldenFrameTests), and the Linux HAL's system calls (termios over a
# pseudo-terminal, sockets, GPIO and I2C errors: qemu-user translates them to this kernel). Not the
# ones that start Plumb's programs (PlumbRuntimeTests, PlumbReplayTests, PlumbMonitorTests, the
# rest of HILTests): qemu-user cannot exec a second arm64 program without binfmt_misc, which would
# change the host; the programs' own outputs are checked byte for byte instead (check_golden).
# Skipped: the seeded-mutation suites (thousands of damaged inputs per decoder: about 6 minutes
# under emulation for platform-independent logic, which both x86_64 builds run), and the one test
# of TIOCGEXCL, an ioctl qemu-user does not translate. The rest takes about 5 minutes.
suites=(ByteFormatsTests GeometryTests RandomnessTests JSONTests CommandLineSupportTests
  PlottingTests MotionScenariosTests AttitudeEstimationTests TelemetryTests RecordingTests
  MPU6050Tests MPU6050SimulationTests MPU6050ReplayTests SimulatedHardwareTests
  HardwareAbstractionTests BoardsTests FirmwareTests CalibrationTests HILTests.GoldenFrameTests
  POSIXSupportTests SystemdNotifyTests LinuxHardwareTests)
skipped_suites='MutationTests|Mutated|anExclusivePortLocksTheTerminal'
# arm64 packages of Debian 13 unpacked into the sysroot: the C library and its headers, the C++
# runtime the Swift runtime links, libgpiod 2 and libi2c, and Swift's arm64 runtime and modules.
sysroot_packages=(libc6 libc6-dev libgcc-s1 libgcc-14-dev libstdc++6 libstdc++-14-dev libatomic1
  libgpiod-dev libgpiod3 libi2c-dev libi2c0 libswiftlang swiftlang)

# The sysroot, inside the Debian 13 environment at CHROOT_SYSROOT, remade whenever the set of
# package versions changes. swiftlang's arm64 package is 400 MB, 2.2 GB unpacked: only its arm64
# Swift modules and static libraries are kept (its programs are arm64 ones, of no use here).
prepare_sysroot() {
  local list="${sysroot_packages[*]}"
  in_debian13 "
    set -e
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    mkdir -p /var/cache/plumb-arm64 && cd /var/cache/plumb-arm64
    names=\$(for p in $list; do echo \$p:arm64; done; echo linux-libc-dev)
    want() { apt-cache policy \$names 2>/dev/null | awk '/^[^ ]/{p=\$1} /Candidate:/{print p, \$2}'; }
    # The versions wanted now: from the package lists, refreshed once a day at most.
    if [ -z \"\$(find /var/lib/apt/lists -name '*arm64_Packages*' -mmin -1440 2>/dev/null | head -1)\" ]; then
      apt-get update -q >/dev/null
    fi
    wanted=\$(want)
    if [ -f $CHROOT_SYSROOT/.packages ] && [ \"\$(cat $CHROOT_SYSROOT/.packages)\" = \"\$wanted\" ]; then
      exit 0
    fi
    echo 'arm64: making the arm64 sysroot from Debian 13 packages' >&2
    rm -f ./*.deb
    apt-get download -q \$names >/dev/null
    rm -rf $CHROOT_SYSROOT.new && mkdir -p $CHROOT_SYSROOT.new
    for deb in ./*.deb; do
      case \$deb in
        ./swiftlang_*)
          dpkg-deb --fsys-tarfile \$deb | tar -x -C $CHROOT_SYSROOT.new \
            --exclude='./usr/libexec/swift/bin' --exclude='./usr/libexec/swift/lib/lib*' \
            --exclude='./usr/libexec/swift/lib/swift/host' --exclude='./usr/libexec/swift/lib/swift/embedded' \
            --exclude='./usr/share' --exclude='./usr/bin' ;;
        *) dpkg -x \$deb $CHROOT_SYSROOT.new ;;
      esac
    done
    # Merged /usr: the arm64 ELF interpreter is /lib/ld-linux-aarch64.so.1.
    ln -sfn usr/lib $CHROOT_SYSROOT.new/lib
    # The Swift driver reads an SDK's settings (an Apple convention) and warns without them.
    printf '{\"Version\": \"13.0\", \"CanonicalName\": \"debian13-arm64\"}\n' > $CHROOT_SYSROOT.new/SDKSettings.json
    echo \"\$wanted\" > $CHROOT_SYSROOT.new/.packages
    rm -rf $CHROOT_SYSROOT && mv $CHROOT_SYSROOT.new $CHROOT_SYSROOT
  " || die "making the arm64 sysroot failed"
}

# swift build for aarch64 inside the chroot. $1: debug or release; $2: static or dynamic (the
# Swift runtime linked in, or Debian's libswiftlang at run time); the rest: swift build's
# arguments. pkg-config answers from the sysroot (libgpiod's .pc file).
cross_swift_build() {
  local configuration=$1 linking=$2
  shift 2
  local resources=$CHROOT_SYSROOT/usr/libexec/swift/lib/swift static=
  if [ "$linking" = static ]; then
    # With the runtime linked in, the driver looks for its link arguments next to the static
    # libraries: the resource folder must be swift_static.
    resources=$CHROOT_SYSROOT/usr/libexec/swift/lib/swift_static
    static=--static-swift-stdlib
  fi
  in_debian13 "
    cd $CHROOT_SOURCE
    export PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$CHROOT_SYSROOT
    export PKG_CONFIG_LIBDIR=$CHROOT_SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$CHROOT_SYSROOT/usr/share/pkgconfig
    swift build -c $configuration --triple $triple $static --sdk $CHROOT_SYSROOT \
      -Xswiftc -sdk -Xswiftc $CHROOT_SYSROOT -Xswiftc -resource-dir -Xswiftc $resources \
      -Xswiftc -use-ld=lld $* 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]'
    exit \${PIPESTATUS[0]}
  "
}

# A build, its warnings refused (the project keeps zero, on every platform). $1: a label.
checked_build() {
  local label=$1 log=$DEBIAN13_DIR/arm64-build.log
  shift
  say "building $label"
  if ! cross_swift_build "$@" >"$log" 2>&1; then
    tail -30 "$log" >&2
    die "the arm64 $label build failed (log: $log)"
  fi
  if grep -E '(^|: )warning: ' "$log" >&2; then
    die "the arm64 $label build has warnings (above; log: $log)"
  fi
}

release_dir=$CHROOT_SOURCE/.build-arm64/$triple/release
# What Debian builds its programs with (and lintian checks): relocations read-only after start-up
# (RELRO) and resolved at once (BIND_NOW). No RUNPATH: nothing is loaded from beside the program.
hardening="-Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now"
debug_dir=$CHROOT_SOURCE/.build-arm64-debug/$triple/debug

build_release() {
  local product
  for product in "${products[@]}"; do
    checked_build "release $product" release static --scratch-path .build-arm64 \
      --disable-local-rpath $hardening --product "$product"
  done
  # Copied out of the environment for people and for `make deb`.
  mkdir -p "$repo/build/arm64"
  for product in "${products[@]}"; do
    cp "$DEBIAN13_ROOT$release_dir/$product" "$repo/build/arm64/$product"
  done
  say "built for arm64 (Swift 6.0.3, Debian 13, runtime linked in): build/arm64/{$(
    IFS=,
    echo "${products[*]}"
  )}"
}

# The golden cases (Tests/PlumbRuntimeTests/Golden/cases.txt), run with the arm64 plumb in $1
# under qemu-aarch64, each output compared byte for byte with the committed file.
check_golden() {
  local label=$1 binary=$2 failures=0 name expected arguments
  local golden=Tests/PlumbRuntimeTests/Golden
  while read -r name expected arguments; do
    case $name in '' | '#'*) continue ;; esac
    local out=/tmp/arm64-golden/$label-$expected
    local line=${arguments//\{out\}/$out}
    if ! in_debian13 "cd $CHROOT_SOURCE && mkdir -p /tmp/arm64-golden && rm -f $out &&
      qemu-aarch64 -L $CHROOT_SYSROOT $binary $line 2>/tmp/arm64-golden/$label-$name.err" ||
      ! cmp -s "$DEBIAN13_ROOT$out" "$repo/$golden/$expected"; then
      say "FAIL $label $name: plumb $line (standard error: $DEBIAN13_ROOT/tmp/arm64-golden/$label-$name.err)"
      cmp "$DEBIAN13_ROOT$out" "$repo/$golden/$expected" >&2 || true
      failures=$((failures + 1))
    else
      say "ok   $label $name: byte for byte $golden/$expected (sha256 $(sha256sum "$DEBIAN13_ROOT$out" | cut -d" " -f1))"
    fi
  done <"$repo/$golden/cases.txt"
  return "$failures"
}

# The builds inside are kept between runs. An incremental build can link code compiled against
# an old layout of a type another module changed (seen once: a debug build that passed its
# build and crashed in its tests), so a run whose builds were kept and failed runs once more
# from clean builds; a real failure fails both.
run_tests() {
  if (run_checks); then return 0; fi
  say "a check failed with the kept builds; once more from clean builds"
  in_debian13 "rm -rf $CHROOT_SOURCE/.build-arm64 $CHROOT_SOURCE/.build-arm64-debug"
  (run_checks) || die "the arm64 checks failed from clean builds too"
}

run_checks() {
  build_release
  checked_build "debug plumb and the tests" debug dynamic --scratch-path .build-arm64-debug --build-tests
  local failures=0
  check_golden release "$release_dir/plumb" || failures=$((failures + $?))
  check_golden debug "$debug_dir/plumb" || failures=$((failures + $?))
  # The test suites under qemu-aarch64: swift-testing's own entry point in the test bundle.
  local filter
  filter=$(
    IFS='|'
    echo "${suites[*]}"
  )
  say "test suites under qemu-aarch64: ${suites[*]}"
  # swift-testing's identifiers are Module.Suite/test: a name matches a whole module or a suite.
  if ! in_debian13 "cd $CHROOT_SOURCE && qemu-aarch64 -L $CHROOT_SYSROOT \
    $debug_dir/PlumbPackageTests.xctest --testing-library swift-testing --parallel \
    --filter '(^|\.)($filter)(/|\.|\$)' --skip '$skipped_suites' 2>&1 |
    grep -vE '^(◇|↳|✔ Test |✔ Suite )'; exit \${PIPESTATUS[0]}"; then
    say "FAIL: a test suite failed under qemu-aarch64"
    failures=$((failures + 1))
  fi
  [ "$failures" -eq 0 ] || die "$failures arm64 check(s) failed"
  say "PASS: arm64 release and debug builds (Swift 6.0.3) reproduce every golden output; the suites pass"
}

# Sourced (by deb.sh) for its functions; run, for a command.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
command=${1:-test}
case $command in build | test) ;; *)
  echo "usage: $0 [build | test]" >&2
  exit 64
  ;;
esac
enter_debian13
prepare_sysroot
case $command in
  build) build_release ;;
  test) run_tests ;;
esac
