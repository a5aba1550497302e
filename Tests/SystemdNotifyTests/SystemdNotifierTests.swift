import Glibc
import HardwareAbstraction
import SystemdNotify
import TestSupport
import Testing

/// The service manager's end, played by the test: a datagram socket bound at a filesystem path
/// or an abstract name, as systemd binds `/run/systemd/notify`.
final class NotifyListener {
  private(set) var descriptor: CInt
  /// The value `NOTIFY_SOCKET` would carry for it.
  let notifySocket: String
  private let directory: String?

  /// A listener at `<temporary directory>/notify`.
  init(path name: String = "notify") throws {
    var template = Array("/tmp/plumb-notify-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw ListenerError.setup(errno) }
    let directory = String(cString: made)
    self.directory = directory
    notifySocket = directory + "/" + name
    descriptor = try Self.bind(pathBytes: Array(notifySocket.utf8) + [0])
  }

  /// A listener at an abstract name (`@name` in `NOTIFY_SOCKET`), bound with the exact length
  /// of the name: no trailing NUL, as unix(7) requires for a name to match.
  init(abstract name: String) throws {
    directory = nil
    notifySocket = "@" + name
    descriptor = try Self.bind(pathBytes: [0] + Array(name.utf8))
  }

  /// A listener that takes over `path` (left behind by a previous one): unlinks it and binds
  /// again, as a re-executed systemd does. The first listener's directory stays its owner's.
  init(rebinding path: String) throws {
    directory = nil
    notifySocket = path
    _ = unlink(path)
    descriptor = try Self.bind(pathBytes: Array(path.utf8) + [0])
  }

  /// Closes the socket but leaves its file, like a manager that died.
  func closeSocket() {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    descriptor = -1
  }

  private static func bind(pathBytes: [UInt8]) throws -> CInt {
    let number = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard number >= 0 else { throw ListenerError.setup(errno) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { path in
      for (index, byte) in pathBytes.enumerated() { path[index] = byte }
    }
    let length = socklen_t(2 + pathBytes.count)  // sun_family is 2 bytes on Linux
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(number, $0, length) }
    }
    guard result == 0 else {
      let code = errno
      _ = Glibc.close(number)
      throw ListenerError.setup(code)
    }
    return number
  }

  /// The next datagram, or `nil` when none is queued (a local datagram is queued by the time
  /// `sendto` returns, so there is nothing to wait for).
  func receive() -> String? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes {
      recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
    }
    guard count >= 0 else { return nil }
    return String(decoding: buffer[0..<count], as: UTF8.self)
  }

  deinit {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    if let directory {
      _ = unlink(notifySocket)
      _ = rmdir(directory)
    }
  }
}

enum ListenerError: Error {
  case setup(CInt)
}

/// A unique abstract name for this process and call.
func abstractName(_ tag: String) -> String {
  "plumb-test-\(getpid())-\(tag)-\(UInt32.random(in: 0 ... .max))"
}

@Suite struct SystemdNotifierTests {
  @Test func messagesArriveAtAFilesystemSocket() throws {
    let listener = try NotifyListener()
    let notifier = try SystemdNotifier.fromEnvironment { name in
      name == "NOTIFY_SOCKET" ? listener.notifySocket : nil
    }
    #expect(notifier.isEnabled)
    #expect(notifier.address?.isAbstract == false)

    try notifier.notifyReady()
    #expect(listener.receive() == "READY=1")
    try notifier.notifyWatchdog()
    #expect(listener.receive() == "WATCHDOG=1")
    try notifier.notifyStatus("loop running at 100 Hz\nsecond line")
    #expect(listener.receive() == "STATUS=loop running at 100 Hz second line")
    try notifier.send(assignments: "READY=1\nSTATUS=started")
    #expect(listener.receive() == "READY=1\nSTATUS=started")
    try notifier.notifyStopping()
    #expect(listener.receive() == "STOPPING=1")
    #expect(listener.receive() == nil)
    #expect(notifier.statistics.sent == 5)
    #expect(notifier.statistics.watchdogPings == 1)
    #expect(notifier.statistics.failed == 0)
  }

  @Test func messagesArriveAtAnAbstractSocket() throws {
    let listener = try NotifyListener(abstract: abstractName("abstract"))
    let address = try NotifySocketAddress(listener.notifySocket)
    #expect(address.isAbstract)
    #expect(address.pathBytes.first == 0)
    let notifier = try SystemdNotifier(address: address)
    try notifier.notifyReady()
    #expect(listener.receive() == "READY=1")
    try notifier.notifyWatchdog()
    #expect(listener.receive() == "WATCHDOG=1")
  }

  /// An abstract name is exactly its bytes: the same name with a NUL added is another socket,
  /// so a notifier that sent to it would reach nobody.
  @Test func anAbstractNameIsMatchedExactly() throws {
    let name = abstractName("exact")
    let listener = try NotifyListener(abstract: name)
    let longer = try SystemdNotifier(address: NotifySocketAddress("@" + name + "x"))
    #expect(throws: NotifyError.self) { try longer.notifyReady() }
    #expect(listener.receive() == nil)
    let shorter = try SystemdNotifier(address: NotifySocketAddress("@" + name.dropLast()))
    #expect(throws: NotifyError.self) { try shorter.notifyReady() }
    #expect(listener.receive() == nil)
  }

