import Geometry

/// What `AttitudeEstimator.captureGyroBias()` adopted: the mean raw gyro rate over the current
/// rest, now the estimator's bias.
public struct GyroBiasCapture: Hashable, Sendable {
  /// The bias adopted, rad/s, body axes: the mean rate of the rest's samples, at the rest's
  /// temperature (`referenceTemperatureCelsius`; the estimate's bias is this plus the
  /// temperature model's term at the die's temperature, zero at that temperature).
  public var biasRadiansPerSecond: Vector3
  /// Its standard deviation per axis, rad/s: the configured gyro noise density over the square
  /// root of the rest's duration used, N/√T (`SensorNoise.gyroNoiseDensity`).
  public var standardDeviationRadiansPerSecond: Double
  /// The rest's duration whose samples were averaged, seconds: the quiet window that declared
  /// the rest and the rest since (`samples` × the sample period).
  public var restSeconds: Double
  /// The samples averaged.
  public var samples: Int
  /// The temperature at which `biasRadiansPerSecond` holds, °C: the rest's first.
  public var referenceTemperatureCelsius: Double

  public init(
    biasRadiansPerSecond: Vector3, standardDeviationRadiansPerSecond: Double,
    restSeconds: Double, samples: Int, referenceTemperatureCelsius: Double
  ) {
    self.biasRadiansPerSecond = biasRadiansPerSecond
    self.standardDeviationRadiansPerSecond = standardDeviationRadiansPerSecond
    self.restSeconds = restSeconds
    self.samples = samples
    self.referenceTemperatureCelsius = referenceTemperatureCelsius
  }
}

/// Why `AttitudeEstimator.captureGyroBias()` captured nothing, and how long to hold the board
/// still before asking again. Nothing was changed. `description` says it for a person.
public struct GyroBiasCaptureRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  /// Why the estimator does not say "at rest" now.
  public enum Reason: Hashable, Sendable {
    /// Rest detection is switched off (`RestDetector.Settings.isEnabled`): nothing tells when
    /// the board is still.
    case restDetectionOff
    /// The tilt is being measured: at start-up (or before the first sample), after a gap or
    /// suspect samples (`InclinationSettings.initialisationSeconds`).
    case initialising
    /// The last sample moved (the gyro or accelerometer left its window mean by more than the
    /// rest thresholds).
    case moving
    /// The board moved `stillSeconds` ago and has been still since, not yet for a whole dwell
    /// (`RestDetector.Settings.minimumDurationSeconds`).
    case movedRecently
    /// The board was still for a whole dwell, but the rest detector did not take it for a
    /// rest (the dwell's test failed); a new dwell started then.
    case dwellRefused(DwellRefusal)
  }

  /// Why a whole still dwell was not a rest (the rest detector's tests, README step 2).
  public enum DwellRefusal: Hashable, Sendable {
    /// The rate drifted between the dwell's thirds, or gravity turned in the body.
    case notSteady
    /// Its mean rate disagreed with the bias by what a bias may jump by: the bias's
    /// uncertainty was widened, so the next such dwell is a rest.
    case biasJump
    /// Its mean rate disagreed with the bias by `rateRadiansPerSecond`, more than a bias
    /// could explain: taken for a slow steady turn.
    case slowTurn(rateRadiansPerSecond: Double)
    /// Its mean acceleration pointed away from the gravity the estimate expects: a steady
    /// push, or the board accelerating.
    case accelerating
  }

  public var reason: Reason
  /// How long the board has been still without a decision against it, up to the last sample,
  /// seconds.
  public var stillSeconds: Double
  /// How much longer the board must be held still before a capture can succeed, seconds (at
  /// least: the rest detector may still refuse the dwell). For a slow turn: the two dwells
  /// that re-open the bias, after setting the board down again.
  public var holdSeconds: Double
  /// The dwell's length, seconds (`RestDetector.Settings.minimumDurationSeconds`).
  public var dwellSeconds: Double

  public init(reason: Reason, stillSeconds: Double, holdSeconds: Double, dwellSeconds: Double) {
    self.reason = reason
    self.stillSeconds = stillSeconds
    self.holdSeconds = holdSeconds
    self.dwellSeconds = dwellSeconds
  }

  public var description: String {
    let hold = decimalText(holdSeconds, digits: 1)
    let dwell = decimalText(dwellSeconds, digits: 1)
    let again = "hold it still for \(hold) s more and ask again"
    switch reason {
    case .restDetectionOff:
      return "rest detection is switched off in the settings: nothing tells when the board is "
        + "still, so no gyro bias can be captured"
    case .initialising:
      return "initialising: the tilt is still being measured; hold the board still for "
        + "\(hold) s and ask again"
    case .moving:
      return "not at rest: the board is moving; hold it still for \(hold) s and ask again"
    case .movedRecently:
      return "not at rest: the board moved \(decimalText(stillSeconds, digits: 1)) s ago; "
        + again
    case .dwellRefused(.notSteady):
      return "not at rest: the last \(dwell) s still were not steady (the rate drifted, or "
        + "gravity turned in the body); " + again
    case .dwellRefused(.biasJump):
      return "not at rest: the last \(dwell) s still disagreed with the gyro bias by more than "
        + "its uncertainty (the bias may have jumped; its uncertainty was widened); " + again
    case .dwellRefused(.slowTurn(let rate)):
      let degrees = decimalText(rate * 180 / .pi, digits: 2)
      return "not at rest: the last \(dwell) s still turned at \(degrees) °/s against the gyro "
        + "bias, taken for a slow turn; if the board was still, its bias is off by that much: "
        + "lift it, set it down still and ask again after \(hold) s (a second stillness that "
        + "disagrees alike re-opens the bias)"
    case .dwellRefused(.accelerating):
      return "not at rest: during the last \(dwell) s still the accelerometer pointed away from "
        + "the expected gravity (a steady push, or the board accelerating); hold it still and "
        + "unaccelerated for \(hold) s more and ask again"
    }
  }
}
