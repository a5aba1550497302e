import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Constant readings: not a physical motion (the rate is not the attitude's derivative), just
/// fixed values for conversion round trips.
struct FixedTruth: MotionSource {
  var rate: Vector3
  var force: Vector3
  var temperature: Double

  func truth(atSeconds seconds: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: seconds, attitude: .identity, angularRateRadiansPerSecond: rate,
      specificForceMetersPerSecondSquared: force, temperatureCelsius: temperature)
  }
  var durationSeconds: Double? { nil }
}

/// A rate that ramps linearly, `slope` rad/s per second about every axis, and a force that ramps
/// the same way in m/s² per second: a filter delays a ramp by exactly its group delay.
struct Ramp: MotionSource {
  var slope: Double
  func truth(atSeconds seconds: Double) -> MotionTruth {
    let value = slope * seconds
    return MotionTruth(
      timeSeconds: seconds, attitude: .identity,
      angularRateRadiansPerSecond: Vector3(value, value, value),
      specificForceMetersPerSecondSquared: Vector3(value, value, value), temperatureCelsius: 25)
  }
  var durationSeconds: Double? { nil }
}

/// A vibration: angular rate about z, `amplitude` rad/s at `frequency` Hz, the body otherwise
/// level and still.
struct Vibration: MotionSource {
  var frequency: Double
  var amplitude: Double
  func truth(atSeconds seconds: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: seconds, attitude: .identity,
      angularRateRadiansPerSecond: Vector3(
        0, 0, amplitude * sin(2 * Double.pi * frequency * seconds)),
      specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665), temperatureCelsius: 25)
  }
  var durationSeconds: Double? { nil }
}

/// The amplitude of the `frequency` component of evenly spaced `values` sampled at `rate`.
func amplitude(of values: [Double], at frequency: Double, rate: Double) -> Double {
  var c = 0.0
  var s = 0.0
  for (index, value) in values.enumerated() {
    let phase = 2 * Double.pi * frequency * Double(index) / rate
    c += value * cos(phase)
    s += value * sin(phase)
  }
  return 2 * (c * c + s * s).squareRoot() / Double(values.count)
}

extension Duration {
  var nanoseconds: Int64 { nanosecondsValue }
}

/// A driver on a simulated board, and a minimal loop around it: what the firmware's loop does
/// with the driver, reduced to what these tests need.
final class Rig {
  let board: SimulatedMPU6050Board
  var driver: MPU6050Driver<SimulatedI2CBus>
  /// Samples that reached the "host", with the time the loop assigned.
  var samples: [(time: Timestamp, sample: MPU6050Sample)] = []
  /// Readings flagged as repeats (not counted as samples).
  var repeats = 0
  /// Ticks without a sample, by reason.
  var unavailable: [MPU6050Unavailable] = []
  /// Waits that timed out.
  var timeouts = 0
  /// FIFO drains that found an overflow.
  var overflows = 0
  private var stallsDone = 0

  init(
    motion: any MotionSource = RestingMotion(), unit: SimulatedMPU6050Unit = .typical(seed: 3),
    variant: SimulatedMPU6050Variant = .mpu6050, plan: SimulatedMPU6050FaultPlan = .none,
    configuration: MPU6050Configuration = .default, policy: MPU6050RecoveryPolicy = .default,
    clock: ManualClock = ManualClock()
  ) throws {
    board = SimulatedMPU6050Board(
      motion: motion, unit: unit, variant: variant, faultPlan: plan, clock: clock)
    driver = try MPU6050Driver(
      bus: board.bus, address: board.address, configuration: configuration, policy: policy)
  }

  var clock: ManualClock { board.clock }
  var now: Timestamp { board.clock.now() }

  /// Edges raised during start-up and discarded (as the loop discards warm-up samples).
  var flushedEdges = 0

  @discardableResult
  func start(selfTest: Bool = false) throws -> MPU6050StartupReport {
    var time = board.clock
    let report = try driver.start(clock: &time, selfTest: selfTest)
    // Edges queued while the chip settled belong to samples nobody will read.
    while case .edge = try board.line.waitForEdge(until: .zero) { flushedEdges += 1 }
    return report
  }

  private func honourStalls() {
    while stallsDone < board.faultPlan.hostStalls.count,
      board.faultPlan.hostStalls[stallsDone].at <= now
    {
      board.clock.advance(by: board.faultPlan.hostStalls[stallsDone].duration)
      stallsDone += 1
    }
  }

  /// Interrupt-driven: wait for each edge (deadline three periods), read at its timestamp; on a
  /// timeout, diagnose and poll.
  func run(until end: Timestamp) throws {
    let period = driver.configuration.samplePeriodNanoseconds
    while now < end {
      honourStalls()
      let deadline = min(end, now.advanced(byNanoseconds: 3 * period))
      switch try board.line.waitForEdge(until: deadline) {
      case .edge(let time):
        record(driver.readSample(at: time), at: time)
      case .timedOut:
        guard now < end else { return }
        timeouts += 1
        _ = driver.diagnoseMissingEdges(at: now)
        record(driver.pollDataReady(at: now), at: now)
      }
    }
  }

  /// The chip's sample count when the FIFO was enabled, less the records then already in it,
  /// and the driver's delivered count then: the baseline of `fifoAccounting`.
  private var fifoBaseline: (produced: UInt64, delivered: UInt64, lost: UInt64) = (0, 0, 0)

  /// Switches the driver to the FIFO and notes the baseline for `fifoAccounting`.
  func enableFIFO() {
    driver.enableFIFO(at: now)
    let chip = board.chip.statistics
    fifoBaseline = (
      chip.samplesProduced - UInt64(board.chip.fifoByteCount / 14),
      driver.counters.samplesDelivered, driver.counters.samplesLost
    )
  }

  /// Every sample the chip produced since the FIFO was enabled, and where it went: delivered,
  /// counted lost by the driver, or still in the FIFO. Samples produced while a FIFO reset had
  /// the FIFO switched off were never records at all; the driver counts them lost, and this
  /// accounting (unlike the chip's record counts) includes them.
  func fifoAccounting() -> (produced: UInt64, delivered: UInt64, lost: UInt64, inFIFO: UInt64) {
    let chip = board.chip.statistics
    return (
      chip.samplesProduced - fifoBaseline.produced,
      driver.counters.samplesDelivered - fifoBaseline.delivered,
      driver.counters.samplesLost - fifoBaseline.lost, UInt64(board.chip.fifoByteCount / 14)
    )
  }

  /// Polling the FIFO every `interval` on the clock: by default 9.5 ms, deliberately not the
  /// nominal 10 ms period, so the drains scan the chip's phase (see `MPU6050Driver.drainFIFO`).
  func runFIFO(until end: Timestamp, interval: Duration = .microseconds(9_500)) {
    var next = now
    while now < end {
      honourStalls()
      // Absolute deadlines, as the loop's timer: the time a drain takes does not shift them.
      next = next + interval
      if next < now { next = now + interval }
      board.clock.sleep(until: min(next, end))
      let drain = driver.drainFIFO(clock: board.clock) { sample, newer in
        samples.append((now, sample))
      }
      if drain.overflowed { overflows += 1 }
      if let reason = drain.unavailable { unavailable.append(reason) }
    }
  }

  private func record(_ reading: MPU6050Reading, at time: Timestamp) {
    switch reading {
    case .sample(let sample, let isRepeat):
      if isRepeat { repeats += 1 } else { samples.append((time, sample)) }
    case .unavailable(let reason):
      unavailable.append(reason)
    }
  }
}

func seconds(_ value: Double) -> Int64 { Int64(value * 1e9) }
