import Recording

/// Reads `.plumbraw` recordings (`plumb record`) for the bench analyses.
///
/// The samples are those `PlumbRawReader.forEachSISample` selects — every sample record except
/// the driver's repeated reads, times strictly increasing — converted with the scale the
/// recording stores (the header's, then each configuration change's), so they are bit-for-bit
/// what the driver delivered and what `plumb export --csv` writes. Times are seconds since the
/// first sample, from the integer nanosecond edge timestamps.
///
/// A file cut short (a power loss) reads to its last whole record. A damaged file, a file that
/// is not a recording, or one from a newer format version is an error naming the byte offset
/// and record — unless `corruption` is `.skip` (`--skip-damaged`): then damage in the middle is
/// skipped, said in the recording's notes, and the samples around it read with a gap between.
public struct PlumbRawDecoder: RecordingDecoder {
  public var corruption: PlumbRawCorruptionPolicy

  public init(corruption: PlumbRawCorruptionPolicy = .fail) {
    self.corruption = corruption
  }

  public var fileExtensions: [String] { [PlumbRawFormat.fileExtension] }

  /// The shortest sample record: a 27-byte payload and its frame.
  public var bytesPerSample: Int { 27 + PlumbRawFormat.recordOverhead }

  public func read(
    _ input: inout RecordingBytes, path: String, _ body: (RecordingSample) -> Void
  ) throws(RecordingError) -> RecordingFacts {
    var reader = PlumbRawStreamReader(path: path, corruption: corruption)
    var keep = 0
    while true {
      try input.refill(keeping: keep)
      do throws(PlumbRawError) {
        keep = try input.withWindow { (window, start, atEnd) throws(PlumbRawError) -> Int in
          try reader.read(window, from: start, atEnd: atEnd) { sample in
            let rate = sample.values.angularRateRadiansPerSecond
            let force = sample.values.specificForceMetersPerSecondSquared
            body(
              RecordingSample(
                timeSeconds: sample.relativeSeconds,
                values: SIMD8(
                  rate.x, rate.y, rate.z, force.x, force.y, force.z,
                  sample.values.temperatureCelsius, 0),
                line: 0))
          }
        }
      } catch {
        throw RecordingError(error)
      }
      if input.atEnd { break }
    }
    var facts = RecordingFacts(hasTemperature: true, locatedByLine: false)
    if let header = reader.header {
      facts.chip = RecordedChip(whoAmI: header.chip.whoAmI, name: header.chip.name)
    }
    if let note = reader.truncationNote {
      facts.notes.append(
        "ends in the middle of a record: \(reader.sampleCount) samples read, up to the cut; \(note)"
      )
    }
    if let note = reader.skippedNote { facts.notes.append(note) }
    if let note = reader.selection.outOfOrderNote { facts.notes.append(note) }
    return facts
  }
}

extension RecordingError {
  /// The calibration layer's view of a `.plumbraw` error: the same message, the record and byte
  /// as the location.
  init(_ error: PlumbRawError) {
    let kind: Kind =
      switch error.kind {
      case .unreadable: .unreadable
      case .notPlumbRaw, .unsupportedVersion: .unsupportedFormat
      default: .malformed
      }
    var place: [String] = []
    if let record = error.recordIndex { place.append("record \(record)") }
    if let offset = error.offset { place.append("byte \(offset)") }
    self.init(
      kind, path: error.path, location: place.isEmpty ? nil : place.joined(separator: " at "),
      error.message)
  }
}
