import Glibc
import HardwareAbstraction
import LinuxHardware
import POSIXSupport
import Testing

@Suite struct LinuxMonotonicClockTests {
  func monotonic() -> Timestamp {
    var time = timespec()
    _ = clock_gettime(CLOCK_MONOTONIC, &time)
    return Timestamp(time)
  }

  @Test func nowIsCLOCK_MONOTONIC() {
    let clock = LinuxMonotonicClock()
    for _ in 0..<100 {
      let before = monotonic()
      let now = clock.now()
      let after = monotonic()
      #expect(before <= now && now <= after)
    }
  }

  @Test func aPassedDeadlineReturnsAtOnce() {
    let clock = LinuxMonotonicClock()
    let start = clock.now()
    clock.sleep(until: start - .seconds(10))
    clock.sleep(until: Timestamp(nanoseconds: -5))
    #expect(clock.now() - start < .milliseconds(100))
  }

  @Test func sleepReturnsAtOrAfterTheDeadline() {
    let clock = LinuxMonotonicClock()
    let deadline = clock.now() + .milliseconds(2)
    clock.sleep(until: deadline)
    #expect(clock.now() >= deadline)
  }
}
