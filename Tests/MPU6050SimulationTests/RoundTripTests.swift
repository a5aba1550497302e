import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// Driver ↔ simulator: physical values in, the same values out, within one count.
@Suite("Round trip through the simulated chip")
struct RoundTripTests {
  static let degree = Double.pi / 180
  static let g = 9.80665

  static let ranges: [(GyroFullScale, Double, AccelerometerFullScale, Double)] = [
    (.degreesPerSecond250, 131, .standardGravities2, 16384),
    (.degreesPerSecond500, 65.5, .standardGravities4, 8192),
    (.degreesPerSecond1000, 32.8, .standardGravities8, 4096),
    (.degreesPerSecond2000, 16.4, .standardGravities16, 2048),
  ]

  @Test(
    "angular rate, specific force and temperature within one LSB, every range", arguments: ranges)
  func roundTrip(
    gyro: GyroFullScale, gyroLSB: Double, accel: AccelerometerFullScale, accelLSB: Double
  )
    throws
  {
    // 60 %, −35 %, 85 % of each range, distinct per axis.
    let gyroRange = gyro.degreesPerSecond * Self.degree
    let accelRange = accel.standardGravities * Self.g
    let rate = Vector3(0.6, -0.35, 0.85) * gyroRange
    let force = Vector3(-0.45, 0.7, 0.3) * accelRange
    let truth = FixedTruth(rate: rate, force: force, temperature: 31.7)
    let rig = try Rig(
      motion: truth, unit: .ideal,
      configuration: MPU6050Configuration(gyroFullScale: gyro, accelerometerFullScale: accel),
      policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    try rig.start()
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(0.5)))
    let last = try #require(rig.samples.last?.sample)
    let gyroCount = Self.degree / gyroLSB
    let accelCount = Self.g / accelLSB
    let measuredRate = last.angularRateRadiansPerSecond
    let measuredForce = last.specificForceMetersPerSecondSquared
    for axis in 0..<3 {
      let rateTruth = [rate.x, rate.y, rate.z][axis]
      let forceTruth = [force.x, force.y, force.z][axis]
      #expect(abs(measuredRate[axis] - rateTruth) <= gyroCount, "gyro axis \(axis)")
      #expect(abs(measuredForce[axis] - forceTruth) <= accelCount, "accel axis \(axis)")
    }
    // 1 LSB of temperature is 1/340 °C.
    #expect(abs(last.temperatureCelsius - 31.7) <= 1.0 / 340)
    #expect(last.clipping == [])
    #expect(rig.driver.counters.samplesDelivered > 40)
  }

  @Test("beyond full scale the chip saturates at ±32767/−32768 and the driver flags clipping")
  func saturation() throws {
    let truth = FixedTruth(
      rate: Vector3(10, -10, 0.1), force: Vector3(50, -50, 1), temperature: 25)
    let rig = try Rig(
      motion: truth, unit: .ideal,
      configuration: MPU6050Configuration(
        gyroFullScale: .degreesPerSecond250, accelerometerFullScale: .standardGravities2),
      policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    try rig.start()
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(0.2)))
    let last = try #require(rig.samples.last?.sample)
    #expect(last.raw.gyro.x == 32767)
    #expect(last.raw.gyro.y == -32768)
    #expect(last.raw.accelerometer.x == 32767)
    #expect(last.raw.accelerometer.y == -32768)
    #expect(last.clipping == [.accelerometer, .gyro])
    #expect(rig.driver.counters.gyroClippedSamples == rig.driver.counters.samplesDelivered)
  }

  @Test("an MPU-6500-generation part: ACCEL_CONFIG2 honoured and its temperature constants")
  func relabelledPart() throws {
    let truth = FixedTruth(rate: Vector3(0.5, 0, -0.5), force: Vector3(1, 2, 9), temperature: 41.2)
    let rig = try Rig(
      motion: truth, unit: .ideal, variant: .icm20689,
      policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    let report = try rig.start(selfTest: true)
    #expect(report.identity.model.name == "ICM-20689")
    #expect(rig.board.chip.peek(0x1D) == 0x03)
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(0.3)))
    let last = try #require(rig.samples.last?.sample)
    #expect(abs(last.temperatureCelsius - 41.2) <= 1.0 / 326.8)
    #expect(abs(last.specificForceMetersPerSecondSquared.z - 9) <= Self.g / 8192)
  }
}
