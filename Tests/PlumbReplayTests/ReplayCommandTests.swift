import Foundation
import Geometry
import MotionScenarios
import TestSupport
import Testing

/// `plumb replay` end to end: the built executable, real files, exit statuses.
@Suite struct ReplayCommandTests {
  /// The `plumb` executable beside the test bundle.
  static let plumb: URL = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("plumb").path),
      directory.path != "/"
    {
      directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent("plumb")
  }()

  func plumb(_ arguments: [String]) throws -> ExecutableResult {
    try runExecutable(Self.plumb, arguments)
  }

  /// A fresh folder, removed when the test process ends (`Scratch`).
  func temporaryDirectory() throws -> URL {
    URL(fileURLWithPath: Scratch.folder("plumb-replay"), isDirectory: true)
  }

  /// A recording of seed 001's tilt, 285.7 Hz like BROAD, with an extra column.
  func recording(extraColumn: Bool = false) -> String {
    var model = InertialSensorModel(settings: .seed001, seed: 3)
    var text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z" + (extraColumn ? ",movement" : "") + "\n"
    let period = 0.0035
    for i in 0..<1700 {
      let t = Double(i) * period
      let r = model.measure(TiltScenario().truth(atSeconds: t), intervalSeconds: period)
      let g = r.angularRateRadiansPerSecond
      let a = r.specificForceMetersPerSecondSquared
      text += "\(t),\(g.x),\(g.y),\(g.z),\(a.x),\(a.y),\(a.z)" + (extraColumn ? ",1" : "") + "\n"
    }
    return text
  }

  @Test func writesOneDeterministicLinePerSample() throws {
    let dir = try temporaryDirectory()
    let input = dir.appendingPathComponent("in.csv")
    try recording(extraColumn: true).write(to: input, atomically: true, encoding: .utf8)
    let first = dir.appendingPathComponent("a.csv")
    let second = dir.appendingPathComponent("b.csv")
    #expect(try plumb(["replay", "--input", input.path, "--output", first.path]).status == 0)
    #expect(try plumb(["replay", "--input", input.path, "--output", second.path]).status == 0)
    let a = try Data(contentsOf: first)
    let b = try Data(contentsOf: second)
    #expect(a == b)
    let lines = String(decoding: a, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == 1701)
    #expect(lines[0].hasPrefix("t_s,qw,qx,qy,qz,"))
    let inputLines = try String(contentsOf: input, encoding: .utf8).split(separator: "\n")
    for (out, inp) in zip(lines.dropFirst(), inputLines.dropFirst()) {
      // Time copied verbatim; a unit quaternion.
      #expect(out.split(separator: ",")[0] == inp.split(separator: ",")[0])
      let q = out.split(separator: ",")[1...4].map { Double($0)! }
      #expect(abs(q.map { $0 * $0 }.reduce(0, +) - 1) < 1e-9)
    }
    // The tilt came through: 60° about x at the end.
    let last = lines.last!.split(separator: ",").map { Double($0)! }
    let attitude = Quaternion(w: last[1], x: last[2], y: last[3], z: last[4])
    #expect(abs(attitude.angle * 180 / .pi - 60) < 1)
  }

  @Test(arguments: [
    (
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n0.01,0,0,0,0,0,9.8\n0.01,0,0,0,0,0,9.8\n",
      "line 4", "does not increase"
    ),
    (
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n0.01,0,nan,0,0,0,9.8\n", "line 3",
      "gyr_y"
    ),
    (
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n0.01,0,0,0,0\n", "line 3",
      "7 columns"
    ),
    (
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n0.01,0,zero,0,0,0,9.8\n", "line 3",
      "not a number"
    ),
    ("time,gx,gy,gz,ax,ay,az\n0,0,0,0,0,0,9.8\n", "line 1", "header"),
  ])
  func badInputIsAClearErrorAndLeavesNoOutput(text: String, line: String, problem: String) throws {
    let dir = try temporaryDirectory()
    let input = dir.appendingPathComponent("bad.csv")
    try text.write(to: input, atomically: true, encoding: .utf8)
    let output = dir.appendingPathComponent("out.csv")
    let result = try plumb(["replay", "--input", input.path, "--output", output.path])
    #expect(result.status == 65)
    #expect(result.standardError.contains(line) && result.standardError.contains(problem))
    #expect(!FileManager.default.fileExists(atPath: output.path))
    // Nothing half-written is left behind either.
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["bad.csv"])
  }

  /// Issue 21: a CSV with CRLF line endings (Windows, Excel) and a temp_c column replayed to a
  /// header alone and exit 0: every row silently lost (Swift reads "\r\n" as one character, so
  /// the file was one line). Without temp_c it was refused with a header error that quoted the
  /// whole file. A UTF-8 byte-order mark (Excel's "CSV UTF-8") was refused as a wrong header.
  /// Line endings and a BOM change nothing: the same samples give the same bytes.
  @Test(arguments: [
    (crlf: true, bom: false, temperature: true), (crlf: true, bom: false, temperature: false),
    (crlf: false, bom: true, temperature: true), (crlf: true, bom: true, temperature: false),
  ])
  func lineEndingsAndAByteOrderMarkChangeNothing(crlf: Bool, bom: Bool, temperature: Bool) throws {
    let dir = try temporaryDirectory()
    var plain = recording()
    if temperature {
      plain =
        plain.split(separator: "\n").enumerated().map {
          $0.element + ($0.offset == 0 ? ",temp_c" : ",\(25 + Double($0.offset) / 1000)")
        }.joined(separator: "\n") + "\n"
    }
    var variant = crlf ? plain.replacingOccurrences(of: "\n", with: "\r\n") : plain
    if bom { variant = "\u{FEFF}" + variant }
    let plainInput = dir.appendingPathComponent("plain.csv")
    let variantInput = dir.appendingPathComponent("variant.csv")
    try plain.write(to: plainInput, atomically: true, encoding: .utf8)
    try variant.write(to: variantInput, atomically: true, encoding: .utf8)
    let expected = dir.appendingPathComponent("expected.csv")
    let output = dir.appendingPathComponent("out.csv")
    #expect(
      try plumb(["replay", "--input", plainInput.path, "--output", expected.path]).status == 0)
    let result = try plumb(["replay", "--input", variantInput.path, "--output", output.path])
    #expect(result.status == 0, "\(result.standardError)")
    let bytes = try Data(contentsOf: output)
    #expect(String(decoding: bytes, as: UTF8.self).split(separator: "\n").count == 1701)
    let wanted = try Data(contentsOf: expected)
    #expect(bytes == wanted)
  }

  /// A gyro column of 1e308 rad/s (a unit or an export gone wrong) replayed to exit 0: every
  /// sample refused by the estimator as impossible, every line the identity attitude with a
  /// flag (bit 7) the help did not even list. Nothing usable is 65; some refused samples are
  /// said, with the first one's line.
  @Test func impossibleSamplesAreSaidAndAllOfThemAreBadData() throws {
    let dir = try temporaryDirectory()
    let rows = recording().split(separator: "\n")
    func write(_ name: String, _ change: (Int, [Substring]) -> [Substring]) throws -> URL {
      let url = dir.appendingPathComponent(name)
      let text =
        rows.enumerated().map { index, row in
          index == 0
            ? String(row)
            : change(index + 1, row.split(separator: ",")).joined(separator: ",")
        }.joined(separator: "\n") + "\n"
      try text.write(to: url, atomically: true, encoding: .utf8)
      return url
    }
    let allHuge = try write("huge.csv") { _, fields in [fields[0], "1e308"] + fields[2...] }
    let output = dir.appendingPathComponent("out.csv")
    let refused = try plumb(["replay", "--input", allHuge.path, "--output", output.path])
    #expect(refused.status == 65, "\(refused.standardError)")
    #expect(
      refused.standardError.contains("all 1700 samples")
        && refused.standardError.contains("line 2") && refused.standardError.contains("rad/s"),
      "\(refused.standardError)")
    #expect(!FileManager.default.fileExists(atPath: output.path))
    let oneHuge = try write("one.csv") { line, fields in
      line == 500 ? [fields[0], fields[1], "-4e4"] + fields[3...] : fields
    }
    let said = try plumb(["replay", "--input", oneHuge.path, "--output", output.path])
    #expect(said.status == 0, "\(said.standardError)")
    #expect(
      said.standardError.contains("warning") && said.standardError.contains("1 of 1700 samples")
        && said.standardError.contains("line 500"),
      "\(said.standardError)")
    let help = try plumb(["replay", "--help"]).standardOutput
    #expect(help.contains("7 impossible input") && help.contains("10 heading uncertain"), "\(help)")
  }

  /// An eighth column named temp_c is the die temperature; it must be a number.
  @Test func readsAnOptionalTemperatureColumn() throws {
    let dir = try temporaryDirectory()
    let good = dir.appendingPathComponent("good.csv")
    try
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n0,0,0,0,0,0,9.8,31.5\n0.01,0,0,0,0,0,9.8,31.5\n"
      .write(to: good, atomically: true, encoding: .utf8)
    #expect(
      try plumb([
        "replay", "--input", good.path, "--output", dir.appendingPathComponent("o.csv").path,
      ])
      .status == 0)
    let bad = dir.appendingPathComponent("bad.csv")
    try "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n0,0,0,0,0,0,9.8,warm\n".write(
      to: bad, atomically: true, encoding: .utf8)
    let result = try plumb([
      "replay", "--input", bad.path, "--output", dir.appendingPathComponent("p.csv").path,
    ])
    #expect(result.status == 65 && result.standardError.contains("line 2: temp_c"))
  }

  @Test func aFailedReplayLeavesAnExistingOutputUntouched() throws {
    let dir = try temporaryDirectory()
    let input = dir.appendingPathComponent("bad.csv")
    try "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n-1,0,0,0,0,0,9.8\n".write(
      to: input, atomically: true, encoding: .utf8)
    let output = dir.appendingPathComponent("out.csv")
    try "previous results\n".write(to: output, atomically: true, encoding: .utf8)
    #expect(try plumb(["replay", "--input", input.path, "--output", output.path]).status == 65)
    #expect(try String(contentsOf: output, encoding: .utf8) == "previous results\n")
  }

  /// Every place a `plumb` command takes a recording, its `--help` line names the .plumbraw
  /// format (that is what `plumb record` writes).
  @Test(arguments: [
    ("run", "--replay REC"), ("replay", "--input IN"), ("export", "REC"),
    ("record", "--output REC"),
  ])
  func helpNamesThePlumbRawFormatWhereARecordingIsTaken(command: String, line: String) throws {
    let help = try plumb([command, "--help"])
    #expect(help.status == 0)
    let lines = help.standardOutput.split(separator: "\n").filter {
      $0.hasPrefix("  " + line)
    }
    #expect(lines.count == 1, "\(help.standardOutput)")
    #expect(lines.allSatisfy { $0.contains(".plumbraw") }, "\(lines)")
  }

  @Test func usageErrorsExitWith64AndHelpWith0() throws {
    #expect(try plumb(["replay"]).status == 64)
    #expect(try plumb(["replay", "--input", "x.csv"]).status == 64)
    #expect(try plumb(["replay", "--bogus"]).status == 64)
    #expect(try plumb(["frobnicate"]).status == 64)
    let help = try plumb(["replay", "--help"])
    #expect(help.status == 0 && help.standardOutput.contains("--input"))
    let missing = try plumb([
      "replay", "--input", "/nonexistent/in.csv", "--output", "/tmp/out.csv",
    ])
    #expect(missing.status == 66)
  }
}
