import Glibc
import HardwareAbstraction
import POSIXSupport
import Synchronization

/// What the server has counted since it started.
public struct WebServerStatistics: Hashable, Sendable {
  /// Connections taken on as clients.
  public var connectionsAccepted: UInt64 = 0
  /// Connections answered 503 and closed because `maximumClients` were connected.
  public var connectionsRefused: UInt64 = 0
  /// Requests read whole (good or not).
  public var requests: UInt64 = 0
  /// Malformed or oversized requests, and `/command` bodies that are not a command: 400.
  public var badRequests: UInt64 = 0
  /// 404s.
  public var notFound: UInt64 = 0
  /// 405s.
  public var methodNotAllowed: UInt64 = 0
  /// 403s (`/command` without `--web-commands`, without `X-Plumb-Command`, or cross-site).
  public var forbidden: UInt64 = 0
  /// Clients closed because they did not send their request within `requestTimeout`.
  public var timeouts: UInt64 = 0
  /// Events appended to a client's buffer (one per client).
  public var eventsSent: UInt64 = 0
  /// Events a client missed because its buffer was full.
  public var eventsDropped: UInt64 = 0
  /// Frames never sent on their own because a newer one came before the next tick.
  public var framesCoalesced: UInt64 = 0
  /// Clients closed because their pending output did not move for `stallTimeout`.
  public var clientsClosedSlow: UInt64 = 0
  /// Clients connected now.
  public var clients: Int = 0
  /// Commands queued for the loop (202).
  public var commandsQueued: UInt64 = 0

  public init() {}
}

/// Why the server could not start, naming the address and the fix.
public enum WebServerError: Error, Hashable, Sendable, CustomStringConvertible {
  /// Another program listens there (`EADDRINUSE`).
  case addressInUse(host: String, port: UInt16)
  /// Ports below 1024 need privileges (`EACCES`).
  case permissionDenied(host: String, port: UInt16)
  /// The address is not one of this machine's (`EADDRNOTAVAIL`), or its family is missing.
  case addressNotAvailable(host: String, port: UInt16, errno: Errno)
  /// `start()` was called on a running server.
  case alreadyStarted
  /// Another system call failed.
  case systemCallFailed(call: String, host: String, port: UInt16, errno: Errno)

  public var description: String {
    switch self {
    case .addressInUse(let host, let port):
      return "\(Self.address(host, port)) is in use (another plumb-monitor --web, or another "
        + "server): pick another with --web ADDR:PORT, such as --web \(port == 8080 ? 8081 : 8080)"
    case .permissionDenied(let host, let port):
      return "\(Self.address(host, port)): ports below 1024 need root: pick a port from 1024 "
        + "up with --web ADDR:PORT, such as --web 8080"
    case .addressNotAvailable(let host, let port, let errno):
      return "\(Self.address(host, port)) is not an address of this machine (\(errno)): give "
        + "one of its addresses, 0.0.0.0 for every interface, or leave it out for 127.0.0.1"
    case .alreadyStarted:
      return "the web server is already running"
    case .systemCallFailed(let call, let host, let port, let errno):
      return "\(Self.address(host, port)): \(call) failed: \(errno)"
    }
  }

  static func address(_ host: String, _ port: UInt16) -> String {
    (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
  }
}

/// The small HTTP server of `plumb-monitor --web` (README.md): the page, the event stream and,
/// when allowed, `POST /command`, on one thread of its own that polls non-blocking sockets.
/// Nothing it does waits for the serial loop, and nothing the loop does waits for it: they
/// meet only in the `WebMonitorHub`.
public final class WebServer: Sendable {
  public let configuration: WebServerConfiguration
  public let hub: WebMonitorHub
  private let page: [UInt8]
  private let shared = ServerShared()
  private let control = Locked(ServerControl())

  public init(configuration: WebServerConfiguration, hub: WebMonitorHub, page: [UInt8]) {
    self.configuration = configuration
    self.hub = hub
    self.page = page
  }

  deinit {
    stop()
  }

  /// Binds, listens and starts the server's thread; returns the URL it serves
  /// (`http://127.0.0.1:8080/`, `http://[::1]:8080/`).
  public func start() throws(WebServerError) -> String {
    // Claimed under the lock: one start at a time, and none while a stop is joining.
    let claimed = control.withLock { control in
      guard control.phase == .idle else { return false }
      control.phase = .starting
      return true
    }
    guard claimed else { throw WebServerError.alreadyStarted }
    var succeeded = false
    defer { if !succeeded { control.withLock { $0.phase = .idle } } }
    let started = try startThread()
    succeeded = true
    control.withLock { control in
      control.phase = .running(started.thread)
      control.port = started.port
    }
    let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
    return "http://" + WebServerError.address(host, started.port) + "/"
  }

