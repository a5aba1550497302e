import BuildInfo
import Foundation
import Testing

/// Every tool a package installs says which Plumb it is, the version `make deb` gives the package
/// (read from the same `PlumbVersion`), so a person with a board can tell what runs there.
@Suite struct VersionTests {
  @Test(arguments: ["plumb", "plumb-monitor", "plumb-probe", "plumb-cal"])
  func everyToolPrintsThePackagedVersion(tool: String) throws {
    for arguments in [["--version"], tool == "plumb" ? ["run", "--version"] : nil].compactMap({ $0 }
    ) {
      let result = try runPlumb(arguments, executable: builtExecutable(tool))
      #expect(result.status == 0, "\(tool) \(arguments): \(result.standardError)")
      let line = String(decoding: result.standardOutput, as: UTF8.self)
      #expect(line == "\(tool) \(PlumbVersion.current)\n", "\(tool) \(arguments)")
    }
  }

}
