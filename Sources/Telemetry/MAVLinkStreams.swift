/// The MAVLink messages Plumb streams with its frames, each at its own rate (FORMATS.md
/// "MAVLink v2", "Streams"; the `SR_*` parameters). HEARTBEAT is not among them: it goes once a
/// second whatever the rates, as MAVLink asks of every component.
public enum MAVLinkStream: Int, CaseIterable, Hashable, Sendable {
  /// ATTITUDE_QUATERNION (#31): the attitude as the frame carries it.
  case attitudeQuaternion = 0
  /// ATTITUDE (#30): roll, pitch and yaw, which ground stations' horizons show.
  case attitude
  /// HIGHRES_IMU (#105): the corrected rates, specific force and temperature.
  case highResIMU
  /// SYS_STATUS (#1): sensor health, load and drop counts.
  case systemStatus

  /// How many streams there are (raw values 0 ..< count).
  public static let count = 4

  /// The message id.
  public var messageID: UInt32 {
    switch self {
    case .attitudeQuaternion: 31
    case .attitude: 30
    case .highResIMU: 105
    case .systemStatus: 1
    }
  }

  /// The message's name in `common.xml`.
  public var messageName: String {
    switch self {
    case .attitudeQuaternion: "ATTITUDE_QUATERNION"
    case .attitude: "ATTITUDE"
    case .highResIMU: "HIGHRES_IMU"
    case .systemStatus: "SYS_STATUS"
    }
  }

  /// The stream of a message id, if Plumb streams it.
  public init?(messageID: UInt32) {
    switch messageID {
    case 31: self = .attitudeQuaternion
    case 30: self = .attitude
    case 105: self = .highResIMU
    case 1: self = .systemStatus
    default: return nil
    }
  }

  /// The most bytes one of its packets takes (header, payload as Plumb fills it, CRC):
  /// ATTITUDE_QUATERNION 10 + 32 + 2 (`repr_offset_q` is zero and cut), ATTITUDE 10 + 28 + 2,
  /// HIGHRES_IMU 10 + 62 + 2 (`id` is 0 and cut), SYS_STATUS 10 + 31 + 2 (the extended sensor
  /// words are zero and cut).
  public var packetBytes: Int {
    switch self {
    case .attitudeQuaternion: LinkBudget.mavlinkAttitudeBytes
    case .attitude: 40
    case .highResIMU: LinkBudget.mavlinkIMUBytes
    case .systemStatus: 43
    }
  }
}

/// How often each stream goes, as asked (by parameters, SET_MESSAGE_INTERVAL, or the defaults),
/// in Hz; 0 is off.
///
/// A stream goes with every n-th frame, so its actual rate is the output rate divided by a whole
/// number: n = round(output rate / asked rate), at least 1 (asked rates above the output rate
/// mean every frame). The asked rate is kept, not the actual one, so a stream follows the
/// output rate back up after a `rate` command lowered it.
public struct MAVLinkStreamRates: Hashable, Sendable {
  /// ATTITUDE_QUATERNION: every frame (1000 Hz is the chip's highest sample rate).
  public var attitudeQuaternionHz: Float
  public var attitudeHz: Float
  /// HIGHRES_IMU: at 100 Hz every second frame, which keeps the default streams at 74 % of
  /// 115200 baud (HIGHRES_IMU at 100 Hz as well would need 106 %).
  public var highResIMUHz: Float
  public var systemStatusHz: Float

  /// The highest rate a stream may be asked for, Hz.
  public static let maximumHz: Float = 1000

  public init(
    attitudeQuaternionHz: Float = 1000, attitudeHz: Float = 10, highResIMUHz: Float = 50,
    systemStatusHz: Float = 1
  ) {
    self.attitudeQuaternionHz = attitudeQuaternionHz
    self.attitudeHz = attitudeHz
    self.highResIMUHz = highResIMUHz
    self.systemStatusHz = systemStatusHz
  }

  public static let `default` = MAVLinkStreamRates()

  public subscript(stream: MAVLinkStream) -> Float {
    get {
      switch stream {
      case .attitudeQuaternion: attitudeQuaternionHz
      case .attitude: attitudeHz
      case .highResIMU: highResIMUHz
      case .systemStatus: systemStatusHz
      }
    }
    set {
      switch stream {
      case .attitudeQuaternion: attitudeQuaternionHz = newValue
      case .attitude: attitudeHz = newValue
      case .highResIMU: highResIMUHz = newValue
      case .systemStatus: systemStatusHz = newValue
      }
    }
  }

