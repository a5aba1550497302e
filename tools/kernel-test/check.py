#!/usr/bin/env python3
"""The host-side checks of `make kernel-test` (tools/kernel-test/README.md).

For each variant (v1: Plumb and fake-mpu built against libgpiod v1; v2: against v2), reads what
its guest left in the variant's run directory:
  results.txt  the "KT-..." lines from the guest's third serial port (fake-mpu's report, Plumb's
               standard error, the error cases);
  frames.bin   Plumb's binary frames from the guest's second serial port;
and checks them against what the harness wrote and the datasheet; then checks that every error
case gave the same message on every variant. Every constant below is restated
from the MPU-6050 documents or Sources/Telemetry/FORMATS.md, not taken from Plumb's code. The
frames are decoded twice: by plumb-monitor (Plumb's own decoder, which also checks CRC, sequence
and rate) and by this script, independently, from the format specification.

Prints one line per check ("v1: ok   ...", "v2: FAIL ...") and exits 0 when all pass, 1 otherwise.
"""

import argparse
import binascii
import json
import math
import re
import struct
import subprocess
import sys

# ---- constants restated from the documents ----

# RM-MPU-6000A-00 rev 4.2.
WHO_AM_I_MPU6050 = 0x68  # section 4.32
GYRO_FS_SEL = {250: 0, 500: 1, 1000: 2, 2000: 3}  # section 4.4, FS_SEL in bits 4:3
GYRO_LSB_PER_DPS = {250: 131.0, 500: 65.5, 1000: 32.8, 2000: 16.4}  # section 4.19
ACCEL_AFS_SEL = {2: 0, 4: 1, 8: 2, 16: 3}  # section 4.5, AFS_SEL in bits 4:3
ACCEL_LSB_PER_G = {2: 16384.0, 4: 8192.0, 8: 4096.0, 16: 2048.0}  # section 4.17
DLPF_CFG = {260: 0, 184: 1, 94: 2, 44: 3, 21: 4, 10: 5, 5: 6}  # section 4.3 (accel bandwidth)
TEMP_LSB_PER_C, TEMP_OFFSET_C = 340.0, 36.53  # section 4.18
STANDARD_GRAVITY = 9.80665  # m/s^2 per g (PS section 6.2's unit)

# Plumb's documented behaviour (DESIGN.md, Sources/Firmware/FirmwareSettings.swift doc comment):
# the loop discards the first 10 samples after start-up while the DLPF and the chip settle.
WARM_UP_SAMPLES = 10
PERIOD_NS = 10_000_000  # 100 Hz

# FORMATS.md section 3: binary telemetry payload, kind 0x01, 58 bytes + CRC-16/CCITT-FALSE.
BINARY_PAYLOAD = struct.Struct("<BBIq4f3h3hhHIII")
BIAS_RAD_S_PER_COUNT = 2e-5
LINEAR_ACCEL_PER_COUNT = 0.005
TEMP_C_PER_COUNT = 0.01
FLAG_REST, FLAG_GAP, FLAG_CLIPPING = 0x0001, 0x0002, 0x0004
FLAG_DEGRADED_TIMING, FLAG_I2C_RECOVERY = 0x0020, 0x0040
FLAG_INITIALISING = 0x0100

# libgpiod's entry points that only one API has: what a binary built against it must contain.
LIBGPIOD_SYMBOLS = {
    "v1": ("gpiod_line_request_rising_edge_events", "gpiod_chip_request_lines"),
    "v2": ("gpiod_chip_request_lines", "gpiod_line_request_rising_edge_events"),
}

failures = []
prefix = ""


