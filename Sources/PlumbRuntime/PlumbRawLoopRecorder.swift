import Firmware
import HardwareAbstraction
import MPU6050
import Recording
import Telemetry

/// The loop's account (`FirmwareLoopObserver`) written into a `.plumbraw` recording: each hook
/// is the recorder's own, with the loop's sample origin as the recording's sample source.
/// Together with the driver's bus given through `PlumbRawBusTap` on the same recorder, it is
/// everything a replay needs. Allocation-free once the recorder has started; a write failure
/// stays in `recorder.failure`.
public final class PlumbRawLoopRecorder: FirmwareLoopObserver {
  public let recorder: PlumbRawRecorder

  public init(_ recorder: PlumbRawRecorder) {
    self.recorder = recorder
  }

  public func loopRead(_ reading: MPU6050Reading, at time: Timestamp, origin: SampleOrigin) {
    recorder.recordReading(reading, at: time, source: PlumbRawSampleSource(origin))
  }

  public func loopDrainedFIFOSample(_ sample: MPU6050Sample, at time: Timestamp) {
    recorder.recordFIFOSample(sample, at: time)
  }

  public func loopDiscardedEdge(at time: Timestamp) {
    recorder.recordDiscardedEdge(at: time)
  }

  public func loopWokeFromTimer(at time: Timestamp) {
    recorder.recordTimerWake(at: time)
  }

  public func loopMissedSamples(_ count: UInt32, at time: Timestamp) {
    recorder.recordMissedSamples(count, at: time)
  }

  public func loopObeyed(_ command: HostCommand, at time: Timestamp) {
    recorder.recordNote(command.line, category: .hostCommand, at: time)
  }
}

extension PlumbRawSampleSource {
  /// The recording's name for where the loop got a sample.
  public init(_ origin: SampleOrigin) {
    switch origin {
    case .edge: self = .interrupt
    case .polled: self = .poll
    case .fifo: self = .fifo
    }
  }
}
