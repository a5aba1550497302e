import Glibc

/// Where `plumb-monitor --web` listens and the bounds it keeps (README.md, "Threads and
/// bounds"). Every bound has a default that suits a person with a browser or two.
public struct WebServerConfiguration: Hashable, Sendable {
  /// The address to bind when none is given: this machine only.
  public static let defaultHost = "127.0.0.1"
  /// The port to bind when none is given.
  public static let defaultPort: UInt16 = 8080

  /// A numeric IPv4 or IPv6 address (`0.0.0.0`, `::`, `::1`, `192.168.1.5`), or `localhost`
  /// (bound as 127.0.0.1). IPv6 without brackets.
  public var host: String
  /// The TCP port; 0 asks the kernel for any free one (tests; `WebServer.localPort` says which).
  public var port: UInt16
  /// Whether `POST /command` queues host commands (`--web-commands`); 403 otherwise.
  public var commandsEnabled: Bool
  /// Connections open at once; the next one is answered 503 and closed.
  public var maximumClients: Int
  /// The most bytes a request's line and headers may take (400 beyond).
  public var maximumRequestBytes: Int
  /// Time a client has to send its whole request, ns, from when it connected.
  public var requestTimeoutNanoseconds: Int64
  /// The most `frame` events a second (frames in between are coalesced to the newest).
  public var maximumEventRateHz: Int
  /// Each event-stream client's output buffer, bytes: events that do not fit are dropped.
  public var clientBufferBytes: Int
  /// A client whose pending output has not moved for this long, ns, is closed.
  public var stallTimeoutNanoseconds: Int64

  public init(
    host: String = WebServerConfiguration.defaultHost,
    port: UInt16 = WebServerConfiguration.defaultPort,
    commandsEnabled: Bool = false, maximumClients: Int = 16, maximumRequestBytes: Int = 8192,
    requestTimeoutNanoseconds: Int64 = 5_000_000_000, maximumEventRateHz: Int = 30,
    clientBufferBytes: Int = 256 * 1024, stallTimeoutNanoseconds: Int64 = 10_000_000_000
  ) {
    self.host = host
    self.port = port
    self.commandsEnabled = commandsEnabled
    self.maximumClients = maximumClients
    self.maximumRequestBytes = maximumRequestBytes
    self.requestTimeoutNanoseconds = requestTimeoutNanoseconds
    self.maximumEventRateHz = maximumEventRateHz
    self.clientBufferBytes = clientBufferBytes
    self.stallTimeoutNanoseconds = stallTimeoutNanoseconds
  }

  /// Reads `[ADDR:]PORT` as given to `--web`: `8080`, `0.0.0.0:8080`, `[::1]:8080`,
  /// `localhost:9000`. ADDR is a numeric IPv4 address, a numeric IPv6 address in brackets, or
  /// `localhost`; PORT is 0–65535 (0: any free port). The other settings keep their defaults.
  public static func parse(_ spec: String) throws(WebAddressError) -> WebServerConfiguration {
    func failure(_ problem: WebAddressError.Problem) -> WebAddressError {
      WebAddressError(spec: spec, problem: problem)
    }
    guard !spec.isEmpty else { throw failure(.empty) }
    guard spec.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw failure(.badCharacters) }
    var host = defaultHost
    let portText: Substring
    if spec.hasPrefix("[") {
      guard let close = spec.firstIndex(of: "]") else { throw failure(.unclosedBracket) }
      let inside = spec[spec.index(after: spec.startIndex)..<close]
      let after = spec[spec.index(after: close)...]
      guard after.hasPrefix(":") else { throw failure(.missingPort) }
      guard WebAddress.family(of: String(inside)) == AF_INET6 else {
        throw failure(.notAnAddress(String(inside)))
      }
      host = String(inside)
      portText = after.dropFirst()
    } else if let colon = spec.lastIndex(of: ":") {
      let address = spec[..<colon]
      guard !address.contains(":") else { throw failure(.unbracketedIPv6) }
      guard !address.isEmpty else { throw failure(.notAnAddress("")) }
      guard address == "localhost" || WebAddress.family(of: String(address)) == AF_INET else {
        throw failure(.notAnAddress(String(address)))
      }
      host = String(address)
      portText = spec[spec.index(after: colon)...]
    } else {
      guard spec.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
        throw WebAddress.family(of: spec) != nil || spec == "localhost"
          ? failure(.missingPort) : failure(.badPort(spec))
      }
      portText = Substring(spec)
    }
    guard !portText.isEmpty, portText.count <= 5,
      portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
      let port = Int(portText), port <= 65535
    else { throw failure(.badPort(String(portText))) }
    return WebServerConfiguration(host: host, port: UInt16(port))
  }

  /// Whether only this machine can reach the server (127.0.0.0/8, `::1`, `localhost`).
  public var isLoopback: Bool { WebAddress.isLoopback(host) }

  /// `host:port` as a person writes it: IPv6 in brackets.
  public var hostAndPort: String {
    (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
  }
}

/// A `--web` address that cannot be used, with the fix.
public struct WebAddressError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Problem: Hashable, Sendable {
    case empty
    case badCharacters
    case unclosedBracket
    case unbracketedIPv6
    case missingPort
    case notAnAddress(String)
    case badPort(String)
  }

  /// The text as given.
  public var spec: String
  public var problem: Problem

  public init(spec: String, problem: Problem) {
    self.spec = spec
    self.problem = problem
  }

  public var description: String {
    let fix: String
    switch problem {
    case .empty:
      fix = "give a port, or an address and a port: 8080, 0.0.0.0:8080, [::1]:8080"
    case .badCharacters:
      fix = "no spaces or other characters outside ASCII: 127.0.0.1:8080"
    case .unclosedBracket:
      fix = "an IPv6 address in brackets needs its closing bracket: [::1]:8080"
    case .unbracketedIPv6:
      fix = "an IPv6 address goes in brackets, then the port: [::1]:8080"
    case .missingPort:
      fix = "give the port after the address and a colon: 127.0.0.1:8080"
    case .notAnAddress(let text):
      fix =
        "'\(text)' is not a numeric IPv4 address, an IPv6 address in brackets or localhost "
        + "(names are not looked up): 0.0.0.0:8080, [::]:8080, localhost:8080"
    case .badPort(let text):
      fix = "'\(text)' is not a port: give a number from 1 to 65535, such as 8080"
    }
    return "--web \(spec): \(fix)"
  }
}

/// Numeric addresses (`inet_pton`), no name lookup: `--web` takes a numeric address or
/// `localhost`, so start-up never waits on a resolver.
enum WebAddress {
  /// `AF_INET`, `AF_INET6`, or `nil` when `text` is neither numeric form.
  static func family(of text: String) -> CInt? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 { return AF_INET }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 { return AF_INET6 }
    return nil
  }

  /// 127.0.0.0/8, `::1`, `::ffff:127.x.y.z` and `localhost`.
  static func isLoopback(_ host: String) -> Bool {
    if host == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
    let mapped = bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF
    return mapped && bytes[12] == 127
  }
}
