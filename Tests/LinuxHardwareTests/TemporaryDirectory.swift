import Glibc
import TestSupport

/// A fresh directory under /tmp for a test's files (links, locked files). Removed with its
/// contents when the value goes away.
final class TemporaryDirectory {
  let path: String

  private init(path: String) {
    self.path = path
  }

  static func make() throws -> TemporaryDirectory {
    var template = Array("\(Scratch.root)/plumb-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TemporaryDirectoryError() }
    return TemporaryDirectory(path: String(cString: made))
  }

  deinit {
    if let directory = opendir(path) {
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
          String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { _ = unlink(path + "/" + name) }
      }
      closedir(directory)
    }
    _ = rmdir(path)
  }
}

struct TemporaryDirectoryError: Error {}
