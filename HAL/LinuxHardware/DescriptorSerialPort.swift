import Glibc
import HardwareAbstraction
import POSIXSupport

/// Frames to a file descriptor that is not a serial device: standard output (a terminal or a
/// pipe) or a regular file, with host commands optionally read from another descriptor
/// (standard input), so `plumb run` can print live frames on a terminal and take `tare` typed
/// at it.
///
/// Non-blocking without changing the descriptors' flags (standard output is shared with the
/// shell): each write first asks `poll(2)` whether the descriptor can take data now and writes
/// nothing (counted as refused) when it cannot; a frame is at most 140 bytes, below `PIPE_BUF`,
/// so a writable pipe takes it without blocking. Reads likewise poll first. A closed reader
/// (`EPIPE`, the shell's `| head`) is a disconnect. Regular files are always writable.
///
/// **A file** (`file(path:)`) takes each write whole or not at all. A write that the kernel
/// takes only in part, or refuses, means the file cannot grow (a full disk, a quota, a size
/// limit) or its device failed: the part is cut off again, so the file ends with the last whole
/// write, and the port fails for good (`outputFailed`, with the errno; `reopen()` fails the
/// same way: more frames after a hole would look like a whole capture). The loop queues whole
/// frames and drains the queue after each, so with a port that takes everything every write
/// starts at a frame boundary: the file ends with a whole frame.
public final class DescriptorSerialPort: SerialPort {
  public let name: String
  private var output: FileDescriptor
  private var input: FileDescriptor
  private let path: String?
  /// Whether this is `file(path:)`: writes are whole or fail the port.
  private let isFile: Bool
  /// Whether the file is a regular file (a partial write can be cut off again).
  private var isRegularFile = false
  public private(set) var statistics = SerialStatistics()
  /// Why the file stopped taking frames (`outputFailed`), once it has.
  public private(set) var writeFailure: SerialError?
  /// The bytes in the file now: whole writes since it was created (or truncated).
  public private(set) var fileLength: Int64 = 0

  /// Writes to standard output, and reads commands from standard input when `readsInput`.
  /// The descriptors stay open when the port closes (they belong to the process).
  /// Standard output redirected to a file (`plumb run > frames.txt`), or to a device that is
  /// not a terminal, is written as a file is (whole writes; a full disk fails the port); a
  /// terminal or a pipe as a stream. (A descriptor that cannot be copied, standard output closed
  /// by the caller, leaves the port closed: its writes throw `notOpen`.)
  public static func standardOutput(readsInput: Bool) -> DescriptorSerialPort {
    // What standard output is, asked of descriptor 1 itself (its copy is the same file). Kept
    // apart from the copy: Swift 6.0.3's optimiser crashes (release builds) on a function that
    // borrows this noncopyable copy for `fstat` and then hands it over.
    var status = stat()
    let kind = fstat(1, &status) == 0 ? status.st_mode & S_IFMT : 0
    let isFile = kind == S_IFREG || (kind == S_IFCHR && isatty(1) == 0)
    let port = DescriptorSerialPort(
      name: "stdout", output: duplicateOrClosed(1),
      input: readsInput ? duplicateOrClosed(0) : .closed, path: nil, isFile: isFile)
    port.isRegularFile = kind == S_IFREG
    return port
  }

  /// A close-on-exec copy of `descriptor`, or a closed one when it cannot be copied.
  private static func duplicateOrClosed(_ descriptor: Int32) -> FileDescriptor {
    do {
      return try FileDescriptor.duplicate(descriptor)
    } catch {
      return .closed
    }
  }

  /// Creates (or truncates) the regular file at `path` and writes frames to it.
  public static func file(path: String) throws(SerialError) -> DescriptorSerialPort {
    let port = DescriptorSerialPort(
      name: path, output: try createFile(path), input: .closed, path: path, isFile: true)
    // Asked of the port's own descriptor: a local noncopyable descriptor borrowed for `fstat`
    // and then handed over crashes Swift 6.0.3's optimiser (release builds).
    port.isRegularFile = port.outputIsRegularFile()
    return port
  }

