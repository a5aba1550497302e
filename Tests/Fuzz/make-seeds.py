#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (Tests/Fuzz/corpus/TARGET/) from the project's own
golden files and test vectors, plus a few hand-made inputs for paths the goldens do not take.

The seeds are committed; this script says where each came from and makes them again (run it
from the repository's root after a format changes, and commit what changes). It only cuts
and combines existing files: `make fuzz` never grows the committed corpus.

Each target's seeds stay small (a few KiB in all): the fuzzer mutates them, and a large seed
only slows every execution.
"""

import hashlib
import json
import pathlib
import shutil
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "Tests/Fuzz/corpus"
GOLDEN = ROOT / "Tests/PlumbRuntimeTests/Golden"
VECTORS = ROOT / "Tests/TelemetryTests/Vectors"


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (folder / name).write_bytes(data)


def lines(path, count):
    """The first `count` lines of a text file, as bytes."""
    return b"".join(path.read_bytes().splitlines(keepends=True)[:count])


# --- JSON, board files, calibration files ------------------------------------------------------

def calibration(document):
    """A calibration file signed as CALIBRATION-FILE.md says: the canonical JSON (sorted keys,
    no white space; Python's float repr is Swift's shortest form for these numbers) without
    calibrationId, contentHash and live, hashed with SHA-256."""
    bench = {k: v for k, v in document.items() if k not in ("calibrationId", "contentHash", "live")}
    text = json.dumps(bench, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()
    signed = {"schema": document["schema"], "calibrationId": "0x" + digest[:8],
              "contentHash": "sha256:" + digest}
    signed.update({k: v for k, v in document.items() if k != "schema"})
    return json.dumps(signed, indent=2, ensure_ascii=False) + "\n"


FULL = {
    "schema": 1,
    "sensor": {"whoAmI": "0x68", "name": "MPU-6050", "label": "bench unit 3"},
    "created": "2026-12-02T10:15:00Z",
    "gyroscope": {
        "biasRadiansPerSecond": [0.0123, -0.0045, 0.0067],
        "biasUncertaintyRadiansPerSecond": [1e-05, 2e-05, 1.5e-05],
        "referenceTemperatureCelsius": 31.5,
        "biasPerDegreeCelsius": [0.0002, -0.0001, 5e-05],
        "biasPerDegreeCelsiusSquared": [1e-06, -2e-06, 0],
        "temperatureRangeCelsius": [25.25, 40.5],
    },
    "accelerometer": {"offsetMetersPerSecondSquared": [0.1, -0.2, 0.3],
                      "scale": [1.01, 0.99, 1.002]},
    "noise": {
        "samplePeriodSeconds": 0.01,
        "gyroscope": {
            "angleRandomWalkRadiansPerRootSecond": [0.0001, 0.00012, 9e-05],
            "biasInstabilityRadiansPerSecond": [2e-05, 3e-05, 2.5e-05],
            "rateRandomWalkRadiansPerSecondPerRootSecond": [1e-06, None, 2e-06],
        },
        "accelerometer": {
            "velocityRandomWalkMetersPerSecondPerRootSecond": [0.002, 0.0021, 0.003],
            "biasInstabilityMetersPerSecondSquared": [0.0004, 0.0005, 0.0006],
            "rateRandomWalkMetersPerSecondSquaredPerRootSecond": [None, None, None],
        },
    },
    "restDetector": {"gyroDeviationRadiansPerSecond": 0.0106,
                     "accelDeviationMetersPerSecondSquared": 0.12, "windowSeconds": 1.5,
                     "dwellSeconds": 0.5, "noiseMultiple": 3},
}

MATRIX = dict(FULL)
MATRIX["accelerometer"] = {"offsetMetersPerSecondSquared": [0.1, 0.2, 0.3],
                           "matrix": [[1.01, 0.01, 0], [0, 0.99, 0.02], [0, 0, 1]]}
MATRIX["live"] = {"gyroBiasRadiansPerSecond": [0.001, -0.002, 0.003], "temperatureCelsius": 30.5,
                  "written": "2026-12-03T08:00:00.25Z"}

MINIMAL = {"schema": 1, "sensor": {"whoAmI": "0x70", "name": "MPU-6500", "label": "clone"},
           "created": "2026-12-02T10:15:00Z"}


def json_seeds():
    for board in sorted((ROOT / "Boards").glob("*.json")):
        write("json", board.name, board.read_bytes())
        write("board-file", board.name, board.read_bytes())
    write("json", "calibration.json", calibration(FULL))
    write("json", "escapes.json",
          '{"s": "tab\\t nl\\n quote\\" back\\\\ slash\\/ \\u00e9 \\ud83d\\ude00", '
          '"n": [0, -0, 1.5e-3, -2E+10, 123456789012345678901234567890], '
          '"b": [true, false, null], "o": {}, "a": [], "u": "\u00e9\u20ac"}\n')
    write("json", "bom-nested.json", "\ufeff" + "[[[[{\"k\": [1, {\"x\": null}]}]]]]")
    write("calibration-file", "full.json", calibration(FULL))
    write("calibration-file", "matrix-live.json", calibration(MATRIX))
    write("calibration-file", "minimal.json", calibration(MINIMAL))


# --- CSV ---------------------------------------------------------------------------------------

def csv_seeds():
    write("csv", "export.csv", (ROOT / "Tests/RecordingTests/Golden/export.csv").read_bytes())
    write("csv", "simulated.csv", lines(GOLDEN / "simulated-5s.csv", 12))
    write("csv", "extra-columns.csv",
          "# a bench recording with optical truth\n"
          "\n"
          "t_s , acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,truth_roll\r\n"
          "0.00,0.1,0.2,9.8,0.001,-0.002,0.003,1.5\r\n"
          "  # a comment between rows\r\n"
          "0.01,0.1,0.2,9.8,1e-3,-2E-3,3.0e-03,1.6\r\n"
          "0.02, -0.1 ,0.2,9.81,0.0010000000000000002,-0.002,0.003,\r\n")


# --- .plumbraw ---------------------------------------------------------------------------------

def plumbraw_seeds():
    data = (GOLDEN / "simulated-5s.plumbraw").read_bytes()
    header = struct.unpack_from("<I", data, 12)[0]
    # Whole records up to about 3 KiB: the header, the start-up's bus transcript, samples.
    end = header
    while end + 6 <= len(data) and end < 3000:
        end += data[end + 1] + 6
    write("plumbraw", "simulated-start.plumbraw", data[:end])
    # The same cut in the middle of a record: a torn end.
    write("plumbraw", "torn.plumbraw", data[:end - 7])
    # A damaged record in the middle: its CRC broken.
    damaged = bytearray(data[:end])
    middle = header
    for _ in range(5):
        middle += damaged[middle + 1] + 6
    damaged[middle + 3] ^= 0xFF
    write("plumbraw", "damaged.plumbraw", bytes(damaged))


# --- Host commands -----------------------------------------------------------------------------

def host_command_seeds():
    # The first byte picks the situation (HostCommandsFuzz): bits 0-2 the sample rate, 3-5 the
    # baud rate, 6-7 the format. 0x20: 100 Hz, 115200 baud, binary.
    write("host-commands", "commands", b"\x20tare\nformat text\r\nrate 50\nstatus\r\0version\n")
    write("host-commands", "mistakes",
          b"\x21RATE 7\nformat\nformat binary extra\nfoo bar\nrate 1x\ntare now\n\trate\t20\n")
    write("host-commands", "garbage",
          b"\x20" + b"x" * 70 + b"\nstat\x01us\n\xff\xfe\n" + b"rate 99999999999999999999\n")
    # While streaming MAVLink a ground station's packets are skipped whole: a HEARTBEAT.
    stream = (VECTORS / "mavlink_stream.raw").read_bytes()
    write("host-commands", "mavlink-station", b"\xa0" + stream[:21] + b"format text\n")


# --- Telemetry streams -------------------------------------------------------------------------

def stream_seeds():
    frames = []
    for line in (VECTORS / "binary_v1.hex").read_text().splitlines():
        if line and not line.startswith("#"):
            frames.append(bytes.fromhex(line))
    binary_vectors = b"".join(frames)
    imu_vectors = b"".join(
        bytes.fromhex(line)
        for line in (VECTORS / "binary_imu_v1.hex").read_text().splitlines()
        if line and not line.startswith("#"))
    text_vectors = (VECTORS / "text_v1.txt").read_bytes()
    mavlink = (VECTORS / "mavlink_stream.raw").read_bytes()
    binary_run = (GOLDEN / "run-simulated-10s-binary.bin").read_bytes()
    text_run = (GOLDEN / "run-simulated-10s-text.txt").read_bytes()

    write("monitor-binary", "vectors.bin", binary_vectors)
    write("monitor-binary", "run.bin", binary_run[:63 * 8])
    write("monitor-binary", "joined-mid-frame.bin", binary_run[40:63 * 6])
    # binary-imu (kind 3) frames, and both kinds in one stream (the format switched).
    write("monitor-binary", "vectors-imu.bin", imu_vectors)
    write("monitor-binary", "both-kinds.bin", binary_vectors + imu_vectors + binary_run[:63 * 2])
    write("monitor-text", "vectors.txt", text_vectors)
    write("monitor-text", "run.txt", lines(GOLDEN / "run-simulated-10s-text.txt", 10))
    write("monitor-mavlink", "stream.raw", mavlink[:640])
    write("mavlink", "stream.raw", mavlink[:640])
    # The STATUSTEXT replies (message id 253) of the golden stream, each with the packet before.
    start = 0
    found = 0
    while found < 2 and start < len(mavlink):
        length = mavlink[start + 1]
        end = start + 12 + length
        if mavlink[start + 7] == 253:
            write("mavlink", f"statustext-{found}.raw", mavlink[start:end])
            write("monitor-mavlink", f"statustext-{found}.raw", mavlink[start:end])
            found += 1
        start = end
    # The sender changes format (host command `format X`): binary, then text, then MAVLink.
    write("monitor-auto", "switching.bin",
          binary_run[:63 * 4] + text_run[:200] + mavlink[:300])
    write("monitor-auto", "text-then-binary.txt", text_vectors + binary_vectors)
    write("monitor-auto", "imu-then-text.bin", imu_vectors + text_vectors)


# --- The firmware's MAVLink receiver -------------------------------------------------------------

def receiver_seeds():
    """A ground station's packets as pymavlink packs them (tools/scripts/mavlink_vectors.py,
    committed as Vectors/mavlink_component_vectors.txt): Plumb is 1/200, the station 255/190."""
    packets = {}
    for line in (VECTORS / "mavlink_component_vectors.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, hex_text = line.split()
            packets[name] = bytes.fromhex(hex_text)
    station = [packets[name] for name in (
        "gcs_heartbeat", "command_long", "command_long_interval", "command_int",
        "param_request_list", "param_request_read", "param_request_read_index", "param_set",
        "request_data_stream", "ftp_request", "command_long_broadcast")]
    write("mavlink-receiver", "station.raw", b"".join(station))
    # What Plumb does not take: other targets, unknown ids, MAVLink 1, a signed packet.
    write("mavlink-receiver", "others.raw", b"".join(packets[name] for name in (
        "command_long_other", "system_time", "command_long", "v1_heartbeat", "param_set",
        "command_long_other_component", "timesync", "command_long_signed", "param_request_list")))
    # Damage: garbage, a cut packet, a wrong CRC, a false start byte.
    bad_crc = bytearray(packets["param_set"])
    bad_crc[-1] ^= 0x01
    write("mavlink-receiver", "damaged.raw",
          b"\x00\x11\xfd\x22" + packets["command_long"][:20] + packets["param_request_list"]
          + bytes(bad_crc) + b"\xfd\xc8\x00\x00\x07" + packets["ftp_request"])
    # What Plumb sends, looped back (its own COMMAND_ACK names the station: not for Plumb).
    write("mavlink-receiver", "plumb.raw", b"".join(packets[name] for name in (
        "attitude", "sys_status", "autopilot_version", "command_ack", "param_value",
        "message_interval", "ftp_nak", "statustext_error")))


# --- Web monitor requests ----------------------------------------------------------------------

def web_request_seeds():
    # The first byte picks the limits (WebRequestFuzz): bits 0-2 the head's, 3-5 the body's.
    # 0x00: 8192-byte head, 64-byte body, as plumb-monitor --web runs.
    write("web-request", "page", b"\x00GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
          b"User-Agent: Mozilla/5.0\r\nAccept: text/html\r\n\r\n")
    write("web-request", "events", b"\x00GET /events?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\n"
          b"Accept: text/event-stream\r\nLast-Event-ID: 3\r\n\r\n")
    write("web-request", "command", b"\x00POST /command HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
          b"Origin: http://127.0.0.1:8080\r\nX-Plumb-Command: 1\r\nContent-Type: text/plain\r\n"
          b"Content-Length: 7\r\n\r\nrate 50")
    write("web-request", "absolute", b"\x00GET http://localhost:8080/index.html HTTP/1.0\r\n\r\n")
    write("web-request", "mistakes", b"\x02POST /command HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
          b"Content-Length: 4\r\ncontent-length: 4\r\n folded\r\n\r\ntare")
    write("web-request", "pipelined", b"\x18GET / HTTP/1.1\r\n\r\nGET /x HTTP/1.1\nbare\n\n")


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    json_seeds()
    csv_seeds()
    plumbraw_seeds()
    host_command_seeds()
    stream_seeds()
    receiver_seeds()
    web_request_seeds()
    (CORPUS / ".gitattributes").write_text(
        "# Seeds are inputs byte for byte: never converted (line endings, encodings) by git.\n"
        "* -text -diff\n")
    for folder in sorted(CORPUS.iterdir()):
        if folder.is_dir():
            size = sum(f.stat().st_size for f in folder.iterdir())
            print(f"{folder.name}: {len(list(folder.iterdir()))} seeds, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
