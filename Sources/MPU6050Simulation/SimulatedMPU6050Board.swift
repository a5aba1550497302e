import HardwareAbstraction
import MotionScenarios
import SimulatedHardware

/// A fault plan for a simulated MPU-6050 board: the chip's own faults, the bus's and the
/// data-ready line's, composed under one name so a HIL run can say `--faults nack-burst`.
///
/// Times are absolute on the board's clock; the named plans take the instant their faults begin.
/// What each plan injects can be read back after a run (`SimulatedMPU6050Board.injected`) and
/// reconciled exactly with the driver's counters.
public struct SimulatedMPU6050FaultPlan: Hashable, Sendable {
  /// A stretch of time in which the host does not touch the chip (a stalled process): the HIL
  /// runner moves the clock over it without running the loop. Nothing in the simulated
  /// hardware can make the host stall; the plan only says when.
  public struct HostStall: Hashable, Sendable {
    public var at: Timestamp
    public var duration: Duration
    public init(at: Timestamp, duration: Duration) {
      self.at = at
      self.duration = duration
    }
  }

  /// A self-test actuator that responds too little or too much.
  public struct SelfTestDamage: Hashable, Sendable {
    public enum Sensor: String, Hashable, Sendable { case gyro, accelerometer }
    public var sensor: Sensor
    /// 0 = x, 1 = y, 2 = z.
    public var axis: Int
    /// The response relative to factory trim (0.5: half, a −50 % deviation).
    public var responseRatio: Double
    public init(sensor: Sensor, axis: Int, responseRatio: Double) {
      self.sensor = sensor
      self.axis = axis
      self.responseRatio = responseRatio
    }
  }

  /// The plan's name, as on a command line.
  public var name: String
  /// One line saying what it does.
  public var summary: String
  /// Chip faults: brown-outs, frozen output, register corruption.
  public var chip: SimulatedMPU6050Faults
  /// Bus faults: NACK/EIO bursts, lock-ups.
  public var bus: I2CFaultPlan
  /// Data-ready faults: missing, late, duplicated edges, jitter, a broken or absent wire.
  public var edges: EdgeFaultPlan
  /// Another part instead of the board's (a clone or relabelled WHO_AM_I).
  public var variant: SimulatedMPU6050Variant?
  /// A damaged self-test axis.
  public var selfTestDamage: SelfTestDamage?
  /// When the host must not read (for the HIL runner to honour).
  public var hostStalls: [HostStall]
  /// Whether the INT pin is wired; `false` forces the loop onto the FIFO fallback.
  public var interruptWired: Bool

  public init(
    name: String, summary: String, chip: SimulatedMPU6050Faults = .none,
    bus: I2CFaultPlan = .none, edges: EdgeFaultPlan = .none,
    variant: SimulatedMPU6050Variant? = nil, selfTestDamage: SelfTestDamage? = nil,
    hostStalls: [HostStall] = [], interruptWired: Bool = true
  ) {
    self.name = name
    self.summary = summary
    self.chip = chip
    self.bus = bus
    self.edges = edges
    self.variant = variant
    self.selfTestDamage = selfTestDamage
    self.hostStalls = hostStalls
    self.interruptWired = interruptWired
  }

  /// No faults.
  public static var none: SimulatedMPU6050FaultPlan {
    SimulatedMPU6050FaultPlan(name: "none", summary: "no faults")
  }

  /// The named plans, with one line each: what `plumb-hil faults` lists.
  public static let catalogue: [(name: String, summary: String)] = [
    ("none", "no faults"),
    ("nack-burst", "5 reads NACKed in a row (EREMOTEIO): one failed tick, retries"),
    ("eio-burst", "20 transfers fail with EIO in a row: failed ticks, then a re-initialisation"),
    (
      "bus-lockup",
      "the bus is stuck busy (SDA held low) for 1.5 s: re-initialisation with back-off"
    ),
    (
      "brownout", "the chip browns out (20 ms unpowered) and comes back asleep with reset registers"
    ),
    ("frozen-registers", "the data registers stop changing for 200 samples"),
    ("register-corruption", "GYRO_CONFIG changes by itself to ±2000 °/s"),
    ("clone-whoami", "the chip answers WHO_AM_I 0x72, an MPU-6050 clone"),
    ("icm20689", "the board carries an ICM-20689 (WHO_AM_I 0x98) sold as an MPU-6050"),
    ("self-test-failure", "the gyroscope's Y self-test responds at half its factory trim"),
    ("missing-edges", "two single data-ready edges are lost, 1 s apart"),
    ("late-edges", "data-ready edges arrive 3 ms late for 1 s"),
    ("duplicated-edges", "three data-ready edges are reported twice"),
    ("edge-jitter", "edge timestamps carry 50 µs of gaussian jitter"),
    ("broken-wire", "the INT wire is broken for 2 s: polling fallback, then back"),
    ("not-wired", "the INT pin is not wired: the FIFO fallback all along"),
    ("fifo-overflow", "INT not wired and the host stalls 1 s: the FIFO overflows"),
    ("soak", "random NACKs, EIO, edge losses, duplicates, lateness and jitter, brown-outs"),
  ]

