import MPU6050

/// How the loop gets its samples right now.
public enum TimingMode: String, Hashable, Sendable {
  /// Waiting on data-ready edges; the kernel's edge timestamp is the sample time.
  case interrupt
  /// Edges stopped (INT wire broken, GPIO misconfigured): INT_STATUS is polled on an
  /// absolute-deadline timer and the poll time is the sample time (flagged `degradedTiming`).
  case polling
  /// The INT pin is not wired (board file `dataReady.wired: false`): the FIFO is drained on an
  /// absolute-deadline timer and sample times are reconstructed from the chip's period.
  case fifo
}

/// The loop's health counters: what `status` reports, what a HIL run reconciles. Nothing is lost
/// silently: every sample the chip produced is delivered, counted missed, or (for the last few)
/// still in flight.
public struct FirmwareStatus: Hashable, Sendable {
  /// Loop iterations.
  public var ticks: UInt64 = 0
  /// Data-ready edges received.
  public var edges: UInt64 = 0
  /// Edges that repeated the previous edge's timestamp (reported twice): ignored.
  public var duplicateEdges: UInt64 = 0
  /// Reads that returned the previous sample's bytes again at a new edge (no new sample):
  /// ignored, and the sample clock counts the gap.
  public var repeatedSamples: UInt64 = 0
  /// Waits that ended without an edge.
  public var edgeTimeouts: UInt64 = 0
  /// Samples handed to the estimator.
  public var samples: UInt64 = 0
  /// Warm-up samples discarded after start-up (filter settling).
  public var warmUpSamplesDiscarded: UInt64 = 0
  /// Samples the estimator's sample clock found missing (gaps in the timestamps), cumulative.
  public var missedSamples: UInt64 = 0
  /// Samples the driver reported lost in a FIFO overflow.
  public var fifoSamplesLost: UInt64 = 0
  /// Ticks on which the driver had no sample (bus error after retries, re-initialising, …).
  public var unavailableReads: UInt64 = 0
  /// Times the loop left interrupt mode for polling, and came back.
  public var fallbackEntries: UInt64 = 0
  public var fallbackExits: UInt64 = 0
  /// Samples taken while polling or from the FIFO (their times are estimates).
  public var degradedSamples: UInt64 = 0
  /// Iterations that started more than one sample period after their edge (the loop fell
  /// behind; the kernel's queue kept the edges, so nothing was lost, but latency grew).
  public var overruns: UInt64 = 0
  /// Frames encoded and queued for the port.
  public var framesQueued: UInt64 = 0
  /// Frames dropped because the transmit queue was full (a slow or stalled reader).
  public var framesDroppedQueueFull: UInt64 = 0
  /// Frames dropped while the serial device was gone.
  public var framesDroppedDisconnected: UInt64 = 0
  /// Bytes of frames (and replies) that were queued but never written: the queue emptied when
  /// the serial device went away, and what was still in it when `finish()` gave up flushing.
  /// Counted in bytes because the queue holds bytes; with `framesQueued` and the bytes a reader
  /// got, nothing queued goes unaccounted.
  public var bytesNeverSent: UInt64 = 0
  /// Serial disconnects seen, and successful reopens.
  public var serialDisconnects: UInt64 = 0
  public var serialReopens: UInt64 = 0
  /// Host commands executed, and lines refused (answered or not).
  public var commands: UInt64 = 0
  public var commandErrors: UInt64 = 0
  /// Refused lines of garbage (a control or non-ASCII byte, an overlong line) that came too soon
  /// after the previous error to be answered (FORMATS.md "Host commands"): in `commandErrors`.
  public var commandErrorsUnanswered: UInt64 = 0
  /// Replies dropped because the transmit queue was full.
  public var repliesDropped: UInt64 = 0
  /// Edge-to-queue latency of the last frame and the largest seen, µs.
  public var lastLatencyMicroseconds: UInt32 = 0
  public var maximumLatencyMicroseconds: UInt32 = 0
  /// The current timing mode.
  public var mode: TimingMode = .interrupt

  public init() {}
}
