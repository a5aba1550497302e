import AttitudeEstimation
import Boards
import Calibration
import Firmware
import Foundation
import Geometry
import MPU6050
import MPU6050Simulation
import MotionScenarios
import Recording
import SimulatedHardware
import Testing

@testable import PlumbRuntime

/// DESIGN.md's determinism contract: the same (edge timestamp, register bytes) sequence gives
/// byte-identical frames. A live run on the manual clock records what it consumed; a full-speed
/// replay of that recording through the replay chip, the real driver and the real loop must
/// produce exactly the bytes the live run wrote — with faults, fallbacks and recoveries too.
@Suite(.serialized) struct ReplayDeterminismTests {
  func board(faults: String, scenario: String = "handheld", in directory: URL) throws -> String {
    var text = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    text = text.replacingOccurrences(
      of: #""scenario": "handheld""#,
      with: #""scenario": "\#(scenario)", "faults": "\#(faults)""#)
    let path = directory.appendingPathComponent("board-\(faults).json").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test(arguments: [
    ("none", "binary"), ("nack-burst", "binary"), ("eio-burst", "text"),
    ("missing-edges", "binary"), ("duplicated-edges", "binary"), ("late-edges", "mavlink"),
    ("broken-wire", "binary"), ("not-wired", "binary"), ("brownout", "text"),
  ])
  func aReplayGivesTheLiveRunsFramesByteForByte(faults: String, format: String) throws {
    let directory = try temporaryDirectory()
    let boardPath = try board(faults: faults, in: directory)
    let live = directory.appendingPathComponent("live.out").path
    let replayed = directory.appendingPathComponent("replayed.out").path
    let recording = directory.appendingPathComponent("capture.plumbraw").path
    let run = try runPlumb([
      "run", "--board", boardPath, "--fast", "--duration", "12", "--format", format,
      "--serial", live, "--record", recording,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    let replay = try runPlumb(["run", "--replay", recording, "--serial", replayed])
    #expect(replay.status == 0, "\(replay.standardError)")
    #expect(!replay.standardError.contains("diverged"), "\(replay.standardError)")
    let a = try Data(contentsOf: URL(fileURLWithPath: live))
    let b = try Data(contentsOf: URL(fileURLWithPath: replayed))
    #expect(a.count > 10_000)
    #expect(a == b, "\(faults): live \(a.count) B, replay \(b.count) B")
  }

  /// A calibrated run writes the bias it learnt into the calibration file's `live` section at
  /// its clean shutdown, outside the file's hash (the id stays); the next run starts from it.
  /// A replay of that first run must start as it did — from the live section it had, or from
  /// none — not from the one it wrote: the frames differed from byte 2159 on. Twice, so that
  /// the second recording starts from a live section and its replay must find that one again.
  @Test func aCalibratedRunsReplayStartsFromTheLiveBiasItStartedFrom() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    let offset = SimulatedMPU6050Unit.typical(seed: 1).gyroOffsetRadiansPerSecond
    try CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "test unit"),
      created: "2026-12-01T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: offset + Vector3(0.004, -0.003, 0.002),
        biasUncertaintyRadiansPerSecond: Vector3(0.005, 0.005, 0.005),
        referenceTemperatureCelsius: 25)
    ).write(toPath: calibrationPath)
    let boardPath = try simulatedBoard(in: directory, calibration: "unit.json")
    for round in 1...2 {
      let live = directory.appendingPathComponent("live-\(round).out").path
      let replayed = directory.appendingPathComponent("replayed-\(round).out").path
      let recording = directory.appendingPathComponent("capture-\(round).plumbraw").path
      let run = try runPlumb([
        "run", "--board", boardPath, "--fast", "--duration", "30", "--serial", live, "--record",
        recording,
      ])
      #expect(run.status == 0, "\(run.standardError)")
      #expect(run.standardError.contains("live gyro bias written"), "\(run.standardError)")
      let replay = try runPlumb(["run", "--replay", recording, "--serial", replayed])
      #expect(replay.status == 0, "\(replay.standardError)")
      let a = try Data(contentsOf: URL(fileURLWithPath: live))
      let b = try Data(contentsOf: URL(fileURLWithPath: replayed))
      #expect(a.count > 10_000)
      #expect(a == b, "round \(round): live \(a.count) B, replay \(b.count) B")
    }
  }

