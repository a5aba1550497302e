// plumb-broad: scores Plumb's attitude estimator on the BROAD recordings with the dataset
// authors' 6D scoring, one set of defaults for every trial.
//
// Data: the Berlin Robust Orientation Estimation Assessment Dataset (BROAD) by D. Laidig,
// M. Caruso, A. Cereatti and T. Seel, CC BY 4.0 (public repository dlaidig/broad).

import AttitudeEstimation
import CommandLineSupport
import Foundation
import Geometry

let attribution = """
  Data: BROAD — Berlin Robust Orientation Estimation Assessment Dataset, by D. Laidig, M. Caruso,
  A. Cereatti and T. Seel, published under CC BY 4.0 (public repository dlaidig/broad).
  Scoring as defined by its authors: inclination 2·acos(√(e_w²+e_z²)), heading drift
  2·atan(e_z/e_w) minus one constant offset per trial, RMSE over movement samples.
  """

/// A setting that `--set` can change; angles in degrees, times in seconds.
struct Override: Sendable {
  var name: String
  var apply: @Sendable (inout AttitudeEstimator.Settings, Double) -> Void

  static let all: [Override] = [
    Override(name: "tau") { $0.inclination.timeConstantSeconds = $1 },
    Override(name: "order") { $0.inclination.order = $1 == 1 ? .first : .second },
    Override(name: "init") { $0.inclination.initialisationSeconds = $1 },
    Override(name: "reject") { $0.accelerationRejection.isEnabled = $1 != 0 },
    Override(name: "reject-low") {
      $0.accelerationRejection.lowerThresholdMetersPerSecondSquared = $1
    },
    Override(name: "reject-high") {
      $0.accelerationRejection.upperThresholdMetersPerSecondSquared = $1
    },
    Override(name: "recovery") { $0.accelerationRejection.recoverySeconds = $1 },
    Override(name: "rest") { $0.rest.isEnabled = $1 != 0 },
    Override(name: "rest-gyro") {
      $0.rest.gyroDeviationThresholdRadiansPerSecond = $1 * radiansPerDegree
    },
    Override(name: "rest-acc") {
      $0.rest.accelerationDeviationThresholdMetersPerSecondSquared = $1
    },
    Override(name: "rest-dwell") { $0.rest.minimumDurationSeconds = $1 },
    Override(name: "rest-tau") { $0.rest.meanTimeConstantSeconds = $1 },
    Override(name: "rest-sigmas") { $0.rest.biasConsistencySigmas = $1 },
    Override(name: "hold") { $0.holdsAttitudeAtRest = $1 != 0 },
    Override(name: "rest-bias") { $0.bias.restEstimationEnabled = $1 != 0 },
    Override(name: "motion-bias") { $0.bias.motionEstimationEnabled = $1 != 0 },
    Override(name: "bias-sigma-init") {
      $0.bias.initialUncertaintyRadiansPerSecond = $1 * radiansPerDegree
    },
    Override(name: "bias-sigma-motion") {
      $0.bias.motionUncertaintyRadiansPerSecond = $1 * radiansPerDegree
    },
    Override(name: "motion-tmin") { $0.bias.motionMinimumTimeConstantSeconds = $1 },
    Override(name: "gyro-noise") { $0.noise.gyroNoiseDensity = $1 * radiansPerDegree },
    Override(name: "bias-walk") { $0.noise.gyroBiasRandomWalk = $1 },
  ]
  static var names: [String] { all.map(\.name) }
}

func fail(_ message: String, status: Int32) -> Never {
  FileHandle.standardError.write(Data("plumb-broad: \(message)\n".utf8))
  exit(status)
}

