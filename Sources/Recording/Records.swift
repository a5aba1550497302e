import ByteFormats
import HardwareAbstraction
import MPU6050

/// The kinds of record a `.plumbraw` file holds, by their code (the first byte of a record).
public enum PlumbRawRecordKind: UInt8, CaseIterable, Hashable, Sendable {
  /// A sample the loop consumed: its time, the 14 bytes the driver read, how it got them.
  case sample = 0x01
  /// A loop tick that produced no sample (bus error, recovery, stuck data…), or an edge the
  /// loop took without reading.
  case unavailable = 0x02
  /// Samples the loop counted as missed (a gap in the edge times, a FIFO overflow).
  case missedSamples = 0x03
  /// The driver began, completed or failed a re-initialisation.
  case reinitialization = 0x04
  /// The sensor configuration changed (new ranges or rate from then on).
  case configurationChange = 0x05
  /// A line of text for people, or a host command the loop obeyed.
  case note = 0x06
  /// The loop woke from its fallback timer (polling, FIFO drains): the timing input of the
  /// fallback, as edge times are of interrupt mode.
  case timerWake = 0x07
  /// A 14-byte data burst that is not a delivered sample (self-test, a tick that failed after it).
  case burst = 0x10
  /// A register transfer that succeeded, other than a data burst (the bus transcript).
  case transfer = 0x11
  /// A register transfer that failed (the bus transcript).
  case transferFailure = 0x12
}

/// A set of record kinds, for reading only some.
public struct PlumbRawRecordKinds: OptionSet, Hashable, Sendable {
  public var rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  public init(_ kind: PlumbRawRecordKind) {
    rawValue = 1 << UInt32(kind.rawValue & 0x1F)
  }
  public func contains(_ kind: PlumbRawRecordKind) -> Bool {
    contains(PlumbRawRecordKinds(kind))
  }
  public static let sample = PlumbRawRecordKinds(.sample)
  public static let unavailable = PlumbRawRecordKinds(.unavailable)
  public static let missedSamples = PlumbRawRecordKinds(.missedSamples)
  public static let reinitialization = PlumbRawRecordKinds(.reinitialization)
  public static let configurationChange = PlumbRawRecordKinds(.configurationChange)
  public static let note = PlumbRawRecordKinds(.note)
  public static let timerWake = PlumbRawRecordKinds(.timerWake)
  public static let burst = PlumbRawRecordKinds(.burst)
  public static let transfer = PlumbRawRecordKinds(.transfer)
  public static let transferFailure = PlumbRawRecordKinds(.transferFailure)
  public static let all = PlumbRawRecordKinds(rawValue: .max)
}

/// The 14 bytes of one burst from ACCEL_XOUT_H (0x3B), stored inline: accelerometer X/Y/Z,
/// temperature, gyroscope X/Y/Z, big-endian pairs (RM §4.17–§4.19).
public struct PlumbRawBurstBytes: Hashable, Sendable, CustomStringConvertible {
  /// 16 bytes of inline storage; the last two stay zero.
  private var storage: (UInt64, UInt64) = (0, 0)

  /// Fourteen zero bytes.
  public init() {}

  /// The first 14 bytes of `bytes` (missing bytes are zero).
  public init(_ bytes: UnsafeRawBufferPointer) {
    let count = min(14, bytes.count)
    guard count > 0 else { return }
    withUnsafeMutableBytes(of: &storage) { target in
      target.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: count)
    }
  }

  /// The 14 bytes at `source` (a constant-size copy the compiler inlines: the decoders' path).
  init(exactly source: UnsafeRawPointer) {
    withUnsafeMutableBytes(of: &storage) { target in
      target.baseAddress!.copyMemory(from: source, byteCount: 14)
    }
  }

  /// The bytes of `array` (14 expected).
  public init(_ array: [UInt8]) {
    self = array.withUnsafeBytes { PlumbRawBurstBytes($0) }
  }

  /// What the chip sent for these counts.
  public init(_ raw: MPU6050RawSample) {
    withUnsafeMutableBytes(of: &storage) { target in
      _ = raw.write(bigEndian: UnsafeMutableRawBufferPointer(rebasing: target[0..<14]))
    }
  }

  /// Byte `index` (0…13).
  public subscript(index: Int) -> UInt8 {
    precondition((0..<14).contains(index), "a burst has 14 bytes")
    return Swift.withUnsafeBytes(of: storage) { $0[index] }
  }

  /// Copies the 14 bytes into `target`, which must hold at least 14 (refused otherwise, with
  /// nothing written). Not generic, unlike `withUnsafeBytes`: a replay copies every sample's
  /// bytes, and a generic closure call from another module is not specialised.
  public func copy(into target: UnsafeMutableRawBufferPointer) {
    precondition(target.count >= 14, "a burst's 14 bytes need 14 bytes of buffer")
    Swift.withUnsafeBytes(of: storage) { source in
      target.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: 14)
    }
  }

  /// Calls `body` with the 14 bytes.
  public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    try Swift.withUnsafeBytes(of: storage) {
      try body(UnsafeRawBufferPointer(rebasing: $0[0..<14]))
    }
  }

  /// The counts.
  public var raw: MPU6050RawSample {
    withUnsafeBytes { MPU6050RawSample(bigEndian: $0)! }
  }

  /// The bytes as an array (allocates).
  public var array: [UInt8] { withUnsafeBytes { Array($0) } }

  public static func == (a: PlumbRawBurstBytes, b: PlumbRawBurstBytes) -> Bool {
    a.storage == b.storage
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(storage.0)
    hasher.combine(storage.1)
  }

  /// `3B 00 …` in hex.
  public var description: String { array.map { hexByte($0) }.joined(separator: " ") }
}

