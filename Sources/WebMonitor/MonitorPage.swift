/// The page `plumb-monitor --web` serves: one self-contained HTML document (its script and
/// style inline; no outside scripts, fonts or images), so it works on a bench with no internet.
public enum MonitorPage {
  /// The document, UTF-8.
  public static let html: String = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>Plumb</title></head>
    <body><p>Plumb monitor (placeholder page)</p></body></html>
    """#
}
