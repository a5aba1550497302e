"""Plumb's binary wire format: COBS framing, CRC-16/CCITT-FALSE, and a streaming decoder.

Framing (Sources/Telemetry/FORMATS.md §3): ``0x00 · COBS(payload · CRC16) · 0x00``, the CRC
appended little-endian. Payload kinds: 1 telemetry (58 B), 2 reply, 3 imu (84 B, the ROS 2
contract's section A). The decoder never returns a frame whose CRC failed; everything it drops
is counted in :class:`LinkStats`. It also recognises a Plumb *text* stream (``$PLMB``) or a
MAVLink v2 stream (0xFD packets) and says so, and parses text replies (``$PLMBR``).
"""

from __future__ import annotations

import binascii
import math
import struct
from dataclasses import dataclass
from typing import Optional, Union

VERSION = 1
KIND_TELEMETRY = 0x01
KIND_REPLY = 0x02
KIND_IMU = 0x03

GRAVITY = 9.80665

# Flag bits (FORMATS.md §1), in bit order.
FLAG_NAMES: tuple[str, ...] = (
    "rest",
    "gap",
    "clipping",
    "accelerationRejected",
    "recovering",
    "degradedTiming",
    "i2cRecovery",
    "calibrationLoaded",
    "initialising",
    "gimbalLockNear",
    "headingUncertain",
)
FLAG_REST = 0x0001
FLAG_GAP = 0x0002
FLAG_CLIPPING = 0x0004
FLAG_ACCELERATION_REJECTED = 0x0008
FLAG_RECOVERING = 0x0010
FLAG_DEGRADED_TIMING = 0x0020
FLAG_I2C_RECOVERY = 0x0040
FLAG_CALIBRATION_LOADED = 0x0080
FLAG_INITIALISING = 0x0100
FLAG_GIMBAL_LOCK_NEAR = 0x0200
FLAG_HEADING_UNCERTAIN = 0x0400

_KIND1 = struct.Struct("<BBIq4f3h3hhHIII")  # 58 bytes
_KIND3 = struct.Struct("<BBIq4f3f3h3hhHIIIHH3HHH")  # 84 bytes
assert _KIND1.size == 58 and _KIND3.size == 84

#: A block between delimiters longer than this cannot be a Plumb frame (the longest, kind 3,
#: is 87 bytes encoded); the decoder stops collecting and skips to the next delimiter (as
#: BinaryFormat.maximumEncodedCount in the firmware's decoder).
MAX_BLOCK = 87

I16_NAN = -32768
U16_UNKNOWN = 0xFFFF


def flag_names(flags: int) -> list[str]:
    """The names of the set flags, in bit order; reserved bits as ``bitN``."""
    names = [name for bit, name in enumerate(FLAG_NAMES) if flags & (1 << bit)]
    names += [f"bit{bit}" for bit in range(len(FLAG_NAMES), 16) if flags & (1 << bit)]
    return names


