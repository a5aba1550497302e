#!/usr/bin/env python3
"""Checks Plumb's MAVLink v2 stream with pymavlink, an implementation Plumb does not share.

    check_mavlink.py [STREAM] [SIDECAR]

STREAM (default Tests/TelemetryTests/Vectors/mavlink_stream.raw) is raw MAVLink bytes written
by Plumb's encoder; SIDECAR (default: STREAM with .json) lists every packet and the values
Plumb encoded, in Plumb's own frames (reference z up, body x forward / y left / z up).

Checked, each independently of Plumb's Swift code:
  1. CRC_EXTRA of every message: from MAVLink's XML (pymavlink's parser), from pymavlink's
     generated dialect, and as the sidecar claims: all three agree.
  2. pymavlink parses the stream with no CRC or framing error, and re-packing each message
     with pymavlink (same sequence, system and component) gives the very same bytes (so
     payload truncation, field order and CRC match the reference implementation).
  3. Message ids, system/component ids and the packet sequence (+1 per packet, wrapping).
  4. Every field against the sidecar: the quaternion and vectors converted to NED/FRD here,
     as q_ned = (w, x, -y, -z) and v = (x, -y, -z), rounded to float32, must match exactly.
  5. Conventions a ground station relies on: level is the identity; rolling right gives
     positive, growing roll; turning clockwise seen from above gives growing yaw; nose up
     gives positive pitch.

Exits 0 when everything holds, 1 on any mismatch (each one printed), 2 on usage errors.
"""

import contextlib
import io
import json
import math
import os
import struct
import sys

try:
    import pymavlink
    from pymavlink.dialects.v20 import common as mavlink2
    from pymavlink.generator import mavparse
