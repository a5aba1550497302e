import AttitudeEstimation
import Foundation

/// `plumb replay --input IN.csv --output OUT.csv`: the attitude estimator over a recording.
///
/// Exit status (sysexits.h): 0 done; 64 usage error; 65 the input is malformed (the message
/// names the line and the problem); 66 the input cannot be read; 73 the output cannot be
/// created. The output is written to a temporary file beside it and renamed into place only
/// when every line succeeded, so a failed replay never leaves a partial output file.
struct ReplayCommand {
  static let name = "replay"
  static let summary = "run the attitude estimator over a CSV recording"
  static let usage = """
    USAGE: plumb replay --input IN.csv --output OUT.csv

    Runs Plumb's attitude estimator, with its default settings, over a recording and writes
    one line of estimates per sample.

    INPUT: a CSV file whose header starts
        t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z
    (more columns may follow and are ignored), then one sample per line: time in seconds,
    strictly increasing, at any rate (the interval comes from t_s); angular rate in rad/s;
    specific force in m/s² (about +9.8 on the up axis at rest); body axes.

    OUTPUT: a CSV file with the header
        \(ReplayFormat.outputHeader)
    and exactly one line per input line: t_s copied verbatim; the attitude quaternion (w, x, y,
    z), mapping body vectors into the reference frame (z up, x = the heading at start; without a
    magnetometer the heading is relative and drifts slowly); gravity's direction in the body;
    linear acceleration (m/s²); bias-corrected rate (rad/s); gyro bias and its 1σ uncertainty
    (rad/s); rest (1/0); the estimator's flags (bits: 0 initialising, 1 at rest,
    2 acceleration rejected, 3 recovering, 4 gap, 5 clipped input, 8 rest started, 9 bias
    limited); samples missed before this one.

    OPTIONS:
      --input IN.csv     the recording to read
      --output OUT.csv   where to write the estimates (replaced only on success)
      -h, --help         show this help

    EXAMPLE:
      gzip -dc 01_undisturbed_slow_rotation_A.csv.gz > trial.csv
      plumb replay --input trial.csv --output trial-estimates.csv
    """

  enum Failure: Error {
    case usage(String)
    case input(String)
    case data(String)
    case output(String)

    var status: Int32 {
      switch self {
      case .usage: 64
      case .data: 65
      case .input: 66
      case .output: 73
      }
    }

    var message: String {
      switch self {
      case .usage(let m), .input(let m), .data(let m), .output(let m): m
      }
    }
  }

  var inputPath: String
  var outputPath: String

  /// Parses the arguments after `replay`. `nil` means help was asked for.
  static func parse(_ arguments: [String]) throws(Failure) -> ReplayCommand? {
    var input: String?
    var output: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "-h", "--help":
        return nil
      case "--input", "--output":
        guard let value = rest.popFirst(), !value.hasPrefix("--") || value == "-" else {
          throw .usage("\(argument) needs a file name")
        }
        if argument == "--input" { input = value } else { output = value }
      default:
        throw .usage("unknown argument '\(argument)'")
      }
    }
    guard let input else { throw .usage("missing --input IN.csv") }
    guard let output else { throw .usage("missing --output OUT.csv") }
    guard URL(fileURLWithPath: input).standardized != URL(fileURLWithPath: output).standardized
    else {
      throw .usage("--input and --output must be different files")
    }
    return ReplayCommand(inputPath: input, outputPath: output)
  }

  /// Replays; returns the number of samples.
  func run() throws(Failure) -> Int {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: inputPath))
    } catch {
      throw .input("cannot read \(inputPath): \(error.localizedDescription)")
    }
    let text = String(decoding: data, as: UTF8.self)
    var settings = AttitudeEstimator.Settings.default
    settings.sampleClock.nominalPeriodSeconds = nil  // the rate comes from t_s
    var estimator = AttitudeEstimator(settings: settings)

    let outputURL = URL(fileURLWithPath: outputPath)
    let directory = outputURL.deletingLastPathComponent()
    let temporary = directory.appendingPathComponent(
      ".\(outputURL.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
    guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
      let handle = try? FileHandle(forWritingTo: temporary)
    else {
      throw .output(
        "cannot create \(temporary.path) (beside \(outputPath)): check the folder exists and is writable"
      )
    }
    var succeeded = false
    defer {
      try? handle.close()
      if !succeeded { try? FileManager.default.removeItem(at: temporary) }
    }

    var buffer = ReplayFormat.outputHeader + "\n"
    var count = 0
    var lineNumber = 0
    var previous: Int64?
    do throws(ReplayFormat.InputError) {
      for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        lineNumber += 1
        if lineNumber == 1 {
          try ReplayFormat.checkHeader(line)
          continue
        }
        if line.trimmingCharacters().isEmpty { continue }
        let (timeText, nanoseconds, sample) = try ReplayFormat.parse(line, number: lineNumber)
        if let p = previous, nanoseconds <= p {
          throw ReplayFormat.InputError(
            line: lineNumber,
            message:
              "t_s \(timeText) does not increase (the previous sample was at \(Double(p) * 1e-9) s)"
          )
        }
        previous = nanoseconds
        let estimate = estimator.update(sample)
        buffer += ReplayFormat.format(timeText: timeText, estimate)
        buffer += "\n"
        count += 1
        if buffer.utf8.count > 1 << 20 {
          handle.write(Data(buffer.utf8))
          buffer = ""
        }
      }
      if lineNumber == 0 || (lineNumber == 1 && text.isEmpty) {
        throw ReplayFormat.InputError(line: 1, message: "the file is empty: it needs a header")
      }
    } catch {
      throw .data("\(inputPath): \(error.description)")
    }
    handle.write(Data(buffer.utf8))
    do {
      try handle.synchronize()
      try handle.close()
      if FileManager.default.fileExists(atPath: outputURL.path) {
        _ = try FileManager.default.replaceItemAt(outputURL, withItemAt: temporary)
      } else {
        try FileManager.default.moveItem(at: temporary, to: outputURL)
      }
    } catch {
      throw .output("cannot write \(outputPath): \(error.localizedDescription)")
    }
    succeeded = true
    return count
  }
}
