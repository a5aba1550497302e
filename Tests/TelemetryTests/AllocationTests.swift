import Geometry
import Telemetry
import Testing

#if canImport(Glibc)
  import Glibc
#endif

#if canImport(Glibc)
  /// The allocation counter from `AllocationCounter/counter.c`, when it is preloaded.
  private let allocationCount: (@convention(c) () -> Int)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "plumb_allocation_count")
    else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)
  }()
#else
  private let allocationCount: (@convention(c) () -> Int)? = nil
#endif

/// Heap allocations made by `iterations` calls of `body` (after one warm-up call).
private func allocations(_ iterations: Int, _ body: () -> Void) -> Int {
  body()
  let before = allocationCount!()
  for _ in 0..<iterations { body() }
  return allocationCount!() - before
}

/// The hot path allocates nothing: encoding, decoding and command parsing, per frame and per
/// line. Runs only with the counter preloaded (see AllocationCounter/counter.c); a test runner
/// thread may allocate now and then, so the bound is far below one allocation per call.
@Suite(.serialized, .enabled(if: allocationCount != nil, "preload AllocationCounter/counter.c"))
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
    #expect(count < 20, "\(format): \(count) allocations in 1000 frames")
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
    #expect(results == 7 * 1001)
    #expect(count < 20, "\(count) allocations in 7000 lines")
  }
}
