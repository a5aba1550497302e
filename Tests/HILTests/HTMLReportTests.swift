import HIL
import JSON
import Plotting
import TestSupport
import Testing

/// `plumb-hil run --report DIR` writes report.html beside report.json and the plots: the
/// checks, every figure of the JSON, the plots inline, nothing fetched from outside.
@Suite struct HILHTMLReportTests {
  /// Every number and boolean leaf of `value`, as the JSON writes it.
  func leaves(_ value: JSONValue) -> [String] {
    switch value {
    case .null, .string: []
    case .bool(let flag): [flag ? "true" : "false"]
    case .number(_, let text): [text]
    case .array(let items): items.flatMap(leaves)
    case .object(let members): members.flatMap { leaves($0.value) }
    }
  }

  /// Every string leaf of `value`.
  func strings(_ value: JSONValue) -> [String] {
    switch value {
    case .string(let text): [text]
    case .array(let items): items.flatMap(strings)
    case .object(let members): members.flatMap { strings($0.value) }
    default: []
    }
  }

  @Test func thePageHoldsTheChecksTheFiguresAndThePlots() throws {
    var result = try hil("tilt", faults: "nack-burst", seconds: 4) { $0.faultStartSeconds = 3 }
    result.boardPath = "<script>alert('board')</script>.json"
    let limits = [
      HILLimit(metric: .inclinationRMS, maximum: 45),
      HILLimit(metric: .inclinationRMS, maximum: 0.5),
    ]
    let directory = try temporaryDirectory() + "/report"
    try result.writeReport(to: directory, checks: result.checks(limits: limits), version: "9.9.9")
    for file in HILReportFiles.all {
      #expect(readBytes(directory + "/" + file) != nil, "\(file)")
    }
    let page = String(decoding: try #require(readBytes(directory + "/report.html")), as: UTF8.self)
    #expect(HTMLCheck.problems(page) == [])

    // The checks: the reconciliation and the first limit pass, the second fails, with figures.
    #expect(page.contains("FAIL: 1 failed of 3 checks"))
    #expect(page.contains("<tr class=\"pass\"><th scope=\"row\">limit incl_rms_deg ≤ 45</th>"))
    #expect(
      page.contains("<tr class=\"fail\"><th scope=\"row\">limit incl_rms_deg ≤ 0.5</th>"))
    #expect(page.contains("incl_rms_deg exceeded"))
    #expect(page.contains("silent_losses = 0"))

    // Every figure of report.json appears in a cell as the JSON writes it.
    let json = try JSONDocument(parsing: try #require(readBytes(directory + "/report.json"))).root
    let cells = HTMLCheck.cells(page).map { unescape($0) }
    let pageText = unescape(page)
    #expect(leaves(json).count > 100)
    for leaf in leaves(json) {
      #expect(
        cells.contains { $0 == leaf || $0.split(separator: ", ").contains(Substring(leaf)) },
        "\(leaf)")
    }
    for string in strings(json) { #expect(pageText.contains(string), "\(string)") }
    guard case .object(let members) = json,
      let accuracy = members.first(where: { $0.key == "accuracy" })?.value,
      case .object(let figures) = accuracy,
      let rms = figures.first(where: { $0.key == "inclination_rms_deg" })?.value,
      case .number(_, let rmsText) = rms
    else {
      Issue.record("no accuracy.inclination_rms_deg in report.json")
      return
    }
    #expect(page.contains("<th scope=\"row\">inclination_rms_deg</th><td>\(rmsText)</td>"))

    // The plots inline, each as report's own SVG but with its own ids.
    #expect(page.split(separator: "<svg xmlns=").count == 5)
    #expect(page.contains("figure-4-plot-area-0"))
    // The hostile board name is text.
    #expect(!page.contains("<script>"))
    #expect(page.contains("&lt;script&gt;alert(&apos;board&apos;)&lt;/script&gt;.json"))

    // The same run, the same bytes.
    let again = try temporaryDirectory() + "/again"
    try result.writeReport(to: again, checks: result.checks(limits: limits), version: "9.9.9")
    #expect(readBytes(again + "/report.html") == readBytes(directory + "/report.html"))
  }

  /// The plumb-hil command writes the page with its --limit checks.
  @Test func theCommandWritesThePageWithItsLimits() throws {
    let directory = try temporaryDirectory() + "/command"
    let run = try runPlumbHIL([
      "run", "tilt", "--seconds", "2", "--report", directory, "--limit", "incl_rms_deg=90",
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardError.contains("report.html"))
    let page = String(decoding: try #require(readBytes(directory + "/report.html")), as: UTF8.self)
    #expect(HTMLCheck.problems(page) == [])
    #expect(page.contains("PASS: all 2 checks passed"))
    #expect(page.contains("limit incl_rms_deg ≤ 90: "))
  }

  func unescape(_ text: String) -> String {
    text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
      .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
  }
}
