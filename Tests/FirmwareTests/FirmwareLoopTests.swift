import BuildInfo
import Firmware
import Geometry
import HardwareAbstraction
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware
import Telemetry
import TestSupport
import Testing

@Suite struct FirmwareLoopTests {
  @Test func aRestingBoardStreamsEveryFrameAt100HzWithValidCRCAndContinuousSequence() throws {
    // A unit with datasheet noise but no offsets: an uncalibrated accelerometer offset tilts the
    // estimate by atan(offset / g), which is physics, not the loop (see the next test).
    let rig = try Rig(unit: .noisy(seed: 1))
    try rig.run(seconds: 10)
    let (samples, _, statistics) = rig.decode()
    let status = rig.loop.status
    // The chip's oscillator is a little off nominal: count what it produced, not 1000.
    let produced = rig.board.chip.statistics.samplesProduced
    #expect(samples.count > 950)
    #expect(statistics.crcErrors == 0 && statistics.framesLost == 0 && statistics.resyncs == 0)
    #expect(samples.map { $0.sequence! } == (1...UInt32(samples.count)).map { $0 })
    #expect(status.missedSamples == 0 && status.framesDroppedQueueFull == 0)
    // Every sample reached the host or is accounted for (warm-up, start-up, the last in flight).
    let accounted =
      UInt64(samples.count) + status.warmUpSamplesDiscarded + status.missedSamples
    #expect(produced >= accounted && produced - accounted <= 40)
    // Level and still: the attitude's tilt is within a degree once initialised.
    for sample in samples.suffix(500) {
      #expect(inclinationError(sample.attitude, truth: .identity) < 1.0)
    }
    #expect(samples.last!.flags!.contains(.rest))
    #expect(samples.suffix(500).allSatisfy { $0.flags!.contains(.rest) })
    // Sample times are the edges': 100 Hz within the oscillator's error.
    let span = Double(samples.last!.sampleTimeNanoseconds - samples.first!.sampleTimeNanoseconds)
    let rate = Double(samples.count - 1) / (span * 1e-9)
    #expect(abs(rate - 100) < 3)
  }

  @Test func atRestTheTiltIsTheAccelerometersOwnDirection() throws {
    // An uncalibrated unit: offsets, scale and cross-axis errors within the datasheet. At rest
    // the estimate must settle on the direction the accelerometer itself reports (an offset of
    // 30 mg reads as a 1.7° tilt: physics, which a calibration file removes).
    let rig = try Rig(unit: .typical(seed: 1))
    try rig.run(seconds: 6, recordSamples: true)
    let (samples, _, _) = rig.decode()
    var sum = Vector3.zero
    for sample in rig.consumed.suffix(300) {
      let a = sample.raw.accelerometer
      sum += Vector3(Double(a.x), Double(a.y), Double(a.z))
    }
    let implied = sum.angle(to: .unitZ) * degreesPerRadian
    #expect(implied > 0.3)
    for sample in samples.suffix(200) {
      #expect(abs(inclinationError(sample.attitude, truth: .identity) - implied) < 0.1)
    }
  }

  @Test func aTiltIsTrackedWithinTwoDegrees() throws {
    let rig = try Rig(motion: TiltScenario(), unit: .noisy(seed: 2))
    try rig.run(seconds: 6, recordSamples: true)
    let (samples, _, _) = rig.decode()
    #expect(samples.count > 550)
    var worst = 0.0
    for sample in samples where sample.flags?.contains(.initialising) == false {
      let truth = TiltScenario().truth(atSeconds: rig.motionSeconds(sample.sampleTimeNanoseconds))
        .attitude
      worst = max(worst, inclinationError(sample.attitude, truth: truth))
    }
    #expect(worst < 2.0, "worst inclination error \(worst)°")
  }

