#!/usr/bin/env python3
"""The live page of `plumb-monitor --web` in a real browser: headless Chromium, driven through
the DevTools protocol, against the real monitor fed by a simulated board over pseudo-terminals.

    check_web.py [--plumb PATH] [--monitor PATH] [--chromium PATH] [--board FILE]
                 [--screenshot PATH] [--soak SECONDS] [--fake] [-v]

Standard library only; needs Debian's `chromium` (`make test` installs it). The setup:

    plumb run --board Boards/simulated.json --format binary --serial <pty A>   (real time,
        the board's scripted handheld motion: a 3 s rest, then turns of up to 150°)
    this script: copies pty A <-> pty B (and can hold the line while the monitor is away)
    plumb-monitor <pty B> --json --web 127.0.0.1:PORT --web-commands   (PORT: a free one)
    chromium --headless=new --remote-debugging-pipe   (the DevTools protocol on fds 3 and 4)

The monitor's --json output gives every frame it decoded (sequence, angles, quaternion) to hold
the page against. Checked, one line each, PASS or FAIL with the numbers:
  load        the page loads and goes live with no console error, no uncaught exception, and no
              request to anything but the monitor (every URL is http://127.0.0.1:PORT/...)
  numbers     sampled every 0.5 s, 10 times or more: #seq/#roll/#pitch/#yaw equal, to the
              page's rounding, the frame the monitor printed with that sequence, and that frame
              is at most 0.2 s (board clock) older than the newest the monitor had printed when
              the sample was taken
  box         the box's quaternion (window.plumbPage.boxQuaternion) equals the frame's of #seq,
              and over the samples it turns by more than 10° (as those frames' quaternions do;
              sampling goes on, 20 s at most, until it has)
  flags       the flag lights are the flags of the frame shown
  pages       a second page (its own window) goes live too; the server's client count, shown
              on the first page, is 2, then 1 once the second is closed
  commands    #cmd-status (the monitor runs with --web-commands) brings a reply into #replies
  stale       SIGSTOP to `plumb run` for 3 s: #state becomes stale ("no frames for N s");
              SIGCONT: live again and #seq advances
  reconnect   plumb-monitor killed: #state disconnected; started again on the same port: live
              again, without a reload (a marker set in the page survives)
  memory      the plots' ring fills (historyLength = historyCapacity, 1024: 30 s of frames at up
              to 34 a second) and stays full; the page's element count and its JavaScript heap
              after a garbage collection do not grow (by 2 logs of 20 lines, by 2 MB at most)
  screenshot  a PNG of the page, live, with 30 s in its plots, saved to --screenshot, at a
              known instant: `plumb run` stopped once the board's clock passes 45 s and the page
              showing its last frame (seeded scenario: nearly the same picture every run; the frame,
              its time and angles printed)
  soak        (--soak SECONDS) the page left open that long: its heap sampled every 10 s stays
              within 2 MB of the first samples'
Exit 0 when every check passes, 1 otherwise, 2 on usage errors (or no Chromium). Every process
it starts is ended and its temporary folders removed; the port is a free one picked by the
kernel. --fake runs tools/scripts/fake_web_monitor.py in place of plumb-monitor's server (the
page taken straight from MonitorPage.swift), for developing the page without a build.
"""

import argparse
import base64
import fcntl
import json
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
import tty
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERBOSE = False
# The page keeps fixed-size arrays and lists; its heap may move with the engine's own caches, not
# with time. 2 MB is far above that noise and far below what a growing history would add in an
# hour (30 frames a second of ~1 kB objects).
HEAP_GROWTH_BOUND = 2_000_000
SCREENSHOT_AT_SECONDS = 45.0  # board clock
CHROMIUM_FIX = ("check_web: Chromium is missing: install Debian's chromium "
                "(apt-get install --no-install-recommends chromium), or give --chromium PATH")


def log(text):
    if VERBOSE:
        print("check_web: [%s] %s" % (time.strftime("%H:%M:%S"), text), flush=True)


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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Results:
    def __init__(self):
        self.failed = []
        self.passed = 0

    def check(self, name, ok, detail):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        return ok


