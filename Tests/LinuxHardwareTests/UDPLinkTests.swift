import Glibc
import HardwareAbstraction
import LinuxHardware
import SimulatedHardware
import TestSupport
import Testing

// UDPLink over loopback. Every socket binds port 0 and reads back the port the kernel chose, so
// parallel test runs never collide; waiting is poll(2) with a timeout, never a sleep. Loopback
// delivers a datagram within `sendto`, so once a send returned the datagram is queued.

/// A plain UDP socket playing the ground station: bound to `host` (127.0.0.1 or ::1), port 0.
private final class GroundStation {
  let descriptor: CInt
  let family: CInt
  let port: UInt16

  /// `nil` when the address family cannot be used here (no IPv6).
  init?(host: String = "127.0.0.1", port: UInt16 = 0) {
    let family = host.contains(":") ? AF_INET6 : AF_INET
    let number = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard number >= 0 else { return nil }
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    GroundStation.fill(&address, &length, family: family, host: host, port: port)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(number, $0, length) }
    }
    guard bound == 0 else {
      _ = Glibc.close(number)
      return nil
    }
    length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(number, $0, &length) }
    }
    self.family = family
    self.descriptor = number
    self.port = GroundStation.port(of: address)
  }

  deinit { _ = Glibc.close(descriptor) }

  static func fill(
    _ address: inout sockaddr_storage, _ length: inout socklen_t, family: CInt, host: String,
    port: UInt16
  ) {
    withUnsafeMutableBytes(of: &address) { bytes in
      if family == AF_INET6 {
        var v6 = sockaddr_in6()
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        _ = inet_pton(AF_INET6, host, &v6.sin6_addr)
        bytes.storeBytes(of: v6, as: sockaddr_in6.self)
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
      } else {
        var v4 = sockaddr_in()
        v4.sin_family = sa_family_t(AF_INET)
        v4.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, host, &v4.sin_addr)
        bytes.storeBytes(of: v4, as: sockaddr_in.self)
        length = socklen_t(MemoryLayout<sockaddr_in>.size)
      }
    }
  }

  static func port(of address: sockaddr_storage) -> UInt16 {
    withUnsafeBytes(of: address) { bytes in
      CInt(address.ss_family) == AF_INET6
        ? UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
        : UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
    }
  }

  /// Sends `bytes` to `port` on `host` (this socket's own loopback by default).
  @discardableResult
  func send(_ bytes: [UInt8], toPort port: UInt16, host: String? = nil) -> Bool {
    var address = sockaddr_storage()
    var length: socklen_t = 0
    let host = host ?? (family == AF_INET6 ? "::1" : "127.0.0.1")
    GroundStation.fill(&address, &length, family: family, host: host, port: port)
    let sent = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
        bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, target, length) }
      }
    }
    return sent == bytes.count
  }

  /// The next datagram and its sender's port, waiting up to `timeoutMilliseconds`.
  func receive(timeoutMilliseconds: CInt = 2000) -> (bytes: [UInt8], fromPort: UInt16)? {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    guard poll(&entry, 1, timeoutMilliseconds) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 2048)
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let count = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { source in
        buffer.withUnsafeMutableBytes {
          recvfrom(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), source, &length)
        }
      }
    }
    guard count >= 0 else { return nil }
    return (Array(buffer.prefix(count)), GroundStation.port(of: address))
  }

  /// Sets the receive buffer (the kernel doubles it and has a floor of a few kilobytes).
  func setReceiveBuffer(bytes: CInt) {
    var size = bytes
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
  }
}

/// A port nothing listens on: bound once to learn a free number, then closed.
private func closedPort() -> UInt16 {
  GroundStation()!.port
}

/// Whether this machine has IPv6 loopback (containers may run without it).
private func canBindIPv6Loopback() -> Bool {
  GroundStation(host: "::1") != nil
}

/// Receives one datagram from `link` after waiting for it; `nil` when none came.
private func receive(from link: UDPLink, capacity: Int = 512) -> [UInt8]? {
  guard link.waitForDatagram(timeoutMilliseconds: 2000) else { return nil }
  var buffer = [UInt8](repeating: 0, count: capacity)
  let count = buffer.withUnsafeMutableBytes { link.receive(into: $0) }
  return count > 0 ? Array(buffer.prefix(count)) : nil
}

