import Glibc
import HardwareAbstraction
import POSIXSupport

/// A `DatagramLink` over a UDP socket (IPv4 or IPv6): MAVLink to a ground station or a router
/// on a companion computer (`plumb run --mavlink-udp HOST:PORT`).
///
/// Two roles, chosen by the text `UDPEndpointSpec.parse(_:)` reads:
/// - `HOST:PORT` sends every datagram to HOST:PORT from an ephemeral local port, and accepts
///   datagrams from any address (those not from HOST:PORT are counted in
///   `datagramsFromOtherAddresses`). MAVProxy's `--master=udpin:127.0.0.1:14550`, QGroundControl
///   and mavlink-router's UDP server endpoints listen for this.
/// - `listen:PORT` or `listen:ADDRESS:PORT` binds ADDRESS:PORT (127.0.0.1 when no address is
///   given: only this machine can reach it) and replies to the address that most recently sent
///   it a datagram; until one arrives it has no peer and `send` counts `sendsWithoutPeer`.
///   MAVProxy's `--master=udpout:127.0.0.1:PORT` talks to this.
///
/// **Never blocks, never allocates per call.** The socket is non-blocking (`SOCK_NONBLOCK`,
/// and `MSG_DONTWAIT` on every call), the peer's and the sender's addresses are held inline
/// (`sockaddr_storage`), and names are resolved once, at `init`.
///
/// **Refused datagrams.** UDP does not say whether anyone received a datagram, but the kernel
/// passes on the ICMP "port unreachable" a peer's host answers when nothing listens there: the
/// socket is opened with `IP_RECVERR` / `IPV6_RECVERR`, so such an error is reported
/// (`ECONNREFUSED`) on the next `send` or `receive` after it arrives. It is about a datagram
/// sent earlier, so it is counted in `sendErrors` and the call goes on (a `send` tries its own
/// datagram once more). The errors are read off the socket's error queue as they are reported,
/// so a ground station that is away for hours leaves nothing behind in the receive buffer.
///
/// The socket is not bound with `SO_REUSEADDR`: a second program on the same port is an error
/// at start-up (`addressInUse`), not two readers silently sharing the datagrams. IPv4 sockets
/// may send to broadcast addresses (`SO_BROADCAST`), as mavlink-router's do.
///
/// A value that refers to one socket: copies share it, its peer and its counters (like a file
/// handle). It belongs to the loop's thread, so it is deliberately not `Sendable`.
public struct UDPLink: DatagramLink {
  /// What the link was opened from.
  public let spec: UDPEndpointSpec
  /// The local port the socket is bound to (the ephemeral one the kernel chose when sending to
  /// HOST:PORT, or for `listen:0`).
  public let localPort: UInt16
  /// For start-up logs: where datagrams go and which are accepted.
  public let description: String
  private let socket: UDPSocket

  /// Opens the socket `spec` describes: resolves its host (once, here), binds, and for
  /// `HOST:PORT` fixes the peer. Throws errors that name the endpoint and say what to do.
  public init(_ spec: UDPEndpointSpec) throws(UDPLinkError) {
    try self.init(spec, calls: .kernel)
  }

  /// `init(_:)` with the kernel calls replaced (tests).
  package init(_ spec: UDPEndpointSpec, calls: UDPSocketCalls) throws(UDPLinkError) {
    self.spec = spec
    let address = try SocketAddress.resolve(spec)
    let family = CInt(address.storage.ss_family)
    let number = Glibc.socket(
      family,
      Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
      Int32(IPPROTO_UDP))
    guard number >= 0 else {
      let code = Errno.current
      if code.rawValue == EAFNOSUPPORT {
        throw UDPLinkError(.addressFamilyNotSupported, spec: spec.text, errno: code)
      }
      throw UDPLinkError(.socketFailed, spec: spec.text, errno: code, detail: "socket")
    }
    let socket = UDPSocket(
      descriptor: FileDescriptor(taking: number), role: spec.role, calls: calls)
    try socket.configure(family: family, spec: spec)
    switch spec.role {
    case .sendTo:
      try socket.bind(SocketAddress.any(family: family), spec: spec)
      socket.setPeer(address)
    case .listen:
      try socket.bind(address, spec: spec)
    }
    self.socket = socket
    localPort = try socket.boundPort(spec: spec)
    description = UDPLink.describe(spec, address: address, localPort: localPort)
  }

