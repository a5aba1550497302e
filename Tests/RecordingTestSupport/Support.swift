import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import MotionScenarios
import Recording
import SimulatedHardware
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// What RecordingTests and MPU6050ReplayTests share: a motion that changes every sample, the
/// driver-level loops a live run and its replay both go through, and a recorded run with its
/// replay.

/// A motion whose readings change every sample: a slow wobble about all three axes, a
/// specific force that swings around gravity, and a warming die.
public struct Wobble: MotionSource {
  public init() {}

  public func truth(atSeconds t: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: t, attitude: .identity,
      angularRateRadiansPerSecond: Vector3(
        0.8 * sin(2.1 * t), -0.5 * cos(1.3 * t), 0.3 * sin(0.7 * t + 1)),
      specificForceMetersPerSecondSquared: Vector3(
        1.5 * sin(1.1 * t), 0.9 * cos(0.6 * t), 9.80665 + 0.4 * sin(3.0 * t)),
      temperatureCelsius: 25 + 0.5 * t)
  }
  public var durationSeconds: Double? { nil }
}

/// What the loop saw in one tick, for comparing a live run with its replay.
public enum Tick: Hashable {
  /// A sample: its time, its 14 bytes, the repeat flag, and the clock after the tick.
  case sample(Timestamp, PlumbRawBurstBytes, isRepeat: Bool, clockAfter: Timestamp)
  /// No sample: the time, why (the bus name dropped), and the clock after the tick.
  case unavailable(Timestamp, PlumbRawUnavailableReason, clockAfter: Timestamp)
  /// The wait timed out at this time; the diagnosis.
  case timeout(Timestamp, MPU6050EdgeDiagnosis)
  /// A FIFO drain: samples, overflow, losses, and why it could not run.
  case drain(Timestamp, samples: Int, overflowed: Bool, lost: Int, unavailable: String?)
  /// A FIFO sample with the drain's time and the number of newer records.
  case fifoSample(Timestamp, PlumbRawBurstBytes, newer: Int)
}

/// The minimal loop of the firmware: wait for an edge (three periods), read at its time; on a
/// timeout diagnose and poll. Records every reading into `recorder` when given. Generic over
/// the bus so the live run (a tapped simulated bus) and the replay (the replay board's bus) run
/// the very same code.
public func runInterruptLoop<Bus: I2CBus>(
  driver: inout MPU6050Driver<Bus>, line: SimulatedDataReadyLine, clock: ManualClock,
  until end: Timestamp, recorder: PlumbRawRecorder? = nil,
  stalls: [SimulatedMPU6050FaultPlan.HostStall] = [],
  onReading: (MPU6050Reading, Timestamp, PlumbRawSampleSource) -> Void = { _, _, _ in }
) throws -> [Tick] {
  var ticks: [Tick] = []
  var stallsDone = 0
  let period = driver.configuration.samplePeriodNanoseconds
  while clock.now() < end {
    while stallsDone < stalls.count, stalls[stallsDone].at <= clock.now() {
      clock.advance(by: stalls[stallsDone].duration)
      stallsDone += 1
    }
    let deadline = min(end, clock.now().advanced(byNanoseconds: 3 * period))
    switch try line.waitForEdge(until: deadline) {
    case .edge(let time):
      let reading = driver.readSample(at: time)
      recorder?.recordReading(reading, at: time, source: .interrupt)
      onReading(reading, time, .interrupt)
      ticks.append(tick(reading, at: time, clock: clock))
    case .timedOut:
      guard clock.now() < end else { return ticks }
      let now = clock.now()
      ticks.append(.timeout(now, driver.diagnoseMissingEdges(at: now)))
      let reading = driver.pollDataReady(at: now)
      recorder?.recordReading(reading, at: now, source: .poll)
      onReading(reading, now, .poll)
      ticks.append(tick(reading, at: now, clock: clock))
    }
  }
  return ticks
}

/// The FIFO fallback loop: a drain every 9.5 ms on absolute deadlines.
public func runFIFOLoop<Bus: I2CBus>(
  driver: inout MPU6050Driver<Bus>, clock: ManualClock, until end: Timestamp,
  recorder: PlumbRawRecorder? = nil, replay: ReplayedMPU6050? = nil,
  stalls: [SimulatedMPU6050FaultPlan.HostStall] = []
) -> [Tick] {
  var ticks: [Tick] = []
  var stallsDone = 0
  var next = clock.now()
  let interval: Duration = .microseconds(9_500)
  while clock.now() < end {
    while stallsDone < stalls.count, stalls[stallsDone].at <= clock.now() {
      clock.advance(by: stalls[stallsDone].duration)
      stallsDone += 1
    }
    next = next + interval
    if next < clock.now() { next = clock.now() + interval }
    let deadline = min(next, end)
    clock.sleep(until: replay?.wakeTime(forDeadline: deadline) ?? deadline)
    recorder?.recordTimerWake(at: clock.now())
    let now = clock.now()
    let period = driver.samplePeriodNanoseconds
    let drain = driver.drainFIFO(clock: clock) { sample, newer in
      let time = now.advanced(byNanoseconds: -Int64(newer) * period)
      recorder?.recordFIFOSample(sample, at: time)
      ticks.append(.fifoSample(now, PlumbRawBurstBytes(sample.raw), newer: newer))
    }
    if let reason = drain.unavailable {
      recorder?.recordReading(.unavailable(reason), at: now, source: .fifo)
    }
    ticks.append(
      .drain(
        now, samples: drain.samples, overflowed: drain.overflowed, lost: drain.samplesLost,
        unavailable: drain.unavailable.map { "\(PlumbRawUnavailableReason($0))" }))
  }
  return ticks
}

