import ByteFormats
import HardwareAbstraction
import MPU6050
import Recording
import RecordingTestSupport
import Testing

/// A header with every field set to something other than its default.
func unusualHeader() -> PlumbRawHeader {
  PlumbRawHeader(
    startedAtUTC: "2031-12-31T23:59:60.125Z", firmwareVersion: "plumb 1.2.3-ß",
    boardName: "bench–7", address: .mpu6050Alternate,
    chip: PlumbRawChip(whoAmI: 0x98, name: "ICM-20689", family: .mpu6500),
    configuration: MPU6050Configuration(
      sampleRateHertz: 50, lowPassFilter: .bandwidth21Hz, gyroFullScale: .degreesPerSecond2000,
      accelerometerFullScale: .standardGravities16, dataReadyInterrupt: false),
    scale: PlumbRawScale(
      gyroRadiansPerSecondPerCount: 0.001_064_225_154_655_051_3,
      accelerometerMetersPerSecondSquaredPerCount: 0.004_788_403_320_312_5,
      temperatureCountsPerDegreeCelsius: 326.8, temperatureOffsetCelsius: 25),
    policy: MPU6050RecoveryPolicy(
      attemptsPerTransfer: 4, failedReadsBeforeReinitialization: 7, stuckSampleCount: nil,
      configurationCheckIntervalNanoseconds: 2_000_000_000, resetWaitNanoseconds: 120_000_000,
      settleMinimumNanoseconds: 40_000_000, backoffInitialNanoseconds: 50_000_000,
      backoffMaximumNanoseconds: 9_000_000_000, selfTestSamples: 33),
    selfTest: MPU6050SelfTestReport(
      outcome: .measured([
        .init(
          sensor: .gyro, axis: .x, trimCode: 17, factoryTrimCounts: 6148.25,
          responseCounts: 6344.5),
        .init(
          sensor: .accelerometer, axis: .z, trimCode: 9, factoryTrimCounts: 1800.125,
          responseCounts: -3.75),
      ])),
    mounting: PlumbRawMountingRotation(
      row0: SIMD3(0, -1, 0), row1: SIMD3(1, 0, 0), row2: SIMD3(0, 0, 1)),
    calibrationID: "sha256:0123abcd", metadataJSON: #"{"operator":"Zoë","runs":[1,2]}"#,
    recordingBeganAt: Timestamp(nanoseconds: 123_456_789_012),
    runningSince: Timestamp(nanoseconds: 124_000_000_000), hasBusTranscript: true)
}

/// The default configuration on an MPU-6050, as `plumb record` writes it.
func plainHeader() -> PlumbRawHeader {
  PlumbRawHeader(
    startedAtUTC: "2025-03-14T09:26:53Z", firmwareVersion: "plumb 0.1", boardName: "bench",
    chip: PlumbRawChip(whoAmI: 0x68, name: "MPU-6050", family: .mpu6050),
    scale: PlumbRawScale(
      MPU6050Scale(gyroFullScale: .degreesPerSecond500, accelerometerFullScale: .standardGravities4)
    ),
    recordingBeganAt: Timestamp(nanoseconds: 1_000_000_000),
    runningSince: Timestamp(nanoseconds: 1_300_000_000))
}