/// The error a typed-throwing call threw, or `nil`.
private func failure<Value>(_ body: () throws(UDPLinkError) -> Value) -> UDPLinkError? {
  do {
    _ = try body()
    return nil
  } catch {
    return error
  }
}

@Suite struct UDPEndpointSpecTests {
  @Test(arguments: [
    ("127.0.0.1:14550", UDPEndpointSpec.Role.sendTo, "127.0.0.1", UInt16(14550)),
    ("localhost:14550", .sendTo, "localhost", 14550),
    ("[::1]:14555", .sendTo, "::1", 14555),
    ("udpout:10.0.0.2:1", .sendTo, "10.0.0.2", 1),
    ("192.168.1.255:65535", .sendTo, "192.168.1.255", 65535),
    ("listen:14550", .listen, "127.0.0.1", 14550),
    ("listen:0", .listen, "127.0.0.1", 0),
    ("listen:0.0.0.0:14550", .listen, "0.0.0.0", 14550),
    ("listen:[::]:14550", .listen, "::", 14550),
    ("udpin:127.0.0.1:14551", .listen, "127.0.0.1", 14551),
  ])
  func parses(text: String, role: UDPEndpointSpec.Role, host: String, port: UInt16) throws {
    let spec = try UDPEndpointSpec.parse(text)
    #expect(spec.role == role)
    #expect(spec.host == host)
    #expect(spec.port == port)
    #expect(spec.text == text)
  }

  @Test func theUsualMistakeGetsTheMessageThatNamesTheFix() {
    let error = failure { () throws(UDPLinkError) in try UDPEndpointSpec.parse("x") }
    #expect(error?.kind == .malformed)
    #expect(
      error?.description
        == "--mavlink-udp 'x': expected HOST:PORT (e.g. 127.0.0.1:14550) or listen:PORT "
        + "(e.g. listen:14550); the port is missing")
  }

  @Test(arguments: [
    ("", UDPLinkError.Kind.malformed, "expected HOST:PORT"),
    ("14550", .malformed, "write 127.0.0.1:14550; to listen on it, listen:14550"),
    (":14550", .malformed, "to listen on port 14550, write listen:14550"),
    ("host:", .malformed, "the port is missing"),
    ("host:abc", .malformed, "'abc' is not a port"),
    ("host:-1", .malformed, "'-1' is not a port"),
    ("::1:14550", .malformed, "an IPv6 address goes in brackets: [::1]:14550"),
    ("[::1]", .malformed, "then the port"),
    ("[::1:14550", .malformed, "closing bracket"),
    ("[127.0.0.1]:14550", .malformed, "then the port"),
    ("a b:14550", .malformed, "expected HOST:PORT"),
    ("listen:", .malformed, "expected HOST:PORT"),
    ("host:70000", .portOutOfRange, "port 70000 is out of range: give 1–65535"),
    ("host:0", .portOutOfRange, "port 0 cannot be sent to"),
    ("listen:123456", .portOutOfRange, "port 123456 is out of range"),
  ])
  func refuses(text: String, kind: UDPLinkError.Kind, message: String) {
    let error = failure { () throws(UDPLinkError) in try UDPEndpointSpec.parse(text) }
    #expect(error?.kind == kind)
    let description = error?.description ?? ""
    #expect(description.hasPrefix("--mavlink-udp '\(text)': "))
    #expect(description.contains(message), "\(description)")
  }

  @Test func aSpecMadeInCodeWritesItsText() {
    #expect(UDPEndpointSpec(role: .sendTo, host: "::1", port: 14550).text == "[::1]:14550")
    #expect(
      UDPEndpointSpec(role: .listen, host: "127.0.0.1", port: 9).text == "listen:127.0.0.1:9")
  }
}

