#!/usr/bin/env bash
# The estimator README's scenario table (issue 23, item 5): each scenario and unit, seeds 1-3,
# with this tree's plumb-hil ("after"), with another build's ("before": BEFORE=path/to/plumb-hil,
# e.g. main before issue 23 built with today's Sources/MotionScenarios copied in), and with
# --plain-filter 1. Prints "scenario faults unit variant incl heading incl heading incl heading".
#
# Usage: tools/scripts/scenario-table.sh   (builds plumb-hil in release first)
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product plumb-hil 2>&1 | grep -E 'error|warning' >&2 || true
now=.build/release/plumb-hil
pre=${BEFORE:-}
run() { "$@" 2>/dev/null | grep '^hil:' | sed -E 's/.*incl_rms_deg=([0-9.]+) heading_rms_deg=([0-9.]+).*/\1 \2/' || true; }
for spec in "power-on-turning none" "restless none" "long-push none" "long-corner none" "car none" "handheld bus-lockup"; do
  set -- $spec; sc=$1; fa=$2
  for unit in typical noisy; do
    for v in ${pre:+before} after plain; do
      line=""
      for seed in 1 2 3; do
        case $v in
          before) r=$(run $pre run $sc --faults $fa --unit $unit --seed $seed) ;;
          after) r=$(run $now run $sc --faults $fa --unit $unit --seed $seed) ;;
          plain) r=$(run $now run $sc --faults $fa --unit $unit --seed $seed --plain-filter 1) ;;
        esac
        line="$line $r"
      done
      echo "$sc $fa $unit $v $line"
    done
  done
done
