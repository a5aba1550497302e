#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The few POSIX file operations the format needs, each retrying `EINTR`, each failing with the
/// errno. Regular files only: no `EAGAIN` handling.
package enum POSIXFile {
  /// A failed call's errno.
  package struct Failure: Error {
    package var errno: Errno
    package static var current: Failure { Failure(errno: Errno(rawValue: Glibc.errno)) }
  }

  /// `open(2)`.
  package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(Failure)
    -> Int32
  {
    while true {
      let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
      if fd >= 0 { return fd }
      if Glibc.errno != EINTR { throw .current }
    }
  }

  /// One `write(2)` of `bytes` (retried only when interrupted before writing anything): returns
  /// how many bytes the kernel took.
  package static func writeOnce(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Failure) -> Int
  {
    while true {
      let n = Glibc.write(fd, bytes.baseAddress, bytes.count)
      if n >= 0 { return n }
      if Glibc.errno != EINTR { throw .current }
    }
  }

  /// Writes all of `bytes`, in as many `write(2)` calls as it takes (not for the hot path).
  package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Failure) {
    var offset = 0
    while offset < bytes.count {
      let n = try writeOnce(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
      if n == 0 { throw Failure(errno: Errno(rawValue: EIO)) }
      offset += n
    }
  }

  /// `fdatasync(2)`: the data and the metadata needed to read it back (the size) reach the device.
  package static func dataSync(_ fd: Int32) throws(Failure) {
    while Glibc.fdatasync(fd) != 0 {
      if Glibc.errno != EINTR { throw .current }
    }
  }

  /// `fsync(2)` of the folder holding `path`, so a new or renamed entry survives a power loss.
  package static func syncFolder(of path: String) {
    let folder: String
    if let slash = path.lastIndex(of: "/") {
      folder = slash == path.startIndex ? "/" : String(path[..<slash])
    } else {
      folder = "."
    }
    guard let fd = try? open(folder, O_RDONLY | O_DIRECTORY) else { return }
    _ = Glibc.fsync(fd)
    _ = Glibc.close(fd)
  }

  /// Reads a whole file: a regular file, or a pipe to its end. A device (`/dev/zero` would be
  /// read until memory ran out) is refused with `ENODEV`, a folder with `EISDIR`. Opened without
  /// blocking, so a named pipe that nothing writes to reads as empty instead of hanging.
  package static func readAll(_ path: String) throws(Failure) -> [UInt8] {
    let fd = try open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
    defer { _ = Glibc.close(fd) }
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { throw .current }
    switch status.st_mode & S_IFMT {
    case S_IFDIR: throw Failure(errno: Errno(rawValue: EISDIR))
    case S_IFCHR, S_IFBLK, S_IFSOCK: throw Failure(errno: Errno(rawValue: ENODEV))
    default: break
    }
    var result = [UInt8](repeating: 0, count: max(0, Int(status.st_size)))
    var filled = 0
    while true {
      if filled == result.count {
        result.append(contentsOf: [UInt8](repeating: 0, count: 65536))
      }
      let n = result.withUnsafeMutableBytes {
        Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled)
      }
      if n < 0 {
        if Glibc.errno == EINTR { continue }
        throw .current
      }
      if n == 0 { break }
      filled += n
    }
    result.removeLast(result.count - filled)
    return result
  }

  /// `strerror` text for people.
  package static func message(_ errno: Errno) -> String { fileErrorText(errno) }
}

/// What a failed file operation's errno means, for people: a full disk, a size limit and the
/// like in words that say what to look at (`strerror`'s text for the rest).
public func fileErrorText(_ errno: Errno) -> String {
  switch errno.rawValue {
  case ENOENT: "no such file or folder"
  case EACCES: "permission denied"
  case EEXIST: "the file already exists"
  case EISDIR: "is a folder, not a file"
  case ENODEV: "is a device, not a file (a recording is a file: plumb record writes one)"
  case ENOSPC: "no space left on the device"
  case EFBIG:
    "the file has reached the largest size this process may write (ulimit -f) or its file system allows"
  case EROFS: "the file system is read-only"
  case EDQUOT: "the disk quota is used up"
  case EIO: "an I/O error: the device failed (see dmesg)"
  case ENXIO: "nothing reads this named pipe: start its reader first"
  default: String(cString: strerror(errno.rawValue))
  }
}

/// `fileErrorText` for an errno number.
public func fileErrorText(code: Int32) -> String { fileErrorText(Errno(rawValue: code)) }
