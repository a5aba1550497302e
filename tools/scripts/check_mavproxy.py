#!/usr/bin/env python3
"""A real ground station against the real `plumb`: MAVProxy (pinned in .venv/mavproxy) headless.

    check_mavproxy.py [--plumb PATH] [--board FILE] [--mavproxy PATH] [--only LINK]
                      [--mavproxy-arg ARG] [-v]

Run with .venv/mavproxy/bin/python (`make check-mavproxy`). Two links, each with a fresh Plumb
(`plumb run --board Boards/simulated.json`, real time) and a fresh MAVProxy driven through its
standard input (its interactive shell, fed from a pipe) with its state in a temporary folder:

pty: two pseudo-terminal pairs bridged by this script, which taps both directions and decodes
     every byte with pymavlink: Plumb writes `--serial <pty A>`, MAVProxy reads
     `--master=<pty B> --baudrate 115200`.
udp: Plumb `--serial none --mavlink-udp 127.0.0.1:PORT`, MAVProxy `--master=udpin:127.0.0.1:PORT`
     and `--out=udp:127.0.0.1:OTHER` to a pymavlink listener here (nothing can tap UDP, so what
     Plumb sends is seen through MAVProxy's forwarding).
udp-listen: the other way round, shorter, and with Plumb as component 1 (a copy of the board
     file): Plumb `--mavlink-udp listen:127.0.0.1:PORT` learns its peer from MAVProxy
     `--master=udpout:127.0.0.1:PORT` (detect, target, params, commands, link, crc, fields).

Plumb says MAV_AUTOPILOT_INVALID in its HEARTBEAT unless it is component 1 (FORMATS.md), and
MAVProxy adopts no such target: as a MAVProxy user at 1:200 must, the pty and udp links give
MAVProxy `--target-system 1 --target-component 200`; the udp-listen link, at 1:1, gives nothing
and checks that MAVProxy adopts Plumb by itself.

Checked (each a named check, PASS or FAIL with its numbers):
  detect      MAVProxy prints "Detected vehicle 1:200" (system/component from the board file).
  target      MAVProxy has Plumb for its target vehicle: given on its command line (1:200), or
              adopted by itself, "online system 1" (1:1, autopilot GENERIC). Without a target
              its ftp module ignores Plumb and `param show/set` look at system 0.
  params      MAVProxy's own parameter fetch (FTP first; Plumb NAKs it; then PARAM_REQUEST_LIST)
              ends with "Received N parameters", N = the count `plumb params --json` lists, and
              `param show` gives the values that list has.
  no-storm    in the 20 s after detection MAVProxy's requests (counted on the tap; on UDP read
              from MAVProxy's own telemetry log, which records what it sends) stay under bounds
              taken from its own retry logic (see STORM_BOUNDS): a NAKed FTP open is 2 packets,
              an unanswered one 12; PARAM_REQUEST_LIST is resent every second while nothing
              comes; GET_HOME_POSITION is polled every 2 s until a HOME_POSITION arrives.
  set-rate    `param set SR_IMU_HZ 25`: Plumb echoes PARAM_VALUE 25 and HIGHRES_IMU, counted over
              4 s (tap or listener), comes at 25 Hz +-10 % (50 Hz before, from the parameter list).
  command     `long GET_MESSAGE_INTERVAL 105` and `long REQUEST_MESSAGE 148`: COMMAND_ACK
              ACCEPTED addressed to MAVProxy (255/230), in the tap and in MAVProxy's output
              ("Got COMMAND_ACK: GET_MESSAGE_INTERVAL: ACCEPTED"); AUTOPILOT_VERSION arrives.
  link        MAVProxy's `link` command: the link OK, 0 lost, 0 % loss, its packet count within
              what Plumb sent.
  crc         (pty) every byte both ways is inside a packet pymavlink accepts (CRC, framing);
              (udp) the listener's parser counts no errors.
  fields      every packet Plumb sent passes check_mavlink.live_problems (re-packs byte for byte,
              unit quaternion, finite values, ...: the checks of check_mavlink.py that need no
              sidecar).
  mavproxy-modules  MAVProxy printed no "Failed to load module", "No module named" or traceback
              (its venv is installed with --no-deps: a missing import would change what it does).
  persist     (pty) after the set, Plumb is stopped with SIGINT (exit 0) and started again with
              the same --state-dir; MAVProxy fetches again and SR_IMU_HZ is still 25.

Prints PASS/FAIL per check, then "N passed, N failed". On a failure: the numbers, and the last 30
lines of each process's output. Exit 0 when every check passes, 1 otherwise, 2 on usage errors.
Every process it starts is ended, every temporary folder removed; ports are free ones picked by
the kernel, so two runs at once do not collide.
"""

import argparse
import collections
import json
import os
import re
import select
import shutil
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

try:
    from pymavlink import mavutil
    from pymavlink.dialects.v20 import all as mavlink_all
except ImportError:
    sys.exit("check_mavproxy: pymavlink is missing: run it with .venv/mavproxy/bin/python "
             "(`make check-mavproxy` makes that venv)")
sys.dont_write_bytecode = True  # no __pycache__ in tools/scripts
import check_mavlink  # noqa: E402  (the field checks, shared)

SOURCE_SYSTEM, SOURCE_COMPONENT = 255, 230  # MAVProxy's defaults (--source-system/-component)
SET_RATE_PARAM, SET_RATE_VALUE, SET_RATE_MESSAGE = "SR_IMU_HZ", 25.0, "HIGHRES_IMU"
PERSIST_PARAM = SET_RATE_PARAM
STEADY_WINDOW_S = 20.0
RATE_WINDOW_S = 4.0
RATE_TOLERANCE = 0.10

