/// A message link that carries whole datagrams: MAVLink over UDP to a ground station, a
/// companion computer's router (mavlink-router, MAVProxy), or memory in tests.
///
/// Unlike a `SerialPort`, which carries a byte stream the reader must cut into frames, a
/// datagram link keeps message boundaries: one `send` is one datagram, one `receive` returns
/// one datagram whole (MAVLink over UDP puts one or more whole frames in each datagram).
///
/// **Contract for the loop.** Both directions are non-blocking and never throw. `send` returns
/// `false` when the datagram did not go out (no peer known yet, the socket buffer full, the
/// network unreachable, the ground station not listening): the reason is counted in
/// `statistics` and the loop carries on, because a ground station that went away or has not
/// started yet must not stop the attitude stream. `receive` returns one waiting datagram's
/// length, or 0 when none waits; call it until it returns 0 to drain what arrived. Size the
/// receive buffer for the largest message expected (a MAVLink v2 frame is at most 280 bytes).
///
/// **Contract for implementers.** Never block, never allocate per call, retry `EINTR`, and count
/// every outcome: each `send` adds one to exactly one of `datagramsSent`, `sendsRefused`,
/// `sendsWithoutPeer` or `sendErrors` (errors the network reports later, about a datagram that
/// had been sent, add to `sendErrors` too). A datagram longer than the receive buffer is dropped
/// whole and counted (`truncatedDatagrams`): the caller never sees a partial message.
public protocol DatagramLink: CustomStringConvertible {
  /// Sends `bytes` as one datagram to the current peer without blocking. `false` when it was not
  /// sent (no peer yet, would block, an error): counted in `statistics`, never thrown.
  mutating func send(_ bytes: UnsafeRawBufferPointer) -> Bool

  /// Receives one waiting datagram into `buffer` and returns its length; 0 when none waits.
  /// Datagrams longer than `buffer` are counted and dropped, and the next one is looked at.
  /// Empty datagrams carry nothing: they are counted and skipped the same way. Never blocks.
  mutating func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int

  /// Counters since the link was opened.
  var statistics: DatagramStatistics { get }

  /// What the link is, for start-up logs: e.g. "UDP to 127.0.0.1:14550 from port 41234
  /// (replies accepted from any address)".
  var description: String { get }
}

extension DatagramLink {
  /// Sends an array's bytes as one datagram; allocation-free, for tests and tools.
  public mutating func send(_ bytes: [UInt8]) -> Bool {
    var sent = false
    bytes.withUnsafeBytes { buffer in sent = send(buffer) }
    return sent
  }
}

/// What a datagram link has done, for health telemetry. Every `send` is counted once, in
/// `datagramsSent`, `sendsRefused`, `sendsWithoutPeer` or `sendErrors`.
public struct DatagramStatistics: Hashable, Sendable {
  /// Datagrams the network accepted (over UDP that is not delivery: the ground station may be
  /// gone, see `sendErrors`).
  public var datagramsSent: UInt64 = 0
  /// The bytes of `datagramsSent`.
  public var bytesSent: UInt64 = 0
  /// Sends refused for lack of room now (`EAGAIN`, `ENOBUFS`): the datagram was dropped.
  public var sendsRefused: UInt64 = 0
  /// Sends with no peer to send to (a listening link before anyone sent it a datagram).
  public var sendsWithoutPeer: UInt64 = 0
  /// Sends that failed with an error (`ENETUNREACH`, `EMSGSIZE`, …), and datagrams the peer
  /// refused after they were sent (`ECONNREFUSED`: nothing listens at its port yet; the network
  /// reports it on a later call, and it is counted then).
  public var sendErrors: UInt64 = 0
  /// Datagrams delivered to the caller (and empty ones, which are skipped).
  public var datagramsReceived: UInt64 = 0
  /// The bytes of `datagramsReceived`.
  public var bytesReceived: UInt64 = 0
  /// Datagrams longer than the caller's buffer: dropped whole, not in `datagramsReceived`.
  public var truncatedDatagrams: UInt64 = 0
  /// Receives that failed with an error other than "nothing waiting".
  public var receiveErrors: UInt64 = 0
  /// Times the peer became a different address: a listening link replies to whoever sent the
  /// latest datagram, so more than one sender (two ground stations) shows here. Learning the
  /// first peer is not a change.
  public var peerChanges: UInt64 = 0
  /// Datagrams received from an address other than the peer's, on a link whose peer is fixed
  /// (a ground station that answers from another port): delivered all the same.
  public var datagramsFromOtherAddresses: UInt64 = 0

  public init() {}
}
