import ByteFormats
import HardwareAbstraction

/// One step of an I2C script: the transfer the driver must make next and what the bus answers.
public struct ScriptedTransaction: Hashable, Sendable, CustomStringConvertible {
  /// What the bus answers when the transfer matches.
  public enum Reply: Hashable, Sendable {
    /// The write succeeds.
    case completes
    /// The read succeeds with these bytes (their count is the expected length).
    case returns([UInt8])
    /// The transfer fails with this error kind and errno (`nil`: the kind's usual errno).
    case fails(I2CError.Kind, Errno?)
  }

  /// The transfer the driver must make.
  public var transfer: I2CTransfer
  /// The answer.
  public var reply: Reply
  /// The least simulated time that must have passed since the previous transaction (or since
  /// the bus was made, for the first step), on the bus's clock. Pins waits such as "at least
  /// 100 ms after DEVICE_RESET".
  public var minimumDelay: Duration?

  public init(_ transfer: I2CTransfer, reply: Reply, minimumDelay: Duration? = nil) {
    self.transfer = transfer
    self.reply = reply
    self.minimumDelay = minimumDelay
  }

  /// Expect a write of `value` to `register` at `address`; it succeeds.
  public static func write(_ register: UInt8, _ value: UInt8, at address: I2CAddress)
    -> ScriptedTransaction
  {
    ScriptedTransaction(.write(register, value: value, at: address), reply: .completes)
  }

  /// Expect a read of `bytes.count` bytes from `register` at `address`; it returns `bytes`.
  public static func read(_ register: UInt8, at address: I2CAddress, returning bytes: [UInt8])
    -> ScriptedTransaction
  {
    ScriptedTransaction(.read(register, count: bytes.count, at: address), reply: .returns(bytes))
  }

  /// Expect a read of `count` bytes from `register` at `address`; it fails with `kind`.
  public static func read(
    _ register: UInt8, count: Int, at address: I2CAddress, failingWith kind: I2CError.Kind,
    errno: Errno? = nil
  ) -> ScriptedTransaction {
    ScriptedTransaction(.read(register, count: count, at: address), reply: .fails(kind, errno))
  }

  /// The same expected transfer, answered with a failure instead.
  public func failing(with kind: I2CError.Kind, errno: Errno? = nil) -> ScriptedTransaction {
    ScriptedTransaction(transfer, reply: .fails(kind, errno), minimumDelay: minimumDelay)
  }

  /// The same step, required to come at least `delay` after the previous transaction.
  public func notBefore(_ delay: Duration) -> ScriptedTransaction {
    ScriptedTransaction(transfer, reply: reply, minimumDelay: delay)
  }

  /// `read 1 byte from 0x75 at 0x68 → [0x68]`, `write 0x80 to 0x6B at 0x68 → fails ioError`.
  public var description: String {
    var text = transfer.description
    switch reply {
    case .completes: break
    case .returns(let bytes):
      text += " → [" + bytes.map { hexByte($0) }.joined(separator: ", ") + "]"
    case .fails(let kind, _): text += " → fails \(kind.rawValue)"
    }
    if let minimumDelay { text += " (not before \(minimumDelay) after the previous one)" }
    return text
  }
}

