#!/usr/bin/env bash
# Every program and subcommand fed what a hostile (or unlucky) user gives it: a folder where a
# file is expected, a FIFO nobody writes, /dev/full as the output, a read-only folder, a missing
# parent folder, an empty file, truncated and damaged files, CRLF and a BOM, huge numbers, NaN,
# noise before a stream, and signals at start-up and while running. One line per case, tab
# separated: case, exit status, verdict, the first line of standard error.
#
# The verdict flags what is never acceptable: CRASH (a Swift runtime trap or a backtrace),
# HUNG (killed after the time limit), SIGNAL (died of a signal), and otherwise "ok".
# Whether the status and message are the right ones is for a person (and the tests) to judge.
#
#   tools/scripts/hostile-sweep.sh [BINDIR] > sweep.tsv     (BINDIR: .build/debug)
#
# Needs root for the read-only and the small (full) file systems: tmpfs mounts under the work
# folder, unmounted at the end. Not part of `make test`; issue 21's tests pin what it found.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BIN=$(cd "${1:-.build/debug}" && pwd)
W=$(mktemp -d /tmp/plumb-sweep.XXXXXX)
trap 'umount "$W/full" "$W/small" "$W/ro" 2>/dev/null; rm -rf "$W"' EXIT
LIMIT=${SWEEP_TIME_LIMIT:-20}

# --- fixtures ---------------------------------------------------------------------------------
mkdir -p "$W/folder" "$W/full" "$W/small" "$W/ro"
mkfifo "$W/fifo"
: > "$W/empty.csv"; : > "$W/empty.plumbraw"; : > "$W/empty.json"
ROOTOK=0
# full: a file system with no room left (FULLDISK); small: 64 KiB that fill up while written
# (FILLS); ro: read-only.
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$W/full" 2>/dev/null; then
  dd if=/dev/zero of="$W/full/filler" bs=1k count=200 2>/dev/null
  mount -t tmpfs -o size=64k tmpfs "$W/small" && mount -t tmpfs -o ro,size=64k tmpfs "$W/ro" \
    && ROOTOK=1
fi
# Empties the small file system again.
refill() { [ $ROOTOK = 1 ] && find "$W/small" -mindepth 1 -delete; }
"$BIN/plumb" record --board Boards/simulated.json --fast --seconds 20 --output "$W/sim.plumbraw" \
  --serial /dev/null 2>/dev/null
"$BIN/plumb" export "$W/sim.plumbraw" --csv --output "$W/sim.csv" 2>/dev/null
"$BIN/plumb" run --board Boards/simulated.json --fast --duration 3 --format binary \
  --serial "$W/frames.bin" 2>/dev/null
"$BIN/plumb" run --board Boards/simulated.json --fast --duration 3 --format text \
  --serial "$W/frames.txt" 2>/dev/null
"$BIN/plumb" run --board Boards/simulated.json --fast --duration 3 --format mavlink \
  --serial "$W/frames.mav" 2>/dev/null