  // MARK: DatagramLink

  public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
    socket.send(bytes)
  }

  public func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    socket.receive(into: buffer)
  }

  public var statistics: DatagramStatistics { socket.statistics }

  /// Sends an array's bytes as one datagram (the `DatagramLink` convenience is `mutating`,
  /// which a link held in a `let` cannot call). Allocation-free.
  public func send(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { socket.send($0) }
  }

  // MARK: Beyond the protocol

  /// Whether the socket is open.
  public var isOpen: Bool { socket.descriptor.isOpen }

  /// Whether there is an address to send to: always when sending to HOST:PORT; when listening,
  /// once a datagram has arrived.
  public var hasPeer: Bool { socket.hasPeer }

  /// The current peer as text (`127.0.0.1:14550`, `[::1]:14550`), `nil` before there is one.
  /// Allocates: for logs, not for the loop.
  public var peerAddress: String? {
    socket.hasPeer ? socket.peer.text : nil
  }

  /// Waits up to `timeoutMilliseconds` (`poll(2)`) for a datagram, or an error report, to be
  /// waiting; true when one is. For tools and tests: the loop never waits on the link.
  public func waitForDatagram(timeoutMilliseconds: Int32) -> Bool {
    do {
      let events = try socket.descriptor.poll(
        for: .input, timeoutMilliseconds: timeoutMilliseconds)
      return !events.isEmpty
    } catch {
      return false
    }
  }

  /// Closes the socket. Idempotent; later sends and receives fail and are counted
  /// (`sendErrors`, `receiveErrors`: `EBADF`).
  public func close() {
    socket.descriptor.close()
  }

  private static func describe(
    _ spec: UDPEndpointSpec, address: SocketAddress, localPort: UInt16
  ) -> String {
    var bound = address
    bound.port = localPort
    let numeric = bound.text
    switch spec.role {
    case .sendTo:
      let named = address.text == spec.hostAndPort ? "" : " = \(address.text)"
      return "UDP \(spec.hostAndPort)\(named) (sending to it from local port \(localPort); "
        + "replies accepted from any address)"
    case .listen:
      let reach: String
      if address.isLoopback {
        reach =
          "this machine only; listen:0.0.0.0:\(localPort) listens on every interface"
      } else if address.isAny {
        reach = "every interface: reachable from the network"
      } else {
        reach = "this address only"
      }
      return "UDP listening on \(numeric) (\(reach); replies go to whoever sent the latest "
        + "datagram, nothing is sent until one arrives)"
    }
  }
}

/// What `--mavlink-udp` asked for: where to send, or where to listen. Parsed from text by
/// `parse(_:)`, opened by `UDPLink.init(_:)` (which resolves the host).
///
/// The syntax (`HOST` is a numeric IPv4 address, a numeric IPv6 address in brackets, or a name
/// such as `localhost`; `PORT` is 1–65535):
/// - `HOST:PORT`, or `udpout:HOST:PORT`: send to HOST:PORT, accept replies from any address.
///   `127.0.0.1:14550`, `[::1]:14550`, `localhost:14550`, `192.168.1.255:14550` (broadcast).
/// - `listen:PORT`, `listen:HOST:PORT`, or `udpin:` for `listen:`: listen on HOST:PORT
///   (127.0.0.1 when HOST is left out), reply to whoever sent last. `listen:14550`,
///   `listen:0.0.0.0:14550` (every IPv4 interface), `listen:[::]:14550`. Port 0 asks the
///   kernel for any free port (`UDPLink.localPort` says which).
public struct UDPEndpointSpec: Hashable, Sendable, CustomStringConvertible {
  /// Which end of the conversation the link is.
  public enum Role: String, Hashable, Sendable {
    /// `HOST:PORT`: sends to HOST:PORT (mavlink-router's and MAVProxy's "udpout").
    case sendTo
    /// `listen:[HOST:]PORT`: binds HOST:PORT and replies to the latest sender ("udpin").
    case listen
  }

