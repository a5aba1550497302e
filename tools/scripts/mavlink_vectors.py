#!/usr/bin/env python3
"""Prints the MAVLink packets of Plumb's component-message tests, packed by pymavlink.

    .venv/bin/python tools/scripts/mavlink_vectors.py \
        > Tests/TelemetryTests/Vectors/mavlink_component_vectors.txt

Each line is `name seq hex`: the packet pymavlink 2.4.50 packs (`msg.pack(mav)`, MAVLink 2,
trailing zeros of the payload cut) for the field values written below. The hex strings are
pasted into Tests/TelemetryTests/MAVLinkComponentMessagesTests.swift and
MAVLinkReceiverTests.swift, whose expectations restate the same field values; the whole output
is committed as Tests/TelemetryTests/Vectors/mavlink_component_vectors.txt (the seeds of
fuzz-mavlink-receiver are cut from it by Tests/Fuzz/make-seeds.py). Run this again after
changing a value here, and paste what changes.

Plumb is system 1, component 200 (MAV_COMP_ID_IMU); the ground station is 255/190
(MAV_COMP_ID_MISSIONPLANNER). Also printed: the CRC_EXTRA and lengths of every message Plumb
knows (from pymavlink's parser of the XML), a packet of a message Plumb does not know
(SYSTEM_TIME, TIMESYNC), a signed COMMAND_LONG and a MAVLink 1 HEARTBEAT.
"""

import contextlib
import io
import os
import sys

try:
    import pymavlink
    from pymavlink.dialects.v10 import common as mavlink1
    from pymavlink.dialects.v20 import common as mavlink2
    from pymavlink.generator import mavparse
except ImportError:
    sys.exit("mavlink_vectors: pymavlink is missing: run `make venv`")

PLUMB = (1, 200)
GCS = (255, 190)


def packet(name, source, seq, message, signing_key=None):
    mav = mavlink2.MAVLink(None, srcSystem=source[0], srcComponent=source[1])
    if signing_key is not None:
        mav.signing.secret_key = signing_key
        mav.signing.sign_outgoing = True
        mav.signing.link_id = 0
        mav.signing.timestamp = 0x0102030405
    mav.seq = seq
    print(f"{name} {seq} {bytes(message.pack(mav)).hex()}")


def table():
    xml = os.path.join(os.path.dirname(pymavlink.__file__), "dialects", "v20")
    ids = {0, 1, 20, 21, 22, 23, 30, 31, 66, 75, 76, 77, 105, 110, 148, 244, 253}
    for name in ("minimal.xml", "standard.xml", "common.xml"):
        with contextlib.redirect_stdout(io.StringIO()):  # the parser's warnings on other enums
            parsed = mavparse.MAVXML(os.path.join(xml, name), "2.0")
        for m in sorted(parsed.message, key=lambda m: m.id):
            if m.id in ids:
                ids.discard(m.id)
                print(f"# {m.id} {m.name} crc_extra {m.crc_extra} "
                      f"length {m.wire_min_length}..{m.wire_length}")