let spec = CommandSpec(
  name: "plumb-broad",
  abstract: "score the attitude estimator on the BROAD recordings (one set of defaults)",
  discussion: """
    Runs Plumb's attitude estimator, with its defaults, over every *.csv.gz BROAD trial in
    DIR, decompressing each with `gzip -dc`, and prints the inclination and heading-drift RMSE
    per trial (the dataset authors' 6D scoring) and their means, with the data's attribution.
    The rate of each recording comes from its timestamps.
    """,
  options: [
    .option(
      "data", value: "DIR", help: "folder holding the BROAD *.csv.gz files",
      default: "/work/shared/data/broad"),
    .option(
      "set", value: "NAME=VALUE",
      help:
        "change one setting, for a sensitivity study (angles in degrees, times in seconds; "
        + "names: \(Override.names.joined(separator: ", ")))", repeating: true),
    .option(
      "gyro-offset", value: "X,Y,Z",
      help:
        "add a constant zero-rate offset to every gyro sample, °/s (a raw, uncalibrated "
        + "MPU-6050's offsets reach ±20 °/s, typically a few), to score the bias estimation"),
    .flag(
      "start-in-motion",
      help:
        "start each trial 1 s after its first movement, without the rest at its start "
        + "(with --gyro-offset: an uncalibrated gyro switched on in motion)"),
    .flag(
      "sensitivity",
      help: "also rerun with each main setting halved and doubled, to show robustness"),
  ],
  examples: [
    "plumb-broad", "plumb-broad --sensitivity", "plumb-broad --set tau=2",
    "plumb-broad --gyro-offset 3,-2,5", "plumb-broad --start-in-motion --gyro-offset 1,-1,1",
  ])

func fail(_ message: String, status: ExitCode) -> Never {
  printError("plumb-broad: \(message)")
  exit(status.rawValue)
}

let parsed: ParsedArguments
do {
  parsed = try ParsedArguments(Array(CommandLine.arguments.dropFirst()), spec: spec)
} catch {
  printError(error.description)
  exit(ExitCode.usage.rawValue)
}
if parsed.wantsHelp {
  print(spec.help, terminator: "")
  exit(ExitCode.success.rawValue)
}
if parsed.wantsVersion {
  print(versionLine(program: spec.name))
  exit(ExitCode.success.rawValue)
}
let dataDirectory = parsed.value("data") ?? "/work/shared/data/broad"
let runSensitivity = parsed.flag("sensitivity")
var settings = AttitudeEstimator.Settings.default
// A recording's rate comes from its timestamps (285.7 Hz here), not from the firmware's 100 Hz.
settings.sampleClock.nominalPeriodSeconds = nil
for assignment in parsed.values("set") {
  let pair = assignment.split(separator: "=", maxSplits: 1).map(String.init)
  guard pair.count == 2, let value = Double(pair[1]),
    let override = Override.all.first(where: { $0.name == pair[0] })
  else {
    fail(
      "--set takes NAME=NUMBER with NAME one of: \(Override.names.joined(separator: ", "))",
      status: .usage)
  }
  guard value.isFinite else {
    fail(
      "--set \(assignment): \(pair[1]) is out of range (a finite number is needed)", status: .usage)
  }
  override.apply(&settings, value)
}
if let problem = settings.problem { fail("invalid settings: \(problem)", status: .usage) }

let files: [String]
do {
  files = try FileManager.default.contentsOfDirectory(atPath: dataDirectory)
    .filter { $0.hasSuffix(".csv.gz") }.sorted()
} catch {
  fail("cannot read \(dataDirectory): \(error.localizedDescription)", status: .noInput)
}
if files.isEmpty { fail(BroadError.noFiles(dataDirectory).description, status: .noInput) }

var loaded: [BroadTrial] = []
for file in files {
  do {
    loaded.append(try loadTrial(path: (dataDirectory as NSString).appendingPathComponent(file)))
  } catch {
    fail("\(error)", status: .dataError)
  }
}
if let text = parsed.value("gyro-offset") {
  let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
    Double($0.trimmingCharacters(in: .whitespaces))
  }
  guard parts.count == 3, let x = parts[0], let y = parts[1], let z = parts[2],
    x.isFinite, y.isFinite, z.isFinite
  else {
    fail(
      "--gyro-offset takes three numbers in °/s, X,Y,Z (e.g. 3,-2,5), not '\(text)'", status: .usage
    )
  }
  let offset = Vector3(x, y, z) * radiansPerDegree
  for t in loaded.indices { loaded[t].gyro = loaded[t].gyro.map { $0 + offset } }
  print("gyro offset added to every trial: \(x), \(y), \(z) °/s")
}
if parsed.flag("start-in-motion") {
  // Each trial from 1 s after its first movement sample: no rest at the start to measure the
  // bias (scored, as always, over the movement samples that remain).
  for t in loaded.indices {
    guard let first = loaded[t].movement.firstIndex(of: true) else { continue }
    let t0 = loaded[t].timestampNanoseconds[first]
    let k: Int =
      loaded[t].timestampNanoseconds.firstIndex { $0 - t0 >= 1_000_000_000 } ?? first
    loaded[t].timestampNanoseconds.removeFirst(k)
    loaded[t].gyro.removeFirst(k)
    loaded[t].acceleration.removeFirst(k)
    loaded[t].truth.removeFirst(k)
    loaded[t].movement.removeFirst(k)
  }
  print("each trial starts 1 s after its first movement (no rest at the start)")
}
if let problem = loaded.lazy.compactMap(\.scoringProblem).first {
  fail(problem, status: .dataError)
}
let trials = loaded