@Suite struct UDPLinkErrorTests {
  @Test func openingErrorsNameTheThingAndTheFix() throws {
    let busy = UDPLinkError(
      .addressInUse, spec: "listen:14550", errno: Errno(rawValue: EADDRINUSE))
    #expect(
      busy.description
        == "--mavlink-udp 'listen:14550': port 14550 is in use by another program: pick "
        + "another or stop it (`ss -ulpn 'sport = :14550'` shows which) [EADDRINUSE (98)]")
    let privileged = UDPLinkError(
      .permissionDenied, spec: "listen:80", errno: Errno(rawValue: EACCES))
    #expect(privileged.description.contains("binding port 80 needs privileges"))
    #expect(privileged.description.contains("pick 1024 or above"))
    let foreign = UDPLinkError(
      .addressNotAvailable, spec: "listen:10.9.9.9:14550", errno: Errno(rawValue: EADDRNOTAVAIL))
    #expect(foreign.description.contains("10.9.9.9 is not an address of this machine"))
    let noIPv6 = UDPLinkError(.addressFamilyNotSupported, spec: "[::1]:14550")
    #expect(noIPv6.description.contains("IPv6 is not available on this machine"))
    let files = UDPLinkError(
      .socketFailed, spec: "listen:14550", errno: Errno(rawValue: EMFILE), detail: "socket")
    #expect(
      files.description
        == "--mavlink-udp 'listen:14550': could not set up the UDP socket (socket): too many "
        + "open files: raise the limit (`ulimit -n`, LimitNOFILE= in the unit) [EMFILE (24)]")
  }

  @Test func aNameThatDoesNotResolveIsAClearError() {
    // `.invalid` is reserved (RFC 6761): it never resolves, and resolvers answer at once.
    let error = failure { () throws(UDPLinkError) in
      try UDPLink(UDPEndpointSpec.parse("no-such-host.invalid:14550"))
    }
    #expect(error?.kind == .nameNotResolved)
    #expect(error?.description.contains("cannot resolve 'no-such-host.invalid'") == true)
    #expect(error?.description.contains("give a numeric address") == true)
  }

  @Test func bracketsHoldOnlyAnIPv6Address() {
    let error = failure { () throws(UDPLinkError) in
      try UDPLink(UDPEndpointSpec.parse("[fe80::zz]:14550"))
    }
    #expect(error?.kind == .malformed)
    #expect(error?.description.contains("'[fe80::zz]' is not an IPv6 address") == true)
  }

  @Test func aPortInUseIsRefusedWithItsNumber() throws {
    let holder = try UDPLink(UDPEndpointSpec.parse("listen:0"))
    let text = "listen:\(holder.localPort)"
    let error = failure { () throws(UDPLinkError) in try UDPLink(UDPEndpointSpec.parse(text)) }
    #expect(error?.kind == .addressInUse)
    #expect(error?.errno == Errno(rawValue: EADDRINUSE))
    #expect(error?.description.contains("port \(holder.localPort) is in use") == true)
  }

  @Test func anAddressThisMachineDoesNotHaveIsRefused() {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a host.
    let error = failure { () throws(UDPLinkError) in
      try UDPLink(UDPEndpointSpec.parse("listen:192.0.2.1:0"))
    }
    #expect(error?.kind == .addressNotAvailable)
  }

  @Test func permissionDeniedOnBindIsSaidAsSuch() throws {
    // Tests usually run as root (CI) or with unprivileged ports lowered (containers), so the
    // kernel's refusal is faked below the seam.
    var calls = UDPSocketCalls.kernel
    calls.bind = { _, _, _ in
      Glibc.errno = EACCES
      return -1
    }
    let error = failure { () throws(UDPLinkError) in
      try UDPLink(UDPEndpointSpec.parse("listen:80"), calls: calls)
    }
    #expect(error?.kind == .permissionDenied)
    #expect(error?.description.contains("binding port 80 needs privileges") == true)
  }
}

@Suite struct UDPLinkTests {
  @Test func sendsToHostAndPortAndTakesTheReply() throws {
    let station = try #require(GroundStation())
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(station.port)"))
    #expect(link.localPort != 0)
    #expect(link.hasPeer)
    #expect(link.peerAddress == "127.0.0.1:\(station.port)")
    #expect(
      link.description
        == "UDP 127.0.0.1:\(station.port) (sending to it from local port \(link.localPort); "
        + "replies accepted from any address)")

