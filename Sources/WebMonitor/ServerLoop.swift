import Glibc
import HardwareAbstraction
import Monitoring
import POSIXSupport
import Synchronization

/// The server's thread: one `poll(2)` over the listening socket and every client, all
/// non-blocking, and a tick at most `maximumEventRateHz` times a second that samples the hub
/// and appends each new event, encoded once, to every event-stream client's buffer.
///
/// Created by `WebServer.start()` and owned by the thread it starts, which alone touches it.
final class ServerLoop {
  private var listener: FileDescriptor
  private let configuration: WebServerConfiguration
  private let hub: WebMonitorHub
  private let page: [UInt8]
  private let shared: ServerShared
  private var clients: [Client] = []
  private var statistics = WebServerStatistics()
  private var scratch = [UInt8](repeating: 0, count: 4096)
  private var pollEntries: [pollfd] = []

  private let tickNanoseconds: Int64
  private var nextFrameTick: Int64 = 0
  private var nextStatsTick: Int64 = 0
  private var acceptPausedUntil: Int64 = 0
  /// Frames the hub had at the last frame sent (or skipped with no client).
  private var framesSent: UInt64 = 0
  /// The newest reply or notice already handed to clients.
  private var lastMessageSequence: UInt64 = 0
  private let helloEvent: [UInt8]

  /// Statistics are sent twice a second.
  static let statsIntervalNanoseconds: Int64 = 500_000_000
  /// A comment line after this long with nothing else.
  static let keepaliveNanoseconds: Int64 = 5_000_000_000
  /// How long a finished response waits for the client to close before its socket is closed.
  static let lingerNanoseconds: Int64 = 1_000_000_000
  /// The most a `POST /command` body may carry.
  static let maximumCommandBytes = 64
  /// The output buffer of a client that is not (yet) an event stream.
  static let responseBufferBytes = 4096

  init(
    listener: consuming FileDescriptor, configuration: WebServerConfiguration,
    hub: WebMonitorHub, page: [UInt8], shared: ServerShared
  ) {
    self.listener = listener
    self.configuration = configuration
    self.hub = hub
    self.page = page
    self.shared = shared
    tickNanoseconds = 1_000_000_000 / Int64(max(1, min(configuration.maximumEventRateHz, 1000)))
    helloEvent = Array(
      WebEvents.event(
        "hello",
        WebEvents.hello(
          input: hub.input, version: hub.version, commandsEnabled: configuration.commandsEnabled,
          maxRateHz: configuration.maximumEventRateHz)
      ).utf8)
    pollEntries.reserveCapacity(configuration.maximumClients + 1)
  }

  func run() {
    while !shared.stopRequested.load(ordering: .acquiring) {
      let now = monotonicNanoseconds()
      let waitMilliseconds = max(0, min(nextFrameTick - now, tickNanoseconds) / 1_000_000)
      pollOnce(timeoutMilliseconds: CInt(max(1, waitMilliseconds)))
      let later = monotonicNanoseconds()
      if later >= nextFrameTick { tick(later) }
      expire(later)
      for client in clients where client.hasOutput { flush(client, later) }
      clients.removeAll { $0.isClosed }
      statistics.clients = clients.count
      let copy = statistics
      shared.statistics.withLock { $0 = copy }
    }
    for client in clients { client.close() }
    clients.removeAll()
    listener.close()
    statistics.clients = 0
    let copy = statistics
    shared.statistics.withLock { $0 = copy }
  }

  // MARK: Polling