# ---------------------------------------------------------------------------------------------
# CRC and COBS


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected): check("123456789") = 0x29B1."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Canonical COBS: no zero byte in the output; a final full 254-byte block gets no code byte."""
    out = bytearray()
    block = bytearray()
    last_was_full = False
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
            last_was_full = False
        else:
            block.append(byte)
            last_was_full = False
            if len(block) == 254:
                out.append(0xFF)
                out += block
                block.clear()
                last_was_full = True
    if not (last_was_full and not block):
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def cobs_decode(block: bytes) -> Optional[bytes]:
    """Decode one COBS block (without delimiters); None if it is not valid COBS."""
    out = bytearray()
    i = 0
    n = len(block)
    if n == 0:
        return None
    while i < n:
        code = block[i]
        if code == 0:
            return None
        end = i + code
        if end > n:
            return None
        out += block[i + 1 : end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_payload(payload: bytes) -> bytes:
    """The bytes on the wire for one payload: 0x00 · COBS(payload · CRC16 LE) · 0x00."""
    return b"\x00" + cobs_encode(payload + struct.pack("<H", crc16(payload))) + b"\x00"


# ---------------------------------------------------------------------------------------------
# Decoded messages


@dataclass
class Sample:
    """One telemetry frame (kind 1 or kind 3), decoded to SI units.

    Fields kind 1 does not carry are None. Unknown σ fields (0xFFFF) and NaN-coded signed fields
    (0x8000) are ``math.nan``; a saturated σ is its largest value (65534 counts).
    """

    kind: int
    sequence: int
    time_ns: int
    attitude: tuple[float, float, float, float]  # w, x, y, z; body (FLU) -> reference (z up)
    gyro_bias: tuple[float, float, float]  # rad/s, body
    temperature: float  # °C
    flags: int
    missed: int
    latency_us: int
    calibration_id: int
    rate: Optional[tuple[float, float, float]] = None  # rad/s, body, bias removed (kind 3)
    specific_force: Optional[tuple[float, float, float]] = None  # m/s², body (kind 3)
    linear_acceleration_ref: Optional[tuple[float, float, float]] = None  # m/s², reference (kind 1)
    tilt_sigma: Optional[float] = None  # rad
    heading_sigma: Optional[float] = None  # rad
    gyro_bias_sigma: Optional[tuple[float, float, float]] = None  # rad/s
    gyro_noise_sigma: Optional[float] = None  # rad/s
    accel_noise_sigma: Optional[float] = None  # m/s²

    @property
    def has_imu(self) -> bool:
        return self.kind == KIND_IMU


@dataclass
class Reply:
    """A reply to a host command (binary kind 2 or a text ``$PLMBR`` line)."""

    ok: bool
    text: str

    def describe(self) -> str:
        return ("OK " if self.ok else "ERR ") + self.text


Message = Union[Sample, Reply]


def _i16(count: int, scale: float) -> float:
    return math.nan if count == I16_NAN else count * scale


def _u16(count: int, scale: float) -> float:
    return math.nan if count == U16_UNKNOWN else count * scale


def rotate(q: tuple[float, float, float, float], v: tuple[float, float, float]) -> tuple[float, float, float]:
    """q ⊗ v ⊗ q* for a unit quaternion q = (w, x, y, z)."""
    w, x, y, z = q
    vx, vy, vz = v
    # t = 2 (q_vec × v); v' = v + w t + q_vec × t
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )


def specific_force_from_linear(
    q: tuple[float, float, float, float], linear_ref: tuple[float, float, float]
) -> tuple[float, float, float]:
    """Kind 1: the accelerometer's reading (body) = q⁻¹ · (linear acceleration + (0, 0, g))."""
    w, x, y, z = q
    a = (linear_ref[0], linear_ref[1], linear_ref[2] + GRAVITY)
    return rotate((w, -x, -y, -z), a)


def parse_payload(payload: bytes) -> Union[Message, str]:
    """Decode a CRC-checked payload; a string says why it is malformed."""
    if len(payload) < 2:
        return "payload shorter than 2 bytes"
    if payload[0] != VERSION:
        return f"version {payload[0]} (this bridge reads version {VERSION})"
    kind = payload[1]
    if kind == KIND_TELEMETRY:
        if len(payload) != _KIND1.size:
            return f"kind 1 frame of {len(payload)} bytes (expected {_KIND1.size})"
        f = _KIND1.unpack(payload)
        return Sample(
            kind=KIND_TELEMETRY,
            sequence=f[2],
            time_ns=f[3],
            attitude=(f[4], f[5], f[6], f[7]),
            gyro_bias=(_i16(f[8], 2e-5), _i16(f[9], 2e-5), _i16(f[10], 2e-5)),
            linear_acceleration_ref=(_i16(f[11], 0.005), _i16(f[12], 0.005), _i16(f[13], 0.005)),
            temperature=_i16(f[14], 0.01),
            flags=f[15],
            missed=f[16],
            latency_us=f[17],
            calibration_id=f[18],
        )
    if kind == KIND_IMU:
        if len(payload) != _KIND3.size:
            return f"kind 3 frame of {len(payload)} bytes (expected {_KIND3.size})"
        f = _KIND3.unpack(payload)
        return Sample(
            kind=KIND_IMU,
            sequence=f[2],
            time_ns=f[3],
            attitude=(f[4], f[5], f[6], f[7]),
            rate=(f[8], f[9], f[10]),
            specific_force=(_i16(f[11], 0.005), _i16(f[12], 0.005), _i16(f[13], 0.005)),
            gyro_bias=(_i16(f[14], 2e-5), _i16(f[15], 2e-5), _i16(f[16], 2e-5)),
            temperature=_i16(f[17], 0.01),
            flags=f[18],
            missed=f[19],
            latency_us=f[20],
            calibration_id=f[21],
            tilt_sigma=_u16(f[22], 1e-4),
            heading_sigma=_u16(f[23], 1e-4),
            gyro_bias_sigma=(_u16(f[24], 1e-5), _u16(f[25], 1e-5), _u16(f[26], 1e-5)),
            gyro_noise_sigma=_u16(f[27], 1e-5),
            accel_noise_sigma=_u16(f[28], 1e-4),
        )
    if kind == KIND_REPLY:
        if len(payload) < 4:
            return "reply shorter than 4 bytes"
        status, n = payload[2], payload[3]
        if status not in (0, 1):
            return f"reply status {status}"
        if len(payload) != 4 + n:
            return f"reply of {len(payload)} bytes says its text is {n} bytes"
        return Reply(ok=status == 0, text=payload[4:].decode("ascii", errors="replace"))
    return f"unknown kind {kind}"


