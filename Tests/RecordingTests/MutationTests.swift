import ByteFormats
import Calibration
import HardwareAbstraction
import MPU6050
import Recording
import RecordingTestSupport
import TestSupport
import Testing

/// `bytes` with the header's CRC and every whole record's CRC made to match again, so that a
/// mutation reaches the decoding of fields instead of stopping at the checksum.
func resealed(_ bytes: [UInt8]) -> [UInt8] {
  var bytes = bytes
  func seal(_ range: Range<Int>) {
    let crc = CRC32C.checksum(Array(bytes[range]))
    for index in 0..<4 {
      bytes[range.upperBound + index] = UInt8(truncatingIfNeeded: crc >> (8 * index))
    }
  }
  guard bytes.count >= 16 else { return bytes }
  let headerLength = Int(u32(bytes, 12))
  guard headerLength >= 4, headerLength <= bytes.count else { return bytes }
  seal(0..<(headerLength - 4))
  var offset = headerLength
  while bytes.count - offset >= PlumbRawFormat.recordOverhead {
    let length = Int(bytes[offset + 1]) + PlumbRawFormat.recordOverhead
    guard bytes.count - offset >= length else { break }
    seal(offset..<(offset + length - 4))
    offset += length
  }
  return bytes
}

/// The start and the payload length of every whole record after the header.
func recordFrames(_ bytes: [UInt8]) -> [(start: Int, payloadLength: Int)] {
  guard bytes.count >= 16 else { return [] }
  var offset = Int(u32(bytes, 12))
  var frames: [(start: Int, payloadLength: Int)] = []
  while offset >= 0, bytes.count - offset >= PlumbRawFormat.recordOverhead {
    let payloadLength = Int(bytes[offset + 1])
    guard bytes.count - offset >= payloadLength + PlumbRawFormat.recordOverhead else { break }
    frames.append((offset, payloadLength))
    offset += payloadLength + PlumbRawFormat.recordOverhead
  }
  return frames
}

