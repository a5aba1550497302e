#!/usr/bin/env bash
# `make test-asan` and `make test-tsan`: the whole Swift test suite built with AddressSanitizer
# (with LeakSanitizer) or ThreadSanitizer, in its own scratch path (.build/asan, .build/tsan) so
# the debug build `make test` uses is never invalidated. Plumb's executables the tests start are
# built in the same scratch path: they are sanitized too, and whatever any process reports is
# written to the scratch path's reports/ folder, shown, and fails the run.
#
#   tools/sanitizers/run.sh address|thread
#
# Nothing is excluded by name. What cannot run sanitized decides so itself, with its reason: the
# allocation-counting tests (TestSupport's `.countsAllocations`: the sanitizer's runtime owns
# malloc), and the runs under `ulimit` (PLUMB_SANITIZED in the tests). The reports silenced, one
# justified entry each, are in lsan.supp here.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tools/sanitizers

case "${1:-}" in
  address) name=asan ;;
  thread) name=tsan ;;
  *)
    echo "usage: $0 address|thread" >&2
    exit 64
    ;;
esac
swift=${SWIFT:-swift}
jobs=${JOBS:-$(nproc)}
scratch=.build/$name
# lld, not the default gold: gold warns once per symbol ("Cannot export local symbol
# '__asan_check_load_add_8_R13'") about the sanitizer runtime's local symbols, and the project
# keeps zero warnings. PLUMB_SANITIZED tells the tests they run sanitized.
flags=(--sanitize="$1" --scratch-path "$scratch" -Xswiftc -use-ld=lld -Xswiftc -DPLUMB_SANITIZED)

# Build: everything, tests included, and no compiler or linker warning (as `make build`).
mkdir -p "$scratch"
log=$scratch/build-log.txt
"$swift" build --build-tests -j "$jobs" "${flags[@]}" 2>&1 | tee "$log" \
  | grep -vE '^\[[0-9]+/[0-9]+\]' || { cat "$log"; exit 1; }
if grep -E '(^|: )warning: ' "$log" | grep -v 'dlopen'; then
  echo "plumb: the $name build has warnings (see above); the project keeps zero" >&2
  exit 1
fi

reports=$PWD/$scratch/reports
rm -rf "$reports"
mkdir -p "$reports"
case $name in
  asan)
    # LeakSanitizer on (the Linux x86-64 default, said here so it stays so): a leak in the test
    # runner or in a started executable is reported at its exit, and fails it.
    export ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan"
    export LSAN_OPTIONS="suppressions=$PWD/$here/lsan.supp:print_suppressions=0"
    ;;
  tsan)
    export TSAN_OPTIONS="log_path=$reports/tsan"
    ;;
esac

status=0
"$swift" test --skip-build --parallel -j "$jobs" "${flags[@]}" || status=$?
shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]} > 0)); then
  cat "${found[@]}" >&2
  echo "plumb: $name reported errors in ${#found[@]} process(es) (above; $scratch/reports)" >&2
  status=1
fi
exit $status
