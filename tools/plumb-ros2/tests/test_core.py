"""The ROS-free core: messages from samples, diagnostics levels and messages; the offline
converter into a real rosbag2 (when rosbags is installed); the CLI without ROS."""

from __future__ import annotations

import importlib.util
import io
import math
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from plumb_ros2 import cli, wire  # noqa: E402
from plumb_ros2.core import ERROR, OK, STALE, WARN, BridgeCore, Settings  # noqa: E402
from test_covariance import imu_sample  # noqa: E402
from test_wire import kind3_stream, read_hex_vectors  # noqa: E402

HAVE_ROSBAGS = importlib.util.find_spec("rosbags") is not None


class CoreTests(unittest.TestCase):
    def test_imu_message_from_kind3(self) -> None:
        core = BridgeCore(Settings(frame_id="base_imu", board_time_stamps=True), "/dev/ttyUSB0")
        s = imu_sample(attitude=(0.5, 0.1, 0.2, 0.3), rate=(1.0, 2.0, 3.0), specific_force=(0.1, 0.2, 9.7))
        s.time_ns = 7 * 10**9
        imu, temp = core.process(s, arrival_ns=0, now_s=0.0)
        self.assertEqual(imu.orientation, (0.1, 0.2, 0.3, 0.5))  # ROS order x, y, z, w
        self.assertEqual(imu.angular_velocity, (1.0, 2.0, 3.0))
        self.assertEqual(imu.linear_acceleration, (0.1, 0.2, 9.7))
        self.assertEqual(imu.frame_id, "base_imu")
        self.assertEqual(imu.stamp_ns, 7 * 10**9)
        self.assertEqual((temp.temperature, temp.variance, temp.stamp_ns), (25.0, 0.0, 7 * 10**9))

    def test_nan_rate_is_not_published_as_nan(self) -> None:
        core = BridgeCore(Settings(board_time_stamps=True), "x")
        imu, _ = core.process(imu_sample(rate=(math.nan, 0.0, 0.0)), 0, 0.0)
        self.assertTrue(all(math.isfinite(v) for v in imu.angular_velocity))

    def test_link_levels(self) -> None:
        core = BridgeCore(Settings(stale_timeout=1.0), "/dev/ttyUSB0")
        st = wire.LinkStats()
        d = core.diagnostics(0, 10.0, st, connected=True)
        self.assertEqual((d.statuses[0].level, d.statuses[1].level), (ERROR, STALE))
        self.assertIn("no frames from /dev/ttyUSB0", d.statuses[0].message)
        core.process(imu_sample(), arrival_ns=10**18, now_s=10.0)
        self.assertEqual(core.diagnostics(0, 10.5, st, connected=True).statuses[0].level, OK)
        stale = core.diagnostics(0, 12.0, st, connected=True).statuses[0]
        self.assertEqual(stale.level, ERROR)
        self.assertIn("for 2.0 s", stale.message)
        gone = core.diagnostics(0, 10.5, st, connected=False, last_error="/dev/ttyUSB0: no such device").statuses[0]
        self.assertEqual(gone.level, ERROR)
        self.assertIn("no such device", gone.message)
        keys = [k for k, _ in gone.values]
        for key in ("frames", "crc_errors", "malformed", "resyncs", "frames_lost", "bytes_skipped", "reconnects",
                    "disconnected_seconds", "last_error"):  # fmt: skip
            self.assertIn(key, keys)
        foreign = core.diagnostics(0, 10.5, st, connected=True, foreign="this is MAVLink; run …").statuses[0]
        self.assertEqual(foreign.level, ERROR)

    def test_kind1_warns_no_rates(self) -> None:
        core = BridgeCore(Settings(board_time_stamps=True), "x")
        frame = read_hex_vectors("binary_v1.hex")[0]
        s = wire.decode_all(frame)[0][0]
        imu, _ = core.process(s, 0, 0.0)
        self.assertEqual(imu.angular_velocity_covariance[0], -1.0)
        self.assertEqual(imu.linear_acceleration, (0.0, 0.0, wire.GRAVITY))
        link = core.diagnostics(0, 0.0, wire.LinkStats(), connected=True).statuses[0]
        self.assertEqual(link.level, WARN)
        self.assertIn("--format binary-imu", link.message)

    def test_estimator_levels(self) -> None:
        core = BridgeCore(Settings(board_time_stamps=True), "x")
        core.process(imu_sample(wire.FLAG_REST | wire.FLAG_CALIBRATION_LOADED), 0, 0.0)
        est = core.diagnostics(0, 0.0, wire.LinkStats(), connected=True).statuses[1]
        self.assertEqual(est.level, OK)
        self.assertIn(("rest", "true"), est.values)
        for flag in (wire.FLAG_INITIALISING, wire.FLAG_RECOVERING, wire.FLAG_HEADING_UNCERTAIN,
                     wire.FLAG_ACCELERATION_REJECTED, wire.FLAG_GAP, wire.FLAG_DEGRADED_TIMING,
                     wire.FLAG_I2C_RECOVERY):  # fmt: skip
            core.process(imu_sample(flag), 0, 0.0)
            est = core.diagnostics(0, 0.0, wire.LinkStats(), connected=True).statuses[1]
            self.assertEqual(est.level, WARN, wire.flag_names(flag))
            self.assertIn(wire.flag_names(flag)[0], est.message)


