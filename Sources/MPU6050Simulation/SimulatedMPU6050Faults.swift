import HardwareAbstraction

/// The chip-level faults a simulated MPU-6050 can suffer. (Bus faults — NACK and EIO bursts,
/// lock-ups — belong to the bus's `I2CFaultPlan`; edge faults to the line's `EdgeFaultPlan`;
/// `SimulatedMPU6050FaultPlan` composes all three.)
public struct SimulatedMPU6050Faults: Hashable, Sendable {
  /// A brown-out: the supply dips at `at`; for `outage` the chip answers nothing (every
  /// transfer is NACKed), then it comes back as from power-on: every register at its reset
  /// value, asleep, the FIFO empty.
  public struct BrownOut: Hashable, Sendable {
    public var at: Timestamp
    public var outage: Duration
    public init(at: Timestamp, outage: Duration = .milliseconds(20)) {
      self.at = at
      self.outage = outage
    }
  }

  /// Frozen output: from `at`, the next `samples` samples leave the data registers (and the
  /// FIFO) with the last values written before, while data-ready keeps pulsing. A device reset
  /// ends it early (that is what a driver's re-initialisation is for).
  public struct Freeze: Hashable, Sendable {
    public var at: Timestamp
    public var samples: Int
    public init(at: Timestamp, samples: Int) {
      self.at = at
      self.samples = samples
    }
  }

  /// A register changes by itself at `at` (an ESD glitch, a marginal supply): as if `value`
  /// had been written to `register`.
  public struct RegisterCorruption: Hashable, Sendable {
    public var at: Timestamp
    public var register: UInt8
    public var value: UInt8
    public init(at: Timestamp, register: UInt8, value: UInt8) {
      self.at = at
      self.register = register
      self.value = value
    }
  }

  public var brownOuts: [BrownOut]
  public var freezes: [Freeze]
  public var registerCorruptions: [RegisterCorruption]

  public init(
    brownOuts: [BrownOut] = [], freezes: [Freeze] = [],
    registerCorruptions: [RegisterCorruption] = []
  ) {
    self.brownOuts = brownOuts
    self.freezes = freezes
    self.registerCorruptions = registerCorruptions
  }

  /// No chip faults.
  public static var none: SimulatedMPU6050Faults { SimulatedMPU6050Faults() }

  /// The faults as one time-ordered list (ties: brown-outs, then freezes, then corruptions).
  var schedule: [ScheduledChipEvent] {
    var events: [ScheduledChipEvent] = []
    events += brownOuts.map { ScheduledChipEvent(time: $0.at, order: 0, kind: .brownOut($0)) }
    events += freezes.map { ScheduledChipEvent(time: $0.at, order: 1, kind: .freeze($0)) }
    events += registerCorruptions.map {
      ScheduledChipEvent(time: $0.at, order: 2, kind: .corruption($0))
    }
    return events.sorted { ($0.time, $0.order) < ($1.time, $1.order) }
  }
}

struct ScheduledChipEvent {
  enum Kind {
    case brownOut(SimulatedMPU6050Faults.BrownOut)
    case freeze(SimulatedMPU6050Faults.Freeze)
    case corruption(SimulatedMPU6050Faults.RegisterCorruption)
  }
  var time: Timestamp
  var order: Int
  var kind: Kind
}