class Process:
    """A child in its own process group, its output in a file (or, for the monitor, read here)."""

    def __init__(self, name, argv, folder, read_lines=None):
        self.name = name
        self.argv = argv
        self.log_path = os.path.join(folder, name + ".log")
        self.log = open(self.log_path, "wb")
        log("start %s: %s" % (name, " ".join(argv)))
        self.popen = subprocess.Popen(
            argv, cwd=ROOT, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if read_lines else self.log, stderr=self.log,
            start_new_session=True)
        self.reader = None
        if read_lines:
            self.reader = threading.Thread(target=self._read, args=(read_lines,), daemon=True)
            self.reader.start()

    def _read(self, handle):
        for line in self.popen.stdout:
            handle(line)

    def alive(self):
        return self.popen.poll() is None

    def signal(self, sig):
        if self.alive():
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout=5):
        if self.alive():
            for sig in (signal.SIGCONT, signal.SIGTERM):
                try:
                    os.killpg(self.popen.pid, sig)
                except ProcessLookupError:
                    pass
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait(timeout)
        if self.reader:
            self.reader.join(2)
        self.log.close()

    def tail(self, lines=20):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""


class PtyBridge:
    """Two pseudo-terminal pairs and a thread copying between their masters. `plumb run` opens
    slave A, the monitor slave B. The slaves stay open here too (raw), so the monitor going away
    never hangs the line up for the board; while `holding`, what the board sends is dropped (a
    monitor started again reads from now on, not a backlog)."""

    def __init__(self):
        self.a_master, self.a_slave = os.openpty()
        self.b_master, self.b_slave = os.openpty()
        for fd in (self.a_slave, self.b_slave):
            tty.setraw(fd)
        for fd in (self.a_master, self.b_master):
            os.set_blocking(fd, False)
        self.board_path = os.ttyname(self.a_slave)
        self.monitor_path = os.ttyname(self.b_slave)
        self.holding = False
        self.pending = {self.a_master: bytearray(), self.b_master: bytearray()}
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def hold(self, holding):
        self.holding = holding
        if not holding:
            termios.tcflush(self.b_slave, termios.TCIFLUSH)

    def _run(self):
        route = {self.a_master: self.b_master, self.b_master: self.a_master}
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
                target = route[fd]
                if self.holding and target == self.b_master:
                    continue
                pending = self.pending[target]
                pending.extend(data)
                del pending[:max(0, len(pending) - (1 << 20))]
            for fd in writable:
                try:
                    del self.pending[fd][:os.write(fd, self.pending[fd])]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self.pending[fd].clear()

    def close(self):
        self.running = False
        self.thread.join(2)
        for fd in (self.a_master, self.a_slave, self.b_master, self.b_slave):
            try:
                os.close(fd)
            except OSError:
                pass


class Monitor:
    """plumb-monitor (or the fake) on slave B, its --json frames kept by sequence number."""

    def __init__(self, args, bridge, folder):
        self.args = args
        self.bridge = bridge
        self.folder = folder
        self.lock = threading.Lock()
        self.frames = {}  # sequence -> (arrival, frame)
        self.latest = None  # (arrival, frame)
        self.process = None
        self.port = None
        self.runs = 0

    def _line(self, raw):
        try:
            item = json.loads(raw)
        except ValueError:
            return
        if item.get("type") != "frame":
            return
        sequence = item.get("sequence", item.get("packetSequence"))
        with self.lock:
            self.frames[sequence] = (time.monotonic(), item)
            self.latest = (time.monotonic(), item)

    def argv(self, port):
        web = ["--json", "--web", "127.0.0.1:%d" % port, "--web-commands"]
        if self.args.fake:
            return [sys.executable, os.path.join(HERE, "fake_web_monitor.py"),
                    self.bridge.monitor_path, "--monitor", self.args.monitor] + web
        return [self.args.monitor, self.bridge.monitor_path] + web

    def start(self, port=None, timeout=15):
        """Starts it and waits until GET / answers; a fresh port is tried when the one picked
        was taken meanwhile (not when restarting on a given one: that is retried)."""
        fixed = port is not None
        deadline = time.monotonic() + timeout
        while True:
            self.port = port if fixed else free_port()
            self.runs += 1
            self.process = Process("monitor-%d" % self.runs, self.argv(self.port), self.folder,
                                   read_lines=self._line)
            url = "http://127.0.0.1:%d/" % self.port
            if wait_until(lambda: not self.process.alive() or http_ok(url), 10, 0.1) \
                    and self.process.alive():
                return url
            self.process.stop()
            if time.monotonic() > deadline:
                raise RuntimeError("plumb-monitor did not serve %s:\n%s"
                                   % (url, self.process.tail()))
            time.sleep(0.5)

    def frame(self, sequence):
        with self.lock:
            entry = self.frames.get(sequence)
        return entry[1] if entry else None

    def newest(self):
        with self.lock:
            return self.latest


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


