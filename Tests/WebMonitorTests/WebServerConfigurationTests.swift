import Testing
import WebMonitor

@Suite struct WebServerConfigurationTests {
  @Test func parsesTheFormsOfWeb() throws {
    let cases: [(String, String, UInt16, Bool)] = [
      ("8080", "127.0.0.1", 8080, true),
      ("0.0.0.0:8080", "0.0.0.0", 8080, false),
      ("[::1]:8080", "::1", 8080, true),
      ("[::]:9000", "::", 9000, false),
      ("localhost:9000", "localhost", 9000, true),
      ("192.168.1.5:80", "192.168.1.5", 80, false),
      ("127.0.0.2:1", "127.0.0.2", 1, true),
      ("0", "127.0.0.1", 0, true),
    ]
    for (spec, host, port, loopback) in cases {
      let configuration = try WebServerConfiguration.parse(spec)
      #expect(configuration.host == host, "\(spec)")
      #expect(configuration.port == port, "\(spec)")
      #expect(configuration.isLoopback == loopback, "\(spec)")
      #expect(configuration.commandsEnabled == false)
    }
  }

  @Test func defaultsAreLoopbackAndBounded() {
    let configuration = WebServerConfiguration()
    #expect(configuration.host == "127.0.0.1")
    #expect(configuration.port == 8080)
    #expect(configuration.isLoopback)
    #expect(configuration.maximumClients == 16)
    #expect(configuration.maximumRequestBytes == 8192)
    #expect(configuration.maximumEventRateHz == 30)
    #expect(configuration.hostAndPort == "127.0.0.1:8080")
    #expect(WebServerConfiguration(host: "::1", port: 1).hostAndPort == "[::1]:1")
  }

  @Test func refusesWithTheFix() {
    let cases: [(String, WebAddressError.Problem, String)] = [
      ("", .empty, "give a port"),
      ("80 80", .badCharacters, "no spaces"),
      ("[::1:8080", .unclosedBracket, "closing bracket"),
      ("::1:8080", .unbracketedIPv6, "[::1]:8080"),
      ("127.0.0.1", .missingPort, "give the port"),
      ("[::1]", .missingPort, "give the port"),
      ("example.com:80", .notAnAddress("example.com"), "not a numeric"),
      ("[1.2.3.4]:80", .notAnAddress("1.2.3.4"), "not a numeric"),
      ("300.1.1.1:80", .notAnAddress("300.1.1.1"), "not a numeric"),
      (":8080", .notAnAddress(""), "not a numeric"),
      ("127.0.0.1:", .badPort(""), "not a port"),
      ("127.0.0.1:65536", .badPort("65536"), "not a port"),
      ("http", .badPort("http"), "not a port"),
      ("8080x", .badPort("8080x"), "not a port"),
      ("127.0.0.1:-1", .badPort("-1"), "not a port"),
    ]
    for (spec, problem, fix) in cases {
      #expect(throws: WebAddressError(spec: spec, problem: problem), "\(spec)") {
        _ = try WebServerConfiguration.parse(spec)
      }
      let message = WebAddressError(spec: spec, problem: problem).description
      #expect(message.contains(fix), "\(message)")
      #expect(message.hasPrefix("--web \(spec):"))
    }
  }
}
