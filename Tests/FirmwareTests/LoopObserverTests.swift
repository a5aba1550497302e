import Firmware
import HardwareAbstraction
import MPU6050
import Telemetry
import Testing

/// The loop's account to an observer (`FirmwareLoopObserver`): what a recording is made of.
@Suite struct LoopObserverTests {
  /// Keeps what it is told, in order.
  final class Account: FirmwareLoopObserver {
    enum Event: Equatable {
      case read(origin: SampleOrigin, time: Timestamp)
      case fifo(time: Timestamp)
      case discardedEdge(Timestamp)
      case timerWake(Timestamp)
      case missed(UInt32)
      case obeyed(String)
    }
    var events: [Event] = []
    func loopRead(_ reading: MPU6050Reading, at time: Timestamp, origin: SampleOrigin) {
      events.append(.read(origin: origin, time: time))
    }
    func loopDrainedFIFOSample(_ sample: MPU6050Sample, at time: Timestamp) {
      events.append(.fifo(time: time))
    }
    func loopDiscardedEdge(at time: Timestamp) { events.append(.discardedEdge(time)) }
    func loopWokeFromTimer(at time: Timestamp) { events.append(.timerWake(time)) }
    func loopMissedSamples(_ count: UInt32, at time: Timestamp) { events.append(.missed(count)) }
    func loopObeyed(_ command: HostCommand, at time: Timestamp) {
      events.append(.obeyed(command.line))
    }
  }

  func reads(_ events: [Account.Event], _ origin: SampleOrigin) -> [Timestamp] {
    events.compactMap {
      if case .read(origin, let time) = $0 { return time }
      return nil
    }
  }

  /// Every edge's reading, at the edge's time, in order; and the samples counted as missed.
  @Test func everyEdgeReadingAndEveryMissedSampleIsTold() throws {
    let rig = try Rig(plan: "missing-edges")
    let account = Account()
    rig.loop.observer = account
    try rig.run(seconds: 6, recordSamples: true)
    let edges = reads(account.events, .edge)
    #expect(edges.count > 590)
    #expect(zip(edges, edges.dropFirst()).allSatisfy { $0 < $1 })
    // Every sample the loop consumed came from a reading it told (after the warm-up's).
    let told = Set(edges)
    #expect(rig.consumed.allSatisfy { told.contains($0.time) })
    #expect(rig.consumed.count > 570)
    let missed = account.events.reduce(UInt32(0)) {
      if case .missed(let n) = $1 { return $0 + n }
      return $0
    }
    #expect(UInt64(missed) == rig.loop.status.missedSamples)
    #expect(missed == 2)
  }

  /// Without edges: the polls and the timer wake-ups before them; with an unwired interrupt,
  /// the FIFO's samples after the wake-up that drained them.
  @Test func fallbackPollsFIFODrainsAndTimerWakeUpsAreTold() throws {
    let broken = try Rig(plan: "broken-wire")
    let polls = Account()
    broken.loop.observer = polls
    try broken.run(seconds: 8)
    let polled = reads(polls.events, .polled)
    #expect(polled.count > 180)
    for (index, event) in polls.events.enumerated() {
      guard case .read(.polled, let time) = event else { continue }
      #expect(polls.events[index - 1] == .timerWake(time))
    }

    let unwired = try Rig(plan: "not-wired")
    let drains = Account()
    unwired.loop.observer = drains
    try unwired.run(seconds: 5)
    let fifo = drains.events.filter { if case .fifo = $0 { return true } else { return false } }
    #expect(fifo.count > 450)
    #expect(
      drains.events.contains { if case .timerWake = $0 { return true } else { return false } })
  }

  /// A host command obeyed is told as the line a host would type.
  @Test func anObeyedCommandIsTold() throws {
    let rig = try Rig()
    let account = Account()
    rig.loop.observer = account
    try rig.run(seconds: 1)
    rig.loop.obey(.rate(hertz: 50))
    rig.loop.obey(.tare)
    #expect(account.events.suffix(2) == [.obeyed("rate 50"), .obeyed("tare")])
  }
}