  private func startThread() throws(WebServerError) -> (port: UInt16, thread: pthread_t) {
    var listener = try Self.listen(configuration)
    let port = try Self.boundPort(listener.descriptor, configuration)
    shared.stopRequested.store(false, ordering: .releasing)
    let loop = ServerLoop(
      listener: listener.descriptor.take(), configuration: configuration, hub: hub, page: page,
      shared: shared)
    // The loop object is handed to the new thread, which alone uses it from here on (this
    // thread keeps no reference): a transfer, not sharing, so it need not be Sendable.
    let context = Unmanaged.passRetained(loop).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
      &thread, nil,
      { raw in
        guard let raw else { return nil }
        let loop = Unmanaged<ServerLoop>.fromOpaque(raw).takeRetainedValue()
        loop.run()
        return nil
      }, context)
    guard status == 0 else {
      Unmanaged<ServerLoop>.fromOpaque(context).release()
      throw WebServerError.systemCallFailed(
        call: "pthread_create", host: configuration.host, port: port,
        errno: Errno(rawValue: status))
    }
    return (port, thread)
  }

  /// Closes every connection and the listening socket, and joins the thread. Idempotent.
  public func stop() {
    // Claimed under the lock, so that two callers cannot both join the thread.
    let running = control.withLock { control -> pthread_t? in
      guard case .running(let thread) = control.phase else { return nil }
      control.phase = .stopping
      return thread
    }
    guard let thread = running else { return }
    shared.stopRequested.store(true, ordering: .releasing)
    pthread_join(thread, nil)
    control.withLock { $0.phase = .idle }
  }

  /// The port it listens on (the kernel's choice for port 0), after `start()`.
  public var localPort: UInt16? { control.withLock { $0.port } }

  /// The counters now.
  public var statistics: WebServerStatistics { shared.statistics.withLock { $0 } }

  // MARK: Socket set-up

  /// A listening descriptor, wrapped so it can be returned (FileDescriptor is non-copyable).
  private struct Listener: ~Copyable {
    var descriptor: FileDescriptor
  }

  private static func listen(_ configuration: WebServerConfiguration) throws(WebServerError)
    -> Listener
  {
    let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
    let port = configuration.port
    func failure(_ call: String, _ code: Errno) -> WebServerError {
      switch code.rawValue {
      case EADDRINUSE: .addressInUse(host: configuration.host, port: port)
      case EACCES, EPERM: .permissionDenied(host: configuration.host, port: port)
      case EADDRNOTAVAIL, EAFNOSUPPORT:
        .addressNotAvailable(host: configuration.host, port: port, errno: code)
      default: .systemCallFailed(call: call, host: configuration.host, port: port, errno: code)
      }
    }
    guard let family = WebAddress.family(of: host) else {
      throw WebServerError.addressNotAvailable(
        host: configuration.host, port: port, errno: .invalidArgument)
    }
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    let number = Glibc.socket(family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard number >= 0 else { throw failure("socket", .current) }
    let listener = Listener(descriptor: FileDescriptor(taking: number))
    // A restarted monitor must bind again at once, not wait out its old connections'
    // TIME_WAIT; Linux still refuses the port while another socket listens on it (EADDRINUSE).
    var one: CInt = 1
    _ = setsockopt(number, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
    let bound: CInt
    if family == AF_INET {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      _ = inet_pton(AF_INET, host, &address.sin_addr)
      bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.bind(number, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    } else {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      _ = inet_pton(AF_INET6, host, &address.sin6_addr)
      bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.bind(number, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
    guard bound == 0 else { throw failure("bind", .current) }
    guard Glibc.listen(number, 64) == 0 else { throw failure("listen", .current) }
    return listener
  }

  private static func boundPort(
    _ descriptor: borrowing FileDescriptor, _ configuration: WebServerConfiguration
  ) throws(WebServerError) -> UInt16 {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let number = descriptor.rawValue
    let status = withUnsafeMutablePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(number, $0, &length)
      }
    }
    guard status == 0 else {
      throw WebServerError.systemCallFailed(
        call: "getsockname", host: configuration.host, port: configuration.port,
        errno: .current)
    }
    return withUnsafeBytes(of: storage) { bytes in
      CInt(storage.ss_family) == AF_INET6
        ? UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
        : UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
    }
  }
}

/// What the caller's thread and the server's thread share.
final class ServerShared: Sendable {
  let stopRequested = Atomic(false)
  let statistics = Locked(WebServerStatistics())
}

private struct ServerControl {
  enum Phase: Equatable {
    case idle, starting
    case running(pthread_t)
    case stopping
  }
  var phase = Phase.idle
  var port: UInt16?
}

/// `CLOCK_MONOTONIC` now, ns (Plumb's one clock domain; the server's timeouts only).
func monotonicNanoseconds() -> Int64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
