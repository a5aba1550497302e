import Geometry

/// The inclination filter: owns the low-pass filter of the specific force in the reference
/// frame (its memory, or the running sum while it starts), and the rate at which its output
/// drifts — the correction that accrues in the attitude within a block.
///
/// The specific force is mapped into the reference frame and low-pass filtered there
/// (second-order Butterworth, τ = 3 s; or first-order), and the attitude is turned about a
/// horizontal axis so that the filtered vector points straight up (`correction`). Because the
/// filter runs in the (almost inertial) reference frame, the body's rotation does not smear it,
/// and a hand's back-and-forth accelerations average out, as in VQF (Laidig & Seel 2023). The
/// memory is turned with every correction (`turnMemory`), so it stays consistent with the
/// corrected frame. It runs once per block on the block's mean (`step`).
///
/// While initialising (at start and after a reacquisition) it is a running mean of the
/// readings carried by the gyro, for `initialisationSeconds`.
struct InclinationFilter: Sendable {
  /// The filtered specific force (m/s²) and its rate of change (m/s³), reference frame.
  private var s1 = Vector3(0, 0, 0)
  private var s2 = Vector3(0, 0, 0)
  /// Start-up running sum (reference frame) and count.
  private var initialSum = Vector3(0, 0, 0)
  private var initialCount: Int = 0
  private(set) var isInitialising = true
  /// The rate at which the output turns away from vertical after the last block's correction,
  /// rad/s about the reference x and y axes: the correction that accrues within the block.
  private(set) var correctionRateX: Double = 0
  private(set) var correctionRateY: Double = 0

  // Coefficients.
  /// The second-order filter's cutoff ω_c = √2/τ, rad/s, its square and 2ζω_c.
  private var filterRate: Double = 0.47
  private var filterRateSquared: Double = 0.22
  private var filterDamping: Double = 0.67
  /// 1/τ, for the first-order filter.
  private var firstOrderRate: Double = 1
  /// Samples the start-up running mean takes.
  private var initialLimit: Int = 1
  private let isSecondOrder: Bool
  /// τ, seconds (`InclinationSettings.timeConstantSeconds`; `setTimeConstant` changes it).
  private(set) var timeConstantSeconds: Double
  private let initialisationSeconds: Double
  private let inverseGravity: Double

  init(settings: AttitudeEstimator.InclinationSettings, gravity: Double) {
    isSecondOrder = settings.order == .second
    timeConstantSeconds = settings.timeConstantSeconds
    initialisationSeconds = settings.initialisationSeconds
    inverseGravity = 1 / gravity
  }

  /// Sets the coefficients for a sample period of `period` seconds.
  mutating func setSamplePeriod(_ period: Double) {
    setTimeConstantCoefficients()
    initialLimit = max(1, Int((initialisationSeconds / period).rounded()))
  }

  /// Changes τ (a retune, between two samples): the coefficients follow, the memory stays.
  /// The memory is the filtered specific force and its rate of change, quantities of the
  /// signal, not of the filter, so the filter goes on from where it stands with the new
  /// dynamics: no step in the output, and a changed rate of convergence from the next block.
  mutating func setTimeConstant(_ seconds: Double) {
    timeConstantSeconds = seconds
    setTimeConstantCoefficients()
  }

  /// The coefficients that depend on τ alone.
  private mutating func setTimeConstantCoefficients() {
    let tau = timeConstantSeconds
    filterRate = 2.0.squareRoot() / tau
    filterRateSquared = filterRate * filterRate
    filterDamping = 2.0.squareRoot() * filterRate
    firstOrderRate = 1 / tau
  }

  /// The filter's output: the reference-frame specific force it currently believes, m/s² (the
  /// running mean while initialising).
  var output: Vector3 {
    isInitialising ? initialSum * (1 / Double(max(initialCount, 1))) : s1
  }

  /// Whether the start-up running mean has taken all its samples.
  var hasInitialised: Bool { isInitialising && initialCount >= initialLimit }

  /// The samples the start-up running mean still needs (0 when not initialising). It takes
  /// them at block ends, so this counts the current block's samples as still needed.
  var initialisationSamplesRemaining: Int {
    isInitialising ? max(0, initialLimit - initialCount) : 0
  }

  /// Whether the start-up running mean takes a single sample (no initialisation time).
  var initialisesAtOnce: Bool { initialLimit <= 1 }

  /// Starts initialising from one reading `x` (reference frame), with no correction accruing.
  mutating func startInitialising(with x: Vector3) {
    isInitialising = true
    initialSum = x
    initialCount = 1
  }

  /// Feeds one block: the sum `force` of `samples` specific forces (reference frame), mapped
  /// `lag` seconds of accruing correction before the block's end on average, standing for
  /// `seconds` of time; the filter's clock runs at `weight` (acceleration rejection). Returns
  /// the rate at which the output drifts, m/s² per second.
  ///
  /// The filter runs once per block on the block's mean, held over the block's duration: the
  /// exact discretisation of the continuous filter for an input constant over the block, whose
  /// mean over 0.2 s differs from the samples only above about 2 Hz (a boxcar's −3 dB point,
  /// 0.44 / 0.2 s), where the filter (cutoff 0.075 Hz at τ = 3 s) passes nothing anyway.
  @inline(__always)
  mutating func step(
    force: Vector3, samples n: Int, lag: Double, seconds filterSeconds: Double, weight: Double
  ) -> Vector3 {
    let mean = rotateSmall(force * (1 / Double(n)), correctionRateX * lag, correctionRateY * lag)
    let seconds = filterSeconds * weight
    if isInitialising {
      initialSum += force
      initialCount &+= n
      return Vector3(0, 0, 0)
    } else if isSecondOrder {
      secondOrderStep(input: mean, seconds: seconds)
      // The filter's clock runs at `weight`: so does its output's drift.
      return s2 * weight
    } else {
      firstOrderStep(input: mean, seconds: seconds)
      return (mean - s1) * (firstOrderRate * weight)
    }
  }

