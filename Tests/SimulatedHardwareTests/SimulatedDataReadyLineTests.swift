import HardwareAbstraction
import SimulatedHardware
import Testing

/// A pin that rises every `period`, starting at `first`, while `isEnabled`.
final class PeriodicEdgeSource: EdgeSource {
  var first: Timestamp
  var periodNanoseconds: Int64
  var isEnabled = true
  private(set) var queries = 0

  init(first: Timestamp, period: Duration) {
    self.first = first
    periodNanoseconds = period.nanosecondsValue
  }

  func nextRisingEdge(after instant: Timestamp) -> Timestamp? {
    queries += 1
    guard isEnabled else { return nil }
    if instant < first { return first }
    let elapsed = instant.nanoseconds(since: first)
    return first.advanced(byNanoseconds: (elapsed / periodNanoseconds + 1) * periodNanoseconds)
  }
}

/// A pin that rises at the listed instants only.
final class ListedEdgeSource: EdgeSource {
  let edges: [Timestamp]

  init(_ edges: [Timestamp]) {
    self.edges = edges.sorted()
  }

  func nextRisingEdge(after instant: Timestamp) -> Timestamp? {
    edges.first { $0 > instant }
  }
}

/// A broken source that answers with the instant it was asked about.
final class EchoingEdgeSource: EdgeSource {
  func nextRisingEdge(after instant: Timestamp) -> Timestamp? { instant }
}

/// The timestamps of `count` successive waits (`nil` for a timeout), each with `deadline`.
func waitMany(_ line: SimulatedDataReadyLine, count: Int, deadline: Timestamp) -> [Timestamp?] {
  (0..<count).map { _ in
    switch try? line.waitForEdge(until: deadline) {
    case .edge(let time): time
    default: nil
    }
  }
}

/// A line on a 100 Hz source whose first edge is at 1.010 s, with the clock at 1.000 s.
func hundredHertzLine(faultPlan: EdgeFaultPlan = .none, queueCapacity: Int = 16)
  -> (clock: ManualClock, source: PeriodicEdgeSource, line: SimulatedDataReadyLine)
{
  let clock = ManualClock(start: ms(1000))
  let source = PeriodicEdgeSource(first: ms(1010), period: .milliseconds(10))
  let line = SimulatedDataReadyLine(
    clock: clock, source: source, faultPlan: faultPlan, queueCapacity: queueCapacity)
  return (clock, source, line)
}

/// The reconciliation identity with pending edges flushed: produced = delivered + dropped
/// (+ overflowed) − duplicated.
func expectReconciled(
  _ statistics: EdgeStatistics, sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(statistics.isReconciled, "\(statistics)", sourceLocation: sourceLocation)
  #expect(
    statistics.produced + statistics.duplicated
      == statistics.delivered + statistics.dropped + statistics.overflowed + statistics.pending,
    sourceLocation: sourceLocation)
}

@Suite struct SimulatedDataReadyLineTests {
  @Test func deliversEdgesAtTheSourcesTimesOnTheManualClock() throws {
    let (clock, _, line) = hundredHertzLine()
    for k in 1...50 {
      let expected = ms(1000 + 10 * Int64(k))
      #expect(try line.waitForEdge(until: ms(9000)) == .edge(expected))
      #expect(clock.now() == expected)
    }
    let statistics = line.statistics
    #expect(statistics.produced == 50 && statistics.delivered == 50)
    #expect(statistics.pending == 0)
    expectReconciled(statistics)
  }

