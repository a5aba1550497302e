"""The wire decoder against FORMATS.md §3's golden vectors, a hand-built kind-3 frame (ROS 2
contract §A), and damage: garbage, cut frames, every single-bit error, resync."""

from __future__ import annotations

import math
import os
import random
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from plumb_ros2 import wire  # noqa: E402
from plumb_ros2.wire import Reply, Sample, StreamDecoder  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VECTORS = os.path.join(REPO, "Tests", "TelemetryTests", "Vectors")


def read_hex_vectors(name: str) -> list[bytes]:
    frames = []
    with open(os.path.join(VECTORS, name)) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                frames.append(bytes.fromhex(line))
    return frames


def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def hand_built_kind3() -> tuple[bytes, dict]:
    """A kind-3 payload packed field by field at the contract's offsets (not with the module's
    encoder), and the values it should decode to."""
    p = bytearray(84)
    p[0] = 1
    p[1] = 3
    struct.pack_into("<I", p, 2, 123456)
    struct.pack_into("<q", p, 6, 5_000_000_123)
    struct.pack_into("<4f", p, 14, 0.5, 0.5, -0.5, 0.5)
    struct.pack_into("<3f", p, 30, 0.1, -0.2, 0.3)
    struct.pack_into("<3h", p, 42, 0, 0, 1961)  # 9.805 m/s²
    struct.pack_into("<3h", p, 48, 50, -100, -32768)  # bias z NaN
    struct.pack_into("<h", p, 54, 2512)  # 25.12 °C
    struct.pack_into("<H", p, 56, 0x0481)  # rest | calibrationLoaded | headingUncertain
    struct.pack_into("<I", p, 58, 7)
    struct.pack_into("<I", p, 62, 950)
    struct.pack_into("<I", p, 66, 0xCAFE)
    struct.pack_into("<H", p, 70, 87)  # tilt σ 0.0087 rad
    struct.pack_into("<H", p, 72, 0xFFFF)  # heading σ unknown
    struct.pack_into("<3H", p, 74, 10, 20, 65534)
    struct.pack_into("<H", p, 80, 300)  # 0.003 rad/s
    struct.pack_into("<H", p, 82, 250)  # 0.025 m/s²
    expected = dict(
        sequence=123456, time_ns=5_000_000_123, attitude=(0.5, 0.5, -0.5, 0.5), rate=(f32(0.1), f32(-0.2), f32(0.3)),
        specific_force=(0.0, 0.0, 1961 * 0.005), temperature=25.12, flags=0x0481, missed=7, latency_us=950,
        calibration_id=0xCAFE, tilt_sigma=0.0087, gyro_noise_sigma=0.003, accel_noise_sigma=0.025,
    )  # fmt: skip
    return bytes(p), expected


class CrcCobsTests(unittest.TestCase):
    def test_crc_check_value(self) -> None:
        self.assertEqual(wire.crc16(b"123456789"), 0x29B1)

    def test_cobs_round_trip_and_no_zero(self) -> None:
        rng = random.Random(7)
        cases = [b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", bytes(range(1, 255)), bytes(range(1, 256)) * 2,
                 bytes([1] * 254) + b"\x00", bytes([1] * 253), bytes([1] * 254), bytes([1] * 255)]  # fmt: skip
        cases += [bytes(rng.randrange(0, 4) for _ in range(rng.randrange(1, 600))) for _ in range(200)]
        for data in cases:
            enc = wire.cobs_encode(data)
            self.assertNotIn(0, enc, data)
            self.assertEqual(wire.cobs_decode(enc), data, data)

    def test_cobs_canonical_full_block(self) -> None:
        # A final full block of 254 bytes gets no trailing code byte (FORMATS.md §3).
        self.assertEqual(wire.cobs_encode(bytes([1] * 254)), b"\xff" + bytes([1] * 254))

    def test_cobs_rejects_bad_blocks(self) -> None:
        self.assertIsNone(wire.cobs_decode(b""))
        self.assertIsNone(wire.cobs_decode(b"\x05\x01\x02"))  # code runs past the end