class Chromium:
    """Headless Chromium with the DevTools protocol on a pipe (--remote-debugging-pipe: JSON
    messages ended by a NUL byte, commands on its fd 3, answers and events on its fd 4)."""

    def __init__(self, path, folder, width, height):
        self.profile = os.path.join(folder, "chromium-profile")
        os.mkdir(self.profile)
        commands_read, self.commands = os.pipe()
        self.answers, answers_write = os.pipe()
        # the child's ends above fd 9, so the shell below never moves one onto another
        for name in ("commands_read", "answers_write"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "commands_read":
                commands_read = high
            else:
                answers_write = high
        flags = [
            "--headless=new", "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--disable-component-update", "--disable-default-apps", "--mute-audio",
            "--hide-scrollbars", "--disable-dev-shm-usage", "--password-store=basic",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows", "--window-size=%d,%d" % (width, height),
            "about:blank",
        ]
        # fds 3 and 4 in the child: set up by a small Python launcher that execs Chromium (no
        # Python code of this threaded process runs after fork; the ends are above fd 9, so
        # neither dup2 overwrites the other)
        launcher = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                    "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); "
                    "os.execvp(sys.argv[3], sys.argv[3:])")
        self.log = open(os.path.join(folder, "chromium.log"), "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-c", launcher, str(commands_read), str(answers_write), path] + flags,
            pass_fds=(commands_read, answers_write), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=self.log, start_new_session=True)
        os.close(commands_read)
        os.close(answers_write)
        self.lock = threading.Condition()
        self.next_id = 0
        self.results = {}
        self.events = []
        self.session = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        buffer = b""
        while True:
            try:
                chunk = os.read(self.answers, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self.lock:
                    self.results[None] = "closed"
                    self.lock.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                with self.lock:
                    if "id" in message:
                        self.results[message["id"]] = message
                    else:
                        self.events.append(message)
                    self.lock.notify_all()

    def call(self, method, params=None, timeout=15, session=True):
        with self.lock:
            self.next_id += 1
            number = self.next_id
        message = {"id": number, "method": method, "params": params or {}}
        session = self.session if session is True else session
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self.lock:
            while number not in self.results:
                if None in self.results:
                    raise RuntimeError("Chromium closed the DevTools pipe (%s)" % method)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError("Chromium did not answer %s in %g s" % (method, timeout))
                self.lock.wait(left)
            answer = self.results.pop(number)
        if "error" in answer:
            raise RuntimeError("%s: %s" % (method, answer["error"]))
        return answer.get("result", {})

    def open_page(self, another=False):
        """Attaches to the first tab (the default session), or to a new one: its session id."""
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = None if another else next((t for t in targets if t["type"] == "page"), None)
        if page is None:
            # a window of its own: a background tab would get no animation frames
            page = {"targetId": self.call("Target.createTarget",
                                          {"url": "about:blank", "newWindow": another},
                                          session=False)["targetId"]}
        session = self.call("Target.attachToTarget",
                            {"targetId": page["targetId"], "flatten": True},
                            session=False)["sessionId"]
        if not another:
            self.session = session
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(domain + ".enable", session=session)
        return session, page["targetId"]

    def evaluate(self, expression, timeout=15, session=True):
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout, session)
        if "exceptionDetails" in answer:
            raise RuntimeError("page script failed: %s" % answer["exceptionDetails"])
        return answer["result"].get("value")

    def heap_bytes(self):
        """The page's JavaScript heap in use after a garbage collection."""
        self.call("HeapProfiler.collectGarbage")
        return self.call("Runtime.getHeapUsage")["usedSize"]

    def events_named(self, *names):
        """The events of the first tab with these names."""
        with self.lock:
            return [e for e in self.events
                    if e.get("method") in names and e.get("sessionId") == self.session]

    def close(self):
        try:
            os.close(self.commands)
        except OSError:
            pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)
        self.reader.join(2)
        try:
            os.close(self.answers)
        except OSError:
            pass
        self.log.close()