/// One record of every kind and variant.
func everyRecord() -> [PlumbRawRecord] {
  let t = Timestamp(nanoseconds: 2_000_000_000)
  let burst = PlumbRawBurstBytes((0..<14).map { UInt8($0 * 17 + 3) })
  return [
    .sample(PlumbRawSample(timestamp: t, bytes: burst)),
    .sample(
      PlumbRawSample(
        timestamp: t + .milliseconds(10), bytes: burst, source: .poll,
        flags: [.repeatedRead, .retried], completionDelayNanoseconds: 4_294_967_295)),
    .sample(
      PlumbRawSample(
        timestamp: t + .milliseconds(20), bytes: burst, source: .fifo,
        flags: [.timestampEstimated], completionDelayNanoseconds: 4_294_967_296)),
    .sample(
      PlumbRawSample(
        timestamp: t + .milliseconds(30), bytes: PlumbRawBurstBytes(), flags: [],
        completionDelayNanoseconds: -5)),
    .unavailable(
      PlumbRawUnavailable(
        timestamp: t, reason: .busError(I2CError(.notAcknowledged, operation: .readRegisters)))),
    .unavailable(
      PlumbRawUnavailable(
        timestamp: t, source: .poll,
        reason: .busError(
          I2CError(
            .timedOut, operation: .writeRegister, errno: .timedOut, address: .mpu6050,
            register: 0x6B)))),
    .unavailable(
      PlumbRawUnavailable(
        timestamp: t, reason: .recovering(.waitingToRetry(until: t + .seconds(1))))),
    .unavailable(PlumbRawUnavailable(timestamp: t, reason: .recovering(.resetting(until: t)))),
    .unavailable(
      PlumbRawUnavailable(
        timestamp: t, reason: .recovering(.settling(until: Timestamp(nanoseconds: -1))))),
    .unavailable(PlumbRawUnavailable(timestamp: t, reason: .stuckData)),
    .unavailable(PlumbRawUnavailable(timestamp: t, reason: .chipReset)),
    .unavailable(PlumbRawUnavailable(timestamp: t, source: .poll, reason: .noNewSample)),
    .unavailable(PlumbRawUnavailable(timestamp: t, source: .fifo, reason: .notRead)),
    .unavailable(PlumbRawUnavailable(timestamp: t, reason: .configurationRestored)),
    .missedSamples(PlumbRawMissedSamples(timestamp: t, count: 3)),
    .missedSamples(PlumbRawMissedSamples(timestamp: t, count: .max, cause: .fifoLoss)),
    .missedSamples(PlumbRawMissedSamples(timestamp: t, count: 0, cause: .other)),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .began(.busErrors))),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .began(.chipReset))),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .began(.stuckData))),
    .reinitialization(
      PlumbRawReinitialization(timestamp: t, event: .began(.configurationMismatch))),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .began(.startUp))),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .completed)),
    .reinitialization(PlumbRawReinitialization(timestamp: t, event: .attemptFailed)),
    .configurationChange(
      PlumbRawConfigurationChange(
        timestamp: t,
        configuration: MPU6050Configuration(
          sampleRateHertz: 200, lowPassFilter: .bandwidth94Hz,
          gyroFullScale: .degreesPerSecond1000, accelerometerFullScale: .standardGravities8),
        scale: PlumbRawScale(
          MPU6050Scale(
            gyroFullScale: .degreesPerSecond1000, accelerometerFullScale: .standardGravities8)))),
    .note(PlumbRawNote(timestamp: t, text: "board turned over ↻")),
    .note(PlumbRawNote(timestamp: t, category: .hostCommand, text: "rate 50")),
    .note(PlumbRawNote(timestamp: t, text: "")),
    .note(
      PlumbRawNote(
        timestamp: t, text: String(repeating: "x", count: PlumbRawNote.maximumTextBytes))),
    .timerWake(PlumbRawTimerWake(timestamp: t + .microseconds(9_500))),
    .burst(PlumbRawBurst(completedAt: t, bytes: burst)),
    .transfer(
      PlumbRawTransfer(
        index: 0, completedAt: t, direction: .read, register: 0x75,
        data: PlumbRawRegisterBytes([0x68]))),
    .transfer(
      PlumbRawTransfer(
        index: 41, completedAt: t, direction: .read, register: 0x74,
        data: PlumbRawRegisterBytes((0..<32).map { UInt8($0) }))),
    .transfer(
      PlumbRawTransfer(
        index: .max, completedAt: t, direction: .write, register: 0x6B,
        data: PlumbRawRegisterBytes(byte: 0x80))),
    .transferFailure(
      PlumbRawTransferFailure(
        index: 7, completedAt: t + .seconds(1), direction: .read, register: 0x3B, length: 14,
        error: I2CError(
          .busBusy, operation: .readRegisters, errno: .busy, address: .mpu6050, register: 0x3B,
          bus: "/dev/i2c-1"))),
    .transferFailure(
      PlumbRawTransferFailure(
        index: 8, completedAt: t, direction: .write, register: 0x19, length: 1,
        error: I2CError(.other, operation: .writeRegister, register: 0x19))),
  ]
}

/// Writes `records` after `header` into a new file and returns its bytes.
func fileBytes(_ header: PlumbRawHeader, _ records: [PlumbRawRecord]) throws -> [UInt8] {
  let path = temporaryPath("file.plumbraw")
  let writer = try PlumbRawWriter(creating: path, header: header)
  for record in records { try writer.append(record) }
  try writer.close()
  return readBytes(path)
}

/// A record frame built by hand: kind, length, payload, CRC-32C.
func frame(_ kind: UInt8, _ payload: [UInt8]) -> [UInt8] {
  let body = [kind, UInt8(payload.count)] + payload
  let crc = CRC32C.checksum(body)
  return body + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
}