  @Test func recordingsExportAndReplayThroughTheEstimator() throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("sim.plumbraw").path
    let record = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "5", "--output",
      recording,
    ])
    #expect(record.status == 0, "\(record.standardError)")
    #expect(record.standardError.contains("recorded"))
    let csv = directory.appendingPathComponent("sim.csv").path
    let export = try runPlumb(["export", recording, "--csv", "--output", csv])
    #expect(export.status == 0, "\(export.standardError)")
    let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
    #expect(lines.first == "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c")
    #expect(lines.count > 490)
    // The count `plumb record` reports is the count the file holds (the loop's warm-up
    // samples are recorded too, so that a replay discards them as the loop did).
    #expect(
      record.standardError.contains("recorded \(lines.count - 1) samples to \(recording)"),
      "\(record.standardError)")
    #expect(record.standardError.contains("warm-up"), "\(record.standardError)")
    let estimates = directory.appendingPathComponent("est.csv").path
    let replay = try runPlumb(["replay", "--input", recording, "--output", estimates])
    #expect(replay.status == 0, "\(replay.standardError)")
    let rows = try String(contentsOfFile: estimates, encoding: .utf8).split(separator: "\n")
    #expect(rows.count == lines.count)
  }

  /// `--realtime` plays the recording at its own pace (a bench capture played to a host as the
  /// board sent it): the same frames, taking at least the recording's length (a lower bound,
  /// which a loaded machine cannot break).
  @Test func aRealTimeReplayGivesTheSameFramesAtTheRecordingsPace() throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("capture.plumbraw").path
    let fast = directory.appendingPathComponent("fast.out").path
    let paced = directory.appendingPathComponent("paced.out").path
    let record = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "3", "--format",
      "binary", "--serial", directory.appendingPathComponent("live.out").path, "--record",
      recording,
    ])
    #expect(record.status == 0, "\(record.standardError)")
    #expect(try runPlumb(["run", "--replay", recording, "--serial", fast]).status == 0)
    let began = ContinuousClock.now
    let replay = try runPlumb(["run", "--replay", recording, "--realtime", "--serial", paced])
    let took = ContinuousClock.now - began
    #expect(replay.status == 0, "\(replay.standardError)")
    #expect(took >= .milliseconds(2_900), "\(took)")
    let a = try Data(contentsOf: URL(fileURLWithPath: fast))
    let b = try Data(contentsOf: URL(fileURLWithPath: paced))
    #expect(a.count > 5_000 && a == b)
    // Only replays are paced: a board runs in real time already.
    let misuse = try runPlumb(["run", "--board", "Boards/simulated.json", "--realtime"])
    #expect(misuse.status == 64 && misuse.standardError.contains("--realtime paces a --replay"))
  }

  /// A recording cut in the middle of a record (a power loss while recording) reads to its last
  /// whole record; every command that reads it says so, with the samples it read.
  @Test func aCutRecordingIsReportedAsCutByEveryReader() throws {
    let directory = try temporaryDirectory()
    let whole = try simulatedRecording(in: directory)
    let cut = directory.appendingPathComponent("cut.plumbraw").path
    let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
    try bytes.dropLast(7).write(to: URL(fileURLWithPath: cut))
    let reader = try PlumbRawReader(contentsOf: cut)
    #expect(reader.tornBytes > 0)
    let expected = "\(cut) ends in the middle of a record: \(reader.sampleCount) samples read"
    let output = directory.appendingPathComponent("out").path
    for arguments in [
      ["export", cut, "--csv", "--output", output], ["replay", "--input", cut, "--output", output],
      ["run", "--replay", cut, "--serial", output],
    ] {
      let result = try runPlumb(arguments)
      #expect(result.status == 0, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains(expected), "\(arguments): \(result.standardError)")
    }
    // A whole recording says nothing of the kind.
    let quiet = try runPlumb(["export", whole, "--csv", "--output", output])
    #expect(quiet.status == 0 && !quiet.standardError.contains("middle of a record"))
  }

  @Test func aDamagedRecordingIsAClearError() throws {
    let directory = try temporaryDirectory()
    let path = directory.appendingPathComponent("bad.plumbraw").path
    try Data("t_s,gyr_x\n1,2\n".utf8).write(to: URL(fileURLWithPath: path))
    let replay = try runPlumb(["run", "--replay", path])
    #expect(replay.status == 65)
    #expect(replay.standardError.contains(path))
  }
}

@Suite struct ReplayedCommandsTests {
  /// Host commands change the frames (tare, rate, format): the recording notes each obeyed
  /// command with the sample it followed, and the replay obeys it at the same place.
  @Test func obeyedCommandsReplayAtTheSameSample() throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("commands.plumbraw").path
    let replayedPath = directory.appendingPathComponent("replayed.bin").path
    let board = SimulatedMPU6050Board(motion: HandheldMotion(seconds: 30, seed: 3))
    let port = MemorySerialPort(clock: board.clock)
    var settings = FirmwareSettings()
    settings.format = .binary
    var (loop, recorder) = try recordingLoop(
      board: board, port: port, settings: settings, path: recording)
    var live: [UInt8] = []
    let commands = [(300, "tare\n"), (700, "rate 25\n"), (1200, "status\n"), (1500, "rate 100\n")]
    var next = 0
    while loop.status.samples < 2000 {
      if next < commands.count, loop.status.samples >= commands[next].0 {
        port.inject(Array(commands[next].1.utf8))
        next += 1
      }
      loop.step()
      live += port.takeWritten()
    }
    loop.finish()
    live += port.takeWritten()
    try recorder.close()
    #expect(loop.status.commands == 4)

