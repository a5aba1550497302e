import ByteFormats
import HardwareAbstraction
import MPU6050

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One sample of a recording in SI units, as analyses and the CSV export see it.
public struct PlumbRawSISample: Hashable, Sendable {
  /// The sample's `CLOCK_MONOTONIC` time.
  public var timestamp: Timestamp
  /// Nanoseconds since the first sample selected.
  public var relativeNanoseconds: Int64
  public var source: PlumbRawSampleSource
  public var values: PlumbRawSIValues

  /// Seconds since the first sample: `relativeNanoseconds / 1e9`, correctly rounded, which is
  /// exactly the value the CSV's `t_s` text parses back to.
  public var relativeSeconds: Double { seconds(nanoseconds: relativeNanoseconds) }
}

/// What `forEachSISample` selected.
public struct PlumbRawSampleSelection: Hashable, Sendable {
  /// Samples handed to the caller.
  public var selected = 0
  /// Sample records the driver flagged as repeated reads (a duplicated edge, stuck data).
  public var skippedRepeats = 0
  /// Sample records whose time was not after the previous selected one.
  public var skippedOutOfOrder = 0

  public init(selected: Int = 0, skippedRepeats: Int = 0, skippedOutOfOrder: Int = 0) {
    self.selected = selected
    self.skippedRepeats = skippedRepeats
    self.skippedOutOfOrder = skippedOutOfOrder
  }

  /// For a recording some of whose samples were left out for their times, what a person should
  /// know (a live loop's samples always increase in time: these are damage); `nil` otherwise.
  public var outOfOrderNote: String? {
    guard skippedOutOfOrder > 0 else { return nil }
    return
      "\(skippedOutOfOrder) sample\(skippedOutOfOrder == 1 ? " was" : "s were") left out of order "
      + "(dated no later than the sample before; a live recording's times always increase, so a "
      + "time in the file is damaged: a sample dated far ahead leaves every one after it out)"
  }
}

extension PlumbRawReader {
  /// The samples a person analyses: every sample record (interrupt, poll or FIFO) except the
  /// driver's repeated reads, in file order, converted with the scale in force (the header's,
  /// then each configuration change's). A sample whose time is not strictly after the previous
  /// selected one is skipped and counted, so times always increase. Nothing allocates per sample.
  @discardableResult
  public func forEachSISample(_ body: (PlumbRawSISample) -> Void) -> PlumbRawSampleSelection {
    var selector = PlumbRawSISelector(scale: header.scale)
    var iterator = records([.sample, .configurationChange]).makeIterator()
    while let record = iterator.next() {
      switch record {
      case .configurationChange(let change): selector.scale = change.scale
      case .sample(let sample): if let selected = selector.take(sample) { body(selected) }
      default: continue
      }
    }
    return selector.selection
  }
}

/// The choice `forEachSISample` makes, one record at a time: the scale in force, the samples
/// left out (repeated reads, times not after the previous selected sample), times relative to
/// the first selected sample.
struct PlumbRawSISelector: Sendable {
  var selection = PlumbRawSampleSelection()
  /// The scale in force: the header's, then each configuration change's.
  var scale: PlumbRawScale
  var first: Timestamp?
  var previous: Timestamp?

  init(scale: PlumbRawScale) { self.scale = scale }

  /// `sample` in SI units when it is selected; `nil` (and counted) when it is left out.
  mutating func take(_ sample: PlumbRawSample) -> PlumbRawSISample? {
    if sample.flags.contains(.repeatedRead) {
      selection.skippedRepeats += 1
      return nil
    }
    if let previous, sample.timestamp <= previous {
      selection.skippedOutOfOrder += 1
      return nil
    }
    previous = sample.timestamp
    let origin = first ?? sample.timestamp
    first = origin
    selection.selected += 1
    return PlumbRawSISample(
      timestamp: sample.timestamp, relativeNanoseconds: sample.timestamp.nanoseconds(since: origin),
      source: sample.source, values: scale.convert(sample.raw))
  }
}

/// The header line of the replay-layout CSV.
public let plumbRawCSVHeader = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c"

