import ByteFormats
import JSON
import Plotting

extension HILResult {
  /// The run's checks for the page: every sample reconciled, then each limit in the order
  /// given (with its figure), then, when the run was cut short, that it did not complete —
  /// the checks of the JUnit report and of the exit status.
  public func checks(limits: [HILLimit]) -> [HTMLReport.Check] {
    HILJUnitReport(result: self, unit: "", seconds: nil, limits: limits).checks.enumerated().map {
      index, check in
      // A passed limit's figure: its verdict line (the JUnit case carries none).
      let limit = index >= 1 && index <= limits.count ? limits[index - 1] : nil
      var html = check.html
      if check.outcome == .passed {
        html.detail =
          limit.map { $0.verdict(on: self).line }
          ?? "silent_losses = \(accounting.silentLosses)"
      }
      return html
    }
  }

  /// The report as one self-contained page: the checks, every figure of `json` as tables (the
  /// same numbers, as written there), and the four plots inline. Deterministic: the same run
  /// gives the same bytes (no clock; `version` is the tool's).
  public func htmlReport(checks: [HTMLReport.Check], tool: String, version: String)
    -> HTMLReport
  {
    var facts = [HTMLReport.Fact("tool", version.isEmpty ? tool : "\(tool) (Plumb \(version))")]
    facts += [
      HTMLReport.Fact("scenario", scenario), HTMLReport.Fact("faults", faults),
      HTMLReport.Fact("seed", String(seed)),
      HTMLReport.Fact("simulated time", NumberText.fixed(seconds, 3) + " s"),
    ]
    if let boardPath { facts.append(HTMLReport.Fact("board", boardPath)) }
    if let calibrationID { facts.append(HTMLReport.Fact("calibration", calibrationID)) }
    if interrupted {
      facts.append(HTMLReport.Fact("interrupted", "yes: the figures cover the run up to there"))
    }
    var sections: [HTMLReport.Section] = []
    var verdict: [HTMLReport.Block] = [.preformatted(summaryLine)]
    if !checks.isEmpty { verdict.insert(.checks(checks), at: 0) }
    sections.append(HTMLReport.Section("Verdict", verdict))
    sections.append(
      HTMLReport.Section(
        "Plots",
        [
          .figure(
            attitudeErrorFigure,
            caption: "attitude error against the truth (\(HILReportFiles.attitudeError))"),
          .figure(
            restFigure, caption: "rest flags against the true rests (\(HILReportFiles.rest))"),
          .figure(
            gyroBiasFigure,
            caption: "gyro-bias estimate against the truth (\(HILReportFiles.gyroBias))"),
          .figure(latencyFigure, caption: "latency (\(HILReportFiles.latency))"),
        ]))
    sections += HILResult.sections(of: json)
    return HTMLReport(
      title: "\(tool) \(scenario), faults \(faults), seed \(seed)", facts: facts, sections: sections
    )
  }

  /// The JSON report as page sections: its top-level figures as one table, each object as a
  /// table of its figures (objects inside it flattened to `outer.inner`), each array of
  /// objects as a table with a row per item. Numbers appear exactly as report.json writes them.
  static func sections(of json: JSONValue) -> [HTMLReport.Section] {
    guard case .object(let members) = json else { return [] }
    var run: [HTMLReport.Fact] = []
    var sections: [HTMLReport.Section] = []
    for (key, value) in members {
      switch value {
      case .object(let inner):
        sections.append(
          HTMLReport.Section(
            "report.json: \(key)", [.table(HTMLReport.Table(facts: flatten(inner, prefix: "")))]))
      case .array(let items)
      where items.contains(where: { if case .object = $0 { true } else { false } }):
        sections.append(
          HTMLReport.Section("report.json: \(key) (\(items.count))", [arrayTable(items)]))
      default:
        run.append(HTMLReport.Fact(key, text(value)))
      }
    }
    return [HTMLReport.Section("report.json: the run", [.table(HTMLReport.Table(facts: run))])]
      + sections
  }

  static func flatten(_ members: [(key: String, value: JSONValue)], prefix: String)
    -> [HTMLReport.Fact]
  {
    var facts: [HTMLReport.Fact] = []
    for (key, value) in members {
      if case .object(let inner) = value {
        facts += flatten(inner, prefix: prefix + key + ".")
      } else {
        facts.append(HTMLReport.Fact(prefix + key, text(value)))
      }
    }
    return facts
  }

  static func arrayTable(_ items: [JSONValue]) -> HTMLReport.Block {
    var columns: [String] = []
    for case .object(let members) in items {
      for (key, _) in members where !columns.contains(key) { columns.append(key) }
    }
    var rows: [[String]] = []
    for (index, item) in items.enumerated() {
      guard case .object(let members) = item else { continue }
      rows.append(
        ["\(index + 1)"]
          + columns.map { column in
            members.first { $0.key == column }.map { text($0.value) } ?? ""
          })
    }
    return .table(HTMLReport.Table(columns: ["#"] + columns, rows: rows))
  }

  /// A JSON value as a cell: numbers as written in the JSON, arrays comma-separated.
  static func text(_ value: JSONValue) -> String {
    switch value {
    case .null: "–"
    case .bool(let flag): flag ? "true" : "false"
    case .number(_, let text): text
    case .string(let string): string
    case .array(let items): items.isEmpty ? "none" : items.map(text).joined(separator: ", ")
    case .object(let members):
      flatten(members, prefix: "").map { "\($0.name) \($0.value)" }.joined(separator: ", ")
    }
  }
}

extension HILCheck {
  /// The check as a line of the page's verdict table.
  public var html: HTMLReport.Check {
    switch outcome {
    case .passed: HTMLReport.Check(name, verdict: .pass)
    case .failed(let message): HTMLReport.Check(name, verdict: .fail, detail: message)
    case .error(let message): HTMLReport.Check(name, verdict: .error, detail: message)
    }
  }
}
