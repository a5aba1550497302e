import ByteFormats
import Testing

@Suite struct SHA256Tests {
  /// The FIPS 180-2 appendix B examples and the empty message.
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    (
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
    ),
  ])
  func publishedVectors(message: String, digest: String) {
    #expect(SHA256.hex(SHA256.hash(Array(message.utf8))) == digest)
  }

  /// Every padding case: a message whose length leaves 55 bytes in the last block (the 0x80 and
  /// the length fit), 56 to 63 (they spill into one more block: at 63 the 0x80 fills the block
  /// exactly) and whole blocks. Digests from Python's hashlib; the bytes are (7i + 3) mod 256.
  /// At 63 and 127 Plumb's digest was wrong until 2026-12-05: the block the 0x80 filled was
  /// never compressed alone, and the length went into a block nothing read (a calibration file
  /// whose canonical text had such a length carried a hash no other SHA-256 gives).
  @Test(arguments: [
    (55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"),
    (56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"),
    (63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"),
    (64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"),
    (119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"),
    (127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07"),
    (128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"),
  ])
  func everyPaddingCase(length: Int, digest: String) {
    let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
    #expect(SHA256.hex(SHA256.hash(message)) == digest, "\(length) bytes")
  }

  @Test func aMillionAs() {
    var hasher = SHA256()
    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { hasher.update(chunk) }
    #expect(
      SHA256.hex(hasher.finalize())
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }
}