# ---------------------------------------------------------------------------------------------
# Encoders (tests, tools): the inverse of parse_payload


def _enc_i16(value: float, scale: float) -> int:
    if math.isnan(value):
        return I16_NAN
    counts = value / scale
    rounded = math.floor(abs(counts) + 0.5) * (1 if counts >= 0 else -1)
    return int(max(-32767, min(32767, rounded)))


def _enc_u16(value: float, scale: float) -> int:
    # unknown (NaN) and what no σ can be (negative) → 0xFFFF; too large (inf too) saturates
    if math.isnan(value) or value < 0:
        return U16_UNKNOWN
    if math.isinf(value):
        return 65534
    return int(min(65534, math.floor(value / scale + 0.5)))


def encode_sample(s: Sample) -> bytes:
    """The payload (without CRC) of a kind-1 or kind-3 sample."""
    if s.kind == KIND_TELEMETRY:
        lin = s.linear_acceleration_ref or (0.0, 0.0, 0.0)
        return _KIND1.pack(
            VERSION, KIND_TELEMETRY, s.sequence & 0xFFFFFFFF, s.time_ns, *s.attitude,
            *(_enc_i16(v, 2e-5) for v in s.gyro_bias), *(_enc_i16(v, 0.005) for v in lin),
            _enc_i16(s.temperature, 0.01), s.flags, s.missed, s.latency_us, s.calibration_id,
        )  # fmt: skip
    rate = s.rate or (0.0, 0.0, 0.0)
    force = s.specific_force or (0.0, 0.0, 0.0)
    bias_sigma = s.gyro_bias_sigma or (math.nan, math.nan, math.nan)
    return _KIND3.pack(
        VERSION, KIND_IMU, s.sequence & 0xFFFFFFFF, s.time_ns, *s.attitude, *rate,
        *(_enc_i16(v, 0.005) for v in force), *(_enc_i16(v, 2e-5) for v in s.gyro_bias),
        _enc_i16(s.temperature, 0.01), s.flags, s.missed, s.latency_us, s.calibration_id,
        _enc_u16(s.tilt_sigma if s.tilt_sigma is not None else math.nan, 1e-4),
        _enc_u16(s.heading_sigma if s.heading_sigma is not None else math.nan, 1e-4),
        *(_enc_u16(v, 1e-5) for v in bias_sigma),
        _enc_u16(s.gyro_noise_sigma if s.gyro_noise_sigma is not None else math.nan, 1e-5),
        _enc_u16(s.accel_noise_sigma if s.accel_noise_sigma is not None else math.nan, 1e-4),
    )  # fmt: skip


def encode_reply(ok: bool, text: str) -> bytes:
    raw = text.encode("ascii")[:46]
    return bytes([VERSION, KIND_REPLY, 0 if ok else 1, len(raw)]) + raw


def nmea_checksum(body: bytes) -> int:
    c = 0
    for b in body:
        c ^= b
    return c


# ---------------------------------------------------------------------------------------------
# Statistics and the streaming decoder


