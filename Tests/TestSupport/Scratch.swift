import Glibc

/// Temporary folders for tests, all inside one folder of this test process,
/// `$TMPDIR/plumb-tests.XXXXXX` (`/tmp` without `TMPDIR`), which is removed with everything in
/// it when the process exits. A test makes as many as it likes and never cleans up: the runner
/// finishing does (a run killed or crashed leaves its one folder behind, named by the prefix).
///
/// Before, each suite made its own folders under /tmp and left them there: a `make test` left
/// about 150, and a CI machine's /tmp grew by that much each run.
public enum Scratch {
  /// The bytes of the file at `path` (none when it cannot be opened).
  public static func contents(of path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      result.append(contentsOf: chunk[0..<n])
    }
    return result
  }

  /// A new, empty folder whose name starts with `prefix`, inside this process's folder.
  public static func folder(_ prefix: String) -> String {
    var template = Array("\(root)/\(prefix)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      fatalError("cannot create a temporary folder in \(root): errno \(errno)")
    }
    return String(cString: made)
  }

  /// This process's folder; made, and its removal at exit registered, on first use.
  public static var root: String { processRoot }
}

private let processRoot: String = {
  let base =
    getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
  var template = Array("\(base)/plumb-tests.XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else {
    fatalError("cannot create the tests' temporary folder in \(base): errno \(errno)")
  }
  let path = String(cString: made)
  atexit { removeTree(processRoot) }
  return path
}()

/// Removes `path` and everything under it, without following symbolic links; folders a test
/// made read-only (or unreadable) are opened up first. Best effort: what cannot be removed stays.
private func removeTree(_ path: String) {
  var status = stat()
  guard lstat(path, &status) == 0 else { return }
  if status.st_mode & S_IFMT == S_IFDIR {
    _ = chmod(path, 0o700)
    if let directory = opendir(path) {
      var names: [String] = []
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
          String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
      }
      closedir(directory)
      for name in names { removeTree(path + "/" + name) }
    }
    _ = rmdir(path)
  } else {
    _ = unlink(path)
  }
}