  /// The correction the output implies now, δ = (dx, dy, 0): the small rotation about a
  /// horizontal axis that takes the output y onto +z, δ ≈ (y_y, −y_x, 0)/|y| (|y| ≈ g; a gain a
  /// few percent off is immaterial, the next block corrects the rest).
  var correction: (dx: Double, dy: Double) {
    let y = output
    return (y.y * inverseGravity, -y.x * inverseGravity)
  }

  /// Sets the rate at which the correction accrues from the output's drift `rate` (m/s² per
  /// second).
  mutating func setCorrectionRate(drift rate: Vector3) {
    correctionRateX = rate.y * inverseGravity
    correctionRateY = -rate.x * inverseGravity
  }

  /// The attitude turned by δ = (dx, dy, 0) about reference axes: the memory (or the start-up
  /// sum) turns with it.
  @inline(__always)
  mutating func turnMemory(_ dx: Double, _ dy: Double) {
    if isInitialising {
      initialSum = rotateSmall(initialSum, dx, dy)
    } else {
      s1 = rotateSmall(s1, dx, dy)
      s2 = rotateSmall(s2, dx, dy)
    }
  }

  /// The attitude turned by `d` in the reference frame (a large correction): the memory turns
  /// with it.
  mutating func rotateMemory(by d: Quaternion) {
    if isInitialising {
      initialSum = d.rotate(initialSum)
    } else {
      s1 = d.rotate(s1)
      s2 = d.rotate(s2)
    }
  }

  /// Restarts the memory at a constant `x` (it passes it unchanged), with no correction
  /// accruing.
  mutating func restart(at x: Vector3) {
    s1 = x
    s2 = Vector3(0, 0, 0)
    correctionRateX = 0
    correctionRateY = 0
  }

  /// Ends initialising: the memory restarts at `level`.
  mutating func settle(at level: Vector3) {
    isInitialising = false
    restart(at: level)
  }

  /// The second-order filter over `seconds`: e = s1 − x and s2 evolve as
  /// `ė = s2, ṡ2 = −ω²e − 2ζω s2` (ω = √2/τ, ζ = 1/√2), whose transition matrix Φ = exp(A h)
  /// is summed to the fourth power (error (ωh)⁵/120, 6 × 10⁻⁸ for a 0.2 s block at τ = 3 s);
  /// a long step (a gap) is split so that ωh ≤ 0.5.
  private mutating func secondOrderStep(input x: Vector3, seconds: Double) {
    guard seconds > 0 else { return }
    let span = seconds * filterRate * 2
    // One step for a normal block (ωh ≈ 0.09); a gap is split.
    let steps = span <= 1 ? 1 : Int(span.rounded(.up))
    let h = seconds / Double(steps)
    // M = A h = [[0, h], [−ω²h, −2ζω h]]; Φ = I + M(I + M/2(I + M/3(I + M/4))), by
    // p ← I + (M p)/k for k = 4, 3, 2, 1 (p row-major 2 × 2, starting from I).
    let m10 = -filterRateSquared * h
    let m11 = -filterDamping * h
    var p0 = 1.0
    var p1 = 0.0
    var p2 = 0.0
    var p3 = 1.0
    for k in [0.25, 1.0 / 3, 0.5, 1.0] {
      let a = h * p2
      let b = h * p3
      let c = m10 * p0 + m11 * p2
      let d = m10 * p1 + m11 * p3
      p0 = 1 + a * k
      p1 = b * k
      p2 = c * k
      p3 = 1 + d * k
    }
    var e = s1 - x
    var r = s2
    for _ in 0..<steps {
      let e1 = Vector3(p0 * e.x + p1 * r.x, p0 * e.y + p1 * r.y, p0 * e.z + p1 * r.z)
      r = Vector3(p2 * e.x + p3 * r.x, p2 * e.y + p3 * r.y, p2 * e.z + p3 * r.z)
      e = e1
    }
    s1 = x + e
    s2 = r
  }

  /// The first-order filter over `seconds`: `s1 ← s1 + (x − s1)(1 − e^(−h/τ))`, the
  /// exponential by its (2, 2) Padé approximant (relative error below 10⁻³ up to h = 2τ;
  /// longer steps are split).
  private mutating func firstOrderStep(input x: Vector3, seconds: Double) {
    guard seconds > 0 else { return }
    let steps = max(1, Int((seconds * firstOrderRate * 0.5).rounded(.up)))
    let u = seconds * firstOrderRate / Double(steps)
    let keep = (1 - u / 2 + u * u / 12) / (1 + u / 2 + u * u / 12)
    var e = s1 - x
    for _ in 0..<steps { e = e * keep }
    s1 = x + e
  }
}
