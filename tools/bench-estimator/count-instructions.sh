#!/usr/bin/env bash
# Counts instructions per update, exactly, with valgrind's callgrind: the full estimator and the
# minimal complementary filter, each over the same deterministic stream (bench-estimator
# --callgrind, one pass). Only the pass functions are measured (--toggle-collect on their
# mangled names), so the stream's generation does not count. The reference is counted in Float
# (the official one) and in Double. Prints `name value unit` lines like bench-estimator.
#
# The estimator's pass must call AttitudeEstimator.update (an opaque call into its module, so
# none of its outputs can be dropped): checked in the profile.
#
# Usage: tools/bench-estimator/count-instructions.sh [SAMPLES [--read-all-outputs]]
#        (default 1000000; --read-all-outputs: the estimator's loop reads every output field)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
samples=${1:-1000000}
extra=${2:-}
estimatorPass=16runEstimatorPass
case "$extra" in
  "") ;;
  --read-all-outputs) estimatorPass=26runEstimatorAllOutputsPass ;;
  *) echo "count-instructions: unknown option $extra" >&2; exit 64 ;;
esac
command -v valgrind >/dev/null || { echo "count-instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 69; }
swift build -c release --product bench-estimator 2>&1 | grep -E 'error|warning' >&2 || true
binary=.build/release/bench-estimator
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() {
  valgrind --tool=callgrind --callgrind-out-file="$out/$1" --collect-atstart=no \
    --toggle-collect="\$s15bench_estimator$2y*" "$binary" --callgrind --samples "$samples" $extra >/dev/null 2>"$out/$1.log"
  local n
  n=$(awk '/^summary:/ { print $2 }' "$out/$1")
  if [ -z "$n" ] || [ "$n" = 0 ]; then
    echo "count-instructions: callgrind counted nothing in $2 (renamed?); log:" >&2
    cat "$out/$1.log" >&2
    exit 70
  fi
  echo "$n"
}
e=$(count estimator "$estimatorPass")
grep -q 'EstimatorV6updatey' "$out/estimator" || {
  echo "count-instructions: the estimator's pass does not call AttitudeEstimator.update (inlined?)" >&2
  exit 70
}
r=$(count reference 16runReferencePass)
d=$(count reference-double 22runReferenceDoublePass)
awk -v e="$e" -v r="$r" -v d="$d" -v n="$samples" 'BEGIN {
  printf "estimator_update_instructions %.1f instructions\n", e / n
  printf "reference_cf_update_instructions %.1f instructions\n", r / n
  printf "estimator_instruction_ratio %.2f x\n", e / r
  printf "reference_cf_double_update_instructions %.1f instructions\n", d / n
}'
