import Geometry
import Glibc
import Monitoring
import Telemetry
import WebMonitor

/// A plain blocking TCP client for the server tests: connects to 127.0.0.1, sends bytes, reads
/// with a deadline (every wait is bounded, so a broken server fails a test instead of hanging
/// it).
final class WebTestClient {
  private(set) var number: CInt
  /// Everything read so far.
  private(set) var received: [UInt8] = []
  /// Whether the server closed the connection.
  private(set) var sawEndOfFile = false

  /// Connects; `receiveBufferBytes` shrinks the socket's receive buffer first (a slow client).
  init(port: UInt16, receiveBufferBytes: CInt? = nil) {
    number = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(number >= 0, "socket failed")
    if var size = receiveBufferBytes {
      _ = setsockopt(number, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let status = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(number, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    precondition(status == 0, "connect to 127.0.0.1:\(port) failed: errno \(errno)")
  }

  deinit { close() }

  func close() {
    if number >= 0 { _ = Glibc.close(number) }
    number = -1
  }

  /// Sends all of `text` (blocking); false when the server closed first.
  @discardableResult
  func send(_ text: String) -> Bool { send(Array(text.utf8)) }

  @discardableResult
  func send(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { raw in
        Glibc.send(number, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
      }
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  /// Reads until `done(text so far)` holds, the server closes, or `seconds` pass; returns
  /// whether `done` held.
  @discardableResult
  func read(for seconds: Double = 10, until done: (String) -> Bool) -> Bool {
    let deadline = now() + seconds
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      if done(text) { return true }
      if sawEndOfFile { return false }
      let left = deadline - now()
      guard left > 0 else { return false }
      var entry = pollfd(fd: number, events: Int16(POLLIN), revents: 0)
      let ready = poll(&entry, 1, CInt(min(left, 0.1) * 1000) + 1)
      guard ready > 0 else { continue }
      let count = chunk.withUnsafeMutableBytes { recv(number, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        sawEndOfFile = true
        continue
      }
      received += chunk[0..<count]
    }
  }

  /// Reads until the server closes (or `seconds` pass); returns what was read.
  func readToEnd(for seconds: Double = 10) -> String {
    read(for: seconds) { _ in false }
    return text
  }

  var text: String { String(decoding: received, as: UTF8.self) }

  /// The status code of the response read so far.
  var status: Int? {
    let line = text.split(separator: "\r\n", maxSplits: 1).first ?? ""
    let parts = line.split(separator: " ")
    return parts.count >= 2 ? Int(parts[1]) : nil
  }

  /// A whole request and its response.
  static func exchange(port: UInt16, _ request: String) -> WebTestClient {
    let client = WebTestClient(port: port)
    client.send(request)
    _ = client.readToEnd()
    return client
  }
}

/// CLOCK_MONOTONIC, s.
func now() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Waits (polling every 2 ms) until `condition` holds or `seconds` pass; whether it held. Only
/// bounds a hang: tests assert on the condition, never on how long it took.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
  let deadline = now() + seconds
  while now() < deadline {
    if condition() { return true }
    usleep(2000)
  }
  return condition()
}

/// The `data:` lines of the events named `name` in an event-stream text.
func events(_ name: String, in text: String) -> [String] {
  let blocks = text.split(separator: "\n\n", omittingEmptySubsequences: true)
  return blocks.compactMap { block in
    let lines = block.split(separator: "\n")
    guard lines.contains(where: { $0 == "event: \(name)" }) else { return nil }
    return lines.first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
  }
}

/// A binary frame with sequence `sequence`.
func testFrame(_ sequence: UInt32, format: TelemetryFormat = .binary) -> MonitorFrame {
  let attitude = Quaternion(yaw: 0.5, pitch: 0.1, roll: -0.2)
  if format == .mavlink {
    return MonitorFrame(
      format: .mavlink, sequence: sequence & 0xFF,
      sampleTimeNanoseconds: Int64(sequence) * 10_000_000, attitude: attitude,
      angles: NEDEulerAngles(plumbAttitude: attitude))
  }
  return MonitorFrame(
    format: format, sequence: sequence, sampleTimeNanoseconds: Int64(sequence) * 10_000_000,
    attitude: attitude, angles: NEDEulerAngles(plumbAttitude: attitude),
    flags: [.rest, .headingUncertain], temperatureCelsius: 31.25, missedSamples: 0,
    latencyMicroseconds: 410, calibrationID: 0,
    gyroBiasRadiansPerSecond: Vector3(0.001, -0.002, 0),
    linearAccelerationMetersPerSecondSquared: Vector3(0, 0.1, 0))
}

/// A started server on a free loopback port; stop it at the end of the test.
func startedServer(
  _ configure: (inout WebServerConfiguration) -> Void = { _ in },
  page: [UInt8] = Array("<!doctype html><p>test page</p>".utf8)
) throws -> (server: WebServer, hub: WebMonitorHub, port: UInt16) {
  var configuration = WebServerConfiguration(host: "127.0.0.1", port: 0)
  configure(&configuration)
  let hub = WebMonitorHub(
    input: "/dev/ttyTEST", version: "0.0.1", commandsEnabled: configuration.commandsEnabled)
  let server = WebServer(configuration: configuration, hub: hub, page: page)
  _ = try server.start()
  return (server, hub, server.localPort ?? 0)
}