def check(ok, text, detail=""):
    print(f"  {prefix}{'ok  ' if ok else 'FAIL'} {text}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures.append(f"{prefix}{text}")
    return ok


def info(text):
    print(f"  {' ' * len(prefix)}     {text}")


def round_half_away(x):
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


# ---- the self-test's factory trim (RM section 4.1) ----


def gyro_factory_trim(code, axis):
    if code == 0:
        return 0.0
    ft = 25.0 * 131.0 * 1.046 ** (code - 1)
    return -ft if axis == 1 else ft


def accel_factory_trim(code):
    if code == 0:
        return 0.0
    return 4096.0 * 0.34 * (0.92 / 0.34) ** ((code - 1) / 30.0)


# ---- decoding ----


def cobs_decode(block):
    out = bytearray()
    i = 0
    while i < len(block):
        code = block[i]
        if code == 0 or i + code > len(block):
            return None
        out += block[i + 1 : i + code]
        i += code
        if code < 0xFF and i < len(block):
            out.append(0)
    return bytes(out)


def decode_binary(data):
    """Frames, and the number of blocks that failed COBS, CRC, version, kind or length."""
    frames, bad = [], 0
    for block in data.split(b"\x00"):
        if not block:
            continue
        decoded = cobs_decode(block)
        if decoded is None or len(decoded) != BINARY_PAYLOAD.size + 2:
            bad += 1
            continue
        payload, crc = decoded[:-2], struct.unpack("<H", decoded[-2:])[0]
        if binascii.crc_hqx(payload, 0xFFFF) != crc:
            bad += 1
            continue
        f = BINARY_PAYLOAD.unpack(payload)
        if f[0] != 1 or f[1] != 0x01:
            bad += 1
            continue
        frames.append(
            {
                "sequence": f[2],
                "time": f[3],
                "q": f[4:8],
                "bias": [c * BIAS_RAD_S_PER_COUNT for c in f[8:11]],
                "linear": [c * LINEAR_ACCEL_PER_COUNT for c in f[11:14]],
                "temp_counts": f[14],
                "flags": f[15],
                "missed": f[16],
                "latency": f[17],
                "calibration": f[18],
            }
        )
    return frames, bad


def rotate(q, v):
    """v rotated by the unit quaternion q = (w, x, y, z): q v q*."""
    w, x, y, z = q
    vx, vy, vz = v
    # t = 2 (q_vec x v); v' = v + w t + q_vec x t
    tx, ty, tz = 2 * (y * vz - z * vy), 2 * (z * vx - x * vz), 2 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )


def angle_degrees(a, b):
    na, nb = math.sqrt(sum(c * c for c in a)), math.sqrt(sum(c * c for c in b))
    cos = max(-1.0, min(1.0, sum(p * q for p, q in zip(a, b)) / (na * nb)))
    return math.degrees(math.acos(cos))


# ---- the guest's report ----


def parse_results(path):
    lines = open(path, "rb").read().decode("utf-8", "replace").replace("\r", "").split("\n")
    r = {"edges": {}, "events": [], "regs": {}, "cases": {}, "stderr": {}, "raw": lines}
    for line in lines:
        try:
            parse_line(r, line)
        except (IndexError, ValueError):
            r.setdefault("malformed", []).append(line)  # a line cut short: KT-END is missing too
    return r


def parse_line(r, line):
    parts = line.split(" ")
    tag = parts[0]
    if tag == "KT-EDGE":
        r["edges"][int(parts[1])] = (int(parts[2]), int(parts[3]))
    elif tag == "KT-EVENT":
        r["events"].append((int(parts[1]), " ".join(parts[2:])))
    elif tag == "KT-REGS":
        label, base = parts[1], int(parts[2], 16)
        regs = r["regs"].setdefault(label, {})
        for i, b in enumerate(parts[3:]):
            regs[base + i] = int(b, 16)
    elif tag == "KT-CASE":
        r["cases"][parts[1]] = int(parts[2].split("=")[1])
    elif tag == "KT-PLUMB-STDERR":
        r["stderr"].setdefault(parts[1], []).append(" ".join(parts[2:]))
    elif tag.startswith("KT-"):
        r.setdefault(tag, []).append(" ".join(parts[1:]))