func u16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
  UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}
func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
  (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
}
func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
  (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
}
func f64(_ bytes: [UInt8], _ offset: Int) -> Double { Double(bitPattern: u64(bytes, offset)) }

func expectError(
  _ kind: PlumbRawError.Kind, _ fragments: [String], offset: Int? = nil, record: Int? = nil,
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
  #expect(sourceLocation: sourceLocation) {
    try body()
  } throws: { error in
    guard let error = error as? PlumbRawError else { return false }
    let text = error.description
    return error.kind == kind && fragments.allSatisfy { text.contains($0) }
      && (offset == nil || error.offset == offset) && (record == nil || error.recordIndex == record)
  }
}

@Suite("The .plumbraw format")
struct FormatTests {
  @Test("the documented sample record, byte for byte (PLUMBRAW.md, Example)")
  func documentedSampleRecord() throws {
    let record = PlumbRawRecord.sample(
      PlumbRawSample(
        timestamp: Timestamp(nanoseconds: 1_234_567_890),
        bytes: PlumbRawBurstBytes((0..<14).map { UInt8($0) }), completionDelayNanoseconds: 250_000)
    )
    let bytes = try fileBytes(plainHeader(), [record])
    let headerLength = Int(u32(bytes, 12))
    // Computed by an independent CRC-32C (Python, bitwise) when the example was written.
    let expected: [UInt8] = [
      0x01, 0x1B, 0xD2, 0x02, 0x96, 0x49, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
      0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x00, 0x90, 0xD0, 0x03, 0x00, 0x8A,
      0xDB, 0x85, 0xA1,
    ]
    #expect(Array(bytes[headerLength...]) == expected)
  }

  @Test("the header's fixed fields sit at the documented offsets")
  func headerOffsets() throws {
    let bytes = try fileBytes(plainHeader(), [])
    #expect(Array(bytes[0..<8]) == Array("PLUMBRAW".utf8))
    #expect(u16(bytes, 8) == 1)
    #expect(u16(bytes, 10) == 0)
    let length = Int(u32(bytes, 12))
    #expect(length == bytes.count)
    #expect(u64(bytes, 16) == 1_000_000_000)
    #expect(u64(bytes, 24) == 1_300_000_000)
    #expect(bytes[32] == 0)  // no transcript
    #expect(bytes[33] == 0x68)  // I2C address
    #expect(bytes[34] == 0x68)  // WHO_AM_I of an MPU-6050 (RM §4.32)
    #expect(bytes[35] == 0)  // MPU-6050 family
    #expect(f64(bytes, 36) == 100)
    #expect(Array(bytes[44..<48]) == [3, 1, 1, 1])  // DLPF_CFG 3, ±500 °/s, ±4 g, data-ready
    // SMPLRT_DIV 9 (1 kHz / 10, RM §4.2), CONFIG DLPF_CFG 3, GYRO_CONFIG FS_SEL 1 in bits 4:3,
    // ACCEL_CONFIG AFS_SEL 1, no ACCEL_CONFIG2, INT_PIN_CFG 0, DATA_RDY_EN, CLKSEL 1 (X gyro PLL).
    #expect(Array(bytes[48..<56]) == [9, 0x03, 0x08, 0x08, 0, 0x00, 0x01, 0x01])
    #expect(f64(bytes, 56) == Double.pi / 180 / 65.5)  // PS §6.1: 65.5 LSB/(°/s)
    #expect(f64(bytes, 64) == 9.80665 / 8192)  // PS §6.2: 8192 LSB/g
    #expect(f64(bytes, 72) == 340)  // RM §4.18
    #expect(f64(bytes, 80) == 36.53)
    #expect(u64(bytes, 88) == 10_000_000)
    #expect([u32(bytes, 96), u32(bytes, 100), u32(bytes, 104), u32(bytes, 108)] == [3, 5, 10, 20])
    #expect(u64(bytes, 112) == 1_000_000_000)
    #expect(u64(bytes, 144) == 5_000_000_000)
    #expect((0..<9).map { f64(bytes, 152 + 8 * $0) } == [1, 0, 0, 0, 1, 0, 0, 0, 1])
    #expect(u16(bytes, 224) == 20)
    #expect(String(decoding: bytes[226..<246], as: UTF8.self) == "2025-03-14T09:26:53Z")
    #expect(u32(bytes, length - 4) == CRC32C.checksum(Array(bytes[0..<(length - 4)])))
  }

