import HardwareAbstraction
import SystemdNotify
import Testing

@Suite struct WatchdogSettingsTests {
  func settings(_ environment: [String: String], pid: Int32 = 4242) throws(NotifyError)
    -> WatchdogSettings?
  {
    try WatchdogSettings.fromEnvironment({ environment[$0] }, processID: pid)
  }

  @Test func watchdogSecTwoIsTwoMillionMicroseconds() throws {
    let found = try settings(["WATCHDOG_USEC": "2000000"])
    #expect(found == WatchdogSettings(timeoutMicroseconds: 2_000_000))
    #expect(found?.timeoutNanoseconds == 2_000_000_000)
  }

  @Test func noWatchdogWhenUnsetOrEmpty() throws {
    #expect(try settings([:]) == nil)
    #expect(try settings(["WATCHDOG_USEC": ""]) == nil)
  }

  @Test func theWatchdogBelongsToTheProcessWatchdogPidNames() throws {
    #expect(try settings(["WATCHDOG_USEC": "500000", "WATCHDOG_PID": "4242"]) != nil)
    #expect(try settings(["WATCHDOG_USEC": "500000", "WATCHDOG_PID": "1"]) == nil)
    #expect(try settings(["WATCHDOG_USEC": "500000", "WATCHDOG_PID": ""]) != nil)
  }

  @Test(arguments: ["0", "-1", "1.5", "2s", " 2000000", "abc", "18446744073709551616"])
  func malformedIntervalsAreErrors(value: String) {
    #expect(throws: NotifyError(.invalidWatchdogInterval, detail: value)) {
      try settings(["WATCHDOG_USEC": value])
    }
  }

  @Test func hugeIntervalsSaturate() {
    #expect(WatchdogSettings(timeoutMicroseconds: .max).timeoutNanoseconds == .max)
  }
}

@Suite struct WatchdogTests {
  let start = Timestamp(nanoseconds: 5_000_000_000)

  /// Asks `watchdog` at each offset from `start` (ns) and returns the answers.
  func answers(_ watchdog: inout Watchdog, at offsets: [Int64]) -> [Bool] {
    offsets.map { watchdog.shouldPing(at: start.advanced(byNanoseconds: $0)) }
  }

  @Test func pingsAtOnceThenEveryHalfTimeout() {
    var watchdog = Watchdog(WatchdogSettings(timeoutMicroseconds: 2_000_000))
    #expect(watchdog.pingIntervalNanoseconds == 1_000_000_000)
    let offsets: [Int64] = [0, 1, 999_999_999, 1_000_000_000]
    #expect(answers(&watchdog, at: offsets) == [true, false, false, true])
    #expect(watchdog.lastPing == start.advanced(byNanoseconds: 1_000_000_000))
  }

  /// A 100 Hz loop for 10 s pings 10 times, never more than the interval plus one period
  /// apart, so systemd (timeout 2 s) never fires.
  @Test func aLoopAtOneHundredHertzPingsOncePerSecond() {
    var watchdog = Watchdog(timeoutNanoseconds: 2_000_000_000)
    var pings: [Int64] = []
    for k in 0..<1000 {
      let now = start.advanced(byNanoseconds: Int64(k) * 10_000_000)
      if watchdog.shouldPing(at: now) { pings.append(now.nanoseconds) }
    }
    #expect(pings.count == 10)
    let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
    #expect(gaps.allSatisfy { $0 == 1_000_000_000 })
  }

  /// A late iteration pings late, and the next ping counts from then.
  @Test func aLateIterationPingsAtOnce() {
    var watchdog = Watchdog(timeoutNanoseconds: 2_000_000_000)
    let offsets: [Int64] = [0, 1_700_000_000, 2_600_000_000, 2_700_000_000]
    #expect(answers(&watchdog, at: offsets) == [true, true, false, true])
  }

  @Test func countingSamplesAtOneHundredHertz() {
    var watchdog = SampleWatchdog(
      WatchdogSettings(timeoutMicroseconds: 2_000_000), samplePeriodNanoseconds: 10_000_000)
    #expect(watchdog.samplesPerPing == 100)
    var pingSamples: [Int] = []
    for sample in 0..<1000 where watchdog.shouldPingAfterSample() { pingSamples.append(sample) }
    #expect(pingSamples == Array(stride(from: 0, to: 1000, by: 100)))
  }

  @Test func aTimeoutShorterThanTwoPeriodsPingsEverySample() {
    var watchdog = SampleWatchdog(
      timeoutNanoseconds: 15_000_000, samplePeriodNanoseconds: 10_000_000)
    #expect(watchdog.samplesPerPing == 1)
    let answers = (0..<5).map { _ in watchdog.shouldPingAfterSample() }
    #expect(answers == [true, true, true, true, true])
  }
}