SNAPSHOT = """(() => {
  const p = window.plumbPage || {};
  const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
  return {
    state: p.state, stateAttribute: (document.getElementById('state') || {}).className,
    stateText: text('state-text'), seq: text('seq'), roll: text('roll'), pitch: text('pitch'),
    yaw: text('yaw'), lastSeq: p.lastFrame ? p.lastFrame.seq : null, box: p.boxQuaternion,
    historyLength: p.historyLength, historyCapacity: p.historyCapacity,
    framesReceived: p.framesReceived, connects: p.connects, marker: window.checkWebMarker || null,
    elements: document.getElementsByTagName('*').length,
    flagsOn: Array.from(document.querySelectorAll('[data-flag].on')).map((e) => e.dataset.flag),
    lights: document.querySelectorAll('[data-flag]').length,
    replies: Array.from(document.querySelectorAll('#replies li'))
      .map((e) => [e.className, e.lastChild ? e.lastChild.textContent : '']),
    commandsShown: !(document.getElementById('commands') || {hidden: true}).hidden,
    clients: text('clients'),
  };
})()"""


def quaternion_angle_degrees(a, b):
    """The rotation between two attitudes, degrees (sign-insensitive)."""
    na = math.sqrt(sum(v * v for v in a))
    nb = math.sqrt(sum(v * v for v in b))
    d = abs(sum(x * y for x, y in zip(a, b))) / (na * nb)
    return math.degrees(2 * math.acos(min(1.0, d)))


def turned_since_first(samples):
    """The largest rotation of the page's box from the first sample's, degrees."""
    boxes = [s["box"] for s, _ in samples if s["box"]]
    return max([quaternion_angle_degrees(boxes[0], b) for b in boxes] or [0.0])


def as_number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def soak(browser, snapshot, seconds, results):
    """--soak: the page left open; its heap, elements and history sampled every 10 s."""
    start = time.monotonic()
    heaps = []
    while True:
        s = snapshot()
        heaps.append(browser.heap_bytes())
        log("soak %4.0f s: state %s, history %d, %d elements, heap %.0f kB"
            % (time.monotonic() - start, s["state"], s["historyLength"], s["elements"],
               heaps[-1] / 1e3))
        if time.monotonic() - start >= seconds:
            break
        time.sleep(10)
    baseline = min(heaps[:3])
    results.check("soak", max(heaps[3:] or [0]) <= baseline + HEAP_GROWTH_BOUND
                  and s["historyLength"] <= s["historyCapacity"],
                  "%.0f s: JS heap after GC %.0f kB at the start, %.0f kB at most later, %.0f kB "
                  "at the end; history %d; %d elements"
                  % (time.monotonic() - start, baseline / 1e3, max(heaps) / 1e3, heaps[-1] / 1e3,
                     s["historyLength"], s["elements"]))


