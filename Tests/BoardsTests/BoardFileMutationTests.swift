import Boards
import JSON
import TestSupport
import Testing

/// Damaged board files, made by seeded mutation of the shipped ones: each is accepted or refused
/// with a message naming the file, never a trap.
@Suite struct BoardFileMutationTests {
  @Test(
    "2000 seeded mutants of each of two shipped boards load or fail naming the file",
    arguments: ["simulated", "raspberry-pi-4"])
  func mutantsLoadOrFailNamingTheFile(board: String) throws {
    let original = try readWholeFile("\(repositoryRoot)/Boards/\(board).json")
    let path = "/etc/plumb/\(board).json"
    var accepted = 0
    for seed in 0..<2000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Mutator.jsonTokens)
      do {
        _ = try BoardFile.parse(mutator.mutate(original), path: path)
        accepted += 1
      } catch {
        #expect("\(error)".hasPrefix("board file \(path): "), "seed \(seed)")
        #expect("\(error)".count > "board file \(path): ".count + 10, "seed \(seed)")
      }
    }
    // Not vacuous: some mutants are still boards (a description or a seed changed)...
    #expect(accepted > 20)
    // ...and most are not.
    #expect(accepted < 1500)
  }

  /// Found by the fuzzing pass: finite but impossible values (a mounting angle of 1e300°)
  /// loaded silently. Every number of two shipped boards and of one mounted by angles, in turn,
  /// is made impossible either way: each is refused, naming that number's key path (or, for an
  /// entry of the mounting matrix, the matrix), the value and what was expected.
  @Test(arguments: [1e300, -1e300])
  func everyNumberMadeImpossibleIsRefusedByName(value: Double) throws {
    let angled =
      #"{"schema": 1, "name": "angled", "i2c": {"bus": "/dev/i2c-1"}, "dataReady": {"chip": "gpiochip0", "line": 17}, "serial": {"device": "/dev/serial0"}, "mounting": {"rollPitchYawDegrees": [180, -90, 45]}}"#
    let boards = try ["simulated", "raspberry-pi-4"].map {
      try readWholeFile("\(repositoryRoot)/Boards/\($0).json")
    }
    var checked = 0
    for board in boards + [Array(angled.utf8)] {
      let document = try JSONDocument(parsing: board).root
      for leaf in everyNumberReplaced(in: document, by: value) {
        checked += 1
        let bytes = Array(leaf.document.formatted().utf8)
        #expect(Comment(rawValue: leaf.keyPath)) {
          _ = try BoardFile.parse(bytes, path: "/etc/plumb/board.json")
        } throws: { error in
          guard case .content("/etc/plumb/board.json", let content) = error as? BoardFileError
          else { return false }
          let named =
            content.keyPath == leaf.keyPath
            || (content.keyPath == "mounting.sensorToBody"
              && leaf.keyPath.hasPrefix("mounting.sensorToBody["))
          // What is accepted: "expected a … b", "use one of …", a rotation's "between -1 and
          // 1", or the schema this Plumb reads.
          let accepted = ["expected", "use ", "between", "reads board files of schema 1,"]
          return named && content.message.contains(formatJSONNumber(value))
            && accepted.contains { content.message.contains($0) }
        }
      }
    }
    #expect(checked > 40)
  }
}
