import Geometry

/// Evidence from refused rests that the bias estimate is wrong: owns the last refused dwell's
/// difference from the bias and whether another quiet stretch has agreed with it.
///
/// A still board whose gyro disagrees with the bias about the vertical by more than a bias
/// jump is refused as a slow steady turn: within one quiet stretch nothing can tell the two
/// apart, and taking a turn for bias would let the heading hold swallow it. But a wrong bias
/// disagrees the same way every time the board is put down, in whatever pose (the difference
/// is in body axes), while a turn does not repeat itself to a hundredth of a degree per second.
/// So when a dwell of a new quiet stretch — the body moved since the last refusal — is refused
/// with the same difference as the last refused stretch (`RestDetector.refusalsAgree`), the
/// bias is re-opened: its variance grows by the difference squared on every axis, and the
/// next dwell is a rest that measures it.
struct RefusedRestEvidence: Sendable {
  /// The last refused dwell's mean rate less the bias, body axes, rad/s.
  private var difference = Vector3(0, 0, 0)
  /// Whether `difference` holds a refusal not yet used or contradicted.
  private var isHeld = false

  /// A dwell was refused as a slow turn with `d` = its mean rate less the bias; `newStretch`:
  /// the body moved since the previous refused dwell; `agree` tells whether two differences
  /// are the same. Returns the variance to widen the bias by, (rad/s)², or 0.
  mutating func refused(
    difference d: Vector3, newStretch: Bool, agree: (Vector3, Vector3) -> Bool
  ) -> Double {
    defer { difference = d }
    guard isHeld, newStretch, agree(difference, d) else {
      // The same stretch (a turn that goes on, or a bias: nothing new), or a new difference.
      isHeld = true
      return 0
    }
    isHeld = false
    return d.squaredLength
  }

  /// A rest was declared: the bias was measured, the evidence is spent.
  mutating func reset() { isHeld = false }
}
