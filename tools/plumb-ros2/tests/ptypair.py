"""Two ptys joined back to back (what `socat pty pty` does), for trying plumb → plumb-ros2.

    python3 tools/plumb-ros2/tests/ptypair.py        # prints "A B", relays until killed
    plumb run --board Boards/simulated.json --format binary-imu --serial A &
    plumb-ros2 --serial B

Bytes written to A come out of B and the other way round. Killing the relay makes both ends
hang up (EIO), which is how an unplugged USB adapter looks to the reader.
"""

from __future__ import annotations

import os
import select
import sys
import tty


class PtyPair:
    def __init__(self) -> None:
        self.ma, sa = os.openpty()
        self.mb, sb = os.openpty()
        for fd in (self.ma, self.mb, sa, sb):
            tty.setraw(fd)
        self.a, self.b = os.ttyname(sa), os.ttyname(sb)
        # Keep the slave ends open so the masters do not read EIO before the users open them.
        self._slaves = (sa, sb)

    def pump(self, timeout: float = 0.1) -> int:
        """Copy whatever is ready once; returns bytes moved."""
        moved = 0
        ready, _, _ = select.select([self.ma, self.mb], [], [], timeout)
        for src in ready:
            dst = self.mb if src == self.ma else self.ma
            try:
                data = os.read(src, 65536)
            except OSError:
                continue
            os.write(dst, data)
            moved += len(data)
        return moved

    def close(self) -> None:
        for fd in (self.ma, self.mb, *self._slaves):
            try:
                os.close(fd)
            except OSError:
                pass


def main() -> int:
    pair = PtyPair()
    print(pair.a, pair.b, flush=True)
    try:
        while True:
            pair.pump(1.0)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