    let heartbeat: [UInt8] = [0xFD, 0x09, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00]
    let copy = link
    #expect(copy.send(heartbeat))
    let got = try #require(station.receive())
    #expect(got.bytes == heartbeat)
    #expect(got.fromPort == link.localPort)

    #expect(station.send([1, 2, 3], toPort: link.localPort))
    #expect(receive(from: link) == [1, 2, 3])
    var buffer = [UInt8](repeating: 0, count: 64)
    #expect(buffer.withUnsafeMutableBytes { link.receive(into: $0) } == 0)

    let statistics = link.statistics
    #expect(statistics.datagramsSent == 1)
    #expect(statistics.bytesSent == UInt64(heartbeat.count))
    #expect(statistics.datagramsReceived == 1)
    #expect(statistics.bytesReceived == 3)
    #expect(statistics.datagramsFromOtherAddresses == 0)
    #expect(statistics.sendErrors == 0 && statistics.receiveErrors == 0)
    // Copies share the socket and its counters.
    #expect(copy.statistics == statistics)
  }

  @Test func datagramsFromAnotherAddressAreDeliveredAndCounted() throws {
    let station = try #require(GroundStation())
    let other = try #require(GroundStation())
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(station.port)"))
    #expect(other.send([7, 7], toPort: link.localPort))
    #expect(receive(from: link) == [7, 7])
    #expect(link.statistics.datagramsFromOtherAddresses == 1)
    // The peer stays HOST:PORT.
    #expect(link.send([8]))
    #expect(try #require(station.receive()).bytes == [8])
    #expect(link.peerAddress == "127.0.0.1:\(station.port)")
  }

  @Test func aNameIsResolvedOnceAndPreferablyToIPv4() throws {
    let station = try #require(GroundStation())
    let link = try UDPLink(UDPEndpointSpec.parse("localhost:\(station.port)"))
    #expect(link.peerAddress == "127.0.0.1:\(station.port)")
    #expect(link.description.hasPrefix("UDP localhost:\(station.port) = 127.0.0.1:\(station.port)"))
    #expect(link.send([42]))
    #expect(try #require(station.receive()).bytes == [42])
  }

  @Test func aListeningLinkLearnsItsPeerAndRepliesToIt() throws {
    let link = try UDPLink(UDPEndpointSpec.parse("listen:0"))
    #expect(link.localPort != 0)
    #expect(!link.hasPeer)
    #expect(link.peerAddress == nil)
    #expect(
      link.description
        == "UDP listening on 127.0.0.1:\(link.localPort) (this machine only; "
        + "listen:0.0.0.0:\(link.localPort) listens on every interface; replies go to whoever "
        + "sent the latest datagram, nothing is sent until one arrives)")
    // No peer yet: counted, not sent.
    #expect(!link.send([1]))
    #expect(link.statistics.sendsWithoutPeer == 1)

    let first = try #require(GroundStation())
    #expect(first.send([0xFD, 1], toPort: link.localPort))
    #expect(receive(from: link) == [0xFD, 1])
    #expect(link.hasPeer)
    #expect(link.peerAddress == "127.0.0.1:\(first.port)")
    #expect(link.send([2, 2]))
    #expect(try #require(first.receive()).bytes == [2, 2])
    #expect(link.statistics.peerChanges == 0)

    // A second ground station speaks: replies follow it.
    let second = try #require(GroundStation())
    #expect(second.send([0xFD, 2], toPort: link.localPort))
    #expect(receive(from: link) == [0xFD, 2])
    #expect(link.statistics.peerChanges == 1)
    #expect(link.send([3, 3, 3]))
    #expect(try #require(second.receive()).bytes == [3, 3, 3])
    #expect(first.receive(timeoutMilliseconds: 0) == nil)
    // The first one again: another change.
    #expect(first.send([0xFD, 3], toPort: link.localPort))
    #expect(receive(from: link) == [0xFD, 3])
    #expect(link.statistics.peerChanges == 2)

    let statistics = link.statistics
    #expect(statistics.datagramsSent == 2)
    #expect(statistics.datagramsReceived == 3)
    #expect(statistics.datagramsFromOtherAddresses == 0)
  }

  @Test func aTruncatedDatagramIsCountedAndDroppedWhole() throws {
    let link = try UDPLink(UDPEndpointSpec.parse("listen:0"))
    let station = try #require(GroundStation())
    #expect(station.send([UInt8](repeating: 0xAA, count: 100), toPort: link.localPort))
    #expect(station.send([], toPort: link.localPort))
    #expect(station.send([1, 2, 3, 4, 5], toPort: link.localPort))
    #expect(receive(from: link, capacity: 16) == [1, 2, 3, 4, 5])
    let statistics = link.statistics
    #expect(statistics.truncatedDatagrams == 1)
    // The empty one was received, counted and skipped.
    #expect(statistics.datagramsReceived == 2)
    #expect(statistics.bytesReceived == 5)
  }

  @Test func aGroundStationNotListeningYetIsCountedAndTheLinkKeepsWorking() throws {
    let port = closedPort()
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(port)"))
    // The datagram goes out; the kernel answers "port unreachable" at once (loopback).
    #expect(link.send([1]))
    #expect(link.waitForDatagram(timeoutMilliseconds: 2000))
    // The next send reports it, counts it and sends its own datagram all the same.
    #expect(link.send([2]))
    #expect(link.statistics.sendErrors == 1)
    #expect(link.statistics.datagramsSent == 2)
    // A receive reports the second refusal (and finds nothing to read).
    #expect(link.waitForDatagram(timeoutMilliseconds: 2000))
    var buffer = [UInt8](repeating: 0, count: 64)
    #expect(buffer.withUnsafeMutableBytes { link.receive(into: $0) } == 0)
    #expect(link.statistics.sendErrors == 2)
    #expect(link.statistics.receiveErrors == 0)
    #expect(!link.waitForDatagram(timeoutMilliseconds: 0))

    // The ground station starts: the same link reaches it.
    let station = try #require(GroundStation(port: port), "port \(port) was taken meanwhile")
    #expect(link.send([3]))
    #expect(try #require(station.receive()).bytes == [3])
    #expect(station.send([4], toPort: link.localPort))
    #expect(receive(from: link) == [4])
    #expect(link.statistics.sendErrors == 2)
  }

  @Test func sendingNeverBlocksWhenNobodyReads() throws {
    let station = try #require(GroundStation())
    station.setReceiveBuffer(bytes: 4096)
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(station.port)"))
    let datagram = [UInt8](repeating: 0x55, count: 200)
    let attempts = 20_000
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    datagram.withUnsafeBytes { bytes in
      for _ in 0..<attempts { _ = link.send(bytes) }
    }
    clock_gettime(CLOCK_MONOTONIC, &end)
    let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    // 20 000 sends of 4 MB in all, into a 4 KB buffer nobody drains: they return at once (on
    // loopback the receiver's full buffer drops them; the sender is never told: that is UDP).
    #expect(seconds < 5)
    let statistics = link.statistics
    #expect(
      statistics.datagramsSent + statistics.sendsRefused + statistics.sendErrors
        == UInt64(attempts))
  }

  @Test func refusalsAndErrorsBelowTheSeamAreCounted() throws {
    final class Kernel {
      var sendResults: [CInt] = []  // errno per call; 0 = sent
      var errorReports = 0
    }
    let kernel = Kernel()
    var calls = UDPSocketCalls.kernel
    calls.send = { _, bytes, _, _ in
      let code = kernel.sendResults.isEmpty ? 0 : kernel.sendResults.removeFirst()
      guard code == 0 else {
        Glibc.errno = code
        return -1
      }
      return bytes.count
    }
    calls.receiveError = { _ in
      guard kernel.errorReports > 0 else {
        Glibc.errno = EAGAIN
        return -1
      }
      kernel.errorReports -= 1
      return 0
    }
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:14550"), calls: calls)
    kernel.sendResults = [EAGAIN, ENOBUFS, EMSGSIZE, EINTR, 0]
    #expect(!link.send([1]))  // EAGAIN
    #expect(!link.send([1]))  // ENOBUFS
    #expect(!link.send([1]))  // EMSGSIZE
    #expect(link.send([1]))  // EINTR, then sent
    var statistics = link.statistics
    #expect(statistics.sendsRefused == 2)
    #expect(statistics.sendErrors == 1)
    #expect(statistics.datagramsSent == 1)

    // Three refusals reported at once: counted, then this datagram is sent.
    kernel.sendResults = [ECONNREFUSED, 0]
    kernel.errorReports = 3
    #expect(link.send([1]))
    statistics = link.statistics
    #expect(statistics.sendErrors == 4)
    #expect(statistics.datagramsSent == 2)
    // A refusal, and then the retry finds the buffer full: one of each.
    kernel.sendResults = [ECONNREFUSED, EAGAIN]
    #expect(!link.send([1]))
    statistics = link.statistics
    #expect(statistics.sendErrors == 5)
    #expect(statistics.sendsRefused == 3)
    #expect(kernel.sendResults.isEmpty)
  }

  @Test func aClosedLinkCountsWhatItCannotDo() throws {
    let station = try #require(GroundStation())
    let link = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(station.port)"))
    link.close()
    link.close()
    #expect(!link.isOpen)
    #expect(!link.send([1]))
    var buffer = [UInt8](repeating: 0, count: 16)
    #expect(buffer.withUnsafeMutableBytes { link.receive(into: $0) } == 0)
    #expect(link.statistics.sendErrors == 1)
    #expect(link.statistics.receiveErrors == 1)
  }

  @Test(.enabled(if: canBindIPv6Loopback(), "::1 cannot be bound on this machine (no IPv6)"))
  func ipv6LoopbackBothWays() throws {
    let station = try #require(GroundStation(host: "::1"))
    let link = try UDPLink(UDPEndpointSpec.parse("[::1]:\(station.port)"))
    #expect(link.peerAddress == "[::1]:\(station.port)")
    #expect(link.send([6, 6]))
    let got = try #require(station.receive())
    #expect(got.bytes == [6, 6])
    #expect(got.fromPort == link.localPort)
    #expect(station.send([9], toPort: link.localPort))
    #expect(receive(from: link) == [9])
    #expect(link.statistics.datagramsFromOtherAddresses == 0)

    let listener = try UDPLink(UDPEndpointSpec.parse("listen:[::1]:0"))
    #expect(listener.description.hasPrefix("UDP listening on [::1]:\(listener.localPort) ("))
    #expect(station.send([5], toPort: listener.localPort))
    #expect(receive(from: listener) == [5])
    #expect(listener.peerAddress == "[::1]:\(station.port)")
    #expect(listener.send([4]))
    #expect(try #require(station.receive()).bytes == [4])
  }
}

