#!/usr/bin/env python3
"""plumb-ros2 end to end, with the real ROS 2 middleware (rclpy and Fast DDS from PyPI wheels):

    plumb run --board Boards/simulated.json --format binary-imu --serial <pty A>   (real time)
    this script's forwarder: pty A -> pty B (every byte from the board recorded to a file;
        it damages some frames' CRC and adds garbage on the way, and cuts the link for a few
        seconds: pty B closed and the path the bridge opened removed, then a new one there)
    plumb-ros2 --serial <link to pty B>                                  (its own process)
    this script: an rclpy node (another process) that records every Imu, Temperature and
        DiagnosticArray message and calls the bridge's ~/tare service

    check_ros2.py [--plumb PATH] [--monitor PATH] [--bridge CMD] [--format binary-imu|binary]
                  [--board FILE] [--keep DIR] [-v]

After the run the recorded bytes are decoded by plumb-monitor FILE --json (the Swift decoder;
the σ fields by this folder's wire.py) and each published message is held against its frame.
One line per check, PASS or FAIL with the numbers (what each checks: the `CHECKS` list below);
exit 0 when all pass, 1 otherwise, 2 on usage errors. Every process it starts is ended and
its temporary folder removed (--keep DIR keeps the logs, the recording and the messages there).

The ROS domain is picked at random per run (printed) and discovery kept to this host
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST), so runs side by side on one machine do not hear each
other. Nothing here bounds wall-clock time tightly: rates are regression slopes over many
seconds, stamps are compared with the board's own sample times, timeouts are generous.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tty
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
import wire  # noqa: E402

VERBOSE = False
CLEAN_SECONDS = 20.0  # the undisturbed stretch the rate is measured over
CORRUPT_SECONDS = 5.0
CUT_SECONDS = 4.0
TEXT_SECONDS = 4.0
# A board run's first 10 s (board time): a bridge's offset, first taken from one frame and its
# delay, may converge faster than it drifts later (plumb-ros2: 50 ms/s against 1 ms/s), so one
# step may be off by that rate times a stalled read; 5 ms is a 100 ms stall at 50 ms/s, and still
# a small fraction of a second that an offset re-learnt from a wrong clock would move by.
ACQUIRE_NS = 10_000_000_000
ACQUIRE_STEP_BOUND_NS = 5_000_000
RESTART_SECONDS = 8.0  # after a new `plumb run` starts (its start-up takes about a second)
# A restarted board's clock starts again, so across a restart a stamp can only be held against
# the host: stamp − arrival time is minus the transport and DDS delay, steady but for jitter;
# its median over 50 messages before and after the restart must not move by more than 50 ms
# (medians: a loaded machine's odd late message moves neither; a stamp that jumped with the
# board's clock would move it by the board's whole uptime, one estimated from a single slow
# frame by that frame's delay, well under 50 ms on a pty).
RESTART_SHIFT_BOUND_NS = 50_000_000
AFTER_SECONDS = 6.0
CORRUPT_EVERY = 17  # every 17th telemetry frame gets one attitude bit flipped (CRC then fails)
GARBAGE_EVERY = 23  # 25 random non-zero bytes after every 23rd frame
YAW_VARIANCE = 2.5  # heading_uncertain_yaw_variance given to the bridge, rad²
# Two frames within this long before a cut (or the end) may be lost with the pty they sat in.
UNCERTAIN_SECONDS = 1.0

CHECKS = """\
  rate         messages per second (slope of arrivals over the clean stretch) within 1 % of
               the frames per second (slope of the frames' sample times)
  messages     every frame forwarded whole has exactly one Imu message, in order; no message
               that is not a frame's (frames forwarded within 1 s before a cut may be lost)
  quaternion   each message's (x, y, z, w) equals its frame's (w, x, y, z) to f32 precision
  fields       frame_id imu_link; kind 3: angular_velocity = rate, linear_acceleration =
               specific force (i16 × 0.005); temperature = the frame's, same stamp
  covariance   the contract's diagonals from the frame's σ fields (kind 1: [0] = -1)
  stamps       strictly increasing; each step equals the frames' sample-time step within
               1 ms + 0.1 % (the offset is constant but for the estimator's slewing, and no
               real clock drifts 1000 ppm); 5 ms in each board run's first 10 s (convergence)
  tare         ~/tare returns success; yaw before it > 10°, after it < 1.5°
  crc          no message for a damaged frame; diagnostics' crc_errors >= frames damaged
  link         diagnostics 'plumb_ros2: link' OK before the cut, ERROR during it, OK after
  restart      `plumb run` stopped and started again (seed + 1, its clock from 0 again): the
               stamps' offset to the arrival times (median of 50 messages) moves < 50 ms across
               it, stamps strictly increasing, messages resume
  text         the board told `format text` for 4 s: the link status names text and binary-imu
               (WARN or ERROR); after `format binary-imu` OK again (and the messages resume:
               the messages check covers those frames)
"""


def log(text: str) -> None:
    if VERBOSE:
        print("check_ros2: [%s] %s" % (time.strftime("%H:%M:%S"), text), flush=True)


class Results:
    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def check(self, name: str, ok: bool, detail: str) -> bool:
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        return ok


class Process:
    """A child in its own process group, its output in a file."""

    def __init__(self, name: str, argv: list[str], folder: str, env: Optional[dict] = None):
        self.name = name
        self.log_path = os.path.join(folder, name + ".log")
        self.log = open(self.log_path, "wb")
        log("start %s: %s" % (name, " ".join(argv)))
        self.popen = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=self.log,
                                      stderr=self.log, start_new_session=True, env=env)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, first: int = signal.SIGINT, timeout: float = 10) -> Optional[int]:
        if self.alive():
            for sig in (first, signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.popen.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.popen.wait(timeout)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.log.close()
        return self.popen.returncode

    def tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""


@dataclass
class Fate:
    what: str  # forwarded, corrupted, dropped (link cut or forwarding stopped)
    at: float  # time.monotonic() when the forwarder handled it
    corrupted_wxyz: Optional[tuple[float, float, float, float]] = None


class Forwarder:
    """pty A (the board writes its slave) to pty B (the bridge reads its slave through a symbolic
    link), frame by frame, and commands back. Every byte read from A goes to the recording as
    read. It can damage frames (one attitude bit flipped, the frame re-encoded with its old CRC:
    well-formed, CRC wrong), add garbage between frames, and cut the link: pty B closed and the
    link removed (the bridge's device vanishes), later a new pty B behind the same link."""

    def __init__(self, folder: str, recording: str):
        self.a_master, self.a_slave = os.openpty()
        tty.setraw(self.a_slave)
        os.set_blocking(self.a_master, False)
        self.board_path = os.ttyname(self.a_slave)
        self.link = os.path.join(folder, "plumb-tty")
        self.record = open(recording, "wb")
        self.lock = threading.Lock()
        self.b_master: Optional[int] = None
        self.b_slave: Optional[int] = None
        self._open_b()
        self.buffer = bytearray()
        self.to_a = bytearray()
        self.to_b = bytearray()
        self.fates: dict[tuple[int, int], Fate] = {}  # by (board run, sample time)
        self.epoch = 0  # the board runs before this one
        self.telemetry = 0
        self.corrupt_every = 0
        self.garbage_every = 0
        self.garbage_bytes = 0
        self.corrupted = 0
        self.forwarding = True
        # raw: the board's bytes passed on as they come (a text stream has no delimiters); the
        # binary frames among them are still noted as forwarded
        self.raw = False
        self.cut_at: list[float] = []
        self.restored_at: list[float] = []
        self.commands = bytearray()
        self.rng = random.Random(27)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open_b(self) -> None:
        self.b_master, self.b_slave = os.openpty()
        tty.setraw(self.b_slave)
        os.set_blocking(self.b_master, False)
        temporary = self.link + ".new"
        os.symlink(os.ttyname(self.b_slave), temporary)
        os.replace(temporary, self.link)

    def cut(self) -> None:
        with self.lock:
            self.cut_at.append(time.monotonic())
            os.unlink(self.link)
            for fd in (self.b_master, self.b_slave):
                os.close(fd)
            self.b_master = self.b_slave = None
            self.to_b.clear()

    def restore(self) -> None:
        with self.lock:
            self._open_b()
            self.restored_at.append(time.monotonic())

    def to_board(self, line: bytes) -> None:
        """A host command, as the bridge would send it."""
        with self.lock:
            self.to_a += line

    def _frame(self, block: bytes) -> None:
        payload = wire.split_payload(block)
        frame = wire.parse_telemetry(payload) if payload is not None else None
        now = time.monotonic()
        if frame is not None:
            self.telemetry += 1
        if self.b_master is None or not self.forwarding:
            if frame is not None:
                self.fates[(self.epoch, frame.sample_time_ns)] = Fate("dropped", now)
            return
        out = b"\x00" + block + b"\x00"
        if frame is not None:
            fate = Fate("forwarded", now)
            if self.corrupt_every and self.telemetry % self.corrupt_every == 0:
                damaged = bytearray(payload)
                damaged[20] ^= 0x01  # a bit of the attitude's x
                crc = struct.pack("<H", wire.crc16(payload))
                out = b"\x00" + wire.cobs_encode(bytes(damaged) + crc) + b"\x00"
                fate = Fate("corrupted", now, struct.unpack_from("<4f", bytes(damaged), 14))
                self.corrupted += 1
            self.fates[(self.epoch, frame.sample_time_ns)] = fate
            if self.garbage_every and self.telemetry % self.garbage_every == 0:
                garbage = bytes(self.rng.randint(1, 255) for _ in range(25))
                out += garbage
                self.garbage_bytes += len(garbage)
        if not self.raw:
            self.to_b += out

    def _run(self) -> None:
        while self.running:
            with self.lock:
                b_master = self.b_master
                readers = [self.a_master] + ([b_master] if b_master is not None else [])
                writers = [fd for fd, data in ((self.a_master, self.to_a), (b_master, self.to_b))
                           if data and fd is not None]
            try:
                readable, writable, _ = select.select(readers, writers, [], 0.05)
            except (OSError, ValueError):
                continue  # pty B closed meanwhile
            with self.lock:
                for fd in readable:
                    if fd != self.a_master and fd != self.b_master:
                        continue
                    try:
                        data = os.read(fd, 65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        time.sleep(0.01)
                        continue
                    if fd == self.a_master:
                        self.record.write(data)
                        self.buffer += data
                        if self.raw and self.b_master is not None and self.forwarding:
                            self.to_b += data
                        while True:
                            end = self.buffer.find(b"\x00")
                            if end < 0:
                                break
                            block = bytes(self.buffer[:end])
                            del self.buffer[:end + 1]
                            if block:
                                self._frame(block)
                    else:
                        self.commands += data
                        self.to_a += data
                for fd in writable:
                    pending = self.to_a if fd == self.a_master else self.to_b
                    if fd != self.a_master and fd != self.b_master:
                        continue
                    try:
                        del pending[:os.write(fd, pending)]
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        pending.clear()
                del self.to_b[:max(0, len(self.to_b) - (1 << 20))]

    def close(self) -> None:
        self.running = False
        self.thread.join(5)
        self.record.close()
        for fd in (self.a_master, self.a_slave, self.b_master, self.b_slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


@dataclass
class ImuRecord:
    arrival: float
    stamp_ns: int
    frame_id: str
    xyzw: tuple[float, float, float, float]
    orientation_cov: tuple[float, ...]
    rate: tuple[float, float, float]
    rate_cov: tuple[float, ...]
    accel: tuple[float, float, float]
    accel_cov: tuple[float, ...]


@dataclass
class Listener:
    """The rclpy side: subscriptions, the messages they got, the tare client."""

    imu: list[ImuRecord] = field(default_factory=list)
    temperature: list[tuple[float, int, float]] = field(default_factory=list)
    # (arrival, {status name: (level, message, {key: value})})
    diagnostics: list[tuple[float, dict[str, tuple[int, str, dict[str, str]]]]] = field(
        default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def stamp_ns(stamp: Any) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def level_of(raw: Any) -> int:
    return raw[0] if isinstance(raw, (bytes, bytearray)) else int(raw)


def yaw_degrees(xyzw: tuple[float, float, float, float]) -> float:
    x, y, z, w = xyzw
    return math.degrees(math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def wait_until(condition: Callable[[], Any], timeout: float, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


def decode_with_monitor(monitor: str, recording: str, format_name: str) -> list[dict]:
    """Every frame plumb-monitor decodes from the recording (its --json frame objects); the
    format is the monitor's to detect (format_name only names it in a failure)."""
    run = subprocess.run([monitor, recording, "--json"],
                         capture_output=True, text=True, timeout=120)
    frames = []
    for line in run.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        # binary frames only: the text lines of the stretch the board sends text are frames too
        if item.get("type") == "frame" and str(item.get("format", "")).startswith("binary"):
            frames.append(item)
    if not frames:
        raise RuntimeError("plumb-monitor decoded no %s frame from %s (exit %d): %s"
                           % (format_name, recording, run.returncode, run.stderr[-2000:]))
    return frames


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / sxx


def close(a: float, b: float, relative: float = 1e-6, absolute: float = 1e-12) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= absolute + relative * max(abs(a), abs(b))


def run(args: argparse.Namespace, folder: str, results: Results) -> None:
    domain = random.SystemRandom().randint(1, 101)
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
    os.environ["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"  # the one the pins bring
    os.environ["ROS_LOG_DIR"] = os.path.join(folder, "ros-log")
    # The bridge in a namespace of this run's own too (its topics are relative names, so the
    # contract says a namespace works): a domain shared by chance still keeps runs apart.
    namespace = "/plumb_e2e_%d" % os.getpid()
    print("check_ros2: ROS_DOMAIN_ID=%d, discovery on this host only, %s, bridge in namespace "
          "%s, format %s" % (domain, os.environ["RMW_IMPLEMENTATION"], namespace, args.format),
          flush=True)
    # Imported only now: the environment above is read when the middleware starts.
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, HistoryPolicy, DurabilityPolicy
    from sensor_msgs.msg import Imu, Temperature
    from diagnostic_msgs.msg import DiagnosticArray
    from std_srvs.srv import Trigger

    recording = os.path.join(folder, "board.bin")
    forwarder = Forwarder(folder, recording)
    processes: list[Process] = []
    listener = Listener()
    rclpy.init()
    node = rclpy.create_node("plumb_e2e_listener")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    try:
        bridge = Process("plumb-ros2", args.bridge + [
            "--serial", forwarder.link, "--ros-args", "-r", "__ns:=" + namespace, "-p",
            "heading_uncertain_yaw_variance:=%r" % YAW_VARIANCE], folder)
        processes.append(bridge)

        def running() -> None:
            for p in processes:
                if not p.alive():
                    raise RuntimeError("%s exited (%s) early:\n%s"
                                       % (p.name, p.popen.returncode, p.tail()))

        # The bridge's publisher decides the reliability this subscription must match.
        topic = namespace + "/imu/data"
        infos = wait_until(lambda: running() or node.get_publishers_info_by_topic(topic), 60, 0.2)
        if not infos:
            raise RuntimeError("no publisher on %s after 60 s; bridge log:\n%s"
                               % (topic, bridge.tail()))
        reliability = infos[0].qos_profile.reliability
        durability = DurabilityPolicy.VOLATILE
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000, reliability=reliability,
                         durability=durability)
        log("publisher QoS reliability %s" % reliability)

        def on_imu(m: Any) -> None:
            record = ImuRecord(
                time.monotonic(), stamp_ns(m.header.stamp), m.header.frame_id,
                (m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w),
                tuple(m.orientation_covariance),
                (m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z),
                tuple(m.angular_velocity_covariance),
                (m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z),
                tuple(m.linear_acceleration_covariance))
            with listener.lock:
                listener.imu.append(record)

        def on_temperature(m: Any) -> None:
            with listener.lock:
                listener.temperature.append(
                    (time.monotonic(), stamp_ns(m.header.stamp), m.temperature))

        def on_diagnostics(m: Any) -> None:
            # /diagnostics is one topic for every node: another run's bridge on this domain
            # (a chance draw) names its own device as hardware_id
            statuses = {s.name: (level_of(s.level), s.message,
                                 {kv.key: kv.value for kv in s.values}) for s in m.status
                        if s.hardware_id in ("", forwarder.link)}
            with listener.lock:
                listener.diagnostics.append((time.monotonic(), statuses))

        imu_subscription = node.create_subscription(Imu, namespace + "/imu/data", on_imu, qos)
        node.create_subscription(Temperature, namespace + "/imu/temperature", on_temperature,
                                 qos)
        node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics,
                                 QoSProfile(depth=100))
        tare = node.create_client(Trigger, namespace + "/plumb_imu/tare")
        spinner.start()
        # The board starts once the subscription has found the bridge's publisher, so that its
        # first frames (initialising, heading uncertain) are heard too.
        wait_until(lambda: running() or imu_subscription.get_publisher_count() > 0, 30)
        time.sleep(1.0)
        board = Process("plumb-run", [args.plumb, "run", "--board", args.board, "--format",
                                      args.format, "--serial", forwarder.board_path], folder)
        processes.append(board)

        if not wait_until(lambda: running() or listener.imu, 60):
            raise RuntimeError("no Imu message in 60 s; bridge log:\n" + bridge.tail())
        clean_start = time.monotonic()
        log("first message; clean stretch of %g s" % CLEAN_SECONDS)
        time.sleep(CLEAN_SECONDS)
        clean_end = time.monotonic()

        # tare, when the board's yaw is well away from 0 (so that the check can fail)
        def yaw_far() -> bool:
            with listener.lock:
                return abs(yaw_degrees(listener.imu[-1].xyzw)) > 10
        wait_until(yaw_far, 60)
        with listener.lock:
            yaw_before = yaw_degrees(listener.imu[-1].xyzw)
        if not tare.wait_for_service(timeout_sec=30):
            raise RuntimeError("no %s/plumb_imu/tare service after 30 s" % namespace)
        tare_asked = time.monotonic()
        future = tare.call_async(Trigger.Request())
        answer = wait_until(lambda: future.done(), 30)
        tare_answered = time.monotonic()
        response = future.result() if answer else None
        time.sleep(1.0)
        with listener.lock:
            after = [r for r in listener.imu if tare_asked <= r.arrival <= tare_answered + 0.3]
        yaw_after = min((abs(yaw_degrees(r.xyzw)) for r in after), default=float("nan"))
        results.check(
            "tare", response is not None and response.success and abs(yaw_before) > 10
            and yaw_after < 1.5,
            "success=%s message=%r in %.3f s; yaw %.2f° before, %.3f° after (smallest |yaw| of "
            "the %d messages up to 0.3 s after the answer)"
            % (response.success if response else None, response.message if response else None,
               tare_answered - tare_asked, yaw_before, yaw_after, len(after)))

        log("damaging frames for %g s" % CORRUPT_SECONDS)
        with forwarder.lock:
            forwarder.corrupt_every, forwarder.garbage_every = CORRUPT_EVERY, GARBAGE_EVERY
        time.sleep(CORRUPT_SECONDS)
        with forwarder.lock:
            forwarder.corrupt_every = forwarder.garbage_every = 0
        time.sleep(2.0)

        log("cutting the link for %g s" % CUT_SECONDS)
        forwarder.cut()
        time.sleep(CUT_SECONDS)
        forwarder.restore()
        time.sleep(AFTER_SECONDS)

        log("the board switched to text for %g s" % TEXT_SECONDS)
        with forwarder.lock:
            forwarder.raw = True
            text_at = time.monotonic()
        forwarder.to_board(b"format text\n")
        time.sleep(TEXT_SECONDS)
        forwarder.to_board(b"format %s\n" % args.format.encode())
        back_at = time.monotonic()
        time.sleep(1.0)
        with forwarder.lock:
            forwarder.raw = False
        time.sleep(AFTER_SECONDS - 1.0)

        log("restarting the board")
        board.stop(signal.SIGTERM)
        time.sleep(0.5)  # its last bytes read
        with forwarder.lock:
            forwarder.epoch += 1
        restart_at = time.monotonic()
        # the same board with the next seed: the same scenario with seed 1 again would send
        # the very frames it sent at the start, which no check could tell apart
        with open(args.board) as f:
            definition = json.load(f)
        simulation = definition.setdefault("simulation", {})
        simulation["seed"] = int(simulation.get("seed", 1)) + 1
        second_board = os.path.join(folder, "board-2.json")
        with open(second_board, "w") as f:
            json.dump(definition, f)
        board = Process("plumb-run-2", [args.plumb, "run", "--board", second_board, "--format",
                                        args.format, "--serial", forwarder.board_path], folder)
        processes.append(board)
        time.sleep(RESTART_SECONDS)
        with forwarder.lock:
            forwarder.forwarding = False
            end_at = time.monotonic()
        time.sleep(2.0)
        executor.shutdown(timeout_sec=5)
    finally:
        for p in reversed(processes):
            code = p.stop()
            log("%s ended: %s" % (p.name, code))
        forwarder.close()
        try:
            node.destroy_node()
            rclpy.try_shutdown()
        except Exception:  # noqa: BLE001 - already shut down
            pass
    if args.keep:
        with open(os.path.join(folder, "messages.json"), "w") as f:
            json.dump({"imu": [r.__dict__ for r in listener.imu],
                       "temperature": listener.temperature,
                       "diagnostics": listener.diagnostics}, f)
    judge(args, results, forwarder, listener, recording, clean_start, clean_end, end_at,
          (text_at, back_at), restart_at)


def judge(args: argparse.Namespace, results: Results, forwarder: Forwarder, listener: Listener,
          recording: str, clean_start: float, clean_end: float, end_at: float,
          text: tuple[float, float], restart_at: float) -> None:
    frames = decode_with_monitor(args.monitor, recording, args.format)
    with open(recording, "rb") as f:
        own_frames = wire.frames_in(f.read())
    # a board run's frames by (run, sample time): the restarted board's clock starts again
    own = {}
    epoch = 0
    for previous, t in zip([None] + own_frames, own_frames):
        if previous is not None and t.sequence < previous.sequence:
            epoch += 1
        own[(epoch, t.sample_time_ns)] = t
    epoch = 0
    for previous, item in zip([None] + frames, frames):
        if previous is not None and item["sequence"] < previous["sequence"]:
            epoch += 1
        item["key"] = (epoch, item["sampleTimeNanoseconds"])
    kind3 = args.format == "binary-imu"
    missing_own = [f["sequence"] for f in frames if f["key"] not in own]
    if missing_own:
        raise RuntimeError("wire.py and plumb-monitor disagree on %d frames" % len(missing_own))
    imu = listener.imu
    cuts = forwarder.cut_at + [end_at]

    def uncertain(fate: Fate) -> bool:
        return any(0 <= cut - fate.at <= UNCERTAIN_SECONDS for cut in cuts)

    # Align the messages with the frames forwarded whole, in order (quaternion to f32 precision).
    expected = [f for f in frames if forwarder.fates.get(f["key"], Fate("?", 0)).what
                == "forwarded"]
    matched: list[tuple[ImuRecord, dict]] = []
    unmatched: list[ImuRecord] = []
    missing: list[int] = []
    lost_near_cut = 0
    cursor = 0
    started = False

    def same(r: ImuRecord, wxyz: Any, tolerance: float = 2e-7) -> bool:
        w, x, y, z = wxyz
        return all(abs(a - b) <= tolerance for a, b in zip(r.xyzw, (x, y, z, w)))

    for r in imu:
        found = None
        for j in range(cursor, min(len(expected), cursor + 2000)):
            if same(r, expected[j]["attitude"]):
                found = j
                break
        if found is None:
            unmatched.append(r)
            continue
        if started:
            for f in expected[cursor:found]:
                if uncertain(forwarder.fates[f["key"]]):
                    lost_near_cut += 1
                else:
                    missing.append(f["sequence"])
        started = True
        matched.append((r, expected[found]))
        cursor = found + 1
    last_expected = [f for f in expected[cursor:] if forwarder.fates[f["key"]].at < end_at
                     - UNCERTAIN_SECONDS]
    missing += [f["sequence"] for f in last_expected]
    results.check(
        "messages", bool(matched) and not unmatched and not missing,
        "%d Imu messages, %d matched to frames forwarded whole (of %d recorded, %d forwarded), "
        "%d frames without a message (%s), %d lost with the pty at a cut or the end (allowed), "
        "%d messages matching no frame"
        % (len(imu), len(matched), len(frames), len(expected), len(missing), missing[:5],
           lost_near_cut, len(unmatched)))

    # the rate, over the clean stretch
    clean = [(r, f) for r, f in matched if clean_start <= r.arrival <= clean_end]
    if len(clean) > 100:
        message_rate = 1 / slope(list(range(len(clean))), [r.arrival for r, _ in clean])
        # the frames' rate from their sample times: index over the same frames' board times
        frame_rate = 1e9 / slope(list(range(len(clean))),
                                 [f["sampleTimeNanoseconds"] for _, f in clean])
        ratio = message_rate / frame_rate
        results.check("rate", abs(ratio - 1) <= 0.01,
                      "%.3f messages/s over %.1f s of arrivals, frames %.3f/s by their sample "
                      "times: %+.3f %%" % (message_rate, clean[-1][0].arrival - clean[0][0].arrival,
                                           frame_rate, (ratio - 1) * 100))
    else:
        results.check("rate", False, "only %d messages in the clean stretch" % len(clean))

    # quaternions, exactly (f32 → f64 is exact; the tolerance above only found the frame)
    exact = sum(1 for r, f in matched if same(r, f["attitude"], 0.0))
    worst = max((max(abs(a - b) for a, b in zip(
        r.xyzw, (f["attitude"][1], f["attitude"][2], f["attitude"][3], f["attitude"][0])))
        for r, f in matched), default=float("nan"))
    norm_ok = all(abs(math.sqrt(sum(c * c for c in r.xyzw)) - 1) < 1e-5 for r, _ in matched)
    results.check("quaternion", bool(matched) and worst <= 6e-8 and norm_ok,
                  "%d of %d bit-equal to the frame's f32 values, largest difference %.2g, unit "
                  "norm %s" % (exact, len(matched), worst, norm_ok))

    # fields and temperature
    problems: list[str] = []
    for r, f in matched:
        t = own[f["key"]]
        if r.frame_id != "imu_link":
            problems.append("frame_id %r" % r.frame_id)
        if kind3:
            if any(not close(a, b, 0, 0) for a, b in zip(r.rate, t.rate)):
                problems.append("seq %d rate %s != %s" % (t.sequence, r.rate, t.rate))
            if any(not close(a, b, 1e-12, 1e-12) for a, b in zip(r.accel, t.specific_force)):
                problems.append("seq %d accel %s != %s" % (t.sequence, r.accel, t.specific_force))
        if len(problems) > 5:
            break
    by_stamp = {r.stamp_ns: f for r, f in matched}
    temperatures = 0
    for _, stamp, celsius in listener.temperature:
        f = by_stamp.get(stamp)
        if f is None:
            continue
        temperatures += 1
        if abs(celsius - f["temperatureCelsius"]) > 1e-6:
            problems.append("temperature %g != %g" % (celsius, f["temperatureCelsius"]))
    if temperatures < 0.99 * len(matched):
        problems.append("%d Temperature messages with a matched Imu's stamp for %d Imu"
                        % (temperatures, len(matched)))
    results.check("fields", not problems,
                  "frame_id, %s; %d temperatures = their frame's%s"
                  % ("rate and specific force = the frame's" if kind3 else "kind 1: no rates",
                     temperatures, "; " + "; ".join(problems[:5]) if problems else ""))

    # covariances
    bad: list[str] = []
    for r, f in matched:
        t = own[f["key"]]
        if kind3:
            # plumb-monitor's σ (the Swift decoder) where it gives them, which wire.py must agree
            # with; unknown (0xFFFF) is inf in wire.py, null (None) or absent in the JSON
            u = f.get("uncertainty")
            if u is not None:
                pairs = [(u.get("tiltRadians"), t.tilt_sigma),
                         (u.get("headingRadians"), t.heading_sigma),
                         (u.get("gyroNoiseRadiansPerSecond"), t.gyro_noise_sigma),
                         (u.get("accelerometerNoiseMetersPerSecondSquared"), t.accel_noise_sigma)]
                pairs += list(zip(u.get("gyroBiasRadiansPerSecond") or [None] * 3, t.bias_sigma))
                for swift, own_sigma in pairs:
                    if not ((swift is None and math.isinf(own_sigma))
                            or (swift is not None and close(float(swift), own_sigma, 1e-9))):
                        bad.append("seq %d: plumb-monitor σ %s, wire.py %s" % (
                            t.sequence, swift, own_sigma))
                        break
            heading_var = (YAW_VARIANCE if t.flags & (0x400 | 0x100)
                           else t.heading_sigma ** 2)
            want_o = (t.tilt_sigma ** 2, t.tilt_sigma ** 2, heading_var)
            want_g = tuple(t.gyro_noise_sigma ** 2 + b ** 2 for b in t.bias_sigma)
            want_a = (t.accel_noise_sigma ** 2,) * 3
            for name, got, want in (("orientation", r.orientation_cov, want_o),
                                    ("angular_velocity", r.rate_cov, want_g),
                                    ("linear_acceleration", r.accel_cov, want_a)):
                diagonal = (got[0], got[4], got[8])
                off = [got[i] for i in (1, 2, 3, 5, 6, 7)]
                if any(not close(a, b) and not (math.isinf(b) and a > 1e3) for a, b in
                       zip(diagonal, want)) or any(off):
                    bad.append("seq %d %s %s, want diag %s" % (t.sequence, name, got, want))
        else:
            if r.rate_cov[0] != -1 or r.accel_cov[0] != -1:
                bad.append("seq %d kind 1: covariance[0] %g, %g, want -1"
                           % (t.sequence, r.rate_cov[0], r.accel_cov[0]))
        if len(bad) > 5:
            break
    uncertain_heading = sum(1 for _, f in matched if own[f["key"]].flags & (0x400 | 0x100))
    results.check("covariance", bool(matched) and not bad,
                  "%d messages (%d of them headingUncertain/initialising: yaw variance %g): %s"
                  % (len(matched), uncertain_heading, YAW_VARIANCE, "; ".join(bad[:3]) if bad
                     else "the contract's diagonals from the frames' σ fields"
                     if kind3 else "kind 1: rate and acceleration -1"))

    # stamps
    stamps = [r.stamp_ns for r in imu]
    increasing = all(b > a for a, b in zip(stamps, stamps[1:]))
    worst_step = 0.0
    worst_at = None
    over = 0
    restarts: list[tuple[int, int, int]] = []  # (sequence before, after, stamp step error ns)
    first_sample: dict[int, int] = {}  # board run -> its first matched frame's sample time
    for _, f in matched:
        first_sample.setdefault(f["key"][0], f["sampleTimeNanoseconds"])
    acquiring_worst = 0
    for (r0, f0), (r1, f1) in zip(matched, matched[1:]):
        board = f1["sampleTimeNanoseconds"] - f0["sampleTimeNanoseconds"]
        error = abs((r1.stamp_ns - r0.stamp_ns) - board)
        if f1["sequence"] < f0["sequence"]:
            restarts.append((f0["sequence"], f1["sequence"], error))
            continue
        if f1["sampleTimeNanoseconds"] - first_sample[f1["key"][0]] < ACQUIRE_NS:
            # a board run's first seconds: the offset, first taken from one frame, may still
            # be converging, faster than later (slewing nonetheless: no step above 5 ms)
            acquiring_worst = max(acquiring_worst, error)
            if error > ACQUIRE_STEP_BOUND_NS:
                over += 1
            continue
        if error > 1_000_000 + 1e-3 * board:
            over += 1
        if error > worst_step:
            worst_step, worst_at = error, f1["sequence"]
    runs: dict[int, list[int]] = {}
    for r, f in matched:
        runs.setdefault(f["key"][0], []).append(r.stamp_ns - f["sampleTimeNanoseconds"])
    span = max((max(v) - min(v) for v in runs.values()), default=float("nan"))
    results.check(
        "stamps", increasing and over == 0 and len(matched) > 1,
        "strictly increasing: %s; %d steps (the board's restart apart), %d off the sample-time "
        "step by more than 1 ms + 0.1 %% (5 ms in a board run's first 10 s: there the worst "
        "%.3f ms), the worst after those by %.3f ms (seq %s); stamp − sample time spans %.3f ms "
        "at most over a board run"
        % (increasing, len(matched) - 1 - len(restarts), over, acquiring_worst / 1e6, worst_step / 1e6, worst_at,
           span / 1e6))

    # damaged frames
    damaged = [(s, fate) for s, fate in forwarder.fates.items() if fate.what == "corrupted"]
    published_damaged = [s for s, fate in damaged if any(
        same(r, fate.corrupted_wxyz) for r in imu)]
    crc_errors = None
    for _, statuses in listener.diagnostics:
        link = statuses.get("plumb_ros2: link")
        if link and "crc_errors" in link[2]:
            try:
                crc_errors = int(link[2]["crc_errors"])
            except ValueError:
                pass
    results.check(
        "crc", bool(damaged) and not published_damaged and crc_errors is not None
        and crc_errors >= len(damaged),
        "%d frames damaged (one attitude bit) and %d garbage bytes added; %d of them published; "
        "the bridge's crc_errors: %s" % (len(damaged), forwarder.garbage_bytes,
                                         len(published_damaged), crc_errors))

    # link diagnostics around the cut
    cut, restored = forwarder.cut_at[0], forwarder.restored_at[0]

    def link_statuses(start: float, end: float) -> list[tuple[int, str]]:
        return [s["plumb_ros2: link"][:2] for at, s in listener.diagnostics
                if start <= at <= end and "plumb_ros2: link" in s]

    def fine(status: tuple[int, str]) -> bool:
        # OK; a kind-1 stream is WARN by the contract ("stream has no rates"), and only for that
        return status[0] == 0 or (not kind3 and status[0] == 1 and "no rates" in status[1])

    before = link_statuses(clean_start, clean_end)
    during = link_statuses(cut + 2.0, restored)
    after = link_statuses(restored, text[0])
    error_message = next((m for level, m in link_statuses(cut, restored) if level == 2), None)
    recovered = [at - restored for at, s in listener.diagnostics
                 if at > restored and "plumb_ros2: link" in s and fine(s["plumb_ros2: link"])]
    results.check(
        "link", bool(before) and fine(before[-1]) and any(level == 2 for level, _ in during)
        and bool(after) and fine(after[-1]),
        "levels (0 OK, 1 WARN, 2 ERROR): clean stretch %s, from 2 s into the %g s cut %s "
        "(%r), after it %s (%s %.1f s after the restore)"
        % (sorted({level for level, _ in before}), CUT_SECONDS,
           sorted({level for level, _ in during}), error_message,
           sorted({level for level, _ in after}), "OK" if kind3 else "OK or WARN 'no rates'",
           recovered[0] if recovered else float("nan")))

    # the board switched to text: named, then OK again once it is back to binary
    text_at, back_at = text
    named = [(level, m) for level, m in link_statuses(text_at + 2.0, back_at)
             if level >= 1 and "text" in m.lower() and "binary-imu" in m]
    said = sorted({m for _, m in link_statuses(text_at, back_at)})
    later = link_statuses(back_at + 3.0, restart_at)
    results.check(
        "text", bool(named) and bool(later) and fine(later[-1]),
        "board sent `format text` for %g s: link statuses %s; %d of them WARN/ERROR naming text "
        "and binary-imu; from 3 s after `format %s`: %s"
        % (TEXT_SECONDS, said[:3], len(named), args.format,
           sorted({level for level, _ in later})))

    # the board restarted: its sequence starts again, its clock (this host's CLOCK_MONOTONIC)
    # does not; the stamps must go on without a jump and the messages resume
    before_restart = [r.stamp_ns - r.arrival * 1e9 for r in imu if r.arrival < restart_at][-50:]
    after_restart = [r.stamp_ns - r.arrival * 1e9 for r in imu if r.arrival > restart_at][:50]
    shift = (statistics.median(after_restart) - statistics.median(before_restart)
             if len(before_restart) == 50 and len(after_restart) == 50 else float("nan"))
    resumed = sum(1 for r, _ in matched if r.arrival > restart_at)
    results.check(
        "restart", len(restarts) == 1 and abs(shift) <= RESTART_SHIFT_BOUND_NS
        and resumed > 100 and increasing,
        "`plumb run` stopped and started again (its clock from 0 again): %d sequence restart(s) "
        "among the messages %s; stamp − arrival time, median of 50 messages after it − of 50 "
        "before: %.3f ms (bound %g ms); %d messages after it; stamps strictly increasing: %s"
        % (len(restarts), [(a, b) for a, b, _ in restarts], shift / 1e6,
           RESTART_SHIFT_BOUND_NS / 1e6, resumed, increasing))


def main() -> int:
    global VERBOSE
    parser = argparse.ArgumentParser(
        description="plumb-ros2 end to end with the real ROS 2 middleware",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="checks:\n" + CHECKS)
    parser.add_argument("--plumb", default=os.path.join(ROOT, ".build", "debug", "plumb"))
    parser.add_argument("--monitor", default=os.path.join(ROOT, ".build", "debug", "plumb-monitor"))
    parser.add_argument("--bridge", default=None,
                        help="the bridge's command (default: plumb-ros2 beside this python)")
    parser.add_argument("--format", default="binary-imu", choices=["binary-imu", "binary"])
    parser.add_argument("--board", default=os.path.join(ROOT, "Boards", "simulated.json"))
    parser.add_argument("--keep", metavar="DIR", help="keep the logs, recording and messages")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    VERBOSE = args.verbose
    default_bridge = os.path.join(os.path.dirname(sys.executable), "plumb-ros2")
    args.bridge = args.bridge.split() if args.bridge else [default_bridge]
    for path, fix in ((args.plumb, "swift build --product plumb"),
                      (args.monitor, "swift build --product plumb-monitor"),
                      (args.bridge[0], "pip install tools/plumb-ros2 into this venv "
                       "(make ros2-test does), or give --bridge")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)) and not shutil.which(path):
            print("check_ros2: %s is missing: %s" % (path, fix), file=sys.stderr)
            return 2
    try:
        import rclpy  # noqa: F401
    except ImportError as error:
        print("check_ros2: rclpy cannot be imported (%s): run with the ROS 2 venv's python "
              "(make ros2-test)" % error, file=sys.stderr)
        return 2
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="check-ros2-", dir=args.keep)
    else:
        folder = tempfile.mkdtemp(prefix="plumb-check-ros2-")
    results = Results()
    started = time.monotonic()
    try:
        run(args, folder, results)
    except Exception as error:  # a step that could not run is a failure, with the logs
        results.check("run", False, "%s: %s" % (type(error).__name__, error))
        for name in ("plumb-run", "plumb-ros2"):
            path = os.path.join(folder, name + ".log")
            if os.path.exists(path):
                with open(path, "rb") as f:
                    tail = b"\n".join(f.read().splitlines()[-20:]).decode("utf-8", "replace")
                print("--- %s (last lines)\n%s" % (name, tail), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print("check_ros2: %.0f s%s" % (time.monotonic() - started, "; failed: " + ", ".join(
        results.failed) if results.failed else ""), flush=True)
    print("check_ros2: %d passed, %d failed" % (results.passed, len(results.failed)), flush=True)
    if args.keep:
        print("check_ros2: logs, recording and messages in %s" % folder)
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
