"""Write the bridge's messages to a rosbag2 with ``rosbags`` (pure Python, no ROS runtime).

The bag is rosbag2 storage version 8 (sqlite3), readable by ROS 2 Jazzy and later and by
``rosbags``; topics and types are those the node publishes.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from .core import DiagnosticsOut, ImuOut, Out, TemperatureOut

try:  # numpy comes with rosbags
    import numpy as np
except ImportError:  # pragma: no cover
    np = None  # type: ignore[assignment]


class BagError(Exception):
    pass


def _import_rosbags() -> tuple[Any, Any]:
    try:
        from rosbags.rosbag2 import Writer
        from rosbags.typesys import Stores, get_typestore
    except ImportError as err:
        raise BagError(
            f"writing a bag needs the rosbags package ({err}): pip install rosbags "
            "(it is pure Python and needs no ROS installation)"
        ) from err
    return Writer, get_typestore(Stores.ROS2_JAZZY)


class BagWriter:
    """``write(out, timestamp_ns)`` for every published message; ``close()`` at the end."""

    def __init__(self, path: str, imu_topic: str = "imu/data", temperature_topic: str = "imu/temperature",
                 diagnostics_topic: str = "/diagnostics") -> None:  # fmt: skip
        Writer, self.ts = _import_rosbags()
        if os.path.exists(path):
            raise BagError(f"bag {path}: it exists, and a rosbag2 is never overwritten: remove it or give another path")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise BagError(f"bag {path}: the folder {parent} does not exist")
        self.path = path
        self.writer = Writer(path, version=8)
        try:
            self.writer.open()
        except Exception as err:  # rosbags raises its own WriterError
            raise BagError(f"bag {path}: cannot create it: {err}") from err
        T = self.ts.types
        self.T = T
        self.imu = self.writer.add_connection(_abs(imu_topic), "sensor_msgs/msg/Imu", typestore=self.ts)
        self.temp = self.writer.add_connection(_abs(temperature_topic), "sensor_msgs/msg/Temperature", typestore=self.ts)
        self.diag = self.writer.add_connection(_abs(diagnostics_topic), "diagnostic_msgs/msg/DiagnosticArray",
                                               typestore=self.ts)  # fmt: skip
        self.counts = {"imu": 0, "temperature": 0, "diagnostics": 0}

    def _header(self, stamp_ns: int, frame_id: str) -> Any:
        T = self.T
        stamp_ns = max(0, stamp_ns)
        return T["std_msgs/msg/Header"](
            stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000),
            frame_id=frame_id,
        )

    def write(self, out: Out, timestamp_ns: int) -> None:
        T = self.T
        timestamp_ns = max(0, timestamp_ns)
        if isinstance(out, ImuOut):
            q = T["geometry_msgs/msg/Quaternion"](x=out.orientation[0], y=out.orientation[1], z=out.orientation[2],
                                                  w=out.orientation[3])  # fmt: skip
            msg = T["sensor_msgs/msg/Imu"](
                header=self._header(out.stamp_ns, out.frame_id),
                orientation=q,
                orientation_covariance=np.array(out.orientation_covariance, dtype=np.float64),
                angular_velocity=T["geometry_msgs/msg/Vector3"](*out.angular_velocity),
                angular_velocity_covariance=np.array(out.angular_velocity_covariance, dtype=np.float64),
                linear_acceleration=T["geometry_msgs/msg/Vector3"](*out.linear_acceleration),
                linear_acceleration_covariance=np.array(out.linear_acceleration_covariance, dtype=np.float64),
            )
            self.writer.write(self.imu, timestamp_ns, self.ts.serialize_cdr(msg, "sensor_msgs/msg/Imu"))
            self.counts["imu"] += 1
        elif isinstance(out, TemperatureOut):
            msg = T["sensor_msgs/msg/Temperature"](header=self._header(out.stamp_ns, out.frame_id),
                                                   temperature=out.temperature, variance=out.variance)  # fmt: skip
            self.writer.write(self.temp, timestamp_ns, self.ts.serialize_cdr(msg, "sensor_msgs/msg/Temperature"))
            self.counts["temperature"] += 1
        elif isinstance(out, DiagnosticsOut):
            statuses = [
                T["diagnostic_msgs/msg/DiagnosticStatus"](
                    level=s.level, name=s.name, message=s.message, hardware_id=s.hardware_id,
                    values=[T["diagnostic_msgs/msg/KeyValue"](key=k, value=v) for k, v in s.values],
                )  # fmt: skip
                for s in out.statuses
            ]
            msg = T["diagnostic_msgs/msg/DiagnosticArray"](header=self._header(out.stamp_ns, ""), status=statuses)
            self.writer.write(self.diag, timestamp_ns, self.ts.serialize_cdr(msg, "diagnostic_msgs/msg/DiagnosticArray"))
            self.counts["diagnostics"] += 1

    def close(self) -> None:
        self.writer.close()


def _abs(topic: str) -> str:
    return topic if topic.startswith("/") else "/" + topic


class ThreadedBagWriter:
    """A BagWriter owned by one thread of its own (sqlite objects may only be used by the
    thread that made them); ``write`` queues and never blocks the reader. Errors opening the
    bag are raised by the constructor; a failure while writing is kept in ``error`` and the
    rest of the messages are dropped (counted in ``dropped``)."""

    def __init__(self, path: str, **topics: str) -> None:
        import queue
        import threading

        self.path = path
        self.error: str = ""
        self.dropped = 0
        self.counts: dict[str, int] = {}
        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._opened = threading.Event()
        self._open_error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(path, topics), name="plumb-ros2-bag", daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

    def _run(self, path: str, topics: dict) -> None:
        try:
            writer = BagWriter(path, **topics)
        except BaseException as err:  # noqa: BLE001 - handed to the constructor
            self._open_error = err
            self._opened.set()
            return
        self._opened.set()
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    break
                if self.error:
                    self.dropped += 1
                    continue
                try:
                    writer.write(*item)
                except Exception as err:  # a full disk
                    self.error = f"bag {path}: writing failed, later messages are not in it: {err}"
                self.counts = dict(writer.counts)
        finally:
            try:
                writer.close()
            except Exception as err:
                self.error = self.error or f"bag {path}: closing failed: {err}"
            self.counts = dict(writer.counts)

    def write(self, out: Out, timestamp_ns: int) -> None:
        self._queue.put((out, timestamp_ns))

    def close(self, timeout: float = 30.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)