class GoldenVectorTests(unittest.TestCase):
    def setUp(self) -> None:
        self.frames = read_hex_vectors("binary_v1.hex")
        self.assertEqual(len(self.frames), 5)

    def decode_one(self, frame: bytes) -> wire.Message:
        msgs, stats = wire.decode_all(frame)
        self.assertEqual(len(msgs), 1)
        self.assertEqual(stats.crc_errors + stats.malformed, 0)
        return msgs[0]

    def test_a_level(self) -> None:
        s = self.decode_one(self.frames[0])
        assert isinstance(s, Sample)
        self.assertEqual(len(self.frames[0]), 63)
        self.assertEqual((s.kind, s.sequence, s.time_ns), (1, 1, 1_000_000_000))
        self.assertEqual(s.attitude, (1.0, 0.0, 0.0, 0.0))
        for got, want in zip(s.gyro_bias, (0.001, -0.002, 0.0005)):
            self.assertAlmostEqual(got, want, places=12)
        self.assertEqual(s.linear_acceleration_ref, (0.0, 0.0, 0.0))
        self.assertAlmostEqual(s.temperature, 25.0)
        self.assertEqual((s.flags, s.missed, s.latency_us, s.calibration_id), (0x0081, 0, 850, 0x12345678))
        self.assertEqual(wire.flag_names(s.flags), ["rest", "calibrationLoaded"])
        self.assertIsNone(s.rate)

    def test_b_banked(self) -> None:
        s = self.decode_one(self.frames[1])
        assert isinstance(s, Sample)
        self.assertEqual((s.sequence, s.time_ns), (2, 1_010_000_000))
        q = (0.897635659657183, 0.20599112279858978, -0.17644656798009617, -0.3473967306812714)
        for got, want in zip(s.attitude, q):
            self.assertEqual(got, f32(want))
        for got, want in zip(s.gyro_bias, (-0.0123, 0.00456, 0.0789)):
            self.assertAlmostEqual(got, want, places=12)
        for got, want in zip(s.linear_acceleration_ref or (), (1.25, -0.5, 0.125)):
            self.assertAlmostEqual(got, want, places=12)
        self.assertAlmostEqual(s.temperature, 31.47, places=9)
        self.assertEqual((s.flags, s.missed, s.latency_us, s.calibration_id), (0x0092, 3, 1234, 0x12345678))

    def test_c_edges(self) -> None:
        s = self.decode_one(self.frames[2])
        assert isinstance(s, Sample)
        self.assertEqual((s.sequence, s.time_ns), (0xFFFFFFFF, -(2**63)))
        self.assertTrue(math.isnan(s.gyro_bias[0]))
        self.assertAlmostEqual(s.gyro_bias[1], 32767 * 2e-5)
        self.assertAlmostEqual(s.gyro_bias[2], -32767 * 2e-5)
        self.assertAlmostEqual(s.temperature, -327.67)
        self.assertEqual((s.flags, s.missed, s.latency_us, s.calibration_id), (0x03FF, 0xFFFFFFFF, 0xFFFFFFFF, 0))

    def test_replies(self) -> None:
        self.assertEqual(self.decode_one(self.frames[3]), Reply(ok=True, text="tare"))
        self.assertEqual(self.decode_one(self.frames[4]), Reply(ok=False, text='unknown command "foo"'))

    def test_encoder_reproduces_vectors(self) -> None:
        for frame in self.frames[:3]:
            s = self.decode_one(frame)
            assert isinstance(s, Sample)
            self.assertEqual(wire.frame_payload(wire.encode_sample(s)), frame)
        self.assertEqual(wire.frame_payload(wire.encode_reply(True, "tare")), self.frames[3])

    def test_whole_file_byte_by_byte(self) -> None:
        data = b"".join(self.frames)
        d = StreamDecoder()
        msgs = []
        for i in range(len(data)):
            msgs += d.feed(data[i : i + 1])
        self.assertEqual(len(msgs), 5)
        self.assertEqual(d.stats.frames, 3)
        self.assertEqual(d.stats.replies, 2)
        self.assertEqual(d.stats.bytes_skipped, 0)


