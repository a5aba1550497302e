import ByteFormats
import Glibc
import HardwareAbstraction

/// An open file descriptor owned by this value: it is closed exactly once, by `close()` or when
/// the value goes away.
///
/// Non-copyable so that two owners can never close the same number: after a close the kernel
/// reuses the number for the next `open`, and a second close would silently close someone
/// else's file. Types that must be copyable (the HAL protocols require it) hold one inside a
/// `final class`.
///
/// Each method names the C function it wraps. Reads and writes are the non-blocking forms: a
/// descriptor opened with `O_NONBLOCK` reports "nothing now" as `nil`, never as an error.
public struct FileDescriptor: ~Copyable {
  /// The descriptor number, or `-1` once closed.
  public private(set) var rawValue: CInt

  /// Takes ownership of an open descriptor (or `-1` for a closed one).
  public init(taking rawValue: CInt) {
    self.rawValue = rawValue
  }

  /// A closed descriptor, for a device that is not open yet.
  public static var closed: FileDescriptor { FileDescriptor(taking: -1) }

  /// Whether the descriptor is open.
  @inlinable
  public var isOpen: Bool { rawValue >= 0 }

  /// `open(2)`, retrying `EINTR`, always with `O_CLOEXEC`: a program this process starts must
  /// not inherit the device (a serial port held open by a child, a recording's lock kept).
  /// Converting `path` to a C string allocates: open devices at set-up, not per sample.
  public static func open(_ path: String, flags: CInt, permissions: mode_t = 0)
    throws(SystemCallError) -> FileDescriptor
  {
    let number = try retryingOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, permissions) }
    return FileDescriptor(taking: number)
  }

  /// A copy of the descriptor `number` (which stays open), close-on-exec like every descriptor
  /// Plumb opens: `fcntl(F_DUPFD_CLOEXEC)` (plain `dup(2)` would clear the flag on the copy).
  public static func duplicate(_ number: CInt) throws(SystemCallError) -> FileDescriptor {
    FileDescriptor(taking: try retryingOnInterrupt { fcntl(number, F_DUPFD_CLOEXEC, 0) })
  }

  /// Moves the descriptor out, leaving this value closed (like `Optional.take()`): hands an
  /// end of a `PseudoTerminal` to its new owner.
  public mutating func take() -> FileDescriptor {
    let number = rawValue
    rawValue = -1
    return FileDescriptor(taking: number)
  }

  /// `close(2)`. Idempotent. Its result is ignored on purpose: Linux releases the number even
  /// when close reports `EINTR` or `EIO`, so a retry could close a reused descriptor.
  public mutating func close() {
    guard rawValue >= 0 else { return }
    _ = Glibc.close(rawValue)
    rawValue = -1
  }

  deinit {
    if rawValue >= 0 { _ = Glibc.close(rawValue) }
  }

  /// `read(2)` into `buffer`, retrying `EINTR`. Returns the byte count (`0` at end of file, or
  /// on a terminal in non-canonical mode with `VMIN = VTIME = 0` when nothing has arrived), or
  /// `nil` when a non-blocking descriptor has nothing now (`EAGAIN`). Does not allocate.
  @inlinable
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int? {
    let number = rawValue
    return try retryingOnInterrupt(orNilOn: .tryAgain) {
      Glibc.read(number, buffer.baseAddress, buffer.count)
    }
  }

  /// `write(2)` of `bytes`, retrying `EINTR`. Returns how many bytes the kernel accepted
  /// (possibly fewer than offered), or `nil` when a non-blocking descriptor can take nothing
  /// now (`EAGAIN`). Does not allocate.
  @inlinable
  public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> Int? {
    let number = rawValue
    return try retryingOnInterrupt(orNilOn: .tryAgain) {
      Glibc.write(number, bytes.baseAddress, bytes.count)
    }
  }

  /// `poll(2)` on this descriptor alone: waits up to `timeoutMilliseconds` (0 = just look) for
  /// `events` and returns what is pending. `hangUp`, `error` and `invalid` are reported whether
  /// asked for or not. Retries `EINTR` (with the full timeout; use 0 or short timeouts).
  @inlinable
  public func poll(for events: PollEvents, timeoutMilliseconds: CInt = 0)
    throws(SystemCallError) -> PollEvents
  {
    var entry = pollfd(fd: rawValue, events: events.rawValue, revents: 0)
    _ = try retryingOnInterrupt { Glibc.poll(&entry, 1, timeoutMilliseconds) }
    return PollEvents(rawValue: entry.revents)
  }

  /// Sets or clears `O_NONBLOCK` (`fcntl(F_GETFL/F_SETFL)`).
  public func setNonBlocking(_ nonBlocking: Bool) throws(SystemCallError) {
    let number = rawValue
    let flags = try retryingOnInterrupt { fcntl(number, F_GETFL) }
    let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    if wanted != flags {
      _ = try retryingOnInterrupt { fcntl(number, F_SETFL, wanted) }
    }
  }

  /// Sets `FD_CLOEXEC` (`fcntl(F_SETFD)`), so programs this process starts do not inherit the
  /// device.
  public func setCloseOnExec() throws(SystemCallError) {
    let number = rawValue
    _ = try retryingOnInterrupt { fcntl(number, F_SETFD, FD_CLOEXEC) }
  }
}

/// The `poll(2)` event bits Plumb looks at.
public struct PollEvents: OptionSet, Hashable, Sendable {
  public var rawValue: Int16

  @inlinable
  public init(rawValue: Int16) {
    self.rawValue = rawValue
  }

  /// `POLLIN`: data to read (or, on a hung-up terminal, end of file).
  public static let input = PollEvents(rawValue: Int16(POLLIN))
  /// `POLLPRI`: urgent data (GPIO line events are signalled with it too).
  public static let priority = PollEvents(rawValue: Int16(POLLPRI))
  /// `POLLOUT`: room to write.
  public static let output = PollEvents(rawValue: Int16(POLLOUT))
  /// `POLLERR`: an error condition.
  public static let error = PollEvents(rawValue: Int16(POLLERR))
  /// `POLLHUP`: the other side hung up (a terminal whose device or pseudo-terminal master is gone).
  public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
  /// `POLLNVAL`: the descriptor is not open.
  public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}
