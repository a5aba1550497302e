/// Stops the process with what went wrong: libFuzzer reports it as a crash ("deadly signal")
/// and saves the input. `fatalError`, not `precondition`: a release build keeps its message.
public func propertyViolated(_ property: String, _ detail: String) -> Never {
  fatalError("property violated: \(property): \(detail)")
}

/// Checks one property of a decoder on the current input; see `propertyViolated`.
@inline(__always)
public func require(
  _ holds: Bool, _ property: @autoclosure () -> String, _ detail: @autoclosure () -> String = ""
) {
  if !holds { propertyViolated(property(), detail()) }
}

/// Whether two doubles are the same value bit for bit (NaN equals itself, -0 is not 0): what a
/// lossless round trip must give back.
@inline(__always)
public func sameBits(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern }

/// Whether two arrays of doubles are the same bit for bit.
public func sameBits(_ a: [Double], _ b: [Double]) -> Bool {
  a.count == b.count && zip(a, b).allSatisfy { $0.bitPattern == $1.bitPattern }
}

/// Up to `limit` bytes in hex, for messages.
public func hexDump(_ bytes: some Collection<UInt8>, limit: Int = 64) -> String {
  let digits = Array("0123456789abcdef")
  var text = ""
  for byte in bytes.prefix(limit) {
    if !text.isEmpty { text.append(" ") }
    text.append(digits[Int(byte >> 4)])
    text.append(digits[Int(byte & 0xF)])
  }
  return bytes.count > limit ? text + " …" : text
}

/// Splits `count` bytes into pieces of 1 … `maximum` bytes whose sizes come from a small
/// generator seeded by `seed` (derived from the input, so one input always splits the same way):
/// for the properties "a frame may be split anywhere" and "feeding in pieces gives what feeding
/// at once gives".
public struct ChunkSizes: Sequence, IteratorProtocol {
  private var state: UInt64
  private var remaining: Int
  private let maximum: Int

  public init(count: Int, seed: UInt64, maximum: Int = 97) {
    // SplitMix64's increment, so a zero seed still moves.
    state = seed &+ 0x9E37_79B9_7F4A_7C15
    remaining = count
    self.maximum = Swift.max(1, maximum)
  }

  public mutating func next() -> Int? {
    guard remaining > 0 else { return nil }
    // xorshift64*
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    let draw = state &* 0x2545_F491_4F6C_DD1D
    let size = Swift.min(remaining, Int(draw % UInt64(maximum)) + 1)
    remaining -= size
    return size
  }
}

/// A seed from an input's length and first bytes (FNV-1a of up to 8 bytes).
public func chunkSeed(_ input: UnsafeRawBufferPointer) -> UInt64 {
  var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(input.count)
  for byte in input.prefix(8) {
    hash ^= UInt64(byte)
    hash = hash &* 0x0000_0100_0000_01B3
  }
  return hash
}