  /// The address a listening link binds when none is given: this machine only.
  public static let defaultListenHost = "127.0.0.1"

  public var role: Role
  /// The host without brackets: `127.0.0.1`, `::1`, `0.0.0.0`, `localhost`.
  public var host: String
  public var port: UInt16
  /// The text as given, for messages.
  public var text: String

  public init(role: Role, host: String, port: UInt16, text: String? = nil) {
    self.role = role
    self.host = host
    self.port = port
    self.text = text ?? UDPEndpointSpec.compose(role: role, host: host, port: port)
  }

  public var description: String { text }

  /// `HOST:PORT` as written back: IPv6 addresses in brackets.
  public var hostAndPort: String {
    (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
  }

  /// Whether `host` was written in brackets (a numeric IPv6 address, nothing else).
  var isBracketed: Bool { host.contains(":") }

  private static func compose(role: Role, host: String, port: UInt16) -> String {
    let endpoint = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    return role == .listen ? "listen:" + endpoint : endpoint
  }

  /// Reads `HOST:PORT`, `listen:PORT` or `listen:HOST:PORT` (see the type's documentation).
  /// Checks the form and the port; the host is resolved when the link opens.
  public static func parse(_ text: String) throws(UDPLinkError) -> UDPEndpointSpec {
    var rest = Substring(text)
    var role = Role.sendTo
    for (prefix, prefixRole) in [
      ("listen:", Role.listen), ("udpin:", .listen), ("udpout:", .sendTo),
    ]
    where rest.hasPrefix(prefix) {
      rest = rest.dropFirst(prefix.count)
      role = prefixRole
      break
    }
    func malformed(_ hint: String? = nil) -> UDPLinkError {
      UDPLinkError(.malformed, spec: text, detail: hint)
    }
    guard !rest.isEmpty, !rest.contains(where: { $0 == " " || $0 == "\t" || $0 == "/" }) else {
      throw malformed()
    }
    let host: Substring
    let portText: Substring
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else {
        throw malformed("an IPv6 address in brackets needs its closing bracket: [::1]:14550")
      }
      host = rest[rest.index(after: rest.startIndex)..<close]
      let after = rest[rest.index(after: close)...]
      guard after.hasPrefix(":"), !host.isEmpty, host.contains(":") else {
        throw malformed("an IPv6 address goes in brackets, then the port: [::1]:14550")
      }
      portText = after.dropFirst()
    } else if let colon = rest.lastIndex(of: ":") {
      host = rest[..<colon]
      portText = rest[rest.index(after: colon)...]
      guard !host.contains(":") else {
        throw malformed("an IPv6 address goes in brackets: [::1]:14550")
      }
      guard !host.isEmpty else {
        throw malformed(
          role == .listen
            ? nil : "to listen on port \(portText), write listen:\(portText)")
      }
    } else if role == .listen {
      host = Substring(defaultListenHost)
      portText = rest
    } else {
      let hint =
        rest.allSatisfy(isASCIIDigit)
        ? "to send to port \(rest) on this machine write 127.0.0.1:\(rest); to listen on it, "
          + "listen:\(rest)"
        : "the port is missing"
      throw malformed(hint)
    }
    guard !portText.isEmpty, portText.allSatisfy(isASCIIDigit) else {
      throw malformed(portText.isEmpty ? "the port is missing" : "'\(portText)' is not a port")
    }
    guard portText.count <= 5, let value = Int(portText), value <= 65535 else {
      throw UDPLinkError(.portOutOfRange, spec: text, detail: String(portText))
    }
    guard value > 0 || role == .listen else {
      throw UDPLinkError(.portOutOfRange, spec: text, detail: String(portText))
    }
    return UDPEndpointSpec(role: role, host: String(host), port: UInt16(value), text: text)
  }
}

/// Whether `character` is 0–9 (`Character.isNumber` takes other scripts' digits too).
private func isASCIIDigit(_ character: Character) -> Bool {
  ("0"..."9").contains(character)
}

