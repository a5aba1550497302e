import HardwareAbstraction

/// Error in the timestamps the simulated line reports, relative to the true edge times.
///
/// Models the spread between a real edge and the kernel's stamp of it (interrupt latency,
/// a busy CPU). The reported timestamp moves; the sample the chip produced does not.
public enum EdgeJitter: Hashable, Sendable {
  /// Timestamps are the true edge times.
  case none
  /// Gaussian error with this standard deviation, in nanoseconds, rounded to whole nanoseconds.
  case gaussian(standardDeviationNanoseconds: Double)
  /// Uniform error in `−maximum … +maximum` nanoseconds (inclusive).
  case uniform(maximumNanoseconds: Int64)
}

/// What can go wrong between the chip's INT pin and the process waiting on the line.
public enum EdgeFaultKind: Hashable, Sendable {
  /// The edge is lost (a missed interrupt, a glitch too short for the GPIO block).
  case missing
  /// No edge gets through: the INT pin is not wired, or its wire is broken. Same effect as
  /// `missing`, counted apart so a test can tell a broken wire from sporadic losses.
  case stuck
  /// The edge is delivered this long after it happened (a slow interrupt thread): the line
  /// moves the clock to the later delivery time; the timestamp stays the edge's own. A late
  /// edge holds back the ones behind it, as the kernel's FIFO keeps order.
  case late(Duration)
  /// The edge is reported twice, with the same timestamp (a bouncing line, a double IRQ).
  case duplicated
}

/// One rule of an `EdgeFaultPlan`.
public struct EdgeFault: Hashable, Sendable {
  public var kind: EdgeFaultKind
  /// Which edges. The event index counts the edges the line has taken from its source
  /// (0-based); the time is the edge's own time.
  public var schedule: FaultSchedule
  /// How many edges this rule has struck so far (the plan updates it).
  public internal(set) var injected: UInt64 = 0

  public init(_ kind: EdgeFaultKind, schedule: FaultSchedule) {
    self.kind = kind
    self.schedule = schedule
  }

  /// Edges lost where `schedule` says (`.events(10..<13)`, `.randomly(probability: 0.01)`…).
  public static func missing(_ schedule: FaultSchedule) -> EdgeFault {
    EdgeFault(.missing, schedule: schedule)
  }

  /// The INT wire broken from `start` for `duration` (for ever when `nil`): no edge arrives.
  public static func brokenWire(from start: Timestamp, for duration: Duration? = nil) -> EdgeFault {
    EdgeFault(.stuck, schedule: .from(start, for: duration))
  }

  /// The INT pin not wired at all: no edge ever arrives, and the loop must fall back to polling.
  public static var notWired: EdgeFault { EdgeFault(.stuck, schedule: .always) }

  /// Edges delivered `lateness` after they happened, where `schedule` says.
  public static func late(by lateness: Duration, _ schedule: FaultSchedule) -> EdgeFault {
    EdgeFault(.late(lateness), schedule: schedule)
  }

  /// Edges reported twice, where `schedule` says.
  public static func duplicated(_ schedule: FaultSchedule) -> EdgeFault {
    EdgeFault(.duplicated, schedule: schedule)
  }
}

/// How many edges each kind of fault struck.
public struct EdgeFaultCounts: Hashable, Sendable {
  /// Edges lost to `.missing` rules.
  public var missing: UInt64 = 0
  /// Edges lost to `.stuck` rules.
  public var stuck: UInt64 = 0
  /// Edges delivered late (each counted once, however many `.late` rules struck it).
  public var late: UInt64 = 0
  /// Edges reported twice.
  public var duplicated: UInt64 = 0
  /// Edges whose reported timestamp differs from the true time.
  public var jittered: UInt64 = 0

  public init() {}

  /// Edges removed by the plan: `missing + stuck`.
  public var dropped: UInt64 { missing + stuck }
}

/// What the plan decided for one edge.
public struct EdgeFate: Hashable, Sendable {
  /// The edge never reaches the line.
  public var isDropped = false
  /// The reported timestamp minus the true edge time, nanoseconds.
  public var jitterNanoseconds: Int64 = 0
  /// How long after the edge it is delivered, nanoseconds (the sum of the `.late` rules that
  /// struck it).
  public var latenessNanoseconds: Int64 = 0
  /// The edge is reported twice.
  public var isDuplicated = false

  public init() {}
}

