import HardwareAbstraction
import MPU6050
import Telemetry

/// Whoever keeps an account of what the loop saw, told in the loop's order: every reading and
/// where it came from, every fallback-timer wake-up, every edge taken without a read, the
/// samples the clock counted as missed, and every host command obeyed. That is all a replay
/// needs besides the bus transfers to give the same frames; PlumbRuntime's
/// `PlumbRawLoopRecorder` writes it to a `.plumbraw` recording.
///
/// The loop calls these on its own thread, per sample, and waits for none of them: an observer
/// must not block, throw or allocate, and reports its own failures where its owner looks.
/// A class protocol, so the loop holds one reference and never copies an observer.
public protocol FirmwareLoopObserver: AnyObject {
  /// What `readSample` or `pollDataReady` returned for the tick at `time` (the edge time, or
  /// the poll time).
  func loopRead(_ reading: MPU6050Reading, at time: Timestamp, origin: SampleOrigin)
  /// A sample drained from the FIFO, dated `time` by the loop (an estimate).
  func loopDrainedFIFOSample(_ sample: MPU6050Sample, at time: Timestamp)
  /// An edge the loop took without reading (a duplicated edge).
  func loopDiscardedEdge(at time: Timestamp)
  /// The loop woke from its fallback timer (polling or draining without edges) at `time`.
  func loopWokeFromTimer(at time: Timestamp)
  /// Samples the sample clock counted as missed at `time`.
  func loopMissedSamples(_ count: UInt32, at time: Timestamp)
  /// A host command the loop obeyed, dated by the last sample processed.
  func loopObeyed(_ command: HostCommand, at time: Timestamp)
}
