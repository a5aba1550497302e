import ByteFormats
import Testing

/// `ByteCursor` reads outside bytes: every read is little-endian, and a read past the end
/// returns `nil` or throws `ShortInput` naming where it began, without moving and without
/// trapping.
@Suite struct ByteCursorTests {
  private static let bytes: [UInt8] = [
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
  ]

  @Test func readsLittleEndianInOrder() {
    Self.bytes.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      #expect(cursor.u8() == 0x01)
      #expect(cursor.u16() == 0x0302)
      #expect(cursor.u32() == 0x0706_0504)
      #expect(cursor.offset == 7)
      #expect(cursor.remaining == 8)
      #expect(cursor.peekU32() == 0x0B0A_0908)
      #expect(cursor.offset == 7, "peeking does not move")
      #expect(cursor.u64() == 0x0F0E_0D0C_0B0A_0908)
      #expect(cursor.remaining == 0)
      #expect(cursor.u8() == nil)
    }
    // Signed and floating-point reads are the bit patterns of the unsigned ones.
    let pattern: [UInt8] = [0xFE, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x80, 0x3F]
    pattern.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      #expect(cursor.i16() == -2)
      let skipped = cursor.skip(2)
      #expect(skipped)
      #expect(cursor.f32() == 1.0)
      var again = ByteCursor(raw)
      #expect(again.i32() == -2)
      var whole = ByteCursor(raw)
      #expect(whole.i64() == Int64(bitPattern: 0x3F80_0000_FFFF_FFFE))
      var double = ByteCursor(raw)
      #expect(double.f64() == Double(bitPattern: 0x3F80_0000_FFFF_FFFE))
    }
  }

  /// Every read, at every offset from which it no longer fits: `nil`, and the cursor stays put.
  @Test func aReadPastTheEndReturnsNilAndDoesNotMove() {
    Self.bytes.withUnsafeBytes { raw in
      for start in 0...raw.count {
        let left = raw.count - start
        func check(_ width: Int, _ read: (inout ByteCursor) -> Bool) {
          var cursor = ByteCursor(raw, offset: start)
          let got = read(&cursor)
          #expect(got == (width <= left), "\(width) bytes at \(start)")
          #expect(cursor.offset == (width <= left ? start + width : start), "\(width) at \(start)")
        }
        check(1) { $0.u8() != nil }
        check(2) { $0.u16() != nil }
        check(2) { $0.i16() != nil }
        check(4) { $0.u32() != nil }
        check(4) { $0.i32() != nil }
        check(4) { $0.f32() != nil }
        check(8) { $0.u64() != nil }
        check(8) { $0.i64() != nil }
        check(8) { $0.f64() != nil }
        check(3) { $0.slice(3) != nil }
        check(5) { $0.array(5) != nil }
        check(6) { $0.skip(6) }
        var cursor = ByteCursor(raw, offset: start)
        #expect((cursor.peekU32() != nil) == (left >= 4))
        #expect(cursor.slice(-1) == nil && !cursor.skip(-1) && cursor.array(-1) == nil)
        #expect(cursor.offset == start)
      }
    }
    // An empty buffer (no base address) and an offset beyond the end: nothing to read.
    var empty = ByteCursor(UnsafeRawBufferPointer(start: nil, count: 0))
    #expect(empty.u8() == nil && empty.u64() == nil && empty.remaining == 0)
    Self.bytes.withUnsafeBytes { raw in
      var beyond = ByteCursor(raw, offset: raw.count + 3)
      #expect(beyond.remaining == 0 && beyond.u8() == nil && beyond.slice(0) == nil)
      var before = ByteCursor(raw, offset: -1)
      #expect(before.u8() == nil && before.u16() == nil && before.slice(0) == nil)
    }
  }

  @Test func aThrowingReadPastTheEndNamesItsOffset() throws {
    let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bytes.count, alignment: 8)
    defer { storage.deallocate() }
    storage.copyBytes(from: Self.bytes)
    let raw = UnsafeRawBufferPointer(storage)
    var cursor = ByteCursor(raw)
    #expect(try cursor.readU64() == 0x0807_0605_0403_0201)
    #expect(try cursor.readU32() == 0x0C0B_0A09)
    #expect(try cursor.readU16() == 0x0E0D)
    #expect(try cursor.readU8() == 0x0F)
    #expect(cursor.remaining == 0)
    /// What `read` throws from a cursor at `offset` (and that it did not move).
    func failure(at offset: Int, _ read: (inout ByteCursor) throws -> Void)
      -> ByteCursor.ShortInput?
    {
      var cursor = ByteCursor(raw, offset: offset)
      do {
        try read(&cursor)
        return nil
      } catch {
        #expect(cursor.offset == offset, "a failed read does not move")
        return error as? ByteCursor.ShortInput
      }
    }
    let reads: [(width: Int, read: (inout ByteCursor) throws -> Void)] = [
      (1, { _ = try $0.readU8() }), (2, { _ = try $0.readU16() }), (2, { _ = try $0.readI16() }),
      (4, { _ = try $0.readU32() }), (4, { _ = try $0.readI32() }), (4, { _ = try $0.readF32() }),
      (8, { _ = try $0.readU64() }), (8, { _ = try $0.readI64() }), (8, { _ = try $0.readF64() }),
      (5, { _ = try $0.readSlice(5) }), (6, { try $0.readSkipping(6) }),
    ]
    for offset in 0...raw.count {
      let left = raw.count - offset
      for (width, read) in reads {
        let error = failure(at: offset, read)
        if width <= left {
          #expect(error == nil, "\(width) bytes at \(offset)")
        } else {
          #expect(
            error == ByteCursor.ShortInput(offset: offset, needed: width, available: left),
            "\(width) bytes at \(offset)")
        }
      }
    }
    let error = ByteCursor.ShortInput(offset: 15, needed: 2, available: 1)
    #expect("\(error)" == "at byte 15 a 2-byte field was expected, but 1 byte remained")
  }
}
