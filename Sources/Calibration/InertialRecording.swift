/// A sensor of the IMU.
public enum InertialSensor: String, Sendable, Hashable, CaseIterable {
  case gyroscope
  case accelerometer

  /// Its three axes, x, y, z.
  public var axes: [InertialAxis] {
    switch self {
    case .gyroscope: [.gyroX, .gyroY, .gyroZ]
    case .accelerometer: [.accelX, .accelY, .accelZ]
    }
  }
}

/// One channel of a recording: a gyroscope axis (rad/s) or an accelerometer axis (m/s²).
/// The raw value indexes `InertialRecording.channels`.
public enum InertialAxis: Int, Sendable, Hashable, CaseIterable, Comparable {
  case gyroX
  case gyroY
  case gyroZ
  case accelX
  case accelY
  case accelZ

  /// The column name in the replay CSV layout (`gyr_x` … `acc_z`).
  public var columnName: String {
    ["gyr_x", "gyr_y", "gyr_z", "acc_x", "acc_y", "acc_z"][rawValue]
  }

  public var sensor: InertialSensor { rawValue < 3 ? .gyroscope : .accelerometer }

  /// 0, 1, 2 for x, y, z.
  public var component: Int { rawValue % 3 }

  /// `x`, `y` or `z`.
  public var componentName: String { ["x", "y", "z"][component] }

  public static func < (a: InertialAxis, b: InertialAxis) -> Bool { a.rawValue < b.rawValue }
}

/// Samples of a still or slowly warming IMU, column by column, in SI units: the input of the
/// bench analyses (Allan deviation, gyro bias, bias versus temperature).
///
/// Columns rather than an array of sample structs, because every analysis walks one channel at
/// a time over hundreds of thousands of samples. Where the samples came from is kept so errors
/// can point at the line (CSV) or record (.plumbraw) a person would look at.
public struct InertialRecording: Sendable {
  /// The file the samples came from, for messages.
  public var source: String
  /// Sample times, seconds, strictly increasing (from the data-ready edge timestamps).
  public var timeSeconds: [Double]
  /// Six channels indexed by `InertialAxis.rawValue`: gyro x, y, z (rad/s), accel x, y, z (m/s²).
  public var channels: [[Double]]
  /// Die temperature per sample, °C; `nil` when the source has none.
  public var temperatureCelsius: [Double]?
  /// Where each sample is in the source, for messages.
  public var locations: SampleLocations
  /// What a person should know about how the source was read (a `.plumbraw` cut short, read to
  /// its last whole record), one sentence each; empty when it read whole.
  public var notes: [String] = []
  /// The part that recorded it, from a `.plumbraw` header (start-up's identification); `nil`
  /// for a CSV, which does not say.
  public var chip: RecordedChip?

  /// A recording from columns of equal length. `channels` must hold six columns.
  public init(
    source: String, timeSeconds: [Double], channels: [[Double]], temperatureCelsius: [Double]?,
    locations: SampleLocations = .sampleNumbers
  ) {
    precondition(channels.count == 6, "a recording has six channels (gyro xyz, accel xyz)")
    precondition(
      channels.allSatisfy { $0.count == timeSeconds.count }
        && (temperatureCelsius?.count ?? timeSeconds.count) == timeSeconds.count,
      "every column of a recording has one value per sample")
    self.source = source
    self.timeSeconds = timeSeconds
    self.channels = channels
    self.temperatureCelsius = temperatureCelsius
    self.locations = locations
  }

  public var count: Int { timeSeconds.count }

  /// The samples of one channel.
  public func samples(_ axis: InertialAxis) -> [Double] { channels[axis.rawValue] }

  /// Where sample `index` (0-based) is in the source: `"line 12"` or `"sample 11"`.
  public func location(ofSample index: Int) -> String {
    switch locations {
    case .lines(let lines) where index < lines.count: "line \(lines[index])"
    case .records(let first): "record \(first + index)"
    default: "sample \(index + 1)"
    }
  }

  /// The samples from `range` (indices), as a recording of their own.
  public func slice(_ range: Range<Int>) -> InertialRecording {
    let locations: SampleLocations
    switch self.locations {
    case .lines(let lines): locations = .lines(Array(lines[range]))
    case .records(let first): locations = .records(first: first + range.lowerBound)
    case .sampleNumbers: locations = .sampleNumbers
    }
    return InertialRecording(
      source: source, timeSeconds: Array(timeSeconds[range]),
      channels: channels.map { Array($0[range]) },
      temperatureCelsius: temperatureCelsius.map { Array($0[range]) }, locations: locations)
  }
}

/// How samples are numbered in their source, for messages.
public enum SampleLocations: Sendable, Hashable {
  /// The 1-based text line of each sample (CSV). `Int`, not `Int32`: a file of more than 2³¹
  /// lines must not trap the counter.
  case lines([Int])
  /// Sequential record numbers starting at `first` (binary recordings).
  case records(first: Int)
  /// No better location than the 1-based sample number.
  case sampleNumbers
}

/// The part a recording was made with: WHO_AM_I as read and the part's name.
public struct RecordedChip: Hashable, Sendable {
  public var whoAmI: UInt8
  public var name: String

  public init(whoAmI: UInt8, name: String) {
    self.whoAmI = whoAmI
    self.name = name
  }
}
