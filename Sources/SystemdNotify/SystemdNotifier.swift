import Glibc
import HardwareAbstraction
import POSIXSupport

/// Tells systemd how the service is doing, the way `sd_notify(3)` does, without libsystemd: one
/// `AF_UNIX` datagram per message, sent to the socket named by `NOTIFY_SOCKET`.
///
/// systemd sets `NOTIFY_SOCKET` only for units that listen (`Type=notify`, or `NotifyAccess=`
/// set). Without it the notifier is *disabled*: every call does nothing and succeeds, so the
/// loop notifies unconditionally and runs the same under systemd, in a terminal and in tests.
///
/// Messages are newline-separated `KEY=VALUE` assignments (sd_notify(3)): `READY=1` when
/// start-up is done, `WATCHDOG=1` at least every half `WatchdogSec=`, `STATUS=…` for
/// `systemctl status`, `STOPPING=1` when shutting down.
///
/// **No allocation per message.** The socket address and the fixed messages are built once at
/// `init`; `STATUS=` text is copied into a buffer made once. Every datagram goes out with
/// `sendto(MSG_DONTWAIT | MSG_NOSIGNAL)`: it never blocks the loop (a full queue is `EAGAIN`, a
/// counted failure), and the address is resolved on every send, so a manager that re-executes
/// and binds its socket again is found again (a `connect`ed socket would keep the old one).
///
/// A class because it owns the socket; it belongs to the loop's thread, so it is deliberately
/// not `Sendable`.
public final class SystemdNotifier {
  /// The longest message, bytes (`STATUS=` text is cut to fit).
  public static let messageCapacity = 256

  /// Where notifications go; `nil` when disabled.
  public let address: NotifySocketAddress?
  public private(set) var statistics = NotifyStatistics()

  private var descriptor: FileDescriptor
  private var socketAddress = sockaddr_un()
  private var socketAddressLength: socklen_t = 0
  private let readyMessage = Array("READY=1".utf8)
  private let watchdogMessage = Array("WATCHDOG=1".utf8)
  private let stoppingMessage = Array("STOPPING=1".utf8)
  /// Where `STATUS=` and free-form messages are assembled: raw memory made once (writing a
  /// byte is a plain store). While a status is being built it starts with `STATUS=`.
  private let scratch = UnsafeMutableRawBufferPointer.allocate(
    byteCount: SystemdNotifier.messageCapacity, alignment: 1)

  /// Whether notifications are sent (`NOTIFY_SOCKET` was set).
  public var isEnabled: Bool { address != nil }

  /// A notifier that does nothing: not started by systemd.
  public init() {
    address = nil
    descriptor = .closed
  }

  /// A notifier for `address`: creates the datagram socket (`socket(AF_UNIX, SOCK_DGRAM |
  /// SOCK_CLOEXEC)`, so programs the service starts do not inherit it).
  public init(address: NotifySocketAddress) throws(NotifyError) {
    self.address = address
    let number = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard number >= 0 else { throw NotifyError(.socketFailed, errno: .current) }
    descriptor = FileDescriptor(taking: number)
    socketAddress.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &socketAddress.sun_path) { path in
      for (index, byte) in address.pathBytes.enumerated() { path[index] = byte }
    }
    // The family, then the path: with its NUL for a filesystem path; exactly the name's bytes
    // for an abstract one (unix(7): a trailing NUL would name a different socket).
    let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    socketAddressLength = socklen_t(
      pathOffset + address.pathBytes.count + (address.isAbstract ? 0 : 1))
  }

  /// The notifier the environment asks for: disabled when `NOTIFY_SOCKET` is unset or empty,
  /// else one for its address. `environment` looks a variable up (`getenv` by default; tests
  /// pass their own).
  public static func fromEnvironment(
    _ environment: (String) -> String? = environmentVariable
  ) throws(NotifyError) -> SystemdNotifier {
    guard let text = environment("NOTIFY_SOCKET"), !text.isEmpty else { return SystemdNotifier() }
    return try SystemdNotifier(address: NotifySocketAddress(text))
  }

  /// `READY=1`: start-up is complete (systemd then considers a `Type=notify` unit started).
  public func notifyReady() throws(NotifyError) {
    try send(readyMessage)
  }

  /// `WATCHDOG=1`: the service is alive. Send at least every half `WATCHDOG_USEC` (see
  /// `Watchdog`). Does not allocate.
  public func notifyWatchdog() throws(NotifyError) {
    try send(watchdogMessage)
    if isEnabled { statistics.watchdogPings += 1 }
  }

  /// `STOPPING=1`: the service is shutting down on purpose.
  public func notifyStopping() throws(NotifyError) {
    try send(stoppingMessage)
  }

  /// `STATUS=text`: one line for `systemctl status`. Newlines become spaces (a newline would
  /// start another assignment); text beyond the buffer is cut. Does not allocate for native
  /// Swift strings.
  public func notifyStatus(_ text: String) throws(NotifyError) {
    guard isEnabled else { return }
    var count = 0
    for byte in "STATUS=".utf8 {
      scratch[count] = byte
      count += 1
    }
    for byte in text.utf8 {
      guard count < scratch.count else { break }
      scratch[count] = byte == UInt8(ascii: "\n") || byte == 0 ? UInt8(ascii: " ") : byte
      count += 1
    }
    try sendScratch(count)
  }

  /// Sends `assignments` as they are (`KEY=VALUE` lines, e.g. `"READY=1\nSTATUS=running"`).
  public func send(assignments: String) throws(NotifyError) {
    guard isEnabled else { return }
    var count = 0
    for byte in assignments.utf8 {
      guard count < scratch.count else { throw NotifyError(.messageTooLong) }
      scratch[count] = byte
      count += 1
    }
    try sendScratch(count)
  }

  deinit {
    scratch.deallocate()
  }

  /// Closes the socket; later calls fail with `.sendFailed` (`EBADF`). Idempotent.
  public func close() {
    descriptor.close()
  }

  private func sendScratch(_ count: Int) throws(NotifyError) {
    try transmit(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
  }

  private func send(_ message: [UInt8]) throws(NotifyError) {
    guard isEnabled else { return }
    var failure: NotifyError?
    message.withUnsafeBytes { bytes in
      do throws(NotifyError) {
        try transmit(bytes)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }

  private func transmit(_ bytes: UnsafeRawBufferPointer) throws(NotifyError) {
    let number = descriptor.rawValue
    let length = socketAddressLength
    let flags = Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)
    let result: Result<Int, SystemCallError> = withUnsafePointer(to: &socketAddress) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
        Result { () throws(SystemCallError) in
          try retryingOnInterrupt {
            sendto(number, bytes.baseAddress, bytes.count, flags, generic, length)
          }
        }
      }
    }
    switch result {
    case .success:
      statistics.sent += 1
    case .failure(let error):
      statistics.failed += 1
      throw NotifyError(.sendFailed, errno: error.errno, detail: address?.text ?? "")
    }
  }
}

/// `getenv(name)` as a Swift string, or `nil` when the variable is unset.
public func environmentVariable(_ name: String) -> String? {
  guard let value = getenv(name) else { return nil }
  return String(cString: value)
}
