import Foundation
import Testing

/// Issue 21: `plumb check-board` said OK (exit 0) for a simulated board whose scenario or fault
/// plan does not exist, which `plumb run` then refused with 78; `plumb-probe` probed it
/// silently with another motion (a rest) and no faults. A board file every command reads the
/// same way: each refuses it with 78, naming the key and the names to choose from.
@Suite struct SimulatedBoardCheckTests {
  @Test(arguments: [
    (#""scenario": "handheld""#, #""scenario": "handheld-typo""#, "simulation.scenario"),
    (#""seed": 1,"#, #""seed": 1, "faults": "nack-brust","#, "simulation.faults"),
  ])
  func anUnknownScenarioOrFaultPlanIsABadBoardFileEverywhere(
    original: String, replacement: String, key: String
  ) throws {
    let directory = try temporaryDirectory()
    let board = directory.appendingPathComponent("board.json").path
    let text = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    #expect(text.contains(original))
    try text.replacingOccurrences(of: original, with: replacement).write(
      toFile: board, atomically: true, encoding: .utf8)
    let choices = key == "simulation.scenario" ? "handheld" : "nack-burst"
    for (executable, arguments) in [
      (plumbExecutable, ["check-board", board]),
      (builtExecutable("plumb-probe"), ["--board", board, "--samples", "1"]),
      (
        plumbExecutable,
        ["run", "--board", board, "--fast", "--duration", "1", "--serial", "/dev/null"]
      ),
      (builtExecutable("plumb-hil"), ["run", "rest", "--seconds", "1", "--board", board]),
    ] {
      let result = try runPlumb(arguments, executable: executable)
      #expect(result.status == 78, "\(arguments): \(result.standardError)")
      #expect(
        result.standardError.contains(key) && result.standardError.contains(choices)
          && result.standardError.contains(board),
        "\(arguments): \(result.standardError)")
    }
  }
}
