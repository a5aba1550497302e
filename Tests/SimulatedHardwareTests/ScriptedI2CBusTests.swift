import HardwareAbstraction
import SimulatedHardware
import Testing

/// A driver-like init sequence: identify, reset, wait, wake, configure, read one sample.
/// Register addresses restated from RM-MPU-6000A-00 rev 4.2: WHO_AM_I 0x75, PWR_MGMT_1 0x6B,
/// SMPLRT_DIV 0x19, CONFIG 0x1A, ACCEL_XOUT_H 0x3B.
func runInitSequence(on bus: ScriptedI2CBus, clock: ManualClock, wakeValue: UInt8 = 0x01)
  -> (whoAmI: UInt8?, sample: [UInt8]?, errors: [I2CError])
{
  var errors: [I2CError] = []
  var whoAmI: UInt8?
  var sample: [UInt8]?
  func attempt(_ body: () throws(I2CError) -> Void) {
    do throws(I2CError) { try body() } catch { errors.append(error) }
  }
  attempt { () throws(I2CError) in whoAmI = try bus.readRegister(0x75, at: primary) }
  attempt { () throws(I2CError) in try bus.writeRegister(0x6B, value: 0x80, at: primary) }
  clock.advance(by: .milliseconds(100))
  attempt { () throws(I2CError) in try bus.writeRegister(0x6B, value: wakeValue, at: primary) }
  attempt { () throws(I2CError) in try bus.writeRegister(0x19, value: 9, at: primary) }
  attempt { () throws(I2CError) in try bus.writeRegister(0x1A, value: 0x03, at: primary) }
  attempt { () throws(I2CError) in
    sample = try bus.readRegisters(startingAt: 0x3B, count: 14, at: primary)
  }
  return (whoAmI, sample, errors)
}

let sampleBytes: [UInt8] = [
  0x00, 0x10, 0xFF, 0xF0, 0x40, 0x00, 0xF1, 0x00, 0x00, 0x01, 0x00, 0x02, 0xFF, 0xFD,
]

func exactScript() -> [ScriptedTransaction] {
  [
    .read(0x75, at: primary, returning: [0x68]),
    .write(0x6B, 0x80, at: primary),
    ScriptedTransaction.write(0x6B, 0x01, at: primary).notBefore(.milliseconds(100)),
    .write(0x19, 9, at: primary),
    .write(0x1A, 0x03, at: primary),
    .read(0x3B, at: primary, returning: sampleBytes),
  ]
}