/// The bytes of one register transfer (1…32, the SMBus block limit), stored inline.
public struct PlumbRawRegisterBytes: Hashable, Sendable {
  private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
  /// How many bytes are used (0…32).
  public private(set) var count: Int = 0

  public init() {}

  /// The first 32 bytes of `bytes`.
  public init(_ bytes: UnsafeRawBufferPointer) {
    count = min(32, bytes.count)
    let used = count
    guard used > 0 else { return }
    withUnsafeMutableBytes(of: &storage) { target in
      target.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: used)
    }
  }

  public init(_ array: [UInt8]) {
    self = array.withUnsafeBytes { PlumbRawRegisterBytes($0) }
  }

  /// One byte (a register write's value).
  public init(byte: UInt8) {
    self.init()
    withUnsafeMutableBytes(of: &storage) { $0[0] = byte }
    count = 1
  }

  public subscript(index: Int) -> UInt8 {
    precondition((0..<count).contains(index), "index out of range")
    return Swift.withUnsafeBytes(of: storage) { $0[index] }
  }

  public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    let used = count
    return try Swift.withUnsafeBytes(of: storage) {
      try body(UnsafeRawBufferPointer(rebasing: $0[0..<used]))
    }
  }

  public var array: [UInt8] { withUnsafeBytes { Array($0) } }

  public static func == (a: PlumbRawRegisterBytes, b: PlumbRawRegisterBytes) -> Bool {
    a.count == b.count && a.storage == b.storage
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(count)
    hasher.combine(storage.0)
    hasher.combine(storage.1)
    hasher.combine(storage.2)
    hasher.combine(storage.3)
  }
}

/// How the loop got a sample.
public enum PlumbRawSampleSource: UInt8, CaseIterable, Hashable, Sendable {
  /// At a data-ready edge: the timestamp is the kernel's edge time.
  case interrupt = 0
  /// Polling INT_STATUS without an edge (fallback): the timestamp is the poll time.
  case poll = 1
  /// Drained from the FIFO (fallback): the timestamp is the loop's estimate.
  case fifo = 2
}

/// What else is true of a sample.
public struct PlumbRawSampleFlags: OptionSet, Hashable, Sendable {
  public var rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  /// The driver flagged the burst as equal to the previous one (`isRepeat`): a duplicated edge
  /// or the start of stuck data. Readers of samples skip these.
  public static let repeatedRead = PlumbRawSampleFlags(rawValue: 1 << 0)
  /// The timestamp was estimated (FIFO records), not measured at an edge.
  public static let timestampEstimated = PlumbRawSampleFlags(rawValue: 1 << 1)
  /// The burst succeeded only after the driver retried it.
  public static let retried = PlumbRawSampleFlags(rawValue: 1 << 2)
  static let known: UInt8 = 0x07
}

/// A sample the loop consumed.
public struct PlumbRawSample: Hashable, Sendable {
  /// The sample time, `CLOCK_MONOTONIC`: the edge's timestamp (or the poll time, or the FIFO
  /// estimate, as `source` says).
  public var timestamp: Timestamp
  /// The 14 bytes the driver read.
  public var bytes: PlumbRawBurstBytes
  public var source: PlumbRawSampleSource
  public var flags: PlumbRawSampleFlags
  /// When the burst read completed, ns after `timestamp` (interrupt latency, lateness and the
  /// transfer itself; 0 when not measured). A replay moves its clock there, so latencies match.
  public var completionDelayNanoseconds: Int64