except ImportError:
    sys.exit("check_mavlink: pymavlink is missing: run `make venv` (or "
             "`python3 -m venv .venv && .venv/bin/pip install -r tools/scripts/requirements.txt`)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_STREAM = os.path.join(ROOT, "Tests", "TelemetryTests", "Vectors", "mavlink_stream.raw")

failures = []


def fail(message):
    failures.append(message)
    print("check_mavlink: FAIL " + message)


def Quaternion(q):
    from pymavlink.quaternion import Quaternion as PymavlinkQuaternion  # needs numpy
    return PymavlinkQuaternion(q)


def f32(x):
    """The float32 nearest to x, as MAVLink's float fields carry it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ned(v):
    return (v[0], -v[1], -v[2])


def euler_degrees(q):
    """Aerospace ZYX roll, pitch, yaw of a body-FRD -> NED quaternion (w, x, y, z)."""
    w, x, y, z = q
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return tuple(math.degrees(a) for a in (roll, pitch, yaw))


def xml_crc_extras(names):
    folder = os.path.join(os.path.dirname(pymavlink.__file__), "dialects", "v20")
    found = {}
    for name in ("minimal.xml", "common.xml"):
        with contextlib.redirect_stdout(io.StringIO()):  # mavparse prints lint notes
            xml = mavparse.MAVXML(os.path.join(folder, name), "2.0")
        for message in xml.message:
            if message.name in names:
                found[message.name] = (message.id, message.crc_extra)
    return found


def expect(condition, message):
    if not condition:
        fail(message)


def repack_problem(message):
    """None when pymavlink re-packs `message` (same sequence, system, component) into the very
    bytes that came over the link; otherwise what differs."""
    header = message.get_header()
    packer = mavlink2.MAVLink(None, srcSystem=header.srcSystem, srcComponent=header.srcComponent)
    packer.seq = header.seq
    repacked = message.pack(packer)
    if repacked == message.get_msgbuf():
        return None
    return (f"pymavlink packs {repacked.hex()}, the link carried "
            f"{bytes(message.get_msgbuf()).hex()}")


def live_problems(message):
    """The checks of this script that need no sidecar, for one packet Plumb sent on a live link
    (tools/scripts/check_mavproxy.py): the byte-exact re-pack, HEARTBEAT's constant fields, the
    quaternion's norm and zero repr_offset_q, finite values, HIGHRES_IMU's magnetometer at zero.
    Returns a list of problems (empty when the packet is fine)."""
    problems = []
    repack = repack_problem(message)
    if repack:
        problems.append(repack)
    kind = message.get_type()
    for field in message.get_fieldnames():
        value = getattr(message, field)
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            problems.append(f"{field} = {value} is not finite")
    if kind == "HEARTBEAT":
        if message.mavlink_version != 3:
            problems.append(f"mavlink_version {message.mavlink_version}, expected 3")
        if message.type == mavlink2.MAV_TYPE_GCS:
            problems.append("type MAV_TYPE_GCS: ground stations would not take Plumb for a vehicle")
    elif kind == "ATTITUDE_QUATERNION":
        norm = math.sqrt(message.q1 ** 2 + message.q2 ** 2 + message.q3 ** 2 + message.q4 ** 2)
        if abs(norm - 1) > 1e-5:
            problems.append(f"|q| = {norm:.7f}, expected 1")
        if list(message.repr_offset_q) != [0.0, 0.0, 0.0, 0.0]:
            problems.append(f"repr_offset_q {message.repr_offset_q}")
    elif kind == "ATTITUDE":
        for field in ("roll", "yaw"):
            if abs(getattr(message, field)) > math.pi + 1e-6:
                problems.append(f"{field} = {getattr(message, field)} outside [-pi, pi]")
        if abs(message.pitch) > math.pi / 2 + 1e-6:
            problems.append(f"pitch = {message.pitch} outside [-pi/2, pi/2]")
    elif kind == "HIGHRES_IMU":
        if (message.xmag, message.ymag, message.zmag) != (0, 0, 0):
            problems.append("magnetometer not zero (Plumb has none)")
        accel = math.sqrt(message.xacc ** 2 + message.yacc ** 2 + message.zacc ** 2)
        if accel > 16 * 9.81:
            problems.append(f"|acceleration| = {accel:.1f} m/s^2, beyond any range the chip has")
    elif kind == "SYS_STATUS":
        if not 0 <= message.load <= 1000:
            problems.append(f"load {message.load} outside 0..1000")
        if not 0 <= message.drop_rate_comm <= 10000:
            problems.append(f"drop_rate_comm {message.drop_rate_comm} outside 0..10000")
        if not -1 <= message.battery_remaining <= 100:
            problems.append(f"battery_remaining {message.battery_remaining} outside -1..100")
    elif kind == "PARAM_VALUE":
        if not message.param_id or len(message.param_id) > 16:
            problems.append(f"param_id {message.param_id!r}")
        if message.param_index >= message.param_count and message.param_index != 65535:
            problems.append(f"param_index {message.param_index} of {message.param_count}")
    return problems


def main(argv):
    if len(argv) > 3 or any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__)
        return 2 if len(argv) > 3 else 0
    stream_path = argv[1] if len(argv) > 1 else DEFAULT_STREAM
    sidecar_path = argv[2] if len(argv) > 2 else os.path.splitext(stream_path)[0] + ".json"
    try:
        with open(stream_path, "rb") as f:
            data = f.read()
        with open(sidecar_path) as f:
            sidecar = json.load(f)
    except OSError as error:
        print(f"check_mavlink: cannot read {error.filename}: {error.strerror}", file=sys.stderr)
        return 2

    # 1. CRC_EXTRA: XML, generated dialect, sidecar.
    claimed = sidecar["crc_extra"]
    from_xml = xml_crc_extras(set(claimed))
    for name, crc_extra in claimed.items():
        cls = mavlink2.mavlink_map[from_xml[name][0]] if name in from_xml else None
        expect(name in from_xml, f"{name} not found in MAVLink's XML")
        if cls is None:
            continue
        expect(from_xml[name][1] == crc_extra,
               f"{name}: CRC_EXTRA {crc_extra} in the sidecar, {from_xml[name][1]} from the XML")
        expect(cls.crc_extra == crc_extra,
               f"{name}: CRC_EXTRA {crc_extra} in the sidecar, {cls.crc_extra} in pymavlink")

    # 2. Parse with pymavlink: any CRC or framing error is a failure.
    parser = mavlink2.MAVLink(None)
    parser.robust_parsing = True
    messages = []
    for i in range(len(data)):
        message = parser.parse_char(data[i:i + 1])
        if message is None:
            continue
        if message.get_type() == "BAD_DATA":
            fail(f"byte {i}: pymavlink rejected data: {message.reason}")
            continue
        messages.append(message)
    expect(parser.total_receive_errors == 0,
           f"pymavlink counted {parser.total_receive_errors} receive errors")
    expect(sum(len(m.get_msgbuf()) for m in messages) == len(data),
           f"pymavlink accounted for {sum(len(m.get_msgbuf()) for m in messages)} of "
           f"{len(data)} bytes")
    expected = sidecar["packets"]
    expect(len(messages) == len(expected) == sidecar["packet_count"],
           f"{len(messages)} packets decoded, sidecar lists {len(expected)}")

    # 3 and 4: ids, sequence, fields, byte-exact re-pack.
    previous_seq = None
    attitude = {}
    for index, (message, want) in enumerate(zip(messages, expected)):
        where = f"packet {index} ({want['name']})"
        header = message.get_header()
        expect(message.get_msgId() == want["msgid"],
               f"{where}: message id {message.get_msgId()}, expected {want['msgid']}")
        if message.get_type() != want["name"]:
            fail(f"{where}: decoded as {message.get_type()}; the streams are out of step")
            continue
        expect(header.srcSystem == sidecar["system_id"] and
               header.srcComponent == sidecar["component_id"],
               f"{where}: from {header.srcSystem}/{header.srcComponent}")
        expect(header.seq == want["seq"], f"{where}: sequence {header.seq}, expected {want['seq']}")
        if previous_seq is not None:
            expect(header.seq == (previous_seq + 1) % 256,
                   f"{where}: sequence {header.seq} after {previous_seq}")
        previous_seq = header.seq

        repack = repack_problem(message)
        expect(repack is None, f"{where}: {repack}")

        kind = want["name"]
        if kind == "HEARTBEAT":
            for field in ("type", "autopilot", "base_mode", "custom_mode", "system_status",
                          "mavlink_version"):
                expect(getattr(message, field) == want[field],
                       f"{where}: {field} = {getattr(message, field)}, expected {want[field]}")
        elif kind == "ATTITUDE_QUATERNION":
            w, x, y, z = want["plumb_attitude"]
            q = (w, x, -y, -z)
            got = (message.q1, message.q2, message.q3, message.q4)
            expect(got == tuple(f32(c) for c in q), f"{where}: q = {got}, expected {q}")
            rate = tuple(f32(c) for c in ned(want["plumb_rate"]))
            got_rate = (message.rollspeed, message.pitchspeed, message.yawspeed)
            expect(got_rate == rate, f"{where}: rates {got_rate}, expected {rate}")
            expect(message.time_boot_ms == want["time_boot_ms"],
                   f"{where}: time_boot_ms {message.time_boot_ms}, expected {want['time_boot_ms']}")
            expect(list(message.repr_offset_q) == [0.0, 0.0, 0.0, 0.0],
                   f"{where}: repr_offset_q {message.repr_offset_q}")
            attitude.setdefault(want["segment"], []).append(euler_degrees(got))
        elif kind == "HIGHRES_IMU":
            acc = tuple(f32(c) for c in ned(want["plumb_specific_force"]))
            gyro = tuple(f32(c) for c in ned(want["plumb_rate"]))
            expect((message.xacc, message.yacc, message.zacc) == acc,
                   f"{where}: acceleration {(message.xacc, message.yacc, message.zacc)}, "
                   f"expected {acc}")
            expect((message.xgyro, message.ygyro, message.zgyro) == gyro,
                   f"{where}: gyro {(message.xgyro, message.ygyro, message.zgyro)}, "
                   f"expected {gyro}")
            expect((message.xmag, message.ymag, message.zmag) == (0, 0, 0), f"{where}: magnetometer")
            expect(message.temperature == f32(want["temperature"]), f"{where}: temperature")
            expect(message.fields_updated == want["fields_updated"], f"{where}: fields_updated")
            expect(message.time_usec == want["time_usec"], f"{where}: time_usec")
        elif kind == "ATTITUDE":
            # pymavlink's own quaternion -> Euler (pymavlink.quaternion), not Plumb's.
            w, x, y, z = want["plumb_attitude"]
            roll, pitch, yaw = (float(a) for a in Quaternion([w, x, -y, -z]).euler)
            got = (message.roll, message.pitch, message.yaw)
            expect(all(abs(a - b) <= 2e-6 for a, b in zip(got, (roll, pitch, yaw))),
                   f"{where}: roll, pitch, yaw {got}, pymavlink says {(roll, pitch, yaw)}")
            rate = tuple(f32(c) for c in ned(want["plumb_rate"]))
            got_rate = (message.rollspeed, message.pitchspeed, message.yawspeed)
            expect(got_rate == rate, f"{where}: rates {got_rate}, expected {rate}")
            expect(message.time_boot_ms == want["time_boot_ms"], f"{where}: time_boot_ms")
            expect(all(-math.pi <= a <= math.pi for a in got), f"{where}: angles out of range")
        elif kind == "SYS_STATUS":
            for field in ("onboard_control_sensors_present", "onboard_control_sensors_enabled",
                          "onboard_control_sensors_health", "load", "voltage_battery",
                          "current_battery", "battery_remaining", "drop_rate_comm",
                          "errors_comm"):
                expect(getattr(message, field) == want[field],
                       f"{where}: {field} = {getattr(message, field)}, expected {want[field]}")
            expect(0 <= message.load <= 1000, f"{where}: load {message.load} outside 0..1000")
            expect(0 <= message.drop_rate_comm <= 10000, f"{where}: drop_rate_comm out of range")
        elif kind == "STATUSTEXT":
            expect(message.severity == want["severity"], f"{where}: severity {message.severity}")
            expect(message.text == want["text"], f"{where}: text {message.text!r}")
        else:
            fail(f"{where}: the sidecar names an unexpected message")

    # 5. Conventions, as a ground station displays them.
    level = attitude.get("level", [])
    expect(level and all(max(abs(a) for a in angles) < 1e-9 for angles in level),
           "level segment: roll, pitch, yaw must all be 0 (identity quaternion)")
    roll = [angles[0] for angles in attitude.get("roll_right", [])]
    expect(roll and roll[0] > 0 and all(b > a for a, b in zip(roll, roll[1:])),
           "roll_right segment: roll must be positive and growing")
    yaw = [angles[2] for angles in attitude.get("yaw_clockwise", [])]
    expect(yaw and yaw[0] > 0 and all(b > a for a, b in zip(yaw, yaw[1:])),
           "yaw_clockwise segment: yaw must be positive and growing")
    pitch = [angles[1] for angles in attitude.get("pitch_up", [])]
    expect(pitch and all(p > 0 for p in pitch), "pitch_up segment: pitch must be positive")

    counts = {}
    for message in messages:
        counts[message.get_type()] = counts.get(message.get_type(), 0) + 1
    summary = ", ".join(f"{counts[k]} {k}" for k in sorted(counts))
    if failures:
        print(f"check_mavlink: {len(failures)} mismatches in {os.path.relpath(stream_path)}")
        return 1
    print(f"check_mavlink: pymavlink {getattr(pymavlink, '__version__', '?')} decoded "
          f"{len(messages)} packets ({summary}) from {os.path.relpath(stream_path)}, "
          f"{len(data)} bytes: 0 CRC errors, sequence continuous through "
          f"{len(messages) // 256} wrap(s), every packet re-packs byte for byte, "
          f"every field matches the sidecar")
    print(f"check_mavlink: roll right {roll[0]:.2f}..{roll[-1]:.2f} deg, "
          f"yaw clockwise {yaw[0]:.2f}..{yaw[-1]:.2f} deg, "
          f"pitch up {pitch[0]:.2f}..{pitch[-1]:.2f} deg: conventions hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
