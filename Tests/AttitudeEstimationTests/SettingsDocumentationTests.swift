import AttitudeEstimation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The estimator README's table of settings ("## Settings") against the code's defaults: every
/// row's numbers are the default `AttitudeEstimator.Settings` holds, in the row's units, and
/// every row is checked (a row added without a check here fails, as does a default changed in
/// the code and not in the table).
@Suite struct SettingsDocumentationTests {
  static let readmePath: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/Sources/AttitudeEstimation/README.md"
  }()

  /// The table's rows: the setting's cell → the default's cell.
  static func documentedDefaults() throws -> [String: String] {
    let text = try readText(readmePath)
    var rows: [String: String] = [:]
    var inSettings = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("## ") { inSettings = line.hasPrefix("## Settings") }
      guard inSettings, line.hasPrefix("| `") else { continue }
      let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
        String($0).trimmingSpaces()
      }
      guard cells.count >= 4 else { continue }
      rows[cells[1]] = cells[2]
    }
    return rows
  }

  /// The numbers written in a default's cell before any parenthesis: "20/3 °/s" is 20/3,
  /// "1.5 / 2.5 m/s²" is 1.5 and 2.5, "±25 %" is 25, "1e-4 rad/s/√s" is 0.0001.
  static func numbers(in cell: String) -> [Double] {
    let main = cell.split(separator: "(", maxSplits: 1).first.map(String.init) ?? cell
    var found: [Double] = []
    var token = ""
    func flush() {
      defer { token = "" }
      // A "/" that no digit follows belongs to the text after it ("1.5 / 2.5").
      if token.last == "/" { token.removeLast() }
      guard !token.isEmpty else { return }
      let parts = token.split(separator: "/")
      if parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]) {
        found.append(a / b)
      } else if let value = Double(token) {
        found.append(value)
      }
    }
    var previous: Character = " "
    for character in main {
      let continuesNumber =
        character.isASCII
        && (character.isNumber || character == "." || (character == "e" && !token.isEmpty)
          || (character == "-" && previous == "e" && !token.isEmpty)
          || (character == "/" && !token.isEmpty && token.last!.isNumber))
      if continuesNumber {
        token.append(character)
      } else {
        flush()
      }
      previous = character
    }
    flush()
    return found
  }

  static let degrees = 180 / Double.pi

  /// Each row's default, from the code, in the units the table writes.
  static func codeDefaults() -> [String: [Double]] {
    let s = AttitudeEstimator.Settings.default
    return [
      "`sampleClock.nominalPeriodSeconds`": [s.sampleClock.nominalPeriodSeconds ?? .nan],
      "`sampleClock.jitterTolerance`": [s.sampleClock.jitterTolerance * 100],
      "`sampleClock.gapFactor`": [s.sampleClock.gapFactor],
      "`sampleClock.maximumIntegrationIntervalSeconds`": [
        s.sampleClock.maximumIntegrationIntervalSeconds
      ],
      "`inclination.timeConstantSeconds` τ": [s.inclination.timeConstantSeconds],
      "`inclination.initialisationSeconds`": [s.inclination.initialisationSeconds],
      "`inclination.reacquisitionGapSeconds`": [s.inclination.reacquisitionGapSeconds],
      "`accelerationRejection` thresholds": [
        s.accelerationRejection.lowerThresholdMetersPerSecondSquared,
        s.accelerationRejection.upperThresholdMetersPerSecondSquared,
      ],
      "`accelerationRejection.recoverySeconds`": [s.accelerationRejection.recoverySeconds],
      "`rest.gyroDeviationThreshold…`": [s.rest.gyroDeviationThresholdRadiansPerSecond * degrees],
      "`rest.accelerationDeviationThreshold…`": [
        s.rest.accelerationDeviationThresholdMetersPerSecondSquared
      ],
      "`rest.minimumDurationSeconds`": [s.rest.minimumDurationSeconds],
      "`rest.biasConsistencySigmas` / `maximumBiasJump…`": [
        s.rest.biasConsistencySigmas, s.rest.maximumBiasJumpRadiansPerSecond * degrees,
      ],
      "`rest.stationaritySigmas`": [s.rest.stationaritySigmas],
      "`rest.gravityTurnSigmas` / `maximumGravityTurnRate…`": [
        s.rest.gravityTurnSigmas, s.rest.maximumGravityTurnRateRadiansPerSecond * degrees,
      ],
      "`bias.initialUncertainty…`": [s.bias.initialUncertaintyRadiansPerSecond * degrees],
      "`bias.motionUncertainty…`": [s.bias.motionUncertaintyRadiansPerSecond * degrees],
      "`bias.motionEvidenceTimeConstantSeconds` / `motionEvidenceSigmas` / `motionEvidenceFloor…`":
        [
          s.bias.motionEvidenceTimeConstantSeconds, s.bias.motionEvidenceSigmas,
          s.bias.motionEvidenceFloorRadiansPerSecond * degrees,
        ],
      "`bias.motionRelearningNoise…`": [s.bias.motionRelearningNoiseRadiansPerSecond * degrees],
      "`bias.temperatureCoefficientUncertainty…`": [
        s.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius * degrees
      ],
      "`noise.gyroNoiseDensity` N": [s.noise.gyroNoiseDensity * degrees],
      "`noise.gyroBiasRandomWalk` K": [s.noise.gyroBiasRandomWalk],
      "`gaps.unseenAngularAcceleration…`": [
        s.gaps.unseenAngularAccelerationRadiansPerSecondSquared * degrees
      ],
      "`gaps.headingStepRadians`": [s.gaps.headingStepRadians * degrees],
    ]
  }

  @Test func everyNumberInTheTableIsTheCodesDefault() throws {
    let table = try Self.documentedDefaults()
    #expect(table.count >= 20, "the README's settings table was not found: \(Self.readmePath)")
    for (setting, expected) in Self.codeDefaults() {
      guard let cell = table[setting] else {
        Issue.record("the README's settings table has no row \(setting)")
        continue
      }
      let written = Self.numbers(in: cell)
      #expect(written.count == expected.count, "\(setting): '\(cell)' against \(expected)")
      for (w, e) in zip(written, expected) {
        #expect(abs(w - e) <= 1e-9 * abs(e), "\(setting): the README says '\(cell)', the code \(e)")
      }
    }
  }

  @Test func theRowsWithoutNumbersAgreeToo() throws {
    let table = try Self.documentedDefaults()
    let s = AttitudeEstimator.Settings.default
    #expect(table["`inclination.order`"] == "`.\(s.inclination.order)`")
    #expect(table["`holdsAttitudeAtRest`"] == (s.holdsAttitudeAtRest ? "on" : "off"))
  }

  @Test func everyRowIsChecked() throws {
    let checked = Set(Self.codeDefaults().keys).union([
      "`inclination.order`", "`holdsAttitudeAtRest`",
    ])
    let rows = Set(try Self.documentedDefaults().keys)
    #expect(rows.subtracting(checked).isEmpty, "rows without a check: \(rows.subtracting(checked))")
  }

  @Test func numbersAreReadAsTheTableWritesThem() {
    #expect(Self.numbers(in: "20/3 °/s") == [20.0 / 3])
    #expect(Self.numbers(in: "1.5 / 2.5 m/s² sustained") == [1.5, 2.5])
    #expect(Self.numbers(in: "±25 %") == [25])
    #expect(Self.numbers(in: "1e-4 rad/s/√s") == [1e-4])
    #expect(Self.numbers(in: "0.03 °/s/°C (0.01 with a bench fit)") == [0.03])
    #expect(Self.numbers(in: "0.2 s (∞: never)") == [0.2])
  }
}

extension String {
  fileprivate func trimmingSpaces() -> String {
    var text = Substring(self)
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return String(text)
  }
}

struct UnreadableFile: Error, CustomStringConvertible {
  var path: String
  var description: String { "cannot read \(path)" }
}

/// The whole of a text file.
func readText(_ path: String) throws -> String {
  guard let file = fopen(path, "rb") else { throw UnreadableFile(path: path) }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = fread(&chunk, 1, chunk.count, file)
    if count == 0 { break }
    bytes.append(contentsOf: chunk[0..<count])
  }
  return String(decoding: bytes, as: UTF8.self)
}