  @Test func queuesEdgesWhileTheCallerIsLateAndDeliversEveryOneInOrder() throws {
    let (clock, _, line) = hundredHertzLine()
    clock.advance(to: ms(1055))  // edges at 1.010 … 1.050 happen while nobody waits
    #expect(line.queuedEdgeCount == 5)
    let late = waitMany(line, count: 5, deadline: ms(9000))
    #expect(late == [ms(1010), ms(1020), ms(1030), ms(1040), ms(1050)])
    #expect(clock.now() == ms(1055))  // queued edges come back at once
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1060)))
    #expect(clock.now() == ms(1060))
    #expect(line.statistics.overflowed == 0)
    expectReconciled(line.statistics)
  }

  @Test func aFullQueueDropsArrivingEdgesAndCountsThem() throws {
    let (clock, _, line) = hundredHertzLine(queueCapacity: 4)
    clock.advance(to: ms(1105))  // ten edges, room for four
    let statistics = line.statistics
    #expect(statistics.produced == 10)
    #expect(statistics.overflowed == 6)
    #expect(statistics.pending == 4)
    expectReconciled(statistics)
    // The kernel's v1 FIFO keeps the oldest events and discards the newest.
    #expect(
      waitMany(line, count: 4, deadline: ms(9000)) == [ms(1010), ms(1020), ms(1030), ms(1040)])
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1110)))
    expectReconciled(line.statistics)
  }

  @Test func theDefaultQueueHoldsSixteenEdgesLikeTheKernelFIFO() {
    let (clock, _, line) = hundredHertzLine()
    clock.advance(to: ms(1205))  // twenty edges
    #expect(line.queuedEdgeCount == 16)
    #expect(line.statistics.overflowed == 4)
  }

  @Test func timesOutAtTheDeadlineWithTheClockAtTheDeadline() throws {
    let (clock, source, line) = hundredHertzLine()
    source.isEnabled = false  // interrupt disabled: the pin never rises
    #expect(try line.waitForEdge(until: ms(1500)) == .timedOut)
    #expect(clock.now() == ms(1500))
    // A deadline before the next edge.
    source.isEnabled = true
    source.first = ms(1510)
    #expect(try line.waitForEdge(until: ms(1505)) == .timedOut)
    #expect(clock.now() == ms(1505))
    // An edge exactly at the deadline is delivered.
    #expect(try line.waitForEdge(until: ms(1510)) == .edge(ms(1510)))
    #expect(clock.now() == ms(1510))
    #expect(line.statistics.timeouts == 2)
  }

  @Test func aDeadlineInThePastPolls() throws {
    let (clock, _, line) = hundredHertzLine()
    #expect(try line.waitForEdge(until: ms(900)) == .timedOut)
    #expect(clock.now() == ms(1000))
    clock.advance(to: ms(1015))
    #expect(try line.waitForEdge(until: ms(900)) == .edge(ms(1010)))
    #expect(try line.waitForEdge(until: ms(1015)) == .timedOut)
    #expect(clock.now() == ms(1015))
  }

  @Test func edgesBeforeTheLineWasMadeAreNotSeen() throws {
    let clock = ManualClock(start: ms(1035))
    let source = PeriodicEdgeSource(first: ms(1010), period: .milliseconds(10))
    let line = SimulatedDataReadyLine(clock: clock, source: source)
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1040)))
    #expect(line.statistics.produced == 1)
  }

  @Test func anInterruptEnabledLaterStartsFromItsFirstEdge() throws {
    let (clock, source, line) = hundredHertzLine()
    source.isEnabled = false
    clock.advance(to: ms(1200))
    #expect(line.statistics.produced == 0)
    source.isEnabled = true
    source.first = ms(1203)
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1203)))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1213)))
  }

  @Test func aSourceAnsweringWithThePastIsCountedNotTrusted() throws {
    let clock = ManualClock(start: ms(1000))
    let line = SimulatedDataReadyLine(clock: clock, source: EchoingEdgeSource())
    #expect(try line.waitForEdge(until: ms(1100)) == .timedOut)
    #expect(clock.now() == ms(1100))
    #expect(line.statistics.rejectedSourceEdges > 0)
    #expect(line.statistics.produced == 0)
  }

  @Test func aListedSourceIsFollowedExactly() throws {
    let clock = ManualClock(start: ms(1000))
    let times = [ms(1001), ms(1001).advanced(byNanoseconds: 1), ms(1500), ms(4000)]
    let line = SimulatedDataReadyLine(clock: clock, source: ListedEdgeSource(times))
    #expect(
      waitMany(line, count: 5, deadline: ms(3000)) == [times[0], times[1], times[2], nil, nil])
    #expect(clock.now() == ms(3000))
  }
}

@Suite struct EdgeFaultTests {
  @Test func gaussianJitterMovesTimestampsWithTheRequestedSpread() throws {
    let sigma = 20_000.0  // 20 µs
    let (clock, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(jitter: .gaussian(standardDeviationNanoseconds: sigma), seed: 5))
    let count = 4000
    var sum = 0.0
    var sumSquares = 0.0
    for k in 1...count {
      let truth = ms(1000 + 10 * Int64(k))
      guard case .edge(let reported) = try line.waitForEdge(until: ms(999_000)) else {
        Issue.record("edge \(k) missing")
        return
      }
      let error = Double(reported.nanoseconds(since: truth))
      sum += error
      sumSquares += error * error
      // Delivered no earlier than the edge itself, and never before its own timestamp.
      #expect(clock.now() == max(truth, reported))
    }
    let n = Double(count)
    let mean = sum / n
    let deviation = (sumSquares / n - mean * mean).squareRoot()
    #expect(abs(mean) < 4 * sigma / n.squareRoot())
    #expect(abs(deviation - sigma) < 4 * sigma / (2 * n).squareRoot())
    #expect(line.faultPlan.injected.jittered >= UInt64(count - 5))
    expectReconciled(line.statistics)
  }