  public init(
    timestamp: Timestamp, bytes: PlumbRawBurstBytes, source: PlumbRawSampleSource = .interrupt,
    flags: PlumbRawSampleFlags = [], completionDelayNanoseconds: Int64 = 0
  ) {
    self.timestamp = timestamp
    self.bytes = bytes
    self.source = source
    self.flags = flags
    self.completionDelayNanoseconds = completionDelayNanoseconds
  }

  /// The counts.
  public var raw: MPU6050RawSample { bytes.raw }
}

/// Why a loop tick produced no sample (the driver's `MPU6050Unavailable`, plus the loop's own
/// "took the edge without reading").
public enum PlumbRawUnavailableReason: Hashable, Sendable {
  /// The read failed on the bus after every retry. The bus name is not kept.
  case busError(I2CError)
  /// The driver was re-initialising.
  case recovering(MPU6050RecoveryStep)
  /// Identical bursts: stuck data.
  case stuckData
  /// The chip was found asleep or reset.
  case chipReset
  /// Polling: no new sample yet.
  case noNewSample
  /// The burst looked like a full-scale change and the read-back it set off found a control
  /// register changed: withheld, measured at the wrong range (the driver's
  /// `.configurationRestored`).
  case configurationRestored
  /// The loop took the edge and did not read (discarded during warm-up, say).
  case notRead

  /// The driver's reason.
  public init(_ unavailable: MPU6050Unavailable) {
    switch unavailable {
    case .busError(var error):
      error.bus = nil
      self = .busError(error)
    case .recovering(let step): self = .recovering(step)
    case .stuckData: self = .stuckData
    case .chipReset: self = .chipReset
    case .noNewSample: self = .noNewSample
    case .configurationRestored: self = .configurationRestored
    }
  }
}

/// A loop tick without a sample.
public struct PlumbRawUnavailable: Hashable, Sendable {
  /// The edge's timestamp, or the poll time.
  public var timestamp: Timestamp
  public var source: PlumbRawSampleSource
  public var reason: PlumbRawUnavailableReason

  public init(
    timestamp: Timestamp, source: PlumbRawSampleSource = .interrupt,
    reason: PlumbRawUnavailableReason
  ) {
    self.timestamp = timestamp
    self.source = source
    self.reason = reason
  }
}

/// Samples the loop counted as missed.
public struct PlumbRawMissedSamples: Hashable, Sendable {
  public enum Cause: UInt8, CaseIterable, Hashable, Sendable {
    /// The interval between two edges was more than 1.5 periods (the sample clock's gap test).
    case sampleClockGap = 0
    /// The driver counted FIFO records lost to an overflow or reset.
    case fifoLoss = 1
    /// Anything else the loop counts.
    case other = 2
  }
  /// The time of the sample after the gap.
  public var timestamp: Timestamp
  public var count: UInt32
  public var cause: Cause

  public init(timestamp: Timestamp, count: UInt32, cause: Cause = .sampleClockGap) {
    self.timestamp = timestamp
    self.count = count
    self.cause = cause
  }
}

/// A step of a driver re-initialisation.
public struct PlumbRawReinitialization: Hashable, Sendable {
  public enum Event: Hashable, Sendable {
    case began(MPU6050ReinitializationReason)
    case completed
    case attemptFailed
  }
  public var timestamp: Timestamp
  public var event: Event

  public init(timestamp: Timestamp, event: Event) {
    self.timestamp = timestamp
    self.event = event
  }
}

/// The sensor configuration from `timestamp` on.
public struct PlumbRawConfigurationChange: Hashable, Sendable {
  public var timestamp: Timestamp
  public var configuration: MPU6050Configuration
  public var scale: PlumbRawScale

  public init(timestamp: Timestamp, configuration: MPU6050Configuration, scale: PlumbRawScale) {
    self.timestamp = timestamp
    self.configuration = configuration
    self.scale = scale
  }
}

/// Text attached to a moment of the recording.
public struct PlumbRawNote: Hashable, Sendable {
  public enum Category: UInt8, CaseIterable, Hashable, Sendable {
    /// For people (`operator turned the board over`).
    case text = 0
    /// A host command line the loop obeyed (`tare`, `rate 50`): frames after it depend on it.
    case hostCommand = 1
  }
  /// The longest text, UTF-8 bytes (what fits in one record).
  public static let maximumTextBytes = 255 - 9

