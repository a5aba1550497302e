import Geometry
import Telemetry
import TestSupport
import Testing

/// Heap allocations made on this thread by `iterations` calls of `body`, after 100 warm-up calls
/// (the runtime instantiates some generic metadata lazily, once per process, on the first pass
/// through a path; that is not a per-frame cost). The count is the same for 1 000 and 10 000
/// iterations, which is what "allocates nothing per frame" means.
private func allocations(_ iterations: Int, _ body: () -> Void) -> Int {
  for _ in 0..<100 { body() }
  return Int(AllocationCounter.count { for _ in 0..<iterations { body() } })
}

/// The hot path allocates nothing: encoding, decoding and command parsing, per frame and per
/// line. Counted per thread by the interposer in Tests/TestSupportC, so the bound is exactly 0.
@Suite(.countsAllocations)
struct AllocationTests {
  @Test(arguments: TelemetryFormat.allCases)
  func encodingAndDecodingAFrameAllocateNothing(format: TelemetryFormat) {
    var random = SplitMix64(seed: 11)
    let frames = (0..<64).map { randomFrame(&random, sequence: UInt32($0)) }
    var encoder = TelemetryEncoder(format: format)
    var decoder = StreamDecoder(format: format)
    var buffer = [UInt8](repeating: 0, count: TelemetryEncoder.maximumFrameBytes)
    var k = 0
    var decoded = 0
    let count = allocations(1000) {
      buffer.withUnsafeMutableBytes { output in
        let n = encoder.encode(frames[k % frames.count], into: output)
        decoder.decode(UnsafeRawBufferPointer(rebasing: output[0..<n])) { message in
          decoded += message.attitudeSample == nil ? 0 : 1
        }
        _ = encoder.encode(HostReply.ok("tare"), into: output)
      }
      k += 1
    }
    #expect(decoded >= 1000)
    #expect(count == 0, "\(format): \(count) allocations in 1000 frames")
  }

  /// Random frames almost always carry `initialising` somewhere in a second, which answers the
  /// heartbeat's state at once: after start-up the state is worked out from the other flags.
  @Test(arguments: [TelemetryFlags(), [.rest], [.degradedTiming], [.i2cRecovery, .rest]])
  func aMAVLinkHeartbeatAfterStartUpAllocatesNothing(flags: TelemetryFlags) {
    var random = SplitMix64(seed: 12)
    let frames = (0..<64).map { index in
      var frame = randomFrame(&random, sequence: UInt32(index))
      frame.flags = flags
      return frame
    }
    var encoder = TelemetryEncoder(format: .mavlink, outputRateHz: 10)
    var buffer = [UInt8](repeating: 0, count: TelemetryEncoder.maximumFrameBytes)
    var k = 0
    let count = allocations(1000) {
      buffer.withUnsafeMutableBytes { output in
        _ = encoder.encode(frames[k % frames.count], into: output)
      }
      k += 1
    }
    #expect(count == 0, "\(count) allocations in 1000 frames, 100 heartbeats")
  }

  @Test func parsingCommandsAndErrorsAllocatesNothing() {
    var parser = HostCommandParser(configuration: .init(minimumPollsBetweenErrors: 0))
    let context = HostCommandContext()
    let lines = Array("tare\nrate 50\nformat text\nfoo\nrate 30\nstatus extra\n\u{1}\n".utf8)
    var results = 0
    let count = allocations(1000) {
      lines.withUnsafeBytes { _ = parser.receive($0) }
      while let result = parser.poll(context: context) {
        if case .failure(let error) = result { _ = error.reply }
        results += 1
      }
    }
    #expect(results == 7 * 1100)
    #expect(count == 0, "\(count) allocations in 7000 lines")
  }
}
