import Geometry
import Telemetry
import Testing

/// The stream of one format cut into units: one frame (binary, text) or one packet (MAVLink),
/// each with the sequence number a decoder reports for it.
private func units(_ format: TelemetryFormat, frames: Int, seed: UInt64) -> [(
  bytes: [UInt8], sequence: UInt32
)] {
  var random = SplitMix64(seed: seed)
  var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
  var result: [(bytes: [UInt8], sequence: UInt32)] = []
  for k in 0..<frames {
    let bytes = encoder.encode(randomFrame(&random, sequence: UInt32(k)))
    guard format == .mavlink else {
      result.append((bytes, UInt32(k)))
      continue
    }
    var offset = 0
    while offset < bytes.count {
      let length = 12 + Int(bytes[offset + 1])
      result.append((Array(bytes[offset..<offset + length]), UInt32(bytes[offset + 4])))
      offset += length
    }
  }
  return result
}

/// The sequence number of whatever a decoder reports, for the three formats.
private func sequence(of message: DecodedMessage) -> UInt32? {
  switch message {
  case .binary(let frame), .binaryIMU(let frame): frame.sequence
  case .text(let line): line.sequence
  case .mavlink(let packet): UInt32(packet.sequence)
  case .reply: nil
  }
}

private enum Damage: CaseIterable {
  case bitFlip, dropByte, insertInside, truncate, garbageBetween
}

/// A stream with isolated damage (every third unit), and what a decoder must report for it.
private struct DamagedStream {
  var bytes: [UInt8] = []
  var intactSequences: [UInt32] = []
  var events = 0
  var lostUnits = 0
  var skipped = 0
  var byDamage: [Damage: Int] = [:]
}

private func damage(
  _ units: [(bytes: [UInt8], sequence: UInt32)], format: TelemetryFormat, seed: UInt64
) -> DamagedStream {
  var random = SplitMix64(seed: seed)
  var result = DamagedStream()
  // In binary, a 0x00 is always framing (accepted), never skipped.
  func skippedCount(_ bytes: [UInt8]) -> Int {
    format.isBinary ? bytes.filter { $0 != 0 }.count : bytes.count
  }
  func garbage(_ count: Int) -> [UInt8] {
    var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    if bytes[0] == 0 { bytes[0] = 0x5A }  // at least one byte that is surely skipped
    return bytes
  }
  func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
  for (index, unit) in units.enumerated() {
    var bytes = unit.bytes
    let n = bytes.count
    guard index % 3 == 2, index + 1 < units.count else {
      result.bytes += bytes
      result.intactSequences.append(unit.sequence)
      continue
    }
    let kind = Damage.allCases[(index / 3) % Damage.allCases.count]
    result.byDamage[kind, default: 0] += 1
    result.events += 1
    switch kind {
    case .bitFlip:
      while true {
        let position = below(n)
        let mask = UInt8(1) << UInt8(below(8))
        let flipped = bytes[position] ^ mask
        // Binary: a flip to 0x00 splits the frame (tested apart). Text: the checksum's hex
        // letters are accepted in either case, so a case flip there is no damage.
        if format.isBinary && flipped == 0 { continue }
        if format == .text && position >= n - 4 && position < n - 2 && mask == 0x20 { continue }
        bytes[position] = flipped
        break
      }
    case .dropByte:
      // Binary: losing a delimiter costs nothing (each frame has two); text: `\r` is optional.
      let position =
        format.isBinary ? 1 + below(n - 2) : format == .text ? below(n - 2) : below(n)
      bytes.remove(at: position)
    case .insertInside:
      let inserted =
        format.isBinary ? garbage(1 + below(20)).map { $0 | 1 } : garbage(1 + below(20))
      let position = format.isBinary ? 2 + below(n - 3) : 1 + below(n - 1)
      bytes.insert(contentsOf: inserted, at: position)
    case .truncate:
      let keep = format.isBinary ? 2 + below(n - 3) : 1 + below(n - 1)
      bytes.removeSubrange(keep...)
    case .garbageBetween:
      let inserted = garbage(1 + below(40))
      result.bytes += bytes + inserted
      result.intactSequences.append(unit.sequence)
      result.skipped += skippedCount(inserted)
      continue
    }
    result.bytes += bytes
    result.lostUnits += 1
    result.skipped += skippedCount(bytes)
  }
  return result
}

