import HardwareAbstraction

/// The bus faults a plan can inject, each the way a Linux adapter reports it
/// (`Documentation/i2c/fault-codes.rst`).
public enum I2CFaultKind: String, CaseIterable, Hashable, Sendable {
  /// The target did not acknowledge (`EREMOTEIO` by default, as the Raspberry Pi's
  /// `i2c-bcm2835` reports it; `ENXIO` on other adapters): a loose wire, a chip in reset.
  case notAcknowledged
  /// The vague `EIO`.
  case ioError
  /// The transfer timed out (`ETIMEDOUT`): a target stretching SCL.
  case timedOut
  /// The bus stayed busy (`EBUSY`): a target holding SDA low, the classic lock-up.
  case busBusy
  /// Another master won arbitration (`EAGAIN`).
  case arbitrationLost
  /// The target broke the protocol (`EPROTO`).
  case protocolViolation

  /// The `I2CError.Kind` the bus throws.
  public var errorKind: I2CError.Kind {
    switch self {
    case .notAcknowledged: .notAcknowledged
    case .ioError: .ioError
    case .timedOut: .timedOut
    case .busBusy: .busBusy
    case .arbitrationLost: .arbitrationLost
    case .protocolViolation: .protocolViolation
    }
  }

  /// The errno thrown with it unless the fault names another.
  public var defaultErrno: Errno {
    switch self {
    case .notAcknowledged: .remoteIO
    case .ioError: .ioError
    case .timedOut: .timedOut
    case .busBusy: .busy
    case .arbitrationLost: .tryAgain
    case .protocolViolation: .protocolError
    }
  }
}

/// How many faults of each kind were injected: what a test reconciles with the driver's own
/// error counters.
public struct I2CFaultCounts: Hashable, Sendable {
  public var notAcknowledged: UInt64 = 0
  public var ioError: UInt64 = 0
  public var timedOut: UInt64 = 0
  public var busBusy: UInt64 = 0
  public var arbitrationLost: UInt64 = 0
  public var protocolViolation: UInt64 = 0

  public init() {}

  /// The count for one kind.
  public subscript(kind: I2CFaultKind) -> UInt64 {
    get {
      switch kind {
      case .notAcknowledged: notAcknowledged
      case .ioError: ioError
      case .timedOut: timedOut
      case .busBusy: busBusy
      case .arbitrationLost: arbitrationLost
      case .protocolViolation: protocolViolation
      }
    }
    set {
      switch kind {
      case .notAcknowledged: notAcknowledged = newValue
      case .ioError: ioError = newValue
      case .timedOut: timedOut = newValue
      case .busBusy: busBusy = newValue
      case .arbitrationLost: arbitrationLost = newValue
      case .protocolViolation: protocolViolation = newValue
      }
    }
  }

  /// All kinds together.
  public var total: UInt64 {
    notAcknowledged + ioError + timedOut + busBusy + arbitrationLost + protocolViolation
  }
}

/// One rule of an `I2CFaultPlan`: which transfers fail (`filter`), when (`schedule`), and how
/// (`kind`, `errno`, and how long the failing transfer holds the bus).
public struct I2CFault: Hashable, Sendable {
  /// The error the transfer fails with.
  public var kind: I2CFaultKind
  /// The errno carried by the thrown `I2CError`.
  public var errno: Errno
  /// When it strikes. The event index is the bus's transaction index (0-based, counting every
  /// transaction the bus started, failed or not); the time is the clock's reading when the
  /// transfer starts.
  public var schedule: FaultSchedule
  /// Which transfers it may strike.
  public var filter: I2CTransferFilter
  /// How long each failed transfer takes before it returns: the simulated bus moves the clock
  /// this far, as an adapter waits out its timeout (Linux's default adapter timeout is 1 s).
  /// Zero by default.
  public var duration: Duration
  /// How many transfers this rule has failed so far (the plan updates it).
  public internal(set) var injected: UInt64 = 0

  public init(
    _ kind: I2CFaultKind, schedule: FaultSchedule, filter: I2CTransferFilter = .any,
    errno: Errno? = nil, duration: Duration = .zero
  ) {
    self.kind = kind
    self.errno = errno ?? kind.defaultErrno
    self.schedule = schedule
    self.filter = filter
    self.duration = duration
  }

