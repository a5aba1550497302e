"""The node itself, with real rclpy and middleware (skipped where rclpy is not importable).

`plumb-ros2 --serial PTY` runs as a subprocess on the slave end of a pty whose master this test
holds: it writes kind-3 frames (and damaged ones with an attitude no good frame has), answers
`tare` like a board, and subscribes with rclpy. Isolated with a ROS_DOMAIN_ID of its own and
localhost-only discovery. Deadlines are generous; the checks are on content, never on timing.
(The end-to-end run with `plumb run` is `make ros2-test`.)
"""

from __future__ import annotations

import importlib.util
import math
import os
import select
import subprocess
import sys
import threading
import time
import tty
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE_ROOT)

from plumb_ros2 import wire  # noqa: E402

HAVE_RCLPY = importlib.util.find_spec("rclpy") is not None
DEADLINE = 60.0

GOOD_Q = (math.cos(0.2), 0.0, 0.0, math.sin(0.2))  # yaw 0.4 rad
BAD_Q = (0.0, 1.0, 0.0, 0.0)  # only ever sent in damaged frames


def frame(seq: int, q: tuple[float, float, float, float]) -> bytes:
    s = wire.Sample(
        kind=3, sequence=seq, time_ns=5_000_000_000 + seq * 10_000_000, attitude=q,
        gyro_bias=(0.001, -0.002, 0.0005), temperature=31.25, flags=wire.FLAG_CALIBRATION_LOADED, missed=0,
        latency_us=700, calibration_id=0xBEEF, rate=(0.5, -0.25, 0.125), specific_force=(0.0, 0.0, 9.805),
        tilt_sigma=0.01, heading_sigma=0.05, gyro_bias_sigma=(1e-4, 2e-4, 3e-4), gyro_noise_sigma=0.002,
        accel_noise_sigma=0.02,
    )  # fmt: skip
    return wire.frame_payload(wire.encode_sample(s))


class Board(threading.Thread):
    """Writes frames at ~100 Hz into the pty master; every 10th frame damaged; answers tare."""

    def __init__(self, master: int) -> None:
        super().__init__(daemon=True)
        self.master = master
        self.stop = threading.Event()
        self.tares = 0

    def run(self) -> None:
        seq = 0
        pending = b""
        os.set_blocking(self.master, False)
        while not self.stop.is_set():
            if seq % 10 == 5:
                bad = bytearray(frame(seq, BAD_Q))
                bad[40] ^= 0x10  # caught by COBS or the CRC
                data = bytes(bad)
            else:
                data = frame(seq, GOOD_Q)
            self.write_all(data)
            seq += 1
            try:
                pending += os.read(self.master, 256)
            except (BlockingIOError, OSError):
                pass
            while b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                if line.strip() == b"tare":
                    self.tares += 1
                    self.write_all(wire.frame_payload(wire.encode_reply(True, "tare heading 23 deg")))
            time.sleep(0.01)

    def write_all(self, data: bytes) -> None:
        """Whole frames only (a full pty waits, as a UART would), so only the damaged ones are bad."""
        while data and not self.stop.is_set():
            try:
                data = data[os.write(self.master, data):]
            except BlockingIOError:
                select.select([], [self.master], [], 0.1)


@unittest.skipUnless(HAVE_RCLPY, "rclpy is not importable (install the ROS wheels or source ROS 2)")
class NodeTests(unittest.TestCase):
    def test_publishes_tares_and_diagnoses(self) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import Imu, Temperature
        from std_srvs.srv import Trigger

        master, slave = os.openpty()
        tty.setraw(master)
        path = os.ttyname(slave)
        env = dict(os.environ)
        env["ROS_DOMAIN_ID"] = str(100 + os.getpid() % 100)
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
        os.environ["ROS_DOMAIN_ID"] = env["ROS_DOMAIN_ID"]
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        proc = subprocess.Popen(
            [sys.executable, "-m", "plumb_ros2", "--serial", path, "--frame-id", "test_imu",
             "--ros-args", "-r", "__ns:=/t", "-p", "diagnostics_period:=0.5"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        board = Board(master)
        board.start()
        rclpy.init()
        node = rclpy.create_node("plumb_ros2_test")
        imus: list = []
        temps: list = []
        diags: list = []
        node.create_subscription(Imu, "/t/imu/data", imus.append, 100)
        node.create_subscription(Temperature, "/t/imu/temperature", temps.append, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 10)
        client = node.create_client(Trigger, "/t/plumb_imu/tare")
        try:
            end = time.monotonic() + DEADLINE
            while (len(imus) < 200 or not diags) and time.monotonic() < end and proc.poll() is None:
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertIsNone(proc.poll(), "the node exited")
            self.assertGreaterEqual(len(imus), 200)
            self.assertTrue(client.wait_for_service(timeout_sec=DEADLINE))
            future = client.call_async(Trigger.Request())
            rclpy.spin_until_future_complete(node, future, timeout_sec=DEADLINE)
            reply = future.result()
            self.assertIsNotNone(reply)
            self.assertTrue(reply.success)
            self.assertEqual(reply.message, "tare heading 23 deg")
            self.assertEqual(board.tares, 1)
            # a few more diagnostics after the damage has been counted
            n = len(diags)
            end = time.monotonic() + DEADLINE
            while len(diags) < n + 2 and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.1)
        finally:
            board.stop.set()
            node.destroy_node()
            rclpy.try_shutdown()
            proc.terminate()
            out = proc.communicate(timeout=DEADLINE)[0].decode(errors="replace")
            os.close(master)
            os.close(slave)
        for m in imus:
            got = (m.orientation.w, m.orientation.x, m.orientation.y, m.orientation.z)
            self.assertNotEqual(got, (0.0, 1.0, 0.0, 0.0), "a damaged frame was published")
        m = imus[-1]
        self.assertEqual(m.header.frame_id, "test_imu")
        q = [float(v) for v in wire.struct.unpack("<4f", wire.struct.pack("<4f", *GOOD_Q))]
        self.assertEqual([m.orientation.w, m.orientation.x, m.orientation.y, m.orientation.z], q)
        self.assertEqual((m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z), (0.5, -0.25, 0.125))
        self.assertAlmostEqual(m.linear_acceleration.z, 9.805)
        self.assertAlmostEqual(m.orientation_covariance[0], 1e-4)
        self.assertAlmostEqual(m.orientation_covariance[8], 0.0025)
        self.assertAlmostEqual(m.angular_velocity_covariance[8], 0.002**2 + 3e-4**2)
        self.assertAlmostEqual(m.linear_acceleration_covariance[4], 0.02**2)
        stamps = [x.header.stamp.sec * 10**9 + x.header.stamp.nanosec for x in imus]
        self.assertEqual(stamps, sorted(stamps))
        self.assertAlmostEqual(temps[-1].temperature, 31.25)
        link = [s for s in diags[-1].status if s.name == "plumb_ros2: link"][0]
        values = {kv.key: kv.value for kv in link.values}
        self.assertGreater(int(values["crc_errors"]) + int(values["malformed"]), 0, out)
        self.assertGreater(int(values["resyncs"]), 0, out)
        self.assertGreater(int(values["frames"]), 200)
        self.assertEqual(link.hardware_id, path)
        est = [s for s in diags[-1].status if s.name == "plumb_ros2: estimator"][0]
        self.assertEqual(est.level, b"\x00")
        self.assertIn(("calibration_id", "0x0000BEEF"), [(kv.key, kv.value) for kv in est.values])


if __name__ == "__main__":
    unittest.main()