class CliTests(unittest.TestCase):
    def test_help_needs_no_ros(self) -> None:
        out = io.StringIO()
        with redirect_stdout(out), self.assertRaises(SystemExit) as ctx:
            cli.main(["--help"])
        self.assertEqual(ctx.exception.code, 0)
        self.assertIn("--offline", out.getvalue())

    def test_ros_args_pass_through(self) -> None:
        own, ros = cli.split_ros_args(["--serial", "/dev/x", "--ros-args", "-p", "frame_id:=a", "--serial"])
        self.assertEqual(own, ["--serial", "/dev/x"])
        self.assertEqual(ros, ["--ros-args", "-p", "frame_id:=a", "--serial"])

    def test_offline_needs_file_and_bag(self) -> None:
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(cli.main(["--file", "x.bin", "--offline"]), 2)
        self.assertIn("--bag", err.getvalue())

    def test_node_module_imports_without_rclpy(self) -> None:
        import plumb_ros2.node as node

        self.assertEqual(node.NODE_NAME, "plumb_imu")


@unittest.skipUnless(HAVE_ROSBAGS, "rosbags is not installed (pip install rosbags)")
class OfflineTests(unittest.TestCase):
    def test_damaged_recording_to_bag(self) -> None:
        from rosbags.rosbag2 import Reader
        from rosbags.typesys import Stores, get_typestore

        frames = kind3_stream(300)
        data = b"garbage" + b"".join(f if i % 50 != 7 else f[:30] + b"\x13" + f[31:] for i, f in enumerate(frames))
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "run.bin")
            with open(src, "wb") as f:
                f.write(data)
            bag = os.path.join(tmp, "bag")
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(cli.main(["--file", src, "--bag", bag, "--offline"]), 0)
            self.assertIn("frames_lost 6", err.getvalue())  # 6 damaged frames dropped
            ts = get_typestore(Stores.ROS2_JAZZY)
            counts: dict[str, int] = {}
            stamps = []
            with Reader(bag) as reader:
                for conn, t, raw in reader.messages():
                    counts[conn.topic] = counts.get(conn.topic, 0) + 1
                    if conn.topic == "/imu/data":
                        m = ts.deserialize_cdr(raw, conn.msgtype)
                        stamp = m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
                        self.assertEqual(stamp, t)
                        stamps.append(stamp)
                        self.assertEqual(m.orientation.w, 0.5)
                        self.assertAlmostEqual(m.orientation_covariance[0], 0.0087**2)
            self.assertEqual(counts["/imu/data"], 294)
            self.assertEqual(counts["/imu/temperature"], 294)
            self.assertGreaterEqual(counts["/diagnostics"], 3)
            self.assertEqual(stamps[0], 1_000_000_000)  # board time
            self.assertEqual(stamps, sorted(stamps))
            # a bag is never overwritten
            with redirect_stderr(io.StringIO()) as e2:
                self.assertEqual(cli.main(["--file", src, "--bag", bag, "--offline"]), 1)
            self.assertIn("exists", e2.getvalue())

    def test_text_recording_is_named(self) -> None:
        with open(os.path.join(os.path.dirname(HERE), "..", "..", "Tests", "TelemetryTests", "Vectors",
                               "text_v1.txt"), "rb") as f:  # fmt: skip
            text = f.read()
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "run.txt")
            with open(src, "wb") as f:
                f.write(text * 5)
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(cli.main(["--file", src, "--bag", os.path.join(tmp, "bag"), "--offline"]), 1)
            self.assertIn("this is Plumb text", err.getvalue())
            self.assertIn("--format binary-imu", err.getvalue())


if __name__ == "__main__":
    unittest.main()
