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

/// One sample as a decoder reads it, in SI units.
public struct RecordingSample: Sendable {
  /// Seconds (from the data-ready edge timestamps; a `.plumbraw`'s since its first sample).
  public var timeSeconds: Double
  /// Gyro x, y, z (rad/s), accel x, y, z (m/s²) at lanes 0…5 (`InertialAxis.rawValue`), the die
  /// temperature (°C; 0 when the source has none) at lane 6, 0 at lane 7.
  public var values: SIMD8<Double>
  /// The sample's 1-based line in a CSV; 0 in a binary recording.
  public var line: Int

  public init(timeSeconds: Double, values: SIMD8<Double>, line: Int) {
    self.timeSeconds = timeSeconds
    self.values = values
    self.line = line
  }
}

/// What a decoder learns about a recording besides its samples.
public struct RecordingFacts: Sendable, Hashable {
  /// Whether the samples carry a die temperature.
  public var hasTemperature: Bool
  /// Whether samples are found by their line (CSV) rather than by their number.
  public var locatedByLine: Bool
  /// What a person should know about how the source was read (`InertialRecording.notes`).
  public var notes: [String] = []
  /// The part that recorded it, when the source says.
  public var chip: RecordedChip?

  public init(hasTemperature: Bool, locatedByLine: Bool) {
    self.hasTemperature = hasTemperature
    self.locatedByLine = locatedByLine
  }
}

/// Reads the samples of one recording format, in order, from its bytes a window at a time, so
/// a recording need not be held whole (`RecordingFile`); `decode` collects them into an
/// `InertialRecording`.
///
/// **Adding a format** (the `.plumbraw` reader of `plumb record`): write a type that conforms,
/// name its file extension, and add it to the loader's `decoders` (for `plumb-cal`, in
/// `RecordingLoader.standard`'s caller). Nothing else changes: every analysis takes an
/// `InertialRecording` or a `SampleSource`.
public protocol RecordingDecoder: Sendable {
  /// File name extensions this decoder reads, lower case, without the dot.
  var fileExtensions: [String] { get }
  /// About the fewest bytes a sample takes in the file: `decode` reserves room for the file's
  /// size over this many samples.
  var bytesPerSample: Int { get }
  /// Reads every sample of `input` in order, handing each to `body`; `path` is for messages.
  /// Throws at the first problem, naming its line or byte; the samples before it have been
  /// handed out.
  func read(_ input: inout RecordingBytes, path: String, _ body: (RecordingSample) -> Void)
    throws(RecordingError) -> RecordingFacts
}

extension RecordingDecoder {
  /// Decodes a whole file held in memory; `path` is for messages.
  public func decode(_ bytes: [UInt8], path: String) throws(RecordingError) -> InertialRecording {
    var time: [Double] = []
    var channels = [[Double]](repeating: [], count: 7)
    var lines: [Int] = []
    let estimate = bytes.count / max(1, bytesPerSample)
    time.reserveCapacity(estimate)
    for i in 0..<7 { channels[i].reserveCapacity(estimate) }
    var input = RecordingBytes(bytes, path: path)
    let facts = try read(&input, path: path) { sample in
      time.append(sample.timeSeconds)
      for i in 0..<7 { channels[i].append(sample.values[i]) }
      if sample.line > 0 { lines.append(sample.line) }
    }
    let temperature = facts.hasTemperature ? channels.removeLast() : nil
    if !facts.hasTemperature { channels.removeLast() }
    var recording = InertialRecording(
      source: path, timeSeconds: time, channels: channels, temperatureCelsius: temperature,
      locations: facts.locatedByLine ? .lines(lines) : .sampleNumbers)
    recording.notes = facts.notes
    recording.chip = facts.chip
    return recording
  }
}

/// A recording's bytes as a decoder sees them: a window that moves through the file. Held in
/// memory (one window, the whole file) or read from an open file in chunks of `chunkSize`
/// (`pread`, so each pass starts where it wants), up to the length the file had when it was
/// opened: a file that grows meanwhile (a recording still being written) is read as it was.
public struct RecordingBytes {
  var buffer: [UInt8]
  /// The file offset of `buffer[0]`, and how many bytes of `buffer` hold the file.
  var start = 0
  var filled: Int
  /// Whether the window reaches the end of the file.
  public private(set) var atEnd: Bool
  let descriptor: Int32
  let length: Int
  let path: String
  /// The bytes read at a time from a file.
  public static let chunkSize = 1 << 20

  /// A file held whole in memory.
  public init(_ bytes: [UInt8], path: String) {
    buffer = bytes
    filled = bytes.count
    atEnd = true
    descriptor = -1
    length = bytes.count
    self.path = path
  }

  /// The first `length` bytes of the open file `descriptor`, read from its start.
  init(descriptor: Int32, length: Int, path: String, chunkSize: Int = RecordingBytes.chunkSize) {
    buffer = [UInt8](repeating: 0, count: max(1, min(length, chunkSize)))
    filled = 0
    atEnd = length == 0
    self.descriptor = descriptor
    self.length = length
    self.path = path
  }