def fields(text):
    """'a=1 b=x,y' -> {'a': '1', 'b': 'x,y'}"""
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


# The error cases, what Plumb must answer (exit status, and what its message must contain), given
# i2c-stub's bus. Messages must also be identical on every variant.
def error_cases(stub):
    chip_missing = "no such GPIO chip"
    line_missing = "the chip has no such line"
    return {
        # i2c-stub answers an empty address with ENODEV where real adapters NACK (ENXIO/EREMOTEIO):
        # Plumb reports both as "not acknowledged", with the wiring/address advice.
        "missing-chip": (69, "I2C readRegisters failed: notAcknowledged", f"bus {stub}",
                         "address 0x69", "register 0x75", "[ENODEV", "check the wiring"),
        "missing-line-name": (69, "data-ready line: lineMissing", "chip plumb-imu, line NO_SUCH_LINE",
                              "[ENOENT (2)]", line_missing),
        "missing-line-offset": (69, "data-ready line: lineMissing", "chip plumb-imu, line 7",
                                "[EINVAL (22)]", line_missing),
        "missing-chip-label": (69, "data-ready line: chipMissing", "chip no-such-chip", "[ENOENT (2)]",
                               chip_missing),
        "missing-chip-path": (69, "data-ready line: chipMissing", "chip /dev/gpiochip9, line MPU_INT",
                              "[ENOENT (2)]", chip_missing),
        "missing-chip-name": (69, "data-ready line: chipMissing", "chip gpiochip9, line MPU_INT",
                              "[ENOENT (2)]", chip_missing),
        "busy-line": (69, "data-ready line: lineBusy", "chip plumb-imu, line MPU_INT", "[EBUSY (16)]",
                      "another program or driver holds the line"),
    }


def check_binaries(variant, plumb, fake_mpu):
    """The variant's binaries contain its libgpiod API's code and not the other's."""
    present, absent = LIBGPIOD_SYMBOLS[variant]
    for name, path in (("plumb", plumb), ("fake-mpu", fake_mpu)):
        symbols = subprocess.run(["nm", path], capture_output=True, text=True).stdout
        has = re.search(rf"\b{present}\b", symbols) is not None
        has_other = re.search(rf"\b{absent}\b", symbols) is not None
        check(has and not has_other,
              f"{name} is built against libgpiod {variant} (nm: {present}, no {absent})",
              f"{present}: {has}, {absent}: {has_other}")


def check_variant(variant, run, plumb, fake_mpu, board, a):
    """Every check of one variant's guest; returns the error cases' messages (None when the
    guest did not report to the end)."""
    r = parse_results(f"{run}/results.txt")
    check_binaries(variant, plumb, fake_mpu)

    # -- the guest ran to the end
    if "KT-SETUP-FAIL" in r:
        check(False, "guest set-up", r["KT-SETUP-FAIL"][0])
        return None
    if not check("KT-END" in r, "the guest reported to the end (KT-END on ttyS2)"):
        return None
    guest = fields(r["KT-GUEST"][0])
    info(f"guest kernel {guest['kernel']}, i2c-stub {guest['stub']}, gpio-sim {guest['chip']}")
    check(guest.get("variant") == variant, f"the guest ran the {variant} binaries",
          f"kt.variant={guest.get('variant')}")
    check_run(r, variant, run, board, a)
    return check_error_cases(r, guest["stub"])


