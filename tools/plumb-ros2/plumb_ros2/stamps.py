"""Board CLOCK_MONOTONIC → host time for header.stamp.

Each frame says when its sample was taken on the board's clock (``board_ns``) and how long the
board took from that edge to writing the frame (``latency_us``). The host notes when the frame
arrived (``arrival_ns``, host clock). Then

    raw offset = arrival − (board + latency)  =  true offset + transport delay  ≥  true offset

so the smallest raw offset over a sliding window (``window_s`` of host time) is the best
estimate of the true offset: the transport delay (UART bytes, USB polling, scheduling) only
ever adds. The applied offset follows that estimate at a bounded rate (``slew``, seconds per
second; faster, ``acquire_slew``, for the first ``acquire_s`` after a start, when it came from
a single frame), so a stamp never jumps because one frame came through fast; it steps only
when it must:

- the first frame, and after a board restart (its sample time or sequence goes backwards) or a
  jump of the estimate by more than ``step_s`` (the board's clock was set, or a different board
  came up): the window is restarted and the offset set at once;
- and in every case the stamp is clamped to be ≥ the previous stamp (monotonic non-decreasing),
  so a restart or reconnect can never move time backwards.

Pure: no clock is read here; the caller passes the arrival time in.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Optional


@dataclass
class StampStats:
    steps: int = 0  # offset re-initialised (first frame, restarts, big jumps)
    clamped: int = 0  # stamps held back to keep them non-decreasing
    offset_ns: int = 0  # the applied offset (host − board)
    estimate_ns: int = 0  # the window minimum it slews toward


class StampEstimator:
    def __init__(self, window_s: float = 10.0, slew: float = 1e-3, step_s: float = 0.5,
                 acquire_s: float = 10.0, acquire_slew: float = 0.05) -> None:  # fmt: skip
        self.window_ns = int(window_s * 1e9)
        self.slew = slew
        # After a (re)start the offset came from one frame, whose delay may be tens of ms: for
        # the first acquire_s it may move at acquire_slew (50 ms/s: 0.5 ms between samples at
        # 100 Hz, well under their spacing, so stamps still advance), then at slew.
        self.acquire_ns = int(acquire_s * 1e9)
        self.acquire_slew = acquire_slew
        self._started_at = 0
        self.step_ns = int(step_s * 1e9)
        self.stats = StampStats()
        self._window: deque[tuple[int, int]] = deque()  # (arrival_ns, raw offset), raw ascending
        self._offset: Optional[float] = None
        self._last_arrival: Optional[int] = None
        self._last_board: Optional[int] = None
        self._last_sequence: Optional[int] = None
        self._last_stamp: Optional[int] = None

    @property
    def offset_ns(self) -> Optional[int]:
        return None if self._offset is None else int(round(self._offset))

    def _push(self, arrival_ns: int, raw: int) -> None:
        # A monotonic deque: the front is the minimum of the window.
        while self._window and self._window[-1][1] >= raw:
            self._window.pop()
        self._window.append((arrival_ns, raw))
        while self._window and self._window[0][0] < arrival_ns - self.window_ns:
            self._window.popleft()

    def _restart(self, arrival_ns: int, raw: int) -> None:
        self._window.clear()
        self._push(arrival_ns, raw)
        self._offset = float(raw)
        self._started_at = arrival_ns
        self.stats.steps += 1

    def stamp(self, board_ns: int, latency_us: int, arrival_ns: int, sequence: Optional[int] = None) -> int:
        """The host-time stamp (ns) of a sample taken at ``board_ns`` on the board's clock."""
        raw = arrival_ns - (board_ns + latency_us * 1000)
        went_back = self._last_board is not None and board_ns < self._last_board
        if sequence is not None and self._last_sequence is not None:
            back = (sequence - self._last_sequence) & 0xFFFFFFFF
            went_back = went_back or back >= 0x80000000 or back == 0
        if self._offset is None or went_back:
            self._restart(arrival_ns, raw)
        else:
            self._push(arrival_ns, raw)
            estimate = self._window[0][1]
            if abs(estimate - self._offset) > self.step_ns:
                self._restart(arrival_ns, raw)
            else:
                elapsed = max(0, arrival_ns - (self._last_arrival or arrival_ns))
                acquiring = arrival_ns - self._started_at < self.acquire_ns
                allowed = (self.acquire_slew if acquiring else self.slew) * elapsed
                delta = estimate - self._offset
                self._offset += max(-allowed, min(allowed, delta))
        self._last_arrival = arrival_ns
        self._last_board = board_ns
        if sequence is not None:
            self._last_sequence = sequence
        assert self._offset is not None
        stamp = board_ns + int(round(self._offset))
        if self._last_stamp is not None and stamp < self._last_stamp:
            stamp = self._last_stamp
            self.stats.clamped += 1
        self._last_stamp = stamp
        self.stats.offset_ns = int(round(self._offset))
        self.stats.estimate_ns = self._window[0][1]
        return stamp


class BoardTimeStamps:
    """File input: the stamp is the board's sample time (clamped to ≥ 0 and non-decreasing)."""

    def __init__(self) -> None:
        self._last = 0
        self.stats = StampStats()

    def stamp(self, board_ns: int, latency_us: int, arrival_ns: int, sequence: Optional[int] = None) -> int:
        del latency_us, arrival_ns, sequence
        stamp = max(0, board_ns)
        if stamp < self._last:
            stamp = self._last
            self.stats.clamped += 1
        self._last = stamp
        return stamp
