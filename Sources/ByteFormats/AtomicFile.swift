#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An output file that appears whole or not at all: written to a temporary file beside it,
/// synced, and renamed over it on `commit()`; the temporary file is removed when the writer is
/// dropped uncommitted. The one implementation behind `plumb export`, `plumb replay` and
/// calibration files.
///
/// The temporary file has no name until `commit()` (`O_TMPFILE`, linked in through
/// `/proc/self/fd`), so a process killed while writing (Ctrl-C, SIGKILL, a power loss) leaves
/// nothing behind; on a file system without unnamed files it is `.NAME.PID.partial`, which
/// only a clean exit removes.
///
/// Only a regular file can be replaced that way. When the path is a symbolic link, the file it
/// points to is replaced and the link is kept (`current.json` → `unit-3.json` stays a link).
/// When it names a device, a named pipe or a socket (`/dev/stdout`, a FIFO), there is nothing
/// to rename over: the bytes are written straight to it, and it stays what it was.
public final class AtomicFile {
  /// The path as given.
  public let path: String
  /// Where the bytes end up: `path`, or the file a symbolic link at `path` leads to.
  public let destination: String
  /// Whether `path` is a device, a pipe or a socket, written directly rather than replaced.
  public let isStream: Bool
  /// The file being written: the temporary file beside `destination` (the name an unnamed one
  /// takes for the rename), or `destination` itself when it is a stream.
  public let writingPath: String
  private var descriptor: Int32
  private var committed = false
  /// Whether `writingPath` names the temporary file (it is not unnamed, or has been linked in).
  private var hasName: Bool

  /// A failed system call: on which file, and its errno.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Errno
    public var description: String { "\(path): \(message)" }
    /// What went wrong, for a person (without the path).
    public var message: String { POSIXFile.message(errno) }
  }

  /// Opens the temporary file beside `path` (or `path` itself when it is a stream).
  public init(path: String) throws(Failure) {
    self.path = path
    let target = Self.resolve(path)
    destination = target.path
    isStream = target.isStream
    let writing: String
    if target.isStream {
      writing = target.path
    } else {
      let full = target.path
      let slash = full.lastIndex(of: "/")
      let folder = slash.map { String(full[...$0]) } ?? ""
      let name = slash.map { String(full[full.index(after: $0)...]) } ?? full
      writing = "\(folder).\(name).\(getpid()).partial"
    }
    writingPath = writing
    if !target.isStream, let unnamed = Self.openUnnamed(beside: target.path) {
      descriptor = unnamed
      hasName = false
      return
    }
    hasName = !target.isStream
    do {
      // A named pipe opens without waiting for a reader (ENXIO when none: said, not a hang),
      // then writes block as they should while the reader catches up.
      descriptor = try POSIXFile.open(
        writing, target.isStream ? O_WRONLY | O_NONBLOCK : O_WRONLY | O_CREAT | O_TRUNC)
    } catch {
      throw Failure(path: writing, errno: error.errno)
    }
    if target.isStream {
      let flags = fcntl(descriptor, F_GETFL)
      if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
    }
  }

  deinit {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    if !committed && hasName { _ = Glibc.unlink(writingPath) }
  }

  /// An unnamed file (`O_TMPFILE`) in the folder of `path`, when the file system has them and
  /// `/proc` is there to link it in by; `nil` otherwise (the caller uses a named one, which
  /// also reports a folder that cannot be written to).
  static func openUnnamed(beside path: String) -> Int32? {
    guard access("/proc/self/fd", F_OK) == 0 else { return nil }
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    // O_TMPFILE is `__O_TMPFILE | O_DIRECTORY` (a macro Swift does not import).
    return try? POSIXFile.open(folder, __O_TMPFILE | O_DIRECTORY | O_WRONLY)
  }

  /// Writes `bytes` to `path`, whole or not at all: the one-shot form of `init`, `write`,
  /// `commit`.
  public static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
    let file = try AtomicFile(path: path)
    var failure: Failure?
    bytes.withUnsafeBytes { raw in
      do throws(Failure) { try file.write(raw) } catch { failure = error }
    }
    if let failure { throw failure }
    try file.commit()
  }

  /// Appends `bytes`.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
    do {
      try POSIXFile.writeAll(descriptor, bytes)
    } catch {
      throw Failure(path: writingPath, errno: error.errno)
    }
  }

  /// Appends `text`'s UTF-8 bytes.
  public func write(_ text: String) throws(Failure) {
    var text = text
    var failure: Failure?
    text.withUTF8 { bytes in
      do throws(Failure) { try write(UnsafeRawBufferPointer(bytes)) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Syncs the temporary file and renames it over the destination (a stream: just closes it).
  public func commit() throws(Failure) {
    if !isStream {
      do {
        try POSIXFile.dataSync(descriptor)
      } catch {
        throw Failure(path: writingPath, errno: error.errno)
      }
    }
    if !isStream && !hasName {
      // Give the unnamed file its temporary name (linkat cannot replace the destination).
      _ = Glibc.unlink(writingPath)
      guard
        linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, writingPath, AT_SYMLINK_FOLLOW)
          == 0
      else {
        throw Failure(path: writingPath, errno: Errno(rawValue: Glibc.errno))
      }
      hasName = true
    }
    _ = Glibc.close(descriptor)
    descriptor = -1
    if !isStream {
      guard Glibc.rename(writingPath, destination) == 0 else {
        throw Failure(path: destination, errno: Errno(rawValue: Glibc.errno))
      }
      POSIXFile.syncFolder(of: destination)
    }
    committed = true
  }

  /// Where a write to `path` goes: the path a chain of symbolic links leads to, and whether
  /// that is something other than a regular file or a folder (or nothing yet).
  static func resolve(_ path: String) -> (path: String, isStream: Bool) {
    var status = stat()
    if stat(path, &status) == 0 {
      let kind = status.st_mode & S_IFMT
      if kind != S_IFREG && kind != S_IFDIR { return (path, true) }
    }
    // Follow the links by hand: a link to a file that does not exist yet is still a link.
    var current = path
    for _ in 0..<40 {
      guard lstat(current, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK else { break }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let count = readlink(current, &buffer, buffer.count - 1)
      guard count > 0 else { break }
      let target = String(
        decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if target.hasPrefix("/") {
        current = target
      } else if let slash = current.lastIndex(of: "/") {
        current = String(current[...slash]) + target
      } else {
        current = target
      }
    }
    return (current, false)
  }
}