def check_run(r, variant, run, board, a):
    """Plumb's main run: the harness, the chip's registers, the frames."""
    uptime_start = float(r["KT-UPTIME"][0].split()[1]) * 1e9
    uptime_end = float(r["KT-UPTIME"][1].split()[1]) * 1e9
    realtime_end = int(r["KT-REALTIME"][0]) * 1e9

    # -- the kernel's edge timestamps: CLOCK_MONOTONIC
    clock = fields(r["KT-CLOCK"][0]) if "KT-CLOCK" in r else None
    if check(clock is not None, "clock probe: fake-mpu read one gpio-sim edge event itself"):
        stamp, before, after = int(clock["stamp"]), int(clock["before"]), int(clock["after"])
        realtime = int(clock["realtime"])
        check(
            clock["rising"] == "1" and before <= stamp <= after,
            "the kernel stamps gpio-sim edges on CLOCK_MONOTONIC (stamp within the pull-up write)",
            f"stamp {stamp} not in [{before}, {after}] (CLOCK_REALTIME was {realtime})",
        )
        info(f"edge stamp {stamp / 1e9:.6f} s (uptime), CLOCK_REALTIME {realtime / 1e9:.0f} s")

    # -- the harness and Plumb's run
    harness = fields(r["KT-HARNESS"][0]) if "KT-HARNESS" in r else {}
    check(r.get("KT-HARNESS-RESULT") == ["ok"],
          "fake-mpu saw STATUS=configured and raised every edge",
          (r.get("KT-HARNESS-RESULT") or ["no report"])[0])
    check(r.get("KT-PLUMB-EXIT") == ["exited 0"], "plumb run stopped cleanly on SIGTERM (exit 0)",
          (r.get("KT-PLUMB-EXIT") or ["no report"])[0])
    if harness:
        info(f"plumb start-up (exec to STATUS=configured, self-test included): "
             f"{float(harness['startup_ms']):.0f} ms")
    main_err = r["stderr"].get("main", [])
    # -- which libgpiod: plumb says, and so does the harness
    api_line = next((line for line in main_err if "rising edges through libgpiod" in line), "")
    m = re.search(r"through libgpiod (v\d) \(library (\d+)\.", api_line)
    check(m is not None and m[1] == variant and m[2] == variant[1:],
          f"plumb run says it waits for edges through libgpiod {variant} (library {variant[1:]}.x)",
          repr(api_line))
    harness_api = harness.get("libgpiod", "")
    check(harness_api.startswith(f"{variant}/{variant[1:]}."),
          f"fake-mpu used libgpiod {variant} (library {variant[1:]}.x)", harness_api)
    info(f"{api_line.split('plumb: ', 1)[-1]}; fake-mpu: libgpiod {harness_api}")
    resets = fields(r["KT-RESETS"][0]) if "KT-RESETS" in r else {}
    check(resets.get("startup") == "1" and resets.get("run") == "0",
          "exactly one DEVICE_RESET (at start-up), none while running", str(resets))

    # -- identity and configuration, read back from the stub after start-up and at the end
    gyro_dps, accel_g = board["sensor"]["gyroRangeDps"], board["sensor"]["accelRangeG"]
    trim = fields(r["KT-TRIM"][0])
    trim_regs = [int(x, 16) for x in trim["registers"].split(",")]
    expected = {
        0x0D: trim_regs[0], 0x0E: trim_regs[1], 0x0F: trim_regs[2], 0x10: trim_regs[3],
        0x19: 1000 // board["sensor"]["sampleRateHz"] - 1,  # SMPLRT_DIV: 1 kHz / (1 + div)
        0x1A: DLPF_CFG[board["sensor"]["dlpfHz"]],  # CONFIG: FSYNC off, DLPF_CFG
        0x1B: GYRO_FS_SEL[gyro_dps] << 3,  # GYRO_CONFIG: self-test bits clear
        0x1C: ACCEL_AFS_SEL[accel_g] << 3,  # ACCEL_CONFIG: self-test bits clear
        0x23: 0x00,  # FIFO_EN: off (interrupt mode)
        0x37: 0x00,  # INT_PIN_CFG: active high, push-pull, 50 us pulse
        0x38: 0x01,  # INT_ENABLE: DATA_RDY_EN
        0x6A: 0x00,  # USER_CTRL
        0x6B: 0x01,  # PWR_MGMT_1: awake, CLKSEL 1 (PLL with the X gyro)
        0x6C: 0x00,  # PWR_MGMT_2: every axis on
        0x75: WHO_AM_I_MPU6050,
    }
    for label, when in (("configured", "at STATUS=configured (before the first edge)"),
                        ("end", "after the run")):
        regs = r["regs"].get(label, {})
        wrong = [f"0x{k:02X}={regs.get(k, -1):#04x} (want {v:#04x})"
                 for k, v in expected.items() if regs.get(k) != v]
        check(regs and not wrong,
              f"registers {when}: WHO_AM_I, trim and the configuration Plumb wrote", ", ".join(wrong))

    # -- start-up sequence as the chip saw it: reset, configure, self-test off/on, restore
    configs = [(t, text) for t, text in r["events"] if text == "reset" or text.startswith("config")]
    gc, ac = expected[0x1B], expected[0x1C]
    wanted = ["reset", f"config gyro=0x{gc:02X} accel=0x{ac:02X}",
              "config gyro=0x00 accel=0x10",  # self-test ranges: +-250 deg/s, +-8 g (RM 4.1)
              "config gyro=0xE0 accel=0xF0",  # ... with every self-test bit set
              f"config gyro=0x{gc:02X} accel=0x{ac:02X}"]
    seen = [text for _, text in configs]
    position = 0
    for text in seen:
        if position < len(wanted) and text == wanted[position]:
            position += 1
    check(position == len(wanted),
          "start-up order: DEVICE_RESET, configuration, self-test off then on, configuration restored",
          f"saw {seen}")

    # -- the self-test: Plumb measured exactly the emulated response
    report = next((line for line in main_err if "self-test" in line), "")
    gyro_codes = [int(x) for x in trim["gyro_codes"].split(",")]
    accel_codes = [int(x) for x in trim["accel_codes"].split(",")]
    gyro_dev = [float(x) for x in trim["gyro_deviation"].split(",")]
    accel_dev = [float(x) for x in trim["accel_deviation"].split(",")]
    measured = {(m[0], m[1]): (int(m[2]), int(m[3])) for m in re.findall(
        r"(gyro|accelerometer) ([xyz]): pass, [^(]*\(response (-?\d+) counts, trim (-?\d+)\)", report)}
    want = {}
    for axis, name in enumerate("xyz"):
        ft = gyro_factory_trim(gyro_codes[axis], axis)
        want[("gyro", name)] = (round_half_away(ft * (1 + gyro_dev[axis])), round_half_away(ft))
        ft = accel_factory_trim(accel_codes[axis])
        want[("accelerometer", name)] = (round_half_away(ft * (1 + accel_dev[axis])), round_half_away(ft))
    check("self-test passed" in report and measured == want,
          "self-test passed with exactly the emulated response on all six axes",
          f"report {report!r}, want {want}")

    # -- Plumb's own summary
    summary = next((line for line in main_err if re.search(r" samples, \d+ frames", line)), "")
    m = re.search(r"(\d+) samples, (\d+) frames, (\d+) missed, (\d+) dropped, (\d+) failed reads, "
                  r"(\d+) fallbacks", summary)
    frames_expected = a.edges - WARM_UP_SAMPLES
    check(m is not None and int(m[1]) == int(m[2]) == frames_expected and m[3] == m[4] == m[5] == "0",
          f"plumb's summary: {frames_expected} samples and frames ({a.edges} edges - {WARM_UP_SAMPLES} "
          "warm-up), none missed, dropped or failed", summary)
    if m:
        info(f"plumb: {summary.split('plumb: ', 1)[-1]} (the last fallback: no edge after the last one)")

    # -- the frames: plumb-monitor (CRC, sequence, rate) ...
    monitor = subprocess.run(
        [a.monitor, f"{run}/frames.bin", "--format", "binary", "--json",
         "--expect-frames", str(frames_expected), "--expect-rate", "100", "--rate-tolerance", "1"],
        capture_output=True, text=True)
    records = [json.loads(line) for line in monitor.stdout.splitlines() if line.startswith("{")]
    stats = next((x for x in records if x.get("type") == "stats" and x.get("final")), {})
    monitor_frames = [x for x in records if x.get("type") == "frame"]
    check(monitor.returncode == 0,
          f"plumb-monitor --expect-frames {frames_expected} --expect-rate 100 (1 %) passes",
          (monitor.stderr or monitor.stdout).strip()[-300:])
    problems = {k: stats.get(k) for k in ("framesLost", "sequenceGaps", "duplicates", "outOfOrder",
                                          "crcErrors", "malformed", "bytesSkipped", "resyncs")
                if stats.get(k) != 0}
    check(stats.get("telemetryFrames") == frames_expected and not problems,
          "plumb-monitor: every frame with a valid CRC, continuous sequence, no bytes skipped",
          f"{stats.get('telemetryFrames')} frames, {problems}")
    if stats.get("latencyMicroseconds"):
        lat = stats["latencyMicroseconds"]
        info(f"edge-to-write latency (frames' own field): mean {lat['mean']:.0f} us, p99 {lat['p99']} us, "
             f"max {lat['max']} us")

    # -- ... and this script's own decoder, from FORMATS.md
    frames, bad = decode_binary(open(f"{run}/frames.bin", "rb").read())
    check(bad == 0 and len(frames) == frames_expected,
          "independent decoder: COBS, CRC-16/CCITT-FALSE, version 1, kind 0x01 on every frame",
          f"{len(frames)} good, {bad} bad")
    same = len(frames) == len(monitor_frames) and all(
        f["sequence"] == g["sequence"] and f["time"] == int(g["sampleTimeNanoseconds"])
        and abs(f["temp_counts"] * TEMP_C_PER_COUNT - g["temperatureCelsius"]) < 1e-9
        for f, g in zip(frames, monitor_frames))
    check(same, "plumb-monitor and the independent decoder agree frame by frame")
    if not frames:
        return

    # -- sequence, time, and the sample each frame came from
    check([f["sequence"] for f in frames] == list(range(1, len(frames) + 1)),
          "frame sequence numbers 1, 2, 3 ... without a gap")
    times = [f["time"] for f in frames]
    check(all(b > a_ for a_, b in zip(times, times[1:])), "sample times strictly increase")
    check(uptime_start <= times[0] and times[-1] <= uptime_end and realtime_end - times[-1] > 1e17,
          "sample times lie in the guest's uptime (CLOCK_MONOTONIC), far from CLOCK_REALTIME",
          f"{times[0] / 1e9:.3f}..{times[-1] / 1e9:.3f} s, uptime {uptime_start / 1e9:.2f}..{uptime_end / 1e9:.2f} s")
    outside = []
    for f in frames:
        edge = r["edges"].get(f["sequence"] + WARM_UP_SAMPLES)
        if edge is None or not edge[0] <= f["time"] <= edge[1]:
            outside.append(f["sequence"])
    check(not outside,
          f"frame n carries the kernel timestamp of edge n + {WARM_UP_SAMPLES} (within that edge's pull-up write)",
          f"{len(outside)} frames outside, first {outside[:5]}")
    mean = (times[-1] - times[0]) / (len(times) - 1)
    check(abs(mean - PERIOD_NS) <= 0.01 * PERIOD_NS, "mean sample interval 10 ms (within 1 %)",
          f"{mean / 1e6:.4f} ms")
    info(f"mean interval {mean / 1e6:.4f} ms over {len(times) - 1} intervals (single intervals are "
         "not asserted)")

    samples = fields(r["KT-SAMPLES"][0])
    temp_first, temp_step = int(samples["temp_first"]), int(samples["temp_step"])
    wrong_temp = []
    for f in frames:
        counts = temp_first + temp_step * (f["sequence"] + WARM_UP_SAMPLES)
        want_counts = round_half_away((counts / TEMP_LSB_PER_C + TEMP_OFFSET_C) / TEMP_C_PER_COUNT)
        if f["temp_counts"] != want_counts:
            wrong_temp.append(f["sequence"])
    check(not wrong_temp,
          "every frame's temperature is its own sample's TEMP_OUT (counts / 340 + 36.53 C)",
          f"{len(wrong_temp)} wrong, first {wrong_temp[:5]}")
    flagged = {name: sum(1 for f in frames if f["flags"] & bit) for name, bit in
               (("gap", FLAG_GAP), ("clipping", FLAG_CLIPPING), ("i2cRecovery", FLAG_I2C_RECOVERY),
                ("degradedTiming", FLAG_DEGRADED_TIMING))}
    check(not any(flagged.values()) and all(f["missed"] == 0 for f in frames),
          "no frame flags a gap, clipping, I2C recovery or degraded timing; no missed samples",
          str(flagged))

    # -- READY=1 once the estimator has converged: with the first frame not flagged initialising
    converged = next((f["sequence"] for f in frames if not f["flags"] & FLAG_INITIALISING), None)
    check(converged is not None
          and all(bool(f["flags"] & FLAG_INITIALISING) == (f["sequence"] < converged) for f in frames),
          "frames are flagged initialising until the estimator converges, and never after",
          f"first converged frame {converged}")
    notified = [text.split(" ", 1)[1] for _, text in r["events"] if text.startswith("notify ")]
    check(notified[:1] == [f"STATUS=configured: {board['name']}, binary frames; converging"],
          "plumb's first notification: STATUS=configured: <board>, binary frames; converging",
          str(notified[:3]))
    ready = fields(r["KT-READY"][0]) if "KT-READY" in r else {}
    if converged is not None:
        check(ready.get("count") == "1" and ready.get("edge") == str(converged + WARM_UP_SAMPLES),
              f"READY=1 once, right after edge {converged + WARM_UP_SAMPLES}: the sample of the first "
              f"converged frame ({converged})", str(ready))
        info(f"converged at frame {converged} ({(times[converged - 1] - times[0]) / 1e9:.2f} s after "
             f"the first frame); READY=1 after edge {ready.get('edge')}")

    # -- the data: what the harness wrote, through the estimator
    accel = [int(x) for x in samples["accel"].split(",")]
    gyro = [int(x) for x in samples["gyro"].split(",")]
    force = [c / ACCEL_LSB_PER_G[accel_g] for c in accel]  # g, sensor = body (identity mounting)
    bias = [math.radians(c / GYRO_LSB_PER_DPS[gyro_dps]) for c in gyro]
    # Roll and pitch in MAVLink's NED/FRD frames (FORMATS.md section 1) of a still body whose
    # specific force (x forward, y left, z up) is f: pitch = asin(fx/|f|), roll = atan2(fy, fz).
    norm = math.sqrt(sum(c * c for c in force))
    roll, pitch = math.degrees(math.atan2(force[1], force[2])), math.degrees(math.asin(force[0] / norm))
    first_rest = next((i for i, f in enumerate(frames) if f["flags"] & FLAG_REST), None)
    if not check(first_rest is not None and len(frames) - first_rest >= 100,
                 "the rest detector declares rest (constant input) with at least 100 frames to go",
                 f"first rest frame {first_rest}"):
        return
    info(f"rest from frame {first_rest + 1} ({(times[first_rest] - times[0]) / 1e9:.2f} s after the first frame)")
    rest = frames[first_rest:]
    check(all(f["flags"] & FLAG_REST for f in rest), "rest holds to the last frame")
    up_error = max(angle_degrees(rotate(f["q"], force), (0, 0, 1)) for f in rest)
    check(up_error < 0.02, "attitude at rest maps the written specific force onto the vertical (< 0.02 deg)",
          f"{up_error:.4f} deg")
    by_sequence = {g["sequence"]: g for g in monitor_frames}
    angle_error = max(max(abs(by_sequence[f["sequence"]]["rollDegrees"] - roll),
                          abs(by_sequence[f["sequence"]]["pitchDegrees"] - pitch)) for f in rest)
    check(angle_error < 0.02,
          f"plumb-monitor shows roll {roll:.3f} deg, pitch {pitch:.3f} deg at rest (< 0.02 deg)",
          f"off by {angle_error:.4f} deg")
    bias_error = max(abs(f["bias"][i] - bias[i]) for f in rest for i in range(3))
    check(bias_error < 5e-5,
          "gyro bias at rest = the written gyro counts / 32.8 LSB per deg/s (< 0.003 deg/s)",
          f"off by {math.degrees(bias_error):.5f} deg/s")
    info("gyro bias (deg/s): written " + ", ".join(f"{math.degrees(b):+.4f}" for b in bias)
         + "; last frame " + ", ".join(f"{math.degrees(b):+.4f}" for b in rest[-1]["bias"]))
    linear = max(abs(c) for f in rest for c in f["linear"])
    check(linear <= 0.01, "linear acceleration at rest within 0.01 m/s^2 of zero", f"{linear:.4f} m/s^2")
    yaws = [by_sequence[f["sequence"]]["yawDegrees"] for f in rest]
    check(max(yaws) - min(yaws) < 0.01, "heading held at rest (spread < 0.01 deg)",
          f"{max(yaws) - min(yaws):.4f} deg")