extension UDPLinkTests {
  /// `listen:[::]:PORT` is dual-stack (Linux's default, IPV6_V6ONLY off): an IPv4 ground
  /// station reaches it and gets the replies.
  @Test(.enabled(if: canBindIPv6Loopback(), "::1 cannot be bound on this machine (no IPv6)"))
  func listeningOnTheIPv6AnyAddressTakesIPv4Too() throws {
    let link = try UDPLink(UDPEndpointSpec.parse("listen:[::]:0"))
    #expect(link.description.hasPrefix("UDP listening on [::]:\(link.localPort) (every interface"))
    let station = try #require(GroundStation())
    #expect(station.send([0xFD, 4], toPort: link.localPort))
    #expect(receive(from: link) == [0xFD, 4])
    #expect(link.peerAddress == "[::ffff:127.0.0.1]:\(station.port)")
    #expect(link.send([1, 2]))
    #expect(try #require(station.receive()).bytes == [1, 2])
  }
}

@Suite(.countsAllocations) struct UDPLinkAllocationTests {
  @Test func sendingAndReceivingDoNotAllocate() throws {
    let link = try UDPLink(UDPEndpointSpec.parse("listen:0"))
    let station = try #require(GroundStation())
    let other = try #require(GroundStation())
    let frame = [UInt8](repeating: 0xFD, count: 40)
    let big = [UInt8](repeating: 0xEE, count: 600)
    var inbox = [UInt8](repeating: 0, count: 280)
    var received = 0
    var allocations: UInt64 = 0
    let toLink = station.address(ofPort: link.localPort)
    frame.withUnsafeBytes { frame in
      big.withUnsafeBytes { big in
        inbox.withUnsafeMutableBytes { inbox in
          func exchange() {
            station.send(frame, to: toLink)
            other.send(frame, to: toLink)  // a peer change
            station.send(big, to: toLink)  // truncated
            while link.receive(into: inbox) > 0 { received += 1 }
            _ = link.send(frame)  // to `other`, the latest sender
            _ = other.receive(into: inbox)
          }
          // Every path once first: the runtime instantiates some metadata lazily, once per
          // process, which is not a per-call cost.
          for _ in 0..<10 { exchange() }
          allocations = AllocationCounter.count {
            for _ in 0..<500 { exchange() }
          }
        }
      }
    }
    #expect(allocations == 0)
    #expect(received == 2 * 510)
    #expect(link.statistics.truncatedDatagrams == 510)
    #expect(link.statistics.peerChanges > 0)

    // The refused path: a peer that went away.
    let refused = try UDPLink(UDPEndpointSpec.parse("127.0.0.1:\(closedPort())"))
    frame.withUnsafeBytes { frame in
      inbox.withUnsafeMutableBytes { inbox in
        for _ in 0..<10 {
          _ = refused.send(frame)
          _ = refused.receive(into: inbox)
        }
        allocations = AllocationCounter.count {
          for _ in 0..<500 {
            _ = refused.send(frame)
            _ = refused.receive(into: inbox)
          }
        }
      }
    }
    #expect(allocations == 0)
    #expect(refused.statistics.sendErrors > 0)
  }
}

