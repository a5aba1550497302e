/// A full-scale change seen in the counts: for each sensor, the power of two `k` by which its
/// vector's magnitude changed from one sample to the next (0: no such change). A range
/// register that changes by itself multiplies that sensor's counts by `2^k`, k = ±1, ±2, ±3
/// (the four ranges are a factor of two apart): from ±500 °/s to ±2000 °/s the gyro reads 4×
/// small, k = −2.
struct ScaleJump: Hashable {
  /// The accelerometer's `k`.
  var accelerometer: Int8 = 0
  /// The gyroscope's `k`.
  var gyro: Int8 = 0

  /// Whether either sensor's magnitude changed by a power of two.
  var isSuspicious: Bool { accelerometer != 0 || gyro != 0 }
}

/// The trigger of the early configuration read-back (`MPU6050Driver.readSample`): from the raw
/// counts of each burst, before conversion, whether the accelerometer's or the gyro's vector
/// changed in magnitude since the previous burst by a factor near a power of two, as a
/// full-scale register that changed by itself would make it. No conversion is needed: a
/// range change multiplies the counts by `2^k`.
///
/// A sample is suspicious for a sensor when
/// - the previous sample's magnitude is at least the floor (accelerometer 0.25 g, gyroscope
///   30 °/s, in counts at the configured range): gravity alone always qualifies, so an
///   accelerometer range change is seen at the first sample after it, at rest as in motion;
///   below 30 °/s a change of the gyro's range cannot be told from a change of motion (a
///   rotation that stops halves its rate within a sample), and the scale error there matters
///   least. (The floor is on the raw reading: an uncalibrated unit's zero-rate offset counts.)
///   At 20 °/s the simulated `handheld` scenario set it off seven times in ten minutes, each
///   the end of a rotation; at 30 °/s once (seeds 1 and 2 alike), and `rest-turn`,
///   `restless`, `car` and `walk` never;
/// - this sample's magnitude is at least an eighth of the floor (the most a range change can
///   shrink a reading), so readings at noise level do not make ratios;
/// - the magnitude ratio is within 2^(k ± 0.15) for k = ±1, ±2, ±3: compared as squared
///   magnitudes (integers: three multiplies and two adds per sensor) against bands of
///   4^k × 2^(±0.3), scaled by 1024 so the comparison needs no division or logarithm.
///
/// Owns the previous burst's squared magnitudes. Allocation-free: six multiplies and a few
/// compares a sample. Measured with the rest of the early read-back's bookkeeping in
/// `readSample`: 63 instructions a sample more in the replay pass (callgrind, `plumb-bench
/// profile-replay --replay-seconds 120`: 3 905 → 3 968 per sample, 1.6 %; squaring in
/// `SIMD3<Int32>` cost 7 more).
struct ScaleChangeCheck {
  /// The floors, squared counts: the previous sample's least squared magnitude.
  private let accelerometerFloor: Int64
  private let gyroFloor: Int64
  private var previousAccelerometer: Int64 = 0
  private var previousGyro: Int64 = 0
  private var hasPrevious = false

  /// The accelerometer's floor, g, and the gyro's, °/s: see the type's comment.
  static let accelerometerFloorStandardGravities = 0.25
  static let gyroFloorDegreesPerSecond = 30.0

  init(accelerometer: AccelerometerFullScale, gyro: GyroFullScale) {
    let a = Self.accelerometerFloorStandardGravities * accelerometer.countsPerStandardGravity
    let g = Self.gyroFloorDegreesPerSecond * gyro.countsPerDegreePerSecond
    accelerometerFloor = Int64((a * a).rounded())
    gyroFloor = Int64((g * g).rounded())
  }

  /// Records `raw` and says which sensors' magnitudes jumped by a power of two since the
  /// previous sample recorded (none for the first after `forgetPrevious`).
  @inline(__always)
  mutating func record(_ raw: MPU6050RawSample) -> ScaleJump {
    let accelerometer = Self.squaredMagnitude(raw.accelerometer)
    let gyro = Self.squaredMagnitude(raw.gyro)
    var jump = ScaleJump()
    if hasPrevious {
      jump.accelerometer = Self.powerOfTwo(
        from: previousAccelerometer, to: accelerometer, floor: accelerometerFloor)
      jump.gyro = Self.powerOfTwo(from: previousGyro, to: gyro, floor: gyroFloor)
    }
    previousAccelerometer = accelerometer
    previousGyro = gyro
    hasPrevious = true
    return jump
  }

  /// Forgets the previous sample (after a rewrite of the configuration, or a re-initialisation:
  /// the next sample is not compared with one read at another range).
  mutating func forgetPrevious() { hasPrevious = false }

  @inline(__always)
  static func squaredMagnitude(_ counts: SIMD3<Int16>) -> Int64 {
    let x = Int64(counts.x)
    let y = Int64(counts.y)
    let z = Int64(counts.z)
    return x * x + y * y + z * z
  }

  /// `k` when `current / previous` (squared magnitudes) is within 4^k × 2^(±0.3), k = ±1…±3,
  /// and both are above their floors; else 0. The bands, × 1024: 4 × 2^∓0.3 → 3327…5042,
  /// 16 × 2^∓0.3 → 13308…20171, 64 × 2^∓0.3 → 53232…80684 (they do not overlap). A squared
  /// magnitude is at most 3 × 32768² < 2^32, so the products stay far below 2^63.
  @inline(__always)
  static func powerOfTwo(from previous: Int64, to current: Int64, floor: Int64) -> Int8 {
    guard previous >= floor, current >= floor &>> 6 else { return 0 }  // floor ≥ 0: ÷ 64
    let (large, small) = current >= previous ? (current, previous) : (previous, current)
    let scaled = large &* 1024
    guard scaled >= small &* 3327 else { return 0 }  // the usual case: one compare
    let magnitude: Int8
    if scaled <= small &* 5042 {
      magnitude = 1
    } else if scaled >= small &* 13308 && scaled <= small &* 20171 {
      magnitude = 2
    } else if scaled >= small &* 53232 && scaled <= small &* 80684 {
      magnitude = 3
    } else {
      return 0
    }
    return current >= previous ? magnitude : -magnitude
  }

  /// The counts' factor a full-scale register's change makes, as `k` of `2^k`: from range
  /// code `expected` to `found` (FS_SEL or AFS_SEL; each step doubles the range and halves the
  /// counts).
  static func powerOfTwo(expectedRange expected: UInt8, foundRange found: UInt8) -> Int8 {
    Int8(expected) - Int8(found)
  }
}