/// Why a UDP link could not be set up. Every message names the endpoint as given
/// (`--mavlink-udp 'TEXT'`, the one place a person writes one) and says what to do.
public struct UDPLinkError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// Not `HOST:PORT` or `listen:[HOST:]PORT`.
    case malformed
    /// A port outside 1–65535 (0 only for `listen:`, where it means any free port).
    case portOutOfRange
    /// The host name did not resolve (`getaddrinfo`).
    case nameNotResolved
    /// The port is bound by another socket (`EADDRINUSE`).
    case addressInUse
    /// Binding needs privileges (`EACCES`: ports below 1024).
    case permissionDenied
    /// The address to listen on is not one of this machine's (`EADDRNOTAVAIL`).
    case addressNotAvailable
    /// IPv6 (or IPv4) is disabled on this machine (`EAFNOSUPPORT`).
    case addressFamilyNotSupported
    /// Any other failure of `socket`, `setsockopt`, `bind` or `getsockname`.
    case socketFailed
  }

  public var kind: Kind
  /// The endpoint as written.
  public var spec: String
  public var errno: Errno?
  /// What exactly: the port text, the host that did not resolve, a hint on the syntax, the
  /// resolver's message, the system call that failed.
  public var detail: String?

  public init(_ kind: Kind, spec: String, errno: Errno? = nil, detail: String? = nil) {
    self.kind = kind
    self.spec = spec
    self.errno = errno
    self.detail = detail
  }

  /// What happened and what to do, for a person.
  public var description: String {
    var text = "--mavlink-udp '\(spec)': " + explanation
    if let errno { text += " [\(socketErrnoName(errno))]" }
    return text
  }

  private var explanation: String {
    let endpoint = try? UDPEndpointSpec.parse(spec)
    let port = endpoint.map { String($0.port) } ?? "the port"
    let host = endpoint?.host ?? "the address"
    switch kind {
    case .malformed:
      return "expected HOST:PORT (e.g. 127.0.0.1:14550) or listen:PORT (e.g. listen:14550)"
        + (detail.map { "; " + $0 } ?? "")
    case .portOutOfRange:
      let value = detail ?? port
      return value == "0"
        ? "port 0 cannot be sent to: give the port the ground station listens on, 1–65535 "
          + "(usually 14550)"
        : "port \(value) is out of range: give 1–65535 (ground stations listen on 14550)"
    case .nameNotResolved:
      return "cannot resolve '\(host)'" + (detail.map { " (\($0))" } ?? "")
        + ": check the name, or give a numeric address (e.g. 127.0.0.1 or [::1])"
    case .addressInUse:
      return "port \(port) is in use by another program: pick another or stop it "
        + "(`ss -ulpn 'sport = :\(port)'` shows which)"
    case .permissionDenied:
      return "binding port \(port) needs privileges (ports below 1024 do): pick 1024 or above "
        + "(ground stations use 14550), or grant plumb CAP_NET_BIND_SERVICE"
    case .addressNotAvailable:
      return "\(host) is not an address of this machine: give one it has (`ip -brief address`), "
        + "127.0.0.1 for this machine only, or 0.0.0.0 for every interface"
    case .addressFamilyNotSupported:
      return host.contains(":")
        ? "IPv6 is not available on this machine: give an IPv4 address (e.g. 127.0.0.1)"
        : "IPv4 is not available on this machine: give an IPv6 address (e.g. [::1])"
    case .socketFailed:
      let call: String = detail.map { " (\($0))" } ?? ""
      let code = errno?.rawValue ?? 0
      let hint: String =
        code == EMFILE || code == ENFILE
        ? ": too many open files: raise the limit (`ulimit -n`, LimitNOFILE= in the unit)" : ""
      return "could not set up the UDP socket" + call + hint
    }
  }
}

/// The symbolic name of the errnos sockets report (`Errno`'s table has the file and device ones).
private func socketErrnoName(_ errno: Errno) -> String {
  let name: String? =
    switch errno.rawValue {
    case EADDRINUSE: "EADDRINUSE"
    case EADDRNOTAVAIL: "EADDRNOTAVAIL"
    case EAFNOSUPPORT: "EAFNOSUPPORT"
    case ECONNREFUSED: "ECONNREFUSED"
    case ENOBUFS: "ENOBUFS"
    case EMSGSIZE: "EMSGSIZE"
    case ENETUNREACH: "ENETUNREACH"
    case EHOSTUNREACH: "EHOSTUNREACH"
    case EMFILE: "EMFILE"
    case ENFILE: "ENFILE"
    default: nil
    }
  guard let name else { return errno.description }
  return "\(name) (\(errno.rawValue))"
}

