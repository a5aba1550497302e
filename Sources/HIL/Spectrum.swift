#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The amplitude of the sinusoid at `hertz` in a sampled signal: the least-squares fit of
/// `a·sin(2πft) + b·cos(2πft)` (after removing the mean), `√(a² + b²)`, computed as one bin of a
/// discrete Fourier transform at the samples' own times (so uneven spacing is allowed). Seed 000
/// finds an alias the same way (correlating with sines and cosines); over a whole number of
/// periods of the sampled sequence, other frequencies contribute nothing.
public func amplitude(ofHertz hertz: Double, times: [Double], values: [Double]) -> Double {
  let count = min(times.count, values.count)
  guard count > 1 else { return 0 }
  var mean = 0.0
  for index in 0..<count { mean += values[index] }
  mean /= Double(count)
  var sine = 0.0
  var cosine = 0.0
  for index in 0..<count {
    let phase = 2 * Double.pi * hertz * times[index]
    sine += (values[index] - mean) * sin(phase)
    cosine += (values[index] - mean) * cos(phase)
  }
  return 2 * (sine * sine + cosine * cosine).squareRoot() / Double(count)
}
