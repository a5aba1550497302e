import Glibc
import JSON
import Monitoring
import Telemetry
import Testing
import WebMonitor

/// The server over real loopback sockets (port 0: the kernel picks a free one). Every wait is
/// bounded by a generous deadline that only stops a hang; no assertion depends on timing but
/// the event-rate bound, whose margin holds on any machine (fewer events when it is slow).
@Suite struct WebServerTests {
  @Test func servesThePage() throws {
    let page = Array("<!doctype html><p>the page</p>".utf8)
    let (server, _, port) = try startedServer(page: page)
    defer { server.stop() }
    for path in ["/", "/index.html", "/?x=1"] {
      let client = WebTestClient.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(client.status == 200)
      let text = client.text
      #expect(text.contains("\r\nContent-Type: text/html; charset=utf-8\r\n"))
      #expect(text.contains("\r\nCache-Control: no-store\r\n"))
      #expect(text.contains("\r\nConnection: close\r\n"))
      #expect(text.contains("\r\nContent-Length: \(page.count)\r\n"))
      #expect(Array(client.received.suffix(page.count)) == page)
      #expect(client.sawEndOfFile)
    }
    let head = WebTestClient.exchange(port: port, "HEAD / HTTP/1.0\r\n\r\n")
    #expect(head.status == 200)
    #expect(head.text.hasSuffix("\r\n\r\n"))
    #expect(eventually { server.statistics.requests == 4 })
  }

  @Test func servesABigPageWhole() throws {
    let page = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
    let (server, _, port) = try startedServer(page: page)
    defer { server.stop() }
    let client = WebTestClient.exchange(port: port, "GET / HTTP/1.1\r\n\r\n")
    #expect(Array(client.received.suffix(page.count)) == page)
  }

