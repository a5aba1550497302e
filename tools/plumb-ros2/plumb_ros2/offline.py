"""``plumb-ros2 --file FRAMES.bin --bag OUT --offline``: a recorded byte stream → rosbag2.

No ROS runtime: only ``rosbags``. Stamps and bag timestamps are the board's sample times;
diagnostics are written every ``diagnostics_period`` of board time and once at the end.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Optional, TextIO

from .bag import BagWriter
from .core import BridgeCore, Settings
from .sources import FileSource, LinkError
from .wire import Reply, StreamDecoder


@dataclass
class OfflineResult:
    frames: int
    imu_messages: int
    diagnostics_messages: int
    stats: Any
    foreign: Optional[str] = None  # "this is Plumb text …" / "this is MAVLink …"


def convert(path: str, bag_path: str, settings: Settings, diagnostics_period: float = 1.0,
            log: TextIO = sys.stderr) -> OfflineResult:  # fmt: skip
    settings.board_time_stamps = True
    source = FileSource(path)
    source.open()  # LinkError names the file
    decoder = StreamDecoder()
    core = BridgeCore(settings, hardware_id=path)
    writer = BagWriter(bag_path)
    period_ns = int(diagnostics_period * 1e9) if diagnostics_period > 0 else 0
    next_diag_ns = None
    last_stamp = 0
    warned = False
    try:
        while True:
            chunk = source.read()
            if not chunk:
                break
            for msg in decoder.feed(chunk):
                if isinstance(msg, Reply):
                    continue
                board_s = msg.time_ns / 1e9
                imu, temp = core.process(msg, arrival_ns=0, now_s=board_s)
                writer.write(imu, imu.stamp_ns)
                writer.write(temp, temp.stamp_ns)
                last_stamp = imu.stamp_ns
                if msg.kind == 1 and not warned:
                    warned = True
                    print(f"plumb-ros2: {path}: stream has no rates (kind 1): run plumb with --format binary-imu; "
                          "angular velocity and acceleration covariances are -1 (not provided)", file=log)  # fmt: skip
                if period_ns and (next_diag_ns is None or imu.stamp_ns >= next_diag_ns):
                    next_diag_ns = imu.stamp_ns + period_ns
                    writer.write(_diag(core, decoder, imu.stamp_ns, board_s, path), imu.stamp_ns)
        final = _diag(core, decoder, last_stamp, (last_stamp / 1e9), path, finished=True)
        writer.write(final, last_stamp)
    finally:
        writer.close()
        source.close()
    return OfflineResult(decoder.stats.frames, writer.counts["imu"], writer.counts["diagnostics"], decoder.stats,
                         decoder.foreign_message())  # fmt: skip


def _diag(core: BridgeCore, decoder: StreamDecoder, stamp_ns: int, now_s: float, path: str, finished: bool = False):
    return core.diagnostics(stamp_ns, now_s, decoder.stats, connected=True, finished=finished,
                            foreign=decoder.foreign_message())  # fmt: skip


def main_offline(file: str, bag: str, settings: Settings, diagnostics_period: float) -> int:
    from .bag import BagError

    try:
        result = convert(file, bag, settings, diagnostics_period)
    except (LinkError, BagError) as err:
        print(f"plumb-ros2: {err}", file=sys.stderr)
        return 1
    s = result.stats
    print(
        f"plumb-ros2: {file} → {bag}: {result.imu_messages} imu messages, {result.diagnostics_messages} diagnostics; "
        f"{s.bytes} bytes, crc_errors {s.crc_errors}, malformed {s.malformed}, resyncs {s.resyncs}, "
        f"frames_lost {s.frames_lost}, bytes_skipped {s.bytes_skipped}",
        file=sys.stderr,
    )
    if result.foreign and result.frames > 0:
        print(f"plumb-ros2: {file}: {result.foreign}", file=sys.stderr)
    if result.frames == 0:
        why = result.foreign or "is it a recording of plumb run --serial FILE (binary-imu or binary)?"
        print(f"plumb-ros2: {file}: no Plumb binary frames in it: {why}", file=sys.stderr)
        return 1
    return 0
