/// The check of a `.plumbraw` file's records, fed the file a window at a time: every record's
/// frame and CRC, damage in the middle told from a torn end, sample times that two readers can
/// subtract. `PlumbRawReader` runs it over a whole file held in memory; `PlumbRawStreamReader`
/// over a file read in chunks, so that a recording of hours is never held whole. Both see the
/// same records and the same errors: a window is only examined where what it holds decides the
/// outcome (a whole longest record, or the end of the file).
struct PlumbRawRecordScan: Sendable {
  var records = 0
  var unknown = 0
  var samples = 0
  /// Where the last whole valid record ends.
  var validEnd: Int
  var skipped: [PlumbRawSkippedRegion] = []
  /// The earliest and the latest sample time so far (meaningful once `samples` > 0).
  var earliestSample: Int64 = 0
  var latestSample: Int64 = 0
  /// The next byte to examine: where a record should start, or, while `damage` is set, the next
  /// place a valid record could start after it.
  var offset: Int
  /// Where damage begins while the scan looks for a valid record after it; `nil` otherwise.
  var damage: Int?
  let path: String
  let corruption: PlumbRawCorruptionPolicy

  /// A scan of the records from `start` (the header's length).
  init(start: Int, path: String, corruption: PlumbRawCorruptionPolicy) {
    offset = start
    validEnd = start
    self.path = path
    self.corruption = corruption
  }

  /// Scans the records `window` holds (the file's bytes from offset `windowStart` on), calling
  /// `visit` with the kind and payload of every valid record of a known kind, in file order.
  /// `atEnd`: the window reaches the end of the file; otherwise the scan stops where a record
  /// could run past the window. Returns the offset of the first byte it still needs (the next
  /// window must start there or before).
  ///
  /// A record whose frame or CRC fails starts a search for the next valid record: found, the
  /// bytes between are damage (an error naming the offset and record under `.fail`, a skipped
  /// region under `.skip`); not found before the end of the file, they are a torn end and the
  /// recording stops at `validEnd`.
  mutating func advance(
    _ window: UnsafeRawBufferPointer, from windowStart: Int, atEnd: Bool,
    visit: (UInt8, UnsafeRawBufferPointer) -> Void
  ) throws(PlumbRawError) -> Int {
    while true {
      let local = offset - windowStart
      let available = window.count - local
      if !atEnd && available < PlumbRawFormat.maximumRecordLength { return offset }
      if let start = damage {
        // No record fits in what is left: the bytes from `start` are a torn end.
        guard available >= PlumbRawFormat.recordOverhead else { return offset }
        guard PlumbRawReader.startsRecord(window, at: local) else {
          offset += 1
          continue
        }
        damage = nil
        switch corruption {
        case .fail:
          throw PlumbRawError(
            .corruptRecord, path: path, offset: start, recordIndex: records,
            "the record's CRC-32C does not match (or its length runs past a record boundary), "
              + "and a valid record starts \(offset - start) bytes later at byte \(offset): the "
              + "file is damaged in the middle, not cut short. "
              + PlumbRawReader.skipDamagedAdvice)
        case .skip:
          skipped.append(
            PlumbRawSkippedRegion(offset: start, length: offset - start, recordIndex: records))
          continue
        }
      }
      guard available > 0 else { return offset }
      guard let frame = PlumbRawReader.frame(window, at: local) else {
        damage = offset
        offset += 1
        continue
      }
      try check(frame.kind, frame.payload, visit: visit)
      records += 1
      offset += frame.length
      validEnd = offset
    }
  }

  /// Checks one record with a valid frame and hands it to `visit` when its kind is known.
  private mutating func check(
    _ kind: UInt8, _ payload: UnsafeRawBufferPointer,
    visit: (UInt8, UnsafeRawBufferPointer) -> Void
  ) throws(PlumbRawError) {
    // Sample records (nearly all of a file) are checked without being decoded: a well-formed
    // sample payload is exactly one that `PlumbRawRecord.decode` accepts.
    if kind == PlumbRawRecordKind.sample.rawValue, PlumbRawSample.isWellFormed(payload) {
      // Readers subtract sample times (`forEachSISample`: from the first one selected), so
      // every two must be less than 2⁶³ ns apart.
      let time = Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 0, as: Int64.self))
      let earliest = samples == 0 ? time : min(earliestSample, time)
      let latest = samples == 0 ? time : max(latestSample, time)
      guard !latest.subtractingReportingOverflow(earliest).overflow else {
        throw PlumbRawError(
          .malformedRecord, path: path, offset: offset, recordIndex: records,
          "the sample's time, \(time) ns, is more than 292 years (2⁶³ ns) from another "
            + "sample's, \(time == latest ? earliest : latest) ns: no clock gives such times; "
            + "the record's CRC is valid, so this is not damage: the file was written by a "
            + "faulty writer")
      }
      earliestSample = earliest
      latestSample = latest
      samples += 1
      visit(kind, payload)
      return
    }
    switch PlumbRawRecord.decode(kind: kind, payload: payload) {
    case .record(let record):
      if case .sample = record { samples += 1 }
      visit(kind, payload)
    case .unknownKind:
      unknown += 1
    case .malformed(let message):
      throw PlumbRawError(
        .malformedRecord, path: path, offset: offset, recordIndex: records,
        "\(message); the record's CRC is valid, so this is not damage: the file was written "
          + "by a faulty or newer writer")
    }
  }

  /// For a file read with `.skip` that had damage in the middle: what was skipped, for a person.
  var skippedNote: String? {
    guard let first = skipped.first else { return nil }
    let count = skipped.count
    let bytes = skipped.reduce(0) { $0 + $1.length }
    let what =
      count == 1
      ? "skipped \(first.length) damaged bytes at byte \(first.offset) (before record \(first.recordIndex))"
      : "skipped \(count) damaged stretches, \(bytes) bytes in all, at "
        + skipped.prefix(5).map { "byte \($0.offset) (\($0.length) bytes)" }
        .joined(separator: ", ") + (count > 5 ? ", …" : "")
    return what + ": the records in them are lost; the \(samples) samples around them are "
      + "read, and the hole reads as a gap"
  }

  /// For a file of `fileLength` bytes that ends with a torn record: what was dropped, for a
  /// person. `nil` otherwise.
  func truncationNote(fileLength: Int) -> String? {
    let torn = fileLength - validEnd
    guard torn > 0 else { return nil }
    let what =
      "the last \(torn) byte\(torn == 1 ? " is" : "s are") not a whole record (a write "
      + "cut short, e.g. by a power loss); "
    guard records > 0 else {
      return what
        + "the file ends inside its first record: it holds no record after its header, which "
        + "ends at byte \(validEnd)"
    }
    return what + "the recording ends after record \(records - 1) at byte \(validEnd)"
  }
}
