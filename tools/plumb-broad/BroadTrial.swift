import AttitudeEstimation
import Foundation
import Geometry

/// One BROAD trial as converted for Plumb (see the data folder's README):
/// `t_s, gyr_x, gyr_y, gyr_z, acc_x, acc_y, acc_z, opt_qw, opt_qx, opt_qy, opt_qz, movement`.
struct BroadTrial {
  var name: String
  var timestampNanoseconds: [Int64] = []
  var gyro: [Vector3] = []
  var acceleration: [Vector3] = []
  /// Optical truth, IMU frame → East-North-Up; NaN rows are dropouts.
  var truth: [Quaternion] = []
  var movement: [Bool] = []

  var count: Int { timestampNanoseconds.count }

  /// Why this trial cannot be scored, or `nil`: with no samples, or no movement sample with an
  /// optical truth, the RMSE would be over nothing (printed as 0, a perfect score).
  var scoringProblem: String? {
    if count == 0 { return "\(name) has no samples (the file holds no rows after its header)" }
    let scorable = (0..<count).filter { movement[$0] && truth[$0].isFinite }.count
    if scorable == 0 {
      return "\(name) has no movement samples with an optical truth to score (\(count) samples, "
        + "none with movement = 1 and a finite opt_q)"
    }
    return nil
  }
}

enum BroadError: Error, CustomStringConvertible {
  case noFiles(String)
  case gzipFailed(String, Int32, String)
  case malformed(String, line: Int, String)

  var description: String {
    switch self {
    case .noFiles(let dir):
      return "no BROAD trials (*.csv.gz) in \(dir); pass --data DIR pointing at the eleven files"
    case .gzipFailed(let file, let status, let message):
      return "gzip -dc \(file) failed with status \(status): \(message)"
    case .malformed(let file, let line, let what):
      return "\(file):\(line): \(what)"
    }
  }
}

/// Decompresses `path` by running `gzip -dc` and parses it.
func loadTrial(path: String) throws -> BroadTrial {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["gzip", "-dc", path]
  let output = Pipe()
  let errors = Pipe()
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  let file = (path as NSString).lastPathComponent
  guard process.terminationStatus == 0 else {
    throw BroadError.gzipFailed(file, process.terminationStatus, errorText)
  }
  var name = file
  if name.hasSuffix(".csv.gz") { name.removeLast(7) }
  var trial = BroadTrial(name: name)
  // One NUL-terminated buffer, so strtod can parse in place (it stops at ',' and '\n').
  var text = [CChar](repeating: 0, count: data.count + 1)
  data.withUnsafeBytes { raw in
    for (k, byte) in raw.enumerated() { text[k] = CChar(bitPattern: byte) }
  }
  try text.withUnsafeBufferPointer { buffer in
    let base = buffer.baseAddress!
    let end = data.count
    var i = 0
    var line = 1
    // Skip the header.
    while i < end && buffer[i] != 10 { i += 1 }
    i += 1
    var values = [Double](repeating: 0, count: 12)
    while i < end {
      line += 1
      if buffer[i] == 10 {
        i += 1
        continue
      }
      for field in 0..<12 {
        var next: UnsafeMutablePointer<CChar>? = nil
        values[field] = strtod(base + i, &next)
        let consumed = next.map { $0 - UnsafeMutablePointer(mutating: base) } ?? i
        guard consumed > i else {
          throw BroadError.malformed(file, line: line, "column \(field + 1) is not a number")
        }
        i = consumed
        let separator = i < end ? buffer[i] : 10
        if field < 11 {
          guard separator == 44 else {
            throw BroadError.malformed(file, line: line, "expected 12 columns")
          }
        }
        i += 1
      }
      trial.timestampNanoseconds.append(Int64((values[0] * 1e9).rounded()))
      trial.gyro.append(Vector3(values[1], values[2], values[3]))
      trial.acceleration.append(Vector3(values[4], values[5], values[6]))
      trial.truth.append(Quaternion(w: values[7], x: values[8], y: values[9], z: values[10]))
      trial.movement.append(values[11] == 1)
    }
  }
  return trial
}

/// The dataset authors' 6D scoring (README): e = q_est ⊗ conj(q_opt) in the earth frame;
/// inclination error 2·acos(√(e_w² + e_z²)); heading error 2·atan(e_z/e_w) with one constant
/// offset (the circular mean) removed; RMSE over movement samples, optical dropouts skipped.
struct TrialScore {
  var inclinationRMSEDegrees: Double
  var headingDriftRMSEDegrees: Double
  var scoredSamples: Int
}

func score(estimates: [Quaternion], trial: BroadTrial) -> TrialScore {
  var inclinationSquares = 0.0
  var headings: [Double] = []
  headings.reserveCapacity(trial.count)
  for i in 0..<trial.count where trial.movement[i] {
    let truth = trial.truth[i]
    guard truth.isFinite else { continue }
    let e = (estimates[i].normalized * truth.normalized.conjugate).normalized
    let inclination = 2 * acos(min(1, (e.w * e.w + e.z * e.z).squareRoot()))
    inclinationSquares += inclination * inclination
    headings.append(2 * atan(e.z / e.w))
  }
  var s = 0.0
  var c = 0.0
  for h in headings {
    s += sin(h)
    c += cos(h)
  }
  let offset = atan2(s, c)
  var headingSquares = 0.0
  for h in headings {
    var d = h - offset
    d = atan2(sin(d), cos(d))
    headingSquares += d * d
  }
  let n = Double(max(headings.count, 1))
  return TrialScore(
    inclinationRMSEDegrees: (inclinationSquares / n).squareRoot() * degreesPerRadian,
    headingDriftRMSEDegrees: (headingSquares / n).squareRoot() * degreesPerRadian,
    scoredSamples: headings.count)
}

/// Runs the estimator over a trial. Returns the attitudes and the fraction of samples at rest.
func estimate(trial: BroadTrial, settings: AttitudeEstimator.Settings) -> ([Quaternion], Double) {
  var estimator = AttitudeEstimator(settings: settings)
  var result: [Quaternion] = []
  result.reserveCapacity(trial.count)
  var rest = 0
  for i in 0..<trial.count {
    let e = estimator.update(
      InertialSample(
        timestampNanoseconds: trial.timestampNanoseconds[i],
        angularRateRadiansPerSecond: trial.gyro[i],
        specificForceMetersPerSecondSquared: trial.acceleration[i]))
    result.append(e.attitude)
    if e.isAtRest { rest += 1 }
  }
  return (result, Double(rest) / Double(max(trial.count, 1)))
}
