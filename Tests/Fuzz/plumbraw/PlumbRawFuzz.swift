import ByteFormats
import Calibration
import FuzzSupport
import HardwareAbstraction
import Recording

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The `.plumbraw` reader (`PlumbRawReader`, Sources/Recording) as `plumb export`, `plumb run
/// --replay` and `plumb-cal` reach it: any bytes, read refusing damage and skipping it
/// (`--skip-damaged`); then the samples in SI units (`forEachSISample`, `PlumbRawDecoder`) and
/// their timing (`SampleTiming.measure`).
///
/// Each input is read twice: as it is (damage, torn ends, resynchronisation), and with the
/// CRC-32C of its header and of every record recomputed, so that mutations get past the
/// checksums into the header's fields and the records' payloads.
///
/// Properties, besides no trap and no hang:
/// - a refusal names the file, and a byte inside it;
/// - the reader's counts agree with its records, and the cursor walks the same records;
/// - the SI samples are at strictly increasing times, the same through `PlumbRawDecoder`;
/// - decode(encode(x)) == x: the records written again by `PlumbRawWriter` (when it accepts the
///   header) read back as the same records, and writing those again gives the same bytes. (Not
///   encode(decode(bytes)) == bytes: the reader ignores what no field holds, such as a sample's
///   reserved flag bits and an unavailable record's unused detail bytes, so several files read
///   as the same records.)
/// - what `exportCSV` writes, the CSV decoder reads back as the same samples, bit for bit.
@main enum PlumbRawFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let path = "/srv/bench/unit3.plumbraw"

  /// Scratch files for the round trips: in PLUMB_FUZZ_SCRATCH (the runner makes one in
  /// /dev/shm and removes it), else in /dev/shm or /tmp, removed when the process exits.
  static let scratch: String = {
    let folder =
      getenv("PLUMB_FUZZ_SCRATCH").map { String(cString: $0) }
      ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")
    atexit {
      unlink(PlumbRawFuzz.scratch + ".plumbraw")
      unlink(PlumbRawFuzz.scratch + ".csv")
    }
    return "\(folder)/plumb-fuzz-\(getpid())"
  }()

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    check(bytes)
    let repaired = repairingChecksums(bytes)
    if repaired != bytes { check(repaired) }
  }

  static func check(_ bytes: [UInt8]) {
    for policy in [PlumbRawCorruptionPolicy.fail, .skip] {
      let reader: PlumbRawReader
      do {
        reader = try PlumbRawReader(bytes: bytes, path: path, corruption: policy)
      } catch {
        require(
          error.description.hasPrefix(path) && !error.message.isEmpty,
          "a refusal names the file and says what is wrong", error.description)
        require(
          (error.offset ?? 0) <= bytes.count, "a refusal's offset is in the file",
          error.description)
        continue
      }
      checkReader(reader, bytes: bytes, policy: policy)
    }
  }

  static func checkReader(
    _ reader: PlumbRawReader, bytes: [UInt8], policy: PlumbRawCorruptionPolicy
  ) {
    require(
      reader.headerLength <= reader.validEnd && reader.validEnd <= bytes.count
        && reader.tornBytes == bytes.count - reader.validEnd,
      "the header, the records and the torn end partition the file",
      "header \(reader.headerLength), valid end \(reader.validEnd), \(bytes.count) bytes")
    require(policy == .skip || reader.skippedRegions.isEmpty, "only .skip skips damage")
    let records = Array(reader.records())
    require(
      records.count == reader.recordCount - reader.unknownRecordCount,
      "the records iterated are the valid ones of known kinds",
      "\(records.count) of \(reader.recordCount), \(reader.unknownRecordCount) unknown")
    let samples = records.filter { if case .sample = $0 { true } else { false } }.count
    require(
      samples == reader.sampleCount, "the sample count counts the sample records",
      "\(samples) against \(reader.sampleCount)")
    var cursor = PlumbRawRecordCursor(reader)
    var walked: [PlumbRawRecord] = []
    while cursor.advance() != nil {
      guard let record = cursor.record else {
        propertyViolated("the cursor decodes every record it stops at", "")
      }
      walked.append(record)
    }
    require(walked == records, "the cursor walks the records the iterator gives")

    var times: [Int64] = []
    var seconds: [Double] = []
    let selection = reader.forEachSISample { sample in
      times.append(sample.relativeNanoseconds)
      seconds.append(sample.relativeSeconds)
    }
    require(
      zip(times, times.dropFirst()).allSatisfy { $0 < $1 } && times.first.map { $0 == 0 } ?? true,
      "SI samples start at 0 ns and their times increase strictly", "\(times.prefix(20))")
    require(selection.selected == times.count, "the selection counts the samples it gave")

    let recording: InertialRecording
    do {
      recording = try PlumbRawDecoder(corruption: policy).decode(bytes, path: path)
    } catch {
      propertyViolated("what the reader reads the decoder decodes", "\(error)")
    }
    require(
      sameBits(recording.timeSeconds, seconds), "the decoder's samples are the reader's",
      "\(recording.count) against \(times.count)")
    do {
      _ = try SampleTiming.measure(recording)
    } catch {
      require(
        error.description.hasPrefix(path), "a timing refusal names the file", error.description)
    }

    checkRewrite(reader, records: records)
    checkExport(reader, recording: recording)
  }

  /// The records written again read back the same; see the type's comment.
  static func checkRewrite(_ reader: PlumbRawReader, records: [PlumbRawRecord]) {
    guard let first = write(reader.header, records) else { return }
    let again: PlumbRawReader
    do {
      again = try PlumbRawReader(bytes: first, path: path)
    } catch {
      propertyViolated("what the writer writes reads", "\(error)")
    }
    require(again.tornBytes == 0, "what the writer writes is whole", "\(again.tornBytes)")
    let recordsAgain = Array(again.records())
    require(
      recordsAgain == records, "decode(encode(records)) == records",
      "\(records.count) records became \(recordsAgain.count)")
    guard let second = write(again.header, recordsAgain) else {
      propertyViolated("the writer writes what it wrote and read back", "")
    }
    require(first == second, "writing what was read back gives the same bytes")
  }

  /// The file `PlumbRawWriter` makes of `header` and `records`, or `nil` when it refuses the
  /// header (it is stricter than the reader: an ISO 8601 start time, a configuration the driver
  /// accepts). A record the reader accepted and the writer refuses is a violation.
  static func write(_ header: PlumbRawHeader, _ records: [PlumbRawRecord]) -> [UInt8]? {
    let file = scratch + ".plumbraw"
    do {
      let writer = try PlumbRawWriter(creating: file, header: header, overwrite: true)
      for record in records {
        do {
          try writer.append(record)
        } catch {
          propertyViolated("the writer writes every record the reader read", "\(error)")
        }
      }
      try writer.close()
    } catch {
      guard error.kind == .invalidHeader else {
        propertyViolated("the writer works in the scratch folder", "\(error)")
      }
      return nil
    }
    return readAll(file)
  }

  /// `exportCSV`'s file, read by the CSV decoder, gives the samples `PlumbRawDecoder` gave.
  static func checkExport(_ reader: PlumbRawReader, recording: InertialRecording) {
    let file = scratch + ".csv"
    do {
      try exportCSV(reader: reader, to: file)
    } catch {
      propertyViolated("the export writes in the scratch folder", "\(error)")
    }
    let csv: InertialRecording
    do {
      csv = try CSVRecordingDecoder().decode(readAll(file), path: file)
    } catch {
      propertyViolated("what plumb export writes, the CSV decoder reads", "\(error)")
    }
    let columns =
      [("t_s", csv.timeSeconds, recording.timeSeconds)]
      + zip(
        ["gyr_x", "gyr_y", "gyr_z", "acc_x", "acc_y", "acc_z"],
        zip(csv.channels, recording.channels)
      )
      .map { ($0, $1.0, $1.1) }
      + [("temp_c", csv.temperatureCelsius ?? [], recording.temperatureCelsius ?? [])]
    for (name, exported, decoded) in columns {
      require(
        exported.count == decoded.count, "the exported CSV holds the recording's samples",
        "\(name): \(exported.count) in the CSV, \(decoded.count) decoded")
      if let index = exported.indices.first(where: { !sameBits(exported[$0], decoded[$0]) }) {
        propertyViolated(
          "the exported CSV holds the recording's samples bit for bit",
          "\(name) of sample \(index): \(exported[index]) in the CSV, \(decoded[index]) decoded")
      }
    }
  }

  static func readAll(_ file: String) -> [UInt8] {
    guard let handle = fopen(file, "rb") else {
      propertyViolated("the scratch file reads", file)
    }
    defer { fclose(handle) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
      if count == 0 { break }
      bytes += chunk[0..<count]
    }
    return bytes
  }

  /// `bytes` with the header's CRC-32C and each record's recomputed where their lengths say
  /// they are.
  static func repairingChecksums(_ bytes: [UInt8]) -> [UInt8] {
    var repaired = bytes
    guard repaired.count >= 16, repaired.starts(with: PlumbRawFormat.magic) else { return bytes }
    let length =
      Int(repaired[12]) | Int(repaired[13]) << 8 | Int(repaired[14]) << 16
      | Int(repaired[15]) << 24
    guard length >= 20, length <= repaired.count else { return bytes }
    store(CRC32C.checksum(Array(repaired[0..<length - 4])), at: length - 4, in: &repaired)
    var offset = length
    while repaired.count - offset >= PlumbRawFormat.recordOverhead {
      let payload = Int(repaired[offset + 1])
      let end = offset + 2 + payload
      guard end + 4 <= repaired.count else { break }
      store(CRC32C.checksum(Array(repaired[offset..<end])), at: end, in: &repaired)
      offset = end + 4
    }
    return repaired
  }

  static func store(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
    for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  PlumbRawFuzz.test(fuzzInput(data, size))
  return 0
}
