#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Samples an analysis reads in order, as many times as it needs (a pass each): a recording file
/// read from disk at every pass (`RecordingFile`), so that hours at 1 kHz fit a board's memory,
/// or a recording held in memory (`InertialRecording`).
public protocol SampleSource {
  /// The file the samples come from, for messages.
  var source: String { get }
  /// Hands every sample to `body`, in order. The first pass may throw what the file holds (a
  /// malformed line, a damaged record); later passes give the same samples or throw.
  func forEachSample(_ body: (RecordingSample) -> Void) throws(RecordingError)
  /// Where sample `index` (0-based) is in the source, for messages (`"line 12"`, `"sample 11"`);
  /// `line` is the sample's `RecordingSample.line`.
  func location(ofSample index: Int, line: Int) -> String
  /// What the decoder learnt besides the samples; `nil` before the first pass.
  var facts: RecordingFacts? { get }
}

extension InertialRecording: SampleSource {
  public func forEachSample(_ body: (RecordingSample) -> Void) throws(RecordingError) {
    for i in 0..<count { body(sample(i)) }
  }

  /// Sample `index` as a decoder hands it out (`line` 0).
  public func sample(_ index: Int) -> RecordingSample {
    RecordingSample(
      timeSeconds: timeSeconds[index],
      values: SIMD8(
        channels[0][index], channels[1][index], channels[2][index], channels[3][index],
        channels[4][index], channels[5][index], temperatureCelsius?[index] ?? 0, 0),
      line: 0)
  }

  public func location(ofSample index: Int, line: Int) -> String { location(ofSample: index) }

  public var facts: RecordingFacts? {
    var facts = RecordingFacts(hasTemperature: temperatureCelsius != nil, locatedByLine: false)
    facts.notes = notes
    facts.chip = chip
    return facts
  }
}

/// A recording file read from disk at every pass, in chunks (`RecordingBytes.chunkSize`): never
/// held whole, so its memory does not grow with its length. The first pass decodes and checks
/// it (the errors and notes `RecordingLoader.load` gives); every later pass must give the same
/// samples — the same count and the same times — or throws: the file was changed meanwhile. The
/// file stays open between passes and is read up to the length it had when opened.
public final class RecordingFile: SampleSource {
  public let source: String
  let decoder: any RecordingDecoder
  let descriptor: Int32
  let length: Int
  public private(set) var facts: RecordingFacts?
  /// The bytes read at a time (a window grows past it only for a longer line or header).
  public var chunkSize = RecordingBytes.chunkSize
  /// Samples and a checksum of their times, from the first pass.
  public private(set) var count = 0
  var timeChecksum: UInt64 = 0

  init(path: String, decoder: any RecordingDecoder, descriptor: Int32, length: Int) {
    source = path
    self.decoder = decoder
    self.descriptor = descriptor
    self.length = length
  }

  deinit { close(descriptor) }

  public func forEachSample(_ body: (RecordingSample) -> Void) throws(RecordingError) {
    var input = RecordingBytes(
      descriptor: descriptor, length: length, path: source, chunkSize: chunkSize)
    var count = 0
    var checksum: UInt64 = 0
    let facts = try decoder.read(&input, path: source) { sample in
      count += 1
      checksum = (checksum ^ sample.timeSeconds.bitPattern) &* 0x100_0000_01B3
      body(sample)
    }
    guard self.facts != nil else {
      self.facts = facts
      self.count = count
      timeChecksum = checksum
      return
    }
    guard count == self.count, checksum == timeChecksum else {
      throw RecordingError(
        .unreadable, path: source,
        "the file changed while it was read (\(count) samples now, \(self.count) before): read it again when nothing writes to it"
      )
    }
  }

  public func location(ofSample index: Int, line: Int) -> String {
    facts?.locatedByLine == true ? "line \(line)" : "sample \(index + 1)"
  }
}