  /// `count` consecutive matching transactions fail, starting with transaction `index`
  /// (e.g. a NACK burst: `.burst(.notAcknowledged, count: 3, fromTransaction: 120)`).
  public static func burst(
    _ kind: I2CFaultKind, count: UInt64, fromTransaction index: UInt64,
    filter: I2CTransferFilter = .any, errno: Errno? = nil, duration: Duration = .zero
  ) -> I2CFault {
    I2CFault(
      kind, schedule: .starting(atEvent: index, count: count), filter: filter, errno: errno,
      duration: duration)
  }

  /// The first `count` matching transactions at or after `instant` fail.
  public static func burst(
    _ kind: I2CFaultKind, count: UInt64, from instant: Timestamp,
    filter: I2CTransferFilter = .any, errno: Errno? = nil, duration: Duration = .zero
  ) -> I2CFault {
    I2CFault(
      kind, schedule: .starting(at: instant, count: count), filter: filter, errno: errno,
      duration: duration)
  }

  /// A bus lock-up: from `start` for `length`, every matching transfer fails with `kind`
  /// (`.busBusy` — SDA held low — or `.timedOut`); the first transfer after the window works.
  public static func lockUp(
    from start: Timestamp, for length: Duration, failingWith kind: I2CFaultKind = .busBusy,
    filter: I2CTransferFilter = .any, duration: Duration = .zero
  ) -> I2CFault {
    I2CFault(kind, schedule: .from(start, for: length), filter: filter, duration: duration)
  }

  /// Each matching transfer fails independently with `probability` (soak tests).
  public static func random(
    _ kind: I2CFaultKind, probability: Double, filter: I2CTransferFilter = .any,
    errno: Errno? = nil, duration: Duration = .zero
  ) -> I2CFault {
    I2CFault(
      kind, schedule: .randomly(probability: probability), filter: filter, errno: errno,
      duration: duration)
  }
}

/// What the plan decided for one transfer.
public struct I2CInjection: Hashable, Sendable {
  /// The fault kind.
  public var kind: I2CFaultKind
  /// The errno to report.
  public var errno: Errno
  /// How long the failed transfer takes.
  public var duration: Duration
  /// The index in `I2CFaultPlan.faults` of the rule that struck.
  public var faultIndex: Int
}

/// The faults a `SimulatedI2CBus` injects, consulted before every transaction.
///
/// A value: build it, hand it to the bus, read the bus's copy back (`bus.faultPlan.injected`)
/// to see exactly what was injected. Rules are tried in order and the first that strikes
/// decides; later rules are not consulted for that transfer (and draw no random numbers), so
/// the outcome is a pure function of the plan, its seed and the sequence of transfers.
///
/// Example — three NACKs on the sample read from the 50th transaction, a 2 s lock-up at t = 10 s,
/// and one transfer in a thousand failing with EIO:
///
///     I2CFaultPlan([
///       .burst(.notAcknowledged, count: 3, fromTransaction: 50, filter: .reads(at: .mpu6050)),
///       .lockUp(from: t10, for: .seconds(2)),
///       .random(.ioError, probability: 0.001),
///     ], seed: 7)
public struct I2CFaultPlan: Hashable, Sendable {
  /// The rules, tried in order.
  public var faults: [I2CFault]
  /// What has been injected so far, per kind.
  public private(set) var injected = I2CFaultCounts()
  private var generator: SeededGenerator

  /// A plan with `faults`; `seed` drives the random schedules (its own generator, so a plan's
  /// draws do not depend on any other random consumer).
  public init(_ faults: [I2CFault] = [], seed: UInt64 = 0) {
    self.faults = faults
    generator = SeededGenerator(seed: seed)
  }

  /// No faults.
  public static var none: I2CFaultPlan { I2CFaultPlan() }

  /// Decides the fate of transaction `index`, `transfer`, starting at `time`: `nil` lets it
  /// through; otherwise the injection is counted and returned. Allocation-free.
  public mutating func fault(for transfer: I2CTransfer, index: UInt64, at time: Timestamp)
    -> I2CInjection?
  {
    if faults.isEmpty { return nil }  // the usual plan, asked on every transfer
    for position in faults.indices {
      let fault = faults[position]
      guard fault.filter.matches(transfer) else { continue }
      guard
        fault.schedule.hits(
          index: index, at: time, alreadyHit: fault.injected, generator: &generator)
      else { continue }
      faults[position].injected += 1
      injected[fault.kind] += 1
      return I2CInjection(
        kind: fault.kind, errno: fault.errno, duration: fault.duration, faultIndex: position)
    }
    return nil
  }
}