"$BIN/plumb-cal" save "$W/sim.csv" --output "$W/cal.json" 2>/dev/null >/dev/null
sed 's/\r*$/\r/' "$W/sim.csv" > "$W/crlf.csv"
cut -d, -f1-7 "$W/sim.csv" | sed 's/\r*$/\r/' > "$W/crlf-notemp.csv"
printf '\xef\xbb\xbf' | cat - "$W/sim.csv" > "$W/bom.csv"
printf '\xef\xbb\xbf' | cat - Boards/simulated.json > "$W/bom.json"
sed 's/\r*$/\r/' Boards/simulated.json > "$W/crlf.json"
awk -F, 'NR==1{print;next} NR==50{$2="nan"} NR==60{$3="inf"} {print}' OFS=, "$W/sim.csv" > "$W/nan.csv"
awk -F, 'NR==1{print;next} {$2="1e308"} {print}' OFS=, "$W/sim.csv" > "$W/huge.csv"
awk -F, 'NR==1{print;next} {$2="0.001"} {print}' OFS=, "$W/sim.csv" > "$W/constant.csv"
awk -F, 'NR==1{print;next} NR==100{$1="1e30"} {print}' OFS=, "$W/sim.csv" > "$W/hugetime.csv"
head -c 612 "$W/sim.plumbraw" > "$W/cut612.plumbraw"
head -c 300 "$W/sim.plumbraw" > "$W/cut300.plumbraw"
head -c 20000 "$W/sim.plumbraw" > "$W/cut20000.plumbraw"
cp "$W/sim.plumbraw" "$W/flipped.plumbraw"
printf '\xff' | dd of="$W/flipped.plumbraw" bs=1 seek=30000 conv=notrunc 2>/dev/null
head -c 5000 /dev/urandom > "$W/noise.bin"
cat "$W/noise.bin" "$W/frames.bin" > "$W/noise-frames.bin"
cat "$W/noise.bin" "$W/frames.txt" > "$W/noise-frames.txt"
cat "$W/noise.bin" "$W/frames.mav" > "$W/noise-frames.mav"
head -c 5000 /dev/urandom > "$W/garbage.bin"
sed 's/"scenario": "handheld"/"scenario": "no-such-scenario"/' Boards/simulated.json > "$W/bad-scenario.json"
sed 's/"seed": 1,/"seed": 1, "faults": "no-such-plan",/' Boards/simulated.json > "$W/bad-faults.json"
sed "s|\"simulation\":|\"calibration\": \"$W/cal.json\", \"simulation\":|" Boards/simulated.json > "$W/board-cal.json"
sed "s|\"simulation\":|\"calibration\": \"$W/folder\", \"simulation\":|" Boards/simulated.json > "$W/board-cal-folder.json"
sed "s|\"simulation\":|\"calibration\": \"$W/fifo\", \"simulation\":|" Boards/simulated.json > "$W/board-cal-fifo.json"
sed 's/"sampleRateHz": 100/"sampleRateHz": 1e308/' Boards/simulated.json > "$W/huge-rate.json"
sed 's/"seed": 1/"seed": 99999999999999999999999/' Boards/simulated.json > "$W/huge-seed.json"
head -c 200 Boards/simulated.json > "$W/cut.json"
head -c 100 "$W/cal.json" > "$W/cut-cal.json"
cp "$W/cal.json" "$W/cal-edit.json"; sed -i 's/"label"/"lab\\u0065l"/' "$W/cal-edit.json"

echo -e "case\tstatus\tverdict\tfirst line of standard error"

