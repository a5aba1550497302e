import BuildInfo
import CommandLineSupport
import Monitoring
import WebMonitor

/// `--web [ADDR:]PORT` and `--web-commands`: the live page (Sources/WebMonitor/README.md).
struct MonitorWebOptions {
  var configuration: WebServerConfiguration
}

/// Reads `--web` and `--web-commands`; `nil` without `--web`.
func parseWebOptions(_ arguments: ParsedArguments) throws(UsageError) -> MonitorWebOptions? {
  let spec = arguments.spec
  guard let value = arguments.value("web") else {
    if arguments.flag("web-commands") {
      throw UsageError(
        "--web-commands puts command buttons on the live page: give --web too, e.g. --web 8080 "
          + "--web-commands", spec: spec)
    }
    return nil
  }
  var configuration: WebServerConfiguration
  do throws(WebAddressError) {
    configuration = try WebServerConfiguration.parse(value)
  } catch {
    throw UsageError(error.description, spec: spec)
  }
  configuration.commandsEnabled = arguments.flag("web-commands")
  return MonitorWebOptions(configuration: configuration)
}

/// The running server and the hub the serial loop feeds.
struct MonitorWeb {
  let server: WebServer
  let hub: WebMonitorHub
  let url: String

  /// Starts the server: before the input is opened, so that the page can already say that the
  /// monitor is waiting for the device (`--reopen`).
  static func start(_ options: MonitorWebOptions, input: String) throws(CommandFailure)
    -> MonitorWeb
  {
    let configuration = options.configuration
    let hub = WebMonitorHub(
      input: input, version: PlumbVersion.current,
      commandsEnabled: configuration.commandsEnabled)
    let server = WebServer(
      configuration: configuration, hub: hub, page: Array(MonitorPage.html.utf8))
    let url: String
    do throws(WebServerError) {
      url = try server.start()
    } catch {
      throw CommandFailure(exitCode(for: error), "--web: \(error.description)")
    }
    return MonitorWeb(server: server, hub: hub, url: url)
  }

  /// What the tool says at start: where, and who can reach it.
  func announcement() -> String {
    let configuration = server.configuration
    let commands = configuration.commandsEnabled ? ", with command buttons (--web-commands)" : ""
    if configuration.isLoopback {
      return "plumb-monitor: live page at \(url)\(commands): this machine only (--web "
        + "0.0.0.0:\(server.localPort ?? configuration.port) serves the network)"
    }
    let reach =
      configuration.commandsEnabled
      ? "anyone who can reach this address can see the attitude and send commands to the board"
      : "anyone who can reach this address can see the attitude"
    return "plumb-monitor: live page at \(url)\(commands): not loopback: \(reach)"
  }

  /// The hooks the session calls between reads: statistics twice a second, the page's commands.
  func hooks() -> MonitorLiveHooks {
    let hub = hub
    return MonitorLiveHooks(
      statisticsIntervalNanoseconds: 500_000_000,
      statistics: { hub.publishStatistics($0) },
      nextCommand: { hub.takeCommand() })
  }

  /// Stops the server and sums up what it did (standard error).
  func finish() -> String {
    server.stop()
    let s = server.statistics
    return "plumb-monitor: web: \(s.connectionsAccepted) connections, \(s.requests) requests, "
      + "\(s.badRequests) bad (400), \(s.eventsSent) events sent, \(s.eventsDropped) dropped "
      + "for slow pages, \(s.clientsClosedSlow) slow pages closed, \(s.commandsQueued) commands"
  }
}

/// The sysexits status for a web server that could not start.
func exitCode(for error: WebServerError) -> ExitCode {
  switch error {
  case .addressInUse, .permissionDenied, .addressNotAvailable: return .unavailable
  case .alreadyStarted, .systemCallFailed: return .software
  }
}
