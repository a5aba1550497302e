import Boards
import Glibc

/// A file that appears whole or not at all: written to a temporary file beside the target,
/// synced, and renamed over it on `commit()`; removed when dropped uncommitted. POSIX calls only,
/// so the executables need no Foundation (which would add tens of megabytes to a static build).
public final class AtomicOutputFile {
  public let path: String
  public let temporaryPath: String
  private var descriptor: Int32
  private var committed = false

  /// Why the output could not be written.
  public struct Failure: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var code: Int32
    public var description: String {
      "cannot write \(path): \(String(cString: strerror(code))); check the folder exists and is writable"
    }
  }

  public init(path: String) throws(Failure) {
    self.path = path
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    temporaryPath = "\(directory).\(name).\(getpid()).partial"
    descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw Failure(path: temporaryPath, code: errno) }
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
    if !committed { unlink(temporaryPath) }
  }

  /// Appends `text`'s UTF-8 bytes.
  public func write(_ text: String) throws(Failure) {
    var text = text
    let descriptor = self.descriptor
    let code: Int32 = text.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += n
      }
      return 0
    }
    if code != 0 { throw Failure(path: temporaryPath, code: code) }
  }

  /// Syncs and renames the temporary file into place.
  public func commit() throws(Failure) {
    guard fsync(descriptor) == 0 else { throw Failure(path: temporaryPath, code: errno) }
    close(descriptor)
    descriptor = -1
    guard rename(temporaryPath, path) == 0 else { throw Failure(path: path, code: errno) }
    committed = true
  }
}

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
