"""The rclpy node ``plumb_imu``. rclpy is imported only inside :func:`run`, so this module (and
the pure ones) import anywhere."""

from __future__ import annotations

import math
import os
import queue
import sys
import threading
import time
from typing import Any, Optional

from .core import BridgeCore, DiagnosticsOut, ImuOut, Settings, TemperatureOut, NO_RATES_MESSAGE
from .covariance import DEFAULT_HEADING_UNCERTAIN_YAW_VARIANCE
from .sources import Link, LinkError, make_source
from .wire import Reply, StreamDecoder

NODE_NAME = "plumb_imu"

#: (name, default, description). Types follow the defaults.
PARAMETERS: tuple[tuple[str, Any, str], ...] = (
    ("port", "", "serial device or pty to read (e.g. /dev/ttyUSB0)"),
    ("baud", 115200, "serial baud rate"),
    ("file", "", "recorded byte stream to read instead (stamps = board time)"),
    ("udp", "", "[ADDR:]PORT to listen on for datagrams carrying the byte stream"),
    ("frame_id", "imu_link", "header.frame_id of imu/data and imu/temperature"),
    ("reopen", True, "reopen a vanished device every 0.5 s"),
    ("stale_timeout", 1.0, "seconds without frames before the link status is ERROR"),
    ("heading_uncertain_yaw_variance", DEFAULT_HEADING_UNCERTAIN_YAW_VARIANCE,
     "yaw variance (rad^2) while the board says headingUncertain or initialising"),
    ("diagnostics_period", 1.0, "seconds between /diagnostics messages"),
    ("bag", "", "when set, also write every published message to a rosbag2 at this path"),
)
RUNTIME_PARAMETERS = {"frame_id", "heading_uncertain_yaw_variance", "stale_timeout"}

TARE_TIMEOUT = 1.0


def _import_rclpy() -> Any:
    try:
        import rclpy  # noqa: F401
    except ImportError as err:
        raise SystemExit(
            f"plumb-ros2: cannot import rclpy ({err}).\n"
            "  Live mode needs ROS 2's Python client: source a ROS 2 installation "
            "(source /opt/ros/<distro>/setup.bash) or install the ROS wheels into this venv "
            "(see tools/plumb-ros2/README.md).\n"
            "  Converting a recording needs no ROS: plumb-ros2 --file FRAMES.bin --bag OUT --offline"
        ) from None
    return rclpy


