"""A stand-in board for trying plumb-ros2 before `plumb run --format binary-imu` exists:
writes kind-3 frames at 100 Hz to a tty/pty path (or UDP HOST:PORT) and answers `tare`.

    python3 tools/plumb-ros2/tests/fake_board.py /dev/pts/3 [--seconds 30] [--text] [--restart-at S]

The attitude turns slowly about z; the board clock is CLOCK_MONOTONIC (or restarts at 0 with
--restart-at, to see the bridge's stamps across a board restart).
"""

from __future__ import annotations

import argparse
import math
import os
import select
import socket
import sys
import time
import tty

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from plumb_ros2 import wire  # noqa: E402


def sample(seq: int, t_ns: int, heading: float, flags: int) -> wire.Sample:
    return wire.Sample(
        kind=3, sequence=seq, time_ns=t_ns,
        attitude=(math.cos(heading / 2), 0.0, 0.0, math.sin(heading / 2)),
        gyro_bias=(0.001, -0.002, 0.0005), temperature=31.5, flags=flags, missed=0, latency_us=800,
        calibration_id=0x1234, rate=(0.0, 0.0, 0.1), specific_force=(0.0, 0.0, wire.GRAVITY),
        tilt_sigma=0.005, heading_sigma=0.02, gyro_bias_sigma=(1e-4, 1e-4, 3e-4),
        gyro_noise_sigma=0.002, accel_noise_sigma=0.02,
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("target", help="tty/pty path, or udp:HOST:PORT")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--text", action="store_true", help="send $PLMB text lines instead (to see the bridge say so)")
    ap.add_argument("--restart-at", type=float, default=None)
    args = ap.parse_args()
    sock = None
    if args.target.startswith("udp:"):
        host, port = args.target[4:].rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.connect((host, int(port)))
        fd = sock.fileno()
    else:
        fd = os.open(args.target, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(fd)
    start = time.monotonic()
    clock0 = 0
    seq = 0
    heading_zero = 0.0
    pending = b""
    while time.monotonic() - start < args.seconds:
        now = time.monotonic()
        if args.restart_at is not None and now - start >= args.restart_at and clock0 == 0:
            clock0 = time.monotonic_ns() - 1_000_000_000  # the board "reboots": its clock reads 1 s
            seq = 0
        t_ns = time.monotonic_ns() - clock0
        heading = 0.1 * (now - start) - heading_zero
        flags = wire.FLAG_INITIALISING if now - start < 1.0 else wire.FLAG_CALIBRATION_LOADED
        if args.text:
            body = f"PLMB,{seq},{t_ns / 1e9:.3f},0.00,0.00,{math.degrees(heading):.2f},{flags:04X},0,800,31.50"
            out = f"${body}*{wire.nmea_checksum(body.encode()):02X}\r\n".encode()
        else:
            out = wire.frame_payload(wire.encode_sample(sample(seq, t_ns, heading, flags)))
        os.write(fd, out)
        seq += 1
        # commands
        r, _, _ = select.select([fd], [], [], 0)
        if r:
            pending += os.read(fd, 256) if sock is None else sock.recv(256)
            while b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                if line.strip() == b"tare":
                    heading_zero += heading
                    os.write(fd, wire.frame_payload(wire.encode_reply(True, "tare")))
                else:
                    os.write(fd, wire.frame_payload(wire.encode_reply(False, f"unknown command {line.decode()!r}")))
        time.sleep(max(0.0, 0.01 - (time.monotonic() - now)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
