import Plotting
import Testing

@Suite struct FigureTests {
  func allanLikeChart() -> Chart {
    let tau = [0.01, 0.1, 1, 10, 100]
    let sigma = tau.map { 2e-4 / $0.squareRoot() }
    return Chart(
      title: "Allan <deviation> & co",
      xAxis: Axis("τ (s)", scale: .logarithmic), yAxis: Axis("σ (rad/s)", scale: .logarithmic),
      series: [Series("x", x: tau, y: sigma, stroke: Stroke(.blue), marker: .circle)],
      guides: [GuideLine(.powerLaw(coefficient: 2e-4, exponent: -0.5), label: "slope −½")],
      markers: [MarkedPoint(x: 1, y: 2e-4, label: "N 2.0e-4")])
  }

  @Test func rendersDeterministicallyWithEscapedText() {
    let a = allanLikeChart().svg()
    let b = allanLikeChart().svg()
    #expect(a == b)
    #expect(a.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(a.hasSuffix("</svg>\n"))
    #expect(a.contains("Allan &lt;deviation&gt; &amp; co"))
    #expect(!a.contains("nan"))
    #expect(a.contains(">slope −½</text>"))
    #expect(a.contains(">N 2.0e-4</text>"))
  }

  @Test func logAxesGetDecadeTicksAndPlaceValuesProportionally() {
    let svg = allanLikeChart().svg(width: 720, height: 440)
    for label in ["0.01", "0.1", "1", "10", "100", "10\u{207B}\u{2074}", "0.001"] {
      #expect(svg.contains(">\(label)</text>"), "missing tick \(label)")
    }
    // The x range is 0.01 … 100 (four decades) across the plot area from 84 to 696 px: the
    // series' first point sits at the left edge and each decade adds 153 px.
    let path = svg.split(separator: "\n").first { $0.hasPrefix("<path d=\"M84.00 ") }
    #expect(path != nil)
    #expect(path?.contains("L237.00 ") == true)
    #expect(path?.contains("L696.00 ") == true)
  }

  @Test func unplaceableValuesBreakTheLine() {
    let chart = Chart(
      title: "", xAxis: Axis("x"), yAxis: Axis("y", scale: .logarithmic),
      series: [Series("s", x: [1, 2, 3, 4], y: [1, -1, 10, 100], stroke: Stroke(.red))])
    let svg = chart.svg()
    // Two subpaths: the first point alone, then 3 → 4; the negative value is skipped.
    let path = svg.split(separator: "\n").first {
      $0.hasPrefix("<path d=\"M") && $0.contains("#d62728")
    }
    #expect(path?.components(separatedBy: "M").count == 3)
  }

  @Test func linearAxesUseNiceSteps() {
    let chart = Chart(
      title: "", xAxis: Axis("T (°C)"), yAxis: Axis("bias (°/s)"),
      series: [Series("s", x: [22.3, 41.7], y: [-0.31, 0.27], stroke: Stroke(.red))],
      legend: nil)
    let svg = chart.svg()
    for label in ["20", "25", "30", "35", "40", "45", "-0.4", "0.0", "0.2", "0.4"] {
      #expect(svg.contains(">\(label)</text>"), "missing tick \(label)")
    }
  }

  @Test func anAutomaticLegendAvoidsTheData() {
    // Data crowd the upper right: the legend moves to another corner.
    let xs = (0..<50).map { 8 + Double($0) / 25 }
    let chart = Chart(
      title: "", xAxis: Axis("x", range: 0...10), yAxis: Axis("y", range: 0...10),
      series: [Series("crowd", x: xs, y: xs, stroke: Stroke(.blue), marker: .circle)])
    let svg = chart.svg(width: 720, height: 440)
    let legend = svg.split(separator: "\n").first { $0.contains("fill-opacity=\"0.85\"") }
    #expect(legend?.contains("x=\"92.00\"") == true)  // the left edge of the plot area + 8
  }

  @Test func figuresStackChartsAndNumberClipPaths() {
    let figure = Figure(
      title: "two", charts: [allanLikeChart(), allanLikeChart()], chartHeight: 300)
    let svg = figure.svg()
    #expect(svg.contains("height=\"634.00\""))
    #expect(svg.contains("id=\"plot-area-0\""))
    #expect(svg.contains("id=\"plot-area-1\""))
  }
}

extension StringProtocol {
  fileprivate func components(separatedBy separator: String) -> [Substring] {
    String(self).split(separator: separator, omittingEmptySubsequences: false)
  }
}

/// Labels come from files and messages: any text must keep the SVG (and the JUnit report, which
/// shares the escaping) well-formed XML.
@Suite struct EscapeXMLTests {
  @Test func controlCharactersCannotBreakTheDocument() {
    // XML 1.0 allows no control character but tab, newline and return, not even as a
    // reference: a BEL or an ESC in a label made a document no parser reads.
    #expect(escapeXML("a\u{7}b\u{1B}[0m\u{0}") == "a\u{FFFD}b\u{FFFD}[0m\u{FFFD}")
    #expect(escapeXML("\u{FFFE}\u{FFFF}") == "\u{FFFD}\u{FFFD}")
    #expect(escapeXML(#"<a href="x">&'"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&apos;")
    #expect(escapeXML("é ≤ 2 °C") == "é ≤ 2 °C")
    // Line breaks: kept in character data; as references in attribute values.
    #expect(escapeXML("one\r\ntwo\tthree") == "one\r\ntwo\tthree")
    #expect(escapeXML("one\r\ntwo\tthree", encodingWhitespace: true) == "one&#13;&#10;two&#9;three")
  }
}
