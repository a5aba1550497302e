import ByteFormats
import Telemetry
import TestSupport
import Testing

/// A receiver's run over some bytes: the packets delivered and the counters.
private struct Run {
  var packets: [MAVLinkPacket] = []
  var receiver = MAVLinkReceiver(systemID: 1, componentID: 200)

  /// Feeds `pieces` one call each.
  init(_ pieces: [[UInt8]]) {
    for piece in pieces { feed(piece) }
  }

  mutating func feed(_ piece: [UInt8]) {
    var delivered: [MAVLinkPacket] = []
    receiver.receive(piece) { delivered.append($0) }
    packets += delivered
  }

  var statistics: MAVLinkReceiverStatistics { receiver.statistics }

  /// Every byte received is accepted, ignored, skipped or still held.
  var accountsForEveryByte: Bool {
    let s = statistics
    return s.bytesReceived
      == s.bytesAccepted + s.bytesIgnored + s.bytesSkipped + UInt64(receiver.pendingCount)
  }
}

private func packet(_ text: String) -> [UInt8] { bytes(hex: text) }

/// The firmware's receiver against pymavlink's packets (`PymavlinkVectors`): what a ground
/// station sends Plumb (1/200), damaged in every way a serial line or a hostile sender can.
@Suite struct MAVLinkReceiverTests {
  typealias V = PymavlinkVectors

  /// Packets addressed to Plumb or broadcast, in the order of `session`.
  static let forPlumb = [
    V.gcsHeartbeat, V.commandLong, V.commandLongInterval, V.commandInt, V.paramRequestList,
    V.paramRequestRead, V.paramRequestReadIndex, V.paramSet, V.requestDataStream, V.ftpRequest,
    V.commandLongBroadcast, V.commandLongSigned,
  ].map(packet)

  /// A ground station's session: Plumb's packets with others between them (another system's
  /// and another component's commands, two messages Plumb does not know, a MAVLink 1
  /// heartbeat).
  static var session: [UInt8] {
    var stream: [UInt8] = []
    for (index, bytes) in forPlumb.enumerated() {
      stream += bytes
      switch index {
      case 1: stream += packet(V.commandLongOther)
      case 3: stream += packet(V.systemTime)
      case 5: stream += packet(V.v1Heartbeat)
      case 7: stream += packet(V.timesync)
      case 9: stream += packet(V.commandLongOtherComponent)
      default: break
      }
    }
    return stream
  }

  static var expectedPackets: [MAVLinkPacket] {
    forPlumb.map { bytes in
      guard case .success(let packet) = bytes.withUnsafeBytes({ MAVLink.decode(packet: $0) })
      else { fatalError("a pymavlink vector does not decode") }
      return packet
    }
  }

  static var expectedStatistics: MAVLinkReceiverStatistics {
    var s = MAVLinkReceiverStatistics()
    s.bytesReceived = UInt64(session.count)
    s.packetsAccepted = UInt64(forPlumb.count)
    s.bytesAccepted = UInt64(forPlumb.map(\.count).reduce(0, +))
    s.bytesIgnored = UInt64(s.bytesReceived - s.bytesAccepted)
    s.notForUs = 2
    s.unknownMessages = 2
    s.mavlinkV1Packets = 1
    s.signedPackets = 1
    return s
  }

  @Test func aSessionDeliversPlumbsPacketsAndCountsTheRest() {
    let run = Run([Self.session])
    #expect(run.packets == Self.expectedPackets)
    #expect(run.statistics == Self.expectedStatistics)
    #expect(run.receiver.pendingCount == 0 && run.accountsForEveryByte)
    // The sender's identity travels with each packet (for the reply's target).
    #expect(run.packets.allSatisfy { $0.systemID == 255 && $0.componentID == 190 })
    guard case .commandLong(let command) = run.packets[1].message else {
      Issue.record("the second packet is COMMAND_LONG")
      return
    }
    #expect(command.command == MAVLink.Command.requestMessage && command.param1 == 148)
  }

  @Test func splitAtEveryByteBoundaryGivesTheSame() {
    let session = Self.session
    for cut in 0...session.count {
      let run = Run([Array(session[..<cut]), Array(session[cut...])])
      #expect(run.packets == Self.expectedPackets, "cut at \(cut)")
      #expect(run.statistics == Self.expectedStatistics, "cut at \(cut)")
    }
    let byByte = Run(session.map { [$0] })
    #expect(byByte.packets == Self.expectedPackets)
    #expect(byByte.statistics == Self.expectedStatistics)
    // And three pieces at every pair of cuts near a header.
    for first in 0..<24 {
      for second in first...48 {
        let run = Run([
          Array(session[..<first]), Array(session[first..<second]), Array(session[second...]),
        ])
        #expect(run.packets == Self.expectedPackets && run.accountsForEveryByte)
      }
    }
  }

