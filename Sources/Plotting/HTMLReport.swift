import ByteFormats

/// A report as one self-contained HTML5 page: a title, a header of facts (the tool, its
/// version, the input and when its data were taken), then sections of key/value tables, check
/// verdicts, notes and figures, the figures' SVG written inline.
///
/// The page needs nothing from outside: the style is inline, there are no scripts, fonts or
/// links, so it reads on a bench with no network, on a phone (viewport meta, tables that
/// scroll sideways, plots that shrink to the screen) and on paper (a print stylesheet). Every
/// string from data (file names, labels, messages) is escaped, so a hostile name shows as text.
///
/// **Deterministic**: no clock is read; the same report gives the same bytes. A date appears
/// only when the data carry one (the header's facts).
public struct HTMLReport: Sendable {
  /// One line of the header or of a key/value table.
  public struct Fact: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  /// A table: a header row, then rows whose first cell names the row (the other cells are
  /// figures, right-aligned).
  public struct Table: Sendable, Hashable {
    public var caption: String
    public var columns: [String]
    public var rows: [[String]]

    public init(caption: String = "", columns: [String], rows: [[String]]) {
      self.caption = caption
      self.columns = columns
      self.rows = rows
    }

    /// A two-column table of names and values.
    public init(caption: String = "", facts: [Fact]) {
      self.init(caption: caption, columns: [], rows: facts.map { [$0.name, $0.value] })
    }
  }

