"""Board time → host time: convergence, slewing, and no backwards step across a reconnect or
a board restart. Synthetic sequences with a seeded random transport delay."""

from __future__ import annotations

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from plumb_ros2.stamps import BoardTimeStamps, StampEstimator  # noqa: E402

MS = 1_000_000
S = 1_000_000_000
TRUE_OFFSET = 1_700_000_000 * S + 123_456_789  # host = board + this


def stream(est, rng, n, board0, host_extra=0, period=10 * MS, latency_us=900):
    """Feed n frames at 100 Hz; returns [(stamp, true host time of the sample)]."""
    out = []
    for i in range(n):
        board = board0 + i * period
        delay = rng.choice([200_000, 300_000, 500_000, 2 * MS, 8 * MS])  # transport: 0.2–8 ms
        arrival = board + TRUE_OFFSET + host_extra + latency_us * 1000 + delay
        out.append((est.stamp(board, latency_us, arrival, sequence=None), board + TRUE_OFFSET + host_extra))
    return out


class StampTests(unittest.TestCase):
    def test_converges_to_the_minimum_delay_and_is_monotonic(self) -> None:
        est = StampEstimator()
        got = stream(est, random.Random(3), 3000, board0=5 * S)
        stamps = [s for s, _ in got]
        self.assertEqual(stamps, sorted(stamps))
        # after the first window the error is the smallest transport delay (0.2 ms), not the mean
        for s, truth in got[1000:]:
            self.assertGreaterEqual(s - truth, 0)
            self.assertLessEqual(s - truth, 250_000)

    def test_board_clock_drift_and_usb_batching(self) -> None:
        # The board's oscillator 100 ppm fast (its clock gains 1 ms every 10 s of host time), and
        # a USB adapter that hands frames over in batches every 16 ms (so the smallest delay any
        # frame sees is 2.2 ms: 10 ms samples against 16 ms batches): after the acquisition the
        # stamps are late by that smallest delay plus at most the window's share of the drift.
        est = StampEstimator()
        worst = 0
        last = None
        for i in range(6000):  # 60 s at 100 Hz
            host_sample = i * 10 * MS
            board = 5 * S + int(host_sample * (1 + 100e-6))
            host0 = TRUE_OFFSET + 5 * S  # host time at the first sample
            arrival = host0 + (host_sample // (16 * MS) + 1) * 16 * MS + 200_000
            s = est.stamp(board, 0, arrival)
            if last is not None:
                self.assertGreaterEqual(s, last)
            last = s
            if i > 1000:
                error = s - (host0 + host_sample)
                self.assertGreaterEqual(error, 2_200_000 - 1_000_000, i)
                worst = max(worst, error)
        self.assertLess(worst, 2_200_000 + 1_000_000)

    def test_slew_is_bounded(self) -> None:
        est = StampEstimator(slew=1e-3, acquire_s=0.0)
        est.stamp(0, 0, TRUE_OFFSET + 10 * MS)  # first frame: 10 ms delay, offset set from it
        before = est.offset_ns
        s = est.stamp(20 * MS, 0, TRUE_OFFSET + 20 * MS)  # 10 ms later, a frame with no delay
        assert before is not None and est.offset_ns is not None
        self.assertLessEqual(before - est.offset_ns, 10_000 + 1)  # ≤ 1 ms/s × 10 ms
        self.assertGreater(before - est.offset_ns, 0)
        self.assertGreaterEqual(s, TRUE_OFFSET)

    def test_acquisition_is_fast_and_never_backwards(self) -> None:
        # the first frame came through 30 ms late; later ones in 0.2 ms
        est = StampEstimator()
        stamps = [est.stamp(5 * S, 0, TRUE_OFFSET + 5 * S + 30 * MS)]
        for i in range(1, 200):
            board = 5 * S + i * 10 * MS
            stamps.append(est.stamp(board, 0, TRUE_OFFSET + board + 200_000))
        self.assertEqual(stamps, sorted(stamps))
        self.assertLessEqual(stamps[-1] - (TRUE_OFFSET + 5 * S + 199 * 10 * MS), 200_000)  # converged in 2 s
        self.assertEqual(est.stats.clamped, 0)  # 0.5 ms per 10 ms sample: never held back

    def test_reconnect_with_the_board_still_running(self) -> None:
        est = StampEstimator()
        rng = random.Random(5)
        a = stream(est, rng, 1500, board0=5 * S)
        # unplugged for 3 s: the board kept running; frames resume 300 samples later
        b = stream(est, rng, 1500, board0=5 * S + 1800 * 10 * MS)
        stamps = [s for s, _ in a + b]
        self.assertEqual(stamps, sorted(stamps))
        self.assertEqual(est.stats.steps, 1)  # no re-initialisation: same board, same offset
        for s, truth in b:
            self.assertLessEqual(abs(s - truth), 250_000)

    def test_board_restart_never_goes_backwards(self) -> None:
        est = StampEstimator()
        rng = random.Random(6)
        a = stream(est, rng, 1000, board0=500 * S)
        # the board restarts: its clock starts again near 2 s, while host time went on 4 s
        host_extra = (500 * S + 1000 * 10 * MS + 4 * S) - 2 * S
        b = stream(est, rng, 1000, board0=2 * S, host_extra=host_extra)
        stamps = [s for s, _ in a + b]
        self.assertEqual(stamps, sorted(stamps))
        self.assertEqual(est.stats.steps, 2)
        self.assertGreater(b[0][0], a[-1][0])  # later, not clamped
        for s, truth in b[1000 - 1 :]:
            self.assertLessEqual(abs(s - truth), 250_000)

    def test_restart_shortly_after_is_clamped_not_backwards(self) -> None:
        est = StampEstimator()
        s1 = est.stamp(100 * S, 0, TRUE_OFFSET + 100 * S)
        # a restarted board whose first frame arrives with a large delay estimate: stamps say earlier
        s2 = est.stamp(1 * S, 0, TRUE_OFFSET + 100 * S - 1 * MS + 1, sequence=0)
        self.assertGreaterEqual(s2, s1)

    def test_sequence_going_back_restarts(self) -> None:
        est = StampEstimator()
        est.stamp(10 * S, 0, TRUE_OFFSET + 10 * S, sequence=100)
        est.stamp(10 * S + 10 * MS, 0, TRUE_OFFSET + 10 * S + 10 * MS, sequence=101)
        est.stamp(10 * S + 20 * MS, 0, TRUE_OFFSET + 10 * S + 20 * MS, sequence=3)
        self.assertEqual(est.stats.steps, 2)


class BoardTimeTests(unittest.TestCase):
    def test_file_stamps_are_board_time(self) -> None:
        b = BoardTimeStamps()
        self.assertEqual(b.stamp(5 * S, 900, 123), 5 * S)
        self.assertEqual(b.stamp(5 * S + 10 * MS, 900, 0), 5 * S + 10 * MS)
        self.assertEqual(b.stamp(1 * S, 0, 0), 5 * S + 10 * MS)  # never backwards
        self.assertEqual(BoardTimeStamps().stamp(-(2**63), 0, 0), 0)


if __name__ == "__main__":
    unittest.main()
