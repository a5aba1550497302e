import ByteFormats
import Testing

@Suite struct HexTests {
  @Test func hexByteHasAPrefixAndTwoDigits() {
    #expect(hexByte(0x3B) == "0x3B")
    #expect(hexByte(0x00) == "0x00")
    #expect(hexByte(0x0A) == "0x0A")
    #expect(hexByte(0xFF) == "0xFF")
    #expect(hexByte(0x6A, uppercase: false) == "0x6a")
    #expect(hexByte(0x05, uppercase: false) == "0x05")
    // Every byte: the upper-case digits and the lower-case ones name the same number.
    for value in 0...255 {
      let upper = hexByte(UInt8(value))
      #expect(upper.count == 4 && UInt8(upper.dropFirst(2), radix: 16) == UInt8(value))
      #expect(hexByte(UInt8(value), uppercase: false) == "0x" + upper.dropFirst(2).lowercased())
    }
  }

  @Test func hexDigitsAreLowerCaseTwoPerByte() {
    #expect(hexDigits([]) == "")
    #expect(hexDigits([0x00, 0x0F, 0xA5, 0xFF]) == "000fa5ff")
    #expect(hexWord(0) == "0x00000000")
    #expect(hexWord(0xBEEF) == "0x0000beef")
    #expect(hexWord(0xDEAD_BEEF) == "0xdeadbeef")
  }
}
