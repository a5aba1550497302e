import Geometry
import JSON
import Monitoring
import Telemetry
import Testing
import WebMonitor

@Suite struct WebEventsTests {
  private func parsed(_ value: JSONValue) throws -> JSONValue {
    let text = value.compact()
    #expect(!text.contains("\n"))
    return try JSONDocument(parsing: text).root
  }

  @Test func frameCarriesTheContractsFields() throws {
    let frame = testFrame(1234)
    let json = try parsed(WebEvents.frame(frame, received: 5678))
    #expect(json["seq"] == .integer(1234))
    #expect(json["t"] == .number(12.34))
    #expect(json["format"] == .string("binary"))
    #expect(json["flags"] == .array([.string("rest"), .string("headingUncertain")]))
    #expect(json["flagBits"] == .integer(1025))
    #expect(json["temperature"] == .number(31.25))
    #expect(json["latencyMs"] == .number(0.41))
    #expect(json["missed"] == .integer(0))
    #expect(json["calibrationId"] == .integer(0))
    #expect(json["received"] == .integer(5678))
    let roll = frame.angles.rollRadians * degreesPerRadian
    #expect(json["roll"] == .number(roll))
    #expect(json["yaw"] == .number(frame.angles.yawRadians * degreesPerRadian))
    #expect(
      json["q"]
        == .array([
          .number(frame.attitude.w), .number(frame.attitude.x), .number(frame.attitude.y),
          .number(frame.attitude.z),
        ]))
    #expect(
      json["biasDps"]
        == .array([
          .number(0.001 * degreesPerRadian), .number(-0.002 * degreesPerRadian), .integer(0),
        ]))
    #expect(json["linearAcceleration"] == .array([.integer(0), .number(0.1), .integer(0)]))
    #expect(json["sigma"] == .null, "kind-1 binary carries no σ")
  }

  @Test func binaryIMUFramesCarryTheirSigmas() throws {
    var frame = testFrame(5, format: .binaryIMU)
    frame.uncertainty = EstimateUncertainty(
      tiltRadians: 0.01, headingRadians: 0.1,
      gyroBiasRadiansPerSecond: Vector3(0.001, 0.002, .nan))
    let json = try parsed(WebEvents.frame(frame, received: 1))
    #expect(json["sigma"]?["tiltDeg"] == .number(0.01 * degreesPerRadian))
    #expect(json["sigma"]?["headingDeg"] == .number(0.1 * degreesPerRadian))
    #expect(
      json["sigma"]?["biasDps"]
        == .array([.number(0.001 * degreesPerRadian), .number(0.002 * degreesPerRadian), .null]))
  }

  @Test func mavlinkFramesHaveNullsNotZeros() throws {
    let json = try parsed(WebEvents.frame(testFrame(7, format: .mavlink), received: 1))
    for key in [
      "flags", "flagBits", "temperature", "biasDps", "latencyMs", "missed", "linearAcceleration",
      "calibrationId", "sigma",
    ] {
      #expect(json[key] == .null, "\(key)")
    }
    #expect(json["format"] == .string("mavlink"))
  }

  @Test func nonFiniteNumbersAreNull() throws {
    var frame = testFrame(1)
    frame.temperatureCelsius = .nan
    frame.attitude = Quaternion(w: .infinity, x: 0, y: 0, z: 0)
    let json = try parsed(WebEvents.frame(frame, received: 1))
    #expect(json["temperature"] == .null)
    #expect(json["q"] == .array([.null, .integer(0), .integer(0), .integer(0)]))
  }

  @Test func statsWithoutStatisticsAreNull() throws {
    var server = WebServerStatistics()
    server.clients = 2
    server.framesCoalesced = 9
    let json = try parsed(WebEvents.stats(nil, frames: 3, format: .text, server: server))
    #expect(json["format"] == .string("text"))
    #expect(json["frames"] == .integer(3))
    #expect(json["lost"] == .null)
    #expect(json["rateHz"] == .null)
    #expect(json["server"]?["clients"] == .integer(2))
    #expect(json["server"]?["framesCoalesced"] == .integer(9))
    var statistics = MonitorStatistics()
    statistics.link.crcErrors = 4
    statistics.format = .binary
    let full = try parsed(
      WebEvents.stats(WebLinkSummary(statistics), frames: 3, format: nil, server: server))
    #expect(full["crcErrors"] == .integer(4))
    #expect(full["format"] == .string("binary"))
    #expect(full["latencyP99Ms"] == .null)
  }

  @Test func repliesAndNotices() throws {
    let reply = try parsed(WebEvents.reply(HostReply(.ok, "OK tare")))
    #expect(reply == .object([("status", .string("OK")), ("text", .string("OK tare"))]))
    let notice = try parsed(WebEvents.notice(.waitingForDevice(input: "/dev/ttyUSB0")))
    #expect(notice["kind"] == .string("waitingForDevice"))
    #expect(WebEvents.event("x", .null) == "event: x\ndata: null\n\n")
  }
}
