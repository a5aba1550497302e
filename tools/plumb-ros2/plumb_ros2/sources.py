"""Where the bytes come from: a serial device or pty, a file, or UDP datagrams.

Every source has the same small interface (:class:`Source`): ``open()`` (raises
:class:`LinkError` with a message naming the device and the fix), ``fileno()`` for select,
``read()`` (bytes; ``b""`` when nothing is there; raises :class:`LinkError` when the device
vanished), ``write(data)`` and ``close()``. :class:`Link` wraps a source with the reopen policy
(every 0.5 s while it is gone), counts reconnects and keeps the last error.
"""

from __future__ import annotations

import errno
import io
import os
import select
import socket
import termios
import time
import tty
from dataclasses import dataclass
from typing import Callable, Optional

BAUD_RATES = {
    1200: termios.B1200,
    2400: termios.B2400,
    4800: termios.B4800,
    9600: termios.B9600,
    19200: termios.B19200,
    38400: termios.B38400,
    57600: termios.B57600,
    115200: termios.B115200,
    230400: termios.B230400,
}
for _name, _rate in (("B460800", 460800), ("B500000", 500000), ("B576000", 576000), ("B921600", 921600),
                     ("B1000000", 1000000), ("B1500000", 1500000), ("B2000000", 2000000)):  # fmt: skip
    if hasattr(termios, _name):
        BAUD_RATES[_rate] = getattr(termios, _name)

READ_CHUNK = 4096


class LinkError(Exception):
    """The device could not be opened, or went away; the message names it and the fix."""


def explain_os_error(device: str, err: OSError) -> str:
    code = err.errno
    if code == errno.EACCES or code == errno.EPERM:
        return (
            f"{device}: permission denied: add yourself to the dialout group "
            f"(sudo usermod -aG dialout $USER, then log out and in again)"
        )
    if code == errno.ENOENT:
        return f"{device}: no such device: is the board plugged in? (ls /dev/serial/by-id/ lists serial adapters)"
    if code == errno.EBUSY:
        return f"{device}: device busy: another program has it open (fuser {device} names it)"
    if code in (errno.EIO, errno.ENXIO, errno.ENODEV):
        return f"{device}: the device went away ({os.strerror(code)}): unplugged, or the other end of the pty closed"
    if code == errno.ENOTTY:
        return f"{device}: not a serial device (a regular file? use --file {device})"
    if code == errno.EADDRINUSE:
        return f"{device}: address in use: another program listens on that port"
    return f"{device}: {err.strerror or err}"