class GoldenIMUVectorTests(unittest.TestCase):
    """binary_imu_v1.hex: the kind-1 vectors' figures plus what kind 3 adds (the values are
    those Tests/TelemetryTests/BinaryIMUFormatTests.swift encodes)."""

    def setUp(self) -> None:
        self.frames = read_hex_vectors("binary_imu_v1.hex")
        self.assertEqual(len(self.frames), 3)
        self.samples = []
        for frame in self.frames:
            self.assertEqual(len(frame), 89)
            msgs, stats = wire.decode_all(frame)
            self.assertEqual(stats.crc_errors + stats.malformed, 0)
            self.assertEqual(len(msgs), 1)
            self.samples.append(msgs[0])

    def test_a_level(self) -> None:
        s = self.samples[0]
        self.assertEqual((s.kind, s.sequence, s.time_ns, s.attitude), (3, 1, 1_000_000_000, (1.0, 0.0, 0.0, 0.0)))
        self.assertEqual(s.rate, (0.0, 0.0, 0.0))
        self.assertEqual(s.specific_force, (0.0, 0.0, 1961 * 0.005))  # flat and still: +g, quantised
        for got, want in zip(s.gyro_bias, (0.001, -0.002, 0.0005)):
            self.assertAlmostEqual(got, want, places=12)
        self.assertEqual((s.flags, s.missed, s.latency_us, s.calibration_id), (0x0081, 0, 850, 0x12345678))
        self.assertAlmostEqual(s.tilt_sigma, 0.0012)
        self.assertAlmostEqual(s.heading_sigma, 0.05)
        for got, want in zip(s.gyro_bias_sigma, (0.0001, 0.0001, 0.0002)):
            self.assertAlmostEqual(got, want, places=12)
        self.assertAlmostEqual(s.gyro_noise_sigma, 0.00175)
        self.assertAlmostEqual(s.accel_noise_sigma, 0.0394)

    def test_b_banked(self) -> None:
        s = self.samples[1]
        self.assertEqual(s.rate, (f32(0.1), f32(-0.2), f32(0.3)))
        self.assertAlmostEqual(s.tilt_sigma, 0.0087)
        self.assertAlmostEqual(s.heading_sigma, 0.35)
        for got, want in zip(s.gyro_bias_sigma, (0.00123, 0.00045, 0.0021)):
            self.assertAlmostEqual(got, want, places=12)
        # kind 3's specific force = what the bridge recomputes from kind 1's linear acceleration
        k1 = wire.decode_all(read_hex_vectors("binary_v1.hex")[1])[0][0]
        recomputed = wire.specific_force_from_linear(k1.attitude, k1.linear_acceleration_ref)
        for got, want in zip(s.specific_force, recomputed):
            self.assertAlmostEqual(got, want, delta=0.0026)  # half a count (0.005 m/s²) plus f32

    def test_c_edges(self) -> None:
        s = self.samples[2]
        self.assertEqual((s.sequence, s.time_ns, s.flags), (0xFFFFFFFF, -(2**63), 0x03FF))
        self.assertTrue(math.isnan(s.rate[0]))
        self.assertEqual(s.rate[1], math.inf)  # 1e40 as f32
        self.assertEqual(s.rate[2], -35.0)
        self.assertAlmostEqual(s.tilt_sigma, 6.5534)  # 10 rad saturates at 65534 counts
        self.assertTrue(math.isnan(s.heading_sigma))  # NaN: unknown
        self.assertEqual(s.gyro_bias_sigma[0], 0.0)
        self.assertTrue(math.isnan(s.gyro_bias_sigma[1]))  # −1: no σ is negative → unknown
        self.assertAlmostEqual(s.gyro_bias_sigma[2], 0.65534)  # 0.7 saturates
        self.assertAlmostEqual(s.gyro_noise_sigma, 0.65534)  # infinity saturates
        self.assertAlmostEqual(s.accel_noise_sigma, 6.5534)

    def test_encoder_reproduces_vectors(self) -> None:
        for frame, s in zip(self.frames, self.samples):
            self.assertEqual(wire.frame_payload(wire.encode_sample(s)), frame)