@Suite struct ScriptedI2CBusTests {
  @Test func anExactRunPasses() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(exactScript(), clock: clock)
    let run = runInitSequence(on: bus, clock: clock)
    #expect(run.errors.isEmpty)
    #expect(run.whoAmI == 0x68)
    #expect(run.sample == sampleBytes)
    #expect(bus.finish().isEmpty)
    #expect(bus.isComplete)
    #expect(bus.performed.count == 6)
    try bus.verify()
  }

  @Test func leftoverStepsAreReportedWithWhatWasExpected() {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      exactScript() + [.write(0x38, 0x01, at: primary), .read(0x3A, at: primary, returning: [1])],
      clock: clock)
    let run = runInitSequence(on: bus, clock: clock)
    #expect(run.errors.isEmpty)
    #expect(!bus.isComplete)
    let problems = bus.finish()
    #expect(problems.map(\.kind) == [.leftover, .leftover])
    #expect(problems.map(\.step) == [6, 7])
    #expect(problems[0].expected == .write(0x38, 0x01, at: primary))
    #expect(problems[0].actual == nil)
    #expect(
      problems[0].description
        == "step 6: leftover: never happened; expected write 0x01 to 0x38 at 0x68")
    let failure = thrownError { () throws(ScriptFailure) in try bus.verify() }
    #expect(failure?.problems == problems)
    #expect(failure?.description.hasPrefix("scripted I2C bus: 2 problems\n") == true)
  }

  static let mismatches: [(name: String, actual: I2CTransfer, kind: ScriptProblem.Kind)] = [
    ("a read instead of the write", .read(0x6B, count: 1, at: primary), .wrongOperation),
    ("another address", .write(0x6B, value: 0x80, at: secondary), .wrongAddress),
    ("another register", .write(0x6C, value: 0x80, at: primary), .wrongRegister),
    ("another value", .write(0x6B, value: 0x00, at: primary), .wrongValue),
  ]

  @Test(arguments: mismatches)
  func eachKindOfWriteMismatchFailsTheTransferAndIsRecorded(
    mismatch: (name: String, actual: I2CTransfer, kind: ScriptProblem.Kind)
  ) {
    let bus = ScriptedI2CBus([.write(0x6B, 0x80, at: primary)], clock: ManualClock())
    let error = thrownError { () throws(I2CError) in
      switch mismatch.actual.direction {
      case .write:
        try bus.writeRegister(
          mismatch.actual.register, value: mismatch.actual.value!, at: mismatch.actual.address)
      case .read:
        _ = try bus.readRegisters(
          startingAt: mismatch.actual.register, count: mismatch.actual.length,
          at: mismatch.actual.address)
      }
    }
    #expect(error?.kind == .other, "\(mismatch.name)")
    #expect(error?.bus == "scripted")
    let problems = bus.finish()
    #expect(problems.count == 1)
    #expect(problems.first?.kind == mismatch.kind)
    #expect(problems.first?.step == 0)
    #expect(problems.first?.expected == .write(0x6B, 0x80, at: primary))
    #expect(problems.first?.actual == mismatch.actual)
    // The message shows both sides.
    let text = problems.first?.description ?? ""
    #expect(text.contains("expected write 0x80 to 0x6B at 0x68"))
    #expect(text.contains("got \(mismatch.actual)"))
  }

  @Test func aReadOfAnotherLengthIsAMismatch() {
    let bus = ScriptedI2CBus(
      [.read(0x3B, at: primary, returning: sampleBytes)], clock: ManualClock())
    let error = thrownError { () throws(I2CError) in
      _ = try bus.readRegisters(startingAt: 0x3B, count: 6, at: primary)
    }
    #expect(error?.kind == .other)
    #expect(bus.finish().map(\.kind) == [.wrongLength])
    #expect(
      bus.finish().first?.description
        == "step 0: wrongLength; expected read 14 bytes from 0x3B at 0x68 → [0x00, 0x10, 0xFF, 0xF0, 0x40, 0x00, 0xF1, 0x00, 0x00, 0x01, 0x00, 0x02, 0xFF, 0xFD]; got read 6 bytes from 0x3B at 0x68"
    )
  }

  @Test func aTransferAfterTheEndIsUnexpected() {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(Array(exactScript().prefix(2)), clock: clock)
    let run = runInitSequence(on: bus, clock: clock)
    #expect(run.errors.count == 4)
    #expect(run.errors.allSatisfy { $0.kind == .other })
    let problems = bus.finish()
    #expect(problems.map(\.kind) == [.unexpected, .unexpected, .unexpected, .unexpected])
    #expect(problems.map(\.step) == [2, 3, 4, 5])
    #expect(problems[0].actual == .write(0x6B, value: 0x01, at: primary))
  }

  @Test func aMismatchConsumesItsStepSoLaterStepsStillLineUp() {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(exactScript(), clock: clock)
    let run = runInitSequence(on: bus, clock: clock, wakeValue: 0x00)  // wrong wake value
    #expect(run.errors.count == 1)
    #expect(run.sample == sampleBytes)
    let problems = bus.finish()
    #expect(problems.map(\.kind) == [.wrongValue])
    #expect(problems.map(\.step) == [2])
  }

  @Test func aStepTooSoonAfterThePreviousOneIsAMismatch() {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      [
        .write(0x6B, 0x80, at: primary),
        ScriptedTransaction.write(0x6B, 0x01, at: primary).notBefore(.milliseconds(100)),
      ], clock: clock)
    #expect(
      thrownError { () throws(I2CError) in try bus.writeRegister(0x6B, value: 0x80, at: primary) }
        == nil)
    clock.advance(by: .milliseconds(99))
    let error = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0x01, at: primary)
    }
    #expect(error?.kind == .other)
    let problem = bus.finish().first
    #expect(problem?.kind == .tooEarly)
    #expect(problem?.elapsed == .milliseconds(99))
    #expect(
      problem?.description.contains("only 0.099 seconds after the previous transaction") == true)
  }

  @Test func scriptedErrorsAreThrownWithTheirErrno() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      [
        .read(0x75, count: 1, at: primary, failingWith: .notAcknowledged),
        .read(0x75, count: 1, at: primary, failingWith: .ioError, errno: Errno(rawValue: 5)),
        ScriptedTransaction.write(0x6B, 0x80, at: primary).failing(with: .timedOut),
        .read(0x75, at: primary, returning: [0x68]),
      ], clock: clock)
    let nack = thrownError { () throws(I2CError) in _ = try bus.readRegister(0x75, at: primary) }
    #expect(nack?.kind == .notAcknowledged)
    #expect(nack?.errno?.rawValue == LinuxErrno.eremoteio)
    let eio = thrownError { () throws(I2CError) in _ = try bus.readRegister(0x75, at: primary) }
    #expect(eio?.kind == .ioError)
    #expect(eio?.errno?.rawValue == LinuxErrno.eio)
    let timeout = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0x80, at: primary)
    }
    #expect(timeout?.kind == .timedOut)
    #expect(timeout?.errno?.rawValue == LinuxErrno.etimedout)
    #expect(try bus.readRegister(0x75, at: primary) == 0x68)
    // Scripted failures are the script working as written, not problems.
    #expect(bus.finish().isEmpty)
  }

  @Test func invalidBlockLengthsAreRefusedAndReported() {
    let bus = ScriptedI2CBus(
      [.read(0x3B, at: primary, returning: sampleBytes)], clock: ManualClock())
    let error = thrownError { () throws(I2CError) in
      _ = try bus.readRegisters(startingAt: 0x3B, count: 33, at: primary)
    }
    #expect(error?.kind == .invalidArgument)
    #expect(error?.errno?.rawValue == LinuxErrno.einval)
    #expect(bus.finish().map(\.kind) == [.invalidRequest, .leftover])
  }

  @Test func stepsCanBeAppended() throws {
    let bus = ScriptedI2CBus([], clock: ManualClock())
    bus.expect([.write(0x6B, 0x00, at: primary)])
    try bus.writeRegister(0x6B, value: 0x00, at: primary)
    #expect(bus.finish().isEmpty)
  }
}