  /// A pass/fail check with what it found.
  public struct Check: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
      case pass
      case fail
      /// The check could not be made (the run did not get there).
      case error
    }

    public var name: String
    public var verdict: Verdict
    public var detail: String

    public init(_ name: String, verdict: Verdict, detail: String = "") {
      self.name = name
      self.verdict = verdict
      self.detail = detail
    }
  }

  /// What a section holds, in order.
  public enum Block: Sendable {
    case paragraph(String)
    case table(Table)
    /// Checks with an overall verdict line above them.
    case checks([Check])
    /// Text kept as written (a summary line, a command's text report).
    case preformatted(String)
    /// A figure, its SVG inline; the caption under it.
    case figure(Figure, caption: String)
  }

  public struct Section: Sendable {
    public var title: String
    public var blocks: [Block]

    public init(_ title: String, _ blocks: [Block]) {
      self.title = title
      self.blocks = blocks
    }
  }

  public var title: String
  public var facts: [Fact]
  public var sections: [Section]

  public init(title: String, facts: [Fact], sections: [Section]) {
    self.title = title
    self.facts = facts
    self.sections = sections
  }

  /// The page (UTF-8 text, ending in a newline).
  public func html() -> String {
    var out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    out += "<title>\(escapeHTML(title))</title>\n<style>\n\(HTMLReport.style)</style>\n</head>\n"
    out += "<body>\n<header>\n<h1>\(escapeHTML(title))</h1>\n"
    if !facts.isEmpty {
      out += "<dl class=\"facts\">\n"
      for fact in facts {
        out += "<div><dt>\(escapeHTML(fact.name))</dt><dd>\(escapeHTML(fact.value))</dd></div>\n"
      }
      out += "</dl>\n"
    }
    out += "</header>\n<main>\n"
    var figureNumber = 0
    for (index, section) in sections.enumerated() {
      out += "<section id=\"section-\(index + 1)\">\n<h2>\(escapeHTML(section.title))</h2>\n"
      for block in section.blocks {
        switch block {
        case .paragraph(let text): out += "<p>\(escapeHTML(text))</p>\n"
        case .table(let table): out += HTMLReport.render(table)
        case .checks(let checks): out += HTMLReport.render(checks)
        case .preformatted(let text): out += "<pre>\(escapeHTML(text))</pre>\n"
        case .figure(let figure, let caption):
          figureNumber += 1
          out += "<figure>\n<div class=\"plot\">\n"
          out += figure.svg(idPrefix: "figure-\(figureNumber)-")
          out += "</div>\n"
          if !caption.isEmpty {
            out += "<figcaption>Figure \(figureNumber). \(escapeHTML(caption))</figcaption>\n"
          }
          out += "</figure>\n"
        }
      }
      out += "</section>\n"
    }
    out += "</main>\n</body>\n</html>\n"
    return out
  }

  static func render(_ table: Table) -> String {
    var out = "<div class=\"table\">\n<table>\n"
    if !table.caption.isEmpty { out += "<caption>\(escapeHTML(table.caption))</caption>\n" }
    if !table.columns.isEmpty {
      out += "<thead><tr>"
      for column in table.columns { out += "<th scope=\"col\">\(escapeHTML(column))</th>" }
      out += "</tr></thead>\n"
    }
    out += "<tbody>\n"
    for row in table.rows {
      out += "<tr>"
      for (index, value) in row.enumerated() {
        out +=
          index == 0
          ? "<th scope=\"row\">\(escapeHTML(value))</th>" : "<td>\(escapeHTML(value))</td>"
      }
      out += "</tr>\n"
    }
    out += "</tbody>\n</table>\n</div>\n"
    return out
  }

  static func render(_ checks: [Check]) -> String {
    let failed = checks.filter { $0.verdict == .fail }.count
    let errors = checks.filter { $0.verdict == .error }.count
    var summary: String
    if failed == 0 && errors == 0 {
      let passed = checks.count == 1 ? "the check passed" : "all \(checks.count) checks passed"
      summary = "<p class=\"verdict pass\">PASS: \(passed)</p>\n"
    } else {
      var parts: [String] = []
      if failed > 0 { parts.append("\(failed) failed") }
      if errors > 0 { parts.append("\(errors) could not be made") }
      summary =
        "<p class=\"verdict fail\">FAIL: \(parts.joined(separator: ", ")) of \(checks.count) checks</p>\n"
    }
    var out = summary + "<div class=\"table\">\n<table class=\"checks\">\n"
    out += "<thead><tr><th scope=\"col\">check</th><th scope=\"col\">verdict</th>"
    out += "<th scope=\"col\">found</th></tr></thead>\n<tbody>\n"
    for check in checks {
      let word = check.verdict == .pass ? "pass" : check.verdict == .fail ? "FAIL" : "ERROR"
      out +=
        "<tr class=\"\(check.verdict.rawValue)\"><th scope=\"row\">\(escapeHTML(check.name))</th>"
      out +=
        "<td class=\"verdict\">\(word)</td><td class=\"found\">\(escapeHTML(check.detail))</td></tr>\n"
    }
    out += "</tbody>\n</table>\n</div>\n"
    return out
  }

  /// The page's whole style: system fonts only, readable from a phone to A4.
  static let style = """
    :root { color-scheme: light; }
    body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a;
      background: #fff; max-width: 60rem; margin: 0 auto; padding: 0.75rem; }
    h1 { font-size: 1.5rem; margin: 0.5rem 0; overflow-wrap: anywhere; }
    h2 { font-size: 1.2rem; margin: 1.5rem 0 0.5rem; border-bottom: 1px solid #ccc; }
    .facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 1rem; margin: 0; }
    .facts div { display: contents; }
    .facts dt { color: #555; }
    .facts dd { margin: 0; overflow-wrap: anywhere; }
    .table { overflow-x: auto; margin: 0.5rem 0; }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
    caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
    th, td { border-bottom: 1px solid #e2e2e2; padding: 0.2rem 0.6rem; vertical-align: top; }
    thead th { border-bottom: 2px solid #999; text-align: right; }
    thead th:first-child, tbody th { text-align: left; font-weight: normal; }
    td { text-align: right; white-space: nowrap; }
    table.checks td.found { text-align: left; white-space: normal; }
    table.checks td.verdict { text-align: center; font-weight: 700; }
    tr.pass td.verdict, p.verdict.pass { color: #17692a; }
    tr.fail td.verdict, tr.error td.verdict, p.verdict.fail { color: #b00020; }
    p.verdict { font-weight: 700; font-size: 1.1rem; }
    pre { background: #f6f6f6; padding: 0.5rem; white-space: pre-wrap; overflow-wrap: anywhere;
      font-size: 0.8rem; }
    figure { margin: 1rem 0; }
    .plot svg { display: block; max-width: 100%; height: auto; }
    figcaption { color: #555; font-size: 0.9rem; }
    @media print {
      body { max-width: none; padding: 0; font-size: 10pt; }
      h2 { break-after: avoid; }
      figure, .table, p.verdict { break-inside: avoid; }
      pre { background: none; border: 1px solid #ccc; }
      .table { overflow: visible; }
      tr.pass td.verdict, tr.fail td.verdict, p.verdict { color: #000; }
    }

    """
}

/// Text made safe for HTML content and attribute values (`escapeXML`: the five markup
/// characters as entities, characters a document may not hold as U+FFFD).
public func escapeHTML(_ text: String) -> String { escapeXML(text) }
