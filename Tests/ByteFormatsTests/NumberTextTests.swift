import ByteFormats
import Testing

@Suite struct NumberTextTests {
  @Test(arguments: [
    (3.14159, 2, "3.14"), (-0.005, 2, "-0.01"), (-0.004, 2, "0.00"), (2.5, 0, "3"),
    (0.1, 3, "0.100"),
    (1234.5678, 1, "1234.6"), (0, 2, "0.00"),
  ])
  func fixed(value: Double, digits: Int, expected: String) {
    #expect(NumberText.fixed(value, digits) == expected)
  }

  @Test(arguments: [
    (0.00020034, 4, "2.003e-4"), (9.9999, 3, "1.00e1"), (-123456, 2, "-1.2e5"), (1, 3, "1.00e0"),
  ])
  func scientific(value: Double, digits: Int, expected: String) {
    #expect(NumberText.scientific(value, digits) == expected)
  }

  @Test(arguments: [
    (0.01, "0.01"), (1.0, "1"), (250.0, "250"), (3.5e-7, "3.5e-7"), (0.000123, "0.000123"),
    (1.0e6, "1e6"), (-2.5, "-2.5"),
  ])
  func compact(value: Double, expected: String) {
    #expect(NumberText.compact(value) == expected)
  }

  @Test func nonFiniteValuesAreNamed() {
    #expect(NumberText.fixed(.nan, 2) == "nan")
    #expect(NumberText.scientific(-.infinity, 2) == "-inf")
  }

  /// What the copies it replaced (HIL, plumb-hil, plumb-bench, plumb-probe, bench-estimator)
  /// printed, restated: right-aligned in a width, no "-0", NaN and infinities named, and past
  /// 9·10¹⁵ scaled the Double's shortest text.
  @Test func widthSignOfZeroAndLargeValues() {
    #expect(NumberText.fixed(-1.23456, 3, width: 9) == "   -1.235")
    #expect(NumberText.fixed(12345.6789, 2, width: 4) == "12345.68")
    #expect(NumberText.fixed(-0.0, 2) == "0.00")
    #expect(NumberText.fixed(-0.0004, 3) == "0.000")
    #expect(NumberText.fixed(-0.0005, 3) == "-0.001")
    #expect(NumberText.fixed(0.125, 2) == "0.13")
    #expect(NumberText.fixed(.infinity, 1) == "inf" && NumberText.fixed(-.infinity, 1) == "-inf")
    #expect(NumberText.fixed(.nan, 1, width: 5) == "  nan")
    #expect(NumberText.fixed(8_999_999_999_999.9, 2) == "8999999999999.90")
    #expect(NumberText.fixed(1e16, 0) == "1e+16")
    #expect(NumberText.fixed(1e15, 6) == "1000000000000000.0")
  }
}