def main():
    m = mavlink2
    table()
    # Sent by Plumb. Keyword arguments: pymavlink's constructors take the XML's order.
    packet("attitude", PLUMB, 10, m.MAVLink_attitude_message(
        time_boot_ms=12345, roll=0.5, pitch=-0.25, yaw=1.5, rollspeed=0.125,
        pitchspeed=-0.0625, yawspeed=2.0))
    packet("sys_status", PLUMB, 11, m.MAVLink_sys_status_message(
        onboard_control_sensors_present=3, onboard_control_sensors_enabled=3,
        onboard_control_sensors_health=3, load=250, voltage_battery=65535, current_battery=-1,
        battery_remaining=-1, drop_rate_comm=0, errors_comm=7, errors_count1=1, errors_count2=2,
        errors_count3=3, errors_count4=4))
    packet("sys_status_extended", PLUMB, 12, m.MAVLink_sys_status_message(
        onboard_control_sensors_present=0x8000_0003, onboard_control_sensors_enabled=3,
        onboard_control_sensors_health=1, load=1000, voltage_battery=12600, current_battery=150,
        battery_remaining=80, drop_rate_comm=25, errors_comm=0, errors_count1=0, errors_count2=0,
        errors_count3=0, errors_count4=0, onboard_control_sensors_present_extended=1,
        onboard_control_sensors_enabled_extended=1, onboard_control_sensors_health_extended=0))
    packet("autopilot_version", PLUMB, 13, m.MAVLink_autopilot_version_message(
        capabilities=8192 | 2 | 8, flight_sw_version=0x000102FF, middleware_sw_version=0,
        os_sw_version=0x06010000, board_version=7,
        flight_custom_version=list(bytes.fromhex("a1b2c3d4e5f60718")),
        middleware_custom_version=[0] * 8, os_custom_version=list(range(1, 9)),
        vendor_id=0x1234, product_id=0x5678, uid=0x0102030405060708, uid2=list(range(1, 19))))
    packet("autopilot_version_no_uid2", PLUMB, 14, m.MAVLink_autopilot_version_message(
        capabilities=8192 | 2 | 8, flight_sw_version=0x000102FF, middleware_sw_version=0,
        os_sw_version=0, board_version=0, flight_custom_version=[0] * 8,
        middleware_custom_version=[0] * 8, os_custom_version=[0] * 8, vendor_id=0,
        product_id=0, uid=0, uid2=[0] * 18))
    packet("command_ack", PLUMB, 15, m.MAVLink_command_ack_message(
        command=512, result=0, progress=0, result_param2=0, target_system=255,
        target_component=190))
    packet("command_ack_short", PLUMB, 16, m.MAVLink_command_ack_message(
        command=42006, result=3, progress=0, result_param2=0, target_system=0,
        target_component=0))
    packet("command_ack_progress", PLUMB, 17, m.MAVLink_command_ack_message(
        command=241, result=5, progress=40, result_param2=-7, target_system=255,
        target_component=190))
    packet("param_value", PLUMB, 18, m.MAVLink_param_value_message(
        param_id=b"IMU_RATE_HZ", param_value=100.0, param_type=6, param_count=5, param_index=2))
    packet("param_value_16", PLUMB, 19, m.MAVLink_param_value_message(
        param_id=b"ABCDEFGHIJKLMNOP", param_value=0.5, param_type=9, param_count=5,
        param_index=4))
    packet("message_interval", PLUMB, 20, m.MAVLink_message_interval_message(
        message_id=30, interval_us=10000))
    packet("message_interval_off", PLUMB, 21, m.MAVLink_message_interval_message(
        message_id=105, interval_us=-1))
    # seq 42, session 0, NAK, size 1, req_opcode 3 (ListDirectory), data[0] 7 (UnknownCommand).
    nak = list(bytes([42, 0, 0, 129, 1, 3, 0, 0, 0, 0, 0, 0, 7]) + bytes(251 - 13))
    packet("ftp_nak", PLUMB, 22, m.MAVLink_file_transfer_protocol_message(
        target_network=0, target_system=255, target_component=190, payload=nak))
    packet("statustext_error", PLUMB, 23, m.MAVLink_statustext_message(
        severity=3, text=b"IMU lost: I2C timeout", id=0, chunk_seq=0))
    # Sent by a ground station to Plumb.
    packet("gcs_heartbeat", GCS, 0, m.MAVLink_heartbeat_message(
        type=6, autopilot=8, base_mode=192, custom_mode=0, system_status=4, mavlink_version=3))
    packet("command_long", GCS, 1, m.MAVLink_command_long_message(
        target_system=1, target_component=200, command=512, confirmation=0, param1=148,
        param2=0, param3=0, param4=0, param5=0, param6=0, param7=0))
    packet("command_long_interval", GCS, 2, m.MAVLink_command_long_message(
        target_system=1, target_component=200, command=511, confirmation=1, param1=30,
        param2=20000, param3=0, param4=0, param5=0, param6=0, param7=-1.5))
    packet("command_int", GCS, 3, m.MAVLink_command_int_message(
        target_system=1, target_component=200, frame=6, command=511, current=0, autocontinue=1,
        param1=31, param2=5000, param3=0.25, param4=-2, x=-123456789, y=987654321, z=12.5))
    packet("param_request_list", GCS, 4, m.MAVLink_param_request_list_message(
        target_system=1, target_component=200))
    packet("param_request_read", GCS, 5, m.MAVLink_param_request_read_message(
        target_system=1, target_component=200, param_id=b"IMU_RATE_HZ", param_index=-1))
    packet("param_request_read_index", GCS, 6, m.MAVLink_param_request_read_message(
        target_system=1, target_component=0, param_id=b"", param_index=3))
    packet("param_set", GCS, 7, m.MAVLink_param_set_message(
        target_system=1, target_component=200, param_id=b"IMU_RATE_HZ", param_value=200.0,
        param_type=6))
    packet("request_data_stream", GCS, 8, m.MAVLink_request_data_stream_message(
        target_system=1, target_component=200, req_stream_id=0, req_message_rate=10,
        start_stop=1))
    # seq 41, session 0, ListDirectory, size 1, offset 0, data "/".
    request = list(bytes([41, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0]) + b"/" + bytes(251 - 13))
    packet("ftp_request", GCS, 9, m.MAVLink_file_transfer_protocol_message(
        target_network=0, target_system=1, target_component=200, payload=request))
    packet("command_long_other", GCS, 10, m.MAVLink_command_long_message(
        target_system=2, target_component=1, command=400, confirmation=0, param1=1, param2=0,
        param3=0, param4=0, param5=0, param6=0, param7=0))
    packet("command_long_broadcast", GCS, 11, m.MAVLink_command_long_message(
        target_system=0, target_component=0, command=519, confirmation=0, param1=0, param2=0,
        param3=0, param4=0, param5=0, param6=0, param7=0))
    packet("command_long_other_component", GCS, 12, m.MAVLink_command_long_message(
        target_system=1, target_component=1, command=400, confirmation=0, param1=1, param2=0,
        param3=0, param4=0, param5=0, param6=0, param7=0))
    packet("system_time", GCS, 13, m.MAVLink_system_time_message(
        time_unix_usec=1_700_000_000_000_000, time_boot_ms=5000))
    packet("timesync", GCS, 14, m.MAVLink_timesync_message(
        tc1=0, ts1=123456789))
    packet("command_long_signed", GCS, 15, m.MAVLink_command_long_message(
        target_system=1, target_component=200, command=520, confirmation=0, param1=1, param2=0,
        param3=0, param4=0, param5=0, param6=0, param7=0), signing_key=bytes(range(32)))
    v1 = mavlink1.MAVLink(None, srcSystem=255, srcComponent=190)
    v1.seq = 16
    heartbeat = mavlink1.MAVLink_heartbeat_message(
        type=6, autopilot=8, base_mode=192, custom_mode=0, system_status=4, mavlink_version=3)
    print(f"v1_heartbeat 16 {bytes(heartbeat.pack(v1)).hex()}")


if __name__ == "__main__":
    main()
