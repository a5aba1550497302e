#!/usr/bin/env python3
"""A stand-in for `plumb-monitor INPUT --json --web ADDR:PORT`, for developing the page.

    fake_web_monitor.py INPUT --web [ADDR:]PORT [--web-commands] [--monitor PATH] [--page FILE]

Runs the real `plumb-monitor INPUT --json --stats-every 0.5`, copies its output to standard
output (so a caller sees what the real tool prints with --json) and serves what
Sources/WebMonitor/README.md describes: GET / the page (taken from the raw string literal in
Sources/WebMonitor/MonitorPage.swift, so no build is needed to try a change), GET /events the
event stream (hello, stats, frame at most 30 a second, reply, notice), POST /command (with
--web-commands the command is answered by a made-up reply, nothing reaches the board; 403
otherwise). Standard library only. It is a development aid, not the product: the real server is
Sources/WebMonitor, and tools/scripts/check_web.py tests that one (--fake for this one).
"""

import argparse
import http.server
import json
import math
import os
import signal
import socketserver
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAGE_SOURCE = os.path.join(ROOT, "Sources", "WebMonitor", "MonitorPage.swift")
MAX_RATE_HZ = 30
COMMANDS = ("tare", "status", "version")


def page_from_swift(path=PAGE_SOURCE):
    """The text of the first `#\"\"\"` … `\"\"\"#` raw string literal in a Swift file, its
    indentation (the closing delimiter's, as Swift strips it) removed."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith('#"""'))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == '"""#')
    indent = lines[end][: len(lines[end]) - len(lines[end].lstrip())]
    body = []
    for line in lines[start + 1 : end]:
        if line.strip() == "":
            body.append("")
        elif line.startswith(indent):
            body.append(line[len(indent) :])
        else:
            raise ValueError("%s:%d: less indented than the closing delimiter" % (path, start + 2))
    return "\n".join(body)


def number(value, scale=1.0):
    return None if value is None else value * scale


class Hub:
    """The latest frame and statistics, and the replies and notices, from plumb-monitor --json."""

    def __init__(self):
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.frame = None
        self.frame_number = 0
        self.stats = None
        self.messages = []  # (serial, event name, data), the last 64
        self.message_serial = 0
        self.clients = 0
        self.coalesced = 0

    def add_message(self, name, data):
        with self.lock:
            self.message_serial += 1
            self.messages.append((self.message_serial, name, data))
            del self.messages[:-64]
            self.changed.notify_all()

    def feed(self, line):
        try:
            item = json.loads(line)
        except ValueError:
            return
        kind = item.get("type")
        if kind == "frame":
            frame = {
                "seq": item.get("sequence", item.get("packetSequence")),
                "t": item["sampleTimeNanoseconds"] / 1e9,
                "format": item.get("format"),
                "q": item.get("attitude"),
                "roll": item.get("rollDegrees"),
                "pitch": item.get("pitchDegrees"),
                "yaw": item.get("yawDegrees"),
                "flags": item.get("flagNames"),
                "flagBits": item.get("flags"),
                "temperature": item.get("temperatureCelsius"),
                "biasDps": [number(v, 180 / math.pi) for v in item["gyroBiasRadiansPerSecond"]]
                if item.get("gyroBiasRadiansPerSecond") else None,
                "latencyMs": number(item.get("latencyMicroseconds"), 1e-3),
                "missed": item.get("missedSamples"),
                "linearAcceleration": item.get("linearAccelerationMetersPerSecondSquared"),
                "calibrationId": int(item["calibrationId"], 16) if item.get("calibrationId") else None,
            }
            with self.lock:
                self.frame_number += 1
                frame["received"] = self.frame_number
                self.frame = frame
        elif kind == "stats":
            latency = item.get("latencyMicroseconds") or {}
            with self.lock:
                self.stats = {
                    "format": item.get("format"), "frames": item.get("telemetryFrames"),
                    "lost": item.get("framesLost"), "crcErrors": item.get("crcErrors"),
                    "resyncs": item.get("resyncs"), "bytesSkipped": item.get("bytesSkipped"),
                    "rateHz": item.get("frameRateHz"),
                    "latencyMeanMs": number(latency.get("mean"), 1e-3),
                    "latencyP99Ms": number(latency.get("p99"), 1e-3),
                    "disconnects": item.get("disconnects"), "reopens": item.get("reopens"),
                    "heartbeats": item.get("heartbeats"),
                }
        elif kind == "reply":
            self.add_message("reply", {"status": item.get("status"), "text": item.get("text")})
        elif kind == "notice":
            self.add_message("notice", {"kind": item.get("notice"), "text": item.get("message")})

    def stats_event(self):
        with self.lock:
            stats = dict(self.stats or {})
            stats["server"] = {"clients": self.clients, "eventsDropped": 0, "badRequests": 0,
                               "framesCoalesced": self.coalesced}
        return stats


def make_handler(hub, page, hello):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def plain(self, status, text, content_type="text/plain; charset=utf-8"):
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def do_GET(self):
            if self.path in ("/", "/index.html"):
                self.plain(200, page, "text/html; charset=utf-8")
            elif self.path == "/events":
                self.events()
            else:
                self.plain(404, "not found\n")

        def do_POST(self):
            if self.path != "/command":
                self.plain(405 if self.path in ("/", "/index.html", "/events") else 404, "no\n")
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(length, 8192)).decode("ascii", "replace").strip()
            if not hello["commands"] or self.headers.get("X-Plumb-Command") != "1":
                self.plain(403, "commands are off: start with --web-commands\n")
                return
            words = body.split()
            valid = (body in COMMANDS or (len(words) == 2 and words[0] == "format"
                     and words[1] in ("binary", "text", "mavlink"))
                     or (len(words) == 2 and words[0] == "rate" and words[1].isdigit()))
            if not valid:
                self.plain(400, "not a host command: %r\n" % body)
                return
            self.plain(202, "queued\n")
            hub.add_message("notice", {"kind": "sent", "text": "sent " + body})
            hub.add_message("reply", {"status": "OK", "text": "OK " + body + " (fake)"})

        def send_event(self, name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())

        def events(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            with hub.lock:
                hub.clients += 1
                seen_message = hub.message_serial
            try:
                self.wfile.write(b"retry: 1000\n\n")
                self.send_event("hello", hello)
                self.send_event("stats", hub.stats_event())
                with hub.lock:
                    frame = hub.frame
                if frame:
                    self.send_event("frame", frame)
                self.wfile.flush()
                last_stats = last_write = time.monotonic()
                while True:
                    time.sleep(1 / MAX_RATE_HZ)
                    with hub.lock:
                        latest = hub.frame
                        messages = [m for m in hub.messages if m[0] > seen_message]
                    for serial, name, data in messages:
                        self.send_event(name, data)
                        seen_message = serial
                        last_write = time.monotonic()
                    if latest is not None and latest is not frame:
                        if frame is not None:
                            hub.coalesced += max(0, latest["received"] - frame["received"] - 1)
                        frame = latest
                        self.send_event("frame", frame)
                        last_write = time.monotonic()
                    now = time.monotonic()
                    if now - last_stats >= 0.5:
                        self.send_event("stats", hub.stats_event())
                        last_stats = last_write = now
                    if now - last_write >= 5:
                        self.wfile.write(b": keepalive\n\n")
                        last_write = now
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
            finally:
                with hub.lock:
                    hub.clients -= 1
                self.close_connection = True

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("--web", required=True, metavar="[ADDR:]PORT")
    parser.add_argument("--web-commands", action="store_true")
    parser.add_argument("--monitor", default=os.path.join(ROOT, ".build", "debug", "plumb-monitor"))
    parser.add_argument("--page", default=PAGE_SOURCE, help="the Swift file holding the page")
    parser.add_argument("--json", action="store_true", help="accepted; the output is JSON anyway")
    args = parser.parse_args()
    host, _, port = args.web.rpartition(":")
    page = page_from_swift(args.page)
    hello = {"tool": "plumb-monitor", "version": "fake", "input": args.input,
             "commands": args.web_commands, "maxRateHz": MAX_RATE_HZ}
    hub = Hub()
    server = Server((host or "127.0.0.1", int(port)), make_handler(hub, page, hello))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("fake_web_monitor: serving http://%s:%d/" % server.server_address, file=sys.stderr,
          flush=True)
    monitor = subprocess.Popen([args.monitor, args.input, "--json", "--stats-every", "0.5"],
                               stdout=subprocess.PIPE, text=True, bufsize=1)

    def stop(signum, _frame):
        monitor.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for line in monitor.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        hub.feed(line)
    status = monitor.wait()
    server.shutdown()
    sys.exit(status)


if __name__ == "__main__":
    main()