  @Test func withoutNotifySocketEverythingIsANoOp() throws {
    for environment: [String: String] in [[:], ["NOTIFY_SOCKET": ""]] {
      let notifier = try SystemdNotifier.fromEnvironment { environment[$0] }
      #expect(!notifier.isEnabled)
      try notifier.notifyReady()
      try notifier.notifyWatchdog()
      try notifier.notifyStatus("nobody listens")
      try notifier.notifyStopping()
      #expect(notifier.statistics == NotifyStatistics())
    }
  }

  @Test(arguments: ["vsock:2:1234", "run/systemd/notify", "@", "notify"])
  func unsupportedAddressesAreRefused(text: String) {
    #expect(throws: NotifyError(.unsupportedAddress, detail: text)) {
      try SystemdNotifier.fromEnvironment { $0 == "NOTIFY_SOCKET" ? text : nil }
    }
  }

  /// sun_path holds 108 bytes: a path of 107 and its NUL fit, 108 do not; an abstract name
  /// (with its leading NUL) may use all 108.
  @Test func addressesMustFitSunPath() throws {
    let path107 = "/" + String(repeating: "p", count: 106)
    #expect(try NotifySocketAddress(path107).pathBytes.count == 107)
    let path108 = path107 + "p"
    #expect(throws: NotifyError(.addressTooLong, detail: path108)) {
      try NotifySocketAddress(path108)
    }
    let abstract107 = "@" + String(repeating: "a", count: 107)
    #expect(try NotifySocketAddress(abstract107).pathBytes.count == 108)
    let abstract108 = abstract107 + "a"
    #expect(throws: NotifyError(.addressTooLong, detail: abstract108)) {
      try NotifySocketAddress(abstract108)
    }
  }

  @Test func nobodyListeningIsACountedFailure() throws {
    let listener = try NotifyListener()
    let path = listener.notifySocket + "-missing"
    let notifier = try SystemdNotifier(address: NotifySocketAddress(path))
    #expect(throws: NotifyError(.sendFailed, errno: .noSuchFileOrDirectory, detail: path)) {
      try notifier.notifyWatchdog()
    }
    #expect(notifier.statistics.failed == 1)
    #expect(notifier.statistics.sent == 0)
    #expect(notifier.statistics.watchdogPings == 0)
  }

  /// systemd re-executing binds its socket again at the same path: the next ping reaches the
  /// new socket because every send names the address (a `connect`ed socket would not).
  @Test func aManagerThatBindsAgainIsReachedAgain() throws {
    let first = try NotifyListener()
    defer { withExtendedLifetime(first) {} }  // it removes the socket file and its folder
    let notifier = try SystemdNotifier(address: NotifySocketAddress(first.notifySocket))
    try notifier.notifyWatchdog()
    #expect(first.receive() == "WATCHDOG=1")

    // The manager goes away: its socket file stays behind, but nobody reads it.
    first.closeSocket()
    let refused = Errno(rawValue: ECONNREFUSED)
    #expect(throws: NotifyError(.sendFailed, errno: refused, detail: first.notifySocket)) {
      try notifier.notifyWatchdog()
    }
    // It comes back and binds the same path again.
    let second = try NotifyListener(rebinding: first.notifySocket)
    try notifier.notifyWatchdog()
    #expect(second.receive() == "WATCHDOG=1")
    #expect(notifier.statistics.failed == 1)
    #expect(notifier.statistics.watchdogPings == 2)
  }

  /// Nobody reads the socket: the queue fills, and each further ping fails at once with
  /// EAGAIN (counted) instead of blocking the loop.
  @Test func aFullQueueNeverBlocks() throws {
    let listener = try NotifyListener()
    let notifier = try SystemdNotifier(address: NotifySocketAddress(listener.notifySocket))
    var refused = 0
    for _ in 0..<100 {
      do throws(NotifyError) {
        try notifier.notifyWatchdog()
      } catch {
        #expect(error.errno == .tryAgain)
        refused += 1
      }
    }
    #expect(refused > 0)
    #expect(notifier.statistics.failed == UInt64(refused))
    #expect(notifier.statistics.sent == UInt64(100 - refused))
    var delivered = 0
    while listener.receive() == "WATCHDOG=1" { delivered += 1 }
    #expect(delivered == 100 - refused)
  }

  @Test(.countsAllocations) func aPingAllocatesNothing() throws {
    #expect(AllocationCounter.isActive)
    let listener = try NotifyListener()
    let notifier = try SystemdNotifier(address: NotifySocketAddress(listener.notifySocket))
    let status = "loop running"
    // Warm up: the first call of each kind may fill the runtime's type-metadata caches.
    try notifier.notifyWatchdog()
    try notifier.notifyStatus(status)
    while listener.receive() != nil {}
    var thrown = 0
    var allocations: UInt64 = 0
    for _ in 0..<25 {
      // Four of each, then drain: a Unix datagram socket queues only a few (max_dgram_qlen),
      // and a full queue is a counted failure, not a wait.
      allocations += AllocationCounter.count {
        for _ in 0..<4 {
          do throws(NotifyError) {
            try notifier.notifyWatchdog()
            try notifier.notifyStatus(status)
          } catch {
            thrown += 1
          }
        }
      }
      while listener.receive() != nil {}
    }
    #expect(allocations == 0)
    #expect(thrown == 0)
    #expect(notifier.statistics.watchdogPings == 101)
  }
}