/// One way a run departed from its script.
public struct ScriptProblem: Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// A read where a write was expected, or the reverse.
    case wrongOperation
    /// The right operation at another address.
    case wrongAddress
    /// The right operation and address, another register.
    case wrongRegister
    /// A read of another number of bytes.
    case wrongLength
    /// A write of another value.
    case wrongValue
    /// The expected transfer, sooner after the previous one than the script's `minimumDelay`.
    case tooEarly
    /// A transfer after the script had ended.
    case unexpected
    /// A block length outside `1 … 32`: refused like a real bus (`EINVAL`), and reported.
    case invalidRequest
    /// A step that never happened (reported by `finish()`).
    case leftover
  }

  public var kind: Kind
  /// The 0-based position in the script of the step concerned (for `.unexpected` and
  /// `.invalidRequest`, the position the transfer arrived at).
  public var step: Int
  /// The step that was expected, when there was one.
  public var expected: ScriptedTransaction?
  /// What the driver did, when it did something.
  public var actual: I2CTransfer?
  /// For `.tooEarly`: the time since the previous transaction.
  public var elapsed: Duration?

  public init(
    kind: Kind, step: Int, expected: ScriptedTransaction?, actual: I2CTransfer?,
    elapsed: Duration? = nil
  ) {
    self.kind = kind
    self.step = step
    self.expected = expected
    self.actual = actual
    self.elapsed = elapsed
  }

  /// `step 3: wrongValue: expected write 0x01 to 0x6B at 0x68, got write 0x00 to 0x6B at 0x68`.
  public var description: String {
    var text = "step \(step): \(kind.rawValue)"
    switch kind {
    case .unexpected:
      text += ": the script had ended"
    case .leftover:
      text += ": never happened"
    case .invalidRequest:
      text += ": block length outside 1…32"
    case .tooEarly:
      if let elapsed, let expected, let minimumDelay = expected.minimumDelay {
        text +=
          ": only \(elapsed) after the previous transaction, expected at least \(minimumDelay)"
      }
    default:
      break
    }
    if let expected { text += "; expected \(expected)" }
    if let actual { text += "; got \(actual)" }
    return text
  }
}

/// The problems of a scripted run, thrown by `ScriptedI2CBus.verify()`.
public struct ScriptFailure: Error, Hashable, Sendable, CustomStringConvertible {
  public var problems: [ScriptProblem]

  public var description: String {
    "scripted I2C bus: \(problems.count) problem\(problems.count == 1 ? "" : "s")\n"
      + problems.map { "  " + $0.description }.joined(separator: "\n")
  }
}

/// An I2C bus that expects an exact, ordered list of transactions: how a driver's register
/// sequence (identify, reset, wake, configure…) is pinned byte for byte.
///
/// Each transfer is compared with the next step. A match gets the step's reply (bytes, success,
/// or an injected error). A difference — another operation, address, register, length or
/// value, a transfer sooner than the step's `minimumDelay`, or any transfer after the script
/// ended — is a mismatch: it is recorded as a `ScriptProblem`, the mismatched step is consumed
/// (so one wrong value does not shift every later comparison), and the transfer throws an
/// `I2CError` of kind `.other`. `finish()` returns every problem, including the steps that never
/// happened; `verify()` throws them. The bus never stops a test itself: it does not depend on a
/// test framework, so tools can use it too; tests assert on what it returns.
///
/// It records every transfer it received (`performed`), so it allocates: it is for set-up
/// sequences, not for the allocation-free sample path.
///
/// A class because the driver owns it while the test inspects it. Not `Sendable`: a simulated
/// world belongs to one thread.
public final class ScriptedI2CBus: I2CBus {
  /// The name carried by thrown errors (`I2CError.bus`).
  public let name: String
  /// The clock `minimumDelay` steps are measured on.
  public let clock: ManualClock
  /// The whole script, in order.
  public private(set) var script: [ScriptedTransaction]
  /// How many steps have been consumed (matched or mismatched).
  public private(set) var position = 0
  /// Every transfer received, in order.
  public private(set) var performed: [I2CTransfer] = []
  /// The problems found so far (without the leftovers `finish()` adds).
  public private(set) var problems: [ScriptProblem] = []

  private var lastTransactionTime: Timestamp

  /// A bus expecting `script`; `minimumDelay` steps are measured on `clock`, from its reading
  /// now for the first step.
  public init(_ script: [ScriptedTransaction], clock: ManualClock, name: String = "scripted") {
    self.script = script
    self.clock = clock
    self.name = name
    lastTransactionTime = clock.now()
  }

  /// Appends steps to the script.
  public func expect(_ steps: [ScriptedTransaction]) {
    script += steps
  }

  /// Whether every step has been consumed.
  public var isComplete: Bool { position >= script.count }

  /// The steps not yet consumed.
  public var remaining: ArraySlice<ScriptedTransaction> { script[min(position, script.count)...] }

  /// Every problem: the mismatches so far, then one `.leftover` per step that never happened.
  /// Empty means the run followed the script exactly.
  public func finish() -> [ScriptProblem] {
    problems
      + remaining.indices.map { step in
        ScriptProblem(kind: .leftover, step: step, expected: script[step], actual: nil)
      }
  }

