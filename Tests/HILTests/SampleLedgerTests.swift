import HIL
import HardwareAbstraction
import Testing

/// The reconciliation on synthetic streams, where the truth is known by construction.
@Suite struct SampleLedgerTests {
  static let period: Int64 = 10_000_000

  /// A chip producing a sample every 10 ms from 1 s; streaming starts after `startUp` samples,
  /// the first `warmUp` are discarded; `frames` are sent as given.
  func ledger(
    produced count: Int, startUp: Int = 5, warmUp: Int = 2, divider: Int = 1,
    frames: (Timestamp) -> [FrameRecord?]
  ) -> (SampleLedger, [Timestamp]) {
    let ledger = SampleLedger(
      samplePeriodNanoseconds: Self.period, divider: divider, warmUpSamples: warmUp)
    let times = (0..<count).map { Timestamp(nanoseconds: 1_000_000_000 + Int64($0) * Self.period) }
    for (index, time) in times.enumerated() {
      if index == startUp { ledger.startStreaming(at: time.advanced(byNanoseconds: -1)) }
      ledger.produced(at: time)
    }
    ledger.close(at: times.last!)
    for frame in frames(times[0]) {
      if let frame { ledger.received(frame) }
    }
    return (ledger, times)
  }

  /// Frames for samples 7…99 except `skipped`, numbered in order; from sample `countedFrom` on
  /// they carry one missed sample.
  func stream(skipping skipped: Int, countedFrom: Int = .max) -> [FrameRecord?] {
    var frames: [FrameRecord?] = []
    var sequence: UInt32 = 0
    for sample in 7..<100 where sample != skipped {
      sequence += 1
      let missed: UInt32 = sample >= countedFrom ? 1 : 0
      frames.append(frame(sequence, sample, missed: missed))
    }
    return frames
  }

  func frame(_ sequence: UInt32, _ sample: Int, missed: UInt32 = 0) -> FrameRecord {
    FrameRecord(
      sequence: sequence,
      sampleTime: Timestamp(nanoseconds: 1_000_000_000 + Int64(sample) * Self.period),
      missedSamples: missed)
  }

  @Test func aPerfectStreamIsDeliveredWhole() {
    // 100 samples: 5 at start-up, 2 warm-up, frames for samples 7…99.
    let (ledger, _) = ledger(produced: 100) { _ in (7..<100).map { frame(UInt32($0 - 6), $0) } }
    let a = ledger.finish(loopLastFrame: frame(93, 99), loopSamples: 93, loopWarmUp: 2)
    #expect(a.startUp == 5 && a.warmUp == 2 && a.delivered == 93)
    #expect(a.silentLosses == 0 && a.countedMissed == 0 && a.inFlightAtEnd == 0 && a.isBalanced)
  }

  @Test func aSampleNobodyCountedIsASilentLoss() {
    // Sample 50 is skipped: no frame, and the next frame's missed count does not say so.
    let (ledger, _) = ledger(produced: 100) { _ in stream(skipping: 50) }
    let a = ledger.finish(loopLastFrame: frame(92, 99), loopSamples: 92, loopWarmUp: 2)
    #expect(a.silentLosses == 1 && a.isBalanced)
    let expected: Int64 = 1_000_000_000 + 51 * Self.period
    #expect(a.silentLossTimes.map(\.nanoseconds) == [expected])
  }

  @Test func aMissCountedLateIsNotSilent() {
    // Sample 50 is missed, and counted three frames later (the FIFO fallback dates its losses
    // a few drains after the fact).
    let (ledger, _) = ledger(produced: 100) { _ in stream(skipping: 50, countedFrom: 53) }
    let a = ledger.finish(loopLastFrame: frame(92, 99, missed: 1), loopSamples: 92, loopWarmUp: 2)
    #expect(a.silentLosses == 0 && a.countedMissed == 1 && a.countedButNotProduced == 0)
    #expect(a.isBalanced)
  }

  @Test func slotsCountedWhileTheChipSleptAreNotSamples() {
    // The chip produces nothing between samples 40 and 41 for 50 ms; the loop counts 5 missed.
    let ledger = SampleLedger(samplePeriodNanoseconds: Self.period, divider: 1, warmUpSamples: 0)
    ledger.startStreaming(at: .zero)
    var times: [Timestamp] = []
    for index in 0..<80 {
      let pause: Int64 = index > 40 ? 50_000_000 : 0
      times.append(Timestamp(nanoseconds: 1_000_000_000 + Int64(index) * Self.period + pause))
    }
    for time in times { ledger.produced(at: time) }
    for (index, time) in times.enumerated() {
      ledger.received(
        FrameRecord(
          sequence: UInt32(index + 1), sampleTime: time, missedSamples: index > 40 ? 5 : 0))
    }
    let last = FrameRecord(sequence: 80, sampleTime: times[79], missedSamples: 5)
    let a = ledger.finish(loopLastFrame: last, loopSamples: 80, loopWarmUp: 0)
    #expect(a.countedMissed == 5 && a.countedButNotProduced == 5 && a.silentLosses == 0)
    #expect(a.isBalanced)
  }

  @Test func framesLostInTheLinkAndDecimatedSamplesAreAccounted() {
    // One frame per two samples; frames 20…29 never arrive; the last two frames are lost too.
    let (ledger, _) = ledger(produced: 107, startUp: 5, warmUp: 2, divider: 2) { _ in
      (1...46).filter { !(20..<30).contains($0) }.map { frame(UInt32($0), 7 + 2 * ($0 - 1)) }
    }
    // The loop made 50 frames (the last at sample 105) and consumed one more sample.
    let a = ledger.finish(loopLastFrame: frame(50, 105), loopSamples: 100, loopWarmUp: 2)
    #expect(a.delivered == 36 && a.lostInLink == 14 && a.decimated == 50)
    #expect(a.silentLosses == 0 && a.inFlightAtEnd == 0 && a.isBalanced)
  }
}
