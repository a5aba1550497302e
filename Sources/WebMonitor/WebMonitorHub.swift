import Monitoring
import Telemetry

/// Where the serial loop leaves what the web server sends, and where the server leaves the
/// commands pages post: the one thing both threads touch.
///
/// The loop calls `publish(_:)` with every event and `publishStatistics(_:)` about twice a
/// second; each takes the lock only to copy a value in (the latest frame, the latest
/// statistics, a reply or notice into a bounded queue), so the loop never waits on the network
/// or on a browser. The server samples it at most `maximumEventRateHz` times a second.
public final class WebMonitorHub: Sendable {
  /// Replies and notices kept for the server (oldest dropped beyond, counted).
  public static let messageQueueCapacity = 64
  /// Commands waiting for the loop (503 beyond).
  public static let commandQueueCapacity = 8

  /// The monitor's input (`/dev/ttyUSB0`), for the `hello` event.
  public let input: String
  /// The tool's version, for the `hello` event.
  public let version: String
  /// Whether pages may post commands (`--web-commands`).
  public let commandsEnabled: Bool

  private let state = Locked(HubState())

  public init(input: String, version: String, commandsEnabled: Bool) {
    self.input = input
    self.version = version
    self.commandsEnabled = commandsEnabled
  }

  /// Takes one event of the monitor session: frames (the newest is kept), statistics, replies
  /// and notices (queued for the page). Heartbeats are not shown. Copies under the lock; no
  /// I/O, no waiting.
  public func publish(_ event: MonitorEvent) {
    switch event {
    case .frame(let frame):
      state.withLock { state in
        state.latestFrame = frame
        state.framesReceived &+= 1
      }
    case .statistics(let statistics, _):
      publishStatistics(statistics)
    case .reply(let reply):
      enqueue(.reply(reply))
    case .notice(let notice):
      enqueue(.notice(notice))
    case .heartbeat, .mavlinkMessage:
      break
    }
  }

  /// The monitor's statistics now, for the `stats` event: the session emits `.statistics`
  /// events only every `--stats-every`, so the tool calls this from its loop about twice a
  /// second (`FrameMonitor.statistics`).
  /// Takes out the few numbers the page shows (outside the lock; a walk of the latency
  /// histogram for its 99th percentile, no allocation) and keeps those.
  public func publishStatistics(_ statistics: MonitorStatistics) {
    let summary = WebLinkSummary(statistics)
    state.withLock { $0.latestStatistics = summary }
  }

  /// The oldest command a page posted and the loop has not taken yet (FIFO), or `nil`.
  public func takeCommand() -> String? {
    state.withLock { state in
      state.commands.isEmpty ? nil : state.commands.removeFirst()
    }
  }

  /// Telemetry frames published so far.
  public var framesReceived: UInt64 { state.withLock { $0.framesReceived } }

  /// Replies and notices dropped because the server had not taken them yet.
  public var messagesDropped: UInt64 { state.withLock { $0.messagesDropped } }

  // MARK: The server's side

  /// Queues a command for the loop; false when `commandQueueCapacity` wait already.
  func enqueueCommand(_ command: String) -> Bool {
    state.withLock { state in
      guard state.commands.count < Self.commandQueueCapacity else { return false }
      state.commands.append(command)
      return true
    }
  }

  /// A copy of what the server sends: the latest frame and statistics, and the messages whose
  /// sequence number is above `after`.
  func snapshot(messagesAfter after: UInt64) -> HubSnapshot {
    state.withLock { state in
      HubSnapshot(
        frame: state.latestFrame, framesReceived: state.framesReceived,
        statistics: state.latestStatistics,
        messages: state.messages.filter { $0.sequence > after },
        lastMessageSequence: state.nextMessageSequence - 1)
    }
  }

  private func enqueue(_ message: HubMessage.Kind) {
    state.withLock { state in
      if state.messages.count >= Self.messageQueueCapacity {
        state.messages.removeFirst()
        state.messagesDropped &+= 1
      }
      state.messages.append(HubMessage(sequence: state.nextMessageSequence, kind: message))
      state.nextMessageSequence += 1
    }
  }
}

/// A reply or notice with its place in the hub's sequence (from 1), so that each client gets
/// each one once from when it joined.
struct HubMessage: Sendable {
  enum Kind: Sendable {
    case reply(HostReply)
    case notice(MonitorNotice)
  }
  var sequence: UInt64
  var kind: Kind
}

/// What the server copies out of the hub at each tick.
struct HubSnapshot: Sendable {
  var frame: MonitorFrame?
  /// Frames published so far: a new frame arrived when it changed.
  var framesReceived: UInt64
  var statistics: WebLinkSummary?
  var messages: [HubMessage]
  /// The sequence number of the newest message (0: none yet).
  var lastMessageSequence: UInt64
}

private struct HubState: Sendable {
  var latestFrame: MonitorFrame?
  var framesReceived: UInt64 = 0
  var latestStatistics: WebLinkSummary?
  var messages: [HubMessage] = []
  var nextMessageSequence: UInt64 = 1
  var messagesDropped: UInt64 = 0
  var commands: [String] = []

  init() {
    messages.reserveCapacity(WebMonitorHub.messageQueueCapacity)
  }
}