  @Test("every header field survives a round trip")
  func headerRoundTrip() throws {
    for header in [unusualHeader(), plainHeader()] {
      let reader = try PlumbRawReader(bytes: try fileBytes(header, []))
      #expect(reader.header == header)
      #expect(reader.header.version == PlumbRawVersion(major: 1, minor: 0))
      #expect(reader.recordCount == 0)
      #expect(reader.tornBytes == 0)
    }
    var notRun = plainHeader()
    notRun.selfTest = MPU6050SelfTestReport(outcome: .notAvailable(reason: "skipped by request"))
    let reader = try PlumbRawReader(bytes: try fileBytes(notRun, []))
    #expect(reader.header == notRun)
    #expect(!reader.header.selfTestWasRequested)
    #expect(unusualHeader().selfTestWasRequested)
    #expect(reader.header.chip.identity?.model.name == "MPU-6050")
  }

  @Test("every record kind and variant survives a round trip")
  func recordRoundTrip() throws {
    let records = everyRecord()
    let reader = try PlumbRawReader(bytes: try fileBytes(unusualHeader(), records))
    // The bus name is not kept.
    var expected = records
    for index in expected.indices {
      if case .transferFailure(var failure) = expected[index] {
        failure.error.bus = nil
        expected[index] = .transferFailure(failure)
      }
    }
    #expect(Array(reader.records()) == expected)
    #expect(reader.recordCount == records.count)
    #expect(reader.sampleCount == 4)
    #expect(reader.unknownRecordCount == 0)
    #expect(Array(reader.records([.timerWake, .burst])).map(\.kind) == [.timerWake, .burst])
    #expect(Set(records.map(\.kind)) == Set(PlumbRawRecordKind.allCases))
  }

  @Test("a file cut at any byte of its last two records reads to its last whole record")
  func truncatedAnywhere() throws {
    let records = everyRecord()
    let full = try fileBytes(plainHeader(), records)
    let reader = try PlumbRawReader(bytes: full)
    var boundaries: [Int] = []
    var iterator = reader.records().makeIterator()
    while iterator.next() != nil { boundaries.append(iterator.lastOffset) }
    boundaries.append(full.count)
    let secondLast = boundaries[boundaries.count - 3]
    for cut in secondLast..<full.count {
      let cutReader = try PlumbRawReader(bytes: Array(full[0..<cut]))
      let whole = boundaries.filter { $0 <= cut }.count - 1
      #expect(cutReader.recordCount == whole)
      #expect(cutReader.validEnd == boundaries[whole])
      #expect(cutReader.tornBytes == cut - boundaries[whole])
      #expect((cutReader.truncationNote != nil) == (cut != boundaries[whole]))
      #expect(Array(cutReader.records()) == Array(Array(reader.records()).prefix(whole)))
    }
    // Cut inside the header: no recording at all, and the message says so.
    let headerLength = reader.headerLength
    for cut in [1, 7, 8, 15, 16, 100, headerLength - 1] {
      expectError(.headerMalformed, ["ends inside the header"]) {
        _ = try PlumbRawReader(bytes: Array(full[0..<cut]))
      }
    }
    // Issue 21: cut inside its first record, the file was said to end "after record -1". It
    // ends inside its first record, with no record before the cut, and says so.
    for cut in [headerLength + 1, boundaries[1] - 1] {
      let cutReader = try PlumbRawReader(bytes: Array(full[0..<cut]), path: "first.plumbraw")
      let note = try #require(cutReader.truncationNote)
      #expect(!note.contains("-1"), "\(note)")
      #expect(note.contains("the file ends inside its first record"), "\(note)")
      #expect(note.contains("holds no record") && note.contains("byte \(headerLength)"), "\(note)")
      let warning = try #require(cutReader.cutShortWarning)
      #expect(warning.contains("first.plumbraw") && warning.contains("0 samples"), "\(warning)")
    }
    // Zeros after the last record (what a file system can leave after a crash) are torn bytes.
    let padded = try PlumbRawReader(bytes: full + [UInt8](repeating: 0, count: 4096))
    #expect(padded.recordCount == records.count && padded.tornBytes == 4096)
  }