/// The kernel calls `UDPLink` makes after creating its socket, as replaceable closures: the seam
/// below which tests fake a full buffer or a refusal. Each returns ≥ 0, or -1 with `errno` set.
package struct UDPSocketCalls {
  /// `bind(2)`.
  package var bind:
    (_ descriptor: CInt, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> CInt
  /// `sendto(2)` with `MSG_DONTWAIT | MSG_NOSIGNAL`: the bytes sent.
  package var send:
    (
      _ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, _ address: UnsafePointer<sockaddr>,
      _ length: socklen_t
    ) -> Int
  /// `recvfrom(2)` with `MSG_DONTWAIT | MSG_TRUNC`: the datagram's whole length (more than
  /// `buffer.count` when it was truncated).
  package var receive:
    (
      _ descriptor: CInt, _ buffer: UnsafeMutableRawBufferPointer,
      _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
    ) -> Int
  /// `recvmsg(2)` with `MSG_ERRQUEUE | MSG_DONTWAIT`: takes one report off the socket's error
  /// queue (≥ 0), or -1 (`EAGAIN` when the queue is empty).
  package var receiveError: (_ descriptor: CInt) -> Int

  package init(
    bind:
      @escaping (_ descriptor: CInt, _ address: UnsafePointer<sockaddr>, _ length: socklen_t)
      -> CInt,
    send:
      @escaping (
        _ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, _ address: UnsafePointer<sockaddr>,
        _ length: socklen_t
      ) -> Int,
    receive:
      @escaping (
        _ descriptor: CInt, _ buffer: UnsafeMutableRawBufferPointer,
        _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
      ) -> Int,
    receiveError: @escaping (_ descriptor: CInt) -> Int
  ) {
    self.bind = bind
    self.send = send
    self.receive = receive
    self.receiveError = receiveError
  }

  /// The real thing.
  package static var kernel: UDPSocketCalls {
    UDPSocketCalls(
      bind: { descriptor, address, length in Glibc.bind(descriptor, address, length) },
      send: { descriptor, bytes, address, length in
        let flags = Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)
        return sendto(descriptor, bytes.baseAddress, bytes.count, flags, address, length)
      },
      receive: { descriptor, buffer, address, length in
        let flags = Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC)
        return recvfrom(descriptor, buffer.baseAddress, buffer.count, flags, address, length)
      },
      receiveError: { descriptor in
        // Only taking the report off the queue matters, not its copy of the datagram or its
        // details: one byte of buffer, no control buffer (recvmsg marks both truncated). Not
        // zero bytes: qemu-user answers a recvmsg without buffers with 0 and does not make it.
        var byte: UInt8 = 0
        return withUnsafeMutablePointer(to: &byte) { byte in
          var vector = iovec(iov_base: UnsafeMutableRawPointer(byte), iov_len: 1)
          return withUnsafeMutablePointer(to: &vector) { vector in
            var message = msghdr()
            message.msg_iov = vector
            message.msg_iovlen = 1
            return recvmsg(descriptor, &message, Int32(MSG_ERRQUEUE) | Int32(MSG_DONTWAIT))
          }
        }
      })
  }
}

/// A socket address held inline (`sockaddr_storage`: room for IPv4 and IPv6).
struct SocketAddress {
  var storage = sockaddr_storage()
  var length: socklen_t = 0

  var family: CInt { CInt(storage.ss_family) }