  @Test func missingEdgesAreCountedAndFlagged() throws {
    let rig = try Rig(plan: "missing-edges")
    try rig.run(seconds: 6)
    let (samples, _, statistics) = rig.decode()
    #expect(statistics.framesLost == 0)
    #expect(rig.loop.status.missedSamples == 2)
    #expect(samples.filter { $0.flags!.contains(.gap) }.count == 2)
    #expect(samples.last!.missedSamples == 2)
  }

  @Test func aBrokenWireFallsBackToPollingAndComesBack() throws {
    let rig = try Rig(plan: "broken-wire")
    try rig.run(seconds: 8)
    let status = rig.loop.status
    let (samples, _, _) = rig.decode()
    #expect(status.fallbackEntries == 1 && status.fallbackExits == 1)
    #expect(status.mode == .interrupt)
    let degraded = samples.filter { $0.flags!.contains(.degradedTiming) }.count
    // Two seconds of polling: about 200 flagged frames, none lost.
    #expect(degraded > 180 && degraded < 215)
    // The three-period wait before falling back costs the samples the chip overwrote meanwhile
    // (no FIFO in this mode): counted and flagged, never silent.
    #expect(status.missedSamples >= 1 && status.missedSamples <= 3)
    #expect(samples.contains { $0.flags!.contains(.gap) && $0.flags!.contains(.degradedTiming) })
    #expect(samples.last!.missedSamples == UInt32(status.missedSamples))
    #expect(samples.count > 750)
  }

  @Test func anUnwiredInterruptRunsOnTheFIFO() throws {
    let rig = try Rig(plan: "not-wired")
    try rig.run(seconds: 5)
    let (samples, _, statistics) = rig.decode()
    #expect(rig.loop.status.mode == .fifo)
    #expect(statistics.framesLost == 0)
    #expect(samples.count > 450)
    #expect(samples.allSatisfy { $0.flags!.contains(.degradedTiming) })
    #expect(rig.loop.status.missedSamples == 0)
  }

  @Test func theSameInputGivesTheSameBytes() throws {
    let first = try Rig(motion: TiltScenario(), plan: "nack-burst", seed: 5)
    try first.run(seconds: 5)
    let second = try Rig(motion: TiltScenario(), plan: "nack-burst", seed: 5)
    try second.run(seconds: 5)
    #expect(first.received.count > 20_000)
    #expect(first.received == second.received)
  }
}

