import Testing
import WebMonitor

@Suite struct MonitorPageTests {
  /// The page must work offline: nothing it loads may come from another host.
  @Test func pageLoadsNothingFromOutside() {
    let page = MonitorPage.html
    #expect(page.hasPrefix("<!doctype html>"))
    for outside in ["http://", "https://", "//cdn", "@import"] {
      #expect(!page.contains(outside), "the page refers to \(outside)")
    }
  }
}
