import HardwareAbstraction

/// One unplug of a simulated serial device (a USB adapter pulled out) and when it comes back.
public struct SerialDisconnection: Hashable, Sendable {
  /// What makes the device disappear.
  public enum Trigger: Hashable, Sendable {
    /// At this instant on the port's clock.
    case at(Timestamp)
    /// Once the port has accepted this many bytes in total since it was made: the write that
    /// reaches the count is cut short there, and the device is gone right after it.
    case afterBytesWritten(UInt64)
  }

  /// When the device is plugged back.
  public enum Return: Hashable, Sendable {
    /// At this instant.
    case at(Timestamp)
    /// This long after it disappeared.
    case after(Duration)
    /// Only when the test calls `MemorySerialPort.plugBack()`.
    case manually
  }

  public var trigger: Trigger
  public var pluggedBack: Return

  public init(_ trigger: Trigger, pluggedBack: Return) {
    self.trigger = trigger
    self.pluggedBack = pluggedBack
  }

  /// Unplugged at `start`, back at `end` (or only on `plugBack()` when `end` is `nil`).
  public static func unplugged(from start: Timestamp, until end: Timestamp?)
    -> SerialDisconnection
  {
    SerialDisconnection(.at(start), pluggedBack: end.map { .at($0) } ?? .manually)
  }

  /// Unplugged once `count` bytes have been written, back `downtime` later (or only on
  /// `plugBack()` when `downtime` is `nil`).
  public static func unplugged(afterBytes count: UInt64, for downtime: Duration?)
    -> SerialDisconnection
  {
    SerialDisconnection(
      .afterBytesWritten(count), pluggedBack: downtime.map { .after($0) } ?? .manually)
  }
}

/// The disconnections a `MemorySerialPort` goes through, in order: each fires once, after the
/// previous one has fired (a byte trigger counts the bytes written since the port was made).
public struct SerialFaultPlan: Hashable, Sendable {
  public var disconnections: [SerialDisconnection]

  public init(_ disconnections: [SerialDisconnection] = []) {
    self.disconnections = disconnections
  }

  /// The device never goes away.
  public static var none: SerialFaultPlan { SerialFaultPlan() }
}
