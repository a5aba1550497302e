import Plotting
import TestSupport
import Testing

@Suite struct HTMLReportTests {
  func chart(_ title: String) -> Chart {
    Chart(
      title: title, xAxis: Axis("t (s)"), yAxis: Axis("e (°)"),
      series: [Series("e", x: [0, 1, 2], y: [0.5, 0.25, 1], stroke: Stroke(.blue))])
  }

  func report(source: String) -> HTMLReport {
    HTMLReport(
      title: "plumb-test \(source)",
      facts: [HTMLReport.Fact("input", source), HTMLReport.Fact("version", "1.2.3")],
      sections: [
        HTMLReport.Section(
          "Checks",
          [
            .checks([
              HTMLReport.Check("a ≤ 2", verdict: .pass, detail: "1.5"),
              HTMLReport.Check("b ≤ 1", verdict: .fail, detail: "b 3 exceeded"),
            ])
          ]),
        HTMLReport.Section(
          "Figures",
          [
            .table(
              HTMLReport.Table(
                caption: "per axis", columns: ["", "x", "y"],
                rows: [["N (rad/√s)", "1e-4", "2e-4"]])),
            .figure(Figure(title: "one", charts: [chart("a"), chart("b")]), caption: "two charts"),
            .figure(Figure(title: "two", charts: [chart("c")]), caption: source),
            .preformatted("line 1\nline <2>"),
          ]),
      ])
  }

  @Test func isWellFormedSelfContainedAndDeterministic() {
    let html = report(source: "still.csv").html()
    #expect(HTMLCheck.problems(html) == [])
    #expect(html == report(source: "still.csv").html())
    #expect(html.contains("<meta name=\"viewport\""))
    #expect(html.contains("@media print"))
    // The SVG is inline, not referenced.
    #expect(html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(!html.contains("<img"))
    #expect(HTMLCheck.cells(html) == ["pass", "1.5", "FAIL", "b 3 exceeded", "1e-4", "2e-4"])
    #expect(html.contains("FAIL: 1 failed of 2 checks"))
  }

  /// Several figures on one page: each chart clips to its own plot area (ids are unique).
  @Test func figuresOnOnePageHaveDistinctIDs() {
    let html = report(source: "x").html()
    let ids = html.split(separator: "id=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
    #expect(Set(ids).count == ids.count)
    #expect(ids.contains("figure-1-plot-area-1") && ids.contains("figure-2-plot-area-0"))
    // A figure alone keeps the bytes it always had.
    #expect(Figure(charts: [chart("a")]).svg().contains("id=\"plot-area-0\""))
  }

  @Test func aHostileFileNameShowsAsText() {
    let name = "<script>alert(1)</script>&\"'.csv"
    let html = report(source: name).html()
    #expect(HTMLCheck.problems(html) == [])
    #expect(!html.contains("<script>"))
    #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&apos;.csv"))
  }

  @Test func allPassedSaysSo() {
    let html = HTMLReport(
      title: "t", facts: [],
      sections: [HTMLReport.Section("c", [.checks([HTMLReport.Check("a", verdict: .pass)])])]
    ).html()
    #expect(html.contains("PASS: the check passed"))
    #expect(HTMLCheck.problems(html) == [])
  }
}