@Suite struct StreamDecoderTests {
  @Test(arguments: TelemetryFormat.allCases)
  func recoversEveryIntactFrameAndCountsEachDamageExactly(format: TelemetryFormat) {
    for seed in UInt64(1)...8 {
      let clean = units(format, frames: format == .mavlink ? 120 : 300, seed: seed)
      let damaged = damage(clean, format: format, seed: seed &* 7919)
      var decoder = StreamDecoder(format: format)
      var sequences: [UInt32] = []
      decoder.decode(damaged.bytes) { message in
        if let s = sequence(of: message) { sequences.append(s) }
      }
      decoder.finish()
      let s = decoder.statistics
      #expect(sequences == damaged.intactSequences, "\(format) seed \(seed): intact frames")
      #expect(s.frames == UInt64(damaged.intactSequences.count))
      #expect(s.framesLost == UInt64(damaged.lostUnits), "\(format) seed \(seed): lost")
      #expect(s.sequenceGaps == UInt64(damaged.lostUnits))
      #expect(s.resyncs == UInt64(damaged.events), "\(format) seed \(seed): one resync per damage")
      #expect(s.bytesSkipped == UInt64(damaged.skipped), "\(format) seed \(seed): bytes skipped")
      #expect(s.bytesReceived == UInt64(damaged.bytes.count))
      #expect(s.bytesReceived == s.bytesAccepted + s.bytesSkipped)
      if format.isBinary {
        // Every damaged stretch holds non-zero bytes between delimiters: a rejected candidate.
        #expect(s.crcErrors + s.malformed >= UInt64(damaged.events))
      }
      #expect(s.duplicates == 0 && s.outOfOrder == 0)
      #expect(damaged.byDamage.count == Damage.allCases.count, "every kind of damage was tried")
    }
  }

