import AttitudeEstimation
import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A deterministic stream of MPU-6050-like samples for timing the estimator: the same seed gives
/// the same samples, so every run, pass and machine times the same work.
///
/// What it holds, so that every branch of the estimator is exercised in realistic proportions:
/// - **Rests and motion** alternate: rests of 2–8 s (about a third of the time, as in BROAD's
///   trials), motion of 3–15 s. In motion the body turns at a smoothly varying rate (three
///   random sinusoids per axis, 0.1–1.5 Hz, up to about 170 °/s per axis) and accelerates
///   (sinusoids up to 3 m/s² horizontally); one motion in five carries a sustained 3 m/s² push
///   for 3 s, which the estimator's acceleration rejection must catch.
/// - **Sensor errors**: a gyro bias starting at a few °/s (an uncalibrated MPU-6050, PS §6.1)
///   and random-walking at 1e-4 rad/s/√s; white noise of 0.1 °/s on the gyro and 0.03 m/s² on
///   the accelerometer per sample (PS §6.1–6.2 at 44 Hz bandwidth); a ±4 g / ±500 °/s range
///   whose readings at 98 % are flagged as clipped.
/// - **Timing**: the chip's oscillator 1 % slow (10.1 ms period), 0.3 ms of Gaussian edge
///   jitter, and one edge in 10 000 missed (a gap).
struct SyntheticStream {
  var samples: [InertialSample]

  /// The fraction of samples generated at rest (truth, not the detector's verdict).
  var restFraction: Double

  init(count: Int, seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    var noise = SeededGenerator(seed: seed, stream: 1)
    var timing = SeededGenerator(seed: seed, stream: 2)
    samples = []
    samples.reserveCapacity(count)

    let period = 0.0101
    let gravity = 9.80665
    let gyroNoise = 0.1 * .pi / 180
    let accelerationNoise = 0.03
    let biasWalk = 1e-4 * period.squareRoot()
    let gyroLimit = 0.98 * 500 * .pi / 180
    let accelerationLimit = 0.98 * 4 * gravity

    var attitude = Quaternion.identity
    var bias = Vector3(0.03, -0.05, 0.04)
    var time = 0.0
    var index = 0
    var restCount = 0
    var atRest = true
    var segmentEnd = 3.0
    var segmentStart = 0.0
    var motion = Motion(random: &random, push: false)

    while index < count {
      if time >= segmentEnd {
        atRest.toggle()
        segmentStart = time
        if atRest {
          segmentEnd = time + random.nextUniform(in: 2..<8)
        } else {
          segmentEnd = time + random.nextUniform(in: 3..<15)
          motion = Motion(random: &random, push: random.occurs(withProbability: 0.2))
        }
      }
      // Truth at this instant: rate (body), acceleration (reference frame, gravity excluded).
      var rate = Vector3(0, 0, 0)
      var acceleration = Vector3(0, 0, 0)
      if !atRest {
        // Fade in and out over 0.5 s so the motion starts and stops smoothly.
        let t = time - segmentStart
        let fade = min(1, t / 0.5, (segmentEnd - time) / 0.5)
        rate = motion.rate(at: t) * fade
        acceleration = motion.acceleration(at: t) * fade
      } else {
        restCount += 1
      }
      let force = attitude.conjugate.rotate(acceleration + Vector3(0, 0, gravity))
      let gyro =
        rate + bias
        + Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian()) * gyroNoise
      let accel =
        force
        + Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian()) * accelerationNoise
      let clipped =
        max(abs(gyro.x), abs(gyro.y), abs(gyro.z)) >= gyroLimit
        || max(abs(accel.x), abs(accel.y), abs(accel.z)) >= accelerationLimit
      let jitter = timing.gaussian() * 0.3e-3
      let stamp = Int64(((time + jitter) * 1e9).rounded())
      if !timing.occurs(withProbability: 1e-4) {
        samples.append(
          InertialSample(
            timestampNanoseconds: stamp, angularRateRadiansPerSecond: gyro,
            specificForceMetersPerSecondSquared: accel, temperatureCelsius: 30,
            isClipped: clipped))
        index += 1
      }
      // Advance the truth by one period (exact exponential map) and the bias by its walk.
      attitude = (attitude * Quaternion(rotationVector: rate * period)).normalized
      bias += Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * biasWalk
      time += period
    }
    restFraction = Double(restCount) / Double(max(1, index))
  }
}

/// One motion segment: three sinusoids per axis of rate and of horizontal acceleration, and
/// possibly a sustained push.
private struct Motion {
  var rateAmplitude: [Double] = []
  var rateFrequency: [Double] = []
  var ratePhase: [Double] = []
  var accelerationAmplitude: [Double] = []
  var accelerationFrequency: [Double] = []
  var push: Vector3 = Vector3(0, 0, 0)
  var pushStart = 0.0

  init(random: inout SeededGenerator, push hasPush: Bool) {
    for _ in 0..<9 {
      rateAmplitude.append(random.nextUniform(in: -3..<3))
      rateFrequency.append(2 * .pi * random.nextUniform(in: 0.1..<1.5))
      ratePhase.append(random.nextUniform(in: 0..<(2 * .pi)))
    }
    for _ in 0..<6 {
      accelerationAmplitude.append(random.nextUniform(in: -3..<3))
      accelerationFrequency.append(2 * .pi * random.nextUniform(in: 0.2..<2))
    }
    if hasPush {
      let angle = random.nextUniform(in: 0..<(2 * .pi))
      push = Vector3(3 * cos(angle), 3 * sin(angle), 0)
      pushStart = random.nextUniform(in: 0..<1)
    }
  }

  func rate(at t: Double) -> Vector3 {
    var r = [0.0, 0.0, 0.0]
    for k in 0..<9 {
      r[k % 3] += rateAmplitude[k] / 3 * sin(rateFrequency[k] * t + ratePhase[k])
    }
    return Vector3(r[0], r[1], r[2])
  }

  func acceleration(at t: Double) -> Vector3 {
    var a = Vector3(0, 0, 0)
    for k in 0..<3 {
      a.x += accelerationAmplitude[k] / 3 * sin(accelerationFrequency[k] * t)
      a.y += accelerationAmplitude[k + 3] / 3 * sin(accelerationFrequency[k + 3] * t)
    }
    if t >= pushStart && t < pushStart + 3 { a += push }
    return a
  }
}
