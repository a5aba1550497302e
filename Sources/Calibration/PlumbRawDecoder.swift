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

  public func decode(_ bytes: [UInt8], path: String) throws(RecordingError) -> InertialRecording {
    let reader: PlumbRawReader
    do {
      reader = try PlumbRawReader(bytes: bytes, path: path, corruption: corruption)
    } catch {
      throw RecordingError(error)
    }
    var time: [Double] = []
    var channels = [[Double]](repeating: [], count: 6)
    var temperature: [Double] = []
    time.reserveCapacity(reader.sampleCount)
    temperature.reserveCapacity(reader.sampleCount)
    for index in 0..<6 { channels[index].reserveCapacity(reader.sampleCount) }
    let selection = reader.forEachSISample { sample in
      time.append(sample.relativeSeconds)
      let rate = sample.values.angularRateRadiansPerSecond
      let force = sample.values.specificForceMetersPerSecondSquared
      channels[0].append(rate.x)
      channels[1].append(rate.y)
      channels[2].append(rate.z)
      channels[3].append(force.x)
      channels[4].append(force.y)
      channels[5].append(force.z)
      temperature.append(sample.values.temperatureCelsius)
    }
    var recording = InertialRecording(
      source: path, timeSeconds: time, channels: channels, temperatureCelsius: temperature,
      locations: .sampleNumbers)
    recording.chip = RecordedChip(
      whoAmI: reader.header.chip.whoAmI, name: reader.header.chip.name)
    if let note = reader.truncationNote {
      recording.notes.append(
        "ends in the middle of a record: \(reader.sampleCount) samples read, up to the cut; \(note)"
      )
    }
    if let note = reader.skippedNote { recording.notes.append(note) }
    if let note = selection.outOfOrderNote { recording.notes.append(note) }
    return recording
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
