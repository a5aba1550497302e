import Calibration
import Foundation
import Geometry
import HIL
import MPU6050Simulation
import MotionScenarios
import Testing

/// `plumb-hil` end to end, as a person or a CI script runs it.
@Suite struct CommandLineTests {
  @Test func theListsNameOneScenarioOrPlanFirstOnEachLine() throws {
    let scenarios = try runPlumbHIL(["scenarios"])
    #expect(scenarios.status == 0)
    let lines = scenarios.standardOutput.split(separator: "\n")
    #expect(lines.map { String($0.split(separator: " ")[0]) } == ScenarioCatalog.names)
    #expect(lines.allSatisfy { $0.split(separator: " ").count > 2 })
    let faults = try runPlumbHIL(["faults"])
    #expect(faults.status == 0)
    #expect(
      faults.standardOutput.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        == SimulatedMPU6050FaultPlan.names)
  }

  @Test func aRunEndsWithExactlyOneSummaryLineAndWritesItsReport() throws {
    let directory = try temporaryDirectory() + "/report"
    let frames = try temporaryDirectory() + "/frames.bin"
    let run = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--faults", "nack-burst", "--fault-start", "3",
      "--report", directory, "--frames", frames,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    let pattern =
      #"^hil: scenario=tilt faults=nack-burst frames=[0-9]+ missed=1 silent_losses=0 "#
      + #"incl_rms_deg=[0-9]+\.[0-9]{3} heading_rms_deg=[0-9]+\.[0-9]{3}\n$"#
    #expect(run.standardOutput.range(of: pattern, options: .regularExpression) != nil)
    #expect(run.standardOutput.filter { $0 == "\n" }.count == 1, "\(run.standardOutput)")
    for file in HILReportFiles.all {
      #expect(FileManager.default.fileExists(atPath: directory + "/" + file), "\(file)")
    }
    let json = try #require(FileManager.default.contents(atPath: directory + "/report.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    let reconciliation = try #require(report["reconciliation"] as? [String: Any])
    #expect(reconciliation["silent_losses"] as? Int == 0)
    #expect(reconciliation["balanced"] as? Bool == true)
    #expect((report["summary"] as? String).map { $0 + "\n" } == run.standardOutput)
    let svg = try #require(FileManager.default.contents(atPath: directory + "/rest.svg"))
    #expect(String(decoding: svg, as: UTF8.self).hasPrefix("<svg"))
    // The frames file holds what the host received: the library's run gives the same bytes.
    let library = try hil("tilt", faults: "nack-burst", seconds: 4) {
      $0.faultStartSeconds = 3
      $0.keepBytes = true
    }
    #expect(FileManager.default.contents(atPath: frames) == Data(library.bytes))
  }

  /// --truth FILE.csv: one row per frame the host compared with the truth, whose inclination
  /// errors are the summary's RMS, whose truth quaternions give those errors again against the
  /// frames' own attitudes, and whose sequences and sample times are the frames'.
  @Test func theTruthFileHoldsEveryComparedFrame() throws {
    let truth = try temporaryDirectory() + "/truth.csv"
    let run = try runPlumbHIL(["run", "tilt", "--seconds", "4", "--truth", truth])
    #expect(run.status == 0, "\(run.standardError)")
    let text = try String(contentsOfFile: truth, encoding: .utf8)
    var lines = text.split(separator: "\n").map(String.init)
    #expect(lines.removeFirst() == TruthRow.csvHeader)
    let library = try hil("tilt", seconds: 4) { $0.keepFrames = true }
    #expect(UInt64(lines.count) == library.accuracy.frames)
    #expect(lines.count > 100)
    let frames = Dictionary(
      library.frames.compactMap { f in f.sequence.map { ($0, f) } }, uniquingKeysWith: { a, _ in a }
    )
    var squares = 0.0
    for line in lines {
      let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      try #require(fields.count == 7, "\(line)")
      let sequence = try #require(UInt32(fields[0]))
      let frame = try #require(frames[sequence])
      #expect(Int64(fields[1]) == frame.sampleTimeNanoseconds)
      let q = fields[2...5].compactMap(Double.init)
      try #require(q.count == 4)
      let truthQuaternion = Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
      let error = try #require(Double(fields[6]))
      let recomputed =
        inclinationErrorRadians(estimate: frame.attitude, truth: truthQuaternion) * 180 / .pi
      #expect(abs(recomputed - error) < 1e-9, "\(line)")
      squares += error * error
    }
    let rms = (squares / Double(lines.count)).squareRoot()
    #expect(abs(rms - library.accuracy.inclinationRMSDegrees) < 1e-9)
    let printed = run.standardOutput.split(separator: " ").first { $0.hasPrefix("incl_rms_deg=") }
    let summary = try #require(printed.flatMap { Double($0.dropFirst("incl_rms_deg=".count)) })
    #expect(abs(summary - rms) <= 0.0005 + 1e-9, "\(run.standardOutput)")
  }

  /// A CI job fails a run on its figures: each `--limit NAME=MAX` is checked after the run,
  /// printed with the value, and any exceeded exits 1 naming it; a limit that nothing measured
  /// (no frame carried the bias) fails rather than passing vacuously; a wrong one is a usage error.
  @Test func limitsFailTheRunOnItsFigures() throws {
    let pass = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--limit", "incl_rms_deg=45", "--limit", "missed=0",
    ])
    #expect(pass.status == 0, "\(pass.standardError)")
    #expect(pass.standardError.contains("limit incl_rms_deg ≤ 45: "), "\(pass.standardError)")
    #expect(pass.standardError.contains("pass"), "\(pass.standardError)")
    let fail = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--limit", "incl_rms_deg=0.000001", "--limit",
      "heading_max_deg=180",
    ])
    #expect(fail.status == 1, "\(fail.standardError)")
    #expect(fail.standardError.contains("incl_rms_deg"), "\(fail.standardError)")
    #expect(fail.standardError.contains("exceeded"), "\(fail.standardError)")
    #expect(!fail.standardError.contains("heading_max_deg exceeded"), "\(fail.standardError)")
    // The summary line is still the one line on standard output.
    #expect(fail.standardOutput.hasPrefix("hil: scenario=tilt"))
    let unmeasured = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--format", "text", "--limit", "bias_final_dps=1",
    ])
    #expect(unmeasured.status == 1, "\(unmeasured.standardError)")
    #expect(unmeasured.standardError.contains("not measured"), "\(unmeasured.standardError)")
    for wrong in ["incl=2", "incl_rms_deg=abc", "incl_rms_deg", "incl_rms_deg=-1", "missed=1e400"] {
      let usage = try runPlumbHIL(["run", "tilt", "--seconds", "1", "--limit", wrong])
      #expect(usage.status == 64, "\(wrong): \(usage.standardError)")
      #expect(usage.standardError.contains("--limit"), "\(wrong): \(usage.standardError)")
    }
  }

  /// --report and --frames are checked before the run: a path that cannot be written fails in
  /// a moment (73, naming it), not after hours of simulated time. Four simulated hours take
  /// about a minute here; the check takes milliseconds.
  @Test func unwritableOutputsAreRefusedBeforeTheRun() throws {
    let directory = try temporaryDirectory()
    let file = directory + "/a-file"
    _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
    for (option, path) in [
      ("--report", file + "/report"), ("--report", file),
      ("--frames", directory + "/missing/frames.bin"),
      ("--frames", directory),
      ("--junit", directory + "/missing/hil.xml"),
      ("--junit", directory),
      ("--truth", directory + "/missing/truth.csv"),
      ("--truth", directory),
    ] {
      let started = Date()
      let run = try runPlumbHIL(["run", "handheld", "--seconds", "14400", option, path])
      let elapsed = Date().timeIntervalSince(started)
      #expect(run.status == 73, "\(option) \(path): \(run.standardError)")
      #expect(run.standardError.contains(path), "\(run.standardError)")
      #expect(run.standardOutput.isEmpty)
      #expect(elapsed < 5, "\(option) \(path): the run went ahead (\(elapsed) s)")
    }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")
  }

  /// `--calibration FILE`: a missing file exits 66 and an invalid one 65, each naming it; a
  /// valid one is applied and its id is in the report.
  @Test func aCalibrationFileIsAppliedOrRefusedByName() throws {
    let directory = try temporaryDirectory()
    let missing = try runPlumbHIL(
      ["run", "tilt", "--seconds", "1", "--calibration", directory + "/none.json"])
    #expect(missing.status == 66 && missing.standardError.contains(directory + "/none.json"))
    let garbage = directory + "/garbage.json"
    try "{\"schema\": 1}".write(toFile: garbage, atomically: true, encoding: .utf8)
    let invalid = try runPlumbHIL(["run", "tilt", "--seconds", "1", "--calibration", garbage])
    #expect(invalid.status == 65 && invalid.standardError.contains(garbage), "\(invalid)")
    let file = directory + "/unit.json"
    try CalibratedHILTests.exactCalibration(seed: 1).write(toPath: file)
    let report = directory + "/report"
    let run = try runPlumbHIL(
      ["run", "tilt", "--seconds", "2", "--calibration", file, "--report", report])
    #expect(run.status == 0, "\(run)")
    let json = try String(contentsOfFile: report + "/report.json", encoding: .utf8)
    let id = try CalibrationFile.load(path: file).calibrationIdText
    #expect(json.contains("\"calibration\": \"\(id)\""), "\(json.prefix(400))")
  }

  @Test func usageErrorsNameTheProblemAndExit64() throws {
    let scenario = try runPlumbHIL(["run", "tilted"])
    #expect(scenario.status == 64)
    #expect(scenario.standardError.contains("no scenario \"tilted\""))
    #expect(scenario.standardError.contains("tilt"))
    let plan = try runPlumbHIL(["run", "tilt", "--faults", "nack"])
    #expect(plan.status == 64 && plan.standardError.contains("nack-burst"))
    let format = try runPlumbHIL(["run", "tilt", "--format", "xml"])
    #expect(
      format.status == 64 && format.standardError.contains("binary, binary-imu, text, mavlink"))
    let seconds = try runPlumbHIL(["run", "tilt", "--seconds", "-3"])
    #expect(seconds.status == 64)
    let help = try runPlumbHIL(["run", "--help"])
    #expect(help.status == 0 && help.standardOutput.contains("silent_losses"))
  }
}
