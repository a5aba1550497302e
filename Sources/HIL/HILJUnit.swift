import ByteFormats
import Plotting
import Telemetry

/// One check of a HIL run, as a JUnit test case.
public struct HILCheck: Hashable, Sendable {
  public enum Outcome: Hashable, Sendable {
    case passed
    /// The check ran and its figure is out of bounds: a JUnit `<failure>`.
    case failed(String)
    /// The check could not run (the firmware did not start, the run was interrupted): a
    /// JUnit `<error>`.
    case error(String)
  }

  public var name: String
  public var outcome: Outcome

  public init(name: String, outcome: Outcome) {
    self.name = name
    self.outcome = outcome
  }
}

/// A HIL run as a JUnit XML report (`plumb-hil run --junit FILE`), for the test reporters of CI
/// systems (GitLab's `artifacts:reports:junit`, Jenkins' JUnit plugin, GitHub actions that
/// read JUnit): one `<testsuite>` per run, named by its command; one `<testcase>` per check —
/// every sample reconciled (no silent loss), each `--limit` — passed, failed with the figure
/// and the bound, or in error when the run could not get there; the run's settings and figures
/// as `<property>`s; the summary line as `<system-out>`.
///
/// **Deterministic**: no `time`, `timestamp` or `hostname` attributes (all optional in the
/// schema), so the same run writes the same bytes, as every other output of `plumb-hil` does.
/// The classname `plumb-hil.SCENARIO.FAULTS.UNIT.seed-S` keeps the cases of a CI matrix apart.
public struct HILJUnitReport: Sendable {
  public var suiteName: String
  public var classname: String
  public var properties: [(name: String, value: String)]
  public var checks: [HILCheck]
  /// The run's summary line (or what stopped it), as `<system-out>`.
  public var output: String?

  public init(
    suiteName: String, classname: String, properties: [(name: String, value: String)],
    checks: [HILCheck], output: String?
  ) {
    self.suiteName = suiteName
    self.classname = classname
    self.properties = properties
    self.checks = checks
    self.output = output
  }

  /// The report of a finished (or interrupted) run: the reconciliation, then each limit in
  /// the order given. `unit` names the simulated unit as `--unit` did, `seconds` is `--seconds`
  /// (the suite's name is the command, not what the run measured).
  public init(result: HILResult, unit: String, seconds: Double?, limits: [HILLimit]) {
    var checks = [
      HILCheck(
        name:
          "no sample lost silently (every sample the chip produced reached the host or was counted)",
        outcome: result.accounting.silentLosses == 0
          ? .passed
          : .failed(
            "\(result.accounting.silentLosses) samples were lost silently (see the reconciliation in the report)"
          ))
    ]
    for limit in limits {
      let verdict = limit.verdict(on: result)
      checks.append(
        HILCheck(
          name: "limit \(limit.metric.rawValue) ≤ \(HILJUnitReport.number(limit.maximum))",
          outcome: verdict.passed ? .passed : .failed(verdict.line)))
    }
    if result.interrupted {
      checks.append(
        HILCheck(
          name: "the run completed",
          outcome: .error(
            "interrupted after \(NumberText.fixed(result.seconds, 2)) s of simulated time: the figures cover the run up to there"
          )))
    }
    let a = result.accuracy
    var properties: [(name: String, value: String)] = HILJUnitReport.settings(
      scenario: result.scenario, faults: result.faults, unit: unit, seed: result.seed)
    properties += [
      ("seconds", NumberText.fixed(result.seconds, 3)), ("format", result.format.rawValue),
      ("calibration", result.calibrationID ?? "none"),
      ("board", result.boardPath ?? "none"),
      ("sample_rate_hz", NumberText.fixed(result.sampleRateHz, 3)),
      ("frames", String(result.telemetryFrames)),
      ("missed", String(result.accounting.countedMissed)),
      ("silent_losses", String(result.accounting.silentLosses)),
      ("incl_rms_deg", NumberText.fixed(a.inclinationRMSDegrees, 3)),
      ("incl_max_deg", NumberText.fixed(a.inclinationMaximumDegrees, 3)),
      ("heading_rms_deg", NumberText.fixed(a.headingRMSDegrees, 3)),
      ("heading_drift_rms_deg", NumberText.fixed(a.headingDriftRMSDegrees, 3)),
    ]
    self.init(
      suiteName: HILJUnitReport.suiteName(
        scenario: result.scenario, faults: result.faults, unit: unit, seed: result.seed,
        seconds: seconds),
      classname: HILJUnitReport.classname(
        scenario: result.scenario, faults: result.faults, unit: unit, seed: result.seed),
      properties: properties, checks: checks, output: result.summaryLine + "\n")
  }

