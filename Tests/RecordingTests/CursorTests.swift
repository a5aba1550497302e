import HardwareAbstraction
import Recording
import Testing

/// `PlumbRawRecordCursor` is the replay's fast way through a recording: it must stop at exactly
/// the records the iterator returns, and its plain decodes must equal the full ones.
@Suite struct CursorTests {
  @Test("the cursor stops where the iterator does, and its sample and burst decodes agree")
  func cursorMatchesIterator() throws {
    let reader = try PlumbRawReader(bytes: try fileBytes(unusualHeader(), everyRecord()))
    for kinds: PlumbRawRecordKinds in [.all, [.sample, .unavailable], [.sample, .burst], .note] {
      var cursor = PlumbRawRecordCursor(reader, kinds: kinds)
      var seen: [PlumbRawRecord] = []
      while let kind = cursor.advance() {
        let record = try #require(cursor.record)
        #expect(record.kind == kind && cursor.kind == kind)
        switch record {
        case .sample(let sample):
          #expect(cursor.sample == sample)
          #expect(cursor.burst == nil)
        case .burst(let burst):
          #expect(cursor.burst == burst)
          #expect(cursor.sample == nil)
        default:
          #expect(cursor.sample == nil && cursor.burst == nil)
        }
        seen.append(record)
      }
      #expect(cursor.kind == nil && cursor.record == nil)
      #expect(seen == Array(reader.records(kinds)))
    }
  }

  @Test("the cursor steps over regions the reader skipped as damaged")
  func cursorSkipsDamage() throws {
    let records = (0..<20).map { index in
      PlumbRawRecord.sample(
        PlumbRawSample(
          timestamp: Timestamp(nanoseconds: 1_000_000_000 + Int64(index) * 10_000_000),
          bytes: PlumbRawBurstBytes((0..<14).map { UInt8(truncatingIfNeeded: index &* 5 &+ $0) }),
          completionDelayNanoseconds: index == 3 ? 5_000_000_000 : 400_000))
    }
    var damaged = try fileBytes(plainHeader(), records)
    let start = try PlumbRawReader(bytes: damaged).headerLength
    // A data byte of record 7 (record 3, with its 8-byte delay, is 4 bytes longer than 33).
    damaged[start + 7 * 33 + 4 + 12] ^= 0x40
    let reader = try PlumbRawReader(bytes: damaged, corruption: .skip)
    #expect(reader.skippedRegions.count == 1)
    var cursor = PlumbRawRecordCursor(reader, kinds: .sample)
    var samples: [PlumbRawSample] = []
    while cursor.advance() != nil { samples.append(try #require(cursor.sample)) }
    #expect(samples.map { PlumbRawRecord.sample($0) } == Array(reader.records()))
    #expect(samples.count == 19)
  }
}
