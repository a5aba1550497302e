import AttitudeEstimation
import Geometry

/// The CSV layout `plumb replay` reads and writes.
///
/// Input: a header line starting `t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z` (further columns are
/// allowed and ignored, so BROAD's decompressed files replay directly), then one sample per
/// line: time in seconds (any origin, strictly increasing, any rate), angular rate in rad/s,
/// specific force in m/s², all in body axes.
///
/// Output: one line per input line, in the same order, with the time copied verbatim and the
/// estimate (see `outputHeader`). Numbers are written with Swift's shortest round-trip
/// representation, which is locale-independent and deterministic.
enum ReplayFormat {
  static let inputColumns = ["t_s", "gyr_x", "gyr_y", "gyr_z", "acc_x", "acc_y", "acc_z"]

  static let outputColumns = [
    "t_s", "qw", "qx", "qy", "qz", "grav_x", "grav_y", "grav_z", "lin_acc_x", "lin_acc_y",
    "lin_acc_z", "rate_x", "rate_y", "rate_z", "bias_x", "bias_y", "bias_z", "bias_sigma_x",
    "bias_sigma_y", "bias_sigma_z", "rest", "flags", "missed",
  ]

  static var outputHeader: String { outputColumns.joined(separator: ",") }

  /// A problem with the input, naming the line (1 = the header) and what is wrong.
  struct InputError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line): \(message)" }
  }

  /// The lines of `text`, without a UTF-8 byte-order mark before the first (Excel's "CSV UTF-8"
  /// writes one). Split at each "\n" scalar: Swift's `Character` takes "\r\n" for one, so a
  /// split into characters would find no line end in a file written on Windows. A line keeps
  /// its "\r", which the parsing trims with the spaces.
  static func lines(_ text: String) -> [Substring] {
    var scalars = Substring(text).unicodeScalars
    if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
    return scalars.split(separator: "\n", omittingEmptySubsequences: false).map(Substring.init)
  }

  /// Checks the header line; returns whether an eighth column `temp_c` (°C) follows.
  static func checkHeader(_ line: Substring) throws(InputError) -> Bool {
    let names = line.split(separator: ",", omittingEmptySubsequences: false).map {
      String($0.trimmingCharacters())
    }
    guard names.count >= inputColumns.count, Array(names.prefix(inputColumns.count)) == inputColumns
    else {
      throw InputError(
        line: 1,
        message:
          "the header must start with \(inputColumns.joined(separator: ",")) (found \"\(line.prefix(80))\")"
      )
    }
    return names.count > inputColumns.count && names[inputColumns.count] == "temp_c"
  }

  /// One data line → its time text, time in nanoseconds, and the sample.
  static func parse(_ line: Substring, number: Int, temperature: Bool = false) throws(InputError)
    -> (
      Substring, Int64, InertialSample
    )
  {
    var values = [Double](repeating: 0, count: 7)
    var timeText: Substring = ""
    var field = 0
    var start = line.startIndex
    var index = line.startIndex
    while field < 7 {
      while index < line.endIndex && line[index] != "," { index = line.index(after: index) }
      let text = line[start..<index].trimmingCharacters()
      guard let value = Double(text) else {
        if index == line.endIndex && text.isEmpty && field > 0 {
          throw InputError(
            line: number,
            message: "expected \(inputColumns.count) columns, found \(field)")
        }
        throw InputError(
          line: number, message: "\(inputColumns[field]) is not a number: \"\(text.prefix(40))\"")
      }
      guard value.isFinite else {
        throw InputError(
          line: number, message: "\(inputColumns[field]) is \(text), not a finite number")
      }
      if field == 0 { timeText = text }
      values[field] = value
      field += 1
      if field < 7 {
        guard index < line.endIndex else {
          throw InputError(
            line: number, message: "expected \(inputColumns.count) columns, found \(field)")
        }
        index = line.index(after: index)
        start = index
      }
    }
    let nanoseconds = (values[0] * 1e9).rounded()
    guard abs(nanoseconds) < 9e18 else {
      throw InputError(line: number, message: "t_s \(values[0]) is out of range")
    }
    var celsius = Double.nan
    if temperature, index < line.endIndex {
      let rest = line[line.index(after: index)...]
      let text = (rest.firstIndex(of: ",").map { rest[..<$0] } ?? rest).trimmingCharacters()
      guard let value = Double(text), value.isFinite else {
        throw InputError(line: number, message: "temp_c is not a number: \"\(text.prefix(40))\"")
      }
      celsius = value
    }
    let sample = InertialSample(
      timestampNanoseconds: Int64(nanoseconds),
      angularRateRadiansPerSecond: Vector3(values[1], values[2], values[3]),
      specificForceMetersPerSecondSquared: Vector3(values[4], values[5], values[6]),
      temperatureCelsius: celsius)
    return (timeText, Int64(nanoseconds), sample)
  }

  /// One output line (without the newline).
  static func format(timeText: Substring, _ e: AttitudeEstimate) -> String {
    let q = e.attitude
    let g = e.gravityInBody
    let a = e.linearAccelerationMetersPerSecondSquared
    let r = e.angularRateRadiansPerSecond
    let b = e.gyroBiasRadiansPerSecond
    let s = e.gyroBiasUncertaintyRadiansPerSecond
    var line = String(timeText)
    for v in [
      q.w, q.x, q.y, q.z, g.x, g.y, g.z, a.x, a.y, a.z, r.x, r.y, r.z, b.x, b.y, b.z, s.x, s.y, s.z,
    ] {
      line += ","
      line += "\(v)"
    }
    line += e.isAtRest ? ",1," : ",0,"
    line += "\(e.flags.rawValue),\(e.missedSamples)"
    return line
  }
}

extension Substring {
  /// Without leading and trailing spaces, tabs and carriage returns.
  func trimmingCharacters() -> Substring {
    var s = self
    while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
    return s
  }
}