def check_error_cases(r, stub):
    """Each error case: its exit status and message. Returns the messages."""
    messages = {}
    for name, (status, *needles) in error_cases(stub).items():
        lines = r["stderr"].get(name, [])
        message = next((line for line in lines if line.startswith("plumb run: ")), "")
        ok = r["cases"].get(name) == status and all(n in message for n in needles)
        check(ok, f"{name}: exit {status}, {' / '.join(needles)}",
              f"exit {r['cases'].get(name)}, {message!r}")
        messages[name] = message
    return messages


def main():
    global prefix
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", nargs=4, action="append", required=True,
                        metavar=("NAME", "RUN_DIR", "PLUMB", "FAKE_MPU"),
                        help="a variant (v1 or v2), its run directory and its unstripped binaries")
    parser.add_argument("--monitor", required=True, help="plumb-monitor")
    parser.add_argument("--board", required=True, help="the kernel-test board file")
    parser.add_argument("--edges", type=int, required=True)
    a = parser.parse_args()

    board = json.load(open(a.board))
    print("kernel-test: checks")
    # -- the host's view of the board file
    result = subprocess.run([a.variant[0][2], "check-board", a.board], capture_output=True, text=True)
    check(result.returncode == 0, "plumb check-board accepts the kernel-test board", result.stderr)

    messages = {}
    for variant, run, plumb, fake_mpu in a.variant:
        prefix = f"{variant}: "
        try:
            messages[variant] = check_variant(variant, run, plumb, fake_mpu, board, a)
        except (KeyError, IndexError, ValueError, OSError) as error:
            # A report cut short (the guest died mid-way) or a file missing: say what was missing.
            check(False, "the guest's report is complete and readable", f"{type(error).__name__} {error}")
            messages[variant] = None
    prefix = ""

    # -- the same message on every variant, for every error case
    if len(messages) > 1:
        names = list(messages)
        if all(messages.values()):
            differ = [case for case in messages[names[0]]
                      if len({messages[v].get(case) for v in names}) != 1]
            check(not differ, f"every error case gives the same message on {' and '.join(names)}",
                  "; ".join(f"{case}: " + " | ".join(repr(messages[v].get(case)) for v in names)
                            for case in differ))
        else:
            check(False, f"every error case gives the same message on {' and '.join(names)}",
                  "a guest did not report to the end")
    return finish()


def finish():
    if failures:
        print(f"kernel-test: {len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
