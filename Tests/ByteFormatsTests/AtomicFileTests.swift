import ByteFormats
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// AtomicFile: an output that appears whole or not at all.
@Suite struct AtomicFileTests {
  func entries(_ folder: String) -> [String] {
    guard let directory = opendir(folder) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }

  /// A `plumb export` stopped by Ctrl-C or SIGKILL half-way through a 50 MB CSV left a hidden
  /// `.NAME.PID.partial` of tens of megabytes beside it, which nothing ever removed: while an
  /// atomic file is written, nothing of it is in the folder.
  @Test("an atomic file being written leaves nothing in its folder until it is committed")
  func atomicFileLeavesNoLitter() throws {
    let path = Scratch.folder("plumb-atomic") + "/out.csv"
    let folder = String(path[..<path.lastIndex(of: "/")!])
    do {
      let file = try AtomicFile(path: path)
      try file.write("t_s,gyr_x\n")
      #expect(entries(folder) == [])
      try file.write("0.000000000,0.5\n")
      try file.commit()
    }
    #expect(entries(folder) == ["out.csv"])
    #expect(Scratch.contents(of: path) == Array("t_s,gyr_x\n0.000000000,0.5\n".utf8))
    do {
      let file = try AtomicFile(path: path)
      try file.write("dropped")
    }
    #expect(entries(folder) == ["out.csv"])
    #expect(Scratch.contents(of: path) == Array("t_s,gyr_x\n0.000000000,0.5\n".utf8))
  }
}
