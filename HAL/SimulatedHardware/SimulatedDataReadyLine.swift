import HardwareAbstraction

/// What a simulated data-ready line has done, for exact reconciliation in tests.
///
/// Every edge the source raised is accounted for:
/// `produced + duplicated == delivered + dropped + overflowed + pending`
/// (`isReconciled`). A HIL run that ends with this identity true and the driver's missed-sample
/// count matching `dropped + overflowed` has no silent losses.
public struct EdgeStatistics: Hashable, Sendable {
  /// Edges the source raised since the line was made (its chip's data-ready pulses).
  public var produced: UInt64 = 0
  /// Edges `waitForEdge` returned (duplicates included).
  public var delivered: UInt64 = 0
  /// Edges the fault plan removed (`missing` and `stuck`).
  public var dropped: UInt64 = 0
  /// Extra copies the fault plan added.
  public var duplicated: UInt64 = 0
  /// Edges lost because the queue was full when they arrived (the kernel's "event FIFO is
  /// full - event dropped").
  public var overflowed: UInt64 = 0
  /// Edges raised but not yet returned: queued, or still in flight (late).
  public var pending: UInt64 = 0
  /// Waits that ended with `.timedOut`.
  public var timeouts: UInt64 = 0
  /// Times the source answered with an edge that was not after the instant asked (a bug in the
  /// source; the line treats such an answer as "no edge").
  public var rejectedSourceEdges: UInt64 = 0

  public init() {}

  /// Whether every produced edge is delivered, dropped, overflowed or pending.
  public var isReconciled: Bool {
    produced + duplicated == delivered + dropped + overflowed + pending
  }
}

/// A data-ready line on simulated hardware: the rising edges of an `EdgeSource` (the simulated
/// chip's INT pin), delivered on the shared `ManualClock` through an `EdgeFaultPlan`.
///
/// **Time.** `waitForEdge(until:)` moves the clock: to the delivery time of the edge it returns
/// (the edge's own time, or later when the plan delays it), or to the deadline when no edge is
/// delivered first. The returned timestamp is the edge's time plus the plan's jitter, so it may
/// differ from the clock's reading after the call. A deadline in the past polls (a queued edge
/// or `.timedOut` at once; the clock never goes backwards).
///
/// **Queueing.** Like the kernel (gpiolib's per-line event FIFO), the line keeps edges that
/// happened while nobody waited and returns them, in order, each with its own timestamp, to
/// later calls. It remembers the last edge it took from the source and asks only for edges
/// after it, so a late loop loses and repeats nothing. The queue holds `queueCapacity` edges
/// (16, as the GPIO character device's v1 event FIFO, `DECLARE_KFIFO(events, …, 16)` in
/// `gpiolib-cdev.c`); when it is full an arriving edge is discarded and counted in
/// `overflowed`, as the kernel's v1 interface discards the newest event.
///
/// Edges raised before the line was made are not seen (the kernel queues events only after the
/// line is requested). The source is consulted only while `waitForEdge` runs or `statistics`
/// is read; a source must therefore answer for past instants as history (see `EdgeSource`).
///
/// A class because the loop and the test share it. Not `Sendable`: a simulated world belongs to
/// one thread. The per-edge path allocates nothing in a steady state (queues are rings made
/// once; the in-flight ring for late edges grows only if more edges are in flight than ever
/// before).
public final class SimulatedDataReadyLine: DataReadyLine {
  /// The clock the line reads and moves.
  public let clock: ManualClock
  /// Where the edges come from.
  public let source: any EdgeSource
  // The stored state below is `@exclusivity(unchecked)` (the runtime's dynamic exclusivity
  // checks, several per edge, were a large part of a replay's cost). Why no two accesses to it
  // can overlap:
  // - One thread at a time: the line is not `Sendable`, so Swift 6's strict concurrency never
  //   lets two threads reach it at once (a value can change hands only whole).
  // - No re-entrance: the storage is private, and every access to it inside this class is a
  //   plain load or store, or an in-place mutation whose only call out is into value-type code
  //   that cannot reach this line (`EdgeFaultPlan.fate`, `RingBuffer`'s methods, the counters'
  //   `+=`). The source and the clock are called between accesses, never during one, so a
  //   source that calls back into the line (reading `statistics`, say) starts a fresh access.
  // - Outside code reaches the plan only through `faultPlan`, which is computed (a get, then a
  //   set): an outside `inout` access holds a copy, never this storage. `lastSourceEdge` is
  //   read-only outside.

  /// The faults applied to each edge as the source raises it. Replace it at any time; edges
  /// already raised keep their fate.
  public var faultPlan: EdgeFaultPlan {
    get { storedFaultPlan }
    set { storedFaultPlan = newValue }
  }
  @exclusivity(unchecked) private var storedFaultPlan: EdgeFaultPlan
  /// The most edges the queue holds (at least 1).
  public let queueCapacity: Int

  /// The time of the last edge taken from the source (or the clock's reading when the line was
  /// made): the next edge asked for is strictly after it.
  @exclusivity(unchecked) public private(set) var lastSourceEdge: Timestamp

  private struct PendingEdge {
    /// The timestamp `waitForEdge` returns.
    var reported: Timestamp
    /// When it reaches the queue (its time plus any lateness; never before `reported`).
    var delivery: Timestamp
  }

