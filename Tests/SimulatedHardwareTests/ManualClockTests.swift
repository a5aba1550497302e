import HardwareAbstraction
import SimulatedHardware
import Testing

@Suite struct ManualClockTests {
  @Test func startsAtOneSecondAndStaysPutUntilMoved() {
    let clock = ManualClock()
    #expect(clock.now() == Timestamp(nanoseconds: 1_000_000_000))
    #expect(clock.now() == clock.now())
    #expect(ManualClock(start: ms(5)).now() == ms(5))
  }

  @Test func timeNeverGoesBackwards() {
    let clock = ManualClock(start: ms(100))
    #expect(clock.advance(to: ms(150)))
    #expect(clock.now() == ms(150))
    #expect(!clock.advance(to: ms(149)))
    #expect(clock.now() == ms(150))
    #expect(!clock.advance(by: .nanoseconds(-1)))
    #expect(clock.now() == ms(150))
    #expect(clock.advance(to: ms(150)))  // standing still is allowed
    #expect(clock.advance(by: .nanoseconds(7)))
    #expect(clock.now() == ms(150).advanced(byNanoseconds: 7))
  }

  @Test func sleepMovesExactlyToTheDeadline() {
    let clock = ManualClock(start: ms(1000))
    let deadline = Timestamp(nanoseconds: 1_012_345_679)
    clock.sleep(until: deadline)
    #expect(clock.now() == deadline)
    // A deadline that has passed returns at once, leaving the time alone.
    clock.sleep(until: ms(1001))
    #expect(clock.now() == deadline)
  }

  @Test func sleepingThroughTheProtocolMovesTheSharedClock() {
    let clock = ManualClock(start: ms(1000))
    func sleepGenerically<C: MonotonicClock>(_ c: inout C, until deadline: Timestamp) {
      c.sleep(until: deadline)
    }
    var handle = clock
    sleepGenerically(&handle, until: ms(1010))
    #expect(clock.now() == ms(1010))
  }

  @Test func lineWaitsAndClockAdvancesInterleave() throws {
    let clock = ManualClock(start: ms(1000))
    let source = PeriodicEdgeSource(first: ms(1010), period: .milliseconds(10))
    let line = SimulatedDataReadyLine(clock: clock, source: source)

    // The test moves time past two edges while nobody waits: both are queued, with their times.
    clock.advance(by: .milliseconds(25))
    #expect(try line.waitForEdge(until: ms(2000)) == .edge(ms(1010)))
    #expect(clock.now() == ms(1025))
    #expect(try line.waitForEdge(until: ms(2000)) == .edge(ms(1020)))
    #expect(clock.now() == ms(1025))

    // Nothing queued: the wait moves the clock to the next edge.
    #expect(try line.waitForEdge(until: ms(2000)) == .edge(ms(1030)))
    #expect(clock.now() == ms(1030))

    // A short advance, then a wait whose deadline comes before the next edge.
    clock.advance(by: .milliseconds(5))
    #expect(try line.waitForEdge(until: ms(1038)) == .timedOut)
    #expect(clock.now() == ms(1038))
    #expect(try line.waitForEdge(until: ms(2000)) == .edge(ms(1040)))
    #expect(clock.now() == ms(1040))
  }
}