class Kind3Tests(unittest.TestCase):
    def test_hand_built_frame(self) -> None:
        payload, want = hand_built_kind3()
        frame = wire.frame_payload(payload)
        self.assertEqual(len(frame), 89)  # contract: 89 bytes on the wire
        msgs, stats = wire.decode_all(frame)
        self.assertEqual(len(msgs), 1)
        s = msgs[0]
        assert isinstance(s, Sample)
        self.assertEqual(s.kind, 3)
        self.assertTrue(s.has_imu)
        for key, value in want.items():
            got = getattr(s, key)
            if isinstance(value, tuple):
                for g, w in zip(got, value):
                    self.assertAlmostEqual(g, w, places=9, msg=key)
            elif isinstance(value, float):
                self.assertAlmostEqual(got, value, places=9, msg=key)
            else:
                self.assertEqual(got, value, key)
        self.assertAlmostEqual(s.gyro_bias[0], 0.001)
        self.assertAlmostEqual(s.gyro_bias[1], -0.002)
        self.assertTrue(math.isnan(s.gyro_bias[2]))
        self.assertTrue(math.isnan(s.heading_sigma or 0.0))  # 0xFFFF: unknown
        assert s.gyro_bias_sigma is not None
        self.assertAlmostEqual(s.gyro_bias_sigma[0], 1e-4)
        self.assertAlmostEqual(s.gyro_bias_sigma[2], 0.65534)
        # and back: the module's encoder gives the same bytes
        self.assertEqual(wire.encode_sample(s), payload)
        self.assertEqual(stats.frames, 1)

    def test_wrong_length_is_malformed(self) -> None:
        payload, _ = hand_built_kind3()
        for bad in (payload[:-1], payload + b"\x01", b"\x02" + payload[1:], payload[:1] + b"\x09" + payload[2:]):
            msgs, stats = wire.decode_all(wire.frame_payload(bad))
            self.assertEqual(msgs, [])
            self.assertEqual(stats.malformed, 1)
            self.assertTrue(stats.last_malformed)


def kind3_stream(n: int, start_seq: int = 0) -> list[bytes]:
    payload, _ = hand_built_kind3()
    frames = []
    for i in range(n):
        p = bytearray(payload)
        struct.pack_into("<I", p, 2, (start_seq + i) & 0xFFFFFFFF)
        struct.pack_into("<q", p, 6, 1_000_000_000 + 10_000_000 * i)
        frames.append(wire.frame_payload(bytes(p)))
    return frames


