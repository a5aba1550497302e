import ByteFormats
import Testing

@Suite struct ISO8601Tests {
  @Test func acceptsOnlyISO8601UTC() {
    #expect(isISO8601UTC("2026-12-02T10:15:00Z"))
    #expect(isISO8601UTC("2026-12-02T10:15:00.250Z"))
    #expect(!isISO8601UTC("2026-12-02T10:15:00+01:00"))
    #expect(!isISO8601UTC("2026-13-02T10:15:00Z"))
    #expect(!isISO8601UTC("2026-12-02 10:15:00Z"))
    // Found by CalibrationFileMutationTests (Tests/CalibrationTests): a fraction of 20 digits or
    // more overflowed.
    #expect(isISO8601UTC("2026-12-02T10:15:00.123456789012345678901234567890Z"))
    #expect(!isISO8601UTC("2026-12-02T10:15:00.99999999999999999999x9Z"))
  }
}