  @Test func binaryDamageCountsAreExact() {
    // Binary frames are one COBS block each, so each damaged frame is one rejected candidate.
    let clean = units(.binary, frames: 300, seed: 42)
    let damaged = damage(clean, format: .binary, seed: 4242)
    var decoder = StreamDecoder(format: .binary)
    decoder.decode(damaged.bytes) { _ in }
    let s = decoder.statistics
    let blocks =
      damaged.byDamage[.bitFlip, default: 0] + damaged.byDamage[.dropByte, default: 0]
      + damaged.byDamage[.truncate, default: 0]
    // Inserted garbage may contain zeros and split into several candidates: at least one each.
    #expect(
      s.crcErrors + s.malformed >= UInt64(blocks + damaged.byDamage[.insertInside, default: 0]))
    #expect(s.crcErrors >= 1 && s.malformed >= 1)
  }

  @Test(arguments: TelemetryFormat.allCases)
  func framesSplitAtEveryByteBoundaryDecodeTheSame(format: TelemetryFormat) {
    let clean = units(format, frames: 4, seed: 5).flatMap(\.bytes)
    var whole = StreamDecoder(format: format)
    var expected: [DecodedMessage] = []
    whole.decode(clean) { expected.append($0) }
    // MAVLink: 4 ATTITUDE_QUATERNION, 2 HIGHRES_IMU, and with the first frame HEARTBEAT,
    // ATTITUDE and SYS_STATUS.
    #expect(expected.count == (format == .mavlink ? 4 + 2 + 3 : 4))
    for split in 0...clean.count {
      var decoder = StreamDecoder(format: format)
      var got: [DecodedMessage] = []
      decoder.decode(Array(clean[..<split])) { got.append($0) }
      decoder.decode(Array(clean[split...])) { got.append($0) }
      // Described, because binary frames decode with NaN rates (not carried), and NaN ≠ NaN.
      #expect("\(got)" == "\(expected)", "split at \(split)")
      #expect(decoder.statistics.bytesSkipped == 0 && decoder.statistics.resyncs == 0)
    }
    // And in chunks of every size from 1 byte up.
    for chunk in 1...17 {
      var decoder = StreamDecoder(format: format)
      var got: [DecodedMessage] = []
      var offset = 0
      while offset < clean.count {
        let end = min(clean.count, offset + chunk)
        decoder.decode(Array(clean[offset..<end])) { got.append($0) }
        offset = end
      }
      #expect("\(got)" == "\(expected)", "chunks of \(chunk)")
    }
  }

  @Test(arguments: TelemetryFormat.allCases)
  func aReaderJoiningMidStreamResynchronises(format: TelemetryFormat) {
    let all = units(format, frames: 6, seed: 77)
    let stream = all.flatMap(\.bytes)
    let first = all[0].bytes.count
    if format.isBinary {
      // Only the leading delimiter missed: the first frame still ends at its trailing one.
      var decoder = StreamDecoder(format: format)
      var count = 0
      decoder.decode(Array(stream[1...])) { _ in count += 1 }
      #expect(count == all.count)
    }
    for start in (format.isBinary ? 2 : 1)..<first {
      var decoder = StreamDecoder(format: format)
      var sequences: [UInt32] = []
      decoder.decode(Array(stream[start...])) {
        if let s = sequence(of: $0) { sequences.append(s) }
      }
      #expect(sequences == all.dropFirst().map(\.sequence), "joined at byte \(start)")
      #expect(decoder.statistics.resyncs <= 1)
    }
  }

  @Test(arguments: TelemetryFormat.allCases)
  func automaticDetectionFindsTheFormatBehindGarbage(format: TelemetryFormat) {
    var random = SplitMix64(seed: 1234)
    let garbage = (0..<300).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let all = units(format, frames: 50, seed: 3)
    var decoder = StreamDecoder()
    var sequences: [UInt32] = []
    decoder.decode(garbage + all.flatMap(\.bytes)) {
      if let s = sequence(of: $0) { sequences.append(s) }
    }
    #expect(decoder.format == StreamDecoder.framing(format))
    #expect(sequences == all.map(\.sequence))
    #expect(decoder.statistics.formatDetections == 1)
    #expect(decoder.statistics.framesLost == 0)
  }

  @Test func automaticDetectionFollowsAFormatChange() {
    var binary = TelemetryEncoder(format: .binary)
    var text = TelemetryEncoder(format: .text)
    var stream: [UInt8] = []
    for k in 0..<50 { stream += binary.encode(TelemetryFrame(sequence: UInt32(k))) }
    for k in 50..<150 { stream += text.encode(TelemetryFrame(sequence: UInt32(k))) }
    var decoder = StreamDecoder()
    var formats: [String] = []
    decoder.decode(stream) { message in
      switch message {
      case .binary: formats.append("b")
      case .text: formats.append("t")
      default: break
      }
    }
    #expect(decoder.format == .text)
    #expect(formats.prefix(50).allSatisfy { $0 == "b" } && formats.count > 100)
    #expect(decoder.statistics.formatDetections == 2)
  }

  /// What the firmware sends when the host asks for another format: frames in the old format,
  /// the `OK format …` reply already in the new one, then frames in the new one (the sequence
  /// carries on; a new MAVLink encoder starts its packet sequence again).
  @Test(arguments: TelemetryFormat.allCases)
  func aFormatSwitchLosesNoFrameAndMissesNoReply(from old: TelemetryFormat) {
    for new in TelemetryFormat.allCases where new != old {
      var before = TelemetryEncoder(format: old)
      var after = TelemetryEncoder(format: new)
      var stream: [UInt8] = []
      for k in 0..<30 { stream += before.encode(TelemetryFrame(sequence: UInt32(k))) }
      stream += after.encode(HostReply.ok(FixedText("format \(new.rawValue)")))
      for k in 30..<60 { stream += after.encode(TelemetryFrame(sequence: UInt32(k))) }
      // And back again, so a format is met a second time.
      for k in 60..<90 { stream += before.encode(TelemetryFrame(sequence: UInt32(k))) }
      var decoder = StreamDecoder()
      var replies: [String] = []
      var telemetry = 0
      decoder.decode(stream) { message in
        if let reply = message.hostReply { replies.append(reply.description) }
        if message.attitudeSample != nil { telemetry += 1 }
      }
      decoder.finish()
      let s = decoder.statistics
      let name = "\(old) → \(new)"
      #expect(replies == ["OK format \(new.rawValue)"], "\(name)")
      #expect(telemetry == 90 && s.telemetryFrames == 90, "\(name)")
      #expect(s.bytesSkipped == 0 && s.bytesAccepted == UInt64(stream.count), "\(name)")
      #expect(s.resyncs == 0 && s.crcErrors == 0 && s.malformed == 0, "\(name)")
      #expect(s.framesLost == 0 && s.outOfOrder == 0 && s.duplicates == 0, "\(name)")
      // The two binary formats are one framing: switching between them is no new detection.
      let detections = old.isBinary && new.isBinary ? 1 : 3
      #expect(s.formatDetections == detections, "\(name)")
    }
  }

  /// Found by fuzzing (fuzz-monitor-auto, the first input, minimised): a MAVLink packet found
  /// by resynchronising inside the framer's buffer, after a longer candidate whose CRC failed,
  /// leaves bytes buffered after it. Those bytes were counted nowhere when the sender then
  /// switched format (the other framers start after the current byte, not after the packet),
  /// and after `finish()` more bytes had been received than accepted and skipped. The second
  /// input makes the same case from encoders: a HIGHRES_IMU header (a 74-byte packet) before
  /// an ATTITUDE_QUATERNION, another header and blanks after it, then text lines.
  @Test func bytesAMAVLinkWinnerStillHeldAreCountedWhenTheFormatChanges() {
    let fuzzed: [UInt8] = [
      0xfd, 0x3e, 0x00, 0x00, 0x02, 0x01, 0xc8, 0x69, 0x00, 0x00, 0x2c, 0x31, 0x2e, 0x39, 0x30,
      0x2c, 0x2d, 0x4d, 0x51, 0xfd, 0x08, 0x00, 0x00, 0x01, 0x01, 0xc8, 0x1f, 0x00, 0x00, 0x88,
      0x13, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x90, 0xc8, 0xfd, 0x3e, 0x00, 0x00, 0x02, 0x01,
      0xc8, 0x69, 0x00, 0x00, 0xdf, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x44, 0x0a, 0x24, 0x1c, 0x61, 0x66, 0x65, 0x34, 0x2a, 0x31, 0x31, 0x0d, 0x0a, 0x24,
      0x50, 0x4c, 0x4d, 0x42, 0x2c, 0x33, 0x2c, 0x31, 0x2e, 0x38, 0x30, 0x35, 0x2c, 0x31, 0x2e,
      0x39, 0x32, 0x2c, 0x2d, 0x30, 0x2e, 0x33, 0x33, 0x2c, 0x2d, 0x30, 0x2e, 0x30, 0x38, 0x2c,
      0x30, 0x35, 0x30, 0x30, 0x2c, 0x30, 0x2c, 0x30, 0x2c, 0x32, 0x35, 0x2e, 0x36, 0x35, 0x2a,
      0x31, 0x44, 0x0a, 0x1c,
    ]
    let highResHeader: [UInt8] = [0xFD, 62, 0, 0, 2, 1, 200, 105, 0, 0]
    var packet = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let attitude = MAVLinkMessage.AttitudeQuaternion(
      timeBootMilliseconds: 5000, attitude: MAVLinkQuaternion(w: 1, x: 0, y: 0, z: 0),
      rateRadiansPerSecond: .zero, representationOffset: .zero)
    let packetCount = packet.withUnsafeMutableBytes {
      MAVLink.encode(
        MAVLinkPacket(
          sequence: 1, systemID: 1, componentID: 200, message: .attitudeQuaternion(attitude)),
        into: $0)
    }
    var text = TelemetryEncoder(format: .text)
    var lines: [UInt8] = []
    for k in 0..<3 { lines += text.encode(TelemetryFrame(sequence: UInt32(k))) }
    let made =
      highResHeader + packet[0..<packetCount] + highResHeader
      + [UInt8](repeating: 0x20, count: 60) + lines

    for (name, stream) in [("fuzzed", fuzzed), ("made", made)] {
      var decoder = StreamDecoder()
      var formats: [TelemetryFormat] = []
      decoder.decode(stream) { message in
        switch message {
        case .mavlink: formats.append(.mavlink)
        case .text: formats.append(.text)
        default: break
        }
      }
      decoder.finish()
      let s = decoder.statistics
      #expect(s.bytesReceived == UInt64(stream.count), "\(name)")
      #expect(s.bytesAccepted + s.bytesSkipped == s.bytesReceived, "\(name): \(s)")
      if name == "made" {
        #expect(formats == [.mavlink, .text, .text, .text])
        #expect(s.bytesAccepted == UInt64(packetCount + lines.count), "\(s)")
      }
    }
  }

  @Test func repliesInterleavedWithFramesAreDeliveredAndNotCountedAsLoss() {
    for format in TelemetryFormat.allCases {
      var encoder = TelemetryEncoder(format: format)
      var stream: [UInt8] = []
      for k in 0..<10 {
        stream += encoder.encode(TelemetryFrame(sequence: UInt32(k)))
        if k == 4 { stream += encoder.encode(HostReply.ok("tare")) }
        if k == 6 { stream += encoder.encode(HostCommandError.lineTooLong(limit: 64).reply) }
      }
      var decoder = StreamDecoder(format: format)
      var replies: [String] = []
      decoder.decode(stream) { if let reply = $0.hostReply { replies.append(reply.description) } }
      #expect(replies == ["OK tare", "ERR line longer than 64 bytes: ignored"], "\(format)")
      #expect(decoder.statistics.replies == 2)
      #expect(decoder.statistics.framesLost == 0 && decoder.statistics.bytesSkipped == 0)
    }
  }

  @Test func sequenceGapsDuplicatesAndRestartsAreCounted() {
    var encoder = TelemetryEncoder(format: .binary)
    var stream: [UInt8] = []
    for s: UInt32 in [10, 11, 15, 15, 16, 3, 4, .max, 0] {
      stream += encoder.encode(TelemetryFrame(sequence: s, latencyMicroseconds: s % 1000))
    }
    var decoder = StreamDecoder(format: .binary)
    decoder.decode(stream) { _ in }
    let s = decoder.statistics
    // 11 → 15 loses 3; 15 again is a duplicate; 16 → 3 and 4 → max go backwards (a step of
    // more than half the range); max → 0 is the wrap, in order.
    #expect(s.sequenceGaps == 1 && s.framesLost == 3)
    #expect(s.duplicates == 1 && s.outOfOrder == 2)
    #expect(s.latencyCount == 9)
    #expect(s.latencyMinimumMicroseconds == 0 && s.latencyMaximumMicroseconds == 295)
  }

  @Test func unknownMAVLinkMessagesAreSkippedAndTheStreamContinues() {
    let all = units(.mavlink, frames: 4, seed: 8)
    // A SYSTEM_TIME-like packet (id 2): Plumb has no CRC_EXTRA for it, so it cannot be checked.
    let foreign: [UInt8] = [0xFD, 4, 0, 0, 9, 1, 1, 2, 0, 0, 1, 2, 3, 4, 0xAB, 0xCD]
    var stream = all[0].bytes + foreign
    for unit in all.dropFirst() { stream += unit.bytes }
    var decoder = StreamDecoder(format: .mavlink)
    var count = 0
    decoder.decode(stream) { _ in count += 1 }
    #expect(count == all.count)
    #expect(decoder.statistics.unknownMessageIDs == 1)
    #expect(decoder.statistics.bytesSkipped == UInt64(foreign.count))
  }

  @Test func aBinaryDelimiterLostOrAddedCostsNothing() {
    let all = units(.binary, frames: 5, seed: 9)
    var stream: [UInt8] = []
    for (i, unit) in all.enumerated() {
      stream +=
        i == 2 ? Array(unit.bytes.dropFirst()) : i == 3 ? unit.bytes + [0, 0, 0] : unit.bytes
    }
    var decoder = StreamDecoder(format: .binary)
    var count = 0
    decoder.decode(stream) { _ in count += 1 }
    #expect(count == 5 && decoder.statistics.bytesSkipped == 0)
  }

  @Test func buffersAreBoundedAgainstEndlessGarbage() {
    // A megabyte without a single valid frame: every byte is skipped and nothing grows.
    var random = SplitMix64(seed: 0xF00D)
    for format in TelemetryFormat.allCases {
      var decoder = StreamDecoder(format: format)
      var chunk = [UInt8](repeating: 0, count: 4096)
      for _ in 0..<64 {
        for i in chunk.indices { chunk[i] = UInt8(truncatingIfNeeded: random.next()) | 0x01 }
        decoder.decode(chunk) { _ in Issue.record("garbage decoded as a frame") }
      }
      let s = decoder.statistics
      #expect(s.pendingBytes <= 280, "\(format): at most one maximal candidate is held")
      #expect(s.frames == 0)
    }
  }
}
