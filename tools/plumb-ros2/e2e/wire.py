"""Plumb's binary framing and telemetry payloads (kind 1 and kind 3), decoded here independently
of the bridge (tools/plumb-ros2/plumb_ros2) from the tables in Sources/Telemetry/FORMATS.md §3 and
the ROS 2 contract: the end-to-end check uses it to cut the byte stream into frames (to damage
some on the way) and to read the σ fields a frame carries. Standard library only."""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass
from typing import Optional

KIND_TELEMETRY = 0x01
KIND_REPLY = 0x02
KIND_IMU = 0x03
KIND1_PAYLOAD = 58
KIND3_PAYLOAD = 84


def cobs_decode(block: bytes) -> Optional[bytes]:
    """The bytes a COBS block (no delimiters) stands for, or None when it is not valid COBS."""
    out = bytearray()
    i = 0
    while i < len(block):
        code = block[i]
        if code == 0 or i + code > len(block):
            return None
        out += block[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(block):
            out.append(0)
    return bytes(out)


def cobs_encode(data: bytes) -> bytes:
    """COBS of data, canonical (a final full block of 254 bytes gets no trailing code byte)."""
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(0xFF)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def crc16(payload: bytes) -> int:
    """CRC-16/CCITT-FALSE."""
    return binascii.crc_hqx(payload, 0xFFFF)


def frame_bytes(payload: bytes) -> bytes:
    """The wire form of a payload: 0x00 · COBS(payload · CRC16 LE) · 0x00."""
    return b"\x00" + cobs_encode(payload + struct.pack("<H", crc16(payload))) + b"\x00"


@dataclass
class Telemetry:
    """One decoded telemetry frame (kind 1 or 3); None for what a kind does not carry."""

    kind: int
    sequence: int
    sample_time_ns: int
    attitude_wxyz: tuple[float, float, float, float]
    temperature_c: float
    flags: int
    latency_us: int
    rate: Optional[tuple[float, float, float]] = None
    specific_force: Optional[tuple[float, float, float]] = None
    tilt_sigma: Optional[float] = None  # rad; inf = unknown (0xFFFF)
    heading_sigma: Optional[float] = None
    bias_sigma: Optional[tuple[float, float, float]] = None  # rad/s
    gyro_noise_sigma: Optional[float] = None  # rad/s
    accel_noise_sigma: Optional[float] = None  # m/s²


def _sigma(raw: int, scale: float) -> float:
    return float("inf") if raw == 0xFFFF else raw * scale


def _signed(raw: int, scale: float) -> float:
    return float("nan") if raw == -32768 else raw * scale


def split_payload(block: bytes) -> Optional[bytes]:
    """The payload of one COBS block whose CRC checks, without the CRC; None otherwise."""
    data = cobs_decode(block)
    if data is None or len(data) < 4:
        return None
    payload, crc = data[:-2], struct.unpack("<H", data[-2:])[0]
    if crc16(payload) != crc:
        return None
    return payload


def parse_telemetry(payload: bytes) -> Optional[Telemetry]:
    """A kind-1 or kind-3 telemetry payload (CRC already checked), or None."""
    if len(payload) < 2 or payload[0] != 1:
        return None
    kind = payload[1]
    if kind == KIND_TELEMETRY and len(payload) == KIND1_PAYLOAD:
        seq, t, w, x, y, z = struct.unpack_from("<Iq4f", payload, 2)
        temperature, flags, _missed, latency = struct.unpack_from("<hHII", payload, 42)
        return Telemetry(kind, seq, t, (w, x, y, z), _signed(temperature, 0.01), flags, latency)
    if kind == KIND_IMU and len(payload) == KIND3_PAYLOAD:
        seq, t, w, x, y, z, rx, ry, rz = struct.unpack_from("<Iq4f3f", payload, 2)
        fx, fy, fz = struct.unpack_from("<3h", payload, 42)
        temperature, flags, _missed, latency, _cal = struct.unpack_from("<hHIII", payload, 54)
        tilt, heading, bx, by, bz, gyro_noise, accel_noise = struct.unpack_from("<7H", payload, 70)
        return Telemetry(
            kind, seq, t, (w, x, y, z), _signed(temperature, 0.01), flags, latency,
            rate=(rx, ry, rz),
            specific_force=(_signed(fx, 0.005), _signed(fy, 0.005), _signed(fz, 0.005)),
            tilt_sigma=_sigma(tilt, 1e-4), heading_sigma=_sigma(heading, 1e-4),
            bias_sigma=(_sigma(bx, 1e-5), _sigma(by, 1e-5), _sigma(bz, 1e-5)),
            gyro_noise_sigma=_sigma(gyro_noise, 1e-5), accel_noise_sigma=_sigma(accel_noise, 1e-4))
    return None


def frames_in(stream: bytes) -> list[Telemetry]:
    """Every telemetry frame whose CRC checks in a recorded byte stream, in order."""
    out = []
    for block in stream.split(b"\x00"):
        if not block:
            continue
        payload = split_payload(block)
        frame = parse_telemetry(payload) if payload is not None else None
        if frame is not None:
            out.append(frame)
    return out