  @Test func garbageBetweenPacketsIsSkipped() {
    var random = SplitMix64(seed: 21)
    var stream: [UInt8] = []
    var garbage = 0
    for bytes in Self.forPlumb {
      // Garbage without a start byte: nothing in it can look like a packet.
      let n = Int(random.next() % 40)
      for _ in 0..<n {
        var byte = UInt8(truncatingIfNeeded: random.next())
        if byte == 0xFD || byte == 0xFE { byte = 0x55 }
        stream.append(byte)
      }
      garbage += n
      stream += bytes
    }
    stream += [0x00, 0x11]
    garbage += 2
    let run = Run([stream])
    #expect(run.packets == Self.expectedPackets)
    #expect(run.statistics.bytesSkipped == UInt64(garbage))
    #expect(run.statistics.packetsAccepted == UInt64(Self.forPlumb.count))
    #expect(run.accountsForEveryByte)
  }

  @Test func aWrongCRCIsCountedAndNotDelivered() {
    var damaged = packet(V.paramRequestList)
    damaged[damaged.count - 1] ^= 0x01
    let good = packet(V.commandLong)
    let run = Run([damaged + good])
    #expect(run.packets.count == 1 && run.packets[0].message.info.id == 76)
    #expect(run.statistics.crcErrors == 1)
    #expect(run.statistics.bytesSkipped == UInt64(damaged.count), "no start byte inside it")
    #expect(run.accountsForEveryByte)
    // A changed payload byte is caught the same way.
    var payload = packet(V.paramSet)
    payload[12] ^= 0x40
    #expect(Run([payload]).statistics.crcErrors == 1 && Run([payload]).packets.isEmpty)
  }

