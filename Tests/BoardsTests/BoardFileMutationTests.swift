import Boards
import JSON
import TestSupport
import Testing

/// Damaged board files, made by seeded mutation of the shipped ones: each is accepted or refused
/// with a message naming the file, never a trap.
@Suite struct BoardFileMutationTests {
  /// A board mounted by angles (the shipped ones give a matrix).
  static let angled = Array(
    #"""
    {
      "schema": 1, "name": "angled", "i2c": {"bus": "/dev/i2c-1"},
      "dataReady": {"chip": "gpiochip0", "line": 17}, "serial": {"device": "/dev/serial0"},
      "mounting": {"rollPitchYawDegrees": [180, -90, 45]}
    }
    """#.utf8)

  @Test(
    "2000 seeded mutants of each of two shipped boards and one mounted by angles load or fail naming the file",
    arguments: ["simulated", "raspberry-pi-4", "angled"])
  func mutantsLoadOrFailNamingTheFile(board: String) throws {
    let original =
      board == "angled" ? Self.angled : try readWholeFile("\(repositoryRoot)/Boards/\(board).json")
    let path = "/etc/plumb/\(board).json"
    var accepted = 0
    var outOfRange = 0
    for seed in 0..<2000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Mutator.jsonTokens)
      let bytes = mutator.mutate(original)
      do {
        _ = try BoardFile.parse(bytes, path: path)
        accepted += 1
        // Every number of an accepted board is within the range documented for its key: a
        // finite but meaningless value (1e308 written over an angle) is refused, not loaded.
        let outside = numbersOutsideTheirRanges(
          in: try JSONDocument(parsing: bytes).root, Self.documentedRange)
        #expect(outside.isEmpty, "seed \(seed): \(outside)")
      } catch {
        #expect("\(error)".hasPrefix("board file \(path): "), "seed \(seed)")
        #expect("\(error)".count > "board file \(path): ".count + 10, "seed \(seed)")
        if "\(error)".contains("is out of range: expected") { outOfRange += 1 }
      }
    }
    // Not vacuous: some mutants are still boards (a description or a seed changed)...
    #expect(accepted > 20)
    // ...and most are not, many of them at a range check.
    #expect(accepted < 1500)
    #expect(outOfRange > 10)
  }

  /// The range of every number of a board file, restated from Boards/README.md (the hull, where
  /// the README lists the allowed values).
  static func documentedRange(_ key: String, _ indices: [Int]) -> ClosedRange<Double>? {
    switch key {
    case "schema": 1...1
    case "i2c.address": 0x08...0x77
    case "dataReady.line": 0...1023
    case "serial.baud": 9600...921_600
    // A rotation's entries, within the tolerance it is checked to.
    case "mounting.sensorToBody": -1.001...1.001
    case "mounting.rollPitchYawDegrees": -360...360
    case "sensor.sampleRateHz": 4...8000
    case "sensor.dlpfHz": 5...260
    case "sensor.gyroRangeDps": 250...2000
    case "sensor.accelRangeG": 2...16
    case "output.rateHz": 1...1000
    case "mavlink.systemId", "mavlink.componentId": 1...255
    case "simulation.seed": 0...2_147_483_647
    case "simulation.oscillatorErrorPercent": -10...10
    default: nil
    }
  }

  /// Found by the fuzzing pass: finite but impossible values (a mounting angle of 1e300°)
  /// loaded silently. Every number of two shipped boards and of one mounted by angles, in turn,
  /// is made impossible either way: each is refused, naming that number's key path (or, for an
  /// entry of the mounting matrix, the matrix), the value and what was expected.
  @Test(arguments: [1e300, -1e300])
  func everyNumberMadeImpossibleIsRefusedByName(value: Double) throws {
    let boards = try ["simulated", "raspberry-pi-4"].map {
      try readWholeFile("\(repositoryRoot)/Boards/\($0).json")
    }
    var checked = 0
    for board in boards + [Self.angled] {
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