  /// Edges that have reached the queue: what a `read()` of the line would return now.
  @exclusivity(unchecked) private var queue: RingBuffer<Timestamp>
  /// Edges raised but not yet in the queue (late ones), in delivery order.
  @exclusivity(unchecked) private var inFlight = RingBuffer(
    capacity: 64, growable: true, filler: PendingEdge(reported: .zero, delivery: .zero))
  @exclusivity(unchecked) private var lastDelivery: Timestamp?
  @exclusivity(unchecked) private var counters = EdgeStatistics()
  /// The source's answer (after the line's own check) for the edge after `after`, kept for the
  /// rest of one operation (`waitForEdge`, `statistics`, `queuedEdgeCount`) and forgotten when
  /// it returns. Without it a wait asks the source the same question up to three times per
  /// edge, each a call through the `EdgeSource` existential into the replay chip. Safe: within one
  /// operation nothing but the line and the clock runs, and `EdgeSource` promises that the
  /// source's configuration cannot change while the line waits, so the same question gets the
  /// same answer; between operations the driver may reconfigure the chip, so the answer is
  /// dropped.
  @exclusivity(unchecked) private var answer: (after: Timestamp, edge: Timestamp?)?

  /// A line delivering `source`'s edges on `clock` through `faultPlan`, queueing up to
  /// `queueCapacity` edges (values below 1 count as 1).
  public init(
    clock: ManualClock, source: any EdgeSource, faultPlan: EdgeFaultPlan = .none,
    queueCapacity: Int = 16
  ) {
    self.clock = clock
    self.source = source
    storedFaultPlan = faultPlan
    self.queueCapacity = max(1, queueCapacity)
    queue = RingBuffer(capacity: self.queueCapacity, growable: false, filler: .zero)
    lastSourceEdge = clock.now()
  }

  /// The counters, brought up to the clock's current time first (edges raised since the last
  /// wait are taken from the source and queued, as the kernel would have done meanwhile).
  public var statistics: EdgeStatistics {
    defer { answer = nil }
    catchUp(through: clock.now())
    var snapshot = counters
    snapshot.pending = UInt64(queue.count + inFlight.count)
    return snapshot
  }

  /// Edges ready to be returned at once (after catching up with the clock).
  public var queuedEdgeCount: Int {
    defer { answer = nil }
    catchUp(through: clock.now())
    return queue.count
  }

  public func waitForEdge(until deadline: Timestamp) throws(DataReadyError) -> EdgeWait {
    defer { answer = nil }
    let now = clock.now()
    catchUp(through: now)
    if let reported = queue.popFirst() {
      counters.delivered += 1
      return .edge(reported)
    }
    // Nothing queued: let simulated time run until the first delivery or the deadline.
    while true {
      // The first edge in flight is delivered now if it is due by the deadline and before the
      // source's next edge. When it is due no later than the edge just taken (the usual case,
      // an edge without lateness), the next edge, strictly later, need not be asked for.
      if let delivery = inFlight.first?.delivery, delivery <= deadline,
        delivery <= lastSourceEdge || (nextSourceEdge().map { delivery <= $0 } ?? true)
      {
        clock.advance(to: delivery)
        arrive(through: delivery)
        if let reported = queue.popFirst() {
          counters.delivered += 1
          return .edge(reported)
        }
        continue
      }
      guard let edge = nextSourceEdge(), edge <= deadline else { break }
      if let reported = take(edge, handingOver: true) {
        clock.advance(to: edge)
        counters.delivered += 1
        return .edge(reported)
      }
    }
    clock.advance(to: deadline)
    counters.timeouts += 1
    return .timedOut
  }

  /// Takes every edge the source raised up to `horizon` and moves those due into the queue.
  private func catchUp(through horizon: Timestamp) {
    while let edge = nextSourceEdge(), edge <= horizon {
      take(edge)
    }
    arrive(through: horizon)
  }

  /// The source's next edge after the last one taken, or `nil`.
  private func nextSourceEdge() -> Timestamp? {
    let after = lastSourceEdge
    if let answer, answer.after == after { return answer.edge }
    var edge = source.nextRisingEdge(after: after)
    if let answered = edge, answered <= after {
      counters.rejectedSourceEdges += 1
      edge = nil
    }
    answer = (after, edge)
    return edge
  }

  /// Takes the source's edge at `edge` and applies the fault plan.
  ///
  /// `handingOver`: the caller is `waitForEdge`, with the queue empty, about to let time run to
  /// this edge. An edge then delivered the instant it is raised, alone in flight and not
  /// doubled, is what the next turn of the wait would move through the in-flight ring and the
  /// queue and hand out at once; it is returned instead (its reported time), for the caller
  /// to hand out directly — the usual edge of a replay, spared two rings.
  @discardableResult
  private func take(_ edge: Timestamp, handingOver: Bool = false) -> Timestamp? {
    lastSourceEdge = edge
    let index = counters.produced
    counters.produced += 1
    let fate = storedFaultPlan.fate(ofEdge: index, at: edge)
    if fate.isDropped {
      counters.dropped += 1
      return nil
    }
    let reported = edge.advanced(byNanoseconds: fate.jitterNanoseconds)
    var delivery = edge.advanced(byNanoseconds: fate.latenessNanoseconds)
    // The kernel cannot hand out an event before stamping it, nor out of order.
    if reported > delivery { delivery = reported }
    if let lastDelivery, lastDelivery > delivery { delivery = lastDelivery }
    lastDelivery = delivery
    if handingOver, delivery == edge, !fate.isDuplicated, inFlight.isEmpty { return reported }
    let pending = PendingEdge(reported: reported, delivery: delivery)
    inFlight.append(pending)
    if fate.isDuplicated {
      counters.duplicated += 1
      inFlight.append(pending)
    }
    return nil
  }

  /// Moves the in-flight edges delivered by `horizon` into the queue, counting overflows.
  private func arrive(through horizon: Timestamp) {
    while let next = inFlight.first, next.delivery <= horizon {
      _ = inFlight.popFirst()
      if !queue.append(next.reported) {
        counters.overflowed += 1
      }
    }
  }
}
