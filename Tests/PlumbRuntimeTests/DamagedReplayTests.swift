import Dispatch
import Foundation
import HardwareAbstraction
import Recording
import Testing

/// A recording whose CRCs are whole but whose times are not (a time written over by a bad
/// card, a tool that edited the file): `plumb run --replay` must end and say where the
/// recording is damaged, not poll its way towards a sample dated centuries ahead.
@Suite("Replaying damaged recordings")
struct DamagedReplayTests {
  /// `source` copied to `destination` record by record, the `index`-th sample record (of
  /// `count`; negative counts from the end) dated `nanoseconds`.
  func redate(
    _ source: String, to destination: String, sample index: Int, nanoseconds: Int64
  ) throws {
    let reader = try PlumbRawReader(contentsOf: source)
    let records = Array(reader.records())
    let samples = records.indices.filter {
      if case .sample = records[$0] { return true }
      return false
    }
    let target = samples[index >= 0 ? index : samples.count + index]
    let writer = try PlumbRawWriter(creating: destination, header: reader.header)
    for (position, record) in records.enumerated() {
      if position == target, case .sample(var sample) = record {
        sample.timestamp = Timestamp(nanoseconds: nanoseconds)
        try writer.append(.sample(sample))
      } else {
        try writer.append(record)
      }
    }
    try writer.close()
  }

  /// Runs plumb, killing it after `seconds` (a replay that never ends fails the test instead of
  /// hanging it).
  func runPlumbWithin(_ seconds: Int, _ arguments: [String]) throws -> ProcessResult {
    try runPlumb(arguments) { process in
      DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
        if process.isRunning { process.terminate() }
      }
    }
  }

  @Test(
    "a sample dated far after its neighbours ends the replay with a message naming the file",
    arguments: [-1, 100])
  func sampleDatedFarAhead(index: Int) throws {
    let directory = try temporaryDirectory()
    let live = directory.appendingPathComponent("live.plumbraw").path
    let run = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "3", "--serial",
      "/dev/null", "--record", live,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    let damaged = directory.appendingPathComponent("damaged.plumbraw").path
    // 285 years after the epoch of the monotonic clock: valid for the format, no real run's.
    try redate(live, to: damaged, sample: index, nanoseconds: 9_000_000_000_000_000_000)
    let replay = try runPlumbWithin(
      60,
      [
        "run", "--replay", damaged, "--serial", directory.appendingPathComponent("out").path,
      ])
    #expect(replay.status == 65, "\(replay.standardError)")
    #expect(replay.standardError.contains("\(damaged) is damaged"), "\(replay.standardError)")
    // The samples before the damage were replayed (their frames written).
    let frames = try Data(contentsOf: directory.appendingPathComponent("out"))
    #expect(frames.count > 1_000)
  }
}
