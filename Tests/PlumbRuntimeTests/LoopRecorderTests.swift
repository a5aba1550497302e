import Boards
import Firmware
import Foundation
import MPU6050Simulation
import MotionScenarios
import Recording
import SimulatedHardware
import TestSupport
import Testing

@testable import PlumbRuntime

/// The loop's observer writing a recording (`PlumbRawLoopRecorder`).
@Suite(.countsAllocations) struct LoopRecorderTests {
  /// Once recording has started, a loop that records every sample allocates nothing per
  /// sample, and every sample it consumed is in the file.
  @Test func aRecordingLoopAllocatesNothingPerSample() throws {
    let path = try temporaryDirectory().appendingPathComponent("loop.plumbraw").path
    let board = SimulatedMPU6050Board(motion: HandheldMotion(seconds: 120, seed: 4))
    let port = MemorySerialPort(clock: board.clock)
    var (loop, recorder) = try recordingLoop(
      board: board, port: port, settings: FirmwareSettings(selfTest: false, format: .binary),
      path: path)
    #expect(loop.observer is PlumbRawLoopRecorder)
    var sink = [UInt8]()
    sink.reserveCapacity(1 << 20)
    func step() {
      loop.step()
      port.takeWritten(into: &sink)
      if sink.count > 500_000 { sink.removeAll(keepingCapacity: true) }
    }
    // Past the first once-a-second configuration read-back.
    for _ in 0..<300 { step() }
    let allocations = AllocationCounter.count {
      for _ in 0..<5_000 { step() }
    }
    #expect(allocations == 0, "\(allocations) allocations in 5 000 recorded samples")
    #expect(recorder.failure == nil)
    let consumed = loop.status.samples + loop.status.warmUpSamplesDiscarded
    loop.finish()
    try recorder.close()
    let reader = try PlumbRawReader(contentsOf: path)
    #expect(consumed > 5_000)
    #expect(UInt64(reader.sampleCount) == consumed)
  }
}