/// Writes `reader`'s samples to `path` as the CSV layout `plumb replay` and `plumb-cal` read:
///
///     t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c
///
/// - `t_s`: seconds since the **first exported sample** (relative, so two exports of the same
///   motion line up), from the integer nanosecond timestamps with exactly nine decimals — exact,
///   no rounding;
/// - `gyr_*` rad/s, `acc_*` m/s², `temp_c` °C: Swift's shortest text that parses back to the
///   same `Double` (`0.0023319283869236637`, `9.80665`, `1e-05`), so a CSV replay sees
///   bit-for-bit the values the driver delivered; deterministic on every platform;
/// - rows: `PlumbRawReader.forEachSISample`'s selection (repeated reads skipped); `\n` line
///   ends; no comment lines.
///
/// Writes a temporary file in the same folder, syncs it, and renames it over `path`: a reader of
/// `path` sees the old file or the whole new one, never part of it (`AtomicFile`: a symbolic
/// link is kept and its file replaced; a pipe or a device is written directly). Returns what
/// was selected.
@discardableResult
public func exportCSV(reader: PlumbRawReader, to path: String) throws(PlumbRawError)
  -> PlumbRawSampleSelection
{
  let file: AtomicFile
  do {
    file = try AtomicFile(path: path)
  } catch {
    throw PlumbRawError(
      .writeFailed, path: path, errno: error.errno,
      "cannot create the temporary file \(error.path): \(POSIXFile.message(error.errno))")
  }
  var chunk: [UInt8] = []
  chunk.reserveCapacity(1 << 16)
  var failure: AtomicFile.Failure?
  func flush() {
    guard failure == nil, !chunk.isEmpty else { return }
    chunk.withUnsafeBytes { raw in
      do throws(AtomicFile.Failure) {
        try file.write(raw)
      } catch {
        failure = error
      }
    }
    chunk.removeAll(keepingCapacity: true)
  }
  chunk.append(contentsOf: plumbRawCSVHeader.utf8)
  chunk.append(0x0A)
  let selection = reader.forEachSISample { sample in
    guard failure == nil else { return }
    appendCSVRow(sample, to: &chunk)
    if chunk.count >= (1 << 16) - 512 { flush() }
  }
  flush()
  if let failure {
    throw PlumbRawError(
      .writeFailed, path: path, errno: failure.errno,
      "writing the CSV failed: \(POSIXFile.message(failure.errno))"
        + (file.isStream ? "" : "; \(path) was not changed"))
  }
  do {
    try file.commit()
  } catch {
    throw PlumbRawError(
      .writeFailed, path: path, errno: error.errno,
      "cannot move the CSV into place: \(POSIXFile.message(error.errno)); \(path) was not changed")
  }
  return selection
}

/// `reader`'s samples as the CSV text `exportCSV` writes, in memory (for a command that reads
/// the CSV layout itself: no temporary file, which a full `/tmp` would fail). Returns the text
/// and what was selected.
public func exportCSVText(reader: PlumbRawReader) -> (
  text: String, selection: PlumbRawSampleSelection
) {
  var bytes: [UInt8] = []
  bytes.append(contentsOf: plumbRawCSVHeader.utf8)
  bytes.append(0x0A)
  let selection = reader.forEachSISample { appendCSVRow($0, to: &bytes) }
  return (String(decoding: bytes, as: UTF8.self), selection)
}

/// One CSV row for `sample`, with its line end.
func appendCSVRow(_ sample: PlumbRawSISample, to out: inout [UInt8]) {
  appendSeconds(sample.relativeNanoseconds, to: &out)
  let v = sample.values
  for value in [
    v.angularRateRadiansPerSecond.x, v.angularRateRadiansPerSecond.y,
    v.angularRateRadiansPerSecond.z, v.specificForceMetersPerSecondSquared.x,
    v.specificForceMetersPerSecondSquared.y, v.specificForceMetersPerSecondSquared.z,
    v.temperatureCelsius,
  ] {
    out.append(UInt8(ascii: ","))
    out.append(contentsOf: value.description.utf8)
  }
  out.append(0x0A)
}

/// `nanoseconds / 10⁹`, correctly rounded. Below 2⁵³ ns (104 days) both are exact doubles and
/// the division rounds once; beyond, `Double(nanoseconds)` would round first (a sample 9·10¹⁸ +
/// 513 ns after the first came out 2 µs late), so the quotient is read from its exact decimal
/// text, the CSV's `t_s`, instead.
func seconds(nanoseconds: Int64) -> Double {
  if nanoseconds.magnitude < 1 << 53 { return Double(nanoseconds) / 1e9 }
  var text: [UInt8] = []
  appendSeconds(nanoseconds, to: &text)
  // Digits, a point and nine decimals: always a number.
  return Double(String(decoding: text, as: UTF8.self))!
}

/// `12.345678901`: nanoseconds as seconds with nine decimals, exactly.
func appendSeconds(_ nanoseconds: Int64, to out: inout [UInt8]) {
  if nanoseconds < 0 { out.append(UInt8(ascii: "-")) }
  let magnitude = nanoseconds.magnitude
  out.append(contentsOf: String(magnitude / 1_000_000_000).utf8)
  out.append(UInt8(ascii: "."))
  var fraction = magnitude % 1_000_000_000
  var digits: (UInt64, UInt64) = (0, 0)
  withUnsafeMutableBytes(of: &digits) { scratch in
    for index in stride(from: 8, through: 0, by: -1) {
      scratch[index] = UInt8(ascii: "0") + UInt8(fraction % 10)
      fraction /= 10
    }
    out.append(contentsOf: scratch[0..<9])
  }
}