  /// Throws `ScriptFailure` with `finish()`'s problems, if there are any.
  public func verify() throws(ScriptFailure) {
    let all = finish()
    if !all.isEmpty { throw ScriptFailure(problems: all) }
  }

  public func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
    throws(I2CError)
  {
    let step = try match(.write(register, value: value, at: address))
    if case .fails(let kind, let errno) = step.reply {
      throw failure(kind, errno, step.transfer)
    }
  }

  public func readRegisters(
    startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer, at address: I2CAddress
  ) throws(I2CError) {
    let transfer = I2CTransfer.read(register, count: buffer.count, at: address)
    guard (1...Self.maximumBlockLength).contains(buffer.count) else {
      performed.append(transfer)
      problems.append(
        ScriptProblem(kind: .invalidRequest, step: position, expected: nil, actual: transfer))
      throw I2CError(
        .invalidArgument, operation: .readRegisters, errno: .invalidArgument, address: address,
        register: register, bus: name)
    }
    let step = try match(transfer)
    switch step.reply {
    case .returns(let bytes):
      for index in 0..<buffer.count { buffer[index] = bytes[index] }
    case .fails(let kind, let errno):
      throw failure(kind, errno, transfer)
    case .completes:
      // A read step built by hand with a write's reply: the script is wrong, say so.
      problems.append(
        ScriptProblem(kind: .wrongOperation, step: position - 1, expected: step, actual: transfer))
      throw failure(.other, nil, transfer)
    }
  }

  // The `I2CBus` conveniences are `mutating`, which a class held in a `let` cannot call;
  // these forward to them, so `let bus = …; try bus.readRegister(…)` works.

  /// Reads one register (see `I2CBus.readRegister(_:at:)`). Does not allocate.
  public func readRegister(_ register: UInt8, at address: I2CAddress) throws(I2CError) -> UInt8 {
    try readOneRegister(on: self, register, at: address)
  }

  /// Reads `count` consecutive registers into a new array (see `I2CBus`). Allocates.
  public func readRegisters(startingAt register: UInt8, count: Int, at address: I2CAddress)
    throws(I2CError) -> [UInt8]
  {
    try readRegisterArray(on: self, startingAt: register, count: count, at: address)
  }

  /// Compares `transfer` with the next step; consumes the step; returns it on a match, records
  /// the problem and throws `.other` otherwise.
  private func match(_ transfer: I2CTransfer) throws(I2CError) -> ScriptedTransaction {
    performed.append(transfer)
    let now = clock.now()
    let previous = lastTransactionTime
    lastTransactionTime = now
    guard position < script.count else {
      problems.append(
        ScriptProblem(
          kind: .unexpected, step: position + performedAfterEnd(), expected: nil, actual: transfer))
      throw failure(.other, nil, transfer)
    }
    let step = script[position]
    let stepIndex = position
    position += 1
    var kind = difference(expected: step.transfer, actual: transfer)
    var elapsed: Duration?
    if kind == nil, let minimumDelay = step.minimumDelay {
      elapsed = now - previous
      if now - previous < minimumDelay { kind = .tooEarly }
    }
    if let kind {
      problems.append(
        ScriptProblem(
          kind: kind, step: stepIndex, expected: step, actual: transfer,
          elapsed: kind == .tooEarly ? elapsed : nil))
      throw failure(.other, nil, transfer)
    }
    return step
  }

  /// How many transfers already arrived after the end (so each gets its own step number).
  private func performedAfterEnd() -> Int {
    problems.reduce(0) { $0 + ($1.kind == .unexpected ? 1 : 0) }
  }

  private func difference(expected: I2CTransfer, actual: I2CTransfer) -> ScriptProblem.Kind? {
    if expected.direction != actual.direction { return .wrongOperation }
    if expected.address != actual.address { return .wrongAddress }
    if expected.register != actual.register { return .wrongRegister }
    if expected.length != actual.length { return .wrongLength }
    if expected.value != actual.value { return .wrongValue }
    return nil
  }

  private func failure(_ kind: I2CError.Kind, _ errno: Errno?, _ transfer: I2CTransfer)
    -> I2CError
  {
    I2CError(
      kind, operation: transfer.operation, errno: errno ?? kind.typicalErrno,
      address: transfer.address, register: transfer.register, bus: name)
  }
}