  @Test func anUnknownMessageIsPassedOverByItsLength() {
    // SYSTEM_TIME (#2) and TIMESYNC (#111) have no CRC_EXTRA here.
    let run = Run([packet(V.systemTime) + packet(V.timesync) + packet(V.commandLong)])
    #expect(run.packets.count == 1 && run.statistics.unknownMessages == 2)
    #expect(
      run.statistics.bytesIgnored == UInt64(packet(V.systemTime).count + packet(V.timesync).count))
    #expect(run.statistics.bytesSkipped == 0)
    // Start bytes inside an unknown message's payload do not start packets.
    let foreign: [UInt8] = [0xFD, 4, 0, 0, 9, 1, 1, 2, 0, 0, 0xFD, 0xFE, 0xFD, 0xFD, 0xAB, 0xCD]
    let inside = Run([foreign + packet(V.commandLong)])
    #expect(inside.packets.count == 1 && inside.statistics.unknownMessages == 1)
    #expect(inside.statistics.bytesIgnored == 16 && inside.statistics.bytesSkipped == 0)
    // A signed unknown message is passed over with its signature.
    var signed = foreign
    signed[2] = 0x01
    signed += [UInt8](repeating: 0xFD, count: 13)
    let withSignature = Run([signed + packet(V.commandLong)])
    #expect(withSignature.packets.count == 1 && withSignature.statistics.bytesIgnored == 29)
    // Held until the byte after it shows that a packet follows.
    var held = Run([packet(V.timesync)])
    #expect(held.receiver.pendingCount == packet(V.timesync).count)
    held.feed([0xFD])
    #expect(held.statistics.unknownMessages == 1 && held.receiver.pendingCount == 1)
  }

  @Test func aFalseHeaderInNoiseDoesNotSwallowThePacketsBehindIt() {
    // A start byte in noise, then what reads as an unknown id (2) and 200 bytes of payload:
    // the byte where that "packet" would end is no start byte, so it was garbage.
    // Each packet behind it is delivered when its own last byte arrives.
    let noise: [UInt8] = [0x11, 0xFD, 200, 0, 0, 7, 9, 9, 2, 0, 0, 0x22]
    var run = Run([noise])
    for (index, bytes) in Self.forPlumb.prefix(6).enumerated() {
      run.feed(bytes)
      #expect(run.packets == Array(Self.expectedPackets.prefix(index + 1)), "packet \(index)")
    }
    #expect(run.statistics.unknownMessages == 0 && run.statistics.bytesSkipped == 12)
    // The same for a MAVLink 1 start byte.
    let v1Noise: [UInt8] = [0xFE, 100, 3, 4]
    let v1Run = Run([v1Noise + Self.forPlumb.prefix(6).joined()])
    #expect(v1Run.packets.count == 6 && v1Run.statistics.mavlinkV1Packets == 0)
    #expect(v1Run.statistics.bytesSkipped == 4 && v1Run.accountsForEveryByte)
  }

  @Test func aTruncatedPacketDoesNotHideTheNextOne() {
    // COMMAND_LONG cut after 20 of its 44 bytes: its header asks for 44, which takes in the
    // next packets' bytes; the CRC fails, and the search starts again inside the cut packet.
    let cut = Array(packet(V.commandLong)[..<20])
    let run = Run([cut + packet(V.paramRequestList) + packet(V.paramSet) + packet(V.commandInt)])
    #expect(run.packets.map(\.message.info.id) == [21, 23, 75])
    #expect(run.statistics.crcErrors == 1 && run.statistics.bytesSkipped == 20)
    #expect(run.accountsForEveryByte)
    // Cut inside the header: the same.
    let header = Array(packet(V.commandLong)[..<6])
    let early = Run([header, packet(V.paramRequestList) + packet(V.paramSet)])
    #expect(early.packets.map(\.message.info.id) == [21, 23] && early.accountsForEveryByte)
  }

  @Test func mavlink1IsCountedAndPassedOver() {
    let v1 = packet(V.v1Heartbeat)
    let run = Run([v1 + packet(V.commandLong)])
    #expect(run.packets.count == 1 && run.statistics.mavlinkV1Packets == 1)
    #expect(run.statistics.bytesIgnored == UInt64(v1.count) && v1.count == 9 + 8)
  }

  @Test func packetsForOthersAreCountedBroadcastsDelivered() {
    let run = Run([
      packet(V.commandLongOther) + packet(V.commandLongOtherComponent)
        + packet(V.commandLongBroadcast) + packet(V.paramRequestReadIndex)
    ])
    #expect(run.statistics.notForUs == 2)
    #expect(run.packets.map(\.message.info.id) == [76, 20], "broadcast, then all components")
    // Another system's identity: the same bytes are for it, not for Plumb.
    var other = MAVLinkReceiver(systemID: 2, componentID: 1)
    var delivered = 0
    other.receive(packet(V.commandLongOther) + packet(V.commandLong)) { _ in delivered += 1 }
    #expect(delivered == 1 && other.statistics.notForUs == 1)
  }

  @Test func aSignedPacketIsDeliveredWithItsSignatureSkipped() {
    let signed = packet(V.commandLongSigned)
    #expect(signed[2] == 0x01 && signed.count == 10 + 32 + 2 + 13)
    let run = Run([signed])
    #expect(run.packets.count == 1 && run.statistics.signedPackets == 1)
    #expect(run.statistics.bytesAccepted == UInt64(signed.count))
    guard case .commandLong(let command) = run.packets.first?.message else {
      Issue.record("COMMAND_LONG expected")
      return
    }
    #expect(command.command == MAVLink.Command.requestAutopilotCapabilities)
  }

  @Test func unsupportedFlagsAndOversizedPayloadsAreRefused() {
    var flagged = packet(V.paramRequestList)
    flagged[2] = 0x02
    let run = Run([flagged + packet(V.commandLong)])
    #expect(run.statistics.unsupportedFlags == 1 && run.packets.count == 1)
    // PARAM_REQUEST_LIST has 2 payload bytes: 3 is too many.
    let oversized: [UInt8] = [0xFD, 3, 0, 0, 0, 255, 190, 21, 0, 0, 1, 200, 0, 0, 0]
    let long = Run([oversized + packet(V.commandLong)])
    #expect(long.statistics.oversizedPayloads == 1 && long.packets.count == 1)
    #expect(long.statistics.bytesSkipped == UInt64(oversized.count) && long.accountsForEveryByte)
  }

  @Test func resetDropsAPartialPacket() {
    var run = Run([Array(packet(V.commandLong)[..<30])])
    #expect(run.receiver.pendingCount == 30)
    run.receiver.reset()
    #expect(run.receiver.pendingCount == 0 && run.statistics.bytesSkipped == 30)
    run.feed(packet(V.paramRequestList))
    #expect(run.packets.count == 1 && run.accountsForEveryByte)
    // A reset also drops an unknown message held for the byte after it.
    run.feed(Array(packet(V.systemTime)[..<12]))
    run.receiver.reset()
    run.feed(packet(V.paramRequestList))
    #expect(run.packets.count == 2 && run.accountsForEveryByte)
  }

  /// 1 MiB of seeded random bytes with packets spliced in (some damaged), in random pieces:
  /// nothing traps, every byte is accounted for after every call, and every delivered packet
  /// is addressed to Plumb and re-encodes to a packet that decodes to itself.
  @Test func aMegabyteOfNoiseIsAccountedForByteByByte() {
    var random = SplitMix64(seed: 0x4D41_564C)
    let spliced =
      Self.forPlumb
      + [V.systemTime, V.timesync, V.v1Heartbeat, V.commandLongOther].map(packet)
    var stream = [UInt8](repeating: 0, count: 1 << 20)
    for index in stream.indices { stream[index] = UInt8(truncatingIfNeeded: random.next()) }
    var position = 0
    while true {
      position += Int(random.next() % 4096)
      // Two packets in a row (an unknown message counts as one only when a packet follows).
      var bytes = spliced[Int(random.next() % UInt64(spliced.count))]
      // One in eight damaged.
      if random.next() % 8 == 0 { bytes[bytes.count / 2] ^= 0x10 }
      bytes += Self.forPlumb[Int(random.next() % UInt64(Self.forPlumb.count))]
      guard position + bytes.count <= stream.count else { break }
      stream.replaceSubrange(position..<position + bytes.count, with: bytes)
      position += bytes.count
    }
    var receiver = MAVLinkReceiver(systemID: 1, componentID: 200)
    var delivered = 0
    var output = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    var offset = 0
    var consistent = true
    while offset < stream.count {
      let size = min(stream.count - offset, 1 + Int(random.next() % 300))
      stream[offset..<offset + size].withUnsafeBytes { piece in
        receiver.receive(piece) { packet in
          delivered += 1
          if !packet.message.isAddressed(toSystem: 1, component: 200) { consistent = false }
          let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
          let again = output[0..<n].withUnsafeBytes { MAVLink.decode(packet: $0) }
          if again != .success(packet) { consistent = false }
        }
      }
      offset += size
      let s = receiver.statistics
      if s.bytesReceived
        != s.bytesAccepted + s.bytesIgnored + s.bytesSkipped + UInt64(receiver.pendingCount)
      {
        consistent = false
      }
    }
    let s = receiver.statistics
    #expect(consistent)
    #expect(s.bytesReceived == UInt64(stream.count))
    #expect(s.packetsAccepted == UInt64(delivered) && delivered > 100)
    #expect(s.crcErrors > 0 && s.unknownMessages > 0 && s.mavlinkV1Packets > 0, "\(s)")
    #expect(s.notForUs > 0 && s.signedPackets > 0 && s.unsupportedFlags > 0, "\(s)")
    #expect(s.bytesSkipped > s.bytesIgnored, "random bytes are mostly not packets")
  }
}

