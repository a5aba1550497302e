import Monitoring
import Telemetry
import Testing
import WebMonitor

/// The page as a document: what it contains and refers to. How it behaves in a browser is
/// `tools/scripts/check_web.py`'s (headless Chromium against the real `plumb-monitor --web`).
@Suite struct MonitorPageTests {
  let page = MonitorPage.html

  /// The page must work offline: nothing it loads may come from another host.
  @Test func pageLoadsNothingFromOutside() {
    #expect(page.hasPrefix("<!doctype html>"))
    for outside in ["http://", "https://", "//cdn", "@import", "url(", " src=", "<iframe", "<img"] {
      #expect(!page.contains(outside), "the page refers to \(outside)")
    }
    // The only link is the icon, inline (without it the browser asks for /favicon.ico, a 404
    // and a console error).
    #expect(occurrences(of: "href=", in: page) == 1)
    #expect(page.contains(#"<link rel="icon" href="data:,">"#))
    // It talks to its own server only, on the paths the server answers.
    #expect(occurrences(of: "new EventSource(", in: page) == 1)
    #expect(page.contains("new EventSource('/events')"))
    #expect(occurrences(of: "fetch(", in: page) == 1)
    #expect(page.contains("fetch('/command'"))
    #expect(page.contains("'X-Plumb-Command': '1'"))
  }

  /// One document: its style and script inline, once each, and declared UTF-8 (it has °, σ, —).
  @Test func oneSelfContainedDocument() {
    #expect(page.hasSuffix("</html>"))
    #expect(page.contains(#"<meta charset="utf-8">"#))
    for tag in ["<style>", "</style>", "<script>", "</script>", "<body", "</body>"] {
      #expect(occurrences(of: tag, in: page) == 1, "\(tag)")
    }
    #expect(page.utf8.count < 64 * 1024, "the page is sent whole with every GET /")
  }

  /// The element ids the browser test and the contract (Sources/WebMonitor/README.md) name.
  @Test func hasTheContractsElements() {
    let ids = [
      "seq", "roll", "pitch", "yaw", "temperature", "bias-x", "bias-y", "bias-z", "rate", "lost",
      "crc", "p99", "state", "box", "plot", "cmd-tare", "cmd-status", "cmd-format", "cmd-rate",
      "replies",
    ]
    for id in ids {
      #expect(occurrences(of: #"id="\#(id)""#, in: page) == 1, "#\(id)")
    }
    #expect(page.contains(#"<canvas id="box""#))
    #expect(page.contains(#"<canvas id="plot""#))
    #expect(page.contains("window.plumbPage = page"))
    for key in ["lastFrame", "framesReceived", "state", "boxQuaternion", "historyLength"] {
      #expect(page.contains("\(key): "), "window.plumbPage.\(key)")
    }
  }

  /// A light for every flag the monitor names (FORMATS.md §1), spelled as the event stream
  /// spells them.
  @Test func hasALightForEveryFlag() {
    let names = MonitorPrinter.flagNames(TelemetryFlags(rawValue: 0x07FF))
    #expect(names.count == 11)
    for name in names {
      #expect(occurrences(of: "['\(name)',", in: page) == 1, "the light for \(name)")
    }
  }

  /// Every element the script looks up exists: a misspelt id would only show in a browser.
  @Test func scriptLooksUpOnlyElementsThatExist() {
    let lookups = page.split(separator: "$('").dropFirst()
    #expect(lookups.count > 40)
    for lookup in lookups {
      guard let end = lookup.firstIndex(of: "'") else {
        Issue.record("an unterminated $(' in the script")
        continue
      }
      let id = String(lookup[..<end])
      // `$('bias-' + axis)` looks up bias-x, -y and -z (hasTheContractsElements)
      #expect(id == "bias-" || occurrences(of: #"id="\#(id)""#, in: page) == 1, "$('\(id)')")
    }
  }

  private func occurrences(of needle: String, in text: String) -> Int {
    text.ranges(of: needle).count
  }
}
