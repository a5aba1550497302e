import Geometry

/// A bench calibration's gyro bias as a function of die temperature, sensor axes, rad/s:
///
///     bias(T) = b + c₁·(T − T_ref) + c₂·(T − T_ref)²
///
/// fitted over a warm-up (`plumb-cal`) and removed from every sample before the estimator sees
/// it (`FirmwareSettings.correction`); the estimator's own bias is the residual on top of it.
/// Plain values: the calibration file fills them, the firmware evaluates them, and neither
/// needs the other.
public struct GyroBiasPolynomial: Hashable, Sendable {
  /// b: the bias at the reference temperature, rad/s.
  public var biasRadiansPerSecond: Vector3
  /// T_ref, °C.
  public var referenceTemperatureCelsius: Double
  /// c₁, rad/s per °C (zero without a temperature fit).
  public var biasPerDegreeCelsius: Vector3
  /// c₂, rad/s per °C² (zero for a linear model).
  public var biasPerDegreeCelsiusSquared: Vector3
  /// The temperatures the coefficients were fitted over, °C; `nil` without a fit.
  public var temperatureRangeCelsius: ClosedRange<Double>?

  public init(
    biasRadiansPerSecond: Vector3, referenceTemperatureCelsius: Double,
    biasPerDegreeCelsius: Vector3 = .zero, biasPerDegreeCelsiusSquared: Vector3 = .zero,
    temperatureRangeCelsius: ClosedRange<Double>? = nil
  ) {
    self.biasRadiansPerSecond = biasRadiansPerSecond
    self.referenceTemperatureCelsius = referenceTemperatureCelsius
    self.biasPerDegreeCelsius = biasPerDegreeCelsius
    self.biasPerDegreeCelsiusSquared = biasPerDegreeCelsiusSquared
    self.temperatureRangeCelsius = temperatureRangeCelsius
  }

  /// The bias at `temperature` °C, rad/s: the polynomial within `temperatureRangeCelsius`;
  /// beyond it, the polynomial's tangent at the nearer end (its value and slope there). The
  /// curvature c₂, fitted over the warm-up's few degrees, is the least certain coefficient,
  /// and extrapolated quadratically it dominates: 4e-5 rad/s/°C² of fit noise is 1.4 °/s at
  /// 25 °C beyond the range. Without a range (no fit) the polynomial is used everywhere.
  @inlinable
  public func bias(atTemperature temperature: Double) -> Vector3 {
    var t = temperature
    var beyond = 0.0
    if let range = temperatureRangeCelsius {
      if temperature > range.upperBound {
        t = range.upperBound
        beyond = temperature - t
      } else if temperature < range.lowerBound {
        t = range.lowerBound
        beyond = temperature - t
      }
    }
    let dT = t - referenceTemperatureCelsius
    let value =
      biasRadiansPerSecond + biasPerDegreeCelsius * dT + biasPerDegreeCelsiusSquared * (dT * dT)
    guard beyond != 0 else { return value }
    return value + (biasPerDegreeCelsius + biasPerDegreeCelsiusSquared * (2 * dT)) * beyond
  }
}
