import Foundation
import HIL
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The elements of an XML document, as (name, attributes) in document order, plus its text:
/// what a CI test reporter (GitLab, Jenkins, GitHub's JUnit actions) reads from a JUnit file.
/// `nil` when the document is not well-formed XML.
final class XMLElements: NSObject, XMLParserDelegate {
  var elements: [(name: String, attributes: [String: String])] = []
  var text = ""

  static func parse(_ data: Data) -> XMLElements? {
    let collector = XMLElements()
    let parser = XMLParser(data: data)
    parser.delegate = collector
    return parser.parse() ? collector : nil
  }

  func parser(
    _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
  ) {
    elements.append((elementName, attributeDict))
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

  func all(_ name: String) -> [[String: String]] {
    elements.filter { $0.name == name }.map(\.attributes)
  }
}

/// `plumb-hil run --junit FILE`: a CI job's test reporter shows each check of a HIL run — the
/// reconciliation of every sample, each `--limit` — as a test case that passed or failed, with
/// the figure and the limit in the failure's message.
@Suite struct JUnitReportTests {
  @Test func eachCheckOfARunIsATestCase() throws {
    let directory = try temporaryDirectory()
    let path = directory + "/hil.xml"
    let run = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--faults", "nack-burst", "--junit", path,
      "--limit", "incl_rms_deg=45", "--limit", "incl_max_deg=0.000001",
    ])
    #expect(run.status == 1, "\(run.standardError)")
    let data = try #require(FileManager.default.contents(atPath: path))
    let xml = try #require(
      XMLElements.parse(data), "not well-formed:\n\(String(decoding: data, as: UTF8.self))")
    let suites = xml.all("testsuite")
    #expect(suites.count == 1)
    #expect(suites.first?["tests"] == "3")
    #expect(suites.first?["failures"] == "1")
    #expect(suites.first?["errors"] == "0")
    #expect(
      suites.first?["name"]
        == "plumb-hil run tilt --faults nack-burst --unit typical --seed 1 --seconds 4")
    #expect(xml.all("testsuites").first?["failures"] == "1")
    let cases = xml.all("testcase")
    #expect(cases.map { $0["name"] ?? "" }.contains { $0.contains("no sample lost silently") })
    #expect(cases.allSatisfy { $0["classname"] == "plumb-hil.tilt.nack-burst.typical.seed-1" })
    let failures = xml.all("failure")
    #expect(failures.count == 1)
    #expect(failures.first?["message"]?.contains("incl_max_deg ≤ 0.000001") == true)
    #expect(failures.first?["message"]?.contains("exceeded") == true)
    // The run's settings and figures travel as properties; the summary line as output.
    let properties = Dictionary(
      xml.all("property").map { ($0["name"] ?? "", $0["value"] ?? "") },
      uniquingKeysWith: { a, _ in a })
    #expect(properties["scenario"] == "tilt")
    #expect(properties["faults"] == "nack-burst")
    #expect(properties["seed"] == "1")
    #expect(properties["silent_losses"] == "0")
    #expect(properties["incl_rms_deg"].flatMap(Double.init) != nil)
    #expect(xml.text.contains("hil: scenario=tilt faults=nack-burst"))
    // Deterministic: the same run writes the same bytes (no wall-clock time, no host name).
    let again = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--faults", "nack-burst", "--junit", path,
      "--limit", "incl_rms_deg=45", "--limit", "incl_max_deg=0.000001",
    ])
    #expect(again.status == 1)
    #expect(FileManager.default.contents(atPath: path) == data)
  }

  /// A run whose firmware does not start still leaves a report that says so: the CI job shows
  /// an error, not a missing file.
  @Test func aRunThatCannotStartIsAnError() throws {
    let directory = try temporaryDirectory()
    let path = directory + "/hil.xml"
    let run = try runPlumbHIL([
      "run", "rest", "--seconds", "4", "--faults", "bus-lockup", "--fault-start", "0",
      "--junit", path,
    ])
    #expect(run.status == 70, "\(run.standardError)")
    let data = try #require(FileManager.default.contents(atPath: path))
    let xml = try #require(XMLElements.parse(data))
    #expect(xml.all("testsuite").first?["errors"] == "1")
    let error = try #require(xml.all("error").first)
    #expect(error["message"]?.contains("did not start") == true, "\(error)")
    #expect(error["message"]?.contains("busy") == true, "\(error)")
  }

  /// `plumb-hil soak --junit`: each of the soak's checks is a test case.
  @Test func eachCheckOfASoakIsATestCase() throws {
    let directory = try temporaryDirectory()
    let path = directory + "/soak.xml"
    let run = try runPlumbHIL(["soak", "--hours", "0.02", "--seed", "3", "--junit", path])
    #expect(run.status == 0, "\(run.standardError)")
    let data = try #require(FileManager.default.contents(atPath: path))
    let xml = try #require(XMLElements.parse(data))
    let suite = try #require(xml.all("testsuite").first)
    #expect(suite["name"] == "plumb-hil soak --hours 0.02 --seed 3")
    #expect(suite["failures"] == "0" && suite["errors"] == "0")
    let names = xml.all("testcase").map { $0["name"] ?? "" }
    #expect(names.count >= 6, "\(names)")
    #expect(names.contains("no sample lost silently"))
    #expect(names.contains("every sample reconciled"))
    #expect(xml.all("testcase").allSatisfy { $0["classname"] == "plumb-hil.soak.seed-3" })
    let properties = Dictionary(
      xml.all("property").map { ($0["name"] ?? "", $0["value"] ?? "") },
      uniquingKeysWith: { a, _ in a })
    #expect(properties["faults"] == "soak" && properties["silent_losses"] == "0")
  }

  /// Text from anywhere — a calibration label, a message — is escaped: the file stays XML.
  @Test func textIsEscaped() throws {
    let xml = HILJUnitReport(
      suiteName: #"a <suite> & "quotes" 'too'"#, classname: "plumb-hil.x",
      properties: [("label", "<&>\"'\u{7}")],
      checks: [
        HILCheck(name: "one & two", outcome: .failed(#"value "3" > 2 <bad>"#)),
        HILCheck(name: "fine", outcome: .passed),
      ],
      output: "a < b && c > d\n"
    ).xml
    let parsed = try #require(XMLElements.parse(Data(xml.utf8)), "\(xml)")
    #expect(parsed.all("testsuite").first?["name"] == #"a <suite> & "quotes" 'too'"#)
    #expect(parsed.all("property").first?["value"] == "<&>\"'\u{FFFD}")
    #expect(parsed.all("failure").first?["message"] == #"value "3" > 2 <bad>"#)
    #expect(parsed.text.contains("a < b && c > d"))
  }
}
