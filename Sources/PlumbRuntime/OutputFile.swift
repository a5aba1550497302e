import Boards
import Glibc

/// Whether something exists at `path`.
public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// A whole file as text (via Boards' POSIX reader).
public func readTextFile(_ path: String) throws(FileReadError) -> String {
  String(decoding: try readWholeFile(path), as: UTF8.self)
}

/// The directory for temporary files: `$TMPDIR` or `/tmp`.
public var temporaryDirectoryPath: String {
  if let value = getenv("TMPDIR"), value.pointee != 0 { return String(cString: value) }
  return "/tmp"
}