# Upper bounds for MAVProxy 1.8.75's requests in the 20 s after it detects a component that
# answers as the MAVLink component issue asks (FTP NAKed, parameters sent, commands ACKed).
# From MAVProxy's code (modules/mavproxy_ftp.py, mavproxy_param.py, mavproxy.py):
#  - FILE_TRANSFER_PROTOCOL: the param module opens @PARAM/param.pck once (OpenFileRO); a NAK
#    ends the session with one TerminateSession and the fetch falls back to PARAM_REQUEST_LIST
#    for good: 2 packets. Unanswered, OpenFileRO is resent every 1 s 10 times, then terminated:
#    12 (what today's Plumb gets). 3 allows one resend (an open that crossed a NAK in flight).
#  - PARAM_REQUEST_LIST: sent when FTP fails, then again every 1 s while no PARAM_VALUE has come:
#    1 when Plumb answers within a second; 2 allows one slow start.
#  - PARAM_REQUEST_READ: after 1 s with no PARAM_VALUE, up to 10 missing indices per second:
#    10 allows one such round; a link that loses nothing needs none.
#  - REQUEST_DATA_STREAM: set_stream_rates() sends one at start and one every 15 s by design
#    (not a retry; Plumb ignores it, documented); the first goes out once a vehicle is known:
#    1 or 2 in 20 s, 3 allows for timing.
#  - COMMAND_LONG: the wp module sends MAV_CMD_GET_HOME_POSITION (to component 0) every 2 s until
#    a HOME_POSITION message arrives, whatever the COMMAND_ACK says: a poll by design, at most
#    11 in 20 s (10 periods and the first one), 1 when Plumb answers with a HOME_POSITION. MAVProxy
#    sends no other command at connect: any other command more than once is a retry.
STORM_BOUNDS = {
    "FILE_TRANSFER_PROTOCOL": 3,
    "PARAM_REQUEST_LIST": 2,
    "PARAM_REQUEST_READ": 10,
    "REQUEST_DATA_STREAM": 3,
    "COMMAND_LONG": 11,
}
COMMAND_BOUNDS = {"MAV_CMD_GET_HOME_POSITION": 11}
OTHER_COMMAND_BOUND = 1

FTP_OPCODES = {0: "None", 1: "TerminateSession", 2: "ResetSessions", 3: "ListDirectory",
               4: "OpenFileRO", 5: "ReadFile", 15: "BurstReadFile", 16: "ListDirectoryWithTime"}

VERBOSE = False


def log(text):
    if VERBOSE:
        print(f"check_mavproxy: [{time.strftime('%H:%M:%S')}] {text}", flush=True)