  /// Whether the output descriptor is a regular file.
  private func outputIsRegularFile() -> Bool {
    var status = stat()
    return fstat(output.rawValue, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// Creates (or truncates) `path` for writing, its failure said as the port's error.
  private static func createFile(_ path: String) throws(SerialError) -> FileDescriptor {
    do {
      return try FileDescriptor.open(
        path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions: 0o644)
    } catch {
      let kind: SerialError.Kind
      switch error.errno {
      case .noSuchFileOrDirectory: kind = .deviceMissing
      case .permissionDenied, .operationNotPermitted: kind = .permissionDenied
      default: kind = .ioError
      }
      throw SerialError(kind, errno: error.errno, device: path)
    }
  }

  /// Writes frames to the named pipe (FIFO) at `path`, which a reader must already have open:
  /// opened without blocking (`ENXIO` when nothing reads it is `.noReader`, not a wait), and
  /// written like standard output (a full pipe refuses a frame, a reader gone is a disconnect).
  public static func namedPipe(path: String) throws(SerialError) -> DescriptorSerialPort {
    do {
      let descriptor = try FileDescriptor.open(
        path, flags: O_WRONLY | O_NONBLOCK | O_CLOEXEC, permissions: 0)
      return DescriptorSerialPort(name: path, output: descriptor, input: .closed, path: path)
    } catch {
      let kind: SerialError.Kind
      switch error.errno {
      case .noSuchFileOrDirectory: kind = .deviceMissing
      case .permissionDenied, .operationNotPermitted: kind = .permissionDenied
      case .noSuchDeviceOrAddress: kind = .noReader
      default: kind = .ioError
      }
      throw SerialError(kind, errno: error.errno, device: path)
    }
  }

  private init(
    name: String, output: consuming FileDescriptor, input: consuming FileDescriptor,
    path: String?, isFile: Bool = false
  ) {
    self.name = name
    self.output = output
    self.input = input
    self.path = path
    self.isFile = isFile
  }

  public var isOpen: Bool { output.isOpen }

  public func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    guard output.isOpen else { throw writeFailure ?? SerialError(.notOpen, device: name) }
    guard !bytes.isEmpty else { return 0 }
    if isFile { return try writeWhole(bytes) }
    let ready: PollEvents
    do {
      ready = try output.poll(for: .output)
    } catch {
      throw SerialError(.ioError, errno: error.errno, device: name)
    }
    if ready.contains(.error) || ready.contains(.hangUp) || ready.contains(.invalid) {
      statistics.disconnects += 1
      output.close()
      throw SerialError(.disconnected, device: name)
    }
    var written = 0
    if ready.contains(.output) {
      do {
        written = try output.write(bytes) ?? 0
      } catch {
        if error.errno == Errno(rawValue: EPIPE) || error.errno == .ioError {
          statistics.disconnects += 1
          output.close()
          throw SerialError(.disconnected, errno: error.errno, device: name)
        }
        throw SerialError(.ioError, errno: error.errno, device: name)
      }
    }
    statistics.bytesWritten += UInt64(written)
    if written < bytes.count {
      statistics.shortWrites += 1
      statistics.bytesRefused += UInt64(bytes.count - written)
    }
    return written
  }

  /// A file's write: all of `bytes`, in as many `write(2)` calls as the kernel needs, or none
  /// of them and the port failed for good.
  private func writeWhole(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    // Where this write starts, to cut back to (standard output may be a file opened by the
    // shell, with bytes before Plumb's).
    let start = isRegularFile ? lseek(output.rawValue, 0, SEEK_CUR) : -1
    var written = 0
    var reason: Errno?
    while written < bytes.count {
      do {
        let count = try output.write(UnsafeRawBufferPointer(rebasing: bytes[written...])) ?? 0
        if count == 0 {
          reason = .ioError
          break
        }
        written += count
      } catch {
        reason = error.errno
        break
      }
    }
    guard let reason else {
      fileLength += Int64(written)
      statistics.bytesWritten += UInt64(written)
      return written
    }
    // What was taken of this write is cut off again (a regular file; a device keeps nothing).
    if written > 0 && start >= 0 {
      _ = ftruncate(output.rawValue, start)
      _ = lseek(output.rawValue, start, SEEK_SET)
    }
    statistics.shortWrites += 1
    statistics.bytesRefused += UInt64(bytes.count)
    let failure = SerialError(.outputFailed, errno: reason, device: name)
    writeFailure = failure
    output.close()
    throw failure
  }

  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int {
    guard input.isOpen, !buffer.isEmpty else { return 0 }
    do {
      let ready = try input.poll(for: .input)
      guard ready.contains(.input) else {
        if ready.contains(.hangUp) || ready.contains(.invalid) { input.close() }
        return 0
      }
      let count = try input.read(into: buffer) ?? 0
      if count == 0 { input.close() }  // end of input: stop asking
      statistics.bytesRead += UInt64(count)
      return count
    } catch {
      input.close()
      return 0
    }
  }

  public func close() {
    output.close()
    input.close()
  }

  /// Files reopen for appending (a file's earlier frames are kept); standard output cannot be
  /// reopened once its reader has gone.
  public func reopen() throws(SerialError) {
    if let writeFailure { throw writeFailure }
    guard let path else { throw SerialError(.deviceMissing, device: name) }
    do {
      output = try FileDescriptor.open(path, flags: O_WRONLY | O_APPEND | O_CLOEXEC)
      statistics.reopens += 1
    } catch {
      throw SerialError(.deviceMissing, errno: error.errno, device: path)
    }
  }
}