  /// The any address (`0.0.0.0` or `::`) of `family`, port 0: what a sending link binds.
  static func any(family: CInt) -> SocketAddress {
    var address = SocketAddress()
    address.storage.ss_family = sa_family_t(family)
    address.length = socklen_t(
      family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    return address
  }

  /// Resolves `spec.host` with `getaddrinfo` (numeric addresses need no lookup); a name with
  /// both kinds of address is used as IPv4, what ground stations listen on by default.
  static func resolve(_ spec: UDPEndpointSpec) throws(UDPLinkError) -> SocketAddress {
    var hints = addrinfo()
    hints.ai_family = spec.isBracketed ? AF_INET6 : AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_protocol = Int32(IPPROTO_UDP)
    hints.ai_flags = spec.isBracketed ? AI_NUMERICHOST : 0
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(spec.host, nil, &hints, &list)
    guard status == 0, let list else {
      if spec.isBracketed {
        throw UDPLinkError(
          .malformed, spec: spec.text, detail: "'[\(spec.host)]' is not an IPv6 address")
      }
      let reason = String(cString: gai_strerror(status))
      throw UDPLinkError(
        .nameNotResolved, spec: spec.text,
        errno: status == EAI_SYSTEM ? Errno.current : nil, detail: reason)
    }
    defer { freeaddrinfo(list) }
    var chosen: UnsafeMutablePointer<addrinfo>?
    var entry: UnsafeMutablePointer<addrinfo>? = list
    while let current = entry {
      let family = current.pointee.ai_family
      if family == AF_INET {
        chosen = current
        break
      }
      if family == AF_INET6 && chosen == nil { chosen = current }
      entry = current.pointee.ai_next
    }
    guard let chosen, let source = chosen.pointee.ai_addr,
      Int(chosen.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size
    else {
      throw UDPLinkError(.nameNotResolved, spec: spec.text, detail: "no IPv4 or IPv6 address")
    }
    var address = SocketAddress()
    address.length = chosen.pointee.ai_addrlen
    withUnsafeMutableBytes(of: &address.storage) { target in
      target.copyMemory(
        from: UnsafeRawBufferPointer(start: source, count: Int(chosen.pointee.ai_addrlen)))
    }
    address.port = spec.port
    return address
  }

  /// The port, in host byte order.
  var port: UInt16 {
    get {
      withUnsafeBytes(of: storage) { bytes in
        switch CInt(storage.ss_family) {
        case AF_INET: UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port)
        case AF_INET6: UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port)
        default: 0
        }
      }
    }
    set {
      let family = CInt(storage.ss_family)
      withUnsafeMutableBytes(of: &storage) { bytes in
        switch family {
        case AF_INET:
          var address = bytes.load(as: sockaddr_in.self)
          address.sin_port = newValue.bigEndian
          bytes.storeBytes(of: address, as: sockaddr_in.self)
        case AF_INET6:
          var address = bytes.load(as: sockaddr_in6.self)
          address.sin6_port = newValue.bigEndian
          bytes.storeBytes(of: address, as: sockaddr_in6.self)
        default: break
        }
      }
    }
  }

  /// Whether `self` and `other` are the same address and port (family, address bytes, port and,
  /// for IPv6, scope; the flow label and padding are not compared). Does not allocate.
  func isSameEndpoint(as other: SocketAddress) -> Bool {
    guard storage.ss_family == other.storage.ss_family else { return false }
    return withUnsafeBytes(of: storage) { mine in
      withUnsafeBytes(of: other.storage) { theirs in
        switch CInt(storage.ss_family) {
        case AF_INET:
          let a = mine.load(as: sockaddr_in.self)
          let b = theirs.load(as: sockaddr_in.self)
          return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr
        case AF_INET6:
          let a = mine.load(as: sockaddr_in6.self)
          let b = theirs.load(as: sockaddr_in6.self)
          guard a.sin6_port == b.sin6_port, a.sin6_scope_id == b.sin6_scope_id else {
            return false
          }
          return withUnsafeBytes(of: a.sin6_addr) { x in
            withUnsafeBytes(of: b.sin6_addr) { y in x.elementsEqual(y) }
          }
        default:
          return false
        }
      }
    }
  }

  /// The address bytes (4 or 16), for the tests below.
  private var addressBytes: [UInt8] {
    withUnsafeBytes(of: storage) { bytes in
      switch CInt(storage.ss_family) {
      case AF_INET:
        let address = bytes.load(as: sockaddr_in.self)
        return withUnsafeBytes(of: address.sin_addr) { Array($0) }
      case AF_INET6:
        let address = bytes.load(as: sockaddr_in6.self)
        return withUnsafeBytes(of: address.sin6_addr) { Array($0) }
      default:
        return []
      }
    }
  }

