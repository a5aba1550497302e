/// Reads a `.plumbraw` recording's samples from windows of its bytes, in order, without holding
/// the file: what `PlumbRawReader` and `forEachSISample` do for a file in memory, for one read
/// in chunks (`plumb-cal` on a recording of hours at 1 kHz, on a board with 512 MB).
///
/// The header must lie whole in the first window (`read` asks for more until it does); then
/// every window is scanned as `PlumbRawReader` scans a whole file (`PlumbRawRecordScan`), so
/// the same damage gives the same error at the same byte and record, and the same samples are
/// selected (`PlumbRawSISelector`). Errors come when the damage is reached, after the samples
/// before it were handed out.
public struct PlumbRawStreamReader: Sendable {
  public let path: String
  /// The header, once `read` has seen it.
  public private(set) var header: PlumbRawHeader?
  var scan: PlumbRawRecordScan?
  var selector: PlumbRawSISelector?
  let corruption: PlumbRawCorruptionPolicy
  /// The bytes seen when the window reached the end of the file.
  public private(set) var fileLength: Int?

  public init(path: String, corruption: PlumbRawCorruptionPolicy = .fail) {
    self.path = path
    self.corruption = corruption
  }

  /// Reads what `window` (the file's bytes from offset `windowStart`) holds, handing every
  /// selected sample to `body`; `atEnd`: the window reaches the end of the file. Returns the
  /// offset of the first byte still needed: the next window starts there (or before).
  public mutating func read(
    _ window: UnsafeRawBufferPointer, from windowStart: Int, atEnd: Bool,
    _ body: (PlumbRawSISample) -> Void
  ) throws(PlumbRawError) -> Int {
    if atEnd { fileLength = windowStart + window.count }
    if header == nil {
      precondition(windowStart == 0, "the first window starts at the file's start")
      let magic = PlumbRawFormat.magic
      if !atEnd {
        // The header's length (a u32 after the magic and the version) says how much it needs.
        guard window.count >= magic.count + 8 else { return 0 }
        if zip(window, magic).allSatisfy({ $0 == $1 }) {
          let length = UInt32(
            littleEndian: window.loadUnaligned(fromByteOffset: magic.count + 4, as: UInt32.self))
          guard window.count >= Int(length) else { return 0 }
        }
      }
      let (decoded, length) = try PlumbRawHeader.decode(window, path: path)
      header = decoded
      scan = PlumbRawRecordScan(start: length, path: path, corruption: corruption)
      selector = PlumbRawSISelector(scale: decoded.scale)
    }
    var selector = self.selector!
    defer { self.selector = selector }
    return try scan!.advance(window, from: windowStart, atEnd: atEnd) { kind, payload in
      if kind == PlumbRawRecordKind.sample.rawValue {
        if let sample = PlumbRawSample.decode(payload), let selected = selector.take(sample) {
          body(selected)
        }
      } else if kind == PlumbRawRecordKind.configurationChange.rawValue,
        case .record(.configurationChange(let change)) = PlumbRawRecord.decode(
          kind: kind, payload: payload)
      {
        selector.scale = change.scale
      }
    }
  }

  /// Sample records read (repeated reads and samples out of order included).
  public var sampleCount: Int { scan?.samples ?? 0 }
  /// What was selected so far.
  public var selection: PlumbRawSampleSelection { selector?.selection ?? PlumbRawSampleSelection() }
  /// As `PlumbRawReader.truncationNote`, once the end of the file was read.
  public var truncationNote: String? {
    guard let fileLength else { return nil }
    return scan?.truncationNote(fileLength: fileLength)
  }
  /// As `PlumbRawReader.skippedNote`.
  public var skippedNote: String? { scan?.skippedNote }
}