  /// The stream goes with every n-th frame; `nil` when it is off.
  public func divider(_ stream: MAVLinkStream, outputRateHz: Int) -> Int? {
    let asked = self[stream]
    guard asked > 0, asked.isFinite else { return nil }
    let output = Double(max(1, outputRateHz))
    let ratio = (output / Double(asked)).rounded()
    return ratio < 1 ? 1 : Int(min(ratio, output))
  }

  /// The stream's actual rate at `outputRateHz`, Hz (0 when off).
  public func actualHz(_ stream: MAVLinkStream, outputRateHz: Int) -> Double {
    guard let n = divider(stream, outputRateHz: outputRateHz) else { return 0 }
    return Double(max(1, outputRateHz)) / Double(n)
  }

  /// Bytes per second the streams and the heartbeat need at `outputRateHz`, worst case: a
  /// stream with divider n goes with ⌈rate / n⌉ frames of every second's.
  public func bytesPerSecond(outputRateHz: Int) -> Int {
    let output = max(1, outputRateHz)
    var total = LinkBudget.mavlinkHeartbeatBytes
    // Over the raw values: iterating an array costs an allocation per element in an
    // unoptimised build (the generic iterator is not specialised), and this runs every step.
    for raw in 0..<MAVLinkStream.count {
      let stream = MAVLinkStream(rawValue: raw)!
      guard let n = divider(stream, outputRateHz: output) else { continue }
      total += (output + n - 1) / n * stream.packetBytes
    }
    return total
  }

  /// One stream lowered to fit the line.
  public struct Lowering: Hashable, Sendable, CustomStringConvertible {
    public var stream: MAVLinkStream
    /// The actual rates before and after, Hz (0: off).
    public var fromHz: Double
    public var toHz: Double

    public var description: String {
      "\(stream.messageName) \(Self.hertz(fromHz)) → "
        + (toHz == 0 ? "off" : Self.hertz(toHz))
    }

    static func hertz(_ value: Double) -> String {
      let rounded = (value * 100).rounded() / 100
      return rounded == rounded.rounded() ? "\(Int(rounded)) Hz" : "\(rounded) Hz"
    }
  }

  /// These rates lowered until the streams fit `baudRate` (`LinkBudget`'s 85 %), and what was
  /// lowered. HIGHRES_IMU goes down first, then ATTITUDE, SYS_STATUS and ATTITUDE_QUATERNION,
  /// each to the highest rate that fits but not below 1 Hz; only if the streams do not fit with
  /// every one at 1 Hz are they turned off, in the same order. `nil` when even the heartbeat
  /// alone does not fit.
  public func fitted(outputRateHz: Int, baudRate: Int) -> (MAVLinkStreamRates, [Lowering])? {
    let output = max(1, outputRateHz)
    guard LinkBudget.fits(LinkBudget.mavlinkHeartbeatBytes, baudRate: baudRate) else {
      return nil
    }
    var rates = self
    var lowered: [Lowering] = []
    let order: [MAVLinkStream] = [.highResIMU, .attitude, .systemStatus, .attitudeQuaternion]
    let capacity = LinkBudget.maximumUtilisationPercent * baudRate / (LinkBudget.bitsPerByte * 100)
    for stream in order
    where !LinkBudget.fits(rates.bytesPerSecond(outputRateHz: output), baudRate: baudRate) {
      guard rates.divider(stream, outputRateHz: output) != nil else { continue }
      let before = rates.actualHz(stream, outputRateHz: output)
      var others = rates
      others[stream] = 0
      let room = capacity - others.bytesPerSecond(outputRateHz: output)
      // ⌈output / n⌉ packets a second fit when n ≥ output / m, m = the packets that fit.
      let packets = max(1, room / stream.packetBytes)
      let n = min(output, (output + packets - 1) / packets)
      rates[stream] = Float(Double(output) / Double(n))
      lowered.append(
        Lowering(stream: stream, fromHz: before, toHz: rates.actualHz(stream, outputRateHz: output))
      )
    }
    for stream in order
    where !LinkBudget.fits(rates.bytesPerSecond(outputRateHz: output), baudRate: baudRate) {
      guard rates.divider(stream, outputRateHz: output) != nil else { continue }
      let before = rates.actualHz(stream, outputRateHz: output)
      rates[stream] = 0
      if let index = lowered.firstIndex(where: { $0.stream == stream }) {
        lowered[index].toHz = 0
      } else {
        lowered.append(Lowering(stream: stream, fromHz: before, toHz: 0))
      }
    }
    return (rates, lowered)
  }
}
