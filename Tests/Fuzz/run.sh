#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (Tests/Fuzz/README.md) and runs each for
# FUZZ_SECONDS, one after the other, from a scratch copy of its committed seed corpus.
#
#   FUZZ_SECONDS   seconds per target (default 300)
#   FUZZ_TARGETS   the targets to run, by name without `fuzz-` (default: all)
#   FUZZ_JOBS      build jobs (default: the Makefile's JOBS, or nproc)
#   FUZZ_NO_DICT   1: run without the dictionaries (to measure what they add)
#   FUZZ_SCRATCH   the build's scratch path (default .build/fuzz)
#
# Prints, per target, the executions, the coverage (libFuzzer's cov: edges, ft: features) and
# PASS or FAIL; exits 1 when any target crashed, hung (an input slower than FUZZ_TIMEOUT s),
# leaked or ran out of memory, naming the input that did it and how to reproduce it. The
# committed corpus is never written to: new inputs go to the scratch corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."

all_targets="json board-file calibration-file csv plumbraw host-commands mavlink mavlink-receiver monitor-binary monitor-text monitor-mavlink monitor-auto web-request"
seconds=${FUZZ_SECONDS:-300}
targets=${FUZZ_TARGETS:-$all_targets}
jobs=${FUZZ_JOBS:-$(nproc)}
scratch=${FUZZ_SCRATCH:-.build/fuzz}
timeout_seconds=${FUZZ_TIMEOUT:-10}
swift=${SWIFT:-swift}

for target in $targets; do
  case " $all_targets " in
    *" $target "*) ;;
    *) echo "fuzz: no target '$target'; the targets are: $all_targets" >&2; exit 64 ;;
  esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 64; }

# The longest input each target is given, bytes: a few records or frames more than its seeds.
max_len() {
  case $1 in
    plumbraw) echo 8192 ;;
    mavlink | mavlink-receiver | monitor-*) echo 2048 ;;
    *) echo 4096 ;;
  esac
}

started=$(date +%s)
# Release: the optimiser keeps every check that traps (bounds, overflow, preconditions; the
# sources use no `assert`) and runs the targets several times faster than a debug build, which
# finds more in the same time (Tests/Fuzz/README.md has the measurements).
echo "fuzz: building $(wc -w <<<"$targets") targets (release, -sanitize=fuzzer,address) in $scratch" >&2
log="$scratch/build-log.txt"
mkdir -p "$scratch"
for target in $targets; do
  if ! PLUMB_FUZZ=1 "$swift" build -c release --scratch-path "$scratch" -j "$jobs" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --product "fuzz-$target" >"$log" 2>&1; then
    grep -vE '^\[[0-9]+/[0-9]+\]' "$log" >&2
    echo "fuzz: the build of fuzz-$target failed" >&2
    exit 1
  fi
  if grep -E '(^|: )warning: ' "$log" >&2; then
    echo "fuzz: the build of fuzz-$target has warnings (above); the project keeps zero" >&2
    exit 1
  fi
done
built=$(date +%s)
echo "fuzz: built in $((built - started)) s; running each target for $seconds s" >&2

failed=()
for target in $targets; do
  corpus="$scratch/corpus/$target"
  artifacts="$scratch/artifacts/$target"
  log="$scratch/logs/$target.log"
  rm -rf "$corpus" "$artifacts"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  cp Tests/Fuzz/corpus/"$target"/* "$corpus"/
  seeds=$(find "$corpus" -type f | wc -l)
  options=(-max_total_time="$seconds" -timeout="$timeout_seconds" -rss_limit_mb=2048
    -max_len="$(max_len "$target")" -print_final_stats=1 -artifact_prefix="$artifacts/")
  dictionary=Tests/Fuzz/dictionaries/$target.dict
  if [[ -f $dictionary && ${FUZZ_NO_DICT:-0} != 1 ]]; then options+=(-dict="$dictionary"); fi

  # The Swift runtime's own crash backtracer would race libFuzzer's handler (and wait for a
  # debugger); libFuzzer reports the crash and saves the input.
  # Files the targets write for their round trips go to memory, and away afterwards.
  files=$(mktemp -d "$( [[ -w /dev/shm ]] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/plumb-fuzz.XXXXXX")
  status=0
  PLUMB_FUZZ_SCRATCH=$files SWIFT_BACKTRACE=enable=no timeout --kill-after=10 $((seconds + 120)) \
    "$scratch/release/fuzz-$target" "${options[@]}" "$corpus" >"$log" 2>&1 || status=$?
  rm -rf "$files"

  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  [[ -n $done_line ]] || done_line=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -n 1 || true)
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  [[ -n $runs ]] || runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$done_line")
  rate=$(sed -nE 's/.*exec\/s: ([0-9]+).*/\1/p' <<<"$done_line")
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$done_line")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$done_line")
  units=$(find "$corpus" -type f | wc -l)
  summary="${runs:-?} runs (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus $units (seeds $seeds)"
  if [[ $status == 0 ]]; then
    echo "fuzz-$target: PASS  $summary" >&2
    continue
  fi
  failed+=("$target")
  reproducer=$(find "$artifacts" -type f | head -n 1)
  what=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z-]+' "$log" || true)
  [[ $status == 124 || $status == 137 ]] && what="the fuzzer itself did not stop in time"
  echo "fuzz-$target: FAIL  ${what:-exit status $status}; $summary" >&2
  # What failed, and where in Plumb's code (the first frames in Sources/ or HAL/).
  { grep -E 'Fatal error|Swift runtime failure|ERROR: (Address|Leak)Sanitizer' "$log" | head -n 3
    grep -E '^ +#[0-9]+ .* in .*/(Sources|HAL|Tests/Fuzz)/' "$log" | grep -v FuzzSupport/ | head -n 3 |
      sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in [^ ]+ //'; } | sed 's/^/  /' >&2
  if [[ -n $reproducer ]]; then
    echo "  reproducer: $reproducer" >&2
    echo "  run it again: SWIFT_BACKTRACE=enable=no $scratch/release/fuzz-$target $reproducer" >&2
    echo "  smaller: $scratch/release/fuzz-$target -minimize_crash=1 -runs=100000 $reproducer" >&2
  fi
  echo "  log: $log" >&2
done

echo "fuzz: $(wc -w <<<"$targets") targets in $(($(date +%s) - started)) s (build $((built - started)) s)" >&2
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]} (Tests/Fuzz/README.md: how to turn a crash into a regression test)" >&2
  exit 1
fi
echo "fuzz: all passed" >&2
