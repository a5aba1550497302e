import ByteFormats
import HardwareAbstraction

/// What a reader does with a damaged record that valid records follow.
public enum PlumbRawCorruptionPolicy: Hashable, Sendable {
  /// Refuse the file, naming the byte offset and record index (the default: a recording with a
  /// hole would replay wrongly, and damage in the middle of a file is worth a person's look).
  case fail
  /// Skip to the next valid record and carry on; `PlumbRawReader.skippedRegions` says what was
  /// lost. For salvaging the rest of a damaged recording.
  case skip
}

/// A stretch of bytes the reader skipped as damaged (`.skip` policy).
public struct PlumbRawSkippedRegion: Hashable, Sendable {
  /// Where the damage starts, bytes from the start of the file.
  public var offset: Int
  /// How many bytes were skipped.
  public var length: Int
  /// The index the next valid record has (records before the damage: `recordIndex`).
  public var recordIndex: Int

  public init(offset: Int, length: Int, recordIndex: Int) {
    self.offset = offset
    self.length = length
    self.recordIndex = recordIndex
  }
}

/// Reads a `.plumbraw` file: checks the header, then every record's frame and CRC, once, when
/// it is made; iterating afterwards cannot fail.
///
/// **A file cut short is a recording that ends early.** Bytes at the end that do not form a
/// whole record with a valid CRC — a write cut by a power loss, zeros the file system left —
/// are not an error: the records before them are the recording, and `tornBytes` and
/// `truncationNote` say what was dropped.
///
/// **Damage in the middle** — a record whose CRC fails with valid records after it — is an
/// error naming the byte offset and the record index (`PlumbRawCorruptionPolicy.fail`), or is
/// skipped and reported in `skippedRegions` (`.skip`). A record with a valid CRC but an
/// impossible content is always an error (`malformedRecord`): no damage produces that. Records
/// of kinds this reader does not know (a newer minor version) are skipped and counted.
///
/// The whole file is held in memory: about 12 MB per hour at 100 Hz. `PlumbRawStreamReader`
/// reads the samples of a file in chunks instead, with the same checks.
public struct PlumbRawReader: Sendable {
  /// The file, for messages.
  public let path: String
  public let header: PlumbRawHeader
  /// Bytes of header (where the records start).
  public let headerLength: Int
  /// The file's length.
  public var fileLength: Int { bytes.count }
  /// Valid records, every kind (unknown kinds included).
  public let recordCount: Int
  /// Valid records of kinds this reader does not know (skipped when iterating).
  public let unknownRecordCount: Int
  /// Sample records.
  public let sampleCount: Int
  /// Where the last whole valid record ends.
  public let validEnd: Int
  /// Regions skipped as damaged (`.skip` only).
  public let skippedRegions: [PlumbRawSkippedRegion]

  let bytes: [UInt8]
  let scan: PlumbRawRecordScan

  /// Bytes at the end that are not a whole valid record: a torn last write.
  public var tornBytes: Int { bytes.count - validEnd }
  /// Bytes skipped as damaged in the middle.
  public var skippedBytes: Int { skippedRegions.reduce(0) { $0 + $1.length } }

  /// Reads the file at `path`.
  public init(contentsOf path: String, corruption: PlumbRawCorruptionPolicy = .fail)
    throws(PlumbRawError)
  {
    let bytes: [UInt8]
    do {
      bytes = try POSIXFile.readAll(path)
    } catch {
      throw PlumbRawError(
        .unreadable, path: path, errno: error.errno,
        "cannot read the recording: \(POSIXFile.message(error.errno))")
    }
    try self.init(bytes: bytes, path: path, corruption: corruption)
  }

