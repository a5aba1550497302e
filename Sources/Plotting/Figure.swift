import ByteFormats

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Charts stacked vertically in one SVG document, each panel `chartWidth` × `chartHeight`
/// pixels, under an optional overall title.
///
/// Rendering is deterministic: the same figure gives the same bytes (coordinates are written
/// with two decimals through `NumberText`, element ids are numbered in drawing order).
public struct Figure: Sendable {
  public var title: String
  public var charts: [Chart]
  public var chartWidth: Double
  public var chartHeight: Double

  public init(
    title: String = "", charts: [Chart], chartWidth: Double = 720, chartHeight: Double = 440
  ) {
    self.title = title
    self.charts = charts
    self.chartWidth = chartWidth
    self.chartHeight = chartHeight
  }

  /// The SVG document (UTF-8 text, ending in a newline). `idPrefix` starts every element id
  /// (the plot areas' clip paths): figures put inline in one HTML page need distinct ones, or
  /// each chart would clip to the first figure's plot area.
  public func svg(idPrefix: String = "") -> String {
    let titleHeight: Double = title.isEmpty ? 0 : 34
    let height = titleHeight + chartHeight * Double(charts.count)
    var out = SVGText()
    out.line(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(px(chartWidth))\" height=\"\(px(height))\" viewBox=\"0 0 \(px(chartWidth)) \(px(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">"
    )
    out.line("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
    if !title.isEmpty {
      out.line(
        "<text x=\"\(px(chartWidth / 2))\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">\(escapeXML(title))</text>"
      )
    }
    for (index, chart) in charts.enumerated() {
      let panel = Panel(
        chart: chart, originY: titleHeight + chartHeight * Double(index), width: chartWidth,
        height: chartHeight, id: escapeXML(idPrefix) + "plot-area-\(index)")
      panel.draw(into: &out)
    }
    out.line("</svg>")
    return out.text
  }
}

/// Accumulates SVG lines.
struct SVGText {
  var text = ""
  mutating func line(_ s: String) {
    text += s
    text += "\n"
  }
}

/// A white outline behind label text, so labels stay legible over lines and grid.
let halo = "stroke=\"#ffffff\" stroke-width=\"3\" stroke-opacity=\"0.85\" paint-order=\"stroke\""

/// A pixel coordinate, two decimals.
func px(_ value: Double) -> String { NumberText.fixed(value, 2) }

/// Text made safe for XML (SVG, JUnit) character data and attribute values: the five markup
/// characters as entities, and characters XML 1.0 does not allow (controls other than tab,
/// newline and return; U+FFFE, U+FFFF) as U+FFFD, so any label or message keeps the document
/// well-formed. `encodingWhitespace`: tab, newline and return as character references, which
/// an attribute value needs to keep them (a parser turns them into spaces otherwise).
public func escapeXML(_ text: String, encodingWhitespace: Bool = false) -> String {
  var out = ""
  out.reserveCapacity(text.utf8.count)
  for scalar in text.unicodeScalars {
    switch scalar {
    case "&": out += "&amp;"
    case "<": out += "&lt;"
    case ">": out += "&gt;"
    case "\"": out += "&quot;"
    case "'": out += "&apos;"
    case "\t", "\n", "\r":
      if encodingWhitespace {
        out += "&#\(scalar.value);"
      } else {
        out.unicodeScalars.append(scalar)
      }
    default:
      if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
        out += "\u{FFFD}"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
  }
  return out
}

/// One axis after its range has been settled: maps data values to pixels.
struct ResolvedAxis {
  var scale: AxisScale
  /// The range in display units: data for linear, log10(data) for logarithmic.
  var low: Double
  var high: Double
  var pixelLow: Double
  var pixelHigh: Double

  /// Display units of a data value, `nil` when it cannot be placed (≤ 0 on a log axis, NaN).
  func display(_ value: Double) -> Double? {
    guard value.isFinite else { return nil }
    switch scale {
    case .linear: return value
    case .logarithmic: return value > 0 ? log10(value) : nil
    }
  }

  func pixel(_ value: Double) -> Double? {
    guard let d = display(value) else { return nil }
    return pixelLow + (d - low) / (high - low) * (pixelHigh - pixelLow)
  }

  /// The data value at a display coordinate.
  func data(fromDisplay d: Double) -> Double {
    scale == .logarithmic ? pow(10, d) : d
  }

  /// Settles the range of `axis` from its fixed range or from `values`.
  static func resolve(
    _ axis: Axis, values: [Double], pixelLow: Double, pixelHigh: Double
  ) -> ResolvedAxis {
    var low: Double
    var high: Double
    switch axis.scale {
    case .logarithmic:
      if let range = axis.range, range.lowerBound > 0 {
        low = log10(range.lowerBound)
        high = log10(range.upperBound)
      } else {
        let logs = values.filter { $0.isFinite && $0 > 0 }.map { log10($0) }
        low = (logs.min() ?? 0).rounded(.down)
        high = (logs.max() ?? 1).rounded(.up)
      }
      if high - low < 1e-12 {
        low -= 0.5
        high += 0.5
      }
    case .linear:
      if let range = axis.range {
        low = range.lowerBound
        high = range.upperBound
      } else {
        let finite = values.filter(\.isFinite)
        low = finite.min() ?? 0
        high = finite.max() ?? 1
        if high - low <= abs(high) * 1e-12 {
          let pad = high == 0 ? 1 : abs(high) * 0.1
          low -= pad
          high += pad
        }
        // A little room so points on the extremes are not drawn on the frame.
        let margin = (high - low) * 0.02
        low -= margin
        high += margin
        let step = niceStep((high - low) / 5)
        low = (low / step).rounded(.down) * step
        high = (high / step).rounded(.up) * step
      }
      if high - low < 1e-300 { high = low + 1 }
    }
    return ResolvedAxis(
      scale: axis.scale, low: low, high: high, pixelLow: pixelLow, pixelHigh: pixelHigh)
  }

  /// Major ticks (data value, label) and minor ticks (data values).
  func ticks() -> (major: [(Double, String)], minor: [Double]) {
    switch scale {
    case .logarithmic:
      let first = Int(low.rounded(.up) + 0)
      let last = Int(high.rounded(.down))
      let decades = max(0, last - first)
      let every = max(1, (decades + 7) / 8)
      var major: [(Double, String)] = []
      var minor: [Double] = []
      if first <= last {
        for k in first...last {
          if (k - first) % every == 0 { major.append((pow(10, Double(k)), decadeLabel(k))) }
        }
      }
      if high - low <= 6 {
        for k in (first - 1)...(last + 1) {
          for f in 2...9 {
            let d = Double(k) + log10(Double(f))
            if d >= low - 1e-9 && d <= high + 1e-9 { minor.append(pow(10, d)) }
          }
        }
      }
      if major.count < 2 {
        // Less than two decades in view: label the 2× and 5× minor ticks as well.
        for value in minor {
          let mantissa = value / pow(10, log10(value).rounded(.down))
          if abs(mantissa - 2) < 1e-6 || abs(mantissa - 5) < 1e-6 {
            major.append((value, NumberText.compact(value, 3)))
          }
        }
        major.sort { $0.0 < $1.0 }
      }
      return (major, minor)
    case .linear:
      let step = niceStep((high - low) / 5)
      let decimals = max(0, -Int(log10(step).rounded(.down)) + (isWholeMultiple(step) ? 0 : 1))
      var major: [(Double, String)] = []
      var k = (low / step - 1e-9).rounded(.up)
      while k * step <= high + step * 1e-9 {
        var value = k * step
        if abs(value) < step * 1e-9 { value = 0 }
        major.append((value, NumberText.fixed(value, decimals)))
        k += 1
      }
      return (major, [])
    }
  }

  /// Whether `step` is a whole multiple of its own leading power of ten (1, 2, 5 × 10ᵏ are).
  private func isWholeMultiple(_ step: Double) -> Bool {
    let mantissa = step / pow(10, log10(step).rounded(.down))
    return abs(mantissa - mantissa.rounded()) < 1e-6
  }
}

/// 1, 2, 2.5 or 5 × 10ᵏ, the nearest such step at or above `raw`.
func niceStep(_ raw: Double) -> Double {
  guard raw > 0, raw.isFinite else { return 1 }
  let magnitude = pow(10, log10(raw).rounded(.down))
  for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= raw * (1 - 1e-9) {
    return factor * magnitude
  }
  return 10 * magnitude
}

/// `10^k` as a label: plain decimals from 0.001 to 10000, superscript powers outside.
func decadeLabel(_ k: Int) -> String {
  if (-3...4).contains(k) { return NumberText.compact(pow(10, Double(k)), 3) }
  let superscripts: [Character: String] = [
    "-": "\u{207B}", "0": "\u{2070}", "1": "\u{00B9}", "2": "\u{00B2}", "3": "\u{00B3}",
    "4": "\u{2074}", "5": "\u{2075}", "6": "\u{2076}", "7": "\u{2077}", "8": "\u{2078}",
    "9": "\u{2079}",
  ]
  return "10" + String(k).map { superscripts[$0] ?? String($0) }.joined()
}

/// One chart laid out inside its panel.
struct Panel {
  let chart: Chart
  let originY: Double
  let width: Double
  let height: Double
  /// The plot area's clip-path id, unique in the document.
  let id: String

  // Margins around the plot area, pixels.
  static let left: Double = 84
  static let right: Double = 24
  static let top: Double = 36
  static let bottom: Double = 52

  var plotLeft: Double { Panel.left }
  var plotRight: Double { width - Panel.right }
  var plotTop: Double { originY + Panel.top }
  var plotBottom: Double { originY + height - Panel.bottom }

  func draw(into out: inout SVGText) {
    var xs: [Double] = []
    var ys: [Double] = []
    for series in chart.series {
      for p in series.points {
        xs.append(p.x)
        ys.append(p.y)
      }
    }
    for marker in chart.markers {
      xs.append(marker.point.x)
      ys.append(marker.point.y)
    }
    for guide in chart.guides {
      if case .horizontal(let y) = guide.shape { ys.append(y) }
      if case .vertical(let x) = guide.shape { xs.append(x) }
    }
    let x = ResolvedAxis.resolve(chart.xAxis, values: xs, pixelLow: plotLeft, pixelHigh: plotRight)
    let y = ResolvedAxis.resolve(
      chart.yAxis, values: ys, pixelLow: plotBottom, pixelHigh: plotTop)
    let clipId = id

    out.line("<g class=\"chart\">")
    if !chart.title.isEmpty {
      out.line(
        "<text x=\"\(px((plotLeft + plotRight) / 2))\" y=\"\(px(originY + 22))\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">\(escapeXML(chart.title))</text>"
      )
    }
    out.line(
      "<clipPath id=\"\(clipId)\"><rect x=\"\(px(plotLeft))\" y=\"\(px(plotTop))\" width=\"\(px(plotRight - plotLeft))\" height=\"\(px(plotBottom - plotTop))\"/></clipPath>"
    )
    drawGridAndTicks(x: x, y: y, into: &out)
    out.line("<g clip-path=\"url(#\(clipId))\">")
    for guide in chart.guides { drawGuide(guide, x: x, y: y, into: &out) }
    for series in chart.series { drawSeries(series, x: x, y: y, into: &out) }
    out.line("</g>")
    drawMarkedPoints(chart.markers, x: x, y: y, into: &out)
    out.line(
      "<rect x=\"\(px(plotLeft))\" y=\"\(px(plotTop))\" width=\"\(px(plotRight - plotLeft))\" height=\"\(px(plotBottom - plotTop))\" fill=\"none\" stroke=\"#000000\" stroke-width=\"1\"/>"
    )
    drawAxisLabels(into: &out)
    if let position = chart.legend { drawLegend(position, x: x, y: y, into: &out) }
    out.line("</g>")
  }

  func drawGridAndTicks(x: ResolvedAxis, y: ResolvedAxis, into out: inout SVGText) {
    let (xMajor, xMinor) = x.ticks()
    let (yMajor, yMinor) = y.ticks()
    for value in xMinor {
      guard let p = x.pixel(value) else { continue }
      out.line(
        "<line x1=\"\(px(p))\" y1=\"\(px(plotTop))\" x2=\"\(px(p))\" y2=\"\(px(plotBottom))\" stroke=\"#eeeeee\" stroke-width=\"1\"/>"
      )
    }
    for value in yMinor {
      guard let p = y.pixel(value) else { continue }
      out.line(
        "<line x1=\"\(px(plotLeft))\" y1=\"\(px(p))\" x2=\"\(px(plotRight))\" y2=\"\(px(p))\" stroke=\"#eeeeee\" stroke-width=\"1\"/>"
      )
    }
    for (value, label) in xMajor {
      guard let p = x.pixel(value), p >= plotLeft - 0.5, p <= plotRight + 0.5 else { continue }
      out.line(
        "<line x1=\"\(px(p))\" y1=\"\(px(plotTop))\" x2=\"\(px(p))\" y2=\"\(px(plotBottom))\" stroke=\"#d0d0d0\" stroke-width=\"1\"/>"
      )
      out.line(
        "<line x1=\"\(px(p))\" y1=\"\(px(plotBottom))\" x2=\"\(px(p))\" y2=\"\(px(plotBottom + 5))\" stroke=\"#000000\" stroke-width=\"1\"/>"
      )
      out.line(
        "<text x=\"\(px(p))\" y=\"\(px(plotBottom + 18))\" text-anchor=\"middle\">\(escapeXML(label))</text>"
      )
    }
    for (value, label) in yMajor {
      guard let p = y.pixel(value), p >= plotTop - 0.5, p <= plotBottom + 0.5 else { continue }
      out.line(
        "<line x1=\"\(px(plotLeft))\" y1=\"\(px(p))\" x2=\"\(px(plotRight))\" y2=\"\(px(p))\" stroke=\"#d0d0d0\" stroke-width=\"1\"/>"
      )
      out.line(
        "<line x1=\"\(px(plotLeft - 5))\" y1=\"\(px(p))\" x2=\"\(px(plotLeft))\" y2=\"\(px(p))\" stroke=\"#000000\" stroke-width=\"1\"/>"
      )
      out.line(
        "<text x=\"\(px(plotLeft - 8))\" y=\"\(px(p + 4))\" text-anchor=\"end\">\(escapeXML(label))</text>"
      )
    }
  }

  func drawAxisLabels(into out: inout SVGText) {
    out.line(
      "<text x=\"\(px((plotLeft + plotRight) / 2))\" y=\"\(px(plotBottom + 40))\" text-anchor=\"middle\">\(escapeXML(chart.xAxis.label))</text>"
    )
    let cy = (plotTop + plotBottom) / 2
    out.line(
      "<text x=\"18\" y=\"\(px(cy))\" text-anchor=\"middle\" transform=\"rotate(-90 18 \(px(cy)))\">\(escapeXML(chart.yAxis.label))</text>"
    )
  }

  func strokeAttributes(_ stroke: Stroke) -> String {
    var s = "fill=\"none\" stroke=\"\(stroke.color.svg)\" stroke-width=\"\(px(stroke.width))\""
    if !stroke.dash.isEmpty {
      s += " stroke-dasharray=\"\(stroke.dash.map { px($0) }.joined(separator: " "))\""
    }
    return s + " stroke-linejoin=\"round\""
  }

  /// A path through the points that can be placed, starting a new subpath after any that
  /// cannot (so a NaN or a non-positive value on a log axis breaks the line).
  func pathData(_ points: [PlotPoint], x: ResolvedAxis, y: ResolvedAxis) -> String {
    var d = ""
    var penDown = false
    for point in points {
      guard let px0 = x.pixel(point.x), let py0 = y.pixel(point.y) else {
        penDown = false
        continue
      }
      d += (d.isEmpty ? "" : " ") + (penDown ? "L" : "M") + px(px0) + " " + px(py0)
      penDown = true
    }
    return d
  }

  func drawSeries(_ series: Series, x: ResolvedAxis, y: ResolvedAxis, into out: inout SVGText) {
    if let stroke = series.stroke {
      let d = pathData(series.points, x: x, y: y)
      if !d.isEmpty { out.line("<path d=\"\(d)\" \(strokeAttributes(stroke))/>") }
    }
    if let shape = series.marker {
      for point in series.points {
        guard let cx = x.pixel(point.x), let cy = y.pixel(point.y) else { continue }
        out.line(markerElement(shape, cx: cx, cy: cy, size: 3, color: series.markerColor))
      }
    }
  }

  func drawGuide(_ guide: GuideLine, x: ResolvedAxis, y: ResolvedAxis, into out: inout SVGText) {
    var points: [PlotPoint] = []
    if case .vertical(let value) = guide.shape {
      points = [
        PlotPoint(x: value, y: y.data(fromDisplay: y.low)),
        PlotPoint(x: value, y: y.data(fromDisplay: y.high)),
      ]
    } else {
      let samples = 128
      for i in 0...samples {
        let d = x.low + (x.high - x.low) * Double(i) / Double(samples)
        let xv = x.data(fromDisplay: d)
        if let yv = guide.y(at: xv) { points.append(PlotPoint(x: xv, y: yv)) }
      }
    }
    let d = pathData(points, x: x, y: y)
    guard !d.isEmpty else { return }
    out.line("<path d=\"\(d)\" \(strokeAttributes(guide.stroke))/>")
    guard !guide.label.isEmpty else { return }
    // The label sits where the line is inside the area, searching from the right.
    for point in points.reversed() {
      guard let lx = x.pixel(point.x), let ly = y.pixel(point.y) else { continue }
      if lx < plotRight - 8, lx > plotLeft + 8, ly > plotTop + 14, ly < plotBottom - 6 {
        out.line(
          "<text x=\"\(px(lx - 4))\" y=\"\(px(ly - 6))\" text-anchor=\"end\" fill=\"\(guide.stroke.color.svg)\" font-size=\"11\" \(halo)>\(escapeXML(guide.label))</text>"
        )
        break
      }
    }
  }

  /// Draws the marked points, then their labels, each label at the first of several spots
  /// around its point that overlaps neither an earlier label nor a marker (labels of nearby
  /// read-offs would otherwise print over each other).
  func drawMarkedPoints(
    _ markers: [MarkedPoint], x: ResolvedAxis, y: ResolvedAxis, into out: inout SVGText
  ) {
    struct Box {
      var left, top, right, bottom: Double
      func overlaps(_ o: Box) -> Bool {
        left < o.right && o.left < right && top < o.bottom && o.top < bottom
      }
    }
    var placed: [(MarkedPoint, Double, Double)] = []
    var occupied: [Box] = []
    for marker in markers {
      guard let cx = x.pixel(marker.point.x), let cy = y.pixel(marker.point.y),
        cx >= plotLeft - 0.5, cx <= plotRight + 0.5, cy >= plotTop - 0.5, cy <= plotBottom + 0.5
      else { continue }
      out.line(markerElement(marker.shape, cx: cx, cy: cy, size: 5, color: marker.color))
      placed.append((marker, cx, cy))
      occupied.append(Box(left: cx - 6, top: cy - 6, right: cx + 6, bottom: cy + 6))
    }
    let lineHeight: Double = 13
    for (marker, cx, cy) in placed where !marker.label.isEmpty {
      let width = 6.2 * Double(marker.label.count)
      let preferLeft = cx > (plotLeft + plotRight) / 2
      var candidates: [(dx: Double, baseline: Double, anchorEnd: Bool)] = []
      for step in 0..<6 {
        let shift = Double(step) * lineHeight
        for side in (preferLeft ? [true, false] : [false, true]) {
          candidates.append((side ? -9 : 9, cy - 8 - shift, side))
          candidates.append((side ? -9 : 9, cy + 16 + shift, side))
        }
      }
      var chosen = candidates[0]
      var chosenBox = Box(left: 0, top: 0, right: 0, bottom: 0)
      for candidate in candidates {
        let left = candidate.anchorEnd ? cx + candidate.dx - width : cx + candidate.dx
        let box = Box(
          left: left, top: candidate.baseline - 10, right: left + width,
          bottom: candidate.baseline + 3)
        let inside =
          box.left >= plotLeft && box.right <= plotRight && box.top >= plotTop
          && box.bottom <= plotBottom
        if inside && !occupied.contains(where: { $0.overlaps(box) }) {
          chosen = candidate
          chosenBox = box
          break
        }
      }
      if chosenBox.right == 0 {
        let left = chosen.anchorEnd ? cx + chosen.dx - width : cx + chosen.dx
        chosenBox = Box(
          left: left, top: chosen.baseline - 10, right: left + width, bottom: chosen.baseline + 3)
      }
      occupied.append(chosenBox)
      out.line(
        "<text x=\"\(px(cx + chosen.dx))\" y=\"\(px(chosen.baseline))\" text-anchor=\"\(chosen.anchorEnd ? "end" : "start")\" fill=\"\(marker.color.svg)\" font-size=\"11\" \(halo)>\(escapeXML(marker.label))</text>"
      )
    }
  }

  func markerElement(_ shape: MarkerShape, cx: Double, cy: Double, size s: Double, color: Color)
    -> String
  {
    let c = color.svg
    switch shape {
    case .circle:
      return "<circle cx=\"\(px(cx))\" cy=\"\(px(cy))\" r=\"\(px(s))\" fill=\"\(c)\"/>"
    case .square:
      return
        "<rect x=\"\(px(cx - s))\" y=\"\(px(cy - s))\" width=\"\(px(2 * s))\" height=\"\(px(2 * s))\" fill=\"\(c)\"/>"
    case .diamond:
      let r = s * 1.35
      return
        "<path d=\"M\(px(cx)) \(px(cy - r)) L\(px(cx + r)) \(px(cy)) L\(px(cx)) \(px(cy + r)) L\(px(cx - r)) \(px(cy)) Z\" fill=\"\(c)\" stroke=\"#ffffff\" stroke-width=\"1\"/>"
    case .triangle:
      let r = s * 1.3
      return
        "<path d=\"M\(px(cx)) \(px(cy - r)) L\(px(cx + r)) \(px(cy + r * 0.8)) L\(px(cx - r)) \(px(cy + r * 0.8)) Z\" fill=\"\(c)\"/>"
    case .cross:
      return
        "<path d=\"M\(px(cx - s)) \(px(cy - s)) L\(px(cx + s)) \(px(cy + s)) M\(px(cx - s)) \(px(cy + s)) L\(px(cx + s)) \(px(cy - s))\" stroke=\"\(c)\" stroke-width=\"1.5\" fill=\"none\"/>"
    }
  }

  func drawLegend(
    _ position: LegendPosition, x: ResolvedAxis, y: ResolvedAxis, into out: inout SVGText
  ) {
    let entries = chart.series.filter { !$0.name.isEmpty }
    guard !entries.isEmpty else { return }
    let rowHeight: Double = 16
    let longest = entries.map(\.name.count).max() ?? 0
    let boxWidth = 40 + 6.6 * Double(longest)
    let boxHeight = rowHeight * Double(entries.count) + 8
    func corner(_ position: LegendPosition) -> (Double, Double) {
      switch position {
      case .topLeft: (plotLeft + 8, plotTop + 8)
      case .bottomLeft: (plotLeft + 8, plotBottom - 8 - boxHeight)
      case .bottomRight: (plotRight - 8 - boxWidth, plotBottom - 8 - boxHeight)
      case .topRight, .automatic: (plotRight - 8 - boxWidth, plotTop + 8)
      }
    }
    var chosen = position
    if position == .automatic {
      // Count the points each candidate box would hide; the first corner with fewest wins.
      var pixels: [(Double, Double)] = []
      for series in chart.series {
        for p in series.points {
          if let px0 = x.pixel(p.x), let py0 = y.pixel(p.y) { pixels.append((px0, py0)) }
        }
      }
      for marker in chart.markers {
        if let px0 = x.pixel(marker.point.x), let py0 = y.pixel(marker.point.y) {
          pixels.append((px0, py0))
        }
      }
      var best = Int.max
      for candidate in [LegendPosition.topRight, .topLeft, .bottomRight, .bottomLeft] {
        let (l, t) = corner(candidate)
        let hidden = pixels.filter {
          $0.0 >= l - 4 && $0.0 <= l + boxWidth + 4 && $0.1 >= t - 4 && $0.1 <= t + boxHeight + 4
        }.count
        if hidden < best {
          best = hidden
          chosen = candidate
        }
      }
    }
    let (left, top) = corner(chosen)
    out.line(
      "<rect x=\"\(px(left))\" y=\"\(px(top))\" width=\"\(px(boxWidth))\" height=\"\(px(boxHeight))\" fill=\"#ffffff\" fill-opacity=\"0.85\" stroke=\"#999999\" stroke-width=\"0.5\"/>"
    )
    for (i, entry) in entries.enumerated() {
      let cy = top + 4 + rowHeight * (Double(i) + 0.5)
      if let stroke = entry.stroke {
        out.line(
          "<path d=\"M\(px(left + 6)) \(px(cy)) L\(px(left + 30)) \(px(cy))\" \(strokeAttributes(stroke))/>"
        )
      }
      if let shape = entry.marker {
        out.line(markerElement(shape, cx: left + 18, cy: cy, size: 3, color: entry.markerColor))
      }
      out.line(
        "<text x=\"\(px(left + 36))\" y=\"\(px(cy + 4))\">\(escapeXML(entry.name))</text>")
    }
  }
}
