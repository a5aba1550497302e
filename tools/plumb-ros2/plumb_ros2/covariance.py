"""sensor_msgs/Imu covariances from a Plumb frame (ROS 2 contract, section C).

All three matrices are 3×3 row-major and diagonal (Plumb's σ fields are per axis; it does not
send cross terms).

- orientation: diag(tilt σ², tilt σ², heading σ²), heading σ² replaced by
  ``heading_uncertain_yaw_variance`` while the frame says headingUncertain or initialising.
- angular_velocity: diag(gyro noise σ² + gyro bias σ_i²): one sample's white noise plus what is
  still unknown of the bias the board removed.
- linear_acceleration: diag(accel noise σ²) × 3.

Unknown σ (0xFFFF on the wire, NaN once decoded) is "very large": it becomes the largest σ
the field can carry (65534 counts), squared, so no NaN or inf is ever published.

Kind-1 frames carry no rates, forces or σ: angular_velocity_covariance[0] and
linear_acceleration_covariance[0] are −1 ("not provided", sensor_msgs/Imu), and the orientation
uses fixed defaults (tilt σ = KIND1_TILT_SIGMA, heading σ = KIND1_HEADING_SIGMA, or the
heading-uncertain variance).

**Default heading_uncertain_yaw_variance = π²/3 ≈ 3.29 rad²**, the variance of an angle spread
uniformly over the whole circle (−π, π]: the most a heading can honestly be "unknown". Neither
REP-145 nor sensor_msgs/Imu prescribes a value (REP-145 says a driver without an absolute
heading reference still reports orientation; sensor_msgs says a zero matrix means "unknown" and
−1 means "not provided"). Common practice is a "very large" variance so that a fusing filter
(robot_localization) gives the yaw no weight; values like 1e6 or DBL_MAX do that too, but they
are numerically hostile (they swamp a filter's innovation covariance and its Mahalanobis gates)
and no more truthful than the uniform circle. With σ ≈ 104° the yaw carries a weight a fuser
treats as nearly none, while tilt keeps its real σ.
"""

from __future__ import annotations

import math
from typing import Optional

from .wire import FLAG_HEADING_UNCERTAIN, FLAG_INITIALISING, Sample

DEFAULT_HEADING_UNCERTAIN_YAW_VARIANCE = math.pi**2 / 3.0

#: Kind-1 streams carry no σ; these are documented stand-ins (Plumb's tilt error in the HIL
#: suite is well under 1°; the relative heading drifts, 5° is a conservative minute's worth).
KIND1_TILT_SIGMA = math.radians(1.0)
KIND1_HEADING_SIGMA = math.radians(5.0)

# Largest σ each field can carry (65534 counts), for "unknown".
MAX_ANGLE_SIGMA = 65534 * 1e-4
MAX_RATE_SIGMA = 65534 * 1e-5
MAX_ACCEL_SIGMA = 65534 * 1e-4


def _var(sigma: Optional[float], ceiling: float) -> float:
    if sigma is None or not math.isfinite(sigma):
        return ceiling * ceiling
    return sigma * sigma


def diag(a: float, b: float, c: float) -> list[float]:
    return [a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c]


def heading_is_uncertain(flags: int) -> bool:
    return bool(flags & (FLAG_HEADING_UNCERTAIN | FLAG_INITIALISING))


def orientation(sample: Sample, heading_uncertain_yaw_variance: float = DEFAULT_HEADING_UNCERTAIN_YAW_VARIANCE) -> list[float]:
    if sample.has_imu:
        tilt = _var(sample.tilt_sigma, MAX_ANGLE_SIGMA)
        heading = _var(sample.heading_sigma, MAX_ANGLE_SIGMA)
    else:
        tilt = KIND1_TILT_SIGMA**2
        heading = KIND1_HEADING_SIGMA**2
    if heading_is_uncertain(sample.flags):
        heading = heading_uncertain_yaw_variance
    return diag(tilt, tilt, heading)


def angular_velocity(sample: Sample) -> list[float]:
    if not sample.has_imu:
        return [-1.0] + [0.0] * 8
    noise = _var(sample.gyro_noise_sigma, MAX_RATE_SIGMA)
    bias = sample.gyro_bias_sigma or (math.nan, math.nan, math.nan)
    return diag(*(noise + _var(b, MAX_RATE_SIGMA) for b in bias))


def linear_acceleration(sample: Sample) -> list[float]:
    if not sample.has_imu:
        return [-1.0] + [0.0] * 8
    v = _var(sample.accel_noise_sigma, MAX_ACCEL_SIGMA)
    return diag(v, v, v)