@dataclass
class LinkStats:
    bytes: int = 0  # bytes fed to the decoder
    frames: int = 0  # telemetry frames decoded (kind 1 or 3)
    replies: int = 0  # replies decoded (binary kind 2 or text $PLMBR)
    crc_errors: int = 0  # blocks that were valid COBS but failed the CRC
    malformed: int = 0  # blocks that were not COBS, too long, or a wrong version/kind/length
    resyncs: int = 0  # times the decoder regained a good frame after damage
    gaps: int = 0  # sequence gaps (frames lost between two received frames)
    frames_lost: int = 0  # frames missing according to the sequence numbers
    sequence_restarts: int = 0  # sequence went backwards (board restarted)
    bytes_skipped: int = 0  # bytes that were not part of a good frame or reply
    text_lines: int = 0  # $PLMB telemetry lines seen (a text stream)
    mavlink_packets: int = 0  # MAVLink v2 packet headers seen chained (a MAVLink stream)
    last_malformed: str = ""  # why the last block was dropped


class _ForeignDetector:
    """Recognises Plumb text lines and MAVLink v2 packets in the raw byte stream.

    Text: a ``$PLMB,`` or ``$PLMBR,`` line with a valid NMEA checksum. MAVLink: a 0xFD byte whose
    length byte predicts where the next 0xFD starts, three packets in a row.
    """

    def __init__(self) -> None:
        self.line = bytearray()
        self.in_line = False
        self.tail = bytearray()  # MAVLink lookahead window
        self.mavlink_chain = 0
        self.replies: list[Reply] = []
        self.text_lines = 0
        self.mavlink_packets = 0
        self.text_bytes = 0  # bytes of good text lines (not counted as skipped garbage)

    def feed(self, data: bytes) -> None:
        for b in data:
            if b == 0x24:  # '$'
                self.line = bytearray(b"$")
                self.in_line = True
            elif self.in_line:
                if b == 0x0A:
                    self._line_done(bytes(self.line).rstrip(b"\r"))
                    self.in_line = False
                elif len(self.line) > 120 or b == 0:
                    self.in_line = False
                else:
                    self.line.append(b)
        self._scan_mavlink(data)

    def _line_done(self, line: bytes) -> None:
        star = line.rfind(b"*")
        if star < 0 or len(line) - star != 3:
            return
        try:
            want = int(line[star + 1 :], 16)
        except ValueError:
            return
        body = line[1:star]
        if nmea_checksum(body) != want:
            return
        if body.startswith(b"PLMBR,"):
            rest = body[6:].decode("ascii", errors="replace")
            status, _, text = rest.partition(",")
            if status in ("OK", "ERR"):
                self.replies.append(Reply(ok=status == "OK", text=text))
                self.text_bytes += len(line) + 2
        elif body.startswith(b"PLMB,"):
            self.text_lines += 1
            self.text_bytes += len(line) + 2

    def _scan_mavlink(self, data: bytes) -> None:
        self.tail += data
        i = 0
        n = len(self.tail)
        while i < n:
            if self.tail[i] != 0xFD:
                i += 1
                continue
            if i + 3 > n:
                break
            length = self.tail[i + 1]
            incompat = self.tail[i + 2]
            if incompat & ~0x01:
                self.mavlink_chain = 0
                i += 1
                continue
            size = 12 + length + (13 if incompat & 0x01 else 0)
            if i + size >= n:
                break
            if self.tail[i + size] == 0xFD:
                self.mavlink_chain += 1
                if self.mavlink_chain >= 2:
                    self.mavlink_packets += 1
                i += size
            else:
                self.mavlink_chain = 0
                i += 1
        del self.tail[: i if i < n else n]
        if len(self.tail) > 600:
            del self.tail[:-600]


