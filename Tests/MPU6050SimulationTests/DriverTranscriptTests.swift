import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// The driver's bus traffic, pinned: every transfer (register, bytes or error, and when) the
/// real driver makes on the simulated chip over each fault plan, with and without the
/// self-test, digested per run. A change to the driver that changes what it says to the chip —
/// an extra read, another order, a retry more or less — changes a digest; a reshaping of its
/// code must not. (The recordings' golden files pin the same traffic through the recorder's
/// tap for a few plans; this covers every plan, the FIFO fallback and the FIFO switch.)
@Suite struct DriverTranscriptTests {
  /// FNV-1a over each transfer's text, with its count.
  final class Transcript {
    var digest: UInt64 = 14_695_981_039_346_656_037
    var count = 0
    func add(_ text: String) {
      for byte in text.utf8 { digest = (digest ^ UInt64(byte)) &* 1_099_511_628_211 }
      digest = (digest ^ 10) &* 1_099_511_628_211
      count += 1
    }
  }

  /// The simulated bus, every transfer noted with the clock when it completed.
  struct NotingBus: I2CBus {
    let base: SimulatedI2CBus
    let transcript: Transcript

    mutating func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
      throws(I2CError)
    {
      do {
        try base.writeRegister(register, value: value, at: address)
        transcript.add("W \(register) \(value) \(base.clock.now().nanoseconds)")
      } catch {
        transcript.add("W! \(register) \(value) \(error.kind) \(base.clock.now().nanoseconds)")
        throw error
      }
    }

    mutating func readRegisters(
      startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer,
      at address: I2CAddress
    ) throws(I2CError) {
      do {
        try base.readRegisters(startingAt: register, into: buffer, at: address)
        transcript.add("R \(register) \(Array(buffer)) \(base.clock.now().nanoseconds)")
      } catch {
        transcript.add(
          "R! \(register) \(buffer.count) \(error.kind) \(base.clock.now().nanoseconds)")
        throw error
      }
    }
  }

  /// Eight seconds of `plan` (its faults from 2 s): start-up, then edges read as the loop reads
  /// them (a poll after three quiet periods) or, without the INT wire, the FIFO drained every
  /// 9.5 ms; on the fault-free plan the FIFO is also switched on for 50 drains and off again.
  func run(_ name: String, selfTest: Bool) throws -> String {
    let clock = ManualClock()
    let start = clock.now().advanced(byNanoseconds: 2_000_000_000)
    let plan = try #require(SimulatedMPU6050FaultPlan.named(name, start: start, seed: 3))
    let board = SimulatedMPU6050Board(
      motion: RestingMotion(), unit: .typical(seed: 3), faultPlan: plan, clock: clock)
    let transcript = Transcript()
    var driver = try MPU6050Driver(
      bus: NotingBus(base: board.bus, transcript: transcript), address: board.address)
    var startClock = clock
    var started = true
    do { _ = try driver.start(clock: &startClock, selfTest: selfTest) } catch { started = false }
    while case .edge = try board.line.waitForEdge(until: .zero) {}
    let end = start.advanced(byNanoseconds: 6_000_000_000)
    if plan.interruptWired {
      var switched = false
      while clock.now() < end {
        let deadline = min(end, clock.now().advanced(byNanoseconds: 30_000_000))
        switch try board.line.waitForEdge(until: deadline) {
        case .edge(let time):
          _ = driver.readSample(at: time)
        case .timedOut:
          guard clock.now() < end else { break }
          _ = driver.diagnoseMissingEdges(at: clock.now())
          _ = driver.pollDataReady(at: clock.now())
        }
        if name == "none", !switched, clock.now() > start {
          switched = true
          _ = driver.enableFIFO(at: clock.now())
          for _ in 0..<50 {
            clock.sleep(until: clock.now().advanced(byNanoseconds: 9_500_000))
            _ = driver.drainFIFO(clock: clock) { _, _ in }
          }
          _ = driver.disableFIFO(at: clock.now())
        }
      }
    } else {
      driver.enableFIFO(at: clock.now())
      var next = clock.now()
      var stalls = 0
      while clock.now() < end {
        while stalls < plan.hostStalls.count, plan.hostStalls[stalls].at <= clock.now() {
          clock.advance(by: plan.hostStalls[stalls].duration)
          stalls += 1
        }
        next = next + .microseconds(9_500)
        if next < clock.now() { next = clock.now() + .microseconds(9_500) }
        clock.sleep(until: min(next, end))
        _ = driver.drainFIFO(clock: clock) { _, _ in }
      }
    }
    // name, self-test, started, transfers, their digest, samples delivered
    return "\(name) self-test:\(selfTest) started:\(started) \(transcript.count) "
      + "\(transcript.digest) \(driver.counters.samplesDelivered)"
  }

