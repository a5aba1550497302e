import Foundation
import Testing

/// One line of `Golden/cases.txt`: a `plumb` command line and the file its output must equal.
struct PlatformGoldenCase: Sendable, CustomTestStringConvertible {
  var name: String
  var expectedFile: String
  var arguments: [String]

  var testDescription: String { name }

  static let directory = repositoryRoot + "/Tests/PlumbRuntimeTests/Golden"

  /// The cases, read from the manifest that `tools/platforms/arm64.sh` reads too.
  static let all: [PlatformGoldenCase] = {
    guard let text = try? String(contentsOfFile: directory + "/cases.txt", encoding: .utf8) else {
      return []
    }
    return text.split(separator: "\n").compactMap { line in
      let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      guard let name = words.first, !name.hasPrefix("#"), words.count >= 3 else { return nil }
      return PlatformGoldenCase(name: name, expectedFile: words[1], arguments: Array(words[2...]))
    }
  }()
}

/// The bytes Plumb writes are the same on every platform it runs on: the simulated board's frames
/// in all three formats, a recording's CSV export, and the estimator's replay of a recording and
/// of a CSV. The expected files are committed (`Golden/`); this suite checks them in `make test`
/// (Swift 6.3.1 here, Debian 13's Swift 6.0.3 in `make debian13-test`), and
/// `tools/platforms/arm64.sh` checks the same files against the arm64 release and debug builds
/// under qemu-aarch64 (`make arm64-test`). Floating point is IEEE 754 everywhere and Swift does
/// not reassociate or contract it, so any difference is a real one: a compiler's or a platform's,
/// or a change to a number that must be made on purpose. To accept such a change:
///
///     PLUMB_REGENERATE_GOLDEN=1 swift test --filter PlatformGoldenTests
///
/// (twice when the export changed: `replay-csv` reads the export's file), then commit the new
/// files saying why they changed.
@Suite struct PlatformGoldenTests {
  static let regenerating = ProcessInfo.processInfo.environment["PLUMB_REGENERATE_GOLDEN"] == "1"

  @Test func theManifestNamesEveryCase() {
    let names = PlatformGoldenCase.all.map(\.name)
    #expect(
      names == ["run-text", "run-binary", "run-mavlink", "export-csv", "replay-raw", "replay-csv"])
    for golden in PlatformGoldenCase.all {
      #expect(golden.arguments.contains("{out}"), "\(golden.name): no {out} in its arguments")
    }
  }

  @Test(arguments: PlatformGoldenCase.all)
  func theOutputIsByteForByteTheCommittedOne(_ golden: PlatformGoldenCase) throws {
    try check(golden)
  }

  /// Plumb calls glibc's libm (`sin`, `cos`, `atan`, `atan2`, `asin`, `exp`), and on x86-64 glibc
  /// picks, per CPU, code that uses FMA and AVX2 or code that does not: they are not promised to
  /// agree in the last bit. The same bytes either way, so a board or a CI machine with another CPU
  /// gets them too. (The tunable is glibc's; elsewhere it is ignored and this repeats the test.)
  @Test(arguments: PlatformGoldenCase.all)
  func theOutputDoesNotDependOnTheCPUsMathCode(_ golden: PlatformGoldenCase) throws {
    try check(golden, environment: ["GLIBC_TUNABLES": "glibc.cpu.hwcaps=-FMA,-AVX2,-AVX,-FMA4"])
  }

  func check(_ golden: PlatformGoldenCase, environment: [String: String] = [:]) throws {
    let output = try temporaryDirectory().appendingPathComponent(golden.expectedFile).path
    let arguments = golden.arguments.map { $0 == "{out}" ? output : $0 }
    let result = try runPlumb(arguments, environment: environment)
    #expect(
      result.status == 0, "plumb \(arguments.joined(separator: " ")): \(result.standardError)")
    let produced = try #require(FileManager.default.contents(atPath: output))
    #expect(produced.count > 10_000, "\(golden.name): \(produced.count) bytes")
    let path = PlatformGoldenCase.directory + "/" + golden.expectedFile
    if Self.regenerating {
      if environment.isEmpty {
        try produced.write(to: URL(fileURLWithPath: path), options: .atomic)
      }
      return
    }
    let expected = try #require(
      FileManager.default.contents(atPath: path),
      "missing \(path): run `PLUMB_REGENERATE_GOLDEN=1 swift test --filter PlatformGoldenTests`")
    guard produced != expected else { return }
    let first =
      zip(produced, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      ?? min(produced.count, expected.count)
    let line = produced.prefix(first).filter { $0 == UInt8(ascii: "\n") }.count + 1
    Issue.record(
      """
      \(golden.name)\(environment.isEmpty ? "" : " (\(environment))"): plumb \
      \(golden.arguments.joined(separator: " ")) wrote \(produced.count) \
      bytes, \(golden.expectedFile) holds \(expected.count); the first difference is at byte \
      \(first) (line \(line) if text). If the change is deliberate, regenerate with \
      `PLUMB_REGENERATE_GOLDEN=1 swift test --filter PlatformGoldenTests` and say why in the \
      commit.
      """)
  }
}