@Suite struct HostCommandTests {
  @Test func commandsGetRepliesWithoutDisturbingTheStream() throws {
    let rig = try Rig()
    try rig.loop.start()
    let clock = rig.clock
    var lines = ["status\n", "version\n", "bogus\n", "rate 50\n", "tare\n"]
    var received: [UInt8] = []
    let end = clock.now() + .seconds(6)
    while clock.now() < end {
      if !lines.isEmpty, rig.loop.status.samples > 0, rig.loop.status.samples % 100 == 0 {
        rig.port.inject(Array(lines.removeFirst().utf8))
      }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (samples, replies, statistics) = rig.decode()
    #expect(statistics.crcErrors == 0)
    #expect(replies.count == 5)
    #expect(replies[0].description.hasPrefix("OK n="))
    #expect(replies[1].description.hasPrefix("OK plumb "))
    #expect(replies[2].description.hasPrefix("ERR "))
    #expect(replies[3].description == "OK rate 50 Hz")
    #expect(rig.loop.outputRateHz == 50)
    #expect(replies[4].description.hasPrefix("OK tare"))
    // After `rate 50`, frames come every other sample.
    let late = samples.suffix(50)
    let spacing = (late.last!.sampleTimeNanoseconds - late.first!.sampleTimeNanoseconds) / 49
    #expect(abs(Double(spacing) - 20e6) < 1e6)
    #expect(rig.loop.status.commands == 4 && rig.loop.status.commandErrors == 1)
  }

  /// MAVLink's packet sequence is the link's: a rate change must not start it again, or every
  /// reader (plumb-monitor, pymavlink, a ground station) counts packets lost that were not.
  @Test func aRateChangeKeepsTheMAVLinkPacketSequence() throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: .mavlink))
    try rig.loop.start()
    let clock = rig.clock
    // Sent when the packet sequence is past half its range, and again below it.
    var lines = [(150, "rate 50\n"), (300, "rate 100\n"), (420, "rate 25\n")]
    var received: [UInt8] = []
    let end = clock.now() + .seconds(6)
    while clock.now() < end {
      if let (at, line) = lines.first, rig.loop.status.samples >= at {
        rig.port.inject(Array(line.utf8))
        lines.removeFirst()
      }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (_, replies, statistics) = rig.decode(format: .mavlink)
    #expect(replies.map(\.description) == ["OK rate 50 Hz", "OK rate 100 Hz", "OK rate 25 Hz"])
    #expect(statistics.crcErrors == 0 && statistics.malformed == 0)
    #expect(statistics.framesLost == 0 && statistics.outOfOrder == 0)
    #expect(statistics.duplicates == 0 && statistics.sequenceGaps == 0)
  }

  /// A host sending valid commands as fast as 115200 baud carries them (16 `status` a frame
  /// period, 1 600 a second): every command is answered, in turn, but the replies share only
  /// the link's spare capacity, so the 100 Hz frames keep flowing on time and none is dropped.
  @Test(arguments: [TelemetryFormat.binary, .text, .mavlink])
  func aFloodOfValidCommandsNeitherDelaysNorDropsFrames(format: TelemetryFormat) throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: format))
    try rig.loop.start()
    let flood = [UInt8](repeating: 0, count: 16).flatMap { _ in Array("status\n".utf8) }
    var received: [UInt8] = []
    var largestBacklog = 0
    let end = rig.clock.now() + .seconds(5)
    while rig.clock.now() < end {
      rig.port.inject(flood)
      rig.loop.step()
      largestBacklog = max(largestBacklog, rig.port.bufferedOutputCount)
      received += rig.port.takeWritten()
    }
    // The host stops; what is queued goes out.
    rig.finish(after: received)
    let (samples, replies, statistics) = rig.decode(format: format)
    let status = rig.loop.status
    #expect(status.framesDroppedQueueFull == 0)
    #expect(samples.count == Int(status.framesQueued))
    #expect(statistics.framesLost == 0 && statistics.crcErrors == 0)
    // The device buffer never holds more than a few frame periods (115 B each): a frame waits
    // at most some 30 ms behind replies.
    #expect(largestBacklog < 400, "\(largestBacklog) bytes waiting in the UART")
    #expect(status.commands > 100, "commands are still obeyed")
    #expect(replies.count == Int(status.commands) && status.repliesDropped == 0)
  }

  /// `format mavlink` while sending MAVLink changes nothing: the packet sequence, the heartbeat
  /// and IMU schedule carry on (started again, a ground station counts the jump as packets lost).
  @Test func switchingToTheCurrentFormatLeavesTheStreamAlone() throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: .mavlink))
    try rig.loop.start()
    var received: [UInt8] = []
    for step in 0..<600 {
      if step == 200 || step == 330 { rig.port.inject(Array("format MAVLink\n".utf8)) }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (_, replies, statistics) = rig.decode(format: .mavlink)
    #expect(replies.map(\.description) == ["OK format mavlink", "OK format mavlink"])
    #expect(statistics.framesLost == 0 && statistics.outOfOrder == 0)
    #expect(statistics.duplicates == 0 && statistics.sequenceGaps == 0)
  }

  /// Format and rate switched back and forth, several in one write and one every few frames: a
  /// host that follows the format (`StreamDecoder(format: nil)`) loses no frame, and every
  /// command is answered in turn.
  @Test func formatsAndRatesSwitchedBackAndForthLoseNothing() throws {
    let rig = try Rig()
    try rig.loop.start()
    let commands = [
      "format text\nrate 50\n", "format mavlink\n", "rate 100\nformat binary\n", "rate 25\n",
      "format text\nformat mavlink\nrate 100\n", "format binary\n",
    ]
    var sent = 0
    var received: [UInt8] = []
    for step in 0..<1_200 {
      if step >= 100, step % 37 == 0 {
        let line = commands[sent % commands.count]
        rig.port.inject(Array(line.utf8))
        sent += line.split(separator: "\n").count
      }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.finish(after: received)
    let (samples, replies, statistics) = rig.decode(format: nil)
    #expect(replies.count == sent && replies.allSatisfy { $0.status == .ok })
    #expect(Int(rig.loop.status.commands) == sent)
    #expect(statistics.crcErrors == 0 && statistics.malformed == 0 && statistics.bytesSkipped == 0)
    #expect(statistics.framesLost == 0 && statistics.outOfOrder == 0)
    #expect(samples.count == Int(rig.loop.status.framesQueued))
  }

  /// Two refused commands in one write are both answered; of two garbage lines one is, and the
  /// other is counted.
  @Test func everyRefusedLineIsCountedAndEveryPrintableOneAnswered() throws {
    let rig = try Rig()
    try rig.loop.start()
    var received: [UInt8] = []
    for step in 0..<300 {
      if step == 150 { rig.port.inject(Array("\u{1}\n\u{2}\nrate 30\nformat json\n".utf8)) }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (_, replies, _) = rig.decode()
    #expect(
      replies.map(\.description) == [
        "ERR byte 0x01 not allowed in commands", "ERR 30 Hz does not divide 100 Hz: try 25 or 50",
        "ERR format \"json\"? binary|binary-imu|text|mavlink",
      ])
    #expect(rig.loop.status.commandErrors == 4)
    #expect(rig.loop.status.commandErrorsUnanswered == 1)
  }

  /// A ground station's HEARTBEATs (1 Hz) draw no `ERR` STATUSTEXT, and a command typed
  /// meanwhile is answered.
  @Test func aGroundStationsHeartbeatsDrawNoErrorReplies() throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: .mavlink))
    try rig.loop.start()
    var received: [UInt8] = []
    for step in 0..<1_000 {
      if step % 100 == 0 {
        let packet = MAVLinkPacket(
          sequence: UInt8(step / 100), systemID: 255, componentID: 190,
          message: .heartbeat(
            .init(type: 6, autopilot: 8, customMode: 0x0A0D_0A0D, systemStatus: 4)))
        var output = [UInt8](repeating: 0, count: 280)
        let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
        rig.port.inject(Array(output[0..<n]))
      }
      if step == 550 { rig.port.inject(Array("version\n".utf8)) }
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (_, replies, _) = rig.decode(format: .mavlink)
    #expect(replies.count == 1 && replies.first?.description.hasPrefix("OK plumb ") == true)
    #expect(rig.loop.status.commandErrors == 0)
  }

  /// Noise at the full line rate (115200 baud: 115 bytes a frame period, here one 5 s line) is
  /// read and thrown away as fast as it comes, so a command after it is answered at once, not
  /// after a backlog has drained (or been dropped by a full kernel buffer, on a UART).
  @Test func inputIsReadAtLeastAsFastAsTheLineDeliversIt() throws {
    let rig = try Rig()
    try rig.loop.start()
    let noise = [UInt8](repeating: UInt8(ascii: "x"), count: 115)
    for _ in 0..<500 {
      rig.port.inject(noise)
      rig.loop.step()
      _ = rig.port.takeWritten()
    }
    rig.port.inject(Array("\nversion\n".utf8))
    var received: [UInt8] = []
    for _ in 0..<20 {
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (_, replies, _) = rig.decode()
    // The version every tool's --version prints and the package carries.
    #expect(
      replies.count == 1
        && replies.first?.description.hasPrefix("OK plumb \(PlumbVersion.current) ") == true,
      "\(replies)")
  }

  @Test func aFloodOfGarbageNeverStallsTheLoop() throws {
    let rig = try Rig()
    try rig.loop.start()
    var random = SeededGenerator(seed: 9)
    let end = rig.clock.now() + .seconds(5)
    var received: [UInt8] = []
    while rig.clock.now() < end {
      rig.port.inject((0..<400).map { _ in UInt8(truncatingIfNeeded: random.next()) })
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.received = received
    let (samples, _, statistics) = rig.decode()
    #expect(samples.count > 470)
    #expect(statistics.framesLost == 0)
    #expect(rig.loop.status.missedSamples == 0)
  }
}

