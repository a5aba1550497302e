import HardwareAbstraction

/// An in-memory datagram link: the code under test sends MAVLink datagrams and receives the
/// ground station's through `DatagramLink`; the test injects what the ground station sends
/// (`inject(_:from:)`), reads what was sent (`sent`, `takeSent()`), and makes sends fail
/// (`sendOutcome`).
///
/// It behaves like `UDPLink`. A link made with a `peer` sends to it, like `HOST:PORT`, and counts
/// datagrams from other senders (`datagramsFromOtherAddresses`); a link made with
/// `learnsPeer: true` is like `listen:PORT`: it has no peer until a datagram arrives, then
/// replies to the latest sender (`peerChanges`). Senders are labels, any text.
///
/// A class because the loop and the test share it. Not `Sendable`: a simulated world belongs to
/// one thread. `send` allocates to record the datagram (set `recordsSent` to false to count
/// only, for allocation tests); `receive` does not allocate.
public final class MemoryDatagramLink: DatagramLink {
  /// What becomes of a `send`.
  public enum SendOutcome: Hashable, Sendable {
    /// Sent, and recorded in `sent` (when there is a peer).
    case delivered
    /// Refused for lack of room (`EAGAIN`): `sendsRefused`.
    case refused
    /// Failed with an error (`ECONNREFUSED` and the like): `sendErrors`.
    case error
  }

  /// What the next sends do (when there is a peer; without one they count `sendsWithoutPeer`).
  public var sendOutcome = SendOutcome.delivered
  /// Whether delivered datagrams are kept in `sent` (they are always counted).
  public var recordsSent = true
  /// The datagrams delivered, in order, until `takeSent()`.
  public private(set) var sent: [[UInt8]] = []
  public private(set) var statistics = DatagramStatistics()
  /// The current peer's label, `nil` while there is none.
  public private(set) var peer: String?
  /// Whether the peer follows the latest sender (`listen:`) or stays fixed (`HOST:PORT`).
  public let learnsPeer: Bool
  /// Whether the link is open (`close()` makes sends errors and receives empty).
  public private(set) var isOpen = true

  /// Datagrams waiting to be received, with their senders: `inbox[inboxStart...]`.
  private var inbox: [(bytes: [UInt8], sender: String)] = []
  private var inboxStart = 0

  /// A link that sends to `peer` (like `HOST:PORT`), or, with `learnsPeer`, one that listens
  /// and replies to whoever sent last (`peer` is then the first peer, usually `nil`).
  public init(peer: String? = "127.0.0.1:14550", learnsPeer: Bool = false) {
    self.peer = peer
    self.learnsPeer = learnsPeer
    inbox.reserveCapacity(16)
  }

  public var description: String {
    guard let peer else { return "memory datagram link (listening; no peer yet)" }
    return learnsPeer
      ? "memory datagram link (listening; replying to \(peer))"
      : "memory datagram link (sending to \(peer))"
  }

  /// The number of datagrams injected and not yet received.
  public var waitingCount: Int { inbox.count - inboxStart }

  // MARK: DatagramLink

  public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard isOpen else {
      statistics.sendErrors += 1
      return false
    }
    guard peer != nil else {
      statistics.sendsWithoutPeer += 1
      return false
    }
    switch sendOutcome {
    case .delivered:
      statistics.datagramsSent += 1
      statistics.bytesSent += UInt64(bytes.count)
      if recordsSent { sent.append(Array(bytes)) }
      return true
    case .refused:
      statistics.sendsRefused += 1
      return false
    case .error:
      statistics.sendErrors += 1
      return false
    }
  }

  /// Sends an array's bytes (the `DatagramLink` convenience is `mutating`, which a class held
  /// in a `let` cannot call).
  public func send(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { send($0) }
  }

  public func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    guard isOpen else { return 0 }
    while inboxStart < inbox.count {
      let index = inboxStart
      inboxStart += 1
      let count = inbox[index].bytes.count
      if count > buffer.count {
        statistics.truncatedDatagrams += 1
        continue
      }
      inbox[index].bytes.withUnsafeBytes { bytes in
        if count > 0 { buffer.copyMemory(from: bytes) }
      }
      statistics.datagramsReceived += 1
      statistics.bytesReceived += UInt64(count)
      noteSender(inbox[index].sender)
      if inboxStart == inbox.count {
        inbox.removeAll(keepingCapacity: true)
        inboxStart = 0
      }
      if count > 0 { return count }
    }
    inbox.removeAll(keepingCapacity: true)
    inboxStart = 0
    return 0
  }

  /// Closes the link: later sends count `sendErrors`, receives return 0. Idempotent.
  public func close() {
    isOpen = false
  }

  // MARK: The ground station's side

  /// Queues `bytes` as one datagram from `sender`, for the code under test to `receive`.
  public func inject(_ bytes: [UInt8], from sender: String = "127.0.0.1:14550") {
    inbox.append((bytes, sender))
  }

  /// Takes the datagrams delivered so far, in order.
  public func takeSent() -> [[UInt8]] {
    defer { sent.removeAll(keepingCapacity: true) }
    return sent
  }

  // MARK: Internals

  private func noteSender(_ sender: String) {
    guard sender != peer else { return }
    if learnsPeer {
      if peer != nil { statistics.peerChanges += 1 }
      peer = sender
    } else {
      statistics.datagramsFromOtherAddresses += 1
    }
  }
}