@Suite(.countsAllocations) struct MemoryDatagramLinkAllocationTests {
  /// The simulated link the loop tests use counts without allocating once `recordsSent` is off
  /// and the datagrams it delivers were injected beforehand.
  @Test func countingSendsAndReceivingDoNotAllocate() {
    let link = MemoryDatagramLink(peer: nil, learnsPeer: true)
    link.recordsSent = false
    for index in 0..<1000 {
      link.inject([0xFD, UInt8(index & 0xFF)], from: "station \(index % 3)")
    }
    link.inject([UInt8](repeating: 0, count: 600))
    let frame = [UInt8](repeating: 0xFD, count: 40)
    var inbox = [UInt8](repeating: 0, count: 280)
    var received = 0
    var allocations: UInt64 = 0
    // Every path once first, on another link: the runtime instantiates some metadata lazily,
    // once per process, which is not a per-call cost.
    let warmUp = MemoryDatagramLink(peer: nil, learnsPeer: true)
    warmUp.recordsSent = false
    warmUp.inject([1], from: "a")
    warmUp.inject([2], from: "b")
    warmUp.inject([UInt8](repeating: 0, count: 600))
    frame.withUnsafeBytes { frame in
      inbox.withUnsafeMutableBytes { inbox in
        _ = warmUp.send(frame)
        while warmUp.receive(into: inbox) > 0 { _ = warmUp.send(frame) }
        _ = link.send(frame)  // no peer yet
        allocations = AllocationCounter.count {
          while link.receive(into: inbox) > 0 {
            received += 1
            _ = link.send(frame)
          }
        }
      }
    }
    #expect(allocations == 0)
    #expect(received == 1000)
    #expect(link.statistics.datagramsSent == 1000)
    #expect(link.statistics.truncatedDatagrams == 1)
    #expect(link.statistics.peerChanges == 999)
  }
}

extension GroundStation {
  /// This socket's loopback address with `port`, made once (for the allocation test: making
  /// it converts a string).
  fileprivate func address(ofPort port: UInt16) -> (storage: sockaddr_storage, length: socklen_t) {
    var address = sockaddr_storage()
    var length: socklen_t = 0
    GroundStation.fill(
      &address, &length, family: family, host: family == AF_INET6 ? "::1" : "127.0.0.1",
      port: port)
    return (address, length)
  }

  /// Sends `bytes` to `address` without allocating.
  fileprivate func send(
    _ bytes: UnsafeRawBufferPointer, to address: (storage: sockaddr_storage, length: socklen_t)
  ) {
    var storage = address.storage
    _ = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, address.length)
      }
    }
  }

  /// Takes one datagram without waiting (for the allocation test).
  fileprivate func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
  }
}