  private func pollOnce(timeoutMilliseconds: CInt) {
    pollEntries.removeAll(keepingCapacity: true)
    let listening = monotonicNanoseconds() >= acceptPausedUntil
    pollEntries.append(
      pollfd(fd: listening ? listener.rawValue : -1, events: Int16(POLLIN), revents: 0))
    for client in clients {
      var events = Int16(POLLIN)
      if client.hasOutput { events |= Int16(POLLOUT) }
      pollEntries.append(pollfd(fd: client.descriptor.rawValue, events: events, revents: 0))
    }
    let count = nfds_t(pollEntries.count)
    let ready = pollEntries.withUnsafeMutableBufferPointer { entries in
      Glibc.poll(entries.baseAddress, count, timeoutMilliseconds)
    }
    guard ready > 0 else { return }
    let now = monotonicNanoseconds()
    // The clients polled are the first `clients.count` ones: accept comes after.
    for (index, client) in clients.enumerated() {
      let events = pollEntries[index + 1].revents
      guard events != 0, !client.isClosed else { continue }
      if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 { read(client, now) }
      if !client.isClosed && client.hasOutput && events & Int16(POLLOUT) != 0 {
        flush(client, now)
      }
      if !client.isClosed && events & Int16(POLLNVAL) != 0 { client.close() }
    }
    if pollEntries[0].revents & Int16(POLLIN) != 0 { acceptAll(now) }
  }