class StreamDecoder:
    """Feed bytes, get decoded messages; never returns a frame whose CRC failed."""

    def __init__(self) -> None:
        self.stats = LinkStats()
        self._block = bytearray()
        self._synced = False  # a delimiter has been seen (bytes before the first are a cut frame)
        self._overlong = False
        self._damaged = False  # something was dropped since the last good frame
        self._last_sequence: Optional[int] = None
        self._foreign = _ForeignDetector()
        # text lines and MAVLink packets seen up to the last binary frame: only those after it
        # count (a board switched to text at run time is reported too)
        self._foreign_at_last_frame = (0, 0)
        self.last_kind: Optional[int] = None  # kind of the last telemetry frame

    # The stream's format as far as the decoder can tell.
    def foreign_format(self) -> Optional[str]:
        """'text' or 'mavlink' when the stream looks like that and carries no binary frames."""
        text, mavlink = self._foreign_at_last_frame
        if self.stats.text_lines - text >= 2:
            return "text"
        if self.stats.mavlink_packets - mavlink >= 3:
            return "mavlink"
        return None

    def foreign_message(self) -> Optional[str]:
        fmt = self.foreign_format()
        if fmt == "text":
            return "this is Plumb text ($PLMB lines); run plumb with --format binary-imu"
        if fmt == "mavlink":
            return "this is MAVLink; run plumb with --format binary-imu"
        return None

    def feed(self, data: bytes) -> list[Message]:
        out: list[Message] = []
        self.stats.bytes += len(data)
        self._foreign.feed(data)
        self.stats.text_lines = self._foreign.text_lines
        self.stats.mavlink_packets = self._foreign.mavlink_packets
        if self._foreign.replies:
            self.stats.replies += len(self._foreign.replies)
            out.extend(self._foreign.replies)
            self._foreign.replies = []
        start = 0
        while True:
            z = data.find(b"\x00", start)
            if z < 0:
                self._collect(data[start:])
                break
            self._collect(data[start:z])
            self._end_block(out)
            start = z + 1
        return out

    def _collect(self, chunk: bytes) -> None:
        if not chunk:
            return
        if not self._synced or self._overlong:
            self.stats.bytes_skipped += len(chunk)
            return
        self._block += chunk
        if len(self._block) > MAX_BLOCK:
            self.stats.bytes_skipped += len(self._block)
            self.stats.malformed += 1
            self.stats.last_malformed = f"more than {MAX_BLOCK} bytes without a delimiter"
            self._damaged = True
            self._block.clear()
            self._overlong = True

    def _end_block(self, out: list[Message]) -> None:
        block = bytes(self._block)
        self._block.clear()
        if not self._synced:
            self._synced = True
            return
        if self._overlong:
            self._overlong = False
            return
        if not block:
            return  # the empty block between two frames' delimiters
        decoded = cobs_decode(block)
        if decoded is None or len(decoded) < 4:
            self._drop(block, "not a COBS block")
            return
        payload, crc = decoded[:-2], decoded[-2:]
        if crc16(payload) != int.from_bytes(crc, "little"):
            self.stats.crc_errors += 1
            self.stats.bytes_skipped += len(block)
            self._damaged = True
            return
        msg = parse_payload(payload)
        if isinstance(msg, str):
            self._drop(block, msg)
            return
        if self._damaged:
            self.stats.resyncs += 1
            self._damaged = False
        if isinstance(msg, Reply):
            self.stats.replies += 1
        else:
            self.stats.frames += 1
            self._foreign_at_last_frame = (self.stats.text_lines, self.stats.mavlink_packets)
            self.last_kind = msg.kind
            self._track_sequence(msg.sequence)
        out.append(msg)

    def _drop(self, block: bytes, why: str) -> None:
        self.stats.malformed += 1
        self.stats.last_malformed = why
        self.stats.bytes_skipped += len(block)
        self._damaged = True

    def _track_sequence(self, seq: int) -> None:
        last = self._last_sequence
        self._last_sequence = seq
        if last is None:
            return
        diff = (seq - last) & 0xFFFFFFFF
        if diff == 1:
            return
        if diff == 0 or diff >= 0x80000000:
            self.stats.sequence_restarts += 1
        else:
            self.stats.gaps += 1
            self.stats.frames_lost += diff - 1

    def reset_sync(self) -> None:
        """After a reopen: the first bytes may be a cut frame, so wait for a delimiter again.
        The sequence is kept: frames the board sent while the link was down count as lost."""
        self._synced = False
        self._block.clear()
        self._overlong = False


def decode_all(data: bytes) -> tuple[list[Message], LinkStats]:
    d = StreamDecoder()
    return d.feed(data), d.stats


__all__ = [
    "FLAG_NAMES",
    "LinkStats",
    "Message",
    "Reply",
    "Sample",
    "StreamDecoder",
    "cobs_decode",
    "cobs_encode",
    "crc16",
    "decode_all",
    "encode_reply",
    "encode_sample",
    "flag_names",
    "frame_payload",
    "parse_payload",
    "specific_force_from_linear",
]

