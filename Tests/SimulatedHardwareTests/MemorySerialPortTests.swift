import HardwareAbstraction
import SimulatedHardware
import Testing

/// Writes `bytes` and returns the count accepted, or the error.
func attemptWrite(_ port: MemorySerialPort, _ bytes: [UInt8]) -> Result<Int, SerialError> {
  do throws(SerialError) {
    return .success(try port.write(bytes))
  } catch {
    return .failure(error)
  }
}

/// Reads up to `count` bytes and returns them, or the error.
func attemptRead(_ port: MemorySerialPort, count: Int) -> Result<[UInt8], SerialError> {
  var buffer = [UInt8](repeating: 0, count: count)
  var result: Result<[UInt8], SerialError> = .success([])
  buffer.withUnsafeMutableBytes { raw in
    do throws(SerialError) {
      let got = try port.read(into: raw)
      result = .success(Array(raw.prefix(got)))
    } catch {
      result = .failure(error)
    }
  }
  return result
}

extension Result where Success == Int, Failure == SerialError {
  var accepted: Int? { try? get() }
  var errorKind: SerialError.Kind? {
    if case .failure(let error) = self { return error.kind }
    return nil
  }
}

@Suite struct MemorySerialPortTests {
  @Test func bytesArriveIntactAndInOrder() {
    let port = MemorySerialPort(clock: ManualClock())
    let frame: [UInt8] = [0x00, 0x0A, 0x0D, 0x11, 0x13, 0x7E, 0xFF, 0x00]
    #expect(attemptWrite(port, frame).accepted == frame.count)
    #expect(attemptWrite(port, [0x42]).accepted == 1)
    #expect(port.takeWritten() == frame + [0x42])
    #expect(port.takeWritten().isEmpty)
    #expect(port.statistics.bytesWritten == 9)
    #expect(port.statistics.shortWrites == 0)
  }

  @Test func aFullBufferGivesShortWritesThatAreCounted() {
    let port = MemorySerialPort(clock: ManualClock(), capacity: .buffer(bytes: 10))
    #expect(attemptWrite(port, Array(0..<6)).accepted == 6)
    #expect(attemptWrite(port, Array(6..<12)).accepted == 4)
    #expect(attemptWrite(port, [99]).accepted == 0)
    #expect(port.bufferedOutputCount == 10)
    var statistics = port.statistics
    #expect(statistics.bytesWritten == 10)
    #expect(statistics.bytesRefused == 3)
    #expect(statistics.shortWrites == 2)
    // The host drains the buffer; there is room again.
    #expect(port.takeWritten() == Array(0..<10))
    #expect(attemptWrite(port, [10, 11]).accepted == 2)
    #expect(port.takeWritten() == [10, 11])
    statistics = port.statistics
    // Every byte offered is written or refused.
    #expect(statistics.bytesWritten + statistics.bytesRefused == 15)
  }

  /// 115200 baud 8N1 carries 11 520 bytes per second: 115.2 per 10 ms.
  @Test func aUARTDrainsAtItsLineRateOnTheManualClock() {
    let clock = ManualClock(start: ms(1000))
    let port = MemorySerialPort(clock: clock, capacity: .uart(baud: 115_200, bufferBytes: 200))
    #expect(attemptWrite(port, [UInt8](repeating: 0xAA, count: 300)).accepted == 200)
    #expect(port.takeWritten().isEmpty)
    clock.advance(by: .milliseconds(5))
    #expect(port.takeWritten().count == 57)  // 57.6
    clock.advance(by: .milliseconds(5))
    #expect(port.takeWritten().count == 58)  // 115.2 in all: the fraction is carried
    #expect(port.bufferedOutputCount == 85)
    // The loop writes a 40-byte frame every 10 ms: the line keeps up, no short writes.
    let before = port.statistics.shortWrites
    for _ in 0..<100 {
      clock.advance(by: .milliseconds(10))
      #expect(attemptWrite(port, [UInt8](repeating: 1, count: 40)).accepted == 40)
    }
    #expect(port.statistics.shortWrites == before)
    // An idle line does not bank time: after a pause the buffer still fills at once.
    clock.advance(by: .seconds(10))
    #expect(port.bufferedOutputCount == 0)
    #expect(attemptWrite(port, [UInt8](repeating: 2, count: 250)).accepted == 200)
  }

  @Test func hostBytesAreReadBackInPieces() throws {
    let port = MemorySerialPort(clock: ManualClock())
    port.inject([0x10, 0x20, 0x30, 0x40, 0x50])
    #expect(try attemptRead(port, count: 3).get() == [0x10, 0x20, 0x30])
    #expect(try attemptRead(port, count: 3).get() == [0x40, 0x50])
    #expect(try attemptRead(port, count: 3).get() == [])
    port.inject([0x60])
    #expect(try attemptRead(port, count: 3).get() == [0x60])
    #expect(port.statistics.bytesRead == 6)
  }

