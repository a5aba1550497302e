/// Fixed-size MAVLink byte arrays (`char[16]`, `uint8_t[8]`, `uint8_t[18]`, `uint8_t[251]`) held
/// inline in a tuple: a message that carries one is encoded and decoded on the firmware's loop
/// without a heap allocation. Each type's storage is exactly its wire size (no padding), so two
/// values are equal when their bytes are, and decoding keeps every byte (what a packet carries
/// after a NUL included): `encode(decode(packet))` gives the packet's own bytes.

/// Whether the bytes of two values are the same (the storage tuples have no padding).
@inline(__always)
private func sameBytes<Storage>(_ a: Storage, _ b: Storage) -> Bool {
  withUnsafeBytes(of: a) { x in withUnsafeBytes(of: b) { y in x.elementsEqual(y) } }
}

/// A MAVLink parameter name, `param_id` (`char[16]`): ASCII, NUL-padded, and not NUL-terminated
/// when it is 16 characters long (common.xml, PARAM_VALUE). Equality is on all 16 bytes, so a
/// name equals the NUL-padded name a ground station sends.
public struct MAVLinkParameterID: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// Bytes on the wire.
  public static let count = 16

  private var storage: (UInt64, UInt64) = (0, 0)

  /// All NUL: the empty name (PARAM_REQUEST_READ sends it when it asks by index).
  public init() {}

  /// The first 16 bytes of the name's UTF-8; a longer name is cut (a MAVLink name never is).
  public init(_ name: String) {
    var index = 0
    for byte in name.utf8 where index < Self.count {
      self[index] = byte
      index += 1
    }
  }

  /// Allocation-free, for names written in the source.
  public init(stringLiteral name: StaticString) {
    self.init()
    name.withUTF8Buffer { utf8 in
      for index in 0..<min(utf8.count, Self.count) { self[index] = utf8[index] }
    }
  }

  /// Exactly the 16 wire bytes (the first 16 of `bytes`; missing ones are NUL).
  public init(bytes: UnsafeRawBufferPointer) {
    for index in 0..<min(bytes.count, Self.count) { self[index] = bytes[index] }
  }

  /// The byte at `index` (0 ..< 16).
  public subscript(index: Int) -> UInt8 {
    get {
      precondition(index >= 0 && index < Self.count, "param_id index \(index) out of 0..<16")
      return withUnsafeBytes(of: storage) { $0[index] }
    }
    set {
      precondition(index >= 0 && index < Self.count, "param_id index \(index) out of 0..<16")
      withUnsafeMutableBytes(of: &storage) { $0[index] = newValue }
    }
  }

  /// Characters before the first NUL (16 when there is none).
  public var length: Int {
    withBytes { bytes in bytes.firstIndex(of: 0) ?? Self.count }
  }

  /// Calls `body` with the 16 wire bytes.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { try body($0) }
  }

  /// The name up to its first NUL, as text for tools and logs (invalid UTF-8 becomes U+FFFD).
  public var description: String {
    withBytes { String(decoding: $0[0..<length], as: UTF8.self) }
  }

  public static func == (a: MAVLinkParameterID, b: MAVLinkParameterID) -> Bool {
    sameBytes(a.storage, b.storage)
  }

  public func hash(into hasher: inout Hasher) {
    withBytes { hasher.combine(bytes: $0) }
  }
}

/// `uint8_t[8]`: AUTOPILOT_VERSION's `flight_custom_version`, `middleware_custom_version` and
/// `os_custom_version` ("Custom version field, commonly the first 8 bytes of the git hash").
public struct MAVLinkBytes8: Hashable, Sendable {
  /// Bytes on the wire.
  public static let count = 8

  private var storage: UInt64 = 0

  /// All zero.
  public init() {}

  /// The first 8 bytes of `bytes` (missing ones are zero).
  public init(bytes: UnsafeRawBufferPointer) {
    for index in 0..<min(bytes.count, Self.count) { self[index] = bytes[index] }
  }

