import Testing
import WebMonitor

@Suite struct HTTPRequestParserTests {
  private func parse(_ text: String, maximumHeaderBytes: Int = 8192) -> HTTPRequestParser.Progress {
    var parser = HTTPRequestParser(maximumHeaderBytes: maximumHeaderBytes, maximumBodyBytes: 64)
    return parser.append(Array(text.utf8))
  }

  private func complete(_ text: String) -> HTTPRequest? {
    if case .complete(let request) = parse(text) { return request }
    return nil
  }

  private func error(_ text: String) -> HTTPRequestError? {
    if case .failed(let error) = parse(text) { return error }
    return nil
  }

  @Test func readsARequestLineAndHeaders() throws {
    let request = try #require(
      complete(
        "GET /events?since=3 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nACCEPT:  text/event-stream \r\n\r\n"
      ))
    #expect(request.method == "GET")
    #expect(request.target == "/events?since=3")
    #expect(request.path == "/events")
    #expect(request.version == "HTTP/1.1")
    #expect(request.header("host") == "127.0.0.1:8080")
    #expect(request.header("Accept") == "text/event-stream")
    #expect(request.header("X-Missing") == nil)
    #expect(request.body.isEmpty)
  }

  @Test func takesBytesOneAtATime() throws {
    var parser = HTTPRequestParser()
    let bytes = Array("POST /command HTTP/1.0\r\nContent-Length: 4\r\n\r\ntare".utf8)
    for byte in bytes.dropLast() {
      #expect(parser.append([byte]) == .needMore)
    }
    guard case .complete(let request) = parser.append([bytes.last!]) else {
      Issue.record("not complete: \(parser.progress)")
      return
    }
    #expect(request.version == "HTTP/1.0")
    #expect(request.body == Array("tare".utf8))
  }

  @Test func waitsForTheWholeBody() {
    var parser = HTTPRequestParser()
    #expect(
      parser.append(Array("POST /command HTTP/1.1\r\nContent-Length: 6\r\n\r\nrat".utf8))
        == .needMore)
    guard case .complete(let request) = parser.append(Array("e 5".utf8)) else {
      Issue.record("not complete")
      return
    }
    #expect(request.body == Array("rate 5".utf8))
  }

  @Test func absoluteFormNamesOnlyTheServersPaths() {
    #expect(complete("GET http://127.0.0.1:8080/events HTTP/1.1\r\n\r\n")?.path == "/events")
    #expect(error("GET http://example.com/etc/passwd HTTP/1.1\r\n\r\n") == .badTarget)
    #expect(error("GET * HTTP/1.1\r\n\r\n") == .badTarget)
    #expect(error("GET ftp://x/ HTTP/1.1\r\n\r\n") == .badTarget)
    #expect(error("GET /#frag HTTP/1.1\r\n\r\n") == .badTarget)
  }

  @Test func refusesMalformedRequests() {
    let cases: [(String, HTTPRequestError)] = [
      ("GET / HTTP/1.1\n\n", .malformedRequestLine),
      ("GET / HTTP/1.1\r\nHost: x\n\r\n\r\n", .malformedHeader),
      ("GET  / HTTP/1.1\r\n\r\n", .malformedRequestLine),
      ("GET /\r\n\r\n", .malformedRequestLine),
      ("G(T / HTTP/1.1\r\n\r\n", .badMethod),
      ("GET /\u{1} HTTP/1.1\r\n\r\n", .badTarget),
      ("GET /é HTTP/1.1\r\n\r\n", .badTarget),
      ("GET / HTTP/2.0\r\n\r\n", .badVersion),
      ("GET / http/1.1\r\n\r\n", .badVersion),
      ("GET / HTTP/1.1\r\nNo colon\r\n\r\n", .malformedHeader),
      ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", .malformedHeader),
      ("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", .malformedHeader),
      ("GET / HTTP/1.1\r\nA: b\u{7}c\r\n\r\n", .malformedHeader),
      (
        "POST /command HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        .transferEncodingNotSupported
      ),
      (
        "POST /command HTTP/1.1\r\nContent-Length: 4\r\ncontent-length: 4\r\n\r\ntare",
        .duplicateContentLength
      ),
      ("POST /command HTTP/1.1\r\nContent-Length: -4\r\n\r\n", .badContentLength),
      ("POST /command HTTP/1.1\r\nContent-Length: 4x\r\n\r\n", .badContentLength),
      ("POST /command HTTP/1.1\r\nContent-Length: 65\r\n\r\n", .bodyTooLarge),
      ("POST /command HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", .badContentLength),
    ]
    for (text, expected) in cases {
      #expect(error(text) == expected, "\(text.debugDescription)")
    }
  }

  @Test func refusesAnOversizedHead() {
    let long = "GET / HTTP/1.1\r\nX-Long: " + String(repeating: "a", count: 300) + "\r\n\r\n"
    #expect(parse(long, maximumHeaderBytes: 256) == .failed(.tooLarge))
    // Without the end of the head in sight, it gives up as soon as the limit is passed.
    var parser = HTTPRequestParser(maximumHeaderBytes: 256, maximumBodyBytes: 64)
    var outcome = HTTPRequestParser.Progress.needMore
    for _ in 0..<100 where outcome == .needMore {
      outcome = parser.append(
        Array("GET / HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 97, count: 50))
    }
    #expect(outcome == .failed(.tooLarge))
  }

  /// The limit counts the head with its blank line, and the verdict does not depend on how
  /// the bytes arrive.
  @Test func theLimitIsExactWhateverThePieces() {
    let head = "GET / HTTP/1.1\r\nX: abc\r\n\r\n"
    let size = head.utf8.count
    for (limit, fits) in [(size, true), (size - 1, false)] {
      var whole = HTTPRequestParser(maximumHeaderBytes: limit)
      var pieces = HTTPRequestParser(maximumHeaderBytes: limit)
      let verdict = whole.append(Array(head.utf8))
      var last = HTTPRequestParser.Progress.needMore
      for byte in head.utf8 { last = pieces.append([byte]) }
      #expect(verdict == last)
      if case .complete = verdict {
        #expect(fits)
      } else {
        #expect(!fits && verdict == .failed(.tooLarge))
      }
    }
  }

  @Test func staysRefusedAndIgnoresWhatFollowsARequest() {
    var parser = HTTPRequestParser()
    #expect(parser.append(Array("BAD\r\n\r\n".utf8)) == .failed(.malformedRequestLine))
    #expect(parser.append(Array("GET / HTTP/1.1\r\n\r\n".utf8)) == .failed(.malformedRequestLine))
    var pipelined = HTTPRequestParser()
    let outcome = pipelined.append(Array("GET / HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\n".utf8))
    guard case .complete(let request) = outcome else {
      Issue.record("not complete")
      return
    }
    #expect(request.path == "/")
  }

  /// Every prefix and every single-byte change of a valid request: no trap, and a bounded
  /// verdict.
  @Test func neverTrapsOnMutatedInput() {
    let valid = Array("POST /command HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\ntare".utf8)
    for replacement: UInt8 in [0, 9, 10, 13, 32, 58, 127, 255] {
      for index in valid.indices {
        var bytes = valid
        bytes[index] = replacement
        var parser = HTTPRequestParser(maximumHeaderBytes: 64, maximumBodyBytes: 8)
        _ = parser.append(bytes)
        for cut in [1, 7, 30] where cut < bytes.count {
          var split = HTTPRequestParser(maximumHeaderBytes: 64, maximumBodyBytes: 8)
          _ = split.append(bytes[..<cut])
          _ = split.append(bytes[cut...])
        }
      }
    }
  }
}