    let summary = try replayRecording(
      path: recording, format: nil,
      options: RunOptions(serialPath: replayedPath, log: { _ in }))
    #expect(summary.status.commands == 4)
    let replayed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: replayedPath)))
    #expect(live.count > 50_000)
    #expect(replayed == live)
  }
}

extension ReplayedCommandsTests {
  /// Parameter changes and the gyro capture (the `set` and `calibrate gyro` commands, which
  /// MAVLink's PARAM_SET and PREFLIGHT_CALIBRATION become) replay at the same sample too: the
  /// MAVLink stream's bytes are the live run's.
  @Test func parameterChangesReplayAtTheSameSample() throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("parameters.plumbraw").path
    let replayedPath = directory.appendingPathComponent("replayed.mavlink").path
    let board = SimulatedMPU6050Board(motion: HandheldMotion(seconds: 30, seed: 4))
    let port = MemorySerialPort(clock: board.clock)
    var settings = FirmwareSettings()
    settings.format = .mavlink
    var (loop, recorder) = try recordingLoop(
      board: board, port: port, settings: settings, path: recording)
    var live: [UInt8] = []
    let commands = [
      (300, "set ATT_TAU_S 5\n"), (500, "set SR_IMU_HZ 25\n"), (700, "calibrate gyro\n"),
      (900, "set ATT_REJ_ON 0\n"), (1100, "set SR_ATT_HZ 33.3\n"), (1300, "set ATT_REJ_ON 1\n"),
    ]
    var next = 0
    while loop.status.samples < 2000 {
      if next < commands.count, loop.status.samples >= commands[next].0 {
        port.inject(Array(commands[next].1.utf8))
        next += 1
      }
      loop.step()
      live += port.takeWritten()
    }
    loop.finish()
    live += port.takeWritten()
    try recorder.close()
    #expect(loop.status.commands == 6)
    #expect(loop.parameterValue(.inclinationTimeConstant) == 5)

    let summary = try replayRecording(
      path: recording, format: nil,
      options: RunOptions(serialPath: replayedPath, log: { _ in }))
    #expect(summary.status.commands == 6)
    let replayed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: replayedPath)))
    #expect(live.count > 50_000)
    #expect(replayed == live)
  }
}

@Suite struct RunSummaryTests {
  /// A still board that never rests because its bias is far off (its calibration, or a first
  /// rest taken while it turned about the vertical) says so at the end of the run, with the
  /// rate and what to do; a run without refusals does not mention them.
  @Test func refusedRestsAreReportedWithTheRateAndTheFix() {
    var rests = RestStatistics()
    rests.rests = 2
    var summary = RunSummary(
      status: FirmwareStatus(), driver: MPU6050Counters(), sampleSeconds: 60, rests: rests)
    #expect(summary.description.hasSuffix(", 2 rests"))
    #expect(!summary.description.contains("refused"))
    summary.rests.refusedAsTurning = 7
    summary.rests.lastRefusedRateRadiansPerSecond = 1.25 * .pi / 180
    #expect(
      summary.description.contains("7 quiet dwells refused as a slow turn, the last at 1.250 °/s"))
    #expect(summary.description.contains("plumb-cal gyro"))
    // Or the first rest was a steady turn about the vertical, which nothing can tell from bias.
    #expect(summary.description.contains("turned steadily about the vertical"))
  }

  /// Restarts of the tilt after gaps (`AttitudeEstimator.gapReacquisitions`) are counted at
  /// the end of the run, only when there were any.
  @Test func tiltRestartsAfterGapsAreReported() {
    var summary = RunSummary(
      status: FirmwareStatus(), driver: MPU6050Counters(), sampleSeconds: 60,
      rests: RestStatistics())
    #expect(!summary.description.contains("restart"))
    summary.tiltRestarts = 3
    #expect(summary.description.hasSuffix(", 3 tilt restarts after gaps in the samples"))
  }
}

/// A loop on `board` whose bus goes through a recorder's tap, started, and recording to `path`
/// as `plumb run --record` does (the simulated board file's setup).
func recordingLoop(
  board: SimulatedMPU6050Board, port: MemorySerialPort, settings: FirmwareSettings, path: String
) throws -> (
  FirmwareLoop<
    PlumbRawBusTap<SimulatedI2CBus, ManualClock>, SimulatedDataReadyLine, MemorySerialPort,
    ManualClock
  >,
  PlumbRawRecorder
) {
  let recorder = PlumbRawRecorder(recordingBeganAt: board.clock.now())
  let setup = PlumbSetup(
    boardPath: "test", board: try BoardFile.load(path: "\(repositoryRoot)/Boards/simulated.json"),
    calibration: nil, settings: settings)
  var loop = try FirmwareLoop(
    bus: PlumbRawBusTap(board.bus, clock: board.clock, recorder: recorder), line: board.line,
    port: port, clock: board.clock, settings: settings)
  try loop.start()
  try beginRecording(
    &loop, recorder: recorder, path: path, setup: setup, settings: settings, overwrite: false)
  return (loop, recorder)
}