  /// The first 8 of `bytes` (missing ones are zero), for tests and tools.
  public init(_ bytes: [UInt8]) {
    for (index, byte) in bytes.prefix(Self.count).enumerated() { self[index] = byte }
  }

  /// The byte at `index` (0 ..< 8), in wire order.
  public subscript(index: Int) -> UInt8 {
    get {
      precondition(index >= 0 && index < Self.count, "uint8_t[8] index \(index) out of 0..<8")
      return withUnsafeBytes(of: storage) { $0[index] }
    }
    set {
      precondition(index >= 0 && index < Self.count, "uint8_t[8] index \(index) out of 0..<8")
      withUnsafeMutableBytes(of: &storage) { $0[index] = newValue }
    }
  }

  /// Calls `body` with the 8 wire bytes.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { try body($0) }
  }

  public static func == (a: MAVLinkBytes8, b: MAVLinkBytes8) -> Bool {
    sameBytes(a.storage, b.storage)
  }

  public func hash(into hasher: inout Hasher) {
    withBytes { hasher.combine(bytes: $0) }
  }
}

/// `uint8_t[18]`: AUTOPILOT_VERSION's extension `uid2` ("UID if provided by hardware", all zero
/// when there is none).
public struct MAVLinkBytes18: Hashable, Sendable {
  /// Bytes on the wire.
  public static let count = 18

  private var storage: (UInt64, UInt64, UInt16) = (0, 0, 0)

  /// All zero.
  public init() {}

  /// The first 18 bytes of `bytes` (missing ones are zero).
  public init(bytes: UnsafeRawBufferPointer) {
    for index in 0..<min(bytes.count, Self.count) { self[index] = bytes[index] }
  }

  /// The first 18 of `bytes` (missing ones are zero), for tests and tools.
  public init(_ bytes: [UInt8]) {
    for (index, byte) in bytes.prefix(Self.count).enumerated() { self[index] = byte }
  }

  /// The byte at `index` (0 ..< 18), in wire order.
  public subscript(index: Int) -> UInt8 {
    get {
      precondition(index >= 0 && index < Self.count, "uint8_t[18] index \(index) out of 0..<18")
      return withUnsafeBytes(of: storage) { $0[index] }
    }
    set {
      precondition(index >= 0 && index < Self.count, "uint8_t[18] index \(index) out of 0..<18")
      withUnsafeMutableBytes(of: &storage) { $0[index] = newValue }
    }
  }

  /// Calls `body` with the 18 wire bytes.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { try body($0) }
  }

  public static func == (a: MAVLinkBytes18, b: MAVLinkBytes18) -> Bool {
    sameBytes(a.storage, b.storage)
  }

  public func hash(into hasher: inout Hasher) {
    withBytes { hasher.combine(bytes: $0) }
  }
}

/// FILE_TRANSFER_PROTOCOL's `payload` (`uint8_t[251]`), held whole, with the MAVLink FTP header
/// laid over it (mavlink.io "File Transfer Protocol", "Payload format"; pymavlink's `mavftp_op`
/// packs it as `<HBBBBBBI`):
///
/// | bytes | field |
/// |---|---|
/// | 0–1 | `seq_number`, u16 |
/// | 2 | `session` |
/// | 3 | `opcode` (`MAV_FTP_OPCODE`) |
/// | 4 | `size`: bytes used in `data` |
/// | 5 | `req_opcode`: the request an ACK/NAK answers |
/// | 6 | `burst_complete` |
/// | 7 | padding |
/// | 8–11 | `offset`, u32 |
/// | 12–250 | `data` (239 bytes; a NAK's error code is `data[0]`) |
public struct MAVLinkFTPPayload: Hashable, Sendable {
  /// Bytes on the wire.
  public static let count = 251
  /// Bytes of the FTP header before `data`.
  public static let headerCount = 12
  /// Bytes of `data`.
  public static let dataCount = 239

