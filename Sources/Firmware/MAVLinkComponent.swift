import HardwareAbstraction
import Telemetry

/// What the MAVLink component has received and answered (FORMATS.md "MAVLink v2", "What Plumb
/// answers"). Nothing a ground station sends is lost silently: every packet is counted here or
/// in the receivers' statistics.
public struct MAVLinkComponentStatistics: Hashable, Sendable {
  /// COMMAND_LONG and COMMAND_INT addressed to Plumb; each got one COMMAND_ACK.
  public var commands: UInt64 = 0
  /// Of those, answered `MAV_RESULT_UNSUPPORTED`.
  public var commandsUnsupported: UInt64 = 0
  /// Of those, refused (`DENIED`, `TEMPORARILY_REJECTED`, `FAILED`), with a STATUSTEXT saying why.
  public var commandsRefused: UInt64 = 0
  /// PARAM_REQUEST_LIST received (each starts the list again).
  public var parameterListRequests: UInt64 = 0
  /// PARAM_REQUEST_READ received; those naming no parameter are in `unknownParameters`.
  public var parameterReadRequests: UInt64 = 0
  /// PARAM_SET received; refused ones (out of range, over the link budget) are answered with the
  /// value unchanged and a STATUSTEXT.
  public var parameterSets: UInt64 = 0
  public var parameterSetsRefused: UInt64 = 0
  /// PARAM_REQUEST_READ or PARAM_SET naming no parameter Plumb has.
  public var unknownParameters: UInt64 = 0
  /// PARAM_VALUE sent.
  public var parameterValuesSent: UInt64 = 0
  /// FILE_TRANSFER_PROTOCOL requests, each answered with a NAK (Plumb has no files to serve).
  public var fileTransferRequests: UInt64 = 0
  /// REQUEST_DATA_STREAM received and, by design, not acted on (FORMATS.md says why).
  public var dataStreamRequestsIgnored: UInt64 = 0
  /// HEARTBEATs from other components (a ground station's).
  public var heartbeatsReceived: UInt64 = 0
  /// Other valid messages addressed to Plumb or broadcast that need no answer.
  public var otherMessages: UInt64 = 0
  /// Answers that found the reply queue full and were not sent.
  public var answersDropped: UInt64 = 0

  public init() {}
}

/// Answers waiting for link capacity: a ring of fixed size made once, so queueing allocates
/// nothing.
struct MAVLinkOutbox {
  static let capacity = 32
  private var slots: [MAVLinkMessage]
  private var start = 0
  private(set) var count = 0

  init() {
    slots = [MAVLinkMessage](
      repeating: .heartbeat(MAVLinkMessage.Heartbeat(type: 0, autopilot: 0, systemStatus: 0)),
      count: Self.capacity)
  }

  var isEmpty: Bool { count == 0 }

  /// Adds a message; `false` when full.
  mutating func append(_ message: MAVLinkMessage) -> Bool {
    guard count < Self.capacity else { return false }
    slots[(start + count) % Self.capacity] = message
    count += 1
    return true
  }

  var first: MAVLinkMessage? { count > 0 ? slots[start] : nil }

  mutating func removeFirst() {
    guard count > 0 else { return }
    start = (start + 1) % Self.capacity
    count -= 1
  }

  mutating func removeAll() {
    start = 0
    count = 0
  }
}

/// The MAVLink component's state inside the loop: a receiver per link, the answers waiting to
/// go, and where a parameter list being sent has got to.
struct MAVLinkComponentState {
  var serialReceiver: MAVLinkReceiver
  var datagramReceiver: MAVLinkReceiver
  /// Stands in for a receiver while it reads (`FirmwareLoop.receiveMAVLink`); never used.
  let spareReceiver: MAVLinkReceiver
  var outbox = MAVLinkOutbox()
  /// The index of the next PARAM_VALUE of a list being sent; nil when none is.
  var listCursor: Int?
  var statistics = MAVLinkComponentStatistics()
  /// Nothing waits to be sent: the loop skips the sending (the usual case, every sample).
  var isIdle: Bool { outbox.isEmpty && listCursor == nil }
  /// Plumb's AUTOPILOT_VERSION, made once.
  let autopilotVersion: MAVLinkMessage.AutopilotVersion

  init(identity: MAVLinkIdentity, firmwareVersion: String) {
    serialReceiver = MAVLinkReceiver(
      systemID: identity.systemID, componentID: identity.componentID)
    datagramReceiver = MAVLinkReceiver(
      systemID: identity.systemID, componentID: identity.componentID)
    spareReceiver = MAVLinkReceiver(systemID: identity.systemID, componentID: identity.componentID)
    autopilotVersion = Self.autopilotVersion(firmwareVersion)
  }

  /// AUTOPILOT_VERSION: MAVLink 2, parameters as floats holding their value ("C cast"),
  /// COMMAND_INT; `flight_sw_version` Plumb's semantic version as `major << 24 | minor << 16 |
  /// patch << 8 | FIRMWARE_VERSION_TYPE_OFFICIAL (255)`; its text (up to 8 bytes) in
  /// `flight_custom_version`.
  static func autopilotVersion(_ version: String) -> MAVLinkMessage.AutopilotVersion {
    let numbers = version.split(separator: ".").prefix(3).map {
      UInt32($0.prefix { $0.isNumber }) ?? 0
    }
    let padded = numbers + [UInt32](repeating: 0, count: max(0, 3 - numbers.count))
    let packed =
      (min(padded[0], 255) << 24) | (min(padded[1], 255) << 16) | (min(padded[2], 255) << 8)
      | 255
    return MAVLinkMessage.AutopilotVersion(
      capabilities: MAVLink.protocolCapabilityVersion2 | MAVLink.protocolCapabilityCommandInt
        | MAVLink.protocolCapabilityParamFloat | MAVLink.protocolCapabilityParamEncodeCCast,
      flightSoftwareVersion: packed, flightCustomVersion: MAVLinkBytes8(Array(version.utf8)))
  }
}
