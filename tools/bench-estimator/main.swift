// bench-estimator: the attitude estimator's cost per update against a minimal plain
// complementary filter in the same binary (issue 9, item 1).
//
// Both run over one deterministic synthetic stream generated into memory before any timing,
// for several interleaved passes; each pass is timed with the thread's CPU-time clock and the
// medians are printed as `name value unit` lines for `make bench`. `--callgrind` runs one pass
// of each over a shorter stream so that valgrind can count instructions per update exactly
// (tools/bench-estimator/count-instructions.sh does it).

import AttitudeEstimation
import ByteFormats
import CommandLineSupport
import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let spec = CommandSpec(
  name: "bench-estimator",
  abstract: "time the full attitude estimator per update against a minimal complementary filter",
  discussion: """
    Generates a seeded synthetic 100 Hz stream (rests and motion, edge jitter, missed samples,
    gyro bias and noise, sustained pushes) into memory, then times AttitudeEstimator.update
    (sample clock, rest detector, bias estimator, adaptive filter, every output) and a minimal
    plain complementary filter (gyro propagation and a fixed-gain tilt correction, in Float
    like the C reference of the performance anchors; also in Double) over it, interleaving
    the passes, and prints the medians. Both loops read the attitude of every update (every
    output is computed regardless: the estimator is an opaque call into its module);
    --read-all-outputs makes the estimator's loop read every field of every estimate too.
      estimator_update_ns VALUE ns
      reference_cf_update_ns VALUE ns
      estimator_cost_ratio VALUE x
      reference_cf_double_update_ns VALUE ns
    Build in release mode. Details (each pass, the stream) go to standard error.
    With --callgrind: one pass of each over a shorter stream, for
    tools/bench-estimator/count-instructions.sh (valgrind --tool=callgrind).
    """,
  options: [
    .option(
      "samples", value: "N",
      help: "samples in the stream (default 10000000; 1000000 with --callgrind)"),
    .option("passes", value: "N", help: "timed passes of each filter", default: "9"),
    .option("seed", value: "N", help: "the stream's seed", default: "1"),
    .flag("callgrind", help: "one untimed pass of each, for instruction counting"),
    .flag(
      "read-all-outputs",
      help: "the estimator's loop reads every output field, not only the attitude"),
  ],
  examples: [
    "swift build -c release --product bench-estimator && .build/release/bench-estimator",
    "tools/bench-estimator/count-instructions.sh",
  ])

/// One pass of the full estimator over `samples`, from a fresh estimator, read as the reference
/// is read: the attitude folded into the returned checksum.
///
/// Every output is still computed and stored: `AttitudeEstimator.update` lives in another module
/// and is not `@inlinable`, so this module only calls it and cannot drop any of its work
/// (count-instructions.sh checks that the pass calls it). Reading the same four numbers from
/// both filters keeps the consumer's cost out of the comparison.
@inline(never)
func runEstimatorPass(_ samples: UnsafeBufferPointer<InertialSample>) -> Double {
  var estimator = AttitudeEstimator()
  var attitudeSum = 0.0
  for sample in samples {
    let q = estimator.update(sample).attitude
    attitudeSum += (q.w + q.x) + (q.y + q.z)
  }
  return attitudeSum
}

/// The same pass, reading every field of every estimate (a consumer that uses all the outputs,
/// as the frame encoder does): `--read-all-outputs`, the harness of the first measurements.
@inline(never)
func runEstimatorAllOutputsPass(_ samples: UnsafeBufferPointer<InertialSample>) -> Double {
  var estimator = AttitudeEstimator()
  var attitudeSum = 0.0
  var outputSum = 0.0
  var countSum = 0
  for sample in samples {
    let e = estimator.update(sample)
    let q = e.attitude
    attitudeSum += (q.w + q.x) + (q.y + q.z)
    let g = e.gravityInBody
    let a = e.linearAccelerationMetersPerSecondSquared
    let r = e.angularRateRadiansPerSecond
    let b = e.gyroBiasRadiansPerSecond
    let v = e.gyroBiasVariance
    outputSum +=
      ((g.x + g.y) + (g.z + a.x)) + ((a.y + a.z) + (r.x + r.y)) + ((r.z + b.x) + (b.y + b.z))
      + ((v.x + v.y) + (v.z + e.integrationIntervalSeconds)) + e.samplePeriodSeconds
    countSum &+=
      Int(e.flags.rawValue) &+ e.missedSamples &+ Int(truncatingIfNeeded: e.timestampNanoseconds)
  }
  return attitudeSum + outputSum + Double(countSum & 0xFFFF)
}

