"""Covariances per the contract's section C."""

from __future__ import annotations

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from plumb_ros2 import covariance, wire  # noqa: E402
from plumb_ros2.wire import Sample  # noqa: E402


def imu_sample(flags: int = 0, **kw) -> Sample:
    base = dict(kind=3, sequence=1, time_ns=0, attitude=(1.0, 0.0, 0.0, 0.0), gyro_bias=(0.0, 0.0, 0.0),
                temperature=25.0, flags=flags, missed=0, latency_us=0, calibration_id=0, rate=(0.0, 0.0, 0.0),
                specific_force=(0.0, 0.0, 9.8), tilt_sigma=0.01, heading_sigma=0.05,
                gyro_bias_sigma=(0.001, 0.002, 0.003), gyro_noise_sigma=0.004, accel_noise_sigma=0.02)  # fmt: skip
    base.update(kw)
    return Sample(**base)  # type: ignore[arg-type]


class CovarianceTests(unittest.TestCase):
    def test_kind3_diagonals(self) -> None:
        s = imu_sample()
        o = covariance.orientation(s)
        self.assertEqual([o[i] for i in (1, 2, 3, 5, 6, 7)], [0.0] * 6)
        self.assertAlmostEqual(o[0], 1e-4)
        self.assertAlmostEqual(o[4], 1e-4)
        self.assertAlmostEqual(o[8], 0.0025)
        w = covariance.angular_velocity(s)
        self.assertAlmostEqual(w[0], 0.004**2 + 0.001**2)
        self.assertAlmostEqual(w[4], 0.004**2 + 0.002**2)
        self.assertAlmostEqual(w[8], 0.004**2 + 0.003**2)
        a = covariance.linear_acceleration(s)
        self.assertEqual((a[0], a[4], a[8]), (0.02**2,) * 3)

    def test_heading_uncertain_and_initialising_replace_yaw(self) -> None:
        for flag in (wire.FLAG_HEADING_UNCERTAIN, wire.FLAG_INITIALISING):
            o = covariance.orientation(imu_sample(flag), heading_uncertain_yaw_variance=2.5)
            self.assertEqual(o[8], 2.5)
            self.assertAlmostEqual(o[0], 1e-4)
        self.assertAlmostEqual(covariance.orientation(imu_sample(wire.FLAG_HEADING_UNCERTAIN))[8], math.pi**2 / 3)
        self.assertAlmostEqual(covariance.orientation(imu_sample(wire.FLAG_REST))[8], 0.0025)

    def test_unknown_sigma_is_large_and_finite(self) -> None:
        s = imu_sample(tilt_sigma=math.nan, heading_sigma=math.nan, gyro_noise_sigma=math.nan,
                       gyro_bias_sigma=(math.nan, 0.001, 0.001), accel_noise_sigma=math.nan)  # fmt: skip
        for m in (covariance.orientation(s), covariance.angular_velocity(s), covariance.linear_acceleration(s)):
            self.assertTrue(all(math.isfinite(v) for v in m))
        self.assertGreater(covariance.orientation(s)[0], 40.0)
        self.assertGreater(covariance.angular_velocity(s)[0], 0.8)

    def test_kind1_not_provided(self) -> None:
        s = imu_sample(rate=None, specific_force=None, tilt_sigma=None, heading_sigma=None, gyro_bias_sigma=None,
                       gyro_noise_sigma=None, accel_noise_sigma=None)  # fmt: skip
        s.kind = 1
        self.assertEqual(covariance.angular_velocity(s)[0], -1.0)
        self.assertEqual(covariance.linear_acceleration(s)[0], -1.0)
        o = covariance.orientation(s)
        self.assertAlmostEqual(o[0], covariance.KIND1_TILT_SIGMA**2)
        self.assertAlmostEqual(o[8], covariance.KIND1_HEADING_SIGMA**2)


if __name__ == "__main__":
    unittest.main()
