import Monitoring
import Telemetry
import TestSupport
import Testing

/// The HIL runner feeds the monitor at full speed for long runs: decoding, counting and the
/// latency histogram allocate nothing per frame.
@Suite(.countsAllocations) struct MonitorAllocationTests {
  @Test(arguments: TelemetryFormat.allCases)
  func consumingFramesAllocatesNothing(format: TelemetryFormat) {
    #expect(AllocationCounter.isActive)
    var encoder = TelemetryEncoder(format: format)
    let warmUp = (0..<10).flatMap { encoder.encode(boardFrame($0)) }
    let stream = (10..<510).flatMap { encoder.encode(boardFrame($0)) }
    // Once through the whole stream first, on another monitor: one-time initialisations (a
    // lazily built table the background framers first touch deep into the stream) happen on
    // whichever thread gets there first, which made the count flaky; they are not per frame.
    var first = FrameMonitor(format: nil)
    first.consume(warmUp + stream) { _ in }
    var monitor = FrameMonitor(format: nil)
    monitor.consume(warmUp) { _ in }
    var frames = 0
    let allocations = stream.withUnsafeBytes { bytes in
      AllocationCounter.count {
        monitor.consume(bytes) { event in
          if case .frame = event { frames += 1 }
        }
      }
    }
    #expect(allocations == 0)
    #expect(frames == 500)
  }
}