/// One pass of the reference filter over `samples`, from a fresh filter, in `Scalar` precision
/// (the inputs converted as they are read).
@inline(__always)
func referencePass<Scalar: BinaryFloatingPoint>(
  _ samples: UnsafeBufferPointer<InertialSample>, _: Scalar.Type
) -> Double {
  var filter = ReferenceComplementaryFilter<Scalar>(periodSeconds: 0.01, timeConstantSeconds: 3)
  var attitudeSum: Scalar = 0
  for sample in samples {
    let g = sample.angularRateRadiansPerSecond
    let a = sample.specificForceMetersPerSecondSquared
    filter.update(
      gx: Scalar(g.x), gy: Scalar(g.y), gz: Scalar(g.z), ax: Scalar(a.x), ay: Scalar(a.y),
      az: Scalar(a.z))
    attitudeSum += (filter.w + filter.x) + (filter.y + filter.z)
  }
  return Double(attitudeSum)
}

/// The official reference: `Float`, like the C reference of the performance anchors.
@inline(never)
func runReferencePass(_ samples: UnsafeBufferPointer<InertialSample>) -> Double {
  referencePass(samples, Float.self)
}

/// The same filter in `Double`, the estimator's precision.
@inline(never)
func runReferenceDoublePass(_ samples: UnsafeBufferPointer<InertialSample>) -> Double {
  referencePass(samples, Double.self)
}

/// CPU time of this thread, nanoseconds (not wall time: a descheduled thread does not count).
func threadCPUTimeNanoseconds() -> Int64 {
  var t = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
  return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

func median(_ values: [Double]) -> Double {
  let s = values.sorted()
  let n = s.count
  return n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])
}

let status = runCommand(Array(CommandLine.arguments.dropFirst()), spec: spec) { parsed in
  let callgrind = parsed.flag("callgrind")
  let estimatorPass =
    parsed.flag("read-all-outputs") ? runEstimatorAllOutputsPass : runEstimatorPass
  let count =
    try parsed.integer("samples", in: 1000...200_000_000) ?? (callgrind ? 1_000_000 : 10_000_000)
  let passes = try parsed.integer("passes", in: 1...1000) ?? 9
  let seed = try parsed.integer("seed", in: 0...Int.max) ?? 1

  let stream = SyntheticStream(count: count, seed: UInt64(seed))
  printError(
    "stream: \(count) samples, seed \(seed), \(NumberText.fixed(stream.restFraction * 100, 1)) % at rest"
  )

  try stream.samples.withUnsafeBufferPointer { samples in
    if callgrind {
      let e = estimatorPass(samples)
      let r = runReferencePass(samples)
      let d = runReferenceDoublePass(samples)
      print("callgrind_samples \(count) samples")
      printError("checksums: estimator \(e), reference \(r), reference in Double \(d)")
      return
    }
    let passFunctions = [estimatorPass, runReferencePass, runReferenceDoublePass]
    var times: [[Double]] = [[], [], []]
    var checksum = 0.0
    let perSample = 1 / Double(count)
    for pass in 0..<passes {
      // Rotate the order so that no filter always runs first (or on a warmer machine).
      for k in 0..<3 {
        let which = (pass + k) % 3
        let start = threadCPUTimeNanoseconds()
        checksum += passFunctions[which](samples)
        times[which].append(Double(threadCPUTimeNanoseconds() - start) * perSample)
      }
      printError(
        "pass \(pass + 1): estimator \(NumberText.fixed(times[0].last!, 2)) ns, reference "
          + "\(NumberText.fixed(times[1].last!, 2)) ns, reference in Double \(NumberText.fixed(times[2].last!, 2)) ns"
      )
    }
    guard checksum.isFinite else {
      throw CommandFailure(.software, "the estimates were not finite (checksum \(checksum))")
    }
    let e = median(times[0])
    let r = median(times[1])
    print("estimator_update_ns \(NumberText.fixed(e, 1)) ns")
    print("reference_cf_update_ns \(NumberText.fixed(r, 1)) ns")
    print("estimator_cost_ratio \(NumberText.fixed(e / r, 2)) x")
    print("reference_cf_double_update_ns \(NumberText.fixed(median(times[2]), 1)) ns")
  }
}
exit(status)