  public var timestamp: Timestamp
  public var category: Category
  public var text: String

  public init(timestamp: Timestamp, category: Category = .text, text: String) {
    self.timestamp = timestamp
    self.category = category
    self.text = text
  }
}

/// The loop woke from its fallback timer at `timestamp` (later than asked when it was stalled).
public struct PlumbRawTimerWake: Hashable, Sendable {
  public var timestamp: Timestamp

  public init(timestamp: Timestamp) {
    self.timestamp = timestamp
  }
}

/// A data burst no sample record holds.
public struct PlumbRawBurst: Hashable, Sendable {
  /// When the read completed.
  public var completedAt: Timestamp
  public var bytes: PlumbRawBurstBytes

  public init(completedAt: Timestamp, bytes: PlumbRawBurstBytes) {
    self.completedAt = completedAt
    self.bytes = bytes
  }
}

/// Read or write.
public enum PlumbRawTransferDirection: UInt8, CaseIterable, Hashable, Sendable {
  case read = 0
  case write = 1
}

/// A register transfer that succeeded: a read's bytes or a write's value.
public struct PlumbRawTransfer: Hashable, Sendable {
  /// The transfer's number on the bus since recording began (0-based, every transfer counted,
  /// data bursts and failures included).
  public var index: UInt64
  public var completedAt: Timestamp
  public var direction: PlumbRawTransferDirection
  /// The register written, or the first register read.
  public var register: UInt8
  /// What was read (1…32 bytes), or the one byte written.
  public var data: PlumbRawRegisterBytes

  public init(
    index: UInt64, completedAt: Timestamp, direction: PlumbRawTransferDirection, register: UInt8,
    data: PlumbRawRegisterBytes
  ) {
    self.index = index
    self.completedAt = completedAt
    self.direction = direction
    self.register = register
    self.data = data
  }
}

/// A register transfer that failed.
public struct PlumbRawTransferFailure: Hashable, Sendable {
  public var index: UInt64
  /// When the failed transfer returned (after the adapter's timeout, for a lock-up).
  public var completedAt: Timestamp
  public var direction: PlumbRawTransferDirection
  public var register: UInt8
  /// Bytes asked for (1 for a write).
  public var length: UInt8
  /// The error: kind, operation, errno, address, register (the bus name is not kept).
  public var error: I2CError

  public init(
    index: UInt64, completedAt: Timestamp, direction: PlumbRawTransferDirection, register: UInt8,
    length: UInt8, error: I2CError
  ) {
    self.index = index
    self.completedAt = completedAt
    self.direction = direction
    self.register = register
    self.length = length
    var error = error
    error.bus = nil
    self.error = error
  }
}

/// One record of a `.plumbraw` file.
public enum PlumbRawRecord: Hashable, Sendable {
  case sample(PlumbRawSample)
  case unavailable(PlumbRawUnavailable)
  case missedSamples(PlumbRawMissedSamples)
  case reinitialization(PlumbRawReinitialization)
  case configurationChange(PlumbRawConfigurationChange)
  case note(PlumbRawNote)
  case timerWake(PlumbRawTimerWake)
  case burst(PlumbRawBurst)
  case transfer(PlumbRawTransfer)
  case transferFailure(PlumbRawTransferFailure)

  public var kind: PlumbRawRecordKind {
    switch self {
    case .sample: .sample
    case .unavailable: .unavailable
    case .missedSamples: .missedSamples
    case .reinitialization: .reinitialization
    case .configurationChange: .configurationChange
    case .note: .note
    case .timerWake: .timerWake
    case .burst: .burst
    case .transfer: .transfer
    case .transferFailure: .transferFailure
    }
  }

  /// The record's time: the sample or event time, or a transfer's completion.
  public var timestamp: Timestamp {
    switch self {
    case .sample(let r): r.timestamp
    case .unavailable(let r): r.timestamp
    case .missedSamples(let r): r.timestamp
    case .reinitialization(let r): r.timestamp
    case .configurationChange(let r): r.timestamp
    case .note(let r): r.timestamp
    case .timerWake(let r): r.timestamp
    case .burst(let r): r.completedAt
    case .transfer(let r): r.completedAt
    case .transferFailure(let r): r.completedAt
    }
  }
}