  /// The names of the plans, in catalogue order.
  public static var names: [String] { catalogue.map(\.name) }

  /// The plan called `name`, its faults starting at `start` (random parts seeded by `seed`;
  /// `address` is the chip's, for bus filters), or `nil` for an unknown name.
  public static func named(
    _ name: String, start: Timestamp, seed: UInt64 = 1, address: I2CAddress = .mpu6050
  ) -> SimulatedMPU6050FaultPlan? {
    guard let summary = catalogue.first(where: { $0.name == name })?.summary else { return nil }
    var plan = SimulatedMPU6050FaultPlan(name: name, summary: summary)
    let second: Duration = .seconds(1)
    switch name {
    case "none":
      break
    case "nack-burst":
      plan.bus = I2CFaultPlan(
        [.burst(.notAcknowledged, count: 5, from: start, filter: .reads(at: address))], seed: seed)
    case "eio-burst":
      plan.bus = I2CFaultPlan([.burst(.ioError, count: 20, from: start)], seed: seed)
    case "bus-lockup":
      plan.bus = I2CFaultPlan([.lockUp(from: start, for: .milliseconds(1500))], seed: seed)
    case "brownout":
      plan.chip = SimulatedMPU6050Faults(brownOuts: [.init(at: start, outage: .milliseconds(20))])
    case "frozen-registers":
      plan.chip = SimulatedMPU6050Faults(freezes: [.init(at: start, samples: 200)])
    case "register-corruption":
      plan.chip = SimulatedMPU6050Faults(
        registerCorruptions: [.init(at: start, register: 0x1B, value: 0x18)])
    case "clone-whoami":
      plan.variant = .clone(whoAmI: 0x72)
    case "icm20689":
      plan.variant = .icm20689
    case "self-test-failure":
      plan.selfTestDamage = SelfTestDamage(sensor: .gyro, axis: 1, responseRatio: 0.5)
    case "missing-edges":
      plan.edges = EdgeFaultPlan(
        faults: [
          .missing(.starting(at: start, count: 1)),
          .missing(.starting(at: start + second, count: 1)),
        ], seed: seed)
    case "late-edges":
      plan.edges = EdgeFaultPlan(
        faults: [.late(by: .milliseconds(3), .from(start, for: second))], seed: seed)
    case "duplicated-edges":
      plan.edges = EdgeFaultPlan(
        faults: [.duplicated(.starting(at: start, count: 3))], seed: seed)
    case "edge-jitter":
      plan.edges = EdgeFaultPlan(
        jitter: .gaussian(standardDeviationNanoseconds: 50_000), seed: seed)
    case "broken-wire":
      plan.edges = EdgeFaultPlan(
        faults: [.brokenWire(from: start, for: .seconds(2))], seed: seed)
    case "not-wired":
      plan.edges = EdgeFaultPlan(faults: [.notWired], seed: seed)
      plan.interruptWired = false
    case "fifo-overflow":
      plan.edges = EdgeFaultPlan(faults: [.notWired], seed: seed)
      plan.interruptWired = false
      plan.hostStalls = [HostStall(at: start, duration: .seconds(1))]
    case "soak":
      plan.bus = I2CFaultPlan(
        [.random(.notAcknowledged, probability: 1e-3), .random(.ioError, probability: 2e-4)],
        seed: seed)
      plan.edges = EdgeFaultPlan(
        jitter: .gaussian(standardDeviationNanoseconds: 20_000),
        faults: [
          .missing(.randomly(probability: 1e-3)),
          .late(by: .milliseconds(2), .randomly(probability: 1e-3)),
          .duplicated(.randomly(probability: 5e-4)),
        ], seed: seed &+ 1)
      // A brown-out every ten minutes of the first day, at seeded offsets within each.
      var random = SeededGenerator(seed: seed, stream: 7)
      var brownOuts: [SimulatedMPU6050Faults.BrownOut] = []
      for window in 0..<144 {
        let offset = Int64(random.nextUniform() * 600e9)
        brownOuts.append(
          .init(
            at: start.advanced(byNanoseconds: Int64(window) * 600_000_000_000 + offset),
            outage: .milliseconds(20)))
      }
      plan.chip = SimulatedMPU6050Faults(brownOuts: brownOuts)
    default:
      return nil
    }
    return plan
  }
}