  @Test func everyFaultPlansTrafficIsAsPinned() throws {
    var runs: [String] = []
    for name in SimulatedMPU6050FaultPlan.names where name != "soak" {
      for selfTest in [false, true] { runs.append(try run(name, selfTest: selfTest)) }
    }
    #expect(runs.count == Self.pinned.count)
    for (run, pinned) in zip(runs, Self.pinned) { #expect(run == pinned) }
  }

  /// Made with the driver before issue 22 split it into files and typed its register I/O.
  static let pinned: [String] = [
    "none self-test:false started:true 960 11019890685112246602 790",
    "none self-test:true started:true 948 9055145813956613872 735",
    "nack-burst self-test:false started:true 835 4773950324371307026 786",
    "nack-burst self-test:true started:true 827 18342653741436384091 731",
    "eio-burst self-test:false started:true 833 12646571842974804730 757",
    "eio-burst self-test:true started:true 825 1090306177210193029 702",
    "bus-lockup self-test:false started:true 696 4403460278743929570 617",
    "bus-lockup self-test:true started:true 688 10485321862904599281 562",
    "brownout self-test:false started:true 827 16619456899002373144 770",
    "brownout self-test:true started:true 819 14265015919657467931 715",
    "frozen-registers self-test:false started:true 829 10601949608791296653 771",
    "frozen-registers self-test:true started:true 821 16495979819145260252 716",
    "register-corruption self-test:false started:true 844 2662158889397426273 787",
    "register-corruption self-test:true started:true 836 2945482962996372280 732",
    "clone-whoami self-test:false started:true 831 17025368052595049255 787",
    "clone-whoami self-test:true started:true 823 16172386410177495194 732",
    "icm20689 self-test:false started:true 832 3286971449296389996 787",
    "icm20689 self-test:true started:true 832 3286971449296389996 787",
    "self-test-failure self-test:false started:true 831 9294181952325994320 787",
    "self-test-failure self-test:true started:true 823 10303441467812938411 732",
    "missing-edges self-test:false started:true 829 75001860940820226 785",
    "missing-edges self-test:true started:true 821 9877275033626413899 730",
    "late-edges self-test:false started:true 831 5466299246528517038 787",
    "late-edges self-test:true started:true 823 14497868610909592691 732",
    "duplicated-edges self-test:false started:true 837 3581452096181581713 790",
    "duplicated-edges self-test:true started:true 829 6397385543842698810 735",
    "edge-jitter self-test:false started:true 831 7842218741857073063 787",
    "edge-jitter self-test:true started:true 823 8630416743891371666 732",
    "broken-wire self-test:false started:true 899 17954587823281651944 654",
    "broken-wire self-test:true started:true 891 15057486443909358131 599",
    "not-wired self-test:false started:true 2493 7393666108024763151 787",
    "not-wired self-test:true started:true 2369 15095281950970342660 732",
    "fifo-overflow self-test:false started:true 2181 13424493880906475965 686",
    "fifo-overflow self-test:true started:true 2057 7893287554418112419 631",
  ]
}
