import Foundation
import HIL
import Telemetry
import Testing

/// A committed run: the bytes a host received, byte for byte.
struct GoldenRun: Sendable, CustomTestStringConvertible {
  var file: String
  var scenario: String
  var faults: String
  var seconds: Double
  var format: TelemetryFormat

  var testDescription: String { file }
}

let goldenRuns: [GoldenRun] = [
  GoldenRun(file: "tilt-binary.bin", scenario: "tilt", faults: "none", seconds: 9, format: .binary),
  GoldenRun(
    file: "handheld-20s-text.txt", scenario: "handheld", faults: "none", seconds: 20,
    format: .text),
  GoldenRun(
    file: "push-mavlink.bin", scenario: "push", faults: "none", seconds: 13, format: .mavlink),
  GoldenRun(
    file: "walk-brownout-binary.bin", scenario: "walk", faults: "brownout", seconds: 10,
    format: .binary),
]

/// Golden frames: a few scenario runs (seed 1, the typical unit) whose frame bytes are committed
/// under `Tests/HILTests/Golden/`. Any change to a format, a number the estimator computes, the
/// driver, the loop or the simulation that changes a frame fails here, so that such a change is
/// always made on purpose. To accept one deliberately:
///
///     PLUMB_REGENERATE_GOLDEN=1 swift test --filter GoldenFrameTests
///
/// then commit the new files saying why they changed (Golden/README.md).
@Suite struct GoldenFrameTests {
  static let regenerating = ProcessInfo.processInfo.environment["PLUMB_REGENERATE_GOLDEN"] == "1"

  @Test(arguments: goldenRuns)
  func theFramesAreByteForByteTheCommittedOnes(_ run: GoldenRun) throws {
    let result = try hil(run.scenario, faults: run.faults, seconds: run.seconds, format: run.format)
    {
      $0.keepBytes = true
    }
    let path = goldenDirectory + "/" + run.file
    // Whatever the bytes, they must be a clean stream of this format.
    var decoder = StreamDecoder(format: run.format)
    var frames = 0
    decoder.decode(result.bytes) { if $0.attitudeSample != nil { frames += 1 } }
    decoder.finish()
    #expect(frames > Int(run.seconds * 70) && decoder.statistics.crcErrors == 0)
    #expect(decoder.statistics.bytesSkipped == 0)

    if Self.regenerating {
      try Data(result.bytes).write(to: URL(fileURLWithPath: path))
      return
    }
    let golden = try #require(
      FileManager.default.contents(atPath: path),
      "missing \(path): run `PLUMB_REGENERATE_GOLDEN=1 swift test --filter GoldenFrameTests` once")
    let received = Data(result.bytes)
    guard received != golden else { return }
    let first = zip(received, golden).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    Issue.record(
      """
      \(run.file): the frames differ from the committed golden file (\(received.count) bytes \
      received, \(golden.count) committed; first difference at byte \
      \(first ?? min(received.count, golden.count))). A numeric or format change must be \
      deliberate: if this one is, regenerate with `PLUMB_REGENERATE_GOLDEN=1 swift test \
      --filter GoldenFrameTests` and commit the new files saying why they changed.
      """)
  }

  /// The golden runs are reproducible within one build: the same options give the same bytes.
  @Test func theSameRunGivesTheSameBytes() throws {
    let first = try hil("walk", faults: "brownout", seconds: 8) { $0.keepBytes = true }
    let second = try hil("walk", faults: "brownout", seconds: 8) { $0.keepBytes = true }
    #expect(first.bytes.count > 20_000)
    #expect(first.bytes == second.bytes)
  }
}