  /// Moves the window to start at file offset `keep` (at or after its start) and fills it with
  /// what follows, growing it when it cannot take a chunk more (a line longer than a chunk).
  /// Nothing to do once the window reaches the end of the file.
  public mutating func refill(keeping keep: Int) throws(RecordingError) {
    guard !atEnd else { return }
    let dropped = keep - start
    precondition(dropped >= 0 && dropped <= filled, "the window moves forward within what it holds")
    if dropped > 0 {
      buffer.withUnsafeMutableBytes { raw in
        let base = raw.baseAddress!
        base.copyMemory(from: base + dropped, byteCount: filled - dropped)
      }
      filled -= dropped
      start = keep
    }
    if buffer.count - filled < buffer.count / 2 {
      buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count))
    }
    while filled < buffer.count && start + filled < length {
      let wanted = min(buffer.count - filled, length - start - filled)
      let offset = start + filled
      let n = buffer.withUnsafeMutableBytes { raw in
        pread(descriptor, raw.baseAddress! + filled, wanted, off_t(offset))
      }
      if n < 0 {
        if errno == EINTR { continue }
        throw RecordingError(.unreadable, path: path, fileErrorMessage(errno))
      }
      if n == 0 {
        throw RecordingError(
          .unreadable, path: path,
          "the file became shorter while it was read (\(offset) of its \(length) bytes): it was changed or cut meanwhile; read it again when nothing writes to it"
        )
      }
      filled += n
    }
    atEnd = start + filled >= length
  }

  /// Calls `body` with the window's bytes, the file offset of the first, and whether the window
  /// reaches the end of the file.
  public func withWindow<R, E: Error>(
    _ body: (UnsafeRawBufferPointer, Int, Bool) throws(E) -> R
  ) throws(E) -> R {
    let (start, filled, atEnd) = (self.start, self.filled, self.atEnd)
    // `withUnsafeBytes` rethrows untyped: the outcome crosses it as a value.
    let outcome = buffer.withUnsafeBytes { raw -> Result<R, E> in
      do throws(E) {
        return .success(try body(UnsafeRawBufferPointer(rebasing: raw[0..<filled]), start, atEnd))
      } catch {
        return .failure(error)
      }
    }
    switch outcome {
    case .success(let value): return value
    case .failure(let error): throw error
    }
  }
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
    let decoder = try self.decoder(for: path)
    let bytes: [UInt8]
    do {
      bytes = try readFile(path)
    } catch {
      throw RecordingError(.unreadable, path: path, fileErrorMessage(error.code))
    }
    return try decoder.decode(bytes, path: path)
  }

  /// Opens the recording at `path` for analyses that read it in passes: a regular file is read
  /// from disk at each pass and never held whole (`RecordingFile`); anything else (a pipe, which
  /// cannot be read twice) is read into memory once, as `load` does. Nothing is decoded yet: the
  /// first pass does it.
  public func open(path: String) throws(RecordingError) -> any SampleSource {
    let decoder = try self.decoder(for: path)
    let file: (descriptor: Int32, status: stat)
    do {
      file = try openFile(path)
    } catch {
      throw RecordingError(.unreadable, path: path, fileErrorMessage(error.code))
    }
    guard file.status.st_mode & S_IFMT == S_IFREG else {
      close(file.descriptor)
      return try load(path: path)
    }
    return RecordingFile(
      path: path, decoder: decoder, descriptor: file.descriptor, length: Int(file.status.st_size))
  }

  /// The decoder for `path`'s extension; an error naming the readable formats when none is.
  func decoder(for path: String) throws(RecordingError) -> any RecordingDecoder {
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
    return decoder
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

/// Opens `path` for reading and checks what it is: a folder fails with `EISDIR`, a device or a
/// socket with `ENODEV`. Opened without blocking, so a named pipe that nothing writes to reads as
/// empty instead of hanging; blocking again once open. The caller closes the descriptor.
func openFile(_ path: String) throws(FileError) -> (Int32, stat) {
  let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else { throw FileError(code: errno) }
  let flags = fcntl(fd, F_GETFL)
  if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
  var status = stat()
  guard fstat(fd, &status) == 0 else {
    let code = errno
    close(fd)
    throw FileError(code: code)
  }
  switch status.st_mode & S_IFMT {
  case S_IFDIR:
    close(fd)
    throw FileError(code: EISDIR)
  case S_IFCHR, S_IFBLK, S_IFSOCK:
    close(fd)
    throw FileError(code: ENODEV)
  default: return (fd, status)
  }
}

/// Reads a whole file with POSIX calls: a regular file, or a pipe to its end. A device
/// (`/dev/zero` would be read until memory ran out) fails with `ENODEV`, a folder with `EISDIR`,
/// more than `limit` bytes with `EFBIG`. Opened without blocking, so a named pipe that nothing
/// writes to reads as empty instead of hanging.
func readFile(_ path: String, limit: Int = Int.max) throws(FileError) -> [UInt8] {
  let (fd, status) = try openFile(path)
  defer { close(fd) }
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