public func tick(_ reading: MPU6050Reading, at time: Timestamp, clock: ManualClock) -> Tick {
  switch reading {
  case .sample(let sample, let isRepeat):
    .sample(
      time, PlumbRawBurstBytes(sample.raw), isRepeat: isRepeat, clockAfter: clock.now())
  case .unavailable(let reason):
    .unavailable(time, PlumbRawUnavailableReason(reason), clockAfter: clock.now())
  }
}

/// Takes every edge queued now without reading it (as the loop discards the edges raised while
/// the chip settled), telling `recorder`.
public func flushEdges(_ line: SimulatedDataReadyLine, recorder: PlumbRawRecorder? = nil) throws
  -> Int
{
  var count = 0
  while case .edge(let time) = try line.waitForEdge(until: .zero) {
    recorder?.recordDiscardedEdge(at: time)
    count += 1
  }
  return count
}

/// A unique path in a fresh temporary folder, removed when the test process ends (`Scratch`).
public func temporaryPath(_ name: String) -> String {
  Scratch.folder("plumb-recording") + "/" + name
}

public func readBytes(_ path: String) -> [UInt8] { Scratch.contents(of: path) }

public func writeBytes(_ bytes: [UInt8], to path: String) {
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  precondition(fd >= 0)
  _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  close(fd)
}

public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// A live run on a simulated board, recorded with the recorder and a bus tap, then its replay
/// through the replay board with the same loop.
public struct RecordedRun {
  public var path: String
  public var liveReport: MPU6050StartupReport
  public var liveTicks: [Tick]
  public var liveCounters: MPU6050Counters
  public var liveFlushed: Int
  public var end: Timestamp

  /// Records `seconds` of `plan` (its faults starting 1 s into the loop) on a board moving
  /// through `motion`.
  public static func record(
    plan name: String, seconds: Double = 4, selfTest: Bool = true, fifo: Bool = false,
    motion: any MotionSource = Wobble(), variant: SimulatedMPU6050Variant = .mpu6050,
    policy: MPU6050RecoveryPolicy = .default, file: String = "live.plumbraw"
  ) throws -> RecordedRun {
    let clock = ManualClock()
    // Faults start 2 s after power-on: after start-up (about 0.9 s with the self-test).
    let faultStart = clock.now().advanced(byNanoseconds: 2_000_000_000)
    let plan = SimulatedMPU6050FaultPlan.named(name, start: faultStart, seed: 5)!
    let board = SimulatedMPU6050Board(
      motion: motion, unit: .typical(seed: 9), variant: variant, faultPlan: plan, clock: clock)
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    let tap = PlumbRawBusTap(board.bus, clock: clock, recorder: recorder)
    var driver = try MPU6050Driver(bus: tap, address: board.address, policy: policy)
    var startClock = clock
    let report = try driver.start(clock: &startClock, selfTest: selfTest)
    let runningSince = clock.now()
    let flushed = try flushEdges(board.line, recorder: recorder)
    let path = temporaryPath(file)
    try recorder.start(
      writingTo: path,
      header: PlumbRawHeader(
        driver: driver, startup: report, startedAtUTC: "2025-03-14T09:26:53Z",
        firmwareVersion: "plumb test", boardName: "simulated", calibrationID: "cal-test",
        metadataJSON: #"{"plan":"\#(name)"}"#, recordingBeganAt: recorder.recordingBeganAt,
        runningSince: runningSince))
    let end = runningSince.advanced(byNanoseconds: Int64(seconds * 1e9))
    let ticks: [Tick]
    if fifo || !plan.interruptWired {
      driver.enableFIFO(at: clock.now())
      ticks = runFIFOLoop(
        driver: &driver, clock: clock, until: end, recorder: recorder, stalls: plan.hostStalls)
    } else {
      ticks = try runInterruptLoop(
        driver: &driver, line: board.line, clock: clock, until: end, recorder: recorder,
        stalls: plan.hostStalls)
    }
    try recorder.close()
    return RecordedRun(
      path: path, liveReport: report, liveTicks: ticks, liveCounters: driver.counters,
      liveFlushed: flushed, end: end)
  }

  public struct Replay {
    public var report: MPU6050StartupReport
    public var ticks: [Tick]
    public var counters: MPU6050Counters
    public var flushed: Int
    public var chip: ReplayedMPU6050.Statistics
  }

  /// Replays the file through the replay board and the same loop.
  public func replay(fifo: Bool = false) throws -> Replay {
    let reader = try PlumbRawReader(contentsOf: path)
    let board = ReplayedMPU6050Board(recording: reader)
    var driver = try MPU6050Driver(
      bus: board.bus, address: board.address, configuration: reader.header.configuration,
      policy: reader.header.policy)
    var clock = board.clock
    let report = try driver.start(clock: &clock, selfTest: reader.header.selfTestWasRequested)
    let flushed = try flushEdges(board.line)
    let ticks: [Tick]
    if fifo {
      driver.enableFIFO(at: board.clock.now())
      ticks = runFIFOLoop(driver: &driver, clock: board.clock, until: end, replay: board.chip)
    } else {
      ticks = try runInterruptLoop(
        driver: &driver, line: board.line, clock: board.clock, until: end)
    }
    return Replay(
      report: report, ticks: ticks, counters: driver.counters, flushed: flushed,
      chip: board.chip.statistics)
  }
}