// MARK: - Codes

/// The enum codes records store, restated in PLUMBRAW.md; a new case gets a new code, never a
/// reused one.
enum RecordCodes {
  static let i2cKinds: [I2CError.Kind] = [
    .notAcknowledged, .arbitrationLost, .busBusy, .timedOut, .ioError, .protocolViolation,
    .notSupported, .adapterUnavailable, .busMissing, .permissionDenied, .addressInUse,
    .invalidArgument, .shortTransfer, .other,
  ]
  static let operations: [I2CError.Operation] = [
    .open, .selectAddress, .writeRegister, .readRegisters,
  ]
  static let reasons: [MPU6050ReinitializationReason] = [
    .busErrors, .chipReset, .stuckData, .configurationMismatch, .startUp,
  ]

  static func code(_ kind: I2CError.Kind) -> UInt8 {
    UInt8(i2cKinds.firstIndex(of: kind) ?? i2cKinds.count - 1)
  }
  static func code(_ operation: I2CError.Operation) -> UInt8 {
    UInt8(operations.firstIndex(of: operation) ?? 0)
  }
  static func code(_ reason: MPU6050ReinitializationReason) -> UInt8 {
    UInt8(reasons.firstIndex(of: reason) ?? 0)
  }
  static func element<T>(_ table: [T], _ code: UInt8) -> T? {
    Int(code) < table.count ? table[Int(code)] : nil
  }
}

// MARK: - Encoding

extension PlumbRawRecord {
  /// Writes the whole record (kind, length, payload, CRC) at the start of `buffer`, which holds
  /// at least `PlumbRawFormat.maximumRecordLength` bytes. Returns the record's length, or `nil`
  /// when the record cannot be encoded (a note too long, a transfer of no bytes). Allocation-free.
  func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
    var out = RawEncoder(buffer)
    out.u8(kind.rawValue)
    out.u8(0)  // payload length, patched
    switch self {
    case .sample(let r):
      out.i64(r.timestamp.nanoseconds)
      r.bytes.withUnsafeBytes { out.bytes($0) }
      out.u8(r.source.rawValue | r.flags.rawValue << 2)
      if (0...Int64(UInt32.max)).contains(r.completionDelayNanoseconds) {
        out.u32(UInt32(r.completionDelayNanoseconds))
      } else {
        out.i64(r.completionDelayNanoseconds)
      }
    case .unavailable(let r):
      out.i64(r.timestamp.nanoseconds)
      out.u8(r.source.rawValue)
      switch r.reason {
      case .busError(let error):
        out.u8(0)
        out.u8(RecordCodes.code(error.kind))
        out.u8(RecordCodes.code(error.operation))
        out.u8(
          (error.errno == nil ? 0 : 1) | (error.address == nil ? 0 : 2)
            | (error.register == nil ? 0 : 4))
        out.u8(error.address?.rawValue ?? 0)
        out.u8(error.register ?? 0)
        out.u8(0)
        out.u8(0)
        out.u8(0)
        out.i32(error.errno?.rawValue ?? 0)
        out.u32(0)
      case .recovering(let step):
        out.u8(1)
        let (code, until): (UInt8, Timestamp) =
          switch step {
          case .waitingToRetry(let until): (0, until)
          case .resetting(let until): (1, until)
          case .settling(let until): (2, until)
          }
        out.u8(code)
        for _ in 0..<7 { out.u8(0) }
        out.i64(until.nanoseconds)
      case .stuckData, .chipReset, .noNewSample, .notRead, .configurationRestored:
        let code: UInt8 =
          switch r.reason {
          case .stuckData: 2
          case .chipReset: 3
          case .noNewSample: 4
          case .configurationRestored: 6
          default: 5
          }
        out.u8(code)
        for _ in 0..<16 { out.u8(0) }
      }
    case .missedSamples(let r):
      out.i64(r.timestamp.nanoseconds)
      out.u32(r.count)
      out.u8(r.cause.rawValue)
    case .reinitialization(let r):
      out.i64(r.timestamp.nanoseconds)
      switch r.event {
      case .began(let reason):
        out.u8(0)
        out.u8(RecordCodes.code(reason))
      case .completed:
        out.u8(1)
        out.u8(0xFF)
      case .attemptFailed:
        out.u8(2)
        out.u8(0xFF)
      }
    case .configurationChange(let r):
      out.i64(r.timestamp.nanoseconds)
      out.f64(r.configuration.sampleRateHertz)
      out.u8(r.configuration.lowPassFilter.rawValue)
      out.u8(r.configuration.gyroFullScale.rawValue)
      out.u8(r.configuration.accelerometerFullScale.rawValue)
      out.u8(r.configuration.dataReadyInterrupt ? 1 : 0)
      out.f64(r.scale.gyroRadiansPerSecondPerCount)
      out.f64(r.scale.accelerometerMetersPerSecondSquaredPerCount)
      out.f64(r.scale.temperatureCountsPerDegreeCelsius)
      out.f64(r.scale.temperatureOffsetCelsius)
    case .note(let r):
      var text = r.text
      let fits = text.withUTF8 { utf8 -> Bool in
        guard utf8.count <= PlumbRawNote.maximumTextBytes else { return false }
        out.i64(r.timestamp.nanoseconds)
        out.u8(r.category.rawValue)
        out.bytes(UnsafeRawBufferPointer(utf8))
        return true
      }
      guard fits else { return nil }
    case .timerWake(let r):
      out.i64(r.timestamp.nanoseconds)
    case .burst(let r):
      out.i64(r.completedAt.nanoseconds)
      r.bytes.withUnsafeBytes { out.bytes($0) }
    case .transfer(let r):
      guard r.data.count >= 1, r.direction == .read || r.data.count == 1 else { return nil }
      out.u64(r.index)
      out.i64(r.completedAt.nanoseconds)
      out.u8(r.direction.rawValue)
      out.u8(r.register)
      out.u8(UInt8(r.data.count))
      r.data.withUnsafeBytes { out.bytes($0) }
    case .transferFailure(let r):
      out.u64(r.index)
      out.i64(r.completedAt.nanoseconds)
      out.u8(r.direction.rawValue)
      out.u8(r.register)
      out.u8(r.length)
      out.u8(RecordCodes.code(r.error.kind))
      out.u8(RecordCodes.code(r.error.operation))
      out.u8((r.error.errno == nil ? 0 : 1) | (r.error.address == nil ? 0 : 2))
      out.u8(r.error.address?.rawValue ?? 0)
      out.i32(r.error.errno?.rawValue ?? 0)
    }
    let payloadLength = out.count - 2
    out.patch(UInt8(payloadLength), at: 1)
    out.u32(CRC32C.checksum(out.written))
    return out.count
  }
}

