import HardwareAbstraction
import Testing

@Suite struct TimestampTests {
  @Test func arithmeticIsExactInNanoseconds() {
    let t = Timestamp(nanoseconds: 1_000_000_007)
    #expect((t + .milliseconds(10)).nanoseconds == 1_010_000_007)
    #expect((t - .nanoseconds(8)).nanoseconds == 999_999_999)
    #expect(t.advanced(byNanoseconds: -7).nanoseconds == 1_000_000_000)
    #expect((t + .seconds(3)) - t == .seconds(3))
    #expect(Timestamp(nanoseconds: 5).nanoseconds(since: Timestamp(nanoseconds: 12)) == -7)
  }

  @Test func ordersByInstant() {
    let a = Timestamp(nanoseconds: -1)
    let b = Timestamp.zero
    let c = Timestamp(nanoseconds: 1)
    #expect(a < b && b < c)
    #expect([c, a, b].sorted() == [a, b, c])
  }

  @Test func describesAsExactSeconds() {
    #expect(Timestamp(nanoseconds: 2_856_403_700).description == "2.856403700")
    #expect(Timestamp(nanoseconds: 5).description == "0.000000005")
    #expect(Timestamp(nanoseconds: -1_500_000_000).description == "-1.500000000")
  }

  @Test func durationConvertsToNanoseconds() {
    #expect(Duration.milliseconds(10).nanosecondsValue == 10_000_000)
    #expect(Duration.nanoseconds(-3).nanosecondsValue == -3)
    #expect(Duration.seconds(Int64.max).nanosecondsValue == Int64.max)
    #expect(Duration.seconds(1.5).nanosecondsValue == 1_500_000_000)
  }
}

@Suite struct ErrorVocabularyTests {
  @Test func errnoNamesMatchLinux() {
    // Restated from include/uapi/asm-generic/errno-base.h and errno.h.
    #expect(Errno(rawValue: 6).name == "ENXIO")
    #expect(Errno(rawValue: 121).name == "EREMOTEIO")
    #expect(Errno(rawValue: 11).name == "EAGAIN")
    #expect(Errno(rawValue: 110).name == "ETIMEDOUT")
    #expect(Errno(rawValue: 4242).description == "errno 4242")
    #expect(Errno.remoteIO.description == "EREMOTEIO (121)")
  }

  @Test func transientI2CFaultsAreRetryableAndSetupFaultsAreNot() {
    for kind: I2CError.Kind in [.notAcknowledged, .arbitrationLost, .busBusy, .timedOut, .ioError] {
      #expect(I2CError(kind, operation: .readRegisters).isTransient, "\(kind)")
    }
    for kind: I2CError.Kind in [.busMissing, .permissionDenied, .notSupported, .addressInUse] {
      #expect(!I2CError(kind, operation: .open).isTransient, "\(kind)")
    }
  }

  @Test func i2cErrorNamesThePlaceAndTheFix() {
    let error = I2CError(
      .permissionDenied, operation: .open, errno: .permissionDenied, bus: "/dev/i2c-1")
    #expect(error.description.contains("/dev/i2c-1"))
    #expect(error.description.contains("EACCES (13)"))
    #expect(error.description.contains("usermod -aG i2c"))
    let nack = I2CError(
      .notAcknowledged, operation: .readRegisters, errno: .remoteIO, address: .mpu6050,
      register: 0x3B)
    #expect(nack.description.contains("address 0x68"))
    #expect(nack.description.contains("register 0x3B"))
  }

  @Test func addressesAreSevenBits() {
    #expect(I2CAddress(rawValue: 0x80) == nil)
    #expect(I2CAddress(rawValue: 0x7F) != nil)
    #expect(I2CAddress.mpu6050.description == "0x68")
    #expect(I2CAddress.mpu6050Alternate.rawValue == 0x69)
  }
}
