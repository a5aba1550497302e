import HIL
import Testing

/// The real-time HIL: the simulated chip held to CLOCK_MONOTONIC, frames through
/// `TermiosSerialPort` on the terminal side of a real pseudo-terminal, read by the host as they
/// arrive. Wall-clock timing on a shared machine varies, so only counts and the mean rate are
/// asserted, never single intervals.
@Suite(.serialized) struct RealTimeTests {
  @Test func aRealTimeRunDeliversEveryFrameAtTheChipsRate() throws {
    let realTime = try hil("handheld", seconds: 3) {
      $0.realtime = true
      $0.keepBytes = true
    }
    let a = realTime.accounting
    #expect(a.silentLosses == 0 && a.isBalanced && a.countedMissed == 0 && a.lostInLink == 0)
    #expect(a.inFlightAtEnd <= 2)
    // About two and a half seconds after start-up (which is not paced): every frame arrived.
    #expect(realTime.telemetryFrames > 200)
    #expect(realTime.telemetryFrames == a.delivered)
    #expect(realTime.hostLatency.count == realTime.telemetryFrames)
    #expect(realTime.interArrival.count == realTime.telemetryFrames - 1)
    // The mean arrival rate is the chip's own (its oscillator is a little off 100 Hz), ±3 %.
    let chipRate = 1e9 / realTime.chipSamplePeriodNanoseconds
    let rate = try #require(realTime.arrivalRateHz)
    #expect(abs(rate / chipRate - 1) < 0.03, "\(rate) Hz at the host, chip \(chipRate) Hz")
    // The real clock changes when things happen, not what: the same frames as on the manual
    // clock, byte for byte.
    let fullSpeed = try hil("handheld", seconds: 3) { $0.keepBytes = true }
    #expect(realTime.bytes == fullSpeed.bytes)
  }
}