@Suite struct SerialFaultTests {
  @Test func anUnpluggedPortIsReopenedAndNothingIsLostSilently() throws {
    let start = Timestamp(nanoseconds: 1_000_000_000)
    let plan = SerialFaultPlan([
      .unplugged(from: start + .seconds(3), until: start + .milliseconds(5500))
    ])
    let rig = try Rig(serialFaults: plan)
    try rig.run(seconds: 8)
    let status = rig.loop.status
    #expect(status.serialDisconnects == 1)
    #expect(status.serialReopens == 1)
    #expect(status.framesDroppedDisconnected > 200)
    let (samples, _, _) = rig.decode()
    // The host sees a gap in the sequence that equals the frames dropped while unplugged
    // (plus those lost in the device buffer at the moment of the unplug).
    let sequences = samples.map { $0.sequence! }
    let missing = Int(sequences.last!) - sequences.count
    #expect(missing >= Int(status.framesDroppedDisconnected))
    #expect(missing <= Int(status.framesDroppedDisconnected) + 70)
  }
}

@Suite(.countsAllocations) struct AllocationTests {
  @Test func theSamplePathAllocatesNothing() throws {
    let rig = try Rig(motion: TiltScenario())
    try rig.loop.start()
    var sink = [UInt8]()
    sink.reserveCapacity(1 << 20)
    for _ in 0..<300 {
      rig.loop.step()
      rig.port.takeWritten(into: &sink)
    }
    sink.removeAll(keepingCapacity: true)
    let allocations = AllocationCounter.count {
      for _ in 0..<10_000 {
        rig.loop.step()
        rig.port.takeWritten(into: &sink)
        if sink.count > 500_000 { sink.removeAll(keepingCapacity: true) }
      }
    }
    #expect(rig.loop.status.samples > 9_000)
    #expect(allocations == 0, "\(allocations) allocations in 10 000 samples")
  }