  @Test func streamStartsWithRetryHelloStatsAndTheLatestFrame() throws {
    let (server, hub, port) = try startedServer()
    defer { server.stop() }
    hub.publish(.frame(testFrame(41)))
    hub.publish(.frame(testFrame(42)))
    let client = WebTestClient(port: port)
    client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(client.read { events("frame", in: $0).count >= 1 })
    let text = client.text
    #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(text.contains("\r\nContent-Type: text/event-stream\r\n"))
    let body = try #require(text.split(separator: "\r\n\r\n", maxSplits: 1).last)
    #expect(body.hasPrefix("retry: 1000\n\nevent: hello\ndata: "))
    let hello = try JSONDocument(parsing: try #require(events("hello", in: text).first)).root
    #expect(hello["tool"] == .string("plumb-monitor"))
    #expect(hello["input"] == .string("/dev/ttyTEST"))
    #expect(hello["commands"] == .bool(false))
    #expect(hello["maxRateHz"] == .integer(30))
    let stats = try JSONDocument(parsing: try #require(events("stats", in: text).first)).root
    #expect(stats["frames"] == .integer(2))
    let frame = try JSONDocument(parsing: try #require(events("frame", in: text).first)).root
    #expect(frame["seq"] == .integer(42))
    #expect(frame["received"] == .integer(2))
  }

  /// Published at about 1 kHz for at least half a second, frames reach the page at no more than
  /// 30 a second, the last one published among them.
  @Test func framesAreCoalescedToTheRate() throws {
    let (server, hub, port) = try startedServer()
    defer { server.stop() }
    let client = WebTestClient(port: port)
    let start = now()
    client.send("GET /events HTTP/1.1\r\n\r\n")
    #expect(client.read { events("hello", in: $0).count == 1 })
    var sequence: UInt32 = 0
    while now() - start < 0.6 {
      sequence += 1
      hub.publish(.frame(testFrame(sequence)))
      usleep(1000)
    }
    let last = sequence
    #expect(
      client.read { text in events("frame", in: text).last?.contains("\"seq\": \(last),") ?? false }
    )
    let elapsed = now() - start
    let frames = events("frame", in: client.text)
    #expect(frames.count >= 1)
    #expect(Double(frames.count) <= 30 * elapsed + 2, "\(frames.count) frames in \(elapsed) s")
    #expect(eventually { server.statistics.framesCoalesced > 0 })
    // Stats arrive twice a second: at least the first one.
    #expect(events("stats", in: client.text).count >= 1)
  }

  @Test func repliesAndNoticesReachEveryClient() throws {
    let (server, hub, port) = try startedServer()
    defer { server.stop() }
    let clients = [WebTestClient(port: port), WebTestClient(port: port)]
    for client in clients {
      client.send("GET /events HTTP/1.1\r\n\r\n")
      #expect(client.read { events("hello", in: $0).count == 1 })
    }
    hub.publish(.reply(HostReply(.ok, "OK tare")))
    hub.publish(.notice(.reopened(input: "/dev/ttyTEST")))
    for client in clients {
      #expect(client.read { events("notice", in: $0).count == 1 })
      #expect(events("reply", in: client.text) == [#"{"status": "OK", "text": "OK tare"}"#])
      let notice = try JSONDocument(parsing: events("notice", in: client.text)[0]).root
      #expect(notice["kind"] == .string("reopened"))
    }
    // A client that joins later does not get them again.
    let late = WebTestClient(port: port)
    late.send("GET /events HTTP/1.1\r\n\r\n")
    #expect(late.read { events("stats", in: $0).count >= 2 })
    #expect(events("reply", in: late.text).isEmpty)
  }

  @Test func answersAndCountsWrongRequests() throws {
    let (server, _, port) = try startedServer()
    defer { server.stop() }
    #expect(WebTestClient.exchange(port: port, "GET /nope HTTP/1.1\r\n\r\n").status == 404)
    #expect(WebTestClient.exchange(port: port, "GET /../etc/passwd HTTP/1.1\r\n\r\n").status == 404)
    let delete = WebTestClient.exchange(port: port, "DELETE / HTTP/1.1\r\n\r\n")
    #expect(delete.status == 405)
    #expect(delete.text.contains("\r\nAllow: GET, HEAD\r\n"))
    #expect(WebTestClient.exchange(port: port, "POST /events HTTP/1.1\r\n\r\n").status == 405)
    #expect(WebTestClient.exchange(port: port, "GET /command HTTP/1.1\r\n\r\n").status == 405)
    #expect(WebTestClient.exchange(port: port, "GARBAGE\r\n\r\n").status == 400)
    #expect(WebTestClient.exchange(port: port, "GET / HTTP/1.1\n\n").status == 400)
    let chunked = "POST /command HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    #expect(WebTestClient.exchange(port: port, chunked).status == 400)
    #expect(
      eventually {
        let s = server.statistics
        return s.notFound == 2 && s.methodNotAllowed == 3 && s.badRequests == 3
      })
  }

  @Test func oversizedRequestGets400() throws {
    let (server, _, port) = try startedServer()
    defer { server.stop() }
    let request = "GET / HTTP/1.1\r\nX-Long: " + String(repeating: "a", count: 20_000) + "\r\n\r\n"
    let client = WebTestClient.exchange(port: port, request)
    #expect(client.status == 400)
    #expect(eventually { server.statistics.badRequests == 1 })
  }

  /// A page that stops reading costs the publisher nothing: its events are dropped, and it is
  /// closed once its output has not moved for the stall timeout.
  @Test func slowClientIsDroppedThenClosed() throws {
    let (server, hub, port) = try startedServer {
      $0.clientBufferBytes = 16 * 1024
      $0.stallTimeoutNanoseconds = 300_000_000
    }
    defer { server.stop() }
    let slow = WebTestClient(port: port, receiveBufferBytes: 4096)
    slow.send("GET /events HTTP/1.1\r\n\r\n")
    #expect(eventually { server.statistics.clients == 1 && server.statistics.eventsSent >= 2 })
    let big = MonitorNotice.waitingForDevice(input: String(repeating: "x", count: 4000))
    for sequence in 0..<100_000 {
      hub.publish(.frame(testFrame(UInt32(sequence))))
      if sequence % 100 == 0 { hub.publish(.notice(big)) }
    }
    var rounds = 0
    let closed = eventually(within: 30) {
      rounds += 1
      for _ in 0..<16 { hub.publish(.notice(big)) }
      return server.statistics.clientsClosedSlow == 1
    }
    #expect(closed, "\(server.statistics)")
    #expect(server.statistics.eventsDropped > 0)
    #expect(eventually { server.statistics.clients == 0 })
    #expect(hub.framesReceived == 100_000)
  }

  /// A page that reads keeps its stream however long it was idle before an event: the stall
  /// clock runs only while output waits (here it is shorter than the 0.5 s between stats).
  @Test func aQuietStreamIsNotClosedAsSlow() throws {
    let (server, _, port) = try startedServer { $0.stallTimeoutNanoseconds = 400_000_000 }
    defer { server.stop() }
    let client = WebTestClient(port: port)
    client.send("GET /events HTTP/1.1\r\n\r\n")
    #expect(client.read(for: 20) { events("stats", in: $0).count >= 4 })
    #expect(!client.sawEndOfFile)
    #expect(server.statistics.clientsClosedSlow == 0)
  }

  @Test func refusesBeyondTheClientLimit() throws {
    let (server, _, port) = try startedServer { $0.maximumClients = 2 }
    defer { server.stop() }
    let first = WebTestClient(port: port)
    let second = WebTestClient(port: port)
    #expect(eventually { server.statistics.connectionsAccepted == 2 })
    let third = WebTestClient(port: port)
    _ = third.readToEnd()
    #expect(third.status == 503)
    #expect(third.sawEndOfFile)
    #expect(eventually { server.statistics.connectionsRefused == 1 })
    // The first two are still served.
    first.send("GET /nope HTTP/1.1\r\n\r\n")
    #expect(first.readToEnd().hasPrefix("HTTP/1.1 404"))
    second.close()
    #expect(eventually { server.statistics.clients == 0 })
    #expect(WebTestClient.exchange(port: port, "GET / HTTP/1.1\r\n\r\n").status == 200)
  }

  @Test func closesARequestThatTakesTooLong() throws {
    let (server, _, port) = try startedServer { $0.requestTimeoutNanoseconds = 200_000_000 }
    defer { server.stop() }
    let client = WebTestClient(port: port)
    client.send("GET / HT")
    _ = client.readToEnd(for: 20)
    #expect(client.sawEndOfFile)
    #expect(client.received.isEmpty)
    #expect(eventually { server.statistics.timeouts == 1 })
  }

  @Test func commandsAreForbiddenUnlessEnabled() throws {
    let (server, hub, port) = try startedServer()
    defer { server.stop() }
    let post = "POST /command HTTP/1.1\r\nX-Plumb-Command: 1\r\nContent-Length: 4\r\n\r\ntare"
    let client = WebTestClient.exchange(port: port, post)
    #expect(client.status == 403)
    #expect(client.text.contains("--web-commands"))
    #expect(hub.takeCommand() == nil)
    #expect(eventually { server.statistics.forbidden == 1 })
  }

  @Test func commandsAreQueuedWhenEnabled() throws {
    let (server, hub, port) = try startedServer { $0.commandsEnabled = true }
    defer { server.stop() }
    func post(_ body: String, headers: String = "X-Plumb-Command: 1\r\n") -> Int? {
      WebTestClient.exchange(
        port: port,
        "POST /command HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)"
          + "Content-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
      ).status
    }
    #expect(post("tare") == 202)
    #expect(post("rate 50\n") == 202)
    #expect(
      post("format text", headers: "X-Plumb-Command: 1\r\nOrigin: http://127.0.0.1:\(port)\r\n")
        == 202)
    #expect(hub.takeCommand() == "tare")
    #expect(hub.takeCommand() == "rate 50")
    #expect(hub.takeCommand() == "format text")
    #expect(hub.takeCommand() == nil)
    #expect(post("tare", headers: "") == 403)
    #expect(post("tare", headers: "X-Plumb-Command: 1\r\nOrigin: http://evil.example\r\n") == 403)
    #expect(post("tare", headers: "X-Plumb-Command: 1\r\nOrigin: null\r\n") == 403)
    for bad in [
      "", "reboot", "rate", "rate 0", "rate fast", "format json", "tare\u{7}", "tare tare",
    ] {
      #expect(post(bad) == 400, "\(bad.debugDescription)")
    }
    #expect(post(String(repeating: "a", count: 65)) == 400)
    #expect(hub.takeCommand() == nil)
    // Eight wait at most.
    for _ in 0..<8 { #expect(post("status") == 202) }
    #expect(post("status") == 503)
    // The counters are published at the end of the server's poll iteration, a moment after
    // the response went out.
    #expect(
      eventually {
        let s = server.statistics
        return s.commandsQueued == 11 && s.forbidden == 3 && s.badRequests == 9
      }, "\(server.statistics)")
  }

