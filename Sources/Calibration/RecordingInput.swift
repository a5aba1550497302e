import ByteFormats
import Recording

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a recording could not be used. The message names the file and, where there is one, the
/// line or record, and says what would fix it.
public struct RecordingError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: Hashable, Sendable {
    /// The file does not exist or cannot be read.
    case unreadable
    /// The file's format is not (yet) readable.
    case unsupportedFormat
    /// A row or field is malformed, not a finite number, or out of order.
    case malformed
    /// The samples are not uniformly spaced: a gap, or an extra sample.
    case notUniform
    /// The recording is too short for what was asked.
    case tooShort
    /// An axis holds nothing an analysis can measure: the same value in every sample (no
    /// noise), or values too large to compute with.
    case notMeasurable
  }

  public var kind: Kind
  public var path: String
  /// `"line 12"`, `"record 40"`, or `nil` for the file as a whole.
  public var location: String?
  public var message: String

  public init(_ kind: Kind, path: String, location: String? = nil, _ message: String) {
    self.kind = kind
    self.path = path
    self.location = location
    self.message = message
  }

  public var description: String {
    "\(path)\(location.map { ", \($0)" } ?? ""): \(message)"
  }
}

/// Turns the bytes of one recording format into an `InertialRecording`.
///
/// **Adding a format** (the `.plumbraw` reader of `plumb record`): write a type that conforms,
/// name its file extension, and add it to the loader's `decoders` (for `plumb-cal`, in
/// `RecordingLoader.standard`'s caller). Nothing else changes: every analysis takes an
/// `InertialRecording`.
public protocol RecordingDecoder: Sendable {
  /// File name extensions this decoder reads, lower case, without the dot.
  var fileExtensions: [String] { get }
  /// Decodes a whole file; `path` is for messages.
  func decode(_ bytes: [UInt8], path: String) throws(RecordingError) -> InertialRecording
}

/// Picks a decoder by file extension and reads the file.
public struct RecordingLoader: Sendable {
  public var decoders: [any RecordingDecoder]
  /// Formats that are announced but not readable yet, by extension, with what to tell a person.
  public var pendingFormats: [String: String]

  public init(decoders: [any RecordingDecoder], pendingFormats: [String: String] = [:]) {
    self.decoders = decoders
    self.pendingFormats = pendingFormats
  }

  /// The replay-layout CSV and `.plumbraw` recordings.
  public static let standard = RecordingLoader.standard(corruption: .fail)

  /// The same, reading `.plumbraw` damage in the middle as `corruption` says (`.skip`: the
  /// commands' `--skip-damaged`).
  public static func standard(corruption: PlumbRawCorruptionPolicy) -> RecordingLoader {
    RecordingLoader(decoders: [CSVRecordingDecoder(), PlumbRawDecoder(corruption: corruption)])
  }

  /// Reads and decodes the recording at `path`.
  public func load(path: String) throws(RecordingError) -> InertialRecording {
    let known = decoders.flatMap(\.fileExtensions).map { "." + $0 }.joined(separator: ", ")
    var status = stat()
    if stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
      throw RecordingError(
        .unreadable, path: path, "is a folder, not a recording: give one of its files (\(known))")
    }
    let ext = fileExtension(path)
    guard let decoder = decoders.first(where: { $0.fileExtensions.contains(ext) }) else {
      if let pending = pendingFormats[ext] {
        throw RecordingError(.unsupportedFormat, path: path, "not yet supported: \(pending)")
      }
      throw RecordingError(
        .unsupportedFormat, path: path,
        "unknown recording format \(ext.isEmpty ? "(no file extension)" : "'.\(ext)'"); readable: \(known)"
      )
    }
    let bytes: [UInt8]
    do {
      bytes = try readFile(path)
    } catch {
      throw RecordingError(.unreadable, path: path, fileErrorMessage(error.code))
    }
    return try decoder.decode(bytes, path: path)
  }

  func fileExtension(_ path: String) -> String {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
    return name[name.index(after: dot)...].lowercased()
  }
}

func fileErrorMessage(_ code: Int32) -> String {
  switch code {
  case ENOENT: "no such file"
  case EACCES: "permission denied"
  case EISDIR: "is a folder, not a file"
  case ENODEV: "is a device, not a file"
  case EFBIG: "is larger than any file of its kind (it cannot be what was meant)"
  default: String(cString: strerror(code))
  }
}

/// An errno from a file operation.
struct FileError: Error {
  var code: Int32
}

/// Reads a whole file with POSIX calls: a regular file, or a pipe to its end. A device
/// (`/dev/zero` would be read until memory ran out) fails with `ENODEV`, a folder with `EISDIR`,
/// more than `limit` bytes with `EFBIG`. Opened without blocking, so a named pipe that nothing
/// writes to reads as empty instead of hanging.
func readFile(_ path: String, limit: Int = Int.max) throws(FileError) -> [UInt8] {
  let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else { throw FileError(code: errno) }
  defer { close(fd) }
  let flags = fcntl(fd, F_GETFL)
  if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
  var status = stat()
  guard fstat(fd, &status) == 0 else { throw FileError(code: errno) }
  switch status.st_mode & S_IFMT {
  case S_IFDIR: throw FileError(code: EISDIR)
  case S_IFCHR, S_IFBLK, S_IFSOCK: throw FileError(code: ENODEV)
  default: break
  }
  if Int(status.st_size) > limit { throw FileError(code: EFBIG) }
  // Read straight into an array of the file's size (one allocation, no copies); a file that
  // grows while being read is read to its end in further chunks.
  var result = [UInt8](repeating: 0, count: max(0, Int(status.st_size)))
  var filled = 0
  while true {
    if filled == result.count { result.append(contentsOf: [UInt8](repeating: 0, count: 65536)) }
    let n = result.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
    if n < 0 {
      if errno == EINTR { continue }
      throw FileError(code: errno)
    }
    if n == 0 { break }
    filled += n
    if filled > limit { throw FileError(code: EFBIG) }
  }
  result.removeLast(result.count - filled)
  return result
}

/// Writes `bytes` to `path` atomically (`AtomicFile`): a temporary file in the same folder,
/// flushed to disk, then renamed over the target, so a power loss leaves either the old file or
/// the new one; through a symbolic link, the file it points to.
func writeFileAtomically(_ bytes: [UInt8], to path: String) throws(FileError) {
  do throws(AtomicFile.Failure) {
    try AtomicFile.write(bytes, to: path)
  } catch {
    throw FileError(code: error.errno.rawValue)
  }
}