# run NAME [--signal SIG@SECONDS] -- COMMAND...
run() {
  local name=$1; shift
  local signal="" at=0
  if [ "$1" = "--signal" ]; then signal=${2%@*}; at=${2#*@}; shift 2; fi
  [ "$1" = "--" ] && shift
  local err="$W/stderr"
  ( exec "$@" < /dev/null > "$W/stdout" 2> "$err" ) &
  local pid=$!
  local killer=""
  if [ -n "$signal" ]; then ( sleep "$at"; kill -s "$signal" "$pid" 2>/dev/null ) & killer=$!; fi
  ( sleep "$LIMIT"; kill -s KILL "$pid" 2>/dev/null ) & local guard=$!
  wait "$pid"; local status=$?
  kill "$guard" 2>/dev/null; wait "$guard" 2>/dev/null
  [ -n "$killer" ] && { kill "$killer" 2>/dev/null; wait "$killer" 2>/dev/null; }
  local verdict=ok
  if grep -qE 'Fatal error|Program crashed|Backtrace|Unexpectedly found nil|💣' "$err"; then
    verdict=CRASH
  elif [ "$status" = 137 ] && [ "$signal" != KILL ]; then verdict=HUNG
  elif [ "$status" -gt 128 ]; then verdict=SIGNAL
  fi
  local first
  first=$(grep -vE '^plumb: (simulated board|MPU-6050|data-ready)' "$err" | grep -v '^$' | head -n 1 | cut -c1-220)
  echo -e "$name\t$status\t$verdict\t$first"
}

P=$BIN/plumb; C=$BIN/plumb-cal; M=$BIN/plumb-monitor; R=$BIN/plumb-probe; H=$BIN/plumb-hil
SIM=Boards/simulated.json

# --- plumb check-board / plumb-probe: board files ------------------------------------------------
for f in folder fifo empty.json cut.json bom.json crlf.json bad-scenario.json bad-faults.json \
  board-cal-folder.json board-cal-fifo.json huge-rate.json huge-seed.json; do
  run "check-board $f" -- "$P" check-board "$W/$f"
done
run "check-board /dev/zero" -- "$P" check-board /dev/zero
run "check-board missing" -- "$P" check-board "$W/nope/board.json"
for f in folder bad-scenario.json bad-faults.json bom.json; do
  run "probe $f" -- "$R" --board "$W/$f" --samples 2
done
run "probe --samples 99999999999999999999" -- "$R" --board $SIM --samples 99999999999999999999

# --- plumb run ------------------------------------------------------------------------------------
run "run --serial /dev/full" -- "$P" run --board $SIM --fast --duration 5 --serial /dev/full
[ $ROOTOK = 1 ] && run "run --serial FULLDISK" -- "$P" run --board $SIM --fast --duration 30 --format text --serial "$W/full/frames.txt"
[ $ROOTOK = 1 ] && run "run --serial FILLS" -- "$P" run --board $SIM --fast --duration 30 --format text --serial "$W/small/frames.txt"
refill
run "run > /dev/full" -- sh -c "exec \"$P\" run --board $SIM --fast --duration 2 > /dev/full"
run "run --serial folder" -- "$P" run --board $SIM --fast --duration 1 --serial "$W/folder"
run "run --serial missing-parent" -- "$P" run --board $SIM --fast --duration 1 --serial "$W/nope/f.bin"
[ $ROOTOK = 1 ] && run "run --serial read-only" -- "$P" run --board $SIM --fast --duration 1 --serial "$W/ro/f.bin"
run "run --serial fifo-no-reader" -- "$P" run --board $SIM --fast --duration 1 --serial "$W/fifo"
run "run --record /dev/full" -- "$P" run --board $SIM --fast --duration 1 --serial /dev/null --record /dev/full
[ $ROOTOK = 1 ] && run "run --record FULLDISK" -- "$P" run --board $SIM --fast --duration 30 --serial /dev/null --record "$W/full/r.plumbraw"
[ $ROOTOK = 1 ] && run "run --record FILLS" -- "$P" run --board $SIM --fast --duration 30 --serial /dev/null --record "$W/small/r.plumbraw"
refill
run "run --duration 1e400" -- "$P" run --board $SIM --fast --duration 1e400 --serial /dev/null
run "run --duration nan" -- "$P" run --board $SIM --fast --duration nan --serial /dev/null
run "run --board bad-scenario" -- "$P" run --board "$W/bad-scenario.json" --fast --duration 1 --serial /dev/null
run "run --board cal" -- "$P" run --board "$W/board-cal.json" --fast --duration 1 --serial /dev/null
for f in empty.plumbraw cut300.plumbraw cut612.plumbraw cut20000.plumbraw flipped.plumbraw folder fifo sim.csv; do
  run "run --replay $f" -- "$P" run --replay "$W/$f" --serial /dev/null
done
run "run --replay /dev/zero" -- "$P" run --replay /dev/zero --serial /dev/null
run "run --replay --serial /dev/full" -- "$P" run --replay "$W/sim.plumbraw" --serial /dev/full
for s in INT TERM HUP QUIT PIPE USR1; do
  run "run SIG$s at start-up" --signal $s@0.05 -- "$P" run --board $SIM --duration 5 --serial "$W/sig.txt"
  run "run SIG$s while running" --signal $s@1.5 -- "$P" run --board $SIM --duration 5 --serial "$W/sig.txt"
done

# --- plumb record ---------------------------------------------------------------------------------
run "record --output /dev/full" -- "$P" record --board $SIM --fast --seconds 1 --output /dev/full --serial /dev/null
[ $ROOTOK = 1 ] && run "record --output FULLDISK" -- "$P" record --board $SIM --fast --seconds 30 --output "$W/full/r.plumbraw" --serial /dev/null
[ $ROOTOK = 1 ] && run "record --output FILLS" -- "$P" record --board $SIM --fast --seconds 30 --output "$W/small/r.plumbraw" --serial /dev/null
refill
run "record --output folder" -- "$P" record --board $SIM --fast --seconds 1 --output "$W/folder" --serial /dev/null
run "record --output fifo" -- "$P" record --board $SIM --fast --seconds 1 --output "$W/fifo" --serial /dev/null
run "record --output missing-parent" -- "$P" record --board $SIM --fast --seconds 1 --output "$W/nope/r.plumbraw" --serial /dev/null
[ $ROOTOK = 1 ] && run "record --output read-only" -- "$P" record --board $SIM --fast --seconds 1 --output "$W/ro/r.plumbraw" --serial /dev/null
run "record --serial /dev/full" -- "$P" record --board $SIM --fast --seconds 2 --output "$W/rs.plumbraw" --serial /dev/full
rm -f "$W/rs.plumbraw"
for s in INT TERM HUP QUIT PIPE; do
  rm -f "$W/sig.plumbraw"
  run "record SIG$s at start-up" --signal $s@0.05 -- "$P" record --board $SIM --seconds 5 --output "$W/sig.plumbraw" --serial /dev/null
  rm -f "$W/sig.plumbraw"
  run "record SIG$s while running" --signal $s@1.5 -- "$P" record --board $SIM --seconds 5 --output "$W/sig.plumbraw" --serial /dev/null
done
rm -f "$W/sig.plumbraw"

# --- plumb export / plumb replay ---------------------------------------------------------------------
for f in empty.plumbraw cut300.plumbraw cut612.plumbraw cut20000.plumbraw flipped.plumbraw folder fifo sim.csv; do
  run "export $f" -- "$P" export "$W/$f" --csv --output "$W/out.csv"
done
run "export /dev/zero" -- "$P" export /dev/zero --csv --output "$W/out.csv"
run "export --output /dev/full" -- "$P" export "$W/sim.plumbraw" --csv --output /dev/full
[ $ROOTOK = 1 ] && run "export --output FULLDISK" -- "$P" export "$W/sim.plumbraw" --csv --output "$W/full/out.csv"
[ $ROOTOK = 1 ] && run "export --output FILLS" -- "$P" export "$W/sim.plumbraw" --csv --output "$W/small/out.csv"
refill
[ $ROOTOK = 1 ] && run "export --output read-only" -- "$P" export "$W/sim.plumbraw" --csv --output "$W/ro/out.csv"
run "export --output folder" -- "$P" export "$W/sim.plumbraw" --csv --output "$W/folder"
run "export --output missing-parent" -- "$P" export "$W/sim.plumbraw" --csv --output "$W/nope/out.csv"
for f in empty.csv crlf.csv crlf-notemp.csv bom.csv nan.csv huge.csv hugetime.csv folder fifo \
  empty.plumbraw cut300.plumbraw cut612.plumbraw cut20000.plumbraw flipped.plumbraw; do
  run "replay $f" -- "$P" replay --input "$W/$f" --output "$W/out.csv"
done
run "replay --output /dev/full" -- "$P" replay --input "$W/sim.csv" --output /dev/full
[ $ROOTOK = 1 ] && run "replay --output FULLDISK" -- "$P" replay --input "$W/sim.csv" --output "$W/full/out.csv"
[ $ROOTOK = 1 ] && run "replay --output FILLS" -- "$P" replay --input "$W/sim.csv" --output "$W/small/out.csv"
refill
[ $ROOTOK = 1 ] && run "replay --output read-only" -- "$P" replay --input "$W/sim.csv" --output "$W/ro/out.csv"
run "replay --output folder" -- "$P" replay --input "$W/sim.csv" --output "$W/folder"
run "replay --output missing-parent" -- "$P" replay --input "$W/sim.csv" --output "$W/nope/out.csv"
run "replay --output fifo-no-reader" -- "$P" replay --input "$W/sim.csv" --output "$W/fifo"

# --- plumb calibrate ------------------------------------------------------------------------------
run "calibrate --output /dev/full" -- "$P" calibrate accel --board $SIM --output /dev/full
run "calibrate --output folder" -- "$P" calibrate accel --board $SIM --output "$W/folder"
run "calibrate --output missing-parent" -- "$P" calibrate accel --board $SIM --output "$W/nope/cal.json"
[ $ROOTOK = 1 ] && run "calibrate --output read-only" -- "$P" calibrate accel --board $SIM --output "$W/ro/cal.json"
[ $ROOTOK = 1 ] && run "calibrate --output FULLDISK" -- "$P" calibrate accel --board $SIM --output "$W/full/cal.json"
run "calibrate --output cut-cal" -- "$P" calibrate accel --board $SIM --output "$W/cut-cal.json"
run "calibrate SIGINT" --signal INT@1 -- "$P" calibrate accel --board $SIM --output "$W/sigcal.json"
run "calibrate SIGQUIT" --signal QUIT@1 -- "$P" calibrate accel --board $SIM --output "$W/sigcal.json"
run "calibrate > /dev/full" -- sh -c "exec \"$P\" calibrate accel --board $SIM --output \"$W/cal-stdout.json\" > /dev/full"

# --- plumb-cal ----------------------------------------------------------------------------------------
for f in empty.csv crlf.csv bom.csv nan.csv huge.csv constant.csv hugetime.csv folder fifo \
  cut300.plumbraw cut612.plumbraw flipped.plumbraw; do
  run "cal allan $f" -- "$C" allan "$W/$f"
  run "cal gyro $f" -- "$C" gyro "$W/$f"
  run "cal save $f" -- "$C" save "$W/$f" --output "$W/cal-out.json"
done
run "cal allan --plot /dev/full" -- "$C" allan "$W/sim.csv" --plot /dev/full
[ $ROOTOK = 1 ] && run "cal allan --plot FULLDISK" -- "$C" allan "$W/sim.csv" --plot "$W/full/a.svg"
run "cal allan --plot folder" -- "$C" allan "$W/sim.csv" --plot "$W/folder"
run "cal gyro --plot /dev/full" -- "$C" gyro "$W/sim.csv" --plot /dev/full
run "cal save --output /dev/full" -- "$C" save "$W/sim.csv" --output /dev/full
[ $ROOTOK = 1 ] && run "cal save --output FULLDISK" -- "$C" save "$W/sim.csv" --output "$W/full/c.json"
[ $ROOTOK = 1 ] && run "cal save --output read-only" -- "$C" save "$W/sim.csv" --output "$W/ro/c.json"
run "cal save --output folder" -- "$C" save "$W/sim.csv" --output "$W/folder"
run "cal save --output missing-parent" -- "$C" save "$W/sim.csv" --output "$W/nope/c.json"
run "cal allan > /dev/full" -- sh -c "exec \"$C\" allan \"$W/sim.csv\" > /dev/full"
run "cal check > /dev/full" -- sh -c "exec \"$C\" check \"$W/cal.json\" > /dev/full"
for f in folder fifo empty.json cut-cal.json cal-edit.json; do
  run "cal check $f" -- "$C" check "$W/$f"
  run "cal sign $f" -- "$C" sign "$W/$f"
done
[ $ROOTOK = 1 ] && cp "$W/cal.json" "$W/small/" && dd if=/dev/zero of="$W/small/filler" bs=1k count=200 2>/dev/null
[ $ROOTOK = 1 ] && run "cal sign on a full disk" -- "$C" sign "$W/small/cal.json"
[ $ROOTOK = 1 ] && { cmp -s "$W/cal.json" "$W/small/cal.json" || echo -e "cal sign on a full disk\t-\tDAMAGED\tthe calibration file changed"; }
refill
run "probe > /dev/full" -- sh -c "exec \"$R\" --board $SIM --samples 2 > /dev/full"
run "check-board > /dev/full" -- sh -c "exec \"$P\" check-board $SIM > /dev/full"

# --- plumb-monitor --------------------------------------------------------------------------------
for f in noise-frames.bin noise-frames.txt noise-frames.mav garbage.bin empty.csv folder fifo; do
  run "monitor $f" -- "$M" "$W/$f" --quiet
done
run "monitor /dev/zero" -- "$M" /dev/zero --quiet --duration 1
run "monitor /dev/full" -- "$M" /dev/full --quiet --duration 1
run "monitor missing" -- "$M" "$W/nope" --quiet
run "monitor stdout /dev/full" -- sh -c "exec \"$M\" \"$W/frames.txt\" > /dev/full"
run "monitor --json stdout /dev/full" -- sh -c "exec \"$M\" \"$W/frames.bin\" --json > /dev/full"
run "monitor --count 99999999999999999999" -- "$M" "$W/frames.bin" --count 99999999999999999999
run "monitor --send on a file" -- "$M" "$W/frames.txt" --send status
for s in INT TERM HUP QUIT PIPE; do
  run "monitor SIG$s" --signal $s@1 -- "$M" "$W/fifo" --quiet
done

# --- plumb-hil ----------------------------------------------------------------------------------------
run "hil run unknown scenario" -- "$H" run no-such-scenario
run "hil run --faults unknown" -- "$H" run tilt --faults no-such-plan
run "hil run --junit /dev/full" -- "$H" run tilt --seconds 5 --junit /dev/full
run "hil run --junit folder" -- "$H" run tilt --seconds 5 --junit "$W/folder"
run "hil run --report /dev/full" -- "$H" run tilt --seconds 5 --report /dev/full
run "hil run --report missing-parent" -- "$H" run tilt --seconds 5 --report "$W/nope/r"
run "hil run --board bad-scenario" -- "$H" run tilt --board "$W/bad-scenario.json"
run "hil run > /dev/full" -- sh -c "exec \"$H\" run tilt --seconds 2 > /dev/full"
run "hil run --junit fifo" -- "$H" run tilt --seconds 2 --junit "$W/fifo"
run "hil run --calibration cut" -- "$H" run tilt --calibration "$W/cut-cal.json"
for s in INT TERM QUIT; do
  run "hil run --realtime SIG$s" --signal $s@1 -- "$H" run tilt --realtime --seconds 20
done
exit 0