  @Test("a flipped bit in a middle record is an error naming its offset, or skipped on request")
  func flippedBitInTheMiddle() throws {
    let records = (0..<20).map { index in
      PlumbRawRecord.sample(
        PlumbRawSample(
          timestamp: Timestamp(nanoseconds: 1_000_000_000 + Int64(index) * 10_000_000),
          bytes: PlumbRawBurstBytes((0..<14).map { UInt8(truncatingIfNeeded: index &* 7 &+ $0) })))
    }
    let full = try fileBytes(plainHeader(), records)
    let start = try PlumbRawReader(bytes: full).headerLength
    let target = start + 10 * 33
    for byte in [target + 1, target + 12, target + 31] {  // length, data, CRC
      var damaged = full
      damaged[byte] ^= 0x08
      expectError(
        .corruptRecord, ["record 10", "byte \(target)", "damaged in the middle", "skip"],
        offset: target, record: 10
      ) {
        _ = try PlumbRawReader(bytes: damaged)
      }
      let skipping = try PlumbRawReader(bytes: damaged, corruption: .skip)
      #expect(Array(skipping.records()) == records.enumerated().filter { $0.offset != 10 }.map(\.1))
      #expect(
        skipping.skippedRegions == [
          PlumbRawSkippedRegion(offset: target, length: 33, recordIndex: 10)
        ])
      #expect(skipping.skippedBytes == 33 && skipping.tornBytes == 0)
    }
    // The same damage in the last record cannot be told from a torn write: the file ends early.
    var lastDamaged = full
    lastDamaged[full.count - 10] ^= 0x01
    let reader = try PlumbRawReader(bytes: lastDamaged)
    #expect(reader.recordCount == 19 && reader.tornBytes == 33)
  }

  @Test("files that are not recordings, or not this version, are refused clearly")
  func malformedFiles() throws {
    let good = try fileBytes(plainHeader(), [])
    expectError(.notPlumbRaw, ["is empty"]) { _ = try PlumbRawReader(bytes: []) }
    var wrongMagic = good
    wrongMagic[7] = UInt8(ascii: "X")
    expectError(.notPlumbRaw, ["'PLUMBRAX", "magic 'PLUMBRAW'"], offset: 0) {
      _ = try PlumbRawReader(bytes: wrongMagic)
    }
    let csv = Array("t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n0,0,0,0,0,0,9.8\n".utf8)
    expectError(.notPlumbRaw, ["looks like a replay-layout CSV", "name it .csv"]) {
      _ = try PlumbRawReader(bytes: csv, path: "still.plumbraw")
    }
    var newer = good
    newer[8] = 2
    expectError(.unsupportedVersion, ["format version 2.0", "newer Plumb"], offset: 8) {
      _ = try PlumbRawReader(bytes: newer)
    }
    var damagedHeader = good
    damagedHeader[230] ^= 0x20  // inside the start time
    expectError(.headerCorrupt, ["CRC-32C", "header is damaged"], offset: good.count - 4) {
      _ = try PlumbRawReader(bytes: damagedHeader)
    }
    expectError(.unreadable, ["no such file"]) {
      _ = try PlumbRawReader(contentsOf: "/nonexistent/rec.plumbraw")
    }
  }

  @Test("records of an unknown kind are skipped; impossible records of a known kind are refused")
  func unknownAndMalformedRecords() throws {
    let sample = PlumbRawRecord.sample(
      PlumbRawSample(timestamp: Timestamp(nanoseconds: 5), bytes: PlumbRawBurstBytes()))
    let header = try fileBytes(plainHeader(), [])
    let one = try fileBytes(plainHeader(), [sample])
    let record = Array(one[header.count...])
    let future = try PlumbRawReader(bytes: header + record + frame(0x30, [1, 2, 3]) + record)
    #expect(future.recordCount == 3 && future.unknownRecordCount == 1)
    #expect(Array(future.records()) == [sample, sample])
    expectError(.malformedRecord, ["20-byte payload", "not damage"], record: 1) {
      _ = try PlumbRawReader(
        bytes: header + record + frame(0x01, [UInt8](repeating: 0, count: 20)))
    }
    expectError(.malformedRecord, ["source code 3"], record: 0) {
      var payload = [UInt8](repeating: 0, count: 27)
      payload[22] = 0x03
      _ = try PlumbRawReader(bytes: header + frame(0x01, payload))
    }
  }

  /// A writer never produces a record shorter than its kind needs, but a file can hold one
  /// with a valid CRC (a faulty writer, or a mutation resealed): its decoding reads every
  /// field through a bounds-checked cursor, so it is refused naming the record's offset, never
  /// a trap. Every record kind, cut after every byte of its payload.
  @Test("a record cut at any byte of its payload, with a valid CRC, is an error naming its offset")
  func recordCutAtEveryByte() throws {
    let header = try fileBytes(plainHeader(), [])
    let offset = header.count
    for record in everyRecord() {
      let file = try fileBytes(plainHeader(), [record])
      let kind = file[offset]
      let payload = Array(file[(offset + 2)..<(file.count - 4)])
      for cut in 0..<payload.count {
        let bytes = header + frame(kind, Array(payload[0..<cut]))
        do {
          // Two cuts leave a record another writer could have written: a sample's 8-byte delay
          // cut to 4 bytes (the 27-byte form), and a note's text cut short (still UTF-8).
          let read = Array(try PlumbRawReader(bytes: bytes).records())
          let shorterForm =
            (record.kind == .sample && cut == 27) || (record.kind == .note && cut >= 9)
          #expect(
            read.count == 1 && read.first?.kind == record.kind && shorterForm,
            "\(record.kind) cut to \(cut) bytes read as \(read)")
        } catch {
          #expect(
            error.kind == .malformedRecord && error.offset == offset && error.recordIndex == 0
              && error.description.contains("byte \(offset)"),
            "\(record.kind) cut to \(cut) bytes: \(error)")
        }
      }
    }
  }

  @Test("the writer refuses to overwrite, to write after closing, and impossible input")
  func writerRefusals() throws {
    let path = temporaryPath("taken.plumbraw")
    let first = try PlumbRawWriter(creating: path, header: plainHeader())
    try first.close()
    expectError(.writeFailed, ["already exists", "choose another name"]) {
      _ = try PlumbRawWriter(creating: path, header: plainHeader())
    }
    let second = try PlumbRawWriter(creating: path, header: plainHeader(), overwrite: true)
    try second.close()
    expectError(.writerClosed, ["closed"]) {
      try second.append(.timerWake(PlumbRawTimerWake(timestamp: .zero)))
    }
    var badTime = plainHeader()
    badTime.startedAtUTC = "14/03/2025 09:26"
    expectError(.invalidHeader, ["not an ISO 8601 UTC time", "2025-03-14T09:26:53Z"]) {
      _ = try PlumbRawWriter(creating: temporaryPath("t.plumbraw"), header: badTime)
    }
    var aliasing = plainHeader()
    aliasing.configuration.lowPassFilter = .bandwidth94Hz
    expectError(.invalidHeader, ["configuration", "lowPassFilter"]) {
      _ = try PlumbRawWriter(creating: temporaryPath("a.plumbraw"), header: aliasing)
    }
    expectError(.writeFailed, ["not a regular file"]) {
      _ = try PlumbRawWriter(creating: "/dev/null", header: plainHeader(), overwrite: true)
    }
    #expect(fileExists("/dev/null"))
    let writer = try PlumbRawWriter(creating: temporaryPath("n.plumbraw"), header: plainHeader())
    expectError(.invalidRecord, ["note"]) {
      try writer.append(
        .note(PlumbRawNote(timestamp: .zero, text: String(repeating: "é", count: 124))))
    }
    try writer.append(.timerWake(PlumbRawTimerWake(timestamp: .zero)))
    #expect(writer.recordsWritten == 1)
  }

  @Test("sync policies sync every n records or every interval of sample time")
  func syncPolicies() throws {
    func samples(_ count: Int, spacing: Int64) -> [PlumbRawRecord] {
      (0..<count).map {
        .sample(
          PlumbRawSample(
            timestamp: Timestamp(nanoseconds: Int64($0) * spacing), bytes: PlumbRawBurstBytes()))
      }
    }
    let byCount = try PlumbRawWriter(
      creating: temporaryPath("c.plumbraw"), header: plainHeader(),
      sync: .dataSync(every: .records(10)))
    for record in samples(25, spacing: 10_000_000) { try byCount.append(record) }
    #expect(byCount.syncs == 2)
    try byCount.close()
    let byTime = try PlumbRawWriter(
      creating: temporaryPath("s.plumbraw"), header: plainHeader(),
      sync: .startWriteback(every: .sampleTime(nanoseconds: 1_000_000_000)))
    for record in samples(351, spacing: 10_000_000) { try byTime.append(record) }
    #expect(byTime.syncs == 3)  // at 1 s, 2 s and 3 s of sample time
    try byTime.close()
    #expect(try PlumbRawReader(contentsOf: byTime.path).sampleCount == 351)
    expectError(.invalidHeader, ["at least 1"]) {
      _ = try PlumbRawWriter(
        creating: temporaryPath("z.plumbraw"), header: plainHeader(),
        sync: .dataSync(every: .records(0)))
    }
  }
}