  /// 127.0.0.0/8 or ::1.
  var isLoopback: Bool {
    let bytes = addressBytes
    switch family {
    case AF_INET: return bytes.first == 127
    case AF_INET6: return bytes == [UInt8](repeating: 0, count: 15) + [1]
    default: return false
    }
  }

  /// 0.0.0.0 or ::.
  var isAny: Bool {
    let bytes = addressBytes
    return !bytes.isEmpty && bytes.allSatisfy { $0 == 0 }
  }

  /// `127.0.0.1:14550` or `[::1]:14550` (`inet_ntop`). Allocates.
  var text: String {
    var characters = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let family = self.family
    var bytes = addressBytes
    let converted = bytes.withUnsafeMutableBytes { source in
      characters.withUnsafeMutableBufferPointer { target in
        inet_ntop(family, source.baseAddress, target.baseAddress, socklen_t(target.count))
      }
    }
    guard converted != nil else { return "?" }
    let host = String(
      decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
      as: UTF8.self)
    return (family == AF_INET6 ? "[\(host)]" : host) + ":\(port)"
  }
}

/// The socket and everything that changes with it; shared by copies of a `UDPLink`.
private final class UDPSocket {
  var descriptor: FileDescriptor
  let role: UDPEndpointSpec.Role
  let calls: UDPSocketCalls
  var statistics = DatagramStatistics()
  /// Where datagrams go (valid when `hasPeer`).
  var peer = SocketAddress()
  var hasPeer = false

  init(descriptor: consuming FileDescriptor, role: UDPEndpointSpec.Role, calls: UDPSocketCalls) {
    self.descriptor = descriptor
    self.role = role
    self.calls = calls
  }

  /// Error reports on (so a refused datagram is seen), broadcast allowed for IPv4 senders.
  func configure(family: CInt, spec: UDPEndpointSpec) throws(UDPLinkError) {
    if family == AF_INET6 {
      try enable(level: Int32(IPPROTO_IPV6), option: IPV6_RECVERR, spec: spec)
      // IPv4 peers of a dual-stack socket report through the IPv4 option (best effort).
      var on: CInt = 1
      _ = setsockopt(
        descriptor.rawValue, Int32(IPPROTO_IP), IP_RECVERR, &on,
        socklen_t(MemoryLayout<CInt>.size))
    } else {
      try enable(level: Int32(IPPROTO_IP), option: IP_RECVERR, spec: spec)
      if spec.role == .sendTo {
        try enable(level: SOL_SOCKET, option: SO_BROADCAST, spec: spec)
      }
    }
  }

  private func enable(level: CInt, option: CInt, spec: UDPEndpointSpec) throws(UDPLinkError) {
    var on: CInt = 1
    let result = setsockopt(
      descriptor.rawValue, level, option, &on, socklen_t(MemoryLayout<CInt>.size))
    guard result == 0 else {
      throw UDPLinkError(.socketFailed, spec: spec.text, errno: .current, detail: "setsockopt")
    }
  }

