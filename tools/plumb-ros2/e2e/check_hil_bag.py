#!/usr/bin/env python3
"""A HIL run scored from the rosbag the bridge writes, against the scenario's truth:

    plumb-hil run SCENARIO --seconds N --format binary-imu --frames F.bin --truth T.csv
    plumb-ros2 --file F.bin --bag BAG --offline        (stamps = the board's sample time, ns)
    this script: reads BAG with rosbags (AnyReader), matches each truth row to the Imu message
        whose stamp is its sample_time_ns, and recomputes the inclination error: the angle
        between the estimated and the true gravity direction in the body, the formula of
        inclinationErrorRadians (Sources/HIL/TruthComparison.swift)

    check_hil_bag.py [--plumb-hil PATH] [--bridge CMD] [--scenario handheld] [--seconds 60]
                     [--format binary-imu|binary] [--keep DIR]
    check_hil_bag.py --bag BAG --truth T.csv --summary 'hil: ... incl_rms_deg=E ...'   (score only)

Checks, one line each, PASS or FAIL with the numbers:
  hil-bag-frames  every frame plumb-hil compared (a truth row) has exactly one Imu message with
                  its sample time as stamp
  hil-incl-rows   each row's inclination error from the message's quaternion (f32, as published)
                  equals the row's incl_err_deg (plumb-hil's, from the frame it decoded) within
                  1e-6°
  hil-incl-rms    their RMS equals plumb-hil's incl_rms_deg (its summary line, 3 decimals)
                  within 0.01°
Exit 0 when all pass, 1 otherwise, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ROW_TOLERANCE_DEG = 1e-6
RMS_TOLERANCE_DEG = 0.01

Quaternion = tuple[float, float, float, float]  # w, x, y, z


def gravity_in_body(q: Quaternion) -> tuple[float, float, float]:
    """The third row of the rotation matrix, negated: the reference's down in the body
    (Quaternion.gravityInBody in Sources/Geometry)."""
    w, x, y, z = q
    return (2 * (w * y - x * z), -2 * (y * z + w * x), -1 + 2 * (x * x + y * y))


def angle_between(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """atan2(|a × b|, a · b), as Vector3.angle(to:)."""
    cx = a[1] * b[2] - a[2] * b[1]
    cy = a[2] * b[0] - a[0] * b[2]
    cz = a[0] * b[1] - a[1] * b[0]
    return math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz),
                      a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


def inclination_error_degrees(estimate: Quaternion, truth: Quaternion) -> float:
    return math.degrees(angle_between(gravity_in_body(estimate), gravity_in_body(truth)))


def read_truth(path: str) -> list[tuple[int, Quaternion, float]]:
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        expected = ["sequence", "sample_time_ns", "truth_w", "truth_x", "truth_y", "truth_z",
                    "incl_err_deg"]
        if reader.fieldnames != expected:
            raise ValueError("%s: header %s, want %s (plumb-hil run --truth)"
                             % (path, reader.fieldnames, ",".join(expected)))
        for row in reader:
            rows.append((int(row["sample_time_ns"]),
                         (float(row["truth_w"]), float(row["truth_x"]), float(row["truth_y"]),
                          float(row["truth_z"])), float(row["incl_err_deg"])))
    return rows


def read_bag(path: str) -> dict[int, list[Quaternion]]:
    """Every sensor_msgs/Imu in the bag: stamp (ns) -> its orientations (w, x, y, z)."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    out: dict[int, list[Quaternion]] = {}
    with AnyReader([Path(path)], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        connections = [c for c in reader.connections if c.msgtype == "sensor_msgs/msg/Imu"]
        if not connections:
            raise ValueError("%s has no sensor_msgs/msg/Imu topic (topics: %s)" % (
                path, ", ".join("%s %s" % (c.topic, c.msgtype) for c in reader.connections)))
        for connection, _, raw in reader.messages(connections=connections):
            m = reader.deserialize(raw, connection.msgtype)
            stamp = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
            o = m.orientation
            out.setdefault(stamp, []).append((o.w, o.x, o.y, o.z))
    return out


def summary_rms(summary: str) -> float:
    match = re.search(r"\bincl_rms_deg=([0-9.]+)", summary)
    if not match:
        raise ValueError("no incl_rms_deg= in plumb-hil's summary %r" % summary)
    return float(match.group(1))


def score(bag: str, truth: str, summary: str, check) -> None:
    rows = read_truth(truth)
    messages = read_bag(bag)
    hil_rms = summary_rms(summary)
    absent = [t for t, _, _ in rows if t not in messages]
    doubled = [t for t, _, _ in rows if len(messages.get(t, [])) > 1]
    total = sum(len(v) for v in messages.values())
    check("hil-bag-frames", bool(rows) and not absent and not doubled,
          "%d truth rows, %d Imu messages in the bag; %d rows without a message of their "
          "stamp %s, %d with more than one" % (len(rows), total, len(absent), absent[:3],
                                                len(doubled)))
    errors = []
    worst = 0.0
    for t, q_truth, hil_error in rows:
        if t not in messages:
            continue
        error = inclination_error_degrees(messages[t][0], q_truth)
        errors.append(error)
        worst = max(worst, abs(error - hil_error))
    check("hil-incl-rows", bool(errors) and worst <= ROW_TOLERANCE_DEG,
          "%d rows: the error from the bag's quaternion differs from plumb-hil's by %.3g° at "
          "most (bound %g°)" % (len(errors), worst, ROW_TOLERANCE_DEG))
    rms = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else float("nan")
    check("hil-incl-rms", bool(errors) and abs(rms - hil_rms) <= RMS_TOLERANCE_DEG,
          "RMS inclination error from the bag %.6f°, plumb-hil's incl_rms_deg %.3f°: "
          "difference %.6f° (bound %g°)" % (rms, hil_rms, abs(rms - hil_rms), RMS_TOLERANCE_DEG))


def main() -> int:
    parser = argparse.ArgumentParser(
        description="a HIL run scored from the bridge's rosbag against the truth",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plumb-hil", default=os.path.join(ROOT, ".build", "debug", "plumb-hil"))
    parser.add_argument("--bridge", default=None,
                        help="the bridge's command (default: plumb-ros2 beside this python)")
    parser.add_argument("--scenario", default="handheld")
    parser.add_argument("--seconds", default="60")
    parser.add_argument("--format", default="binary-imu", choices=["binary-imu", "binary"])
    parser.add_argument("--bag", help="score this bag (with --truth and --summary) only")
    parser.add_argument("--truth")
    parser.add_argument("--summary")
    parser.add_argument("--keep", metavar="DIR", help="keep the frames, truth and bag there")
    args = parser.parse_args()
    failed: list[str] = []
    passed = [0]

    def check(name: str, ok: bool, detail: str) -> None:
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if ok:
            passed[0] += 1
        else:
            failed.append(name)

    try:
        import rosbags  # noqa: F401
    except ImportError as error:
        print("check_hil_bag: rosbags cannot be imported (%s): run with the ROS 2 venv's python "
              "(make ros2-test)" % error, file=sys.stderr)
        return 2
    if args.bag:
        if not (args.truth and args.summary):
            parser.error("--bag needs --truth and --summary")
        score(args.bag, args.truth, args.summary, check)
    else:
        bridge = (args.bridge.split() if args.bridge
                  else [os.path.join(os.path.dirname(sys.executable), "plumb-ros2")])
        for path, fix in ((args.plumb_hil, "swift build --product plumb-hil"),
                          (bridge[0], "pip install tools/plumb-ros2 (make ros2-test does)")):
            if not os.access(path, os.X_OK) and not shutil.which(path):
                print("check_hil_bag: %s is missing: %s" % (path, fix), file=sys.stderr)
                return 2
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="check-hil-bag-", dir=args.keep or None)
        try:
            frames = os.path.join(folder, "frames.bin")
            truth = os.path.join(folder, "truth.csv")
            bag = os.path.join(folder, "bag")
            hil = subprocess.run(
                [args.plumb_hil, "run", args.scenario, "--seconds", args.seconds, "--format",
                 args.format, "--frames", frames, "--truth", truth],
                capture_output=True, text=True, timeout=600)
            summary = hil.stdout.strip()
            print("check_hil_bag: %s" % summary, flush=True)
            if hil.returncode != 0:
                check("hil-run", False, "plumb-hil exited %d: %s" % (hil.returncode,
                                                                    hil.stderr[-1000:]))
            else:
                offline = subprocess.run(bridge + ["--file", frames, "--bag", bag, "--offline"],
                                         capture_output=True, text=True, timeout=600)
                if offline.returncode != 0 or not os.path.isdir(bag):
                    check("hil-offline", False, "plumb-ros2 --offline exited %d: %s"
                          % (offline.returncode, offline.stderr[-1000:]))
                else:
                    print("check_hil_bag: %s" % offline.stderr.strip().splitlines()[-1],
                          flush=True)
                    score(bag, truth, summary, check)
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
    if failed:
        print("check_hil_bag: failed: %s" % ", ".join(failed), flush=True)
    print("check_hil_bag: %d passed, %d failed" % (passed[0], len(failed)), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
