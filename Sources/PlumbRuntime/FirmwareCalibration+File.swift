import Calibration
import Firmware
import Geometry

extension FirmwareCalibration {
  /// What the firmware takes from a calibration file (`FirmwareSettings.apply(_:mounting:)`):
  /// its id, the accelerometer correction, the gyro bias model, its uncertainty and matrix, the last
  /// run's bias, and the noise figures — each Allan figure the noisiest axis', and only when
  /// every axis has a finite, positive one (a figure read off two axes out of three is no
  /// figure for the unit).
  public init(_ file: CalibrationFile) {
    func worst(_ values: [Double?]) -> Double? {
      let known = values.compactMap { $0 }.filter { $0.isFinite && $0 > 0 }
      return known.count == values.count ? known.max() : nil
    }
    self.init(
      id: file.calibrationId,
      accelerometer: file.accelerometer.map { Accelerometer(matrix: $0.matrix, offset: $0.offset) },
      gyroscope: file.gyroscope?.polynomial,
      gyroBiasUncertaintyRadiansPerSecond: file.gyroscope?.biasUncertaintyRadiansPerSecond ?? .zero,
      lastRun: file.live.map {
        LastRun(
          gyroBiasRadiansPerSecond: $0.gyroBiasRadiansPerSecond,
          temperatureCelsius: $0.temperatureCelsius)
      },
      noise: file.noise.map {
        Noise(
          samplePeriodSeconds: $0.samplePeriodSeconds,
          gyroNoiseDensity: $0.gyroscope.flatMap { worst($0.randomWalk) },
          gyroBiasRandomWalk: $0.gyroscope.flatMap { worst($0.rateRandomWalk) },
          accelerometerNoiseDensity: $0.accelerometer.flatMap { worst($0.randomWalk) })
      },
      rest: file.restDetector.map {
        RestSpread(
          gyroDeviationRadiansPerSecond: $0.gyroDeviationRadiansPerSecond,
          accelDeviationMetersPerSecondSquared: $0.accelDeviationMetersPerSecondSquared,
          noiseMultiple: $0.noiseMultiple)
      }, gyroscopeMatrix: file.gyroscope?.matrix)
  }
}

extension FirmwareSettings {
  /// Applies a calibration file (`FirmwareCalibration(file)`), mounted as `mounting` says.
  public mutating func apply(calibration file: CalibrationFile, mounting: Matrix3) {
    apply(FirmwareCalibration(file), mounting: mounting)
  }
}
