"""Sources on real ptys and sockets: raw reads, commands written back, a device that vanishes
and comes back (reopened, counted), the error messages."""

from __future__ import annotations

import errno
import os
import socket
import sys
import tempfile
import time
import tty
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from plumb_ros2.sources import (  # noqa: E402
    FileSource, Link, LinkError, SerialSource, UdpSource, explain_os_error, make_source, parse_udp,
)  # fmt: skip

DEADLINE = 10.0  # generous: only reached when something is broken


def poll_until(link: Link, want: int) -> bytes:
    got = b""
    end = time.monotonic() + DEADLINE
    while len(got) < want and time.monotonic() < end:
        got += link.poll(0.05)
    return got


def new_pty() -> tuple[int, int, str]:
    master, slave = os.openpty()
    tty.setraw(master)
    return master, slave, os.ttyname(slave)


class SerialTests(unittest.TestCase):
    def test_reads_raw_bytes_and_writes_commands(self) -> None:
        master, slave, path = new_pty()
        try:
            link = Link(SerialSource(path, 115200))
            self.assertTrue(link.try_open())
            data = bytes(range(256)) * 4  # includes 0x00, \r, \n, ^C, ^D: raw mode keeps them all
            os.write(master, data)
            self.assertEqual(poll_until(link, len(data)), data)
            link.write(b"tare\n")
            end = time.monotonic() + DEADLINE
            got = b""
            while len(got) < 5 and time.monotonic() < end:
                try:
                    got += os.read(master, 64)
                except BlockingIOError:
                    time.sleep(0.01)
            self.assertEqual(got, b"tare\n")
            link.close()
        finally:
            os.close(master)
            os.close(slave)

    def test_vanished_device_is_reopened_and_counted(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            dev = os.path.join(tmp, "ttyPLUMB")  # like /dev/serial/by-id/…: a symlink to the tty
            m1, s1, p1 = new_pty()
            os.symlink(p1, dev)
            link = Link(SerialSource(dev))
            reconnected = []
            link.on_reconnect = lambda: reconnected.append(True)
            self.assertTrue(link.try_open())
            os.write(m1, b"one")
            self.assertEqual(poll_until(link, 3), b"one")
            # unplug: the pty goes away entirely
            os.close(s1)
            os.close(m1)
            os.unlink(dev)
            end = time.monotonic() + DEADLINE
            while link.state.connected and time.monotonic() < end:
                link.poll(0.05)
            self.assertFalse(link.state.connected)
            self.assertIn(dev, link.state.last_error)
            end = time.monotonic() + DEADLINE
            while link.state.open_failures == 0 and time.monotonic() < end:
                link.poll(0.05)  # the reopen tries every 0.5 s
            self.assertIn("no such device", link.state.last_error)
            with self.assertRaises(LinkError):
                link.write(b"tare\n")
            # plug back in
            m2, s2, p2 = new_pty()
            try:
                os.symlink(p2, dev)
                os.write(m2, b"two")
                self.assertEqual(poll_until(link, 3), b"two")
                self.assertEqual(link.state.reconnects, 1)
                self.assertEqual(reconnected, [True])
                self.assertGreater(link.disconnected_seconds(), 0.0)
            finally:
                link.close()
                os.close(m2)
                os.close(s2)

    def test_regular_file_as_serial_is_refused_with_the_fix(self) -> None:
        with tempfile.NamedTemporaryFile() as f:
            with self.assertRaises(LinkError) as ctx:
                SerialSource(f.name).open()
            self.assertIn("--file", str(ctx.exception))

    def test_bad_baud(self) -> None:
        with self.assertRaises(LinkError) as ctx:
            SerialSource("/dev/null", 12345)
        self.assertIn("115200", str(ctx.exception))

    def test_messages_name_the_device_and_the_fix(self) -> None:
        msg = explain_os_error("/dev/ttyUSB0", PermissionError(errno.EACCES, "Permission denied"))
        self.assertIn("/dev/ttyUSB0", msg)
        self.assertIn("dialout", msg)
        self.assertIn("plugged", explain_os_error("/dev/ttyUSB0", FileNotFoundError(errno.ENOENT, "x")))
        self.assertIn("busy", explain_os_error("/dev/ttyUSB0", OSError(errno.EBUSY, "x")))


class FileTests(unittest.TestCase):
    def test_reads_to_the_end_then_finished(self) -> None:
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * 10000)
            f.flush()
            link = Link(FileSource(f.name))
            got = b""
            for _ in range(10):
                got += link.poll(0.01)
            self.assertEqual(len(got), 10000)
            self.assertTrue(link.source.finished)
            with self.assertRaises(LinkError):
                link.write(b"tare\n")
            link.close()

    def test_missing_file(self) -> None:
        with self.assertRaises(LinkError) as ctx:
            FileSource("/nonexistent/plumb.bin").open()
        self.assertIn("/nonexistent/plumb.bin", str(ctx.exception))


class UdpTests(unittest.TestCase):
    def test_datagrams_in_commands_back_to_the_last_sender(self) -> None:
        src = UdpSource("127.0.0.1:0")
        link = Link(src)
        self.assertTrue(link.try_open())
        with self.assertRaises(LinkError):
            link.write(b"tare\n")  # nobody has sent anything yet
        board = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        board.settimeout(DEADLINE)
        try:
            board.sendto(b"\x00abc\x00", ("127.0.0.1", src.bound_port))
            self.assertEqual(poll_until(link, 5), b"\x00abc\x00")
            link.write(b"tare\n")
            data, _ = board.recvfrom(64)
            self.assertEqual(data, b"tare\n")
        finally:
            board.close()
            link.close()

    def test_parse(self) -> None:
        self.assertEqual(parse_udp("14560"), ("0.0.0.0", 14560))
        self.assertEqual(parse_udp("127.0.0.1:9"), ("127.0.0.1", 9))
        self.assertEqual(parse_udp("[::1]:9"), ("::1", 9))
        for bad in ("x", "1.2.3.4:99999", "host:"):
            with self.assertRaises(LinkError):
                parse_udp(bad)


class MakeSourceTests(unittest.TestCase):
    def test_exactly_one_input(self) -> None:
        with self.assertRaises(LinkError) as ctx:
            make_source()
        self.assertIn("--serial", str(ctx.exception))
        with self.assertRaises(LinkError):
            make_source(port="/dev/ttyUSB0", file="x.bin")


if __name__ == "__main__":
    unittest.main()