  @Test func aDeviceThatDisappearsAtATimeComesBackForAReopen() {
    let clock = ManualClock(start: ms(1000))
    let port = MemorySerialPort(
      clock: clock, faultPlan: SerialFaultPlan([.unplugged(from: ms(2000), until: ms(3000))]),
      name: "/dev/ttyUSB0")
    #expect(attemptWrite(port, [1, 2, 3]).accepted == 3)
    clock.advance(to: ms(2000))
    let failure = attemptWrite(port, [4])
    #expect(failure.errorKind == .disconnected)
    if case .failure(let error) = failure {
      #expect(error.isDisconnect)
      #expect(error.errno?.rawValue == 5)  // EIO
      #expect(error.device == "/dev/ttyUSB0")
    }
    #expect(attemptWrite(port, [5]).errorKind == .disconnected)  // every call, until reopened
    #expect(port.statistics.disconnects == 1)  // one disconnect, however many calls saw it
    #expect(!port.isPluggedIn)

    port.close()
    #expect(attemptWrite(port, [6]).errorKind == .notOpen)
    clock.advance(to: ms(2500))
    let early = thrownError { () throws(SerialError) in try port.reopen() }
    #expect(early?.kind == .deviceMissing)
    #expect(early?.errno?.rawValue == 2)  // ENOENT
    #expect(port.failedReopens == 1)

    clock.advance(to: ms(3000))
    #expect(thrownError { () throws(SerialError) in try port.reopen() } == nil)
    #expect(port.isOpen && port.isPluggedIn)
    #expect(port.statistics.reopens == 1)
    #expect(attemptWrite(port, [7]).accepted == 1)
    #expect(port.takeWritten() == [1, 2, 3, 7])
  }

  @Test func aDeviceThatDisappearsAfterNBytesCutsTheWriteThere() {
    let clock = ManualClock(start: ms(1000))
    let port = MemorySerialPort(
      clock: clock,
      faultPlan: SerialFaultPlan([.unplugged(afterBytes: 25, for: .milliseconds(500))]))
    #expect(attemptWrite(port, Array(0..<10)).accepted == 10)
    #expect(attemptWrite(port, Array(10..<20)).accepted == 10)
    #expect(attemptWrite(port, Array(20..<30)).accepted == 5)
    #expect(port.statistics.shortWrites == 1)
    #expect(port.statistics.bytesRefused == 5)
    #expect(attemptWrite(port, [0]).errorKind == .disconnected)
    #expect(port.takeWritten() == Array(0..<25))
    clock.advance(by: .milliseconds(499))
    #expect(thrownError { () throws(SerialError) in try port.reopen() }?.kind == .deviceMissing)
    clock.advance(by: .milliseconds(1))
    #expect(thrownError { () throws(SerialError) in try port.reopen() } == nil)
    #expect(attemptWrite(port, [1]).accepted == 1)
  }

  @Test func aManualUnplugWaitsForPlugBack() {
    let clock = ManualClock()
    let port = MemorySerialPort(clock: clock, capacity: .buffer(bytes: 64))
    #expect(attemptWrite(port, [1, 2, 3, 4]).accepted == 4)
    port.unplug()
    #expect(port.discardedBytes == 4)  // still in the adapter's buffer when it went
    #expect(!port.inject([0x55]))
    #expect(port.discardedInjectedBytes == 1)
    if case .failure(let error) = attemptRead(port, count: 4) {
      #expect(error.kind == .disconnected)
    } else {
      Issue.record("a read from an unplugged device succeeded")
    }
    clock.advance(by: .seconds(3600))
    #expect(thrownError { () throws(SerialError) in try port.reopen() }?.kind == .deviceMissing)
    port.plugBack()
    // Plugged back, but the old handle is dead until reopened.
    #expect(attemptWrite(port, [9]).errorKind == .disconnected)
    #expect(thrownError { () throws(SerialError) in try port.reopen() } == nil)
    #expect(attemptWrite(port, [9]).accepted == 1)
    #expect(port.takeWritten() == [9])
    #expect(port.statistics.disconnects == 1)
  }

  @Test func disconnectionsFireInOrderAndEachCountsOnce() {
    let clock = ManualClock(start: ms(1000))
    let port = MemorySerialPort(
      clock: clock,
      faultPlan: SerialFaultPlan([
        .unplugged(from: ms(2000), until: ms(2100)),
        .unplugged(from: ms(3000), until: ms(3100)),
      ]))
    var episodes = 0
    while clock.now() < ms(4000) {
      clock.advance(by: .milliseconds(10))
      if attemptWrite(port, [0]).errorKind == .disconnected {
        port.close()
        episodes += 1
        while thrownError({ () throws(SerialError) in try port.reopen() }) != nil {
          clock.advance(by: .milliseconds(10))
        }
      }
    }
    #expect(episodes == 2)
    #expect(port.statistics.disconnects == 2)
    #expect(port.statistics.reopens == 2)
    #expect(port.firedDisconnections == 2)
  }
}
