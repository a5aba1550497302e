import Foundation
import HIL
import Testing

/// The report and the frames file appear whole or not at all: written beside their path and
/// renamed over it, like every other output Plumb writes (`AtomicFile`). A CI job that reads
/// report.json while a rerun writes it, or a run killed while writing, never sees a file cut
/// in the middle.
@Suite struct ReportFileTests {
  @Test func aReaderOfTheOldFileKeepsItWholeWhileANewOneIsWritten() throws {
    let directory = try temporaryDirectory()
    let path = directory + "/report.json"
    let old = Array(repeating: UInt8(ascii: "o"), count: 100_000)
    try writeBytes(old, to: path)
    let reader = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? reader.close() }
    let new = Array(repeating: UInt8(ascii: "n"), count: 50_000)
    try writeBytes(new, to: path)
    // The reader that opened the old report reads the old report, whole.
    let seen = try reader.readToEnd() ?? Data()
    #expect(seen.count == old.count && seen.allSatisfy { $0 == UInt8(ascii: "o") })
    #expect(readBytes(path) == new)
    // Nothing is left beside it.
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(names == ["report.json"], "\(names)")
  }

  @Test func aFileThatCannotBeWrittenIsNamed() throws {
    let directory = try temporaryDirectory()
    let path = directory + "/missing-folder/frames.bin"
    #expect {
      try writeBytes([1, 2, 3], to: path)
    } throws: { error in
      "\(error)" == "cannot write \(path): no such file or folder"
    }
  }
}