  /// The report of a soak (`plumb-hil soak --junit`): each of its checks. The memory figures
  /// differ from one run to the next (the process's resident set), so unlike a run's report a
  /// soak's is not the same bytes every time.
  public init(soak verdict: SoakVerdict, hours: Double) {
    let result = verdict.result
    let a = result.accuracy
    var properties: [(name: String, value: String)] = [
      ("scenario", result.scenario), ("faults", result.faults), ("seed", String(result.seed)),
      ("hours", HILJUnitReport.number(hours)), ("seconds", NumberText.fixed(result.seconds, 3)),
      ("frames", String(result.telemetryFrames)),
      ("missed", String(result.accounting.countedMissed)),
      ("silent_losses", String(result.accounting.silentLosses)),
      ("incl_rms_deg", NumberText.fixed(a.inclinationRMSDegrees, 3)),
    ]
    if let growth = verdict.residentGrowthKilobytes {
      properties.append(("resident_growth_kib", String(growth)))
    }
    self.init(
      suiteName: "plumb-hil soak --hours \(HILJUnitReport.number(hours)) --seed \(result.seed)",
      classname: "plumb-hil.soak.seed-\(result.seed)", properties: properties,
      checks: verdict.checks, output: result.summaryLine + "\n")
  }

  /// The report of a run that did not get going (the firmware did not start): one case in
  /// error with `message`.
  public init(
    failedToStart message: String, scenario: String, faults: String, unit: String, seed: UInt64,
    seconds: Double?
  ) {
    self.init(
      suiteName: HILJUnitReport.suiteName(
        scenario: scenario, faults: faults, unit: unit, seed: seed, seconds: seconds),
      classname: HILJUnitReport.classname(
        scenario: scenario, faults: faults, unit: unit, seed: seed),
      properties: HILJUnitReport.settings(
        scenario: scenario, faults: faults, unit: unit, seed: seed),
      checks: [HILCheck(name: "the firmware started", outcome: .error(message))],
      output: message + "\n")
  }

  static func settings(scenario: String, faults: String, unit: String, seed: UInt64)
    -> [(name: String, value: String)]
  {
    [("scenario", scenario), ("faults", faults), ("unit", unit), ("seed", String(seed))]
  }

  static func suiteName(
    scenario: String, faults: String, unit: String, seed: UInt64, seconds: Double?
  ) -> String {
    "plumb-hil run \(scenario) --faults \(faults) --unit \(unit) --seed \(seed)"
      + (seconds.map { " --seconds \(number($0))" } ?? "")
  }

  static func classname(scenario: String, faults: String, unit: String, seed: UInt64) -> String {
    "plumb-hil.\(scenario).\(faults).\(unit).seed-\(seed)"
  }

  static func number(_ value: Double) -> String { NumberText.compact(value, 9) }

  /// The document.
  public var xml: String {
    let failures = checks.filter { if case .failed = $0.outcome { true } else { false } }.count
    let errors = checks.filter { if case .error = $0.outcome { true } else { false } }.count
    let counts =
      "tests=\"\(checks.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"0\""
    var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    text += "<testsuites name=\"plumb-hil\" \(counts)>\n"
    text += "  <testsuite name=\"\(Self.escape(suiteName))\" \(counts)>\n"
    if !properties.isEmpty {
      text += "    <properties>\n"
      for property in properties {
        text +=
          "      <property name=\"\(Self.escape(property.name))\" value=\"\(Self.escape(property.value))\"/>\n"
      }
      text += "    </properties>\n"
    }
    for check in checks {
      let head =
        "    <testcase classname=\"\(Self.escape(classname))\" name=\"\(Self.escape(check.name))\""
      switch check.outcome {
      case .passed:
        text += head + "/>\n"
      case .failed(let message):
        text += head + ">\n"
        text += "      <failure type=\"limit\" message=\"\(Self.escape(message))\"/>\n"
        text += "    </testcase>\n"
      case .error(let message):
        text += head + ">\n"
        text += "      <error type=\"run\" message=\"\(Self.escape(message))\"/>\n"
        text += "    </testcase>\n"
      }
    }
    if let output {
      text += "    <system-out>\(escapeXML(output))</system-out>\n"
    }
    text += "  </testsuite>\n</testsuites>\n"
    return text
  }

  /// An attribute value (tab, newline and return kept as character references).
  static func escape(_ text: String) -> String { escapeXML(text, encodingWhitespace: true) }
}