  @Test func uniformJitterStaysWithinItsBounds() throws {
    let (_, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(jitter: .uniform(maximumNanoseconds: 500), seed: 9))
    var seen = Set<Int64>()
    for k in 1...3000 {
      guard case .edge(let reported) = try line.waitForEdge(until: ms(999_000)) else {
        Issue.record("edge \(k) missing")
        return
      }
      let error = reported.nanoseconds(since: ms(1000 + 10 * Int64(k)))
      #expect(abs(error) <= 500)
      seen.insert(error)
    }
    // 1001 possible values, 3000 draws: nearly all appear, both extremes included.
    #expect(seen.count > 900)
    #expect(seen.contains(-500) && seen.contains(500))
  }

  @Test func sameSeedSameTimestamps() {
    func run(seed: UInt64) -> [Timestamp?] {
      let (_, _, line) = hundredHertzLine(
        faultPlan: EdgeFaultPlan(
          jitter: .gaussian(standardDeviationNanoseconds: 50_000),
          faults: [
            .missing(.randomly(probability: 0.1)), .duplicated(.randomly(probability: 0.1)),
          ],
          seed: seed))
      return waitMany(line, count: 200, deadline: ms(99_000))
    }
    #expect(run(seed: 3) == run(seed: 3))
    #expect(run(seed: 3) != run(seed: 4))
  }

