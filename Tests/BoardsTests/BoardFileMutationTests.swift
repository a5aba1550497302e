import Boards
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
}