/// What a board's faults have injected so far, collected from its parts for reconciliation.
public struct SimulatedMPU6050Injection: Hashable, Sendable {
  /// Bus faults injected by the plan, per kind.
  public var busFaults: I2CFaultCounts
  /// Transfers the chip NACKed itself (resetting, or unpowered in a brown-out).
  public var chipNotAcknowledged: UInt64
  /// Edge faults injected, per kind.
  public var edgeFaults: EdgeFaultCounts
  /// The line's accounting of edges.
  public var edges: EdgeStatistics
  /// The chip's own accounting (samples, resets, brown-outs, freezes, FIFO).
  public var chip: SimulatedMPU6050.Statistics
}

/// A simulated board: one clock, an MPU-6050 on a simulated I2C bus at `address`, and its INT
/// pin on a simulated data-ready line, with a fault plan applied to all three.
///
///     let board = SimulatedMPU6050Board(motion: RestingMotion(), faultPlan: plan)
///     var driver = try MPU6050Driver(bus: board.bus, address: board.address)
///     var clock = board.clock
///     _ = try driver.start(clock: &clock)
///     … board.line.waitForEdge(until:) … driver.readSample(at:) …
///
/// Classes throughout (clock, bus, line, chip), shared by the loop and the test; one thread.
public final class SimulatedMPU6050Board {
  public let clock: ManualClock
  public let chip: SimulatedMPU6050
  public let bus: SimulatedI2CBus
  public let line: SimulatedDataReadyLine
  public let address: I2CAddress
  public let faultPlan: SimulatedMPU6050FaultPlan

  /// Builds the board. The plan's `variant` replaces `variant`; its `selfTestDamage` alters
  /// `unit`. The motion's time 0 is the clock's reading now.
  public init(
    motion: any MotionSource, unit: SimulatedMPU6050Unit = .typical(seed: 1),
    variant: SimulatedMPU6050Variant = .mpu6050, faultPlan: SimulatedMPU6050FaultPlan = .none,
    address: I2CAddress = .mpu6050, clock: ManualClock = ManualClock(),
    wireTiming: I2CWireTiming = .instantaneous
  ) {
    var unit = unit
    if let damage = faultPlan.selfTestDamage, (0..<3).contains(damage.axis) {
      switch (damage.sensor, damage.axis) {
      case (.gyro, 0): unit.gyroSelfTestResponseRatio.x = damage.responseRatio
      case (.gyro, 1): unit.gyroSelfTestResponseRatio.y = damage.responseRatio
      case (.gyro, _): unit.gyroSelfTestResponseRatio.z = damage.responseRatio
      case (.accelerometer, 0): unit.accelerometerSelfTestResponseRatio.x = damage.responseRatio
      case (.accelerometer, 1): unit.accelerometerSelfTestResponseRatio.y = damage.responseRatio
      case (.accelerometer, _): unit.accelerometerSelfTestResponseRatio.z = damage.responseRatio
      }
    }
    self.clock = clock
    self.address = address
    self.faultPlan = faultPlan
    chip = SimulatedMPU6050(
      clock: clock, motion: motion, unit: unit, variant: faultPlan.variant ?? variant,
      faults: faultPlan.chip)
    bus = SimulatedI2CBus(clock: clock, faultPlan: faultPlan.bus, wireTiming: wireTiming)
    bus.attach(chip, at: address)
    line = SimulatedDataReadyLine(clock: clock, source: chip, faultPlan: faultPlan.edges)
  }

  /// What has been injected so far, from the bus, the line and the chip.
  public var injected: SimulatedMPU6050Injection {
    SimulatedMPU6050Injection(
      busFaults: bus.faultPlan.injected, chipNotAcknowledged: chip.statistics.notAcknowledged,
      edgeFaults: line.faultPlan.injected, edges: line.statistics, chip: chip.statistics)
  }
}