  /// Reads a recording held in memory; `path` names it in messages.
  public init(
    bytes: [UInt8], path: String = "recording", corruption: PlumbRawCorruptionPolicy = .fail
  ) throws(PlumbRawError) {
    var scan: PlumbRawRecordScan?
    var decoded: (PlumbRawHeader, Int)?
    var failure: PlumbRawError?
    bytes.withUnsafeBytes { raw in
      do throws(PlumbRawError) {
        let header = try PlumbRawHeader.decode(raw, path: path)
        var records = PlumbRawRecordScan(start: header.1, path: path, corruption: corruption)
        _ = try records.advance(raw, from: 0, atEnd: true) { _, _ in }
        scan = records
        decoded = header
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    let (header, headerLength) = decoded!
    self.path = path
    self.header = header
    self.headerLength = headerLength
    self.bytes = bytes
    self.scan = scan!
    recordCount = self.scan.records
    unknownRecordCount = self.scan.unknown
    sampleCount = self.scan.samples
    validEnd = self.scan.validEnd
    skippedRegions = self.scan.skipped
  }

  /// What to do about damage in the middle, as the commands that read recordings say it (each
  /// takes `--skip-damaged`).
  public static let skipDamagedAdvice =
    "Give --skip-damaged to read past the damage: the records in the damaged bytes are lost, "
    + "the ones after them kept, and the hole reads as a gap in the samples"

  /// For a file read with `.skip` that had damage in the middle: what was skipped, for a person
  /// (commands print it after the file's name, so salvaged data is not taken for whole). `nil`
  /// otherwise.
  public var skippedNote: String? { scan.skippedNote }

  /// For a file that ends with a torn record: what was dropped, for a person. `nil` otherwise.
  public var truncationNote: String? { scan.truncationNote(fileLength: bytes.count) }

  /// For a file that ends with a torn record, one line for people: the file, the samples read
  /// and what was dropped (commands that read a recording print it, so a cut file is not taken
  /// for a whole one). `nil` otherwise.
  public var cutShortWarning: String? {
    guard let truncationNote else { return nil }
    return "\(path) ends in the middle of a record: \(sampleCount) samples read, up to the cut; "
      + truncationNote
  }

  /// The records, in file order, of the `kinds` asked for.
  public func records(_ kinds: PlumbRawRecordKinds = .all) -> PlumbRawRecords {
    PlumbRawRecords(reader: self, kinds: kinds)
  }

  // MARK: - Scanning

  /// The frame at `offset` if it is whole and its CRC matches: its kind, payload and length.
  static func frame(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (
    kind: UInt8, payload: UnsafeRawBufferPointer, length: Int
  )? {
    guard bytes.count - offset >= PlumbRawFormat.recordOverhead else { return nil }
    let payloadLength = Int(bytes[offset + 1])
    let length = payloadLength + PlumbRawFormat.recordOverhead
    guard bytes.count - offset >= length else { return nil }
    let body = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 2 + payloadLength)])
    // Inside the bounds just checked: the 4 bytes after the payload.
    let stored = UInt32(
      littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 2 + payloadLength, as: UInt32.self)
    )
    guard CRC32C.checksum(body) == stored else { return nil }
    return (
      bytes[offset],
      UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + payloadLength)]), length
    )
  }

  /// Whether a record of `kind` can have a `length`-byte payload: what resynchronisation
  /// insists on besides the CRC, so that random bytes are not taken for a record.
  static func plausible(kind: PlumbRawRecordKind, payloadLength: Int) -> Bool {
    switch kind {
    case .sample: payloadLength == 27 || payloadLength == 31
    case .unavailable: payloadLength == 26
    case .missedSamples: payloadLength == 13
    case .reinitialization: payloadLength == 10
    case .configurationChange: payloadLength == 52
    case .note: payloadLength >= 9
    case .timerWake: payloadLength == 8
    case .burst: payloadLength == 22
    case .transfer: (20...51).contains(payloadLength)
    case .transferFailure: payloadLength == 27
    }
  }

  /// Whether a whole, plausible, CRC-valid record of a known kind begins at `offset`: where a
  /// scan picks up again after damage.
  static func startsRecord(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
    guard let kind = PlumbRawRecordKind(rawValue: bytes[offset]) else { return false }
    return plausible(kind: kind, payloadLength: Int(bytes[offset + 1]))
      && frame(bytes, at: offset) != nil
  }
}

/// The records of a reader, of some kinds, in file order.
public struct PlumbRawRecords: Sequence, Sendable {
  let reader: PlumbRawReader
  let kinds: PlumbRawRecordKinds

  public func makeIterator() -> PlumbRawRecordIterator {
    PlumbRawRecordIterator(reader: reader, kinds: kinds)
  }
}

/// Walks the records of a reader. Decodes only the kinds asked for; allocation-free except for
/// notes (their text).
public struct PlumbRawRecordIterator: IteratorProtocol, Sendable {
  private let bytes: [UInt8]
  private let end: Int
  private let skipped: [PlumbRawSkippedRegion]
  private let kinds: PlumbRawRecordKinds
  private var offset: Int
  private var nextSkip = 0
  private var index = 0
  /// The byte offset of the record `next()` returned last.
  public private(set) var lastOffset = -1
  /// The 0-based index (among all valid records) of the record `next()` returned last.
  public private(set) var lastIndex = -1

  init(reader: PlumbRawReader, kinds: PlumbRawRecordKinds) {
    bytes = reader.bytes
    end = reader.validEnd
    skipped = reader.skippedRegions
    self.kinds = kinds
    offset = reader.headerLength
  }