  @Test func edgesMissingByIndexAreSkippedAndCounted() throws {
    let (_, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.missing(.events(2..<4))]))
    let delivered = waitMany(line, count: 4, deadline: ms(9000))
    #expect(delivered == [ms(1010), ms(1020), ms(1050), ms(1060)])
    let statistics = line.statistics
    #expect(statistics.produced == 6 && statistics.dropped == 2 && statistics.delivered == 4)
    #expect(line.faultPlan.injected.missing == 2)
    expectReconciled(statistics)
  }

  @Test func aBrokenWireLosesEveryEdgeInItsWindow() throws {
    let (clock, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.brokenWire(from: ms(1025), for: .milliseconds(50))]))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1010)))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1020)))
    // 1.030 … 1.070 are lost; a loop waiting 25 ms at a time times out, then recovers.
    #expect(try line.waitForEdge(until: ms(1045)) == .timedOut)
    #expect(clock.now() == ms(1045))
    #expect(try line.waitForEdge(until: ms(1070)) == .timedOut)
    #expect(try line.waitForEdge(until: ms(1095)) == .edge(ms(1080)))
    let statistics = line.statistics
    #expect(statistics.dropped == 5)
    #expect(line.faultPlan.injected.stuck == 5)
    #expect(line.faultPlan.injected.missing == 0)
    expectReconciled(statistics)
  }

  @Test func randomMissingEdgesOccurAtTheirRate() {
    let (_, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.missing(.randomly(probability: 0.02))], seed: 21))
    let delivered = waitMany(line, count: 10_000, deadline: ms(999_999))
    #expect(delivered.allSatisfy { $0 != nil })
    let statistics = line.statistics
    // Binomial(~10 200, 0.02): mean ≈ 204, standard deviation ≈ 14.
    #expect(statistics.dropped > 140 && statistics.dropped < 270)
    #expect(statistics.produced == statistics.delivered + statistics.dropped)
    expectReconciled(statistics)
  }

  @Test func aLateEdgeMovesTheClockLaterButKeepsItsTimestamp() throws {
    let (clock, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.late(by: .milliseconds(3), .event(2))]))
    #expect(waitMany(line, count: 2, deadline: ms(9000)) == [ms(1010), ms(1020)])
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1030)))
    #expect(clock.now() == ms(1033))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1040)))
    #expect(clock.now() == ms(1040))
    #expect(line.faultPlan.injected.late == 1)
  }

  @Test func aLateEdgeThatMissesItsDeadlineComesOnTheNextWait() throws {
    let (clock, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.late(by: .milliseconds(3), .event(0))]))
    #expect(try line.waitForEdge(until: ms(1012)) == .timedOut)
    #expect(clock.now() == ms(1012))
    #expect(line.statistics.pending == 1)
    #expect(try line.waitForEdge(until: ms(1020)) == .edge(ms(1010)))
    #expect(clock.now() == ms(1013))
    expectReconciled(line.statistics)
  }

  @Test func anEdgeLateByMoreThanAPeriodHoldsBackTheNextInOrder() throws {
    let (clock, _, line) = hundredHertzLine(
      faultPlan: EdgeFaultPlan(faults: [.late(by: .milliseconds(15), .event(1))]))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1010)))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1020)))
    #expect(clock.now() == ms(1035))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1030)))
    #expect(clock.now() == ms(1035))
    #expect(try line.waitForEdge(until: ms(9000)) == .edge(ms(1040)))
    #expect(clock.now() == ms(1040))
    expectReconciled(line.statistics)
  }

  @Test func aDuplicatedEdgeIsReportedTwiceAndCounted() throws {
    let (_, _, line) = hundredHertzLine(faultPlan: EdgeFaultPlan(faults: [.duplicated(.event(2))]))
    let delivered = waitMany(line, count: 5, deadline: ms(9000))
    #expect(delivered == [ms(1010), ms(1020), ms(1030), ms(1030), ms(1040)])
    let statistics = line.statistics
    #expect(statistics.produced == 4 && statistics.delivered == 5 && statistics.duplicated == 1)
    #expect(
      statistics.produced == statistics.delivered + statistics.dropped - statistics.duplicated)
    expectReconciled(statistics)
  }

  @Test func anUnwiredPinDeliversNothingAndEveryWaitTimesOut() throws {
    let (clock, _, line) = hundredHertzLine(faultPlan: EdgeFaultPlan(faults: [.notWired]))
    for k in 1...100 {
      #expect(try line.waitForEdge(until: ms(1000 + 25 * Int64(k))) == .timedOut)
    }
    #expect(clock.now() == ms(3500))
    let statistics = line.statistics
    #expect(statistics.delivered == 0)
    #expect(statistics.produced == 250)
    #expect(statistics.dropped == 250)
    #expect(statistics.timeouts == 100)
    #expect(line.faultPlan.injected.stuck == 250)
    expectReconciled(statistics)
  }

  /// A soak-like run with every fault at once, the loop sometimes late: nothing is lost silently.
  @Test func everythingReconcilesUnderMixedRandomFaults() throws {
    let clock = ManualClock(start: ms(1000))
    let source = PeriodicEdgeSource(first: ms(1010), period: .milliseconds(10))
    let line = SimulatedDataReadyLine(
      clock: clock, source: source,
      faultPlan: EdgeFaultPlan(
        jitter: .gaussian(standardDeviationNanoseconds: 30_000),
        faults: [
          // Drop rules are tried in order: the wire first, so it owns every edge in its window.
          .brokenWire(from: ms(20_000), for: .seconds(2)),
          .missing(.randomly(probability: 0.01)),
          .late(by: .milliseconds(4), .randomly(probability: 0.05)),
          .late(by: .milliseconds(25), .randomly(probability: 0.005)),
          .duplicated(.randomly(probability: 0.01)),
        ], seed: 99),
      queueCapacity: 16)
    var generator = SeededGenerator(seed: 1)
    var delivered = 0
    var timeouts = 0
    while clock.now() < ms(61_000) {
      // Sometimes the loop is busy for up to 300 ms and the queue fills.
      if generator.occurs(withProbability: 0.02) {
        clock.advance(by: .milliseconds(Int64(generator.nextUniform() * 300)))
      }
      switch try line.waitForEdge(until: clock.now() + .milliseconds(25)) {
      case .edge: delivered += 1
      case .timedOut: timeouts += 1
      }
    }
    let statistics = line.statistics
    expectReconciled(statistics)
    #expect(statistics.delivered == UInt64(delivered))
    #expect(statistics.timeouts == UInt64(timeouts))
    #expect(statistics.produced == 6000)
    #expect(statistics.dropped == line.faultPlan.injected.dropped)
    #expect(statistics.duplicated == line.faultPlan.injected.duplicated)
    #expect(line.faultPlan.injected.stuck == 200)
    #expect(statistics.overflowed > 0)
  }
}
