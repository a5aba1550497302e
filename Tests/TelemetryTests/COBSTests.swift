import Telemetry
import Testing

private func encode(_ payload: [UInt8]) -> [UInt8] {
  var output = [UInt8](
    repeating: 0xEE, count: COBS.maximumEncodedCount(payloadCount: payload.count))
  let n = payload.withUnsafeBytes { p in output.withUnsafeMutableBytes { COBS.encode(p, into: $0) }
  }
  return Array(output[0..<n!])
}

private func decode(_ encoded: [UInt8]) -> Result<[UInt8], COBS.DecodeError> {
  var output = [UInt8](repeating: 0, count: 1024)
  let result = encoded.withUnsafeBytes { e in
    output.withUnsafeMutableBytes { COBS.decode(e, into: $0) }
  }
  return result.map { Array(output[0..<$0]) }
}

@Suite struct COBSTests {
  /// The examples of the COBS article on Wikipedia (Cheshire & Baker's algorithm), without the
  /// trailing delimiter.
  @Test(
    arguments: [
      ([0x00], [0x01, 0x01]),
      ([0x00, 0x00], [0x01, 0x01, 0x01]),
      ([0x00, 0x11, 0x00], [0x01, 0x02, 0x11, 0x01]),
      ([0x11, 0x22, 0x00, 0x33], [0x03, 0x11, 0x22, 0x02, 0x33]),
      ([0x11, 0x22, 0x33, 0x44], [0x05, 0x11, 0x22, 0x33, 0x44]),
      ([0x11, 0x00, 0x00, 0x00], [0x02, 0x11, 0x01, 0x01, 0x01]),
    ] as [([UInt8], [UInt8])])
  func knownEncodings(payload: [UInt8], encoded: [UInt8]) throws {
    #expect(encode(payload) == encoded)
    #expect(try decode(encoded).get() == payload)
  }

  @Test func runsOf254And255NonZeroBytes() throws {
    let run254 = (1...254).map { UInt8($0) }
    // 253: the longest payload a single block holds without filling it.
    let run253 = Array(run254.prefix(253))
    #expect(encode(run253) == [0xFE] + run253)
    #expect(encode(run253 + [0]) == [0xFE] + run253 + [0x01])
    // 254 non-zero bytes: one full block, no trailing code byte.
    #expect(encode(run254) == [0xFF] + run254)
    let run255 = run254 + [0xFF]
    #expect(encode(run255) == [0xFF] + run254 + [0x02, 0xFF])
    let zeroThenRun = [0x00] + run254
    #expect(encode(zeroThenRun) == [0x01, 0xFF] + run254)
    for payload in [run254, run255, zeroThenRun] {
      #expect(try decode(encode(payload)).get() == payload)
    }
  }

  @Test func seededRoundTripsIncludingZeroHeavyAndLongPayloads() throws {
    var random = SplitMix64(seed: 0xC0B5)
    for trial in 0..<2000 {
      let length = Int(random.next() % 700)
      let zeroShare = [0.0, 0.5, 0.95, 1.0][trial % 4]
      let payload = (0..<length).map { _ -> UInt8 in
        random.uniform(0, 1) < zeroShare ? 0 : UInt8(1 + random.next() % 255)
      }
      let encoded = encode(payload)
      #expect(!encoded.contains(0), "COBS output must have no zero byte")
      #expect(encoded.count <= COBS.maximumEncodedCount(payloadCount: length))
      #expect(encoded.count <= length + (length + 253) / 254 + 1)
      #expect(try decode(encoded).get() == payload)
    }
  }

  @Test func brokenEncodingsAreRejectedNotMisread() {
    #expect(decode([]) == .failure(.empty))
    #expect(decode([0x05, 0x11, 0x22]) == .failure(.truncatedBlock(offset: 0)))
    #expect(decode([0x03, 0x11, 0x00]) == .failure(.zeroByte(offset: 2)))
    var small = [UInt8](repeating: 0, count: 2)
    let result = [UInt8]([0x04, 1, 2, 3]).withUnsafeBytes { e in
      small.withUnsafeMutableBytes { COBS.decode(e, into: $0) }
    }
    #expect(result == .failure(.outputTooSmall))
  }
}