def run(args, folder):
    results = Results()
    bridge = PtyBridge()
    board = monitor = browser = None
    try:
        board = Process("plumb-run", [args.plumb, "run", "--board", args.board, "--format",
                                      "binary", "--serial", bridge.board_path], folder)
        monitor = Monitor(args, bridge, folder)
        url = monitor.start()
        log("monitor serves %s" % url)
        origin = url.rstrip("/")
        browser = Chromium(args.chromium, folder, 1280, 1100)
        browser.open_page()
        started = time.monotonic()
        browser.call("Page.navigate", {"url": url})
        snapshot = lambda: browser.evaluate(SNAPSHOT)  # noqa: E731

        # load: live, nothing but the monitor asked for, nothing complained
        live = wait_until(lambda: (snapshot() or {}).get("state") == "live", 15, 0.2)
        browser.evaluate("window.checkWebMarker = 'no reload'; 1")
        time.sleep(1.0)
        first = snapshot()
        first_heap = browser.heap_bytes()
        errors = []
        for event in browser.events_named("Runtime.exceptionThrown", "Runtime.consoleAPICalled",
                                          "Log.entryAdded"):
            p = event["params"]
            if event["method"] == "Runtime.exceptionThrown":
                errors.append(p["exceptionDetails"].get("text", "exception"))
            elif event["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                errors.append("console.%s" % p["type"])
            elif event["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(p["entry"].get("text", "log error"))
        requests = [e["params"]["request"]["url"]
                    for e in browser.events_named("Network.requestWillBeSent")]
        outside = [u for u in requests if not u.startswith(origin + "/")]
        # from here on, no event per stream message (the list here would grow with the run)
        browser.call("Network.disable")
        results.check(
            "load", live is not None and not errors and not outside and requests,
            "%s in %.1f s; %d requests (%s), outside the monitor: %s; errors: %s"
            % ("live" if live else "NOT live (state %s)" % (first or {}).get("state"),
               time.monotonic() - started, len(requests),
               ", ".join(sorted(set(u[len(origin):] for u in requests if u.startswith(origin)))),
               outside or "none", errors or "none"))

        # numbers, box, flags: samples over a few seconds of the scenario's motion (10, and more,
        # for at most 20 s, until the box has turned: a slow start may begin them in a rest)
        samples = []
        problems = []
        worst_lag = 0.0
        sampling_deadline = time.monotonic() + 25
        while len(samples) < 10 or (time.monotonic() < sampling_deadline
                                    and turned_since_first(samples) <= 10):
            newest = monitor.newest()
            s = snapshot()
            seq = as_number(s["seq"])
            frame = monitor.frame(int(seq)) if seq is not None else None
            if frame is None:
                problems.append("#seq %s is no frame the monitor printed" % s["seq"])
                if len(problems) > 20 or time.monotonic() > sampling_deadline:
                    break
            else:
                for key, name in (("roll", "rollDegrees"), ("pitch", "pitchDegrees"),
                                  ("yaw", "yawDegrees")):
                    shown = as_number(s[key])
                    if shown is None or abs(shown - frame[name]) > 0.05 + 1e-9:
                        problems.append("frame %d: #%s %s, the monitor %.4f"
                                        % (seq, key, s[key], frame[name]))
                lag = (newest[1]["sampleTimeNanoseconds"] - frame["sampleTimeNanoseconds"]) / 1e9
                worst_lag = max(worst_lag, lag)
                if lag > 0.2:
                    problems.append("frame %d shown %.3f s after the newest" % (seq, lag))
                samples.append((s, frame))
            time.sleep(0.5)
        results.check("numbers", not problems and len(samples) >= 10,
                      "%d samples, #seq/#roll/#pitch/#yaw match the monitor's frames, worst lag "
                      "%.3f s of board clock (bound 0.2 s)%s"
                      % (len(samples), worst_lag, "; " + "; ".join(problems[:4]) if problems else ""))

        box_problems = []
        for s, frame in samples:
            box = s["box"]
            if not box or quaternion_angle_degrees(box, frame["attitude"]) > 0.01:
                box_problems.append("frame %s: box %s, frame %s" % (s["seq"], box, frame["attitude"]))
        turned = turned_since_first(samples)
        frames_turned = max([quaternion_angle_degrees(samples[0][1]["attitude"], f["attitude"])
                             for _, f in samples] or [0.0])
        results.check("box", not box_problems and turned > 10 and abs(turned - frames_turned) < 0.1,
                      "boxQuaternion = the shown frame's q in %d/%d samples; turned by up to "
                      "%.1f° over %.1f s (the frames: %.1f°)%s"
                      % (len(samples) - len(box_problems), len(samples), turned, 0.5 * len(samples),
                         frames_turned, "; " + box_problems[0] if box_problems else ""))

        flag_problems = [
            "frame %s: lights %s, flags %s" % (s["seq"], s["flagsOn"], frame.get("flagNames"))
            for s, frame in samples if sorted(s["flagsOn"]) != sorted(frame.get("flagNames") or [])]
        results.check("flags", samples and not flag_problems and samples[0][0]["lights"] == 11,
                      "%d lights; the lit ones are the shown frame's flags in %d/%d samples%s"
                      % (samples[0][0]["lights"] if samples else 0,
                         len(samples) - len(flag_problems), len(samples),
                         "; " + flag_problems[0] if flag_problems else ""))

        # pages: a second tab on the same stream; the server counts both, then one again
        second, second_target = browser.open_page(another=True)
        browser.call("Page.navigate", {"url": url}, session=second)
        second_live = wait_until(lambda: browser.evaluate(
            "window.plumbPage && window.plumbPage.state", session=second) == "live", 15, 0.2)
        clients = lambda: snapshot()["clients"]  # noqa: E731
        two = wait_until(lambda: clients() == "2", 5, 0.1)
        first_live = snapshot()["state"] == "live"
        browser.call("Target.closeTarget", {"targetId": second_target}, session=False)
        one = wait_until(lambda: clients() == "1", 10, 0.1)
        results.check("pages", second_live and first_live and two and one,
                      "a second page: %s, the first %s; #clients 2 while both are open: %s; "
                      "1 after it closed: %s"
                      % ("live" if second_live else "NOT live", "live" if first_live
                         else "NOT live", "yes" if two else "NO (%s)" % clients(),
                         "yes" if one else "NO (%s)" % clients()))

        # commands: the status button, its reply from the board
        shown = snapshot()["commandsShown"]
        before = len(snapshot()["replies"])
        browser.evaluate("document.getElementById('cmd-status').click(); 1")
        replied = wait_until(lambda: [r for r in snapshot()["replies"] if r[0] == "ok"], 10, 0.2)
        results.check("commands", shown and replied,
                      "buttons %s; after #cmd-status: %s"
                      % ("shown" if shown else "HIDDEN", repr(replied[0][1]) if replied
                         else "no reply in 10 s (%d lines, were %d: %s)"
                         % (len(snapshot()["replies"]), before, snapshot()["replies"][:3])))

        # stale: the board stops for 3 s
        seq_before = as_number(snapshot()["seq"])
        board.signal(signal.SIGSTOP)
        stopped = time.monotonic()
        stale = wait_until(lambda: (lambda s: s if s["state"] == "stale" else None)(snapshot()),
                           5, 0.1)
        stale_after = time.monotonic() - stopped
        time.sleep(max(0.0, 3.0 - (time.monotonic() - stopped)))
        still = snapshot()
        board.signal(signal.SIGCONT)
        resumed = time.monotonic()
        back = wait_until(lambda: (lambda s: s if s["state"] == "live"
                                   and as_number(s["seq"]) != seq_before else None)(snapshot()),
                          10, 0.1)
        results.check(
            "stale", stale and still["state"] == "stale" and "no frames for" in still["stateText"]
            and back is not None,
            "SIGSTOP: stale after %.1f s (%r); SIGCONT: %s"
            % (stale_after, still["stateText"],
               "live again after %.1f s, #seq %s -> %s" % (time.monotonic() - resumed,
                                                          int(seq_before or -1), back["seq"])
               if back else "NOT live again in 10 s (state %s)" % snapshot()["state"]))

        # reconnect: the monitor goes away and comes back on the same port
        connects = snapshot()["connects"]
        bridge.hold(True)
        monitor.process.stop()
        gone = time.monotonic()
        down = wait_until(lambda: (lambda s: s if s["state"] == "disconnected" else None)(snapshot()),
                          10, 0.1)
        down_after = time.monotonic() - gone
        bridge.hold(False)
        monitor.start(port=monitor.port)
        restarted = time.monotonic()
        again = wait_until(lambda: (lambda s: s if s["state"] == "live"
                                    and s["connects"] > connects else None)(snapshot()), 15, 0.1)
        results.check(
            "reconnect", down is not None and again is not None and again["marker"] == "no reload",
            "monitor killed: %s; started again on port %d: %s"
            % ("disconnected after %.1f s (%r)" % (down_after, down["stateText"]) if down
               else "NOT disconnected in 10 s", monitor.port,
               "live after %.1f s, #seq %s, %s" % (time.monotonic() - restarted, again["seq"],
                                                   "same page (no reload)"
                                                   if again["marker"] == "no reload" else "RELOADED")
               if again else "NOT live again in 15 s (state %s)" % snapshot()["state"]))

        # memory: the plots' ring fills (30 s of frames at up to 30 a second) and stays put
        full = wait_until(lambda: (lambda s: s if s["historyLength"] >= s["historyCapacity"]
                                   else None)(snapshot()), max(5.0, 55 - (time.monotonic() - started)),
                          0.5)
        time.sleep(2.0)
        last = snapshot()
        heap = browser.heap_bytes()
        results.check(
            "memory", full is not None and last["historyLength"] == last["historyCapacity"] <= 1100
            and last["elements"] <= first["elements"] + 2 * 20
            and heap <= first_heap + HEAP_GROWTH_BOUND,
            "history %s, %d points 2 s later (capacity %d) after %d frame events in %.0f s; "
            "%d elements (%d at the start; the logs keep 20 lines each); JS heap after GC "
            "%.0f kB (%.0f kB at the start, bound +%.0f kB)"
            % ("full" if full else "NOT full in time", last["historyLength"],
               last["historyCapacity"], last["framesReceived"], time.monotonic() - started,
               last["elements"], first["elements"], heap / 1e3, first_heap / 1e3,
               HEAP_GROWTH_BOUND / 1e3))
        if args.soak > 0:
            soak(browser, snapshot, args.soak, results)

        # screenshot: a known instant: the board stopped once its clock passes 45 s (the
        # scenario is seeded, so that is the same attitude and plots every run), the page live
        metrics = browser.call("Page.getLayoutMetrics")
        height = int(math.ceil(metrics["cssContentSize"]["height"]))
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": False})
        board_time = lambda: monitor.newest()[1]["sampleTimeNanoseconds"] / 1e9  # noqa: E731
        wait_until(lambda: board_time() >= SCREENSHOT_AT_SECONDS, 30, 0.02)
        board.signal(signal.SIGSTOP)
        try:
            last_sent = wait_until(lambda: (lambda n: n if time.monotonic() - n[0] > 0.15
                                            else None)(monitor.newest()), 1, 0.02)
            newest_seq = str(last_sent[1]["sequence"]) if last_sent else None
            wait_until(lambda: snapshot()["seq"] == newest_seq, 0.5, 0.02)
            shot = snapshot()
            png = base64.b64decode(browser.call("Page.captureScreenshot",
                                                {"format": "png"})["data"])
        finally:
            board.signal(signal.SIGCONT)
        os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
        with open(args.screenshot, "wb") as f:
            f.write(png)
        frame = monitor.frame(int(as_number(shot["seq"]) or -1))
        results.check("screenshot", png.startswith(b"\x89PNG") and shot["state"] == "live"
                      and shot["seq"] == newest_seq,
                      "%s, 1280x%d, %d bytes, state %s, frame %s (t = %s s, roll %s pitch %s "
                      "yaw %s)" % (args.screenshot, height, len(png), shot["state"], shot["seq"],
                                   "%.2f" % (frame["sampleTimeNanoseconds"] / 1e9) if frame else "?",
                                   shot["roll"], shot["pitch"], shot["yaw"]))
    except Exception as error:  # a step that could not run is a failure, with the logs
        results.check("run", False, "%s: %s" % (type(error).__name__, error))
    finally:
        if results.failed:
            for p in (board, monitor.process if monitor else None):
                if p:
                    print("--- %s (last lines)\n%s" % (p.name, p.tail()), file=sys.stderr)
        for closer in (browser.close if browser else None,
                       monitor.process.stop if monitor and monitor.process else None,
                       board.stop if board else None, bridge.close):
            if closer:
                try:
                    closer()
                except Exception as error:  # cleaning up goes on
                    print("check_web: cleaning up: %s" % error, file=sys.stderr)
    print("%d passed, %d failed%s" % (results.passed, len(results.failed),
                                      ": " + ", ".join(results.failed) if results.failed else ""))
    return 1 if results.failed else 0


def main():
    global VERBOSE
    parser = argparse.ArgumentParser(
        description="The live page of plumb-monitor --web in headless Chromium.")
    parser.add_argument("--plumb", default=os.path.join(ROOT, ".build", "debug", "plumb"))
    parser.add_argument("--monitor", default=os.path.join(ROOT, ".build", "debug", "plumb-monitor"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--board", default=os.path.join(ROOT, "Boards", "simulated.json"))
    parser.add_argument("--screenshot",
                        default=os.path.join(ROOT, ".build", "web", "plumb-monitor-page.png"))
    parser.add_argument("--fake", action="store_true",
                        help="serve with tools/scripts/fake_web_monitor.py (development)")
    parser.add_argument("--soak", type=float, default=0, metavar="SECONDS",
                        help="then leave the page open this long and check its heap stays put")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    VERBOSE = args.verbose
    if not (os.path.isfile(args.chromium) or shutil.which(args.chromium)):
        print(CHROMIUM_FIX, file=sys.stderr)
        return 2
    args.chromium = shutil.which(args.chromium) or args.chromium
    for path, what in ((args.plumb, "swift build --product plumb"),
                       (args.monitor, "swift build --product plumb-monitor")):
        if not os.access(path, os.X_OK):
            print("check_web: %s is missing: build it (%s)" % (path, what), file=sys.stderr)
            return 2
    def interrupted(signum, _frame):  # so the finally blocks end every child
        raise SystemExit("check_web: stopped by signal %d" % signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    folder = tempfile.mkdtemp(prefix="plumb-check-web-")
    try:
        return run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