class Results:
    def __init__(self):
        self.passed = []
        self.failed = []

    def check(self, name, ok, detail):
        (self.passed if ok else self.failed).append(name)
        print(f"check_mavproxy: {'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
        return ok


def wait_until(condition, timeout, step=0.05):
    """Polls condition() until it is truthy (returned) or timeout seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(step)


class Process:
    """A child process whose output (stdout and stderr together) is kept line by line."""

    def __init__(self, name, argv, env=None, stdin=False):
        self.name = name
        self.argv = argv
        self.lines = []  # (monotonic time, text)
        self.lock = threading.Lock()
        log(f"start {name}: {shlex.join(argv)}")
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
            start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in iter(self.popen.stdout.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            # MAVProxy's prompt has no newline: it ends up in front of the next line
            text = re.sub(r"^(MAV> ?)+", "", text)
            with self.lock:
                self.lines.append((time.monotonic(), text))
            if VERBOSE:
                print(f"    {self.name}| {text}", flush=True)

    def send(self, command):
        log(f"{self.name} <- {command}")
        try:
            self.popen.stdin.write((command + "\n").encode())
            self.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def mark(self):
        with self.lock:
            return len(self.lines)

    def find(self, pattern, since=0):
        """The first match of pattern in the lines from index since on, or None."""
        regex = re.compile(pattern)
        with self.lock:
            lines = self.lines[since:]
        for _, text in lines:
            match = regex.search(text)
            if match:
                return match
        return None

    def find_all(self, pattern, since=0):
        regex = re.compile(pattern)
        with self.lock:
            lines = self.lines[since:]
        return [m for m in (regex.search(text) for _, text in lines) if m]

    def wait_for(self, pattern, timeout, since=0):
        return wait_until(lambda: self.find(pattern, since), timeout)

    def alive(self):
        return self.popen.poll() is None

    def tail(self, count=30):
        with self.lock:
            return [text for _, text in self.lines[-count:]]

    def interrupt(self, timeout=10):
        """SIGINT, then the exit status (None if it did not exit in time)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.popen.poll() is None:
            for sig, grace in ((signal.SIGINT, 5), (signal.SIGTERM, 3), (signal.SIGKILL, 3)):
                try:
                    os.killpg(self.popen.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.popen.wait(grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        else:
            # the group may still hold children (MAVProxy's log process)
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.popen.stdin:
            try:
                self.popen.stdin.close()
            except OSError:
                pass
        self.reader.join(2)


class Traffic:
    """Packets decoded from one direction of a link, with their arrival times."""

    def __init__(self, name):
        self.name = name
        self.parser = mavlink_all.MAVLink(None)
        self.parser.robust_parsing = True
        self.packets = []  # (monotonic time, message)
        self.bad = []  # (monotonic time, reason)
        self.bytes = 0
        self.lock = threading.Lock()

    def feed(self, data, now=None):
        now = time.monotonic() if now is None else now
        self.bytes += len(data)
        try:
            messages = self.parser.parse_buffer(data) or []
        except Exception as error:  # pymavlink raises on some malformed input
            messages = []
            with self.lock:
                self.bad.append((now, f"parser raised {error}"))
        with self.lock:
            for message in messages:
                if message.get_type() == "BAD_DATA":
                    self.bad.append((now, getattr(message, "reason", "bad data")))
                else:
                    self.packets.append((now, message))

    def add(self, message, now=None):
        now = time.monotonic() if now is None else now
        with self.lock:
            if message.get_type() == "BAD_DATA":
                self.bad.append((now, getattr(message, "reason", "bad data")))
            else:
                self.packets.append((now, message))

    def between(self, start=0.0, end=float("inf"), kind=None):
        with self.lock:
            return [m for t, m in self.packets
                    if start <= t < end and (kind is None or m.get_type() == kind)]

    def first(self, predicate, since=0.0):
        with self.lock:
            for t, m in self.packets:
                if t >= since and predicate(m):
                    return m
        return None

    def wait_for(self, predicate, timeout, since=0.0):
        return wait_until(lambda: self.first(predicate, since), timeout)

    def counts(self, start=0.0, end=float("inf")):
        return collections.Counter(m.get_type() for m in self.between(start, end))


class PtyTap:
    """Two pseudo-terminal pairs and a thread copying between their masters, decoding both ways.

    Plumb opens slave A, MAVProxy slave B. The slaves stay open here too (raw, no echo), so a
    process closing its end never hangs the line up for the other."""

    MAX_PENDING = 1 << 20

    def __init__(self):
        self.a_master, self.a_slave = os.openpty()
        self.b_master, self.b_slave = os.openpty()
        for fd in (self.a_slave, self.b_slave):
            tty.setraw(fd)
        for fd in (self.a_master, self.b_master):
            os.set_blocking(fd, False)
        self.plumb_path = os.ttyname(self.a_slave)
        self.client_path = os.ttyname(self.b_slave)
        self.from_plumb = Traffic("plumb->mavproxy")
        self.from_client = Traffic("mavproxy->plumb")
        self.pending = {self.a_master: bytearray(), self.b_master: bytearray()}
        self.dropped = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        route = {self.a_master: (self.b_master, self.from_plumb),
                 self.b_master: (self.a_master, self.from_client)}
        while self.running:
            writers = [fd for fd, data in self.pending.items() if data]
            try:
                readable, writable, _ = select.select(list(route), writers, [], 0.05)
            except (OSError, ValueError):
                return
            for fd in readable:
                try:
                    data = os.read(fd, 65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    time.sleep(0.01)
                    continue
                if not data:
                    continue
                target, traffic = route[fd]
                traffic.feed(data)
                pending = self.pending[target]
                pending.extend(data)
                if len(pending) > self.MAX_PENDING:
                    self.dropped += len(pending) - self.MAX_PENDING
                    del pending[:len(pending) - self.MAX_PENDING]
            for fd in writable:
                pending = self.pending[fd]
                try:
                    written = os.write(fd, pending)
                    del pending[:written]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    pending.clear()

    def close(self):
        self.running = False
        self.thread.join(2)
        for fd in (self.a_master, self.a_slave, self.b_master, self.b_slave):
            try:
                os.close(fd)
            except OSError:
                pass


class UdpListener:
    """A pymavlink connection on a free UDP port that MAVProxy's --out forwards to."""

    def __init__(self):
        # port 0: the kernel picks a free port and the socket keeps it (no window for a race)
        self.connection = mavutil.mavlink_connection(
            "udpin:127.0.0.1:0", dialect="all", source_system=254)
        self.port = self.connection.port.getsockname()[1]
        self.connection.mav.robust_parsing = True
        self.traffic = Traffic("mavproxy --out")
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                message = self.connection.recv_msg()
            except Exception:
                message = None
            if message is None:
                time.sleep(0.002)
                continue
            self.traffic.add(message)

    def errors(self):
        return self.connection.mav.total_receive_errors

    def close(self):
        self.running = False
        self.thread.join(2)
        self.connection.close()


def free_udp_port():
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def measure_rate(traffic, kind, seconds, source):
    """Waits seconds, then the rate of kind from (system, component) source in that window."""
    start = time.monotonic()
    time.sleep(seconds)
    end = time.monotonic()
    with traffic.lock:
        times = [t for t, m in traffic.packets
                 if start <= t < end and m.get_type() == kind and
                 (m.get_srcSystem(), m.get_srcComponent()) == source]
    # count per window (robust to bunching on a pty): messages / window length
    return len(times) / (end - start), len(times)


class Harness:
    def __init__(self, args):
        self.args = args
        self.results = Results()
        self.processes = []
        self.cleanups = []
        self.temp = tempfile.mkdtemp(prefix="plumb-mavproxy-")
        self.cleanups.append(lambda: shutil.rmtree(self.temp, ignore_errors=True))
        self.expected = None  # {name: {"value":..., "type":...}}
        self.source = (1, 200)  # of the board a link runs; set by use_board
        self.board = None
        self.plumb_run_help = ""

    # --- processes ---------------------------------------------------------------------------

    def use_board(self, component=None):
        """The board file for the next link: the given one, or a copy of it in the temporary
        folder with another MAVLink component id. Sets self.source to its (system, component)."""
        path = os.path.join(ROOT, self.args.board)
        with open(path) as f:
            board = json.load(f)
        mavlink = board.setdefault("mavlink", {"systemId": 1, "componentId": 200})
        if component is not None and component != mavlink.get("componentId"):
            mavlink["componentId"] = component
            path = os.path.join(self.temp, f"board-component-{component}.json")
            with open(path, "w") as f:
                json.dump(board, f, indent=2)
        self.board = path
        self.source = (mavlink.get("systemId", 1), mavlink.get("componentId", 200))

    def mavproxy_target_args(self):
        """MAVProxy adopts as its target only a HEARTBEAT whose autopilot is not INVALID, and
        Plumb says INVALID unless it is component 1 (beside a flight controller, which is 1:1):
        a MAVProxy user then names the target, and so do we."""
        if self.source[1] == 1 or any(a.startswith("--target-") for a in
                                      (self.args.mavproxy_arg or [])):
            return []
        return [f"--target-system={self.source[0]}", f"--target-component={self.source[1]}"]

    def start_plumb(self, label, link_args, state_dir):
        argv = [self.args.plumb, "run", "--board", self.board, "--format", "mavlink"]
        argv += link_args
        if "--state-dir" in self.plumb_run_help:
            argv += ["--state-dir", state_dir]
        process = Process(label, argv)
        self.processes.append(process)
        return process

    def start_mavproxy(self, label, master, extra=()):
        state = os.path.join(self.temp, label + "-state")
        home = os.path.join(self.temp, label + "-home")
        os.makedirs(state, exist_ok=True)
        os.makedirs(home, exist_ok=True)
        env = dict(os.environ)
        env.pop("DISPLAY", None)
        env.update(HOME=home, PYTHONUNBUFFERED="1", MPLBACKEND="Agg", XDG_CONFIG_HOME=home,
                   XDG_CACHE_HOME=os.path.join(home, ".cache"))
        argv = [sys.executable, "-u", self.args.mavproxy, f"--master={master}",
                "--state-basedir", state, "--source-system", str(SOURCE_SYSTEM),
                "--source-component", str(SOURCE_COMPONENT),
                # its telemetry log written through at once (tlog_window reads it while it runs)
                "--cmd=set flushlogs 1"] + list(extra) + \
            self.mavproxy_target_args() + list(self.args.mavproxy_arg or [])
        process = Process(label, argv, env=env, stdin=True)
        self.processes.append(process)
        return process

    def failure_context(self, processes):
        for process in processes:
            status = process.popen.poll()
            print(f"check_mavproxy: --- last 30 lines of {process.name} "
                  f"({'running' if status is None else f'exit {status}'}): "
                  f"{shlex.join(process.argv)}")
            for line in process.tail(30):
                print(f"    {line}")

    # --- the expected parameters -------------------------------------------------------------

    def load_expected(self):
        board = os.path.join(ROOT, self.args.board)
        argv = [self.args.plumb, "params", "--board", board, "--json"]
        try:
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30)
            listing = json.loads(done.stdout)
            self.expected = {p["name"]: p for p in listing["parameters"]}
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as error:
            output = ""
            if "done" in locals():
                output = (done.stdout + done.stderr).strip().splitlines()[-3:]
            self.results.check("param-list", False,
                               f"`{' '.join(argv)}` gave no parameter list ({error}); "
                               f"output: {output}")
            return
        self.results.check("param-list", len(self.expected) > 0 and
                           SET_RATE_PARAM in self.expected,
                           f"`plumb params --json` lists {len(self.expected)} parameters"
                           + ("" if SET_RATE_PARAM in self.expected else
                              f", without {SET_RATE_PARAM}"))

    def expected_value(self, name):
        if self.expected and name in self.expected:
            return float(self.expected[name]["value"])
        return None

    # --- the checks common to both links ------------------------------------------------------

    def check_detect(self, link, mavproxy, traffic, timeout=30):
        sysid, compid = self.source
        found = mavproxy.wait_for(rf"Detected vehicle {sysid}:{compid} on link", timeout)
        self.results.check(f"{link}/detect", bool(found),
                           f"MAVProxy printed 'Detected vehicle {sysid}:{compid}'" if found else
                           f"no 'Detected vehicle {sysid}:{compid}' from MAVProxy in {timeout} s")
        if not found:
            return None
        detected = time.monotonic()
        self.check_target(link, mavproxy, traffic)
        return detected

    def check_target(self, link, mavproxy, traffic):
        """MAVProxy must have Plumb for its target vehicle, or its ftp module never sees Plumb's
        answers and `param show/set` look at system 0 (see the README). As component 1 Plumb says
        MAV_AUTOPILOT_GENERIC and MAVProxy adopts it ("online system N"); as any other it says
        MAV_AUTOPILOT_INVALID and MAVProxy is given the target (mavproxy_target_args)."""
        sysid, compid = self.source
        heartbeat = traffic.wait_for(lambda m: m.get_type() == "HEARTBEAT" and
                                     (m.get_srcSystem(), m.get_srcComponent()) == self.source, 3)
        fields = ("no HEARTBEAT seen here" if heartbeat is None else
                  f"HEARTBEAT type {heartbeat.type}, autopilot {heartbeat.autopilot}")
        given = [a for a in mavproxy.argv if a.startswith("--target-")]
        if given:
            self.results.check(f"{link}/target", True,
                               f"given on MAVProxy's command line ({' '.join(given)}; {fields})")
            return
        online = mavproxy.wait_for(rf"online system {sysid}\b", 5)
        self.results.check(
            f"{link}/target", bool(online),
            f"MAVProxy adopted {sysid}:{compid} by itself: 'online system {sysid}' ({fields})"
            if online else
            f"MAVProxy did not take {sysid}:{compid} for its target vehicle (no 'online system "
            f"{sysid}'; {fields}): MAVProxy 1.8.75 only adopts a HEARTBEAT whose autopilot is not "
            f"MAV_AUTOPILOT_INVALID (8) or RESERVED; without a target its ftp module ignores "
            f"Plumb's NAKs, `param show/set` look at system 0 and PARAM_REQUEST_LIST repeats every "
            f"second (workaround: MAVProxy --target-system {sysid} --target-component {compid})")

    def check_params(self, link, mavproxy, since=0, timeout=30, label="params"):
        want = len(self.expected) if self.expected else None
        found = mavproxy.wait_for(r"Received (\d+) parameters", timeout, since)
        if not found:
            how = mavproxy.find_all(r"(ftp|FTP).*", since)
            self.results.check(f"{link}/{label}", False,
                               f"no 'Received N parameters' from MAVProxy in {timeout} s "
                               f"(expected N = {want}); MAVProxy's FTP lines: "
                               f"{[m.group(0) for m in how][-3:]}")
            return False
        got = int(found.group(1))
        via = "FTP" if "(ftp)" in found.string else "PARAM_REQUEST_LIST"
        return self.results.check(f"{link}/{label}", want is not None and got == want,
                                  f"MAVProxy: 'Received {got} parameters' (via {via}), "
                                  f"`plumb params --json` lists {want}")

    def show_params(self, mavproxy, pattern, names, timeout=5):
        """`param show pattern`; returns {name: value} for names found in MAVProxy's output."""
        since = mavproxy.mark()
        mavproxy.send(f"param show {pattern}")
        values = {}

        def collect():
            for name in names:
                match = mavproxy.find(rf"(?:^|\s){re.escape(name)}\s+(-?[0-9.eE+-]+|nan|inf)",
                                      since)
                if match:
                    values[name] = float(match.group(1))
            return len(values) == len(names)

        wait_until(collect, timeout)
        return values

    def check_param_values(self, link, mavproxy):
        if not self.expected:
            self.results.check(f"{link}/param-values", False, "no expected parameter list")
            return
        names = sorted(n for n in self.expected if n.startswith("SR_") or n == "OUT_RATE_HZ")
        values = self.show_params(mavproxy, "SR_*", [n for n in names if n.startswith("SR_")])
        values.update(self.show_params(mavproxy, "OUT_RATE_HZ",
                                       [n for n in names if n == "OUT_RATE_HZ"]))
        wrong = {n: (values.get(n), self.expected[n]["value"]) for n in names
                 if values.get(n) is None or
                 abs(values[n] - float(self.expected[n]["value"])) > 1e-4}
        self.results.check(f"{link}/param-values", not wrong and bool(names),
                           f"`param show` gives {values}" if not wrong else
                           f"`param show` differs from `plumb params --json` (got, expected): "
                           f"{wrong}")

    def param_set(self, mavproxy, traffic, name, value, timeout=10):
        """`param set`; returns the PARAM_VALUE Plumb echoed (from traffic), or the text MAVProxy
        printed instead ("Unable to find parameter", "Failed to set"), or None."""
        since, since_line = time.monotonic(), mavproxy.mark()
        mavproxy.send(f"param set {name} {value:g}")

        def outcome():
            echoed = traffic.first(lambda m: m.get_type() == "PARAM_VALUE" and
                                   m.param_id == name and abs(m.param_value - value) < 1e-4, since)
            if echoed:
                return echoed
            refused = mavproxy.find(r"Unable to find parameter.*|Failed to set.*", since_line)
            return refused.group(0) if refused else None

        return wait_until(outcome, timeout)

    def check_set_rate(self, link, mavproxy, traffic):
        before_want = self.expected_value(SET_RATE_PARAM)
        before, _ = measure_rate(traffic, SET_RATE_MESSAGE, RATE_WINDOW_S, self.source)
        echoed = self.param_set(mavproxy, traffic, SET_RATE_PARAM, SET_RATE_VALUE)
        if echoed is None or isinstance(echoed, str):
            self.results.check(f"{link}/set-rate", False,
                               f"`param set {SET_RATE_PARAM} {SET_RATE_VALUE:g}`: no PARAM_VALUE "
                               f"{SET_RATE_PARAM} = {SET_RATE_VALUE:g} from Plumb"
                               + (f"; MAVProxy: {echoed!r}" if echoed else " in 10 s") +
                               f" ({SET_RATE_MESSAGE} at {before:.1f} Hz before)")
            return False
        time.sleep(1.0)  # the new rate takes effect from the next frame; let it settle
        after, count = measure_rate(traffic, SET_RATE_MESSAGE, RATE_WINDOW_S, self.source)
        ok_after = abs(after - SET_RATE_VALUE) <= RATE_TOLERANCE * SET_RATE_VALUE
        ok_before = (before_want is None or before_want == 0 or
                     abs(before - before_want) <= RATE_TOLERANCE * before_want)
        return self.results.check(
            f"{link}/set-rate", ok_after and ok_before,
            f"{SET_RATE_MESSAGE} at {before:.1f} Hz before (parameter list: {before_want}), "
            f"PARAM_VALUE {SET_RATE_PARAM} = {echoed.param_value:g} echoed, then "
            f"{after:.1f} Hz ({count} in {RATE_WINDOW_S:g} s; wanted {SET_RATE_VALUE:g} "
            f"+-{RATE_TOLERANCE:.0%})")

    def check_commands(self, link, mavproxy, traffic):
        since_t, since_line = time.monotonic(), mavproxy.mark()
        mavproxy.send("long GET_MESSAGE_INTERVAL 105")
        ack = traffic.wait_for(lambda m: m.get_type() == "COMMAND_ACK" and m.command == 510,
                               5, since_t)
        shown = mavproxy.wait_for(r"Got COMMAND_ACK: GET_MESSAGE_INTERVAL: (\w+)",
                                  5 if ack else 0.5, since_line)
        interval = traffic.first(lambda m: m.get_type() == "MESSAGE_INTERVAL" and
                                 m.message_id == 105, since_t)
        ok = (ack is not None and ack.result == 0 and
              (ack.target_system, ack.target_component) == (SOURCE_SYSTEM, SOURCE_COMPONENT) and
              shown is not None and shown.group(1) == "ACCEPTED")
        acked = ("none" if ack is None else
                 f"result {ack.result} to {ack.target_system}/{ack.target_component}")
        printed = (f"MAVProxy printed {shown.group(0)!r}" if shown else
                   "MAVProxy printed no 'Got COMMAND_ACK: GET_MESSAGE_INTERVAL'")
        interval = f"; MESSAGE_INTERVAL {interval.interval_us} us" if interval else ""
        self.results.check(
            f"{link}/command", ok,
            f"GET_MESSAGE_INTERVAL(105): COMMAND_ACK {acked} (wanted 0 to {SOURCE_SYSTEM}/"
            f"{SOURCE_COMPONENT}); {printed}{interval}")

        since_t = time.monotonic()
        mavproxy.send("long REQUEST_MESSAGE 148")
        ack = traffic.wait_for(lambda m: m.get_type() == "COMMAND_ACK" and m.command == 512,
                               5, since_t)
        version = traffic.wait_for(lambda m: m.get_type() == "AUTOPILOT_VERSION",
                                   3 if ack else 0.5, since_t)
        self.results.check(
            f"{link}/request-message", ack is not None and ack.result == 0 and version is not None,
            f"REQUEST_MESSAGE(148): COMMAND_ACK "
            f"{'none' if ack is None else f'result {ack.result}'}, AUTOPILOT_VERSION "
            f"{'received' if version else 'not received'}")

    def check_mavproxy_clean(self, link, mavproxy):
        """MAVProxy loaded every default module and raised nothing: its venv is installed with
        --no-deps and a module missing an import would quietly change what it sends."""
        bad = mavproxy.find_all(r"Failed to load module.*|No module named.*|Traceback.*")
        self.results.check(f"{link}/mavproxy-modules", not bad,
                           "MAVProxy loaded its default modules and printed no error" if not bad
                           else f"MAVProxy printed {[m.group(0) for m in bad][:3]}")

    def check_link_counters(self, link, mavproxy, sent_by_plumb=None):
        since = mavproxy.mark()
        mavproxy.send("link")
        found = mavproxy.wait_for(
            r"link (\S+) (OK|DOWN) \((\d+) packets, (\d+) bytes, ([-0-9.]+)s delay, (\d+) lost, "
            r"([0-9.]+)% loss", 10, since)
        if not found:
            self.results.check(f"{link}/link", False, "MAVProxy's `link` printed no link line")
            return
        status, packets, lost, loss = (found.group(2), int(found.group(3)), int(found.group(6)),
                                       float(found.group(7)))
        ok = status == "OK" and lost == 0 and loss == 0.0 and packets > 0
        within = ""
        if sent_by_plumb is not None:
            sent = sent_by_plumb()  # counted after MAVProxy's line: MAVProxy cannot be ahead
            ok = ok and packets <= sent
            within = f"; Plumb sent {sent} packets through the tap by then"
        self.results.check(f"{link}/link", ok,
                           f"MAVProxy `link`: {found.group(0)}){within}")

    def check_fields(self, link, packets):
        problems = collections.Counter()
        examples = {}
        for message in packets:
            if (message.get_srcSystem(), message.get_srcComponent()) != self.source:
                continue
            for problem in check_mavlink.live_problems(message):
                key = f"{message.get_type()}: {problem}"
                problems[message.get_type()] += 1
                examples.setdefault(message.get_type(), key)
        # ATTITUDE against pymavlink's own quaternion -> Euler of the ATTITUDE_QUATERNION with the
        # same time_boot_ms (as check_mavlink.py checks the golden stream's)
        quaternions = {m.time_boot_ms: m for m in packets
                       if m.get_type() == "ATTITUDE_QUATERNION" and
                       (m.get_srcSystem(), m.get_srcComponent()) == self.source}
        compared = 0
        for message in packets:
            q = quaternions.get(getattr(message, "time_boot_ms", None))
            if message.get_type() != "ATTITUDE" or q is None:
                continue
            compared += 1
            euler = [float(a) for a in check_mavlink.Quaternion([q.q1, q.q2, q.q3, q.q4]).euler]
            got = (message.roll, message.pitch, message.yaw)
            if any(abs(a - b) > 2e-6 for a, b in zip(got, euler)):
                problems["ATTITUDE"] += 1
                examples.setdefault("ATTITUDE", f"ATTITUDE {got} at {message.time_boot_ms} ms, "
                                                f"pymavlink's Euler of the quaternion {euler}")
        counted = collections.Counter(m.get_type() for m in packets)
        self.results.check(
            f"{link}/fields", not problems and bool(packets),
            f"{sum(counted.values())} packets from Plumb pass check_mavlink.live_problems "
            f"({dict(sorted(counted.items()))}); {compared} ATTITUDE match pymavlink's Euler "
            f"angles of the ATTITUDE_QUATERNION of their time_boot_ms" if not problems else
            f"{sum(problems.values())} packets fail ({dict(problems)}), e.g. "
            f"{list(examples.values())[:3]}")

    # --- the pty link --------------------------------------------------------------------------

    def run_pty(self):
        self.use_board()
        tap = PtyTap()
        self.cleanups.append(tap.close)
        state_dir = os.path.join(self.temp, "pty-plumb-state")
        os.makedirs(state_dir)
        plumb = self.start_plumb("plumb(pty)", ["--serial", tap.plumb_path], state_dir)
        mavproxy = self.start_mavproxy("mavproxy(pty)", tap.client_path,
                                       ["--baudrate", "115200"])
        involved = [plumb, mavproxy]
        failed_before = len(self.results.failed)
        try:
            self._run_pty(tap, plumb, mavproxy, state_dir)
        finally:
            if len(self.results.failed) > failed_before:
                self.failure_context(involved + [p for p in self.processes
                                                 if p.name.startswith("plumb(pty") and
                                                 p not in involved])
            print(f"check_mavproxy: pty traffic: Plumb -> MAVProxy "
                  f"{dict(sorted(tap.from_plumb.counts().items()))}; MAVProxy -> Plumb "
                  f"{dict(sorted(tap.from_client.counts().items()))}")

    def _run_pty(self, tap, plumb, mavproxy, state_dir):
        detected = self.check_detect("pty", mavproxy, tap.from_plumb)
        if detected is None:
            return
        self.check_params("pty", mavproxy)
        # the steady window: MAVProxy's own connect-time requests, nothing sent by us
        wait_until(lambda: time.monotonic() >= detected + STEADY_WINDOW_S, STEADY_WINDOW_S + 1)
        self.check_storm("pty", tap.from_client.between(detected, detected + STEADY_WINDOW_S),
                         "the tap")
        self.check_param_values("pty", mavproxy)
        self.check_set_rate("pty", mavproxy, tap.from_plumb)
        self.check_commands("pty", mavproxy, tap.from_plumb)
        self.check_link_counters("pty", mavproxy, sent_by_plumb=lambda: len(
            [m for m in tap.from_plumb.between() if
             (m.get_srcSystem(), m.get_srcComponent()) == self.source]))
        self.check_crc("pty", tap)
        self.check_fields("pty", tap.from_plumb.between())
        self.check_mavproxy_clean("pty", mavproxy)
        self.check_persist(tap, plumb, mavproxy, state_dir)

    def check_storm(self, link, window, source):
        """window: MAVProxy's packets in the steady window; source: where they were counted."""
        counts = collections.Counter(m.get_type() for m in window)
        commands = collections.Counter(
            mavlink_all.enums["MAV_CMD"][m.command].name
            if m.command in mavlink_all.enums["MAV_CMD"] else str(m.command)
            for m in window if m.get_type() == "COMMAND_LONG")
        ftp_ops = collections.Counter(FTP_OPCODES.get(m.payload[3], m.payload[3]) for m in window
                                      if m.get_type() == "FILE_TRANSFER_PROTOCOL")
        over = {k: (counts.get(k, 0), bound) for k, bound in STORM_BOUNDS.items()
                if counts.get(k, 0) > bound}
        over.update({k: (n, COMMAND_BOUNDS.get(k, OTHER_COMMAND_BOUND))
                     for k, n in commands.items()
                     if n > COMMAND_BOUNDS.get(k, OTHER_COMMAND_BOUND)})
        shown = {k: counts.get(k, 0) for k in STORM_BOUNDS}
        self.results.check(
            f"{link}/no-storm", not over and bool(window),
            f"MAVProxy's requests in the {STEADY_WINDOW_S:g} s after detection ({source}): "
            f"{shown} (bounds {STORM_BOUNDS}); COMMAND_LONG {dict(commands)}; FTP "
            f"{dict(ftp_ops)}" + (f"; over the bound (count, bound): {over}" if over else "") +
            ("" if window else "; no packet from MAVProxy at all"))

    def tlog_window(self, mavproxy_label, start_wall, end_wall, timeout=15):
        """MAVProxy's own sent packets (source 255/230) between two wall-clock times, read from its
        telemetry log (it logs what it sends as well as what it receives), once the log has been
        flushed past end_wall (MAVProxy flushes it every few seconds)."""
        path = os.path.join(self.temp, mavproxy_label + "-state", "mav.tlog")
        found = []

        def read():
            found.clear()
            try:
                log = mavutil.mavlink_connection(path, dialect="all", robust_parsing=True)
            except OSError:
                return False
            latest = 0.0
            try:
                while True:
                    message = log.recv_msg()
                    if message is None:
                        break
                    stamp = getattr(message, "_timestamp", 0.0)
                    latest = max(latest, stamp)
                    if message.get_type() == "BAD_DATA":
                        continue
                    if (message.get_srcSystem(), message.get_srcComponent()) == \
                            (SOURCE_SYSTEM, SOURCE_COMPONENT) and start_wall <= stamp < end_wall:
                        found.append(message)
            finally:
                log.close()
            return latest >= end_wall

        complete = wait_until(read, timeout, step=0.5)
        return list(found), bool(complete)

    def check_crc(self, link, tap):
        bad = [(d.name, reason) for d in (tap.from_plumb, tap.from_client)
               for _, reason in d.bad]
        errors = tap.from_plumb.parser.total_receive_errors + \
            tap.from_client.parser.total_receive_errors
        self.results.check(
            f"{link}/crc", not bad and errors == 0 and tap.dropped == 0,
            f"pymavlink accepted every packet both ways ({len(tap.from_plumb.packets)} "
            f"from Plumb in {tap.from_plumb.bytes} bytes, {len(tap.from_client.packets)} from "
            f"MAVProxy in {tap.from_client.bytes} bytes)" if not bad and errors == 0 and
            tap.dropped == 0 else
            f"{len(bad)} bad packets, {errors} receive errors, {tap.dropped} bytes dropped by the "
            f"bridge; first: {bad[:3]}")

    def check_persist(self, tap, plumb, mavproxy, state_dir):
        if "--state-dir" not in self.plumb_run_help:
            self.results.check("pty/persist", False, "`plumb run --help` has no --state-dir")
            return
        status = plumb.interrupt(timeout=15)
        if status != 0:
            self.results.check("pty/persist", False,
                               f"Plumb exited {status} on SIGINT (wanted 0 within 15 s)")
            return
        restarted_at = time.monotonic()
        again = self.start_plumb("plumb(pty, restarted)", ["--serial", tap.plumb_path], state_dir)
        came_back = tap.from_plumb.wait_for(lambda m: m.get_type() == "HEARTBEAT", 15,
                                            restarted_at)
        if not came_back:
            self.results.check("pty/persist", False,
                               "no HEARTBEAT from the restarted Plumb in 15 s")
            self.failure_context([again])
            return
        since = mavproxy.mark()
        mavproxy.send("param fetch")
        if not self.check_params("pty", mavproxy, since=since, label="params-after-restart"):
            return
        values = self.show_params(mavproxy, PERSIST_PARAM, [PERSIST_PARAM])
        value = values.get(PERSIST_PARAM)
        rate, count = measure_rate(tap.from_plumb, SET_RATE_MESSAGE, RATE_WINDOW_S, self.source)
        ok = value is not None and abs(value - SET_RATE_VALUE) < 1e-4 and \
            abs(rate - SET_RATE_VALUE) <= RATE_TOLERANCE * SET_RATE_VALUE
        self.results.check(
            "pty/persist", ok,
            f"after SIGINT (exit 0) and a restart with the same --state-dir: {PERSIST_PARAM} = "
            f"{value} in MAVProxy's fetch, {SET_RATE_MESSAGE} at {rate:.1f} Hz ({count} in "
            f"{RATE_WINDOW_S:g} s; wanted {SET_RATE_VALUE:g})")

    # --- the UDP link ----------------------------------------------------------------------------

    def run_udp(self):
        if "--mavlink-udp" not in self.plumb_run_help:
            self.results.check("udp/plumb-option", False, "`plumb run --help` has no --mavlink-udp")
            return
        self.use_board()
        listener = UdpListener()
        self.cleanups.append(listener.close)
        state_dir = os.path.join(self.temp, "udp-plumb-state")
        os.makedirs(state_dir)
        for attempt in range(3):
            # MAVProxy binds the port itself: between our probe and its bind another program
            # could take it; then MAVProxy exits and we try another port
            port = free_udp_port()
            mavproxy = self.start_mavproxy("mavproxy(udp)", f"udpin:127.0.0.1:{port}",
                                           [f"--out=udp:127.0.0.1:{listener.port}"])
            # listening once it says "Waiting for heartbeat" (printed after the bind)
            if wait_until(lambda: mavproxy.find(r"Waiting for heartbeat") or not mavproxy.alive(),
                          30) and mavproxy.alive():
                break
            mavproxy.stop()
        else:
            self.results.check("udp/mavproxy", False, "MAVProxy did not start listening on UDP")
            self.failure_context([mavproxy])
            return
        plumb = self.start_plumb("plumb(udp)", ["--serial", "none", "--mavlink-udp",
                                                f"127.0.0.1:{port}"], state_dir)
        failed_before = len(self.results.failed)
        try:
            detected = self.check_detect("udp", mavproxy, listener.traffic)
            if detected is None:
                return
            detected_wall = time.time() - (time.monotonic() - detected)
            self.check_params("udp", mavproxy)
            wait_until(lambda: time.monotonic() >= detected + STEADY_WINDOW_S,
                       STEADY_WINDOW_S + 1)
            window, complete = self.tlog_window("mavproxy(udp)", detected_wall,
                                                detected_wall + STEADY_WINDOW_S)
            if complete:
                self.check_storm("udp", window, "MAVProxy's own telemetry log")
            else:
                self.results.check("udp/no-storm", False, "MAVProxy's telemetry log did not "
                                   "reach the end of the steady window within 15 s")
            self.check_set_rate("udp", mavproxy, listener.traffic)
            self.check_commands("udp", mavproxy, listener.traffic)
            self.check_link_counters("udp", mavproxy)
            errors = listener.errors() + len(listener.traffic.bad)
            self.results.check("udp/crc", errors == 0,
                               f"the listener's pymavlink counted {errors} receive errors in "
                               f"{len(listener.traffic.packets)} forwarded packets")
            self.check_fields("udp", listener.traffic.between())
            self.check_mavproxy_clean("udp", mavproxy)
        finally:
            if len(self.results.failed) > failed_before:
                self.failure_context([plumb, mavproxy])
            print(f"check_mavproxy: udp traffic forwarded by MAVProxy: "
                  f"{dict(sorted(listener.traffic.counts().items()))}")

    def run_udp_listen(self):
        """The other way round: Plumb `--mavlink-udp listen:127.0.0.1:PORT` learns its peer from
        MAVProxy `--master=udpout:127.0.0.1:PORT`, whose heartbeats come first. Shorter: detect,
        the parameter count, the commands, the link counters, CRC and fields."""
        link = "udp-listen"
        if "--mavlink-udp" not in self.plumb_run_help:
            self.results.check(f"{link}/plumb-option", False,
                               "`plumb run --help` has no --mavlink-udp")
            return
        self.use_board(component=1)
        listener = UdpListener()
        self.cleanups.append(listener.close)
        state_dir = os.path.join(self.temp, "udp-listen-plumb-state")
        os.makedirs(state_dir)
        for attempt in range(3):
            port = free_udp_port()
            plumb = self.start_plumb(f"plumb({link})", ["--serial", "none", "--mavlink-udp",
                                                         f"listen:127.0.0.1:{port}"], state_dir)
            # Plumb binds the port itself; if another program took it first, Plumb exits
            if not wait_until(lambda: not plumb.alive(), 2):
                break
            plumb.stop()
        else:
            self.results.check(f"{link}/plumb", False, "Plumb did not stay up listening on UDP")
            self.failure_context([plumb])
            return
        mavproxy = self.start_mavproxy(f"mavproxy({link})", f"udpout:127.0.0.1:{port}",
                                       [f"--out=udp:127.0.0.1:{listener.port}"])
        failed_before = len(self.results.failed)
        try:
            if self.check_detect(link, mavproxy, listener.traffic) is None:
                return
            self.check_params(link, mavproxy)
            self.check_commands(link, mavproxy, listener.traffic)
            self.check_link_counters(link, mavproxy)
            errors = listener.errors() + len(listener.traffic.bad)
            self.results.check(f"{link}/crc", errors == 0,
                               f"the listener's pymavlink counted {errors} receive errors in "
                               f"{len(listener.traffic.packets)} forwarded packets")
            self.check_fields(link, listener.traffic.between())
            self.check_mavproxy_clean(link, mavproxy)
        finally:
            if len(self.results.failed) > failed_before:
                self.failure_context([plumb, mavproxy])

    # --- all -------------------------------------------------------------------------------------

    def run(self):
        started = time.monotonic()
        try:
            self.prepare_and_run()
        finally:
            self.stop_all()
            for cleanup in reversed(self.cleanups):
                cleanup()
        elapsed = time.monotonic() - started
        print(f"check_mavproxy: {len(self.results.passed)} passed, {len(self.results.failed)} "
              f"failed in {elapsed:.0f} s" + (f": {', '.join(self.results.failed)}"
                                               if self.results.failed else ""))
        print(f"{len(self.results.passed)} passed, {len(self.results.failed)} failed")
        return 1 if self.results.failed else 0

    def prepare_and_run(self):
        if not os.access(self.args.plumb, os.X_OK):
            self.results.check("plumb", False, f"{self.args.plumb} is not an executable "
                               "(swift build --product plumb)")
            return
        if not os.path.exists(self.args.mavproxy):
            self.results.check("mavproxy", False, f"{self.args.mavproxy} is missing "
                               "(make venv-mavproxy)")
            return
        self.plumb_run_help = subprocess.run(
            [self.args.plumb, "run", "--help"], cwd=ROOT, capture_output=True, text=True,
            timeout=30).stdout
        self.load_expected()
        for link, phase in (("pty", self.run_pty), ("udp", self.run_udp),
                            ("udp-listen", self.run_udp_listen)):
            if self.args.only not in (None, link):
                continue
            try:
                phase()
            except Exception as error:  # a harness error is a failure, not a traceback
                self.results.check(f"{link}/harness", False,
                                   f"{type(error).__name__}: {error}\n"
                                   + traceback.format_exc())
            self.stop_all()

    def stop_all(self):
        for process in self.processes:
            process.stop()


def main(argv):
    global VERBOSE
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plumb", default=os.path.join(ROOT, ".build", "debug", "plumb"))
    parser.add_argument("--board", default="Boards/simulated.json")
    parser.add_argument("--mavproxy", default=os.path.join(os.path.dirname(sys.executable),
                                                           "mavproxy.py"))
    parser.add_argument("--only", choices=("pty", "udp", "udp-listen"))
    parser.add_argument("--mavproxy-arg", action="append", metavar="ARG",
                        help="one more argument for MAVProxy (repeatable; e.g. "
                        "--mavproxy-arg=--target-system=1), to try its options by hand")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="echo every process's output and each step")
    args = parser.parse_args(argv[1:])
    args.plumb = os.path.abspath(args.plumb)
    if not os.path.isabs(args.board) and os.path.exists(args.board):
        args.board = os.path.abspath(args.board)  # else: relative to the repository
    VERBOSE = args.verbose
    harness = Harness(args)

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return harness.run()
    except KeyboardInterrupt:
        print("check_mavproxy: interrupted", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
