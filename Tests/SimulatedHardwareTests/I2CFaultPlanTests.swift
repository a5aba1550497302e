import HardwareAbstraction
import SimulatedHardware
import Testing

/// Runs `count` one-byte reads at `address` and returns, for each, the error kind (or `nil`).
func readOutcomes(
  _ bus: SimulatedI2CBus, count: Int, register: UInt8 = 0x3B, at address: I2CAddress = primary
)
  -> [I2CError.Kind?]
{
  (0..<count).map { _ in
    thrownError { () throws(I2CError) in _ = try bus.readRegister(register, at: address) }?.kind
  }
}

@Suite struct I2CFaultPlanTests {
  static let errnoByKind: [(I2CFaultKind, I2CError.Kind, Int32)] = [
    (.notAcknowledged, .notAcknowledged, LinuxErrno.eremoteio),
    (.ioError, .ioError, LinuxErrno.eio),
    (.timedOut, .timedOut, LinuxErrno.etimedout),
    (.busBusy, .busBusy, LinuxErrno.ebusy),
    (.arbitrationLost, .arbitrationLost, LinuxErrno.eagain),
    (.protocolViolation, .protocolViolation, LinuxErrno.eproto),
  ]

  @Test(arguments: errnoByKind)
  func eachKindIsInjectedExactlyAsPlannedAndCounted(
    fault: I2CFaultKind, kind: I2CError.Kind, errno: Int32
  ) {
    let bus = SimulatedI2CBus(
      clock: ManualClock(), faultPlan: I2CFaultPlan([.burst(fault, count: 3, fromTransaction: 4)]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    var errors: [I2CError?] = []
    for _ in 0..<10 {
      errors.append(
        thrownError { () throws(I2CError) in _ = try bus.readRegister(0x3B, at: primary) })
    }
    #expect(errors.map { $0?.kind } == [nil, nil, nil, nil, kind, kind, kind, nil, nil, nil])
    for error in errors.compactMap({ $0 }) {
      #expect(error.errno?.rawValue == errno)
      #expect(error.address == primary && error.register == 0x3B)
    }
    #expect(bus.faultPlan.injected[fault] == 3)
    #expect(bus.faultPlan.injected.total == 3)
    #expect(bus.faultPlan.faults[0].injected == 3)
    #expect(bus.statistics.injectedFaults == bus.faultPlan.injected)
  }

  @Test func everyKindHasItsCounter() {
    var counts = I2CFaultCounts()
    for (offset, kind) in I2CFaultKind.allCases.enumerated() { counts[kind] = UInt64(offset + 1) }
    for (offset, kind) in I2CFaultKind.allCases.enumerated() {
      #expect(counts[kind] == UInt64(offset + 1))
    }
    #expect(counts.total == 21)
  }

  @Test func aNackBurstCanCarryENXIOInstead() {
    let bus = SimulatedI2CBus(
      clock: ManualClock(),
      faultPlan: I2CFaultPlan([
        .burst(.notAcknowledged, count: 1, fromTransaction: 0, errno: .noSuchDeviceOrAddress)
      ]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    let error = thrownError { () throws(I2CError) in _ = try bus.readRegister(0x75, at: primary) }
    #expect(error?.errno?.rawValue == LinuxErrno.enxio)
  }

  @Test func aBurstScheduledByTimeHitsTheFirstTransfersAtOrAfterIt() {
    let clock = ManualClock(start: ms(1000))
    let bus = SimulatedI2CBus(
      clock: clock, faultPlan: I2CFaultPlan([.burst(.ioError, count: 2, from: ms(1500))]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    #expect(readOutcomes(bus, count: 3) == [nil, nil, nil])
    clock.advance(to: ms(1499))
    #expect(readOutcomes(bus, count: 1) == [nil])
    clock.advance(to: ms(1500))
    #expect(readOutcomes(bus, count: 4) == [.ioError, .ioError, nil, nil])
    clock.advance(to: ms(9000))
    #expect(readOutcomes(bus, count: 2) == [nil, nil])
    #expect(bus.faultPlan.injected.ioError == 2)
  }

  @Test func timeoutsHoldTheBusForTheirDuration() {
    let clock = ManualClock(start: ms(1000))
    let bus = SimulatedI2CBus(
      clock: clock,
      faultPlan: I2CFaultPlan([
        .burst(.timedOut, count: 2, fromTransaction: 1, duration: .milliseconds(25))
      ]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    #expect(readOutcomes(bus, count: 4) == [nil, .timedOut, .timedOut, nil])
    #expect(clock.now() == ms(1050))
  }

  @Test func filtersRestrictToAddressDirectionAndRegister() throws {
    let plan = I2CFaultPlan([
      I2CFault(.ioError, schedule: .always, filter: I2CTransferFilter(address: secondary)),
      I2CFault(.notAcknowledged, schedule: .always, filter: .writes(at: primary)),
      I2CFault(
        .busBusy, schedule: .always, filter: I2CTransferFilter(direction: .read, register: 0x75)),
    ])
    let bus = SimulatedI2CBus(clock: ManualClock(), faultPlan: plan)
    bus.attach(SimulatedRegisterFile(), at: primary)
    bus.attach(SimulatedRegisterFile(), at: secondary)

    #expect(readOutcomes(bus, count: 1, register: 0x3B, at: secondary) == [.ioError])
    #expect(readOutcomes(bus, count: 1, register: 0x3B, at: primary) == [nil])
    let write = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0, at: primary)
    }
    #expect(write?.kind == .notAcknowledged)
    #expect(readOutcomes(bus, count: 1, register: 0x75, at: primary) == [.busBusy])
    // A block read that covers 0x75 is struck too; one that ends before it is not.
    let covering = thrownError { () throws(I2CError) in
      _ = try bus.readRegisters(startingAt: 0x72, count: 4, at: primary)
    }
    #expect(covering?.kind == .busBusy)
    #expect(try bus.readRegisters(startingAt: 0x72, count: 3, at: primary).count == 3)
    #expect(bus.faultPlan.faults.map(\.injected) == [1, 1, 2])
  }

  @Test func aBurstRestrictedToReadsSkipsInterleavedWrites() throws {
    let bus = SimulatedI2CBus(
      clock: ManualClock(),
      faultPlan: I2CFaultPlan([
        .burst(.notAcknowledged, count: 2, fromTransaction: 0, filter: .reads(at: primary))
      ]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    try bus.writeRegister(0x6B, value: 0, at: primary)
    #expect(readOutcomes(bus, count: 1) == [.notAcknowledged])
    try bus.writeRegister(0x6B, value: 0, at: primary)
    #expect(readOutcomes(bus, count: 2) == [.notAcknowledged, nil])
  }

  @Test func lockUpFailsEverythingUntilTheClockPassesItsEnd() throws {
    let clock = ManualClock(start: ms(1000))
    let bus = SimulatedI2CBus(
      clock: clock, faultPlan: I2CFaultPlan([.lockUp(from: ms(2000), for: .seconds(3))]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    bus.attach(SimulatedRegisterFile(), at: secondary)
    #expect(readOutcomes(bus, count: 2) == [nil, nil])

    clock.advance(to: ms(2000))
    #expect(readOutcomes(bus, count: 3) == [.busBusy, .busBusy, .busBusy])
    #expect(readOutcomes(bus, count: 1, at: secondary) == [.busBusy])
    let write = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0, at: primary)
    }
    #expect(write?.kind == .busBusy)
    #expect(write?.errno?.rawValue == LinuxErrno.ebusy)

    clock.advance(to: ms(4999))
    #expect(readOutcomes(bus, count: 1) == [.busBusy])
    clock.advance(to: ms(5000))
    #expect(readOutcomes(bus, count: 3) == [nil, nil, nil])
    #expect(bus.faultPlan.injected.busBusy == 6)
  }

  @Test func aLockUpCanReportTimeouts() {
    let clock = ManualClock(start: ms(1000))
    let bus = SimulatedI2CBus(
      clock: clock,
      faultPlan: I2CFaultPlan([.lockUp(from: ms(1000), for: .seconds(1), failingWith: .timedOut)]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    #expect(readOutcomes(bus, count: 2) == [.timedOut, .timedOut])
    clock.advance(by: .seconds(1))
    #expect(readOutcomes(bus, count: 1) == [nil])
  }

  @Test func theFirstRuleThatStrikesDecides() {
    let bus = SimulatedI2CBus(
      clock: ManualClock(),
      faultPlan: I2CFaultPlan([
        .burst(.ioError, count: 1, fromTransaction: 1),
        .burst(.notAcknowledged, count: 2, fromTransaction: 1),
      ]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    #expect(
      readOutcomes(bus, count: 5) == [nil, .ioError, .notAcknowledged, .notAcknowledged, nil])
  }

  @Test func randomFaultsAreSeededAndOccurAtTheirRate() {
    func failureIndices(seed: UInt64) -> (indices: [Int], bus: SimulatedI2CBus) {
      let bus = SimulatedI2CBus(
        clock: ManualClock(),
        faultPlan: I2CFaultPlan([.random(.ioError, probability: 0.05)], seed: seed))
      bus.attach(SimulatedRegisterFile(), at: primary)
      let outcomes = readOutcomes(bus, count: 20_000)
      return (outcomes.indices.filter { outcomes[$0] != nil }, bus)
    }
    let (first, bus) = failureIndices(seed: 1)
    let (again, _) = failureIndices(seed: 1)
    let (other, _) = failureIndices(seed: 2)
    #expect(first == again)
    #expect(first != other)
    // Binomial(20 000, 0.05): mean 1000, standard deviation 30.8.
    #expect(abs(first.count - 1000) < 125)
    #expect(bus.faultPlan.injected.ioError == UInt64(first.count))
    #expect(bus.statistics.injectedFaults.ioError == UInt64(first.count))
  }

  @Test func planDecisionsCanBeQueriedWithoutABus() {
    var plan = I2CFaultPlan([.burst(.busBusy, count: 1, fromTransaction: 2)])
    let transfer = I2CTransfer.read(0x3B, count: 14, at: primary)
    #expect(plan.fault(for: transfer, index: 0, at: ms(0)) == nil)
    #expect(plan.fault(for: transfer, index: 1, at: ms(0)) == nil)
    let injection = plan.fault(for: transfer, index: 2, at: ms(0))
    #expect(injection?.kind == .busBusy)
    #expect(injection?.errno.rawValue == LinuxErrno.ebusy)
    #expect(injection?.faultIndex == 0)
    #expect(plan.fault(for: transfer, index: 3, at: ms(0)) == nil)
  }
}