class DamageTests(unittest.TestCase):
    def test_garbage_yields_nothing_and_is_counted(self) -> None:
        rng = random.Random(1)
        data = bytes(rng.randrange(256) for _ in range(20000))
        d = StreamDecoder()
        msgs = d.feed(data)
        self.assertEqual(msgs, [])
        self.assertEqual(d.stats.frames, 0)
        self.assertGreater(d.stats.malformed + d.stats.crc_errors, 10)
        self.assertEqual(d.stats.bytes, 20000)
        self.assertGreater(d.stats.bytes_skipped, 19000)

    def test_every_single_bit_error_is_caught(self) -> None:
        good = kind3_stream(2)
        frame, after = good[0], good[1]
        for pos in range(len(frame)):
            for bit in range(8):
                damaged = bytearray(frame)
                damaged[pos] ^= 1 << bit
                d = StreamDecoder()
                msgs = d.feed(b"\x00" + bytes(damaged) + after)
                samples = [m for m in msgs if isinstance(m, Sample)]
                # only the undamaged frame after it comes out, whatever the flip did
                self.assertEqual([m.sequence for m in samples], [1], (pos, bit))
                self.assertEqual(d.stats.frames, 1)
                if 0 < pos < len(frame) - 1:
                    self.assertGreaterEqual(d.stats.crc_errors + d.stats.malformed, 1, (pos, bit))

    def test_cut_frames_never_yield_and_neighbours_survive(self) -> None:
        frames = kind3_stream(10)
        stream = b""
        for i, f in enumerate(frames):
            stream += f[: len(f) // 2] if i % 3 == 1 else f  # frames 1, 4, 7 cut in half
        msgs, stats = wire.decode_all(stream)
        self.assertEqual([m.sequence for m in msgs], [0, 2, 3, 5, 6, 8, 9])
        self.assertEqual(stats.frames_lost, 3)
        self.assertEqual(stats.gaps, 3)
        self.assertGreaterEqual(stats.malformed + stats.crc_errors, 3)

    def test_resync_after_long_garbage_without_delimiters(self) -> None:
        frames = kind3_stream(6)
        junk = bytes([0x55]) * 500
        stream = b"".join(frames[:2]) + junk + b"".join(frames[2:])
        d = StreamDecoder()
        msgs = d.feed(stream)
        self.assertEqual([m.sequence for m in msgs], [0, 1, 2, 3, 4, 5])
        self.assertEqual(d.stats.resyncs, 1)
        self.assertEqual(d.stats.malformed, 1)  # the overlong block
        self.assertGreaterEqual(d.stats.bytes_skipped, 500)

    def test_joining_mid_frame(self) -> None:
        frames = kind3_stream(3)
        stream = b"".join(frames)[40:]  # start inside frame 0
        msgs, stats = wire.decode_all(stream)
        self.assertEqual([m.sequence for m in msgs], [1, 2])
        self.assertEqual(stats.crc_errors, 0)
        self.assertGreater(stats.bytes_skipped, 0)

    def test_sequence_wrap_and_restart(self) -> None:
        frames = kind3_stream(3, start_seq=0xFFFFFFFF)  # …FFFF, 0, 1: a wrap, not a gap
        msgs, stats = wire.decode_all(b"".join(frames) + kind3_stream(1, start_seq=0)[0])
        self.assertEqual(len(msgs), 4)
        self.assertEqual(stats.frames_lost, 0)
        self.assertEqual(stats.sequence_restarts, 1)


class ForeignStreamTests(unittest.TestCase):
    def test_text_stream_is_recognised_and_replies_parsed(self) -> None:
        with open(os.path.join(VECTORS, "text_v1.txt"), "rb") as f:
            text = f.read()
        d = StreamDecoder()
        msgs = d.feed(text * 3)
        self.assertEqual(d.stats.frames, 0)
        self.assertEqual(d.foreign_format(), "text")
        self.assertIn("--format binary-imu", d.foreign_message() or "")
        self.assertEqual(msgs[:2], [Reply(True, "tare"), Reply(False, 'unknown command "foo"')])

    def test_text_reply_with_bad_checksum_is_ignored(self) -> None:
        d = StreamDecoder()
        self.assertEqual(d.feed(b"$PLMBR,OK,tare*48\r\n"), [])

    def test_mavlink_stream_is_recognised(self) -> None:
        with open(os.path.join(VECTORS, "mavlink_stream.raw"), "rb") as f:
            raw = f.read()
        d = StreamDecoder()
        for i in range(0, len(raw), 37):
            self.assertEqual([m for m in d.feed(raw[i : i + 37]) if isinstance(m, Sample)], [])
        self.assertEqual(d.foreign_format(), "mavlink")
        self.assertIn("MAVLink", d.foreign_message() or "")

    def test_switch_to_text_at_run_time_is_reported(self) -> None:
        with open(os.path.join(VECTORS, "text_v1.txt"), "rb") as f:
            text = f.read()
        d = StreamDecoder()
        d.feed(b"".join(kind3_stream(20)))
        self.assertIsNone(d.foreign_format())
        d.feed(text)
        self.assertEqual(d.foreign_format(), "text")
        d.feed(b"".join(kind3_stream(1, start_seq=20)))  # binary again
        self.assertIsNone(d.foreign_format())

    def test_binary_stream_is_not_foreign(self) -> None:
        d = StreamDecoder()
        d.feed(b"".join(kind3_stream(50)))
        self.assertIsNone(d.foreign_format())


class SpecificForceTests(unittest.TestCase):
    def test_level_board_reads_plus_g(self) -> None:
        f = wire.specific_force_from_linear((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        self.assertEqual(f, (0.0, 0.0, wire.GRAVITY))

    def test_rolled_board(self) -> None:
        # roll +90° about x (FLU body, z-up reference): gravity's reaction (up) is along body +y
        c = math.cos(math.pi / 4)
        f = wire.specific_force_from_linear((c, c, 0.0, 0.0), (0.0, 0.0, 0.0))
        self.assertAlmostEqual(f[0], 0.0)
        self.assertAlmostEqual(f[1], wire.GRAVITY)
        self.assertAlmostEqual(f[2], 0.0)


if __name__ == "__main__":
    unittest.main()