  private func acceptAll(_ now: Int64) {
    while true {
      // Glibc's module does not export accept4 (a GNU extension): accept, then set the flags
      // (the tool starts no programs, so the moment without FD_CLOEXEC does not matter).
      let number = accept(listener.rawValue, nil, nil)
      if number < 0 {
        let code = errno
        if code == EINTR || code == ECONNABORTED || code == EPROTO { continue }
        if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
          // Out of descriptors: stop listening for a moment instead of spinning on poll.
          acceptPausedUntil = now + 100_000_000
        }
        return
      }
      _ = fcntl(number, F_SETFD, FD_CLOEXEC)
      _ = fcntl(number, F_SETFL, fcntl(number, F_GETFL) | O_NONBLOCK)
      let activeClients = clients.reduce(0) { $0 + ($1.isClosed ? 0 : 1) }
      if activeClients >= configuration.maximumClients {
        refuse(number)
        continue
      }
      statistics.connectionsAccepted += 1
      clients.append(
        Client(
          descriptor: FileDescriptor(taking: number), now: now,
          parser: HTTPRequestParser(
            maximumHeaderBytes: configuration.maximumRequestBytes,
            maximumBodyBytes: Self.maximumCommandBytes)))
    }
  }

  /// 503 and close, best effort: the socket is new, its send buffer empty.
  private func refuse(_ number: CInt) {
    statistics.connectionsRefused += 1
    let response = Self.response(
      status: 503, reason: "Service Unavailable",
      body: "too many pages are open (\(configuration.maximumClients)): close one and reload\n",
      extra: ["Retry-After: 5"])
    _ = response.withUnsafeBytes { raw in
      send(number, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }
    _ = shutdown(number, Int32(SHUT_WR))
    _ = Glibc.close(number)
  }

  // MARK: Reading

  private func read(_ client: Client, _ now: Int64) {
    // At most 16 reads (64 KiB) per client and poll, so one client that keeps sending cannot
    // starve the others; what is left is read at the next poll.
    for _ in 0..<16 where !client.isClosed {
      let count = scratch.withUnsafeMutableBytes { raw in
        recv(client.descriptor.rawValue, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT))
      }
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return }
        client.close()
        return
      }
      if count == 0 {
        // The client closed its side: a request it never finished, or a page that went away.
        client.close()
        return
      }
      guard case .readingRequest = client.phase else { continue }  // discarded
      switch client.parser.append(scratch[0..<count]) {
      case .needMore: continue
      case .failed(let error):
        statistics.requests += 1
        statistics.badRequests += 1
        respond(client, status: 400, reason: "Bad Request", body: "\(error)\n", now: now)
      case .complete(let request):
        statistics.requests += 1
        handle(request, client, now)
      }
    }
  }

  // MARK: Routing

  private func handle(_ request: HTTPRequest, _ client: Client, _ now: Int64) {
    switch request.path {
    case "/", "/index.html":
      guard request.method == "GET" || request.method == "HEAD" else {
        return notAllowed(client, allow: "GET, HEAD", now)
      }
      let head = Self.head(
        status: 200, reason: "OK", contentType: "text/html; charset=utf-8",
        contentLength: page.count, extra: [])
      client.startResponse(head, body: request.method == "HEAD" ? [] : page, now: now)
    case "/events":
      guard request.method == "GET" else { return notAllowed(client, allow: "GET", now) }
      startStream(client, now)
    case "/command":
      guard request.method == "POST" else { return notAllowed(client, allow: "POST", now) }
      command(request, client, now)
    default:
      statistics.notFound += 1
      respond(
        client, status: 404, reason: "Not Found",
        body: "not found: this server has /, /events and /command\n", now: now)
    }
  }

  private func notAllowed(_ client: Client, allow: String, _ now: Int64) {
    statistics.methodNotAllowed += 1
    respond(
      client, status: 405, reason: "Method Not Allowed", body: "method not allowed: \(allow)\n",
      extra: ["Allow: \(allow)"], now: now)
  }

  private func command(_ request: HTTPRequest, _ client: Client, _ now: Int64) {
    func forbid(_ why: String) {
      statistics.forbidden += 1
      respond(client, status: 403, reason: "Forbidden", body: why + "\n", now: now)
    }
    guard configuration.commandsEnabled else {
      return forbid("commands are off: start plumb-monitor with --web-commands to allow them")
    }
    guard request.header("X-Plumb-Command") == "1" else {
      return forbid("a command needs the header X-Plumb-Command: 1")
    }
    if let origin = request.header("Origin") {
      guard let host = request.header("Host"), Self.originMatches(origin, host: host) else {
        return forbid("commands are only taken from this server's own page")
      }
    }
    guard let line = WebCommand.validate(request.body) else {
      statistics.badRequests += 1
      return respond(
        client, status: 400, reason: "Bad Request",
        body:
          "not a command: tare, status, version, format binary|binary-imu|text|mavlink or rate HZ\n",
        now: now)
    }
    guard hub.enqueueCommand(line) else {
      return respond(
        client, status: 503, reason: "Service Unavailable",
        body: "\(WebMonitorHub.commandQueueCapacity) commands are waiting already: retry\n",
        extra: ["Retry-After: 1"], now: now)
    }
    statistics.commandsQueued += 1
    respond(client, status: 202, reason: "Accepted", body: "queued: \(line)\n", now: now)
  }

  /// Whether `origin` (`http://host:port`) names the `Host` the request was sent to.
  static func originMatches(_ origin: String, host: String) -> Bool {
    let lower = asciiLowercased(origin)
    let authority: Substring
    if lower.hasPrefix("http://") {
      authority = lower.dropFirst(7)
    } else if lower.hasPrefix("https://") {
      authority = lower.dropFirst(8)
    } else {
      return false
    }
    return !authority.isEmpty && authority == Substring(asciiLowercased(host))
  }

  private func respond(
    _ client: Client, status: Int, reason: String, body: String, extra: [String] = [],
    now: Int64
  ) {
    let bytes = Self.response(status: status, reason: reason, body: body, extra: extra)
    client.startResponse(bytes, body: [], now: now)
  }

  /// A whole plain-text response that closes the connection.
  static func response(status: Int, reason: String, body: String, extra: [String]) -> [UInt8] {
    let text = Array(body.utf8)
    return head(
      status: status, reason: reason, contentType: "text/plain; charset=utf-8",
      contentLength: text.count, extra: extra) + text
  }

  /// A response's status line and headers, `Connection: close`.
  static func head(
    status: Int, reason: String, contentType: String, contentLength: Int, extra: [String]
  ) -> [UInt8] {
    var lines = [
      "HTTP/1.1 \(status) \(reason)", "Content-Type: \(contentType)",
      "Content-Length: \(contentLength)", "Cache-Control: no-store",
      "X-Content-Type-Options: nosniff", "Connection: close",
    ]
    lines += extra
    return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
  }

  // MARK: The event stream

  private func startStream(_ client: Client, _ now: Int64) {
    let head = [
      "HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Cache-Control: no-store",
      "X-Content-Type-Options: nosniff", "X-Accel-Buffering: no",
    ]
    let snapshot = hub.snapshot(messagesAfter: .max)
    client.becomeStream(
      capacity: configuration.clientBufferBytes, joinedAfter: lastMessageSequence, now: now)
    var opening = Array((head.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    opening += Array(WebEvents.streamPreamble.utf8) + helloEvent
    opening += statsEvent(snapshot)
    if let frame = snapshot.frame {
      opening += Array(
        WebEvents.event("frame", WebEvents.frame(frame, received: snapshot.framesReceived)).utf8)
    }
    if client.append(opening, now: now) {
      statistics.eventsSent += snapshot.frame == nil ? 2 : 3
    } else {
      statistics.eventsDropped += 1
      client.close()
    }
  }

  private func statsEvent(_ snapshot: HubSnapshot) -> [UInt8] {
    var server = statistics
    server.clients = clients.reduce(0) { $0 + ($1.isClosed ? 0 : 1) }
    let data = WebEvents.stats(
      snapshot.statistics, frames: snapshot.framesReceived, format: snapshot.frame?.format,
      server: server)
    return Array(WebEvents.event("stats", data).utf8)
  }

  private func tick(_ now: Int64) {
    nextFrameTick += tickNanoseconds
    if nextFrameTick <= now { nextFrameTick = now + tickNanoseconds }
    let snapshot = hub.snapshot(messagesAfter: lastMessageSequence)
    let streaming = clients.contains { $0.isStreaming }
    if snapshot.framesReceived != framesSent, let frame = snapshot.frame {
      if snapshot.framesReceived > framesSent + 1 {
        statistics.framesCoalesced += snapshot.framesReceived - framesSent - 1
      }
      framesSent = snapshot.framesReceived
      if streaming {
        let data = WebEvents.frame(frame, received: snapshot.framesReceived)
        broadcast(Array(WebEvents.event("frame", data).utf8), now: now)
      }
    }
    for message in snapshot.messages where streaming {
      let event: String
      switch message.kind {
      case .reply(let reply): event = WebEvents.event("reply", WebEvents.reply(reply))
      case .notice(let notice): event = WebEvents.event("notice", WebEvents.notice(notice))
      }
      broadcast(Array(event.utf8), now: now, after: message.sequence)
    }
    lastMessageSequence = max(lastMessageSequence, snapshot.lastMessageSequence)
    if now >= nextStatsTick {
      nextStatsTick = now + Self.statsIntervalNanoseconds
      if streaming { broadcast(statsEvent(snapshot), now: now) }
    }
    for client in clients
    where client.isStreaming && now - client.lastEventAt >= Self.keepaliveNanoseconds {
      _ = client.append(Array(WebEvents.keepalive.utf8), now: now)
    }
  }

  /// Appends one event to every stream client (those that joined before message `after`).
  private func broadcast(_ event: [UInt8], now: Int64, after sequence: UInt64 = .max) {
    for client in clients where client.isStreaming {
      guard sequence == .max || client.joinedAfter < sequence else { continue }
      if client.append(event, now: now) {
        statistics.eventsSent += 1
      } else {
        statistics.eventsDropped += 1
      }
    }
  }

  // MARK: Writing and timeouts

  private func flush(_ client: Client, _ now: Int64) {
    let number = client.descriptor.rawValue
    var failed = false
    func write(_ raw: UnsafeRawBufferPointer) -> Int? {
      while true {
        let sent = send(
          number, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        if sent >= 0 { return sent }
        let code = errno
        if code == EINTR { continue }
        if code != EAGAIN && code != EWOULDBLOCK { failed = true }
        return nil
      }
    }
    while client.hasOutput && !failed {
      let written: Int?
      if !client.output.isEmpty {
        written = client.output.drain(write)
      } else {
        let offset = client.bodyOffset
        written = client.body.withUnsafeBytes { raw in
          write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
        }
        if let written { client.bodyOffset += written }
      }
      guard let written, written > 0 else { break }
      client.lastProgressAt = now
    }
    if failed {
      client.close()
      return
    }
    if !client.hasOutput {
      client.lastProgressAt = now
      if case .responding = client.phase { client.finishResponse(now: now) }
    }
  }

  private func expire(_ now: Int64) {
    for client in clients where !client.isClosed {
      switch client.phase {
      case .readingRequest:
        if now - client.connectedAt > configuration.requestTimeoutNanoseconds {
          statistics.timeouts += 1
          client.close()
        }
      case .responding, .streaming:
        if client.hasOutput
          && now - client.lastProgressAt > configuration.stallTimeoutNanoseconds
        {
          statistics.clientsClosedSlow += 1
          client.close()
        }
      case .lingering(let until):
        if now >= until { client.close() }
      }
    }
  }
}

/// One connection, owned by the server's thread.
final class Client {
  enum Phase {
    /// Reading the request (bounded in size and time).
    case readingRequest
    /// Writing a response that ends with `Connection: close`.
    case responding
    /// The response is out and the write side shut: reading until the client closes (so that
    /// unread request bytes do not turn the close into a reset that loses the response).
    case lingering(until: Int64)
    /// An event stream.
    case streaming
  }

  var descriptor: FileDescriptor
  var phase = Phase.readingRequest
  var parser: HTTPRequestParser
  var output: ClientOutput
  /// A response body sent after `output` (the page, shared, never copied).
  var body: [UInt8] = []
  var bodyOffset = 0
  let connectedAt: Int64
  /// The last time its output moved (or was empty).
  var lastProgressAt: Int64
  /// The last time an event or keepalive was appended.
  var lastEventAt: Int64
  /// The newest reply/notice before it joined: it gets those after.
  var joinedAfter: UInt64 = .max

  init(descriptor: consuming FileDescriptor, now: Int64, parser: HTTPRequestParser) {
    self.descriptor = descriptor
    self.parser = parser
    output = ClientOutput(capacity: ServerLoop.responseBufferBytes)
    connectedAt = now
    lastProgressAt = now
    lastEventAt = now
  }

  var isClosed: Bool { !descriptor.isOpen }
  var isStreaming: Bool {
    if case .streaming = phase, descriptor.isOpen { return true }
    return false
  }
  var hasOutput: Bool { !output.isEmpty || bodyOffset < body.count }

  /// Appends an event (whole, or not at all: false). Output that was idle starts its stall
  /// clock now, not when it last drained.
  func append(_ event: [UInt8], now: Int64) -> Bool {
    let wasIdle = !hasOutput
    guard output.append(event) else { return false }
    if wasIdle { lastProgressAt = now }
    lastEventAt = now
    return true
  }

  func startResponse(_ head: [UInt8], body: [UInt8], now: Int64) {
    phase = .responding
    if !output.append(head) {
      output = ClientOutput(capacity: head.count)
      _ = output.append(head)
    }
    self.body = body
    bodyOffset = 0
    lastProgressAt = now
  }

  func becomeStream(capacity: Int, joinedAfter: UInt64, now: Int64) {
    phase = .streaming
    output = ClientOutput(capacity: capacity)
    self.joinedAfter = joinedAfter
    lastProgressAt = now
    lastEventAt = now
  }

  func finishResponse(now: Int64) {
    _ = shutdown(descriptor.rawValue, Int32(SHUT_WR))
    body = []
    phase = .lingering(until: now + ServerLoop.lingerNanoseconds)
  }

  func close() {
    descriptor.close()
  }
}

/// The host commands a page may post (README.md, "HTTP"; FORMATS.md §7).
enum WebCommand {
  /// The command line in `body` (one trailing newline allowed), or `nil` when it is not one of
  /// `tare`, `status`, `version`, `format binary|binary-imu|text|mavlink`, `rate HZ`.
  static func validate(_ body: [UInt8]) -> String? {
    var bytes = body[...]
    if bytes.last == 10 { bytes = bytes.dropLast() }
    if bytes.last == 13 { bytes = bytes.dropLast() }
    guard (1...ServerLoop.maximumCommandBytes).contains(bytes.count),
      bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
    else { return nil }
    let line = String(decoding: bytes, as: UTF8.self)
    switch line {
    case "tare", "status", "version", "format binary", "format text", "format mavlink":
      return line
    default:
      guard line.hasPrefix("rate ") else { return nil }
      let digits = line.utf8.dropFirst(5)
      guard (1...5).contains(digits.count), digits.first != UInt8(ascii: "0"),
        digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      else { return nil }
      return line
    }
  }
}
