import Geometry
import Telemetry
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SplitMix64 (Steele, Lea & Flood 2014): a small seeded generator, so every random test input
/// is the same on every run.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A double in [lower, upper).
  mutating func uniform(_ lower: Double, _ upper: Double) -> Double {
    lower + (upper - lower) * Double(next() >> 11) / Double(1 << 53)
  }

  /// A random unit quaternion (normalised 4-D Gaussian-ish via uniform cube rejection).
  mutating func quaternion() -> Quaternion {
    while true {
      let q = Quaternion(
        w: uniform(-1, 1), x: uniform(-1, 1), y: uniform(-1, 1), z: uniform(-1, 1))
      let n = q.norm
      if n > 0.1 && n <= 1 { return q.normalized }
    }
  }

  mutating func vector(_ magnitude: Double) -> Vector3 {
    Vector3(
      uniform(-magnitude, magnitude), uniform(-magnitude, magnitude), uniform(-magnitude, magnitude)
    )
  }
}

// MARK: - Files (no Foundation in the library; the tests read vectors with libc)

/// `Tests/TelemetryTests/Vectors`.
let vectorsDirectory: String = {
  var path = #filePath
  while let last = path.last, last != "/" { path.removeLast() }
  return path + "Vectors"
}()

/// `PLUMB_REGENERATE_VECTORS=1 swift test --filter TelemetryTests` rewrites the committed
/// vectors from the encoders (then inspect the diff by hand before committing it).
let regenerateVectors = getenv("PLUMB_REGENERATE_VECTORS") != nil

func readFile(_ path: String) -> [UInt8]? {
  guard let file = fopen(path, "rb") else { return nil }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while true {
    let n = fread(&chunk, 1, chunk.count, file)
    if n <= 0 { break }
    bytes += chunk[0..<n]
  }
  return bytes
}

@discardableResult
func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
  guard let file = fopen(path, "wb") else { return false }
  defer { fclose(file) }
  return fwrite(bytes, 1, bytes.count, file) == bytes.count
}

/// Compares `actual` with the committed vector `name` (or rewrites it when regenerating).
func expectGolden(
  _ name: String, _ actual: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) {
  let path = vectorsDirectory + "/" + name
  if regenerateVectors { writeFile(path, actual) }
  guard let expected = readFile(path) else {
    Issue.record(
      "missing vector \(path): run with PLUMB_REGENERATE_VECTORS=1 once and inspect it",
      sourceLocation: sourceLocation)
    return
  }
  #expect(
    actual == expected, "\(name) differs from the committed vector", sourceLocation: sourceLocation)
}

// MARK: - Hex

func hex(_ bytes: [UInt8]) -> String {
  let digits = Array("0123456789abcdef")
  var text = ""
  for byte in bytes {
    text.append(digits[Int(byte >> 4)])
    text.append(digits[Int(byte & 0xF)])
  }
  return text
}

func bytes(hex text: String) -> [UInt8] {
  var result: [UInt8] = []
  var high: UInt8?
  for c in text.utf8 {
    let nibble: UInt8
    switch c {
    case 0x30...0x39: nibble = c - 0x30
    case 0x61...0x66: nibble = c - 0x61 + 10
    case 0x41...0x46: nibble = c - 0x41 + 10
    default: continue
    }
    if let h = high {
      result.append(h << 4 | nibble)
      high = nil
    } else {
      high = nibble
    }
  }
  return result
}

/// A hex vector file: `# comment` lines, then one frame per line.
func hexFile(_ entries: [(comment: String, bytes: [UInt8])]) -> [UInt8] {
  var text = ""
  for entry in entries {
    text += "# \(entry.comment)\n\(hex(entry.bytes))\n"
  }
  return Array(text.utf8)
}

// MARK: - The golden frames (their field values are written out in FORMATS.md)

enum Golden {
  /// A: level, at rest, calibrated.
  static let level = TelemetryFrame(
    sequence: 1, sampleTimeNanoseconds: 1_000_000_000, attitude: .identity,
    gyroBiasRadiansPerSecond: Vector3(0.001, -0.002, 0.0005),
    rateRadiansPerSecond: .zero, linearAccelerationMetersPerSecondSquared: .zero,
    gravityBodyMetersPerSecondSquared: Vector3(0, 0, -9.80665), temperatureCelsius: 25,
    flags: [.rest, .calibrationLoaded], missedSamples: 0, latencyMicroseconds: 850,
    calibrationID: 0x1234_5678)

  /// B: roll 30°, pitch 10°, yaw 45° (aerospace ZYX, NED/FRD), turning and accelerating.
  /// The quaternion is Rz(45°)·Ry(10°)·Rx(30°) in NED, mapped to Plumb's frames (w, x, −y, −z),
  /// computed once with Python's math module.
  static let banked = TelemetryFrame(
    sequence: 2, sampleTimeNanoseconds: 1_010_000_000,
    attitude: Quaternion(
      w: 0.897635659657183, x: 0.20599112279858978, y: -0.17644656798009617,
      z: -0.3473967306812714),
    gyroBiasRadiansPerSecond: Vector3(-0.0123, 0.00456, 0.0789),
    rateRadiansPerSecond: Vector3(0.1, -0.2, 0.3),
    linearAccelerationMetersPerSecondSquared: Vector3(1.25, -0.5, 0.125),
    gravityBodyMetersPerSecondSquared: Vector3(-1.7029, -4.8288, -8.3638),
    temperatureCelsius: 31.47, flags: [.gap, .recovering, .calibrationLoaded], missedSamples: 3,
    latencyMicroseconds: 1234, calibrationID: 0x1234_5678)

  /// C: every field at an edge: the widest text line (95 bytes), saturated and NaN fields,
  /// pitch −89.5° (gimbal lock), all flags.
  static let extreme = TelemetryFrame(
    sequence: .max, sampleTimeNanoseconds: .min,
    attitude: Quaternion(
      w: -0.7039878002527384, x: -0.006170533687572806, y: -0.7101584514200556,
      z: 0.006170533687572807),
    gyroBiasRadiansPerSecond: Vector3(.nan, 1, -1),
    rateRadiansPerSecond: Vector3(0, 0, 0),
    linearAccelerationMetersPerSecondSquared: Vector3(200, -200, 163.835),
    gravityBodyMetersPerSecondSquared: Vector3(9.80665, 0, 0),
    temperatureCelsius: -999.99, flags: TelemetryFlags(rawValue: 0x03FF),
    missedSamples: .max, latencyMicroseconds: .max, calibrationID: 0)

  static let all = [("A level", level), ("B banked", banked), ("C extreme", extreme)]
}

/// Whether two doubles agree, treating NaN as equal to NaN.
func same(_ a: Double, _ b: Double, tolerance: Double = 0) -> Bool {
  (a.isNaN && b.isNaN) || abs(a - b) <= tolerance
}