  /// Host commands, refused lines and a flood of them on the line: the loop still allocates
  /// nothing (the injected bytes are made before counting).
  @Test func commandsAllocateNothing() throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: .text))
    try rig.loop.start()
    var sink = [UInt8]()
    sink.reserveCapacity(1 << 20)
    let lines = [
      "status\n", "version\n", "tare\n", "rate 50\n", "rate 100\n", "format mavlink\n",
      "format text\n", "bogus\n", "rate 7\n", "\u{1}\n", String(repeating: "x", count: 100) + "\n",
    ].map { Array($0.utf8) }
    var injected: UInt64 = 0
    var next = 0
    // A line whenever the port has handed over the previous ones (so the simulated port's own
    // input buffer keeps its capacity and does not allocate).
    func step() {
      if rig.port.statistics.bytesRead == injected {
        rig.port.inject(lines[next % lines.count])
        injected += UInt64(lines[next % lines.count].count)
        next += 1
      }
      rig.loop.step()
      rig.port.takeWritten(into: &sink)
      if sink.count > 500_000 { sink.removeAll(keepingCapacity: true) }
    }
    for _ in 0..<300 { step() }
    let before = rig.loop.status.commands
    let allocations = AllocationCounter.count {
      for _ in 0..<3_000 { step() }
    }
    #expect(rig.loop.status.commands - before > 1_000)
    #expect(allocations == 0, "\(allocations) allocations in 3 000 samples with commands")
  }
}