@MainActor func evaluate(_ settings: AttitudeEstimator.Settings) -> [(TrialScore, Double)] {
  trials.map { trial in
    let (estimates, restFraction) = estimate(trial: trial, settings: settings)
    return (score(estimates: estimates, trial: trial), restFraction)
  }
}

func format(_ value: Double, _ decimals: Int) -> String {
  String(format: "%.\(decimals)f", locale: Locale(identifier: "en_US_POSIX"), value)
}

func means(_ results: [(TrialScore, Double)]) -> (Double, Double) {
  let n = Double(results.count)
  return (
    results.map(\.0.inclinationRMSEDegrees).reduce(0, +) / n,
    results.map(\.0.headingDriftRMSEDegrees).reduce(0, +) / n
  )
}

let results = evaluate(settings)
let nameWidth = max(5, trials.map(\.name.count).max() ?? 5)
func pad(_ s: String, _ width: Int) -> String {
  s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}
func padLeft(_ s: String, _ width: Int) -> String {
  s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
print(
  "\(pad("trial", nameWidth))  \(padLeft("samples", 8))  \(padLeft("incl RMSE °", 11))  "
    + "\(padLeft("heading drift RMSE °", 20))  \(padLeft("at rest", 7))")
for (trial, (score, rest)) in zip(trials, results) {
  print(
    "\(pad(trial.name, nameWidth))  \(padLeft(String(trial.count), 8))  "
      + "\(padLeft(format(score.inclinationRMSEDegrees, 3), 11))  "
      + "\(padLeft(format(score.headingDriftRMSEDegrees, 3), 20))  "
      + "\(padLeft(format(rest * 100, 0) + " %", 7))")
}
let (inclination, heading) = means(results)
print(
  "\(pad("mean (\(trials.count) trials)", nameWidth))  \(padLeft("", 8))  "
    + "\(padLeft(format(inclination, 4), 11))  \(padLeft(format(heading, 4), 20))")
print("reference, VQF 2.1.2 6D defaults on the same trials: 0.734 / 2.40")
print("")
print(attribution)

if runSensitivity {
  print("")
  print("sensitivity: each setting halved / doubled (mean inclination / heading drift, °)")
  let studies: [(String, (inout AttitudeEstimator.Settings, Double) -> Void)] = [
    ("inclination τ", { $0.inclination.timeConstantSeconds *= $1 }),
    ("rest gyro threshold", { $0.rest.gyroDeviationThresholdRadiansPerSecond *= $1 }),
    (
      "rest accel threshold",
      { $0.rest.accelerationDeviationThresholdMetersPerSecondSquared *= $1 }
    ),
    ("rest duration", { $0.rest.minimumDurationSeconds *= $1 }),
    (
      "rejection thresholds",
      {
        $0.accelerationRejection.lowerThresholdMetersPerSecondSquared *= $1
        $0.accelerationRejection.upperThresholdMetersPerSecondSquared *= $1
      }
    ),
    ("motion bias sigma", { $0.bias.motionUncertaintyRadiansPerSecond *= $1 }),
    ("gyro noise density", { $0.noise.gyroNoiseDensity *= $1 }),
    ("bias random walk", { $0.noise.gyroBiasRandomWalk *= $1 }),
  ]
  for (name, change) in studies {
    var line = pad(name, 22)
    for factor in [0.5, 2.0] {
      var s = settings
      change(&s, factor)
      let (i, h) = means(evaluate(s))
      line += "  ×\(format(factor, 1)): \(format(i, 3)) / \(format(h, 2))"
    }
    print(line)
  }
}
