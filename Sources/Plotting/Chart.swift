#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A line chart described as a value: axes, data series, guide lines and marked points.
/// `Figure` stacks charts and renders them as one SVG document.
///
/// The model is deliberately small and general: the calibration tools draw log-log Allan
/// deviation curves with slope guides and read-off points, and bias-versus-temperature fits;
/// the hardware-in-the-loop reports draw attitude error, bias and latency against time. None of
/// it depends on a renderer, so tests can inspect a chart before it is drawn.
public struct Chart: Sendable {
  public var title: String
  public var xAxis: Axis
  public var yAxis: Axis
  public var series: [Series]
  public var guides: [GuideLine]
  public var markers: [MarkedPoint]
  /// Where the legend goes; `nil` for no legend. Only series with a non-empty name appear.
  public var legend: LegendPosition?

  public init(
    title: String, xAxis: Axis, yAxis: Axis, series: [Series] = [], guides: [GuideLine] = [],
    markers: [MarkedPoint] = [], legend: LegendPosition? = .automatic
  ) {
    self.title = title
    self.xAxis = xAxis
    self.yAxis = yAxis
    self.series = series
    self.guides = guides
    self.markers = markers
    self.legend = legend
  }

  /// The chart alone as an SVG document.
  public func svg(width: Double = 720, height: Double = 440) -> String {
    Figure(charts: [self], chartWidth: width, chartHeight: height).svg()
  }
}

/// How data values map to positions along an axis.
public enum AxisScale: Sendable, Hashable {
  case linear
  /// Base-10 logarithmic. Values ≤ 0 cannot be placed: lines break there, markers are left out.
  case logarithmic
}

/// One axis: its label (with the unit, e.g. `"τ (s)"`), its scale and, optionally, a fixed range.
public struct Axis: Sendable {
  public var label: String
  public var scale: AxisScale
  /// A fixed range in data units; `nil` fits the data, rounded outwards to whole decades (log)
  /// or to tick steps (linear).
  public var range: ClosedRange<Double>?

  public init(_ label: String, scale: AxisScale = .linear, range: ClosedRange<Double>? = nil) {
    self.label = label
    self.scale = scale
    self.range = range
  }
}

/// An SVG colour, written as given (`"#1f77b4"`, `"black"`).
public struct Color: Sendable, Hashable {
  public var svg: String

  public init(_ svg: String) { self.svg = svg }

  public static let blue = Color("#1f77b4")
  public static let red = Color("#d62728")
  public static let green = Color("#2ca02c")
  public static let orange = Color("#ff7f0e")
  public static let purple = Color("#9467bd")
  public static let brown = Color("#8c564b")
  public static let gray = Color("#7f7f7f")
  public static let black = Color("#000000")

  /// A palette for series that need distinct colours, in order.
  public static let palette: [Color] = [.blue, .red, .green, .orange, .purple, .brown, .gray]
}

/// How a line is drawn.
public struct Stroke: Sendable, Hashable {
  public var color: Color
  /// Width in SVG pixels.
  public var width: Double
  /// Dash and gap lengths in pixels; empty for a solid line.
  public var dash: [Double]

  public init(_ color: Color, width: Double = 1.5, dash: [Double] = []) {
    self.color = color
    self.width = width
    self.dash = dash
  }

  /// A thin dashed line, for guides.
  public static func dashed(_ color: Color) -> Stroke { Stroke(color, width: 1, dash: [6, 4]) }
}

/// The shape drawn at a data point.
public enum MarkerShape: Sendable, Hashable {
  case circle
  case square
  case diamond
  case triangle
  case cross
}

/// A data series: a polyline through `points` (in order), markers at the points, or both.
public struct Series: Sendable {
  /// The name in the legend; empty to leave it out.
  public var name: String
  public var points: [PlotPoint]
  /// The line; `nil` draws markers only.
  public var stroke: Stroke?
  /// The marker at each point; `nil` draws the line only.
  public var marker: MarkerShape?
  /// Marker colour (defaults to the line's).
  public var markerColor: Color

  public init(
    _ name: String, points: [PlotPoint], stroke: Stroke?, marker: MarkerShape? = nil,
    markerColor: Color? = nil
  ) {
    self.name = name
    self.points = points
    self.stroke = stroke
    self.marker = marker
    self.markerColor = markerColor ?? stroke?.color ?? .black
  }

  /// A series from parallel arrays of x and y values (the shorter length wins).
  public init(
    _ name: String, x: [Double], y: [Double], stroke: Stroke?, marker: MarkerShape? = nil,
    markerColor: Color? = nil
  ) {
    self.init(
      name, points: zip(x, y).map { PlotPoint(x: $0, y: $1) }, stroke: stroke, marker: marker,
      markerColor: markerColor)
  }
}

/// A point in data units.
public struct PlotPoint: Sendable, Hashable {
  public var x: Double
  public var y: Double

  public init(x: Double, y: Double) {
    self.x = x
    self.y = y
  }
}

/// A reference line across the whole plot area, drawn under the data and clipped to the area.
public struct GuideLine: Sendable {
  public enum Shape: Sendable, Hashable {
    /// y = constant.
    case horizontal(Double)
    /// x = constant.
    case vertical(Double)
    /// y = intercept + slope · x.
    case linear(slope: Double, intercept: Double)
    /// y = coefficient · x^exponent: a straight line of slope `exponent` on log-log axes (the
    /// −½ and +½ guides of an Allan deviation plot).
    case powerLaw(coefficient: Double, exponent: Double)
  }

  public var shape: Shape
  /// Text written beside the line (empty for none).
  public var label: String
  public var stroke: Stroke

  public init(_ shape: Shape, label: String = "", stroke: Stroke = .dashed(.gray)) {
    self.shape = shape
    self.label = label
    self.stroke = stroke
  }

  /// y at `x`, or `nil` for a vertical line.
  public func y(at x: Double) -> Double? {
    switch shape {
    case .horizontal(let y): y
    case .vertical: nil
    case .linear(let slope, let intercept): intercept + slope * x
    case .powerLaw(let coefficient, let exponent): coefficient * pow(x, exponent)
    }
  }
}

/// A single point called out with a marker and a label (a read-off, an event).
public struct MarkedPoint: Sendable {
  public var point: PlotPoint
  public var label: String
  public var color: Color
  public var shape: MarkerShape

  public init(
    x: Double, y: Double, label: String, color: Color = .black, shape: MarkerShape = .diamond
  ) {
    self.point = PlotPoint(x: x, y: y)
    self.label = label
    self.color = color
    self.shape = shape
  }
}

/// The corner of the plot area that holds the legend.
public enum LegendPosition: Sendable, Hashable {
  case topLeft
  case topRight
  case bottomLeft
  case bottomRight
  /// The corner whose legend box covers the fewest data points and marked points.
  case automatic
}
