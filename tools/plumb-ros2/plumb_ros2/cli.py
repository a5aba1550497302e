"""The ``plumb-ros2`` command line.

    plumb-ros2 --serial /dev/ttyUSB0 [--baud N] | --file PATH | --udp [ADDR:]PORT
               [--frame-id ID] [--bag DIR] [--ros-args ...]
    plumb-ros2 --file FRAMES.bin --bag OUT --offline

Flags are shorthands for the node's parameters (port, baud, file, udp, frame_id, bag); every
parameter can also be set with ``--ros-args -p name:=value``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from . import __version__

EPILOG = """\
parameters (--ros-args -p NAME:=VALUE): port, baud, file, udp, frame_id, reopen (true),
stale_timeout (1.0 s), heading_uncertain_yaw_variance (pi^2/3 rad^2), diagnostics_period (1.0 s), bag.
topics: imu/data (sensor_msgs/Imu), imu/temperature (sensor_msgs/Temperature), /diagnostics;
service: ~/tare (std_srvs/Trigger). Plumb must send --format binary-imu (binary works, without rates).

examples:
  plumb-ros2 --serial /dev/ttyUSB0
  plumb-ros2 --udp 14560 --frame-id imu_link --ros-args -r __ns:=/robot
  plumb-ros2 --file run.bin --bag run_bag --offline     (no ROS needed: stamps = board time)

exit status: 0 done; 1 rclpy missing (live mode) or the offline conversion failed (no frames, the bag exists);
2 usage, a bad parameter or input
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="plumb-ros2",
        description="Bridge a Plumb telemetry stream to ROS 2 (node plumb_imu).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--serial", metavar="DEVICE", help="serial device or pty (parameter port)")
    src.add_argument("--file", metavar="PATH", help="recorded byte stream (parameter file); stamps = board time")
    src.add_argument("--udp", metavar="[ADDR:]PORT", help="listen for datagrams carrying the stream (parameter udp)")
    p.add_argument("--baud", type=int, metavar="N", help="serial baud rate (default 115200)")
    p.add_argument("--frame-id", metavar="ID", help="header.frame_id (default imu_link)")
    p.add_argument("--bag", metavar="DIR", help="also write every published message to a rosbag2 at DIR")
    p.add_argument("--offline", action="store_true",
                   help="with --file and --bag: convert the recording to a bag without a ROS runtime")  # fmt: skip
    p.add_argument("--diagnostics-period", type=float, metavar="S", help=argparse.SUPPRESS)
    p.add_argument("--version", action="version", version=f"plumb-ros2 {__version__}")
    return p


def split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything from the first ``--ros-args`` on goes to ROS untouched."""
    if "--ros-args" in argv:
        i = argv.index("--ros-args")
        return argv[:i], argv[i:]
    return argv, []


def main(argv: Optional[list[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, ros_args = split_ros_args(argv)
    args = parser().parse_args(own)
    overrides: dict[str, Any] = {}
    if args.serial is not None:
        overrides["port"] = args.serial
    if args.file is not None:
        overrides["file"] = args.file
    if args.udp is not None:
        overrides["udp"] = args.udp
    if args.baud is not None:
        overrides["baud"] = args.baud
    if args.frame_id is not None:
        overrides["frame_id"] = args.frame_id
    if args.bag is not None:
        overrides["bag"] = args.bag
    if args.diagnostics_period is not None:
        overrides["diagnostics_period"] = args.diagnostics_period

    if args.offline:
        if not args.file or not args.bag:
            print("plumb-ros2: --offline converts a recording: give --file FRAMES.bin and --bag OUT", file=sys.stderr)
            return 2
        if ros_args:
            print("plumb-ros2: --offline runs no ROS node; --ros-args are ignored", file=sys.stderr)
        from .core import Settings
        from .offline import main_offline

        settings = Settings()
        if args.frame_id:
            settings.frame_id = args.frame_id
        return main_offline(args.file, args.bag, settings, args.diagnostics_period or 1.0)

    from .node import run

    return run(overrides, ros_args)