// MARK: - Decoding

/// What decoding one record's payload found.
enum DecodedRecord {
  case record(PlumbRawRecord)
  /// A kind this reader does not know (a newer minor version): skip it.
  case unknownKind
  /// The kind is known but the payload is impossible.
  case malformed(String)
}

extension PlumbRawRecord {
  /// Decodes the payload of a record of kind `code`. Allocation-free except for notes.
  ///
  /// The payload comes from a file: every field is read through a bounds-checked cursor, so a
  /// payload shorter than its kind needs is `.malformed` (naming the byte where it ran out),
  /// never a trap.
  static func decode(kind code: UInt8, payload: UnsafeRawBufferPointer) -> DecodedRecord {
    guard let kind = PlumbRawRecordKind(rawValue: code) else { return .unknownKind }
    do {
      return try decode(kind, payload)
    } catch {
      return .malformed(
        "a \(kind) record's \(payload.count)-byte payload is cut short: \(error)")
    }
  }

  private static func decode(_ kind: PlumbRawRecordKind, _ payload: UnsafeRawBufferPointer)
    throws(ByteCursor.ShortInput) -> DecodedRecord
  {
    var input = ByteCursor(payload)
    // No variadic list and no message unless it is needed: this runs for every record a
    // replay reads.
    func length(_ expected: Int, or other: Int = -1) -> Bool {
      payload.count == expected || payload.count == other
    }
    var wrongLength: DecodedRecord {
      .malformed("a \(kind) record has a \(payload.count)-byte payload, which no writer produces")
    }
    switch kind {
    case .sample:
      guard length(27, or: 31) else { return wrongLength }
      guard let sample = PlumbRawSample.decode(payload) else {
        return .malformed("a sample names source code \(payload[22] & 0x03)")
      }
      return .record(.sample(sample))
    case .unavailable:
      guard length(26) else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      guard let source = PlumbRawSampleSource(rawValue: try input.readU8()) else {
        return .malformed("an unavailable record names an unknown source")
      }
      let reasonCode = try input.readU8()
      let reason: PlumbRawUnavailableReason
      switch reasonCode {
      case 0:
        let kindCode = try input.readU8()
        let operationCode = try input.readU8()
        let present = try input.readU8()
        let address = try input.readU8()
        let register = try input.readU8()
        try input.readSkipping(3)
        let errno = try input.readI32()
        guard let errorKind = RecordCodes.element(RecordCodes.i2cKinds, kindCode),
          let operation = RecordCodes.element(RecordCodes.operations, operationCode)
        else { return .malformed("a bus error names unknown codes \(kindCode)/\(operationCode)") }
        reason = .busError(
          I2CError(
            errorKind, operation: operation,
            errno: present & 1 != 0 ? Errno(rawValue: errno) : nil,
            address: present & 2 != 0 ? I2CAddress(rawValue: address & 0x7F) : nil,
            register: present & 4 != 0 ? register : nil))
      case 1:
        let step = try input.readU8()
        try input.readSkipping(7)
        let until = Timestamp(nanoseconds: try input.readI64())
        switch step {
        case 0: reason = .recovering(.waitingToRetry(until: until))
        case 1: reason = .recovering(.resetting(until: until))
        case 2: reason = .recovering(.settling(until: until))
        default: return .malformed("a recovery record names unknown step \(step)")
        }
      case 2: reason = .stuckData
      case 3: reason = .chipReset
      case 4: reason = .noNewSample
      case 5: reason = .notRead
      case 6: reason = .configurationRestored
      default: return .malformed("an unavailable record names unknown reason \(reasonCode)")
      }
      return .record(
        .unavailable(PlumbRawUnavailable(timestamp: time, source: source, reason: reason)))
    case .missedSamples:
      guard length(13) else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      let count = try input.readU32()
      guard let cause = PlumbRawMissedSamples.Cause(rawValue: try input.readU8()) else {
        return .malformed("a missed-samples record names an unknown cause")
      }
      return .record(
        .missedSamples(PlumbRawMissedSamples(timestamp: time, count: count, cause: cause)))
    case .reinitialization:
      guard length(10) else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      let event = try input.readU8()
      let reasonCode = try input.readU8()
      switch event {
      case 0:
        guard let reason = RecordCodes.element(RecordCodes.reasons, reasonCode) else {
          return .malformed("a re-initialisation names unknown reason \(reasonCode)")
        }
        return .record(.reinitialization(.init(timestamp: time, event: .began(reason))))
      case 1: return .record(.reinitialization(.init(timestamp: time, event: .completed)))
      case 2: return .record(.reinitialization(.init(timestamp: time, event: .attemptFailed)))
      default: return .malformed("a re-initialisation names unknown event \(event)")
      }
    case .configurationChange:
      guard length(52) else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      let rate = try input.readF64()
      let dlpfCode = try input.readU8()
      let gyroCode = try input.readU8()
      let accelCode = try input.readU8()
      guard let dlpf = DigitalLowPassFilter(rawValue: dlpfCode),
        let gyro = GyroFullScale(rawValue: gyroCode),
        let accel = AccelerometerFullScale(rawValue: accelCode)
      else { return .malformed("a configuration change names unknown register codes") }
      let dataReady = try input.readU8()
      let gyroScale = try input.readF64()
      let accelScale = try input.readF64()
      let temperatureScale = try input.readF64()
      let temperatureOffset = try input.readF64()
      let scale = PlumbRawScale(
        gyroRadiansPerSecondPerCount: gyroScale,
        accelerometerMetersPerSecondSquaredPerCount: accelScale,
        temperatureCountsPerDegreeCelsius: temperatureScale,
        temperatureOffsetCelsius: temperatureOffset)
      guard dataReady <= 1, scale.isFinite else {
        return .malformed("a configuration change holds an impossible value")
      }
      return .record(
        .configurationChange(
          PlumbRawConfigurationChange(
            timestamp: time,
            configuration: MPU6050Configuration(
              sampleRateHertz: rate, lowPassFilter: dlpf, gyroFullScale: gyro,
              accelerometerFullScale: accel, dataReadyInterrupt: dataReady == 1),
            scale: scale)))
    case .note:
      guard payload.count >= 9 else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      guard let category = PlumbRawNote.Category(rawValue: try input.readU8()) else {
        return .malformed("a note names an unknown category")
      }
      guard let text = String(validating: try input.readSlice(input.remaining), as: UTF8.self)
      else {
        return .malformed("a note's text is not valid UTF-8")
      }
      return .record(.note(PlumbRawNote(timestamp: time, category: category, text: text)))
    case .timerWake:
      guard length(8) else { return wrongLength }
      let time = Timestamp(nanoseconds: try input.readI64())
      return .record(.timerWake(PlumbRawTimerWake(timestamp: time)))
    case .burst:
      guard let burst = PlumbRawBurst.decode(payload) else { return wrongLength }
      return .record(.burst(burst))
    case .transfer:
      guard payload.count >= 20 else { return wrongLength }
      let index = try input.readU64()
      let time = Timestamp(nanoseconds: try input.readI64())
      guard let direction = PlumbRawTransferDirection(rawValue: try input.readU8()) else {
        return .malformed("a transfer names an unknown direction")
      }
      let register = try input.readU8()
      let count = Int(try input.readU8())
      guard (1...32).contains(count), input.remaining == count,
        direction == .read || count == 1
      else { return .malformed("a transfer's byte count (\(count)) does not fit its record") }
      let data = PlumbRawRegisterBytes(try input.readSlice(count))
      return .record(
        .transfer(
          PlumbRawTransfer(
            index: index, completedAt: time, direction: direction, register: register,
            data: data)))
    case .transferFailure:
      guard length(27) else { return wrongLength }
      let index = try input.readU64()
      let time = Timestamp(nanoseconds: try input.readI64())
      guard let direction = PlumbRawTransferDirection(rawValue: try input.readU8()) else {
        return .malformed("a transfer failure names an unknown direction")
      }
      let register = try input.readU8()
      let requested = try input.readU8()
      let kindCode = try input.readU8()
      let operationCode = try input.readU8()
      let present = try input.readU8()
      let address = try input.readU8()
      let errno = try input.readI32()
      guard let errorKind = RecordCodes.element(RecordCodes.i2cKinds, kindCode),
        let operation = RecordCodes.element(RecordCodes.operations, operationCode)
      else { return .malformed("a transfer failure names unknown codes") }
      return .record(
        .transferFailure(
          PlumbRawTransferFailure(
            index: index, completedAt: time, direction: direction, register: register,
            length: requested,
            error: I2CError(
              errorKind, operation: operation,
              errno: present & 1 != 0 ? Errno(rawValue: errno) : nil,
              address: present & 2 != 0 ? I2CAddress(rawValue: address & 0x7F) : nil,
              register: register))))
    }
  }
}