class Source:
    name: str = ""
    is_file: bool = False
    can_write: bool = True
    finished: bool = False  # file input read to its end

    def open(self) -> None:
        raise NotImplementedError

    def fileno(self) -> int:
        raise NotImplementedError

    def read(self) -> bytes:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SerialSource(Source):
    """A tty or pty: raw mode (no echo, no line discipline, 8N1), O_NOCTTY, non-blocking."""

    def __init__(self, path: str, baud: int = 115200) -> None:
        if baud not in BAUD_RATES:
            raise LinkError(f"baud {baud} is not a standard rate; use one of {', '.join(map(str, sorted(BAUD_RATES)))}")
        self.path = path
        self.baud = baud
        self.name = path
        self.fd: Optional[int] = None

    def open(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as err:
            raise LinkError(explain_os_error(self.path, err)) from err
        try:
            if os.path.isfile(self.path) or not os.isatty(fd):
                raise LinkError(f"{self.path}: not a serial device or pty (a recorded file? use --file {self.path})")
            tty.setraw(fd, termios.TCSANOW)
            attrs = termios.tcgetattr(fd)
            attrs[2] |= termios.CLOCAL | termios.CREAD
            attrs[4] = attrs[5] = BAUD_RATES[self.baud]
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
        except termios.error as err:
            os.close(fd)
            raise LinkError(f"{self.path}: cannot set raw mode at {self.baud} baud: {err}") from err
        except LinkError:
            os.close(fd)
            raise
        self.fd = fd

    def fileno(self) -> int:
        assert self.fd is not None
        return self.fd

    def read(self) -> bytes:
        assert self.fd is not None
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return b""
        except OSError as err:
            raise LinkError(explain_os_error(self.path, err)) from err
        if not data:
            # select said readable but nothing came: hang-up (USB adapter unplugged, pty closed).
            if not os.path.exists(self.path):
                raise LinkError(f"{self.path}: the device went away: unplugged?")
            raise LinkError(f"{self.path}: hang-up (the other end closed)")
        return data

    def write(self, data: bytes) -> None:
        assert self.fd is not None
        try:
            os.write(self.fd, data)
        except OSError as err:
            raise LinkError(explain_os_error(self.path, err)) from err

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None


class FileSource(Source):
    """A recorded byte stream: read to the end, then finished."""

    is_file = True
    can_write = False

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = path
        self.f: Optional[io.FileIO] = None

    def open(self) -> None:
        if os.path.isdir(self.path):
            raise LinkError(f"{self.path}: is a directory; give the recorded byte stream (plumb run --serial FILE)")
        try:
            self.f = io.FileIO(self.path, "rb")
        except OSError as err:
            raise LinkError(explain_os_error(self.path, err)) from err

    def fileno(self) -> int:
        assert self.f is not None
        return self.f.fileno()

    def read(self) -> bytes:
        assert self.f is not None
        data = self.f.read(READ_CHUNK)
        if not data:
            self.finished = True
        return data or b""

    def write(self, data: bytes) -> None:
        raise LinkError("file input: there is no board to send commands to")

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


def parse_udp(spec: str) -> tuple[str, int]:
    """``PORT`` or ``ADDR:PORT`` (``[v6addr]:PORT`` too) → (address, port)."""
    spec = spec.strip()
    host, sep, port_text = spec.rpartition(":")
    if not sep:
        host, port_text = "0.0.0.0", spec
    host = host.strip("[]") or "0.0.0.0"
    try:
        port = int(port_text)
    except ValueError:
        raise LinkError(f"udp {spec!r}: say [ADDR:]PORT, e.g. 14560 or 127.0.0.1:14560") from None
    if not 0 <= port <= 65535:
        raise LinkError(f"udp {spec!r}: port {port} is outside 0–65535")
    return host, port


class UdpSource(Source):
    """Listen on [ADDR:]PORT; each datagram is a piece of the byte stream; commands go back to
    the last sender."""

    def __init__(self, spec: str) -> None:
        self.host, self.port = parse_udp(spec)
        self.name = f"udp {self.host}:{self.port}"
        self.sock: Optional[socket.socket] = None
        self.peer: Optional[tuple] = None

    def open(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_DGRAM)
        try:
            sock.bind((self.host, self.port))
        except OSError as err:
            sock.close()
            raise LinkError(explain_os_error(self.name, err)) from err
        sock.setblocking(False)
        self.sock = sock

    @property
    def bound_port(self) -> int:
        assert self.sock is not None
        return self.sock.getsockname()[1]

    def fileno(self) -> int:
        assert self.sock is not None
        return self.sock.fileno()

    def read(self) -> bytes:
        assert self.sock is not None
        try:
            data, peer = self.sock.recvfrom(65536)
        except BlockingIOError:
            return b""
        except OSError as err:
            raise LinkError(explain_os_error(self.name, err)) from err
        self.peer = peer
        return data

    def write(self, data: bytes) -> None:
        assert self.sock is not None
        if self.peer is None:
            raise LinkError(f"{self.name}: nothing has been received yet, so there is no board to send to")
        try:
            self.sock.sendto(data, self.peer)
        except OSError as err:
            raise LinkError(explain_os_error(f"{self.name} → {self.peer[0]}:{self.peer[1]}", err)) from err

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


@dataclass
class LinkState:
    connected: bool = False
    reconnects: int = 0  # successful reopens after the device went away
    open_failures: int = 0
    last_error: str = ""
    down_since: Optional[float] = None  # monotonic seconds
    disconnected_seconds: float = 0.0  # total, closed intervals


class Link:
    """A source with the reopen policy. ``poll(timeout)`` returns the bytes that arrived."""

    REOPEN_INTERVAL = 0.5

    def __init__(self, source: Source, reopen: bool = True, clock=time.monotonic) -> None:
        self.source = source
        self.reopen = reopen
        self.clock = clock
        self.state = LinkState()
        self._next_try = 0.0
        self._ever_opened = False
        self.on_reconnect: Optional[Callable[[], None]] = None  # called after a successful reopen

    def disconnected_seconds(self) -> float:
        total = self.state.disconnected_seconds
        if self.state.down_since is not None:
            total += self.clock() - self.state.down_since
        return total

    def try_open(self) -> bool:
        if self.state.connected:
            return True
        now = self.clock()
        if now < self._next_try:
            return False
        if self._ever_opened and not self.reopen:
            return False
        try:
            self.source.open()
        except LinkError as err:
            self.state.open_failures += 1
            self.state.last_error = str(err)
            if self.state.down_since is None:
                self.state.down_since = now
            self._next_try = now + self.REOPEN_INTERVAL
            return False
        self.state.connected = True
        if self._ever_opened:
            self.state.reconnects += 1
            if self.on_reconnect is not None:
                self.on_reconnect()
        self._ever_opened = True
        if self.state.down_since is not None:
            self.state.disconnected_seconds += now - self.state.down_since
            self.state.down_since = None
        return True

    def _lost(self, err: LinkError) -> None:
        self.state.last_error = str(err)
        self.state.connected = False
        self.state.down_since = self.clock()
        self._next_try = self.state.down_since + self.REOPEN_INTERVAL
        self.source.close()

    def poll(self, timeout: float) -> bytes:
        """Wait up to ``timeout`` s for bytes; b"" if none (or the link is down / finished)."""
        if self.source.finished:
            time.sleep(timeout)
            return b""
        if not self.try_open():
            time.sleep(min(timeout, max(0.0, self._next_try - self.clock())) or 0.01)
            return b""
        if self.source.is_file:
            return self.source.read()
        try:
            ready, _, _ = select.select([self.source.fileno()], [], [], timeout)
        except (OSError, ValueError) as err:
            self._lost(LinkError(f"{self.source.name}: {err}"))
            return b""
        if not ready:
            return b""
        try:
            return self.source.read()
        except LinkError as err:
            self._lost(err)
            return b""

    def write(self, data: bytes) -> None:
        if self.source.is_file:
            raise LinkError("file input: there is no board to send commands to")
        if not self.state.connected:
            raise LinkError(f"link down: {self.state.last_error or self.source.name + ' is not open'}")
        try:
            self.source.write(data)
        except LinkError as err:
            if not isinstance(self.source, UdpSource):
                self._lost(err)
            raise

    def close(self) -> None:
        self.source.close()
        self.state.connected = False


def make_source(port: str = "", baud: int = 115200, file: str = "", udp: str = "") -> Source:
    given = [name for name, value in (("port", port), ("file", file), ("udp", udp)) if value]
    if len(given) != 1:
        if not given:
            raise LinkError("no input: say --serial DEVICE, --file PATH or --udp [ADDR:]PORT "
                            "(or the parameter port, file or udp)")  # fmt: skip
        raise LinkError(f"give one input, not {' and '.join(given)}")
    if port:
        return SerialSource(port, baud)
    if file:
        return FileSource(file)
    return UdpSource(udp)