  func bind(_ address: SocketAddress, spec: UDPEndpointSpec) throws(UDPLinkError) {
    var address = address
    let number = descriptor.rawValue
    let length = address.length
    let bind = calls.bind
    let result = withUnsafePointer(to: &address.storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(number, $0, length) }
    }
    guard result != 0 else { return }
    let code = Errno.current
    let kind: UDPLinkError.Kind
    switch code.rawValue {
    case EADDRINUSE: kind = .addressInUse
    case EACCES, EPERM: kind = .permissionDenied
    case EADDRNOTAVAIL: kind = .addressNotAvailable
    case EAFNOSUPPORT: kind = .addressFamilyNotSupported
    default: kind = .socketFailed
    }
    throw UDPLinkError(kind, spec: spec.text, errno: code, detail: "bind")
  }

  /// The port the socket is bound to (`getsockname`).
  func boundPort(spec: UDPEndpointSpec) throws(UDPLinkError) -> UInt16 {
    var bound = SocketAddress()
    bound.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let number = descriptor.rawValue
    let result = withUnsafeMutablePointer(to: &bound.storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(number, $0, &bound.length)
      }
    }
    guard result == 0 else {
      throw UDPLinkError(.socketFailed, spec: spec.text, errno: .current, detail: "getsockname")
    }
    return bound.port
  }

  func setPeer(_ address: SocketAddress) {
    peer = address
    hasPeer = true
  }

  // MARK: Sending

  func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard hasPeer else {
      statistics.sendsWithoutPeer += 1
      return false
    }
    guard let failure = attemptSend(bytes) else { return true }
    if isRefusal(failure) {
      statistics.sendsRefused += 1
      return false
    }
    let earlier = reportedEarlierErrors(failure)
    guard earlier > 0 else {
      statistics.sendErrors += 1
      return false
    }
    // The call reported what became of datagrams sent before; this one has not been tried.
    statistics.sendErrors += earlier
    guard let second = attemptSend(bytes) else { return true }
    if isRefusal(second) {
      statistics.sendsRefused += 1
    } else {
      statistics.sendErrors += 1
    }
    return false
  }

  /// Sends once: `nil` when sent (and counted), else the errno.
  private func attemptSend(_ bytes: UnsafeRawBufferPointer) -> Errno? {
    let number = descriptor.rawValue
    let length = peer.length
    let send = calls.send
    let result: Int = withUnsafePointer(to: &peer.storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        while true {
          let result = send(number, bytes, address, length)
          if result >= 0 || Errno.current != .interrupted { return result }
        }
      }
    }
    guard result >= 0 else { return Errno.current }
    statistics.datagramsSent += 1
    statistics.bytesSent += UInt64(bytes.count)
    return nil
  }

  /// No room now: `EAGAIN` (the socket's send buffer) or `ENOBUFS` (the interface's queue).
  private func isRefusal(_ code: Errno) -> Bool {
    code == .tryAgain || code.rawValue == ENOBUFS
  }

  /// How many errors about earlier datagrams a failed call reported: the reports taken off the
  /// error queue, and at least one for `ECONNREFUSED` (which only ever comes from a peer's ICMP
  /// "port unreachable", so is never about the current call's datagram).
  private func reportedEarlierErrors(_ code: Errno) -> UInt64 {
    var reports: UInt64 = 0
    // Bounded: the queue holds at most a receive buffer's worth of reports.
    while reports < 4096 && calls.receiveError(descriptor.rawValue) >= 0 { reports += 1 }
    return code.rawValue == ECONNREFUSED ? max(reports, 1) : reports
  }

  // MARK: Receiving

  func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    var reportedErrors = false
    var sender = SocketAddress()
    while true {
      let result = attemptReceive(into: buffer, sender: &sender)
      if result < 0 {
        let code = Errno.current
        if code == .tryAgain { return 0 }
        // An error about earlier datagrams sent (once per call: then it is this call's error).
        let earlier = reportedErrors ? 0 : reportedEarlierErrors(code)
        if earlier > 0 {
          statistics.sendErrors += earlier
          reportedErrors = true
          continue
        }
        statistics.receiveErrors += 1
        return 0
      }
      if result > buffer.count {
        statistics.truncatedDatagrams += 1
        continue
      }
      statistics.datagramsReceived += 1
      statistics.bytesReceived += UInt64(result)
      noteSender(sender)
      if result > 0 { return result }
    }
  }

  /// `recvfrom` once (retrying `EINTR`) into `buffer`, its sender into `sender`.
  private func attemptReceive(
    into buffer: UnsafeMutableRawBufferPointer, sender: inout SocketAddress
  ) -> Int {
    let number = descriptor.rawValue
    let receive = calls.receive
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &sender.storage) { storage in
      storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        while true {
          let result = receive(number, buffer, address, &length)
          if result >= 0 || Errno.current != .interrupted { return result }
        }
      }
    }
    sender.length = length
    return result
  }

  /// A listening link replies to the latest sender; a sending link keeps its peer and counts
  /// datagrams from elsewhere.
  private func noteSender(_ source: SocketAddress) {
    if hasPeer && source.isSameEndpoint(as: peer) { return }
    switch role {
    case .listen:
      if hasPeer { statistics.peerChanges += 1 }
      peer = source
      hasPeer = true
    case .sendTo:
      statistics.datagramsFromOtherAddresses += 1
    }
  }
}