/// Damaged recordings, made by seeded mutation of one holding every kind of record, most
/// with their CRCs made valid again: each reads or is refused with a message naming the file,
/// and whatever reads iterates, converts and decodes for the bench analyses without a trap.
@Suite("Mutated .plumbraw recordings")
struct MutationTests {
  @Test("3000 seeded mutants read or fail with a message, never trap")
  func mutantsReadOrFailClearly() throws {
    let samples = (0..<8).map { index in
      PlumbRawRecord.sample(
        PlumbRawSample(
          timestamp: Timestamp(nanoseconds: 3_000_000_000 + Int64(index) * 10_000_000),
          bytes: PlumbRawBurstBytes((0..<14).map { UInt8(truncatingIfNeeded: index &* 5 &+ $0) })))
    }
    let original = try fileBytes(plainHeader(), samples + everyRecord() + samples)
    var accepted = 0
    for seed in 0..<3000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, byteTokens: Mutator.binaryTokens)
      var mutant = mutator.mutate(original)
      // Half the mutants also get a hard value (an extreme integer, NaN, an infinity) written
      // over a field of some record or of the header (a quarter of those): the edit that
      // reaches each field's checks.
      // The header's fields (after magic, version and length, before the CRC) count as one
      // more record's payload.
      let header = mutant.count >= 20 ? [(start: 14, payloadLength: Int(u32(mutant, 12)) - 20)] : []
      let frames =
        recordFrames(mutant)
        + header.filter { $0.payloadLength > 0 && $0.payloadLength + 20 <= mutant.count }
      if mutator.below(2) == 0, !frames.isEmpty {
        let frame = frames[mutator.below(4) == 0 ? frames.count - 1 : mutator.below(frames.count)]
        let token = Mutator.binaryTokens[mutator.below(Mutator.binaryTokens.count)]
        let at = frame.start + 2 + mutator.below(max(1, frame.payloadLength))
        let end = min(at + token.count, frame.start + 2 + frame.payloadLength)
        if at < end { mutant.replaceSubrange(at..<end, with: token[0..<(end - at)]) }
      }
      let bytes = mutator.below(10) == 0 ? mutant : resealed(mutant)
      for policy in [PlumbRawCorruptionPolicy.fail, .skip] {
        let reader: PlumbRawReader
        do {
          reader = try PlumbRawReader(bytes: bytes, path: "run.plumbraw", corruption: policy)
        } catch {
          #expect("\(error)".hasPrefix("run.plumbraw"), "seed \(seed)")
          #expect(!error.message.isEmpty, "seed \(seed)")
          continue
        }
        accepted += 1
        _ = reader.truncationNote
        _ = Array(reader.records())
        var cursor = PlumbRawRecordCursor(reader)
        while cursor.advance() != nil { _ = cursor.record }
        reader.forEachSISample { _ in }
        guard policy == .fail else { continue }
        do {
          let recording = try PlumbRawDecoder().decode(bytes, path: "run.plumbraw")
          #expect(recording.channels.joined().allSatisfy { $0.isFinite }, "seed \(seed)")
          #expect((recording.temperatureCelsius ?? []).allSatisfy { $0.isFinite }, "seed \(seed)")
        } catch {
          #expect("\(error)".hasPrefix("run.plumbraw"), "seed \(seed)")
        }
      }
    }
    // Not vacuous: many mutants still read (a changed sample, a torn end).
    #expect(accepted > 500)
  }

  @Test("sample times too far apart for a difference in nanoseconds are refused, not a trap")
  func sampleTimesTooFarApart() throws {
    // forEachSISample (plumb export --csv, the bench analyses) subtracted the first time from
    // the last and trapped on the overflow.
    let times: [Int64] = [-5_000_000_000_000_000_000, 0, 5_000_000_000_000_000_000]
    let records = times.map {
      PlumbRawRecord.sample(
        PlumbRawSample(timestamp: Timestamp(nanoseconds: $0), bytes: PlumbRawBurstBytes()))
    }
    let bytes = try fileBytes(plainHeader(), records)
    let headerLength = Int(u32(bytes, 12))
    expectError(
      .malformedRecord, ["5000000000000000000 ns", "-5000000000000000000 ns", "292 years"],
      offset: headerLength + 2 * 33, record: 2
    ) {
      _ = try PlumbRawReader(bytes: bytes)
    }
    // Decoding for the bench analyses says the same.
    #expect {
      _ = try PlumbRawDecoder().decode(bytes, path: "run.plumbraw")
    } throws: { error in
      "\(error)".contains("run.plumbraw, record 2 at byte \(headerLength + 2 * 33)")
        && "\(error)".contains("292 years")
    }
  }

  @Test("a scale that turns a count into an infinity is refused, not converted")
  func scaleOverflowingACount() throws {
    // A finite factor of 1e306 rad/s per count made every sample's rate ±inf: decoded
    // silently for the bench analyses, and written as "inf" by export --csv.
    let configuration = MPU6050Configuration(
      sampleRateHertz: 100, lowPassFilter: .bandwidth44Hz, gyroFullScale: .degreesPerSecond500,
      accelerometerFullScale: .standardGravities4)
    var scale = PlumbRawScale(
      MPU6050Scale(gyroFullScale: .degreesPerSecond500, accelerometerFullScale: .standardGravities4)
    )
    scale.gyroRadiansPerSecondPerCount = 1e306
    let records: [PlumbRawRecord] = [
      .configurationChange(
        PlumbRawConfigurationChange(
          timestamp: Timestamp(nanoseconds: 1_000), configuration: configuration, scale: scale)),
      .sample(
        PlumbRawSample(
          timestamp: Timestamp(nanoseconds: 2_000),
          bytes: PlumbRawBurstBytes([UInt8](repeating: 0x70, count: 14)))),
    ]
    let bytes = try fileBytes(plainHeader(), records)
    expectError(.malformedRecord, ["configuration change", "impossible"], record: 0) {
      _ = try PlumbRawReader(bytes: bytes)
    }
  }
}
