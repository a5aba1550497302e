import Glibc
import HardwareAbstraction

/// Reads from `port` until `count` bytes arrived or a bounded number of attempts passed (a
/// pseudo-terminal hands bytes over through a kernel work queue, so they may take a moment).
/// Never blocks: each empty attempt yields the processor for 100 µs, at most 0.5 s in total.
func receive(_ count: Int, from port: inout some SerialPort) throws -> [UInt8] {
  var received: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  var idle = 0
  while received.count < count && idle < 5000 {
    let got = try chunk.withUnsafeMutableBytes { buffer throws(SerialError) in
      try port.read(
        into: UnsafeMutableRawBufferPointer(rebasing: buffer.prefix(count - received.count)))
    }
    if got > 0 {
      received += chunk.prefix(got)
      idle = 0
    } else {
      idle += 1
      var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
      _ = nanosleep(&pause, nil)
    }
  }
  return received
}

/// Writes all of `bytes`, retrying briefly while the other side drains (bounded like `receive`).
func send(_ bytes: [UInt8], to port: inout some SerialPort) throws {
  var sent = 0
  var idle = 0
  while sent < bytes.count && idle < 5000 {
    let accepted = try bytes.withUnsafeBytes { buffer throws(SerialError) in
      try port.write(UnsafeRawBufferPointer(rebasing: buffer[sent...]))
    }
    sent += accepted
    if accepted == 0 {
      idle += 1
      var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
      _ = nanosleep(&pause, nil)
    }
  }
}

/// Puts the terminal at `path` in the cooked, interactive mode a UART has after boot (echo,
/// canonical lines, CR/LF translation both ways, XON/XOFF, signals, 7-bit parity-free but
/// hardware flow control on), so a test sees the port under test make it raw itself.
func makeCooked(_ path: String) {
  let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
  guard descriptor >= 0 else { return }
  defer { _ = Glibc.close(descriptor) }
  var settings = termios()
  guard tcgetattr(descriptor, &settings) == 0 else { return }
  settings.c_iflag |= tcflag_t(ICRNL | IXON | ISTRIP)
  settings.c_oflag |= tcflag_t(OPOST | ONLCR)
  settings.c_lflag |= tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
  settings.c_cflag =
    (settings.c_cflag & ~tcflag_t(CSIZE)) | tcflag_t(CS7 | PARENB) | tcflag_t(CRTSCTS)
  _ = cfsetspeed(&settings, speed_t(B38400))
  _ = tcsetattr(descriptor, TCSANOW, &settings)
}