def run(overrides: dict[str, Any], ros_args: list[str]) -> int:
    rclpy = _import_rclpy()
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
    from rclpy.executors import ExternalShutdownException
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy
    from sensor_msgs.msg import Imu, Temperature
    from std_srvs.srv import Trigger

    from .bag import BagError, ThreadedBagWriter

    class PlumbImuNode(Node):
        def __init__(self) -> None:
            super().__init__(
                NODE_NAME,
                parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
                automatically_declare_parameters_from_overrides=False,
            )
            for name, default, description in PARAMETERS:
                # float parameters also take an integer (stale_timeout:=2), as people write them
                dynamic = isinstance(default, float)
                self.declare_parameter(name, default, ParameterDescriptor(description=description, dynamic_typing=dynamic))
            p = {name: self.get_parameter(name).value for name, _, _ in PARAMETERS}
            for name, default, _ in PARAMETERS:
                if isinstance(default, float):
                    if isinstance(p[name], bool) or not isinstance(p[name], (int, float)):
                        raise LinkError(f"parameter {name} = {p[name]!r}: give a number")
                    p[name] = float(p[name])
            self.params = p
            problems = []
            if p["stale_timeout"] <= 0:
                problems.append(f"stale_timeout {p['stale_timeout']}: must be > 0 s")
            if p["diagnostics_period"] <= 0:
                problems.append(f"diagnostics_period {p['diagnostics_period']}: must be > 0 s")
            if not (p["heading_uncertain_yaw_variance"] > 0 and math.isfinite(p["heading_uncertain_yaw_variance"])):
                problems.append(f"heading_uncertain_yaw_variance {p['heading_uncertain_yaw_variance']}: "
                                "must be a finite variance > 0 rad^2")  # fmt: skip
            if problems:
                raise LinkError("; ".join(problems))
            self.source = make_source(port=p["port"], baud=p["baud"], file=p["file"], udp=p["udp"])
            self.link = Link(self.source, reopen=p["reopen"])
            self.decoder = StreamDecoder()
            self.link.on_reconnect = self.decoder.reset_sync
            self.core = BridgeCore(
                Settings(frame_id=p["frame_id"], heading_uncertain_yaw_variance=p["heading_uncertain_yaw_variance"],
                         stale_timeout=p["stale_timeout"], board_time_stamps=self.source.is_file),
                hardware_id=self.source.name,
            )  # fmt: skip
            qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
            self.imu_pub = self.create_publisher(Imu, "imu/data", qos)
            self.temp_pub = self.create_publisher(Temperature, "imu/temperature", qos)
            self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
            self.tare_srv = self.create_service(Trigger, "~/tare", self.on_tare)
            self.bag: Optional[ThreadedBagWriter] = None
            self.bag_error_said = False
            if p["bag"]:
                self.bag = ThreadedBagWriter(
                    p["bag"],
                    imu_topic=self.imu_pub.topic_name,
                    temperature_topic=self.temp_pub.topic_name,
                    diagnostics_topic="/diagnostics",
                )
            self.add_on_set_parameters_callback(self.on_set_parameters)
            self.commands: "queue.Queue[tuple[bytes, threading.Event, list]]" = queue.Queue()
            self.reply_lock = threading.Lock()
            self.reply_waiter: Optional[tuple[threading.Event, list]] = None
            self.stop = threading.Event()
            self.diag_timer = self.create_timer(p["diagnostics_period"], self.publish_diagnostics)
            self.reader = threading.Thread(target=self.read_loop, name="plumb-ros2-reader", daemon=True)
            self.reader.start()
            self.get_logger().info(
                f"reading {self.source.name}; publishing {self.imu_pub.topic_name}, {self.temp_pub.topic_name}, "
                f"/diagnostics; service {self.resolve_service_name('~/tare', only_expand=True)}" + (f"; bag {p['bag']}" if self.bag else "")
            )

        # -- parameters ------------------------------------------------------------------------
        def on_set_parameters(self, params: list) -> Any:
            for prm in params:
                if prm.name not in RUNTIME_PARAMETERS:
                    return SetParametersResult(successful=False,
                                               reason=f"{prm.name} is read at start: restart the node to change it")  # fmt: skip
                if prm.name in ("stale_timeout", "heading_uncertain_yaw_variance") and not (
                    isinstance(prm.value, (int, float)) and not isinstance(prm.value, bool)
                    and prm.value > 0 and math.isfinite(prm.value)
                ):
                    return SetParametersResult(successful=False, reason=f"{prm.name} must be a finite number > 0")
                if prm.name == "frame_id" and not isinstance(prm.value, str):
                    return SetParametersResult(successful=False, reason="frame_id must be a string")
            for prm in params:
                value = prm.value if prm.name == "frame_id" else float(prm.value)
                setattr(self.core.settings, prm.name, value)
            return SetParametersResult(successful=True)

        # -- the reader thread -----------------------------------------------------------------
        def read_loop(self) -> None:
            while not self.stop.is_set():
                try:
                    self.read_frames()
                    break
                except Exception:  # a bug must not silently end the reading: say it, go on
                    import traceback

                    self.get_logger().error("reader failed, restarting it:\n" + traceback.format_exc())
                    time.sleep(0.5)
            self.link.close()

        def read_frames(self) -> None:
            pace_origin: Optional[tuple[int, float]] = None  # file input: (board ns, monotonic s)
            warned_foreign: Optional[str] = None
            was_connected = False
            said = ""  # the last error logged: each new one once, not every 0.5 s
            while not self.stop.is_set():
                self.run_commands()
                data = self.link.poll(0.05)
                st = self.link.state
                if st.connected != was_connected:
                    was_connected = st.connected
                    if was_connected:
                        said = ""
                        self.get_logger().info(f"{self.source.name}: open" + (
                            f" (reconnect {st.reconnects})" if st.reconnects else ""))  # fmt: skip
                if not st.connected and st.last_error and st.last_error != said:
                    said = st.last_error
                    self.get_logger().error(f"{said}; trying again every 0.5 s" if self.link.reopen or
                                            not st.reconnects else said)  # fmt: skip
                if not data:
                    continue
                arrival = self.get_clock().now().nanoseconds
                for msg in self.decoder.feed(data):
                    if isinstance(msg, Reply):
                        self.deliver_reply(msg)
                        continue
                    if self.source.is_file:
                        pace_origin = self.pace(msg.time_ns, pace_origin)
                        if self.stop.is_set():
                            return
                        arrival = self.get_clock().now().nanoseconds
                    imu, temp = self.core.process(msg, arrival, time.monotonic())
                    if msg.kind == 1 and not self.core.warned_no_rates:
                        self.core.warned_no_rates = True
                        self.get_logger().warning(f"{self.source.name}: {NO_RATES_MESSAGE}")
                    try:
                        self.imu_pub.publish(to_imu(imu))
                        self.temp_pub.publish(to_temperature(temp))
                    except Exception as err:  # the context shut down under us (SIGTERM, Ctrl-C)
                        if not self.context.ok():
                            self.stop.set()
                            break
                        self.get_logger().error(f"publishing failed: {err}")
                    # file input: the bag's record time is the stamp (board time), as offline
                    record = imu.stamp_ns if self.source.is_file else arrival
                    self.to_bag(imu, record)
                    self.to_bag(temp, record)
                foreign = self.decoder.foreign_message()
                if foreign != warned_foreign:  # said when it starts, and when binary frames are back
                    if foreign:
                        self.get_logger().error(f"{self.source.name}: {foreign}")
                    elif warned_foreign:
                        self.get_logger().info(f"{self.source.name}: binary frames again")
                    warned_foreign = foreign

        def pace(self, board_ns: int, origin: Optional[tuple[int, float]]) -> tuple[int, float]:
            """File input: publish at the recording's own pace (board time)."""
            now = time.monotonic()
            if origin is None:
                return (board_ns, now)
            due = origin[1] + (board_ns - origin[0]) / 1e9
            if due < now - 1.0 or due > now + 5.0:  # a restart or a jump in the recording: re-anchor
                return (board_ns, now)
            while not self.stop.is_set() and time.monotonic() < due:
                time.sleep(min(0.05, max(0.0, due - time.monotonic())))
            return origin

        def to_bag(self, out: Any, timestamp_ns: int) -> None:
            if self.bag is None:
                return
            self.bag.write(out, timestamp_ns)
            if self.bag.error and not self.bag_error_said:
                self.bag_error_said = True
                self.get_logger().error(self.bag.error)

        # -- tare ------------------------------------------------------------------------------
        def run_commands(self) -> None:
            while True:
                try:
                    data, done, result = self.commands.get_nowait()
                except queue.Empty:
                    return
                try:
                    self.link.write(data)
                    result.append(None)
                except LinkError as err:
                    result.append(str(err))
                done.set()

        def deliver_reply(self, reply: Reply) -> None:
            with self.reply_lock:
                waiter = self.reply_waiter
                self.reply_waiter = None
            if waiter is None:
                self.get_logger().info(f"reply from {self.source.name}: {reply.describe()}")
                return
            waiter[1].append(reply)
            waiter[0].set()

        def on_tare(self, request: Any, response: Any) -> Any:
            del request
            if self.source.is_file:
                response.success, response.message = False, "file input: there is no board to tare"
                return response
            if not self.link.state.connected:
                response.success = False
                response.message = f"link down: {self.link.state.last_error or self.source.name + ' is not open'}"
                return response
            got = threading.Event()
            replies: list = []
            with self.reply_lock:
                self.reply_waiter = (got, replies)
            written, result = threading.Event(), []  # type: tuple[threading.Event, list[Optional[str]]]
            deadline = time.monotonic() + TARE_TIMEOUT  # the whole exchange, write and reply
            self.commands.put((b"tare\n", written, result))
            if not written.wait(TARE_TIMEOUT) or result[0] is not None:
                with self.reply_lock:
                    self.reply_waiter = None
                response.success = False
                response.message = f"could not send tare: {result[0] if result else 'the reader is stuck'}"
                return response
            if not got.wait(max(0.0, deadline - time.monotonic())):
                with self.reply_lock:
                    self.reply_waiter = None
                response.success = False
                foreign = self.decoder.foreign_message()
                response.message = (f"timeout: no reply from {self.source.name} within {TARE_TIMEOUT:.0f} s "
                                    + (f"({foreign})" if foreign else "(is plumb reading commands on this line?)"))
                return response
            reply = replies[0]
            response.success = reply.ok
            response.message = reply.text
            self.get_logger().info(f"tare: {reply.describe()}")
            return response

        # -- diagnostics -----------------------------------------------------------------------
        def publish_diagnostics(self) -> None:
            st = self.link.state
            # file input: on the recording's (board) time line, like its imu messages
            now = self.core.last_stamp_ns if self.source.is_file else self.get_clock().now().nanoseconds
            out = self.core.diagnostics(
                now, time.monotonic(), self.decoder.stats,
                connected=st.connected, finished=self.source.finished, reconnects=st.reconnects,
                disconnected_seconds=self.link.disconnected_seconds(), last_error=st.last_error,
                foreign=self.decoder.foreign_message(),
            )  # fmt: skip
            self.diag_pub.publish(to_diagnostics(out))
            self.to_bag(out, now)

        def shutdown(self) -> None:
            self.stop.set()
            self.reader.join(timeout=2.0)
            if self.bag is not None:
                self.bag.close()
                counts = ", ".join(f"{n} {k}" for k, n in self.bag.counts.items())
                print(f"plumb-ros2: bag {self.params['bag']}: {counts}" + (f"; {self.bag.error}" if self.bag.error else ""),
                      file=sys.stderr)  # fmt: skip
                self.bag = None

    def stamp(ns: int) -> Any:
        from builtin_interfaces.msg import Time

        ns = max(0, ns)
        return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def to_imu(o: ImuOut) -> Any:
        m = Imu()
        m.header.stamp = stamp(o.stamp_ns)
        m.header.frame_id = o.frame_id
        m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = (float(v) for v in o.orientation)
        m.orientation_covariance = [float(v) for v in o.orientation_covariance]
        m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = (float(v) for v in o.angular_velocity)
        m.angular_velocity_covariance = [float(v) for v in o.angular_velocity_covariance]
        m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = (
            float(v) for v in o.linear_acceleration
        )
        m.linear_acceleration_covariance = [float(v) for v in o.linear_acceleration_covariance]
        return m

    def to_temperature(o: TemperatureOut) -> Any:
        m = Temperature()
        m.header.stamp = stamp(o.stamp_ns)
        m.header.frame_id = o.frame_id
        m.temperature = float(o.temperature)
        m.variance = float(o.variance)
        return m

    def to_diagnostics(o: DiagnosticsOut) -> Any:
        m = DiagnosticArray()
        m.header.stamp = stamp(o.stamp_ns)
        for s in o.statuses:
            st = DiagnosticStatus()
            st.level = bytes([s.level])
            st.name = s.name
            st.message = s.message
            st.hardware_id = s.hardware_id
            st.values = [KeyValue(key=k, value=v) for k, v in s.values]
            m.status.append(st)
        return m

    try:
        rclpy.init(args=["plumb-ros2", *ros_args])
    except Exception as err:  # a bad --ros-args, an RMW that is not installed
        rmw = os.environ.get("RMW_IMPLEMENTATION")
        hint = (f" (RMW_IMPLEMENTATION={rmw}: is it installed? unset it for the default, rmw_fastrtps_cpp)"
                if rmw else "")  # fmt: skip
        if type(err).__name__ == "UnknownROSArgsError":
            print(f"plumb-ros2: unknown ROS arguments: {err} "
                  "(after --ros-args: -p NAME:=VALUE, -r FROM:=TO, --params-file FILE, --log-level LEVEL)",
                  file=sys.stderr)  # fmt: skip
            return 2
        print(f"plumb-ros2: ROS 2 could not start: {err}{hint}", file=sys.stderr)
        return 2
    node = None
    code = 0
    try:
        try:
            node = PlumbImuNode()
        except (LinkError, BagError) as err:
            print(f"plumb-ros2: {err}", file=sys.stderr)
            return 2
        except (KeyboardInterrupt, ExternalShutdownException):
            return 0
        except Exception as err:  # rclpy's parameter exceptions: a wrong type, an unknown name
            print(f"plumb-ros2: bad parameter: {err} (parameters: {', '.join(n for n, _, _ in PARAMETERS)}; "
                  "see plumb-ros2 --help)", file=sys.stderr)  # fmt: skip
            return 2
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()
    return code