  @Test func aPortInUseIsReported() throws {
    let (server, _, port) = try startedServer()
    defer { server.stop() }
    let second = WebServer(
      configuration: WebServerConfiguration(host: "127.0.0.1", port: port),
      hub: WebMonitorHub(input: "x", version: "0", commandsEnabled: false), page: [])
    #expect(throws: WebServerError.addressInUse(host: "127.0.0.1", port: port)) {
      _ = try second.start()
    }
    let message = WebServerError.addressInUse(host: "127.0.0.1", port: port).description
    #expect(message.contains("127.0.0.1:\(port) is in use"))
    #expect(message.contains("--web ADDR:PORT"))
  }

  @Test func startReturnsTheURLAndStopClosesEverything() throws {
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    let server = WebServer(
      configuration: WebServerConfiguration(host: "localhost", port: 0), hub: hub, page: [])
    let url = try server.start()
    let port = try #require(server.localPort)
    #expect(url == "http://127.0.0.1:\(port)/")
    #expect(throws: WebServerError.alreadyStarted) { _ = try server.start() }
    let stream = WebTestClient(port: port)
    stream.send("GET /events HTTP/1.1\r\n\r\n")
    #expect(stream.read { events("hello", in: $0).count == 1 })
    server.stop()
    _ = stream.readToEnd()
    #expect(stream.sawEndOfFile)
    #expect(server.statistics.clients == 0)
    server.stop()
  }

  /// A restarted monitor binds its port again at once, though its old connections are in
  /// TIME_WAIT (the server closed them first); a stopped server starts again.
  @Test func rebindsAtOnceAfterAStop() throws {
    // A port below Linux's ephemeral range (32768–60999): between the stop and the new bind, no
    // other test's connection (or port-0 server) can be given it.
    let hubs = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    var found: (WebServer, UInt16)?
    for offset in 0..<2000 {
      let candidate = UInt16(20_000 + (Int(getpid()) &* 7 &+ offset) % 10_000)
      let trial = WebServer(
        configuration: WebServerConfiguration(host: "127.0.0.1", port: candidate), hub: hubs,
        page: [])
      if (try? trial.start()) != nil {
        found = (trial, candidate)
        break
      }
    }
    let (server, port) = try #require(found)
    #expect(WebTestClient.exchange(port: port, "GET / HTTP/1.1\r\n\r\n").status == 200)
    server.stop()
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    let again = WebServer(
      configuration: WebServerConfiguration(host: "127.0.0.1", port: port), hub: hub, page: [])
    _ = try again.start()
    #expect(WebTestClient.exchange(port: port, "GET / HTTP/1.1\r\n\r\n").status == 200)
    again.stop()
    // The same object, twice more; a failed start leaves it startable.
    let blocker = WebServer(
      configuration: WebServerConfiguration(host: "127.0.0.1", port: port), hub: hub, page: [])
    _ = try blocker.start()
    #expect(throws: WebServerError.addressInUse(host: "127.0.0.1", port: port)) {
      _ = try again.start()
    }
    blocker.stop()
    _ = try again.start()
    #expect(again.localPort == port)
    again.stop()
    again.stop()
  }

  @Test func bindsIPv6Loopback() throws {
    let hub = WebMonitorHub(input: "x", version: "0", commandsEnabled: false)
    let server = WebServer(
      configuration: WebServerConfiguration(host: "::1", port: 0), hub: hub, page: [])
    let url: String
    do {
      url = try server.start()
    } catch {
      // A machine without IPv6 (some containers) cannot bind ::1; that is its message.
      #expect("\(error)".contains("[::1]:0"))
      return
    }
    defer { server.stop() }
    #expect(url == "http://[::1]:\(server.localPort ?? 0)/")
  }
}
