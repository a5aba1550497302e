import HardwareAbstraction

/// What went wrong talking to the service manager.
///
/// A service that cannot notify keeps running: these errors are for the executable to log once
/// (and for the counters in `NotifyStatistics`), never a reason to stop the loop. If systemd
/// really waits for `READY=1` and never gets it, it fails the start after `TimeoutStartSec=`;
/// if it waits for `WATCHDOG=1`, it restarts the service after `WatchdogSec=`.
public struct NotifyError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// `NOTIFY_SOCKET` is neither an absolute path nor an abstract name (`@…`), e.g. the
    /// `vsock:` addresses systemd uses for virtual machines.
    case unsupportedAddress
    /// The socket path does not fit `sockaddr_un.sun_path` (108 bytes with its terminator).
    case addressTooLong
    /// `socket(AF_UNIX, SOCK_DGRAM)` failed.
    case socketFailed
    /// The datagram could not be sent: `ENOENT`/`ECONNREFUSED` (nobody listens at the address:
    /// the manager went away or re-executed), `EAGAIN` (its queue is full), `EACCES`.
    case sendFailed
    /// `WATCHDOG_USEC` is not a positive whole number of microseconds.
    case invalidWatchdogInterval
    /// The message does not fit the notifier's preallocated buffer.
    case messageTooLong
  }

  public var kind: Kind
  public var errno: Errno?
  /// The address or value involved, as given.
  public var detail: String

  public init(_ kind: Kind, errno: Errno? = nil, detail: String = "") {
    self.kind = kind
    self.errno = errno
    self.detail = detail
  }

  public var description: String {
    var text: String
    switch kind {
    case .unsupportedAddress:
      text =
        "NOTIFY_SOCKET \"\(detail)\" is not an AF_UNIX socket path (/…) or abstract name (@…); "
        + "Plumb supports only those"
    case .addressTooLong:
      text = "NOTIFY_SOCKET \"\(detail)\" is longer than a Unix socket address can be (107 bytes)"
    case .socketFailed:
      text = "could not create the AF_UNIX datagram socket for sd_notify"
    case .sendFailed:
      text = "could not send the notification to \(detail)"
    case .invalidWatchdogInterval:
      text = "WATCHDOG_USEC \"\(detail)\" is not a positive number of microseconds"
    case .messageTooLong:
      text = "the notification does not fit the \(SystemdNotifier.messageCapacity)-byte buffer"
    }
    if let errno { text += " [\(errno)]" }
    return text
  }
}

/// What a notifier has sent, for health counters.
public struct NotifyStatistics: Hashable, Sendable {
  /// Datagrams the manager's socket accepted.
  public var sent: UInt64 = 0
  /// Datagrams that could not be sent (each also thrown as `NotifyError.sendFailed`).
  public var failed: UInt64 = 0
  /// `WATCHDOG=1` pings among `sent`.
  public var watchdogPings: UInt64 = 0

  public init() {}
}