  public mutating func next() -> PlumbRawRecord? {
    let bytes = self.bytes
    return bytes.withUnsafeBytes { raw -> PlumbRawRecord? in
      while offset < end {
        if nextSkip < skipped.count, offset == skipped[nextSkip].offset {
          offset += skipped[nextSkip].length
          nextSkip += 1
          continue
        }
        // Whole records only, as the reader's scan guarantees (see `PlumbRawRecordCursor`'s
        // "Bounds"); a walk that would leave them ends instead of reading past them.
        guard end - offset >= PlumbRawFormat.recordOverhead,
          end - offset >= Int(raw[offset + 1]) + PlumbRawFormat.recordOverhead
        else {
          offset = end
          return nil
        }
        let kindCode = raw[offset]
        let payloadLength = Int(raw[offset + 1])
        let start = offset
        let recordIndex = index
        offset += payloadLength + PlumbRawFormat.recordOverhead
        index += 1
        guard let kind = PlumbRawRecordKind(rawValue: kindCode), kinds.contains(kind) else {
          continue
        }
        let payload = UnsafeRawBufferPointer(
          rebasing: raw[(start + 2)..<(start + 2 + payloadLength)])
        guard case .record(let record) = PlumbRawRecord.decode(kind: kindCode, payload: payload)
        else { continue }
        lastOffset = start
        lastIndex = recordIndex
        return record
      }
      return nil
    }
  }
}

/// Walks the records of a reader without building a `PlumbRawRecord` for each: `advance()`
/// stops at the next record of the kinds asked for and says its kind, and decodes sample and
/// burst records on the spot into `sample` and `burst` (plain stored values: reading them never
/// copies the cursor); `record` decodes any kind the usual way. For loops that read every record
/// (a replay reads each sample twice); `PlumbRawRecords` is the convenient form.
/// Allocation-free except for notes.
///
/// **Bounds.** The cursor reads the reader's bytes without per-byte checks. That is safe
/// because a `PlumbRawReader` exists only after its scan found, from `headerLength` to
/// `validEnd` less the `skippedRegions`, nothing but whole records whose CRC matches and whose
/// content decodes (its fields are immutable afterwards); `advance()` still refuses a record
/// that would run past `validEnd`, ending the walk there rather than reading outside the file.
public struct PlumbRawRecordCursor: Sendable {
  private let bytes: [UInt8]
  private let end: Int
  private let skipped: [PlumbRawSkippedRegion]
  private let kinds: PlumbRawRecordKinds
  private var offset: Int
  private var nextSkip = 0
  private var payloadStart = 0
  private var payloadLength = 0
  /// The kind of the record `advance()` stopped at (`nil` before the first and after the last).
  public private(set) var kind: PlumbRawRecordKind?
  /// The current record when it is a sample.
  public private(set) var sample: PlumbRawSample?
  /// The current record when it is a burst.
  public private(set) var burst: PlumbRawBurst?

  /// A cursor before the first record of `kinds` in `reader`.
  public init(_ reader: PlumbRawReader, kinds: PlumbRawRecordKinds = .all) {
    bytes = reader.bytes
    end = reader.validEnd
    skipped = reader.skippedRegions
    self.kinds = kinds
    offset = reader.headerLength
  }

  /// Moves to the next record of the kinds asked for; returns its kind, or `nil` at the end.
  public mutating func advance() -> PlumbRawRecordKind? {
    kind = nil
    sample = nil
    burst = nil
    let bytes = self.bytes
    return bytes.withUnsafeBytes { raw -> PlumbRawRecordKind? in
      while offset < end {
        if nextSkip < skipped.count, offset == skipped[nextSkip].offset {
          offset += skipped[nextSkip].length
          nextSkip += 1
          continue
        }
        let start = offset
        // The reader's scan makes this impossible; a walk that would leave the valid records
        // ends instead of reading past them.
        guard end - start >= PlumbRawFormat.recordOverhead else { break }
        let length = Int(raw[start + 1])
        guard end - start >= length + PlumbRawFormat.recordOverhead else { break }
        offset += length + PlumbRawFormat.recordOverhead
        guard let found = PlumbRawRecordKind(rawValue: raw[start]), kinds.contains(found) else {
          continue
        }
        payloadStart = start + 2
        payloadLength = length
        let payload = UnsafeRawBufferPointer(rebasing: raw[payloadStart..<(payloadStart + length)])
        switch found {
        case .sample: sample = PlumbRawSample.decode(payload)
        case .burst: burst = PlumbRawBurst.decode(payload)
        default: break
        }
        kind = found
        return found
      }
      offset = end
      return nil
    }
  }

  /// The current record, decoded.
  public var record: PlumbRawRecord? {
    guard let kind else { return nil }
    return bytes.withUnsafeBytes { raw -> PlumbRawRecord? in
      let payload = UnsafeRawBufferPointer(
        rebasing: raw[payloadStart..<(payloadStart + payloadLength)])
      guard case .record(let record) = PlumbRawRecord.decode(kind: kind.rawValue, payload: payload)
      else { return nil }
      return record
    }
  }
}
