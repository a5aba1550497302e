#!/usr/bin/env bash
# The Debian 13 ("trixie", today's Raspberry Pi OS base) environment: a chroot made from Debian's
# archive with debootstrap, holding trixie's own swiftlang 6.0.3, libgpiod 2 and libi2c 4.4, cached
# outside the clone. See tools/platforms/README.md.
#
#   tools/platforms/debian13.sh test       `make test` inside it (make debian13-test)
#   tools/platforms/debian13.sh prepare    make or update the environment only
#   tools/platforms/debian13.sh run CMD    run a bash command line in its copy of the tree
#   tools/platforms/debian13.sh shell      an interactive shell there
#
# Needs root (debootstrap, chroot, mounts) or sudo. Exit status 0 pass, 1 fail.
set -euo pipefail
tag=debian13
# shellcheck source=tools/platforms/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The chroot's Swift, for messages and reports.
swift_version() { in_debian13 'swift --version 2>/dev/null | head -1'; }

run_test() {
  say "$(swift_version), libgpiod-dev $(in_debian13 "dpkg-query -W -f='\${Version}' libgpiod-dev"), libi2c-dev $(in_debian13 "dpkg-query -W -f='\${Version}' libi2c-dev")"
  # The build inside is kept between runs. A stale incremental build can fail where a clean one
  # passes (a stored property added to a type another module inlines): then once more, clean.
  if ! in_debian13 "cd $CHROOT_SOURCE && make build"; then
    say "the incremental build failed; building again from clean"
    in_debian13 "cd $CHROOT_SOURCE && rm -rf .build && make build" || die "make build failed with $(swift_version)"
  fi
  # An incremental build can also pass and link code compiled against an old layout of a type
  # another module changed (seen once: tests crashing in a build that succeeded): a failure
  # with the kept build runs once more from clean; a real failure fails both.
  if ! in_debian13 "cd $CHROOT_SOURCE && make test"; then
    say "make test failed with the kept build; once more from clean"
    in_debian13 "cd $CHROOT_SOURCE && rm -rf .build && make test" || die "make test failed with $(swift_version)"
  fi
  # The committed .swift-format, read by this toolchain's swift-format (600.0).
  in_debian13 "cd $CHROOT_SOURCE && make lint" || die "make lint failed with $(swift_version)'s swift-format"
  say "PASS: make test and make lint with $(swift_version) on Debian 13"
}

command=${1:-test}
[ $# -gt 0 ] && shift
case $command in
  prepare)
    lock_debian13
    prepare_debian13
    ;;
  test)
    enter_debian13
    run_test
    ;;
  run)
    enter_debian13
    in_debian13 "cd $CHROOT_SOURCE && $*"
    ;;
  shell)
    enter_debian13
    in_debian13 "cd $CHROOT_SOURCE && exec bash -i"
    ;;
  *)
    echo "usage: $0 [test | prepare | run COMMAND | shell]" >&2
    exit 64
    ;;
esac