/// The faults a `SimulatedDataReadyLine` applies to the edges its source raises.
///
/// A value: hand it to the line, read the line's copy back (`line.faultPlan.injected`) to see
/// what was injected. For each edge, drop rules (`.missing`, `.stuck`) are tried first, in
/// order; the first that strikes removes the edge and nothing else is decided (or drawn) for
/// it. Otherwise every `.late` rule that strikes adds its lateness, the first `.duplicated`
/// rule that strikes doubles it, and finally the jitter is drawn. Random draws come from the
/// plan's own `SeededGenerator`, so the outcome is a pure function of the plan, its seed and
/// the edge sequence.
///
/// Example — timestamps with 20 µs of gaussian jitter, the wire broken from 30 s for 2 s, one
/// edge in a thousand lost and one in five hundred 3 ms late:
///
///     EdgeFaultPlan(
///       jitter: .gaussian(standardDeviationNanoseconds: 20_000),
///       faults: [
///         .brokenWire(from: t30, for: .seconds(2)),
///         .missing(.randomly(probability: 0.001)),
///         .late(by: .milliseconds(3), .randomly(probability: 0.002)),
///       ], seed: 11)
public struct EdgeFaultPlan: Hashable, Sendable {
  /// The timestamp error applied to every delivered edge.
  public var jitter: EdgeJitter
  /// The rules.
  public var faults: [EdgeFault]
  /// What has been injected so far.
  public private(set) var injected = EdgeFaultCounts()
  private var generator: SeededGenerator

  public init(jitter: EdgeJitter = .none, faults: [EdgeFault] = [], seed: UInt64 = 0) {
    self.jitter = jitter
    self.faults = faults
    generator = SeededGenerator(seed: seed)
  }

  /// No faults, no jitter.
  public static var none: EdgeFaultPlan { EdgeFaultPlan() }

  /// Decides the fate of edge number `index` (0-based), which happened at `time`, and counts it.
  /// Allocation-free.
  public mutating func fate(ofEdge index: UInt64, at time: Timestamp) -> EdgeFate {
    var fate = EdgeFate()
    // A plan without rules or jitter (a replay of a recording without duplicated edges, most
    // simulations) decides nothing: spare the two walks over no rules and the jitter switch,
    // some fifty instructions on every edge.
    if faults.isEmpty, case .none = jitter { return fate }
    for position in faults.indices {
      let fault = faults[position]
      switch fault.kind {
      case .missing, .stuck:
        guard strikes(position, index: index, time: time) else { continue }
        if fault.kind == .missing { injected.missing += 1 } else { injected.stuck += 1 }
        fate.isDropped = true
        return fate
      case .late, .duplicated:
        continue
      }
    }
    for position in faults.indices {
      switch faults[position].kind {
      case .late(let lateness):
        guard strikes(position, index: index, time: time) else { continue }
        fate.latenessNanoseconds += max(0, lateness.nanosecondsValue)
      case .duplicated:
        guard !fate.isDuplicated, strikes(position, index: index, time: time) else { continue }
        fate.isDuplicated = true
        injected.duplicated += 1
      case .missing, .stuck:
        continue
      }
    }
    if fate.latenessNanoseconds > 0 { injected.late += 1 }
    fate.jitterNanoseconds = drawJitter()
    if fate.jitterNanoseconds != 0 { injected.jittered += 1 }
    return fate
  }

  private mutating func strikes(_ position: Int, index: UInt64, time: Timestamp) -> Bool {
    let hit = faults[position].schedule.hits(
      index: index, at: time, alreadyHit: faults[position].injected, generator: &generator)
    if hit { faults[position].injected += 1 }
    return hit
  }

  private mutating func drawJitter() -> Int64 {
    switch jitter {
    case .none:
      return 0
    case .gaussian(let standardDeviation):
      let value = (generator.gaussian() * standardDeviation).rounded()
      // A non-finite or absurd deviation (beyond ±100 years) is treated as no jitter.
      guard value.isFinite, abs(value) < 3e18 else { return 0 }
      return Int64(value)
    case .uniform(let maximum):
      guard maximum > 0, maximum < Int64.max / 2 else { return 0 }
      let span = UInt64(2 * maximum + 1)
      // Lemire's multiply-high: an (almost exactly) uniform integer in 0 ..< span.
      let offset = generator.next().multipliedFullWidth(by: span).high
      return Int64(offset) - maximum
    }
  }
}
