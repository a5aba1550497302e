/// Consistent Overhead Byte Stuffing (Cheshire & Baker, IEEE/ACM ToN 1999): rewrites a payload
/// so that it contains no 0x00 byte, at a cost of one byte per started 254 bytes. A 0x00 on the
/// wire therefore always marks a frame boundary, and a reader that joins mid-stream is in step
/// again at the next 0x00.
///
/// Encoding: the payload is cut at each zero byte and after every run of 254 non-zero bytes;
/// each block is sent as one code byte (1 + the block's length) followed by the block's bytes.
/// A code below 0xFF means "a zero followed" (except after the last block); 0xFF means "254
/// bytes, no zero". The delimiter itself is not part of the encoding.
public enum COBS {
  /// The largest encoding of `payloadCount` bytes.
  @inlinable
  public static func maximumEncodedCount(payloadCount: Int) -> Int {
    payloadCount + payloadCount / 254 + 1
  }

  /// Encodes `payload` into `output`; returns the encoded length, or `nil` when `output` is too
  /// small (`maximumEncodedCount` is always enough). The result contains no zero byte.
  public static func encode(
    _ payload: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) -> Int? {
    guard let target = output.baseAddress else { return nil }
    let capacity = output.count
    let count = payload.count
    if let source = payload.baseAddress, count < 254, capacity > count {
      return encodeShort(source, count: count, into: target)
    }
    var codeIndex = 0
    var out = 1
    var code: UInt8 = 1
    var index = 0
    // Raw loads and stores: this runs for every byte of every binary frame.
    while index < count {
      let byte = payload.load(fromByteOffset: index, as: UInt8.self)
      index += 1
      if byte != 0 {
        guard out < capacity else { return nil }
        target.storeBytes(of: byte, toByteOffset: out, as: UInt8.self)
        out += 1
        code &+= 1
        // A full block (254 bytes) ends here unless the payload does.
        if code != 0xFF || index == count { continue }
      }
      // A zero ends a block; so does a full one.
      target.storeBytes(of: code, toByteOffset: codeIndex, as: UInt8.self)
      guard out < capacity else { return nil }
      codeIndex = out
      out += 1
      code = 1
    }
    target.storeBytes(of: code, toByteOffset: codeIndex, as: UInt8.self)
    return out
  }

  /// `encode` for a payload shorter than 254 bytes into an output known to be large enough:
  /// the payload moved one byte along, then encoded in place.
  private static func encodeShort(
    _ source: UnsafeRawPointer, count: Int, into target: UnsafeMutableRawPointer
  ) -> Int {
    (target + 1).copyMemory(from: source, byteCount: count)
    return encodeInPlace(target, count: count)
  }

  /// Encodes the `count` bytes at `target + 1` (fewer than 254) where they lie, using
  /// `target[0]` as the leading code; returns `count + 1`. No block can then fill up, so the
  /// encoding is the payload with every zero — and the leading slot — replaced by the distance
  /// to the next zero (or past the end): one store per zero, the zeros found eight bytes at a
  /// time. A binary frame is encoded for every sample; byte by byte this cost a thousand
  /// instructions.
  static func encodeInPlace(_ target: UnsafeMutableRawPointer, count: Int) -> Int {
    precondition(count < 254, "in-place COBS is for payloads shorter than one block")
    let source = UnsafeRawPointer(target + 1)
    let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    // Positions stay within 0 … 254 (count < 254), so the arithmetic below cannot overflow:
    // wrapping operators spare the overflow checks.
    var last = -1  // the previous zero's position (-1: the leading slot is the first code)
    var base = 0
    while base < count {
      var word: UInt64
      let left = count &- base
      if left >= 8 {
        word = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: base, as: UInt64.self))
      } else if count >= 8 {
        // The last `left` bytes: the word that ends with them, shifted down past the bytes
        // already searched, with the bytes past the end set (they count as non-zero). Reads
        // only payload bytes.
        let tail = UInt64(
          littleEndian: source.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
        word = tail &>> (8 &* (8 &- left)) | ~0 &<< (8 &* left)
      } else {
        word = ~0  // bytes past the end count as non-zero
        for offset in 0..<left {
          let byte = UInt64(source.load(fromByteOffset: base &+ offset, as: UInt8.self))
          word = word & ~(0xFF << (8 &* offset)) | byte << (8 &* offset)
        }
      }
      // The top bit of each byte of `zeros` is set exactly where `word` has a zero byte.
      var zeros = ~(((word & low7) &+ low7) | word | low7)
      while zeros != 0 {
        let position = base &+ zeros.trailingZeroBitCount &>> 3
        target.storeBytes(
          of: UInt8(truncatingIfNeeded: position &- last), toByteOffset: last &+ 1, as: UInt8.self)
        last = position
        zeros &= zeros &- 1
      }
      base &+= 8
    }
    target.storeBytes(
      of: UInt8(truncatingIfNeeded: count &- last), toByteOffset: last &+ 1, as: UInt8.self)
    return count &+ 1
  }

  /// Why an encoding could not be decoded.
  public enum DecodeError: Error, Hashable, Sendable {
    /// The input is empty (two delimiters in a row carry no frame).
    case empty
    /// A 0x00 inside the encoding: the framer should have split there.
    case zeroByte(offset: Int)
    /// A code byte promises more bytes than the encoding has.
    case truncatedBlock(offset: Int)
    /// The decoded payload does not fit the output buffer.
    case outputTooSmall
  }

  /// Decodes `encoded` (without its delimiter) into `output`; returns the payload length.
  public static func decode(
    _ encoded: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) -> Result<Int, DecodeError> {
    guard !encoded.isEmpty else { return .failure(.empty) }
    var i = 0
    var out = 0
    while i < encoded.count {
      let code = encoded[i]
      guard code != 0 else { return .failure(.zeroByte(offset: i)) }
      let blockStart = i
      i += 1
      let end = i + Int(code) - 1
      guard end <= encoded.count else { return .failure(.truncatedBlock(offset: blockStart)) }
      while i < end {
        let byte = encoded[i]
        guard byte != 0 else { return .failure(.zeroByte(offset: i)) }
        guard out < output.count else { return .failure(.outputTooSmall) }
        output[out] = byte
        out += 1
        i += 1
      }
      if code != 0xFF && i < encoded.count {
        guard out < output.count else { return .failure(.outputTooSmall) }
        output[out] = 0
        out += 1
      }
    }
    return .success(out)
  }
}