/// The receiver allocates nothing per call, whatever it is given; the component messages are
/// encoded (and an FTP request answered) without a heap allocation.
@Suite(.countsAllocations)
struct MAVLinkReceiverAllocationTests {
  @Test func encodingTheComponentMessagesAllocatesNothing() {
    let packets = MAVLinkComponentMessagesTests.sent.map {
      MAVLinkPacket(sequence: 0, systemID: 1, componentID: 200, message: $0.message)
    }
    let request = MAVLinkMessage.FileTransferProtocol(
      targetSystem: 1, targetComponent: 200, payload: MAVLinkFTPPayload(sequence: 9, opcode: 4))
    var output = [UInt8](repeating: 0, count: MAVLink.maximumSentPacketCount)
    var total = 0
    func pass() {
      output.withUnsafeMutableBytes { output in
        for index in packets.indices { total += MAVLink.encode(packets[index], into: output) }
        let nak = request.negativeAcknowledgement(toSystem: 255, component: 190)
        let packet = MAVLinkPacket(
          sequence: 1, systemID: 1, componentID: 200, message: .fileTransferProtocol(nak))
        total += MAVLink.encode(packet, into: output)
      }
    }
    for _ in 0..<100 { pass() }
    let count = AllocationCounter.count { for _ in 0..<1000 { pass() } }
    #expect(total > 0)
    #expect(count == 0, "\(count) allocations in 1000 passes")
  }

  @Test func receivingAllocatesNothing() {
    let session = MAVLinkReceiverTests.session
    var random = SplitMix64(seed: 5)
    let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    var receiver = MAVLinkReceiver(systemID: 1, componentID: 200)
    var commands = 0
    func pass() {
      session.withUnsafeBytes { bytes in
        // In pieces of 7 bytes, as a serial port delivers them.
        var start = 0
        while start < bytes.count {
          let end = min(bytes.count, start + 7)
          receiver.receive(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) { packet in
            if case .commandLong = packet.message { commands += 1 }
          }
          start = end
        }
      }
      noise.withUnsafeBytes { receiver.receive($0) { _ in commands += 0 } }
      receiver.reset()
    }
    for _ in 0..<100 { pass() }
    let count = AllocationCounter.count { for _ in 0..<1000 { pass() } }
    #expect(commands >= 1100 * 4)
    #expect(count == 0, "\(count) allocations in 1000 sessions")
  }
}
