import HardwareAbstraction
import Recording
import RecordingTestSupport
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

/// The replay path reads recordings through raw pointers (the cursor, the iterator, the
/// fixed-offset decoders): a file cut anywhere or damaged anywhere must give either a clear
/// error or the records that survive — never a read outside the file (the debug build these
/// tests run in checks every raw subscript).
@Suite struct DamagedRecordingTests {
  func records(_ count: Int) -> [PlumbRawRecord] {
    (0..<count).map { index -> PlumbRawRecord in
      let time = Timestamp(nanoseconds: 2_000_000_000 + Int64(index) * 10_000_000)
      let bytes = PlumbRawBurstBytes((0..<14).map { UInt8(truncatingIfNeeded: index &* 3 &+ $0) })
      switch index % 5 {
      case 3: return .burst(PlumbRawBurst(completedAt: time, bytes: bytes))
      case 4: return .timerWake(PlumbRawTimerWake(timestamp: time))
      default:
        return .sample(
          PlumbRawSample(
            timestamp: time, bytes: bytes, completionDelayNanoseconds: 400_000))
      }
    }
  }

  /// Walks `reader` with a cursor of every kind set the replay uses and checks it stops at the
  /// iterator's records.
  func expectCursorMatchesIterator(_ reader: PlumbRawReader, _ context: String) {
    for kinds: PlumbRawRecordKinds in [.all, [.sample, .unavailable], [.sample, .burst]] {
      var cursor = PlumbRawRecordCursor(reader, kinds: kinds)
      var walked: [PlumbRawRecord] = []
      while let kind = cursor.advance() {
        guard let record = cursor.record else {
          Issue.record("\(context): the cursor stopped at a \(kind) record it cannot decode")
          break
        }
        if case .sample(let sample) = record { #expect(cursor.sample == sample, "\(context)") }
        if case .burst(let burst) = record { #expect(cursor.burst == burst, "\(context)") }
        walked.append(record)
      }
      #expect(walked == Array(reader.records(kinds)), "\(context)")
    }
  }

  @Test("a file cut at any byte: the cursor walks exactly the whole records before the cut")
  func cutAnywhere() throws {
    let all = records(12)
    let full = try fileBytes(plainHeader(), all)
    let headerLength = try PlumbRawReader(bytes: full).headerLength
    for cut in headerLength...full.count {
      let reader = try PlumbRawReader(bytes: Array(full[0..<cut]))
      #expect(reader.validEnd <= cut)
      expectCursorMatchesIterator(reader, "cut at \(cut)")
      #expect(Array(reader.records()) == Array(all.prefix(reader.recordCount)), "cut at \(cut)")
    }
    // A cut inside the header is an error that says so, not a crash.
    for cut in [0, 1, 8, headerLength / 2, headerLength - 1] {
      #expect(throws: PlumbRawError.self, "cut at \(cut)") {
        _ = try PlumbRawReader(bytes: Array(full[0..<cut]))
      }
    }
  }

  @Test("seeded random damage: a clear error, or the surviving records and nothing else")
  func randomDamage() throws {
    let all = records(40)
    let full = try fileBytes(plainHeader(), all)
    let headerLength = try PlumbRawReader(bytes: full).headerLength
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    func next(_ bound: Int) -> Int {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return Int(state % UInt64(bound))
    }
    var refused = 0
    var salvaged = 0
    for trial in 0..<300 {
      var damaged = full
      for _ in 0...next(3) {
        let at = headerLength + next(full.count - headerLength)
        switch next(3) {
        case 0: damaged[at] ^= UInt8(1 << next(8))
        case 1: damaged[at] = UInt8(truncatingIfNeeded: next(256))
        default: damaged[at] = 0xFF  // a length byte at its largest
        }
      }
      if next(4) == 0 { damaged.removeLast(next(40)) }
      do {
        _ = try PlumbRawReader(bytes: damaged)
      } catch {
        #expect(error.kind == .corruptRecord || error.kind == .malformedRecord, "trial \(trial)")
        #expect(error.description.contains("byte"), "trial \(trial): \(error.description)")
        refused += 1
      }
      let reader: PlumbRawReader
      do {
        reader = try PlumbRawReader(bytes: damaged, corruption: .skip)
      } catch {
        #expect(error.kind == .malformedRecord, "trial \(trial): \(error.description)")
        continue
      }
      salvaged += 1
      expectCursorMatchesIterator(reader, "trial \(trial)")
      // What survives is records of the original file, in order.
      var remaining = all[...]
      for record in reader.records() {
        guard let index = remaining.firstIndex(of: record) else {
          Issue.record("trial \(trial): a record the file never had: \(record)")
          break
        }
        remaining = remaining[(index + 1)...]
      }
    }
    #expect(refused > 100 && salvaged > 100, "\(refused) refused, \(salvaged) salvaged")
  }
}
