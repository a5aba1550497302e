"""The bridge without ROS: frames in, ROS-shaped messages out (plain dataclasses).

``node.py`` turns these into rclpy messages, ``bag.py`` into rosbags messages; the offline
converter uses this module and ``bag.py`` only, so it runs without a ROS runtime.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Union

from . import covariance
from .stamps import BoardTimeStamps, StampEstimator
from .wire import (
    FLAG_ACCELERATION_REJECTED,
    FLAG_DEGRADED_TIMING,
    FLAG_GAP,
    FLAG_HEADING_UNCERTAIN,
    FLAG_I2C_RECOVERY,
    FLAG_INITIALISING,
    FLAG_NAMES,
    FLAG_RECOVERING,
    FLAG_REST,
    KIND_TELEMETRY,
    LinkStats,
    Sample,
    flag_names,
    specific_force_from_linear,
)

OK, WARN, ERROR, STALE = 0, 1, 2, 3

WARN_FLAGS = (
    FLAG_INITIALISING | FLAG_RECOVERING | FLAG_HEADING_UNCERTAIN | FLAG_ACCELERATION_REJECTED
    | FLAG_GAP | FLAG_DEGRADED_TIMING | FLAG_I2C_RECOVERY
)  # fmt: skip

NO_RATES_MESSAGE = "stream has no rates: run plumb with --format binary-imu"


@dataclass
class ImuOut:
    stamp_ns: int
    frame_id: str
    orientation: tuple[float, float, float, float]  # ROS order x, y, z, w
    orientation_covariance: list[float]
    angular_velocity: tuple[float, float, float]
    angular_velocity_covariance: list[float]
    linear_acceleration: tuple[float, float, float]
    linear_acceleration_covariance: list[float]


@dataclass
class TemperatureOut:
    stamp_ns: int
    frame_id: str
    temperature: float
    variance: float = 0.0  # 0 = unknown (sensor_msgs/Temperature)


@dataclass
class StatusOut:
    level: int
    name: str
    message: str
    hardware_id: str
    values: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class DiagnosticsOut:
    stamp_ns: int
    statuses: list[StatusOut]


Out = Union[ImuOut, TemperatureOut, DiagnosticsOut]


@dataclass
class Settings:
    frame_id: str = "imu_link"
    heading_uncertain_yaw_variance: float = covariance.DEFAULT_HEADING_UNCERTAIN_YAW_VARIANCE
    stale_timeout: float = 1.0
    board_time_stamps: bool = False  # file input


def _finite(v: float) -> float:
    return v if math.isfinite(v) else 0.0


class BridgeCore:
    def __init__(self, settings: Settings, hardware_id: str) -> None:
        self.settings = settings
        self.hardware_id = hardware_id
        self.stamper: Union[StampEstimator, BoardTimeStamps] = (
            BoardTimeStamps() if settings.board_time_stamps else StampEstimator()
        )
        self.last_sample: Optional[Sample] = None
        self.last_frame_at: Optional[float] = None  # monotonic seconds (caller's clock)
        self.published = 0
        self.last_stamp_ns = 0  # the last published stamp
        self.warned_no_rates = False

    def process(self, sample: Sample, arrival_ns: int, now_s: float) -> tuple[ImuOut, TemperatureOut]:
        self.last_sample = sample
        self.last_frame_at = now_s
        self.published += 1
        stamp = self.stamper.stamp(sample.time_ns, sample.latency_us, arrival_ns, sample.sequence)
        self.last_stamp_ns = stamp
        w, x, y, z = sample.attitude
        if sample.kind == KIND_TELEMETRY:
            rate = (0.0, 0.0, 0.0)
            lin = sample.linear_acceleration_ref or (0.0, 0.0, 0.0)
            force = specific_force_from_linear(sample.attitude, lin)
        else:
            rate = sample.rate or (0.0, 0.0, 0.0)
            force = sample.specific_force or (0.0, 0.0, 0.0)
        imu = ImuOut(
            stamp_ns=stamp,
            frame_id=self.settings.frame_id,
            orientation=(x, y, z, w),
            orientation_covariance=covariance.orientation(sample, self.settings.heading_uncertain_yaw_variance),
            angular_velocity=tuple(_finite(v) for v in rate),  # type: ignore[arg-type]
            angular_velocity_covariance=covariance.angular_velocity(sample),
            linear_acceleration=tuple(_finite(v) for v in force),  # type: ignore[arg-type]
            linear_acceleration_covariance=covariance.linear_acceleration(sample),
        )
        temp = TemperatureOut(stamp_ns=stamp, frame_id=self.settings.frame_id, temperature=sample.temperature)
        return imu, temp

    def diagnostics(
        self,
        stamp_ns: int,
        now_s: float,
        stats: LinkStats,
        *,
        connected: bool,
        finished: bool = False,
        reconnects: int = 0,
        disconnected_seconds: float = 0.0,
        last_error: str = "",
        foreign: Optional[str] = None,
    ) -> DiagnosticsOut:
        return DiagnosticsOut(
            stamp_ns=stamp_ns,
            statuses=[
                self._link_status(now_s, stats, connected, finished, reconnects, disconnected_seconds,
                                  last_error, foreign),  # fmt: skip
                self._estimator_status(),
            ],
        )

    def _link_status(self, now_s: float, stats: LinkStats, connected: bool, finished: bool,
                     reconnects: int, disconnected_seconds: float, last_error: str,
                     foreign: Optional[str]) -> StatusOut:  # fmt: skip
        values = [
            ("frames", str(stats.frames)),
            ("published", str(self.published)),
            ("crc_errors", str(stats.crc_errors)),
            ("malformed", str(stats.malformed)),
            ("resyncs", str(stats.resyncs)),
            ("frames_lost", str(stats.frames_lost)),
            ("sequence_gaps", str(stats.gaps)),
            ("sequence_restarts", str(stats.sequence_restarts)),
            ("bytes", str(stats.bytes)),
            ("bytes_skipped", str(stats.bytes_skipped)),
            ("replies", str(stats.replies)),
            ("reconnects", str(reconnects)),
            ("disconnected_seconds", f"{disconnected_seconds:.1f}"),
            ("last_error", last_error),
            ("last_malformed", stats.last_malformed),
        ]
        if isinstance(self.stamper, StampEstimator) and self.stamper.offset_ns is not None:
            values.append(("clock_offset_s", f"{self.stamper.offset_ns / 1e9:.6f}"))
            values.append(("clock_steps", str(self.stamper.stats.steps)))
        since = None if self.last_frame_at is None else now_s - self.last_frame_at
        name = self.hardware_id
        if foreign:
            level, message = ERROR, f"{name}: {foreign}"
        elif finished:
            level, message = OK, f"{name}: file read to its end ({stats.frames} frames)"
        elif not connected:
            level, message = ERROR, f"{name} is gone: {last_error}" if last_error else f"{name} is not open"
        elif since is None:
            level, message = ERROR, f"no frames from {name} yet"
        elif since > self.settings.stale_timeout:
            level, message = ERROR, f"no frames from {name} for {since:.1f} s"
        elif self.last_sample is not None and self.last_sample.kind == KIND_TELEMETRY:
            level, message = WARN, NO_RATES_MESSAGE
        else:
            level, message = OK, f"streaming from {name}"
        return StatusOut(level, "plumb_ros2: link", message, self.hardware_id, values)

    def _estimator_status(self) -> StatusOut:
        s = self.last_sample
        if s is None:
            return StatusOut(STALE, "plumb_ros2: estimator", "no frame yet", self.hardware_id, [])
        names = flag_names(s.flags)
        deg = 180.0 / math.pi

        def fmt(v: Optional[float], scale: float = 1.0, digits: int = 4, nan: str = "nan") -> str:
            if v is None:
                return "not sent"
            if math.isnan(v):
                return nan
            return f"{v * scale:.{digits}f}"

        def sigma(v: Optional[float], scale: float = 1.0, digits: int = 4) -> str:
            return fmt(v, scale, digits, nan="unknown")

        bias_sigma = s.gyro_bias_sigma or (None, None, None)
        values = [
            ("flags", f"0x{s.flags:04X} {' '.join(names) if names else '(none)'}"),
            ("rest", str(bool(s.flags & FLAG_REST)).lower()),
            ("heading_uncertain", str(covariance.heading_is_uncertain(s.flags)).lower()),
            ("gyro_bias_x_deg_s", fmt(s.gyro_bias[0], deg)),
            ("gyro_bias_y_deg_s", fmt(s.gyro_bias[1], deg)),
            ("gyro_bias_z_deg_s", fmt(s.gyro_bias[2], deg)),
            ("gyro_bias_sigma_x_deg_s", sigma(bias_sigma[0], deg)),
            ("gyro_bias_sigma_y_deg_s", sigma(bias_sigma[1], deg)),
            ("gyro_bias_sigma_z_deg_s", sigma(bias_sigma[2], deg)),
            ("tilt_sigma_deg", sigma(s.tilt_sigma, deg, 3)),
            ("heading_sigma_deg", sigma(s.heading_sigma, deg, 3)),
            ("temperature_c", fmt(s.temperature, 1.0, 2)),
            ("missed_samples", str(s.missed)),
            ("latency_us", str(s.latency_us)),
            ("calibration_id", f"0x{s.calibration_id:08X}" if s.calibration_id else "none"),
            ("sequence", str(s.sequence)),
            ("frame_kind", str(s.kind)),
        ]
        warn = [n for n in names if (1 << _bit(n)) & WARN_FLAGS]
        if warn:
            return StatusOut(WARN, "plumb_ros2: estimator", ", ".join(warn), self.hardware_id, values)
        return StatusOut(OK, "plumb_ros2: estimator", "ok" + (" (at rest)" if s.flags & FLAG_REST else ""),
                         self.hardware_id, values)  # fmt: skip


def _bit(name: str) -> int:
    return FLAG_NAMES.index(name) if name in FLAG_NAMES else 15