extension PlumbRawSample {
  /// Whether `decode` accepts `payload` (its length, its source code), without decoding it: the
  /// reader's scan checks every sample record of a file this way.
  static func isWellFormed(_ payload: UnsafeRawBufferPointer) -> Bool {
    (payload.count == 27 || payload.count == 31)
      && PlumbRawSampleSource(rawValue: payload[22] & 0x03) != nil
  }

  /// A sample record's payload (27 or 31 bytes: time, the 14 bytes, source and flags, the
  /// completion delay in 4 or 8 bytes), or `nil` when the length or the source code is wrong.
  /// Straight loads at fixed offsets, no enum: every sample of a replay comes through here.
  static func decode(_ payload: UnsafeRawBufferPointer) -> PlumbRawSample? {
    guard isWellFormed(payload), let base = payload.baseAddress else { return nil }
    let flagsByte = payload[22]
    guard let source = PlumbRawSampleSource(rawValue: flagsByte & 0x03) else { return nil }
    let time = Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 0, as: Int64.self))
    let delay =
      payload.count == 27
      ? Int64(UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: 23, as: UInt32.self)))
      : Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 23, as: Int64.self))
    return PlumbRawSample(
      timestamp: Timestamp(nanoseconds: time),
      bytes: PlumbRawBurstBytes(exactly: base + 8), source: source,
      flags: PlumbRawSampleFlags(rawValue: (flagsByte >> 2) & PlumbRawSampleFlags.known),
      completionDelayNanoseconds: delay)
  }
}

extension PlumbRawBurst {
  /// A burst record's payload (22 bytes: completion time, the 14 bytes), or `nil`.
  static func decode(_ payload: UnsafeRawBufferPointer) -> PlumbRawBurst? {
    guard payload.count == 22, let base = payload.baseAddress else { return nil }
    return PlumbRawBurst(
      completedAt: Timestamp(
        nanoseconds: Int64(littleEndian: payload.loadUnaligned(fromByteOffset: 0, as: Int64.self))),
      bytes: PlumbRawBurstBytes(exactly: base + 8))
  }
}
