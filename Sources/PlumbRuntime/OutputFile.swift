import Boards
import Glibc

/// Whether something exists at `path`.
public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// A whole file as text (via Boards' POSIX reader). A device fails with `ENODEV` before it is
/// opened (`/dev/zero` would be read until memory ran out).
public func readTextFile(_ path: String) throws(FileReadError) -> String {
  var status = stat()
  if stat(path, &status) == 0 {
    switch status.st_mode & S_IFMT {
    case S_IFCHR, S_IFBLK, S_IFSOCK: throw FileReadError(code: ENODEV)
    default: break
    }
  }
  return String(decoding: try readWholeFile(path), as: UTF8.self)
}
