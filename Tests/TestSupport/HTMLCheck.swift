/// A small checker for the HTML reports the tools write (`HTMLReport`): enough of a parser to
/// say that the elements nest and close, that the page fetches nothing from outside, and what
/// text it shows.
public enum HTMLCheck {
  /// Elements HTML never closes.
  static let voidElements: Set<String> = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
  ]

  /// What is wrong with the page's structure (empty when nothing is): a doctype first, one
  /// html, head, body and main, every element closed in order (SVG's self-closing ones
  /// included), no script, no external reference (any `http://` or `https://` other than the
  /// SVG namespace, no `src=`, no `url(` other than an SVG clip path `url(#…)`).
  public static func problems(_ html: String) -> [String] {
    var problems: [String] = []
    if !html.hasPrefix("<!DOCTYPE html>\n") { problems.append("no doctype first") }
    var stack: [String] = []
    var counts: [String: Int] = [:]
    let bytes = Array(html.utf8)
    var index = 0
    while index < bytes.count {
      guard bytes[index] == UInt8(ascii: "<") else {
        index += 1
        continue
      }
      guard let end = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else {
        problems.append("a tag never ends")
        break
      }
      let tag = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
      index = end + 1
      if tag.hasPrefix("!") { continue }
      let closing = tag.hasPrefix("/")
      let name = String(
        (closing ? tag.dropFirst() : Substring(tag)).prefix { $0.isLetter || $0.isNumber }
      ).lowercased()
      guard !name.isEmpty else {
        problems.append("'<\(tag)>' is not a tag (an unescaped '<'?)")
        continue
      }
      if closing {
        guard stack.last == name else {
          problems.append("</\(name)> closes \(stack.last.map { "<\($0)>" } ?? "nothing")")
          continue
        }
        stack.removeLast()
      } else {
        counts[name, default: 0] += 1
        if !tag.hasSuffix("/") && !voidElements.contains(name) { stack.append(name) }
        if name == "style" {
          // Its text is CSS, not markup: skip to its end tag.
          let rest = String(decoding: bytes[index...], as: UTF8.self)
          guard let close = rest.firstRange(of: "</style>") else {
            problems.append("<style> never closes")
            break
          }
          index += rest.utf8.distance(from: rest.startIndex, to: close.lowerBound)
        }
      }
    }
    if !stack.isEmpty { problems.append("unclosed: \(stack.map { "<\($0)>" }.joined())") }
    for name in ["html", "head", "body", "main", "title"] where counts[name] != 1 {
      problems.append("\(counts[name] ?? 0) <\(name)> elements, not one")
    }
    if counts["script"] != nil { problems.append("a <script>") }
    let outside = html.replacing("xmlns=\"http://www.w3.org/2000/svg\"", with: "")
    for reference in ["http://", "https://", "src=", "@import", "@font-face"]
    where outside.contains(reference) {
      problems.append("an external reference (\(reference))")
    }
    if outside.replacing("url(#", with: "").contains("url(") {
      problems.append("a url() that is not an in-page reference")
    }
    return problems
  }

  /// The text of the cells (`<td>`) of the page, in order.
  public static func cells(_ html: String) -> [String] {
    html.split(separator: "<td", omittingEmptySubsequences: false).dropFirst().compactMap { part in
      guard let open = part.firstIndex(of: ">"), let close = part.firstRange(of: "</td>") else {
        return nil
      }
      return String(part[part.index(after: open)..<close.lowerBound])
    }
  }
}