  // 31 × 8 + 2 + 1 = 251 bytes, no padding.
  private var storage:
    (
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt16, UInt8
    ) = (
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    )

  /// All zero.
  public init() {}

  /// A header; `data` all zero.
  public init(
    sequence: UInt16, session: UInt8 = 0, opcode: UInt8, size: UInt8 = 0,
    requestOpcode: UInt8 = 0, burstComplete: UInt8 = 0, offset: UInt32 = 0
  ) {
    self.sequence = sequence
    self.session = session
    self.opcode = opcode
    self.size = size
    self.requestOpcode = requestOpcode
    self.burstComplete = burstComplete
    self.offset = offset
  }

  /// The first 251 bytes of `bytes` (missing ones are zero).
  public init(bytes: UnsafeRawBufferPointer) {
    let n = min(bytes.count, Self.count)
    withUnsafeMutableBytes(of: &storage) { storage in
      for index in 0..<n { storage[index] = bytes[index] }
    }
  }

  /// The byte at `index` (0 ..< 251) of the whole payload, header included.
  public subscript(index: Int) -> UInt8 {
    get {
      precondition(index >= 0 && index < Self.count, "FTP payload index \(index) out of 0..<251")
      return withUnsafeBytes(of: storage) { $0[index] }
    }
    set {
      precondition(index >= 0 && index < Self.count, "FTP payload index \(index) out of 0..<251")
      withUnsafeMutableBytes(of: &storage) { $0[index] = newValue }
    }
  }

  /// `data[index]` (0 ..< 239): payload byte 12 + `index`.
  public subscript(data index: Int) -> UInt8 {
    get {
      precondition(index >= 0 && index < Self.dataCount, "FTP data index \(index) out of 0..<239")
      return self[Self.headerCount + index]
    }
    set {
      precondition(index >= 0 && index < Self.dataCount, "FTP data index \(index) out of 0..<239")
      self[Self.headerCount + index] = newValue
    }
  }

  /// `seq_number`: the request's counter; a reply carries the request's + 1.
  public var sequence: UInt16 {
    get { withUnsafeBytes(of: storage) { UInt16(littleEndian: $0.loadUnaligned(as: UInt16.self)) } }
    set {
      withUnsafeMutableBytes(of: &storage) {
        $0.storeBytes(of: newValue.littleEndian, as: UInt16.self)
      }
    }
  }

  /// `session`: the file session the operation belongs to.
  public var session: UInt8 {
    get { self[2] }
    set { self[2] = newValue }
  }

  /// `opcode` (`MAV_FTP_OPCODE`).
  public var opcode: UInt8 {
    get { self[3] }
    set { self[3] = newValue }
  }

  /// `size`: bytes of `data` in use.
  public var size: UInt8 {
    get { self[4] }
    set { self[4] = newValue }
  }

  /// `req_opcode`: in an ACK or NAK, the opcode of the request answered.
  public var requestOpcode: UInt8 {
    get { self[5] }
    set { self[5] = newValue }
  }

  /// `burst_complete`: 1 on the last packet of a burst read.
  public var burstComplete: UInt8 {
    get { self[6] }
    set { self[6] = newValue }
  }

  /// `offset`: bytes into the file, for reads and writes.
  public var offset: UInt32 {
    get {
      withUnsafeBytes(of: storage) {
        UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
      }
    }
    set {
      withUnsafeMutableBytes(of: &storage) {
        $0.storeBytes(of: newValue.littleEndian, toByteOffset: 8, as: UInt32.self)
      }
    }
  }

  /// Calls `body` with the 251 wire bytes.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { try body($0) }
  }

  public static func == (a: MAVLinkFTPPayload, b: MAVLinkFTPPayload) -> Bool {
    sameBytes(a.storage, b.storage)
  }

  public func hash(into hasher: inout Hasher) {
    withBytes { hasher.combine(bytes: $0) }
  }
}
