import Glibc
import Synchronization

/// Set by SIGINT, SIGTERM, SIGHUP and SIGQUIT: the loop finishes its frame, flushes, closes and
/// exits 0.
/// An atomic store is async-signal-safe; the loop checks the flag once per iteration (at most
/// three sample periods apart).
public let stopRequested = Atomic<Bool>(false)

/// The signal that set `stopRequested` (SIGINT, SIGTERM, SIGHUP, SIGQUIT; 0 before one came), for
/// a command that reports a stop with the shell's exit status, 128 + the signal.
public let stopSignal = Atomic<Int32>(0)

/// The signals that stop a long-running command cleanly.
///
/// SIGHUP is the terminal or the SSH session that started the command going away: a stop like
/// the others (the summary, the bias write-back, a recording closed whole), not the default
/// sudden death. SIGQUIT (Ctrl-\) is a person who wants it to end now: without a handler,
/// Swift's runtime took it for a crash, printed a backtrace and let the program run on.
public let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

/// Installs the handlers of `stopSignals`, and ignores SIGPIPE (a closed pipe on standard output
/// is reported as a disconnect by the port instead of killing the process). Also unblocks
/// them: a process inherits its parent's signal mask, and some launchers (test runners, thread
/// pools that spawn) start children with them blocked, which would leave `kill -TERM` pending
/// for ever.
public func installStopHandlers() {
  var action = sigaction()
  action.__sigaction_handler.sa_handler = { signal in
    stopSignal.store(signal, ordering: .relaxed)
    stopRequested.store(true, ordering: .relaxed)
  }
  sigemptyset(&action.sa_mask)
  action.sa_flags = 0
  var unblock = sigset_t()
  sigemptyset(&unblock)
  for number in stopSignals {
    sigaction(number, &action, nil)
    sigaddset(&unblock, number)
  }
  signal(SIGPIPE, SIG_IGN)
  sigprocmask(SIG_UNBLOCK, &unblock, nil)
}

/// What asking for real-time scheduling gave.
public struct RealTimeOutcome: Sendable {
  public var scheduling: String
  public var memoryLocked: String
}

/// Asks for SCHED_FIFO at `priority` and locks memory (no page faults in the loop), when
/// permitted; says what happened either way. Needs CAP_SYS_NICE and CAP_IPC_LOCK (or root, or
/// the systemd unit's AmbientCapabilities); without them Plumb runs with normal scheduling,
/// which is fine on an idle board (samples are timestamped by the kernel, so wake-up lateness
/// delays frames but does not corrupt sample times).
public func requestRealTime(priority: Int32 = 50) -> RealTimeOutcome {
  var parameters = sched_param()
  parameters.sched_priority = priority
  let scheduling: String
  if sched_setscheduler(0, SCHED_FIFO, &parameters) == 0 {
    scheduling = "SCHED_FIFO priority \(priority)"
  } else {
    let code = errno
    scheduling =
      "normal scheduling (SCHED_FIFO refused: \(String(cString: strerror(code))); grant CAP_SYS_NICE or run under the systemd unit)"
  }
  let memoryLocked: String
  if mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 {
    memoryLocked = "memory locked"
  } else {
    let code = errno
    memoryLocked =
      "memory not locked (mlockall refused: \(String(cString: strerror(code))); grant CAP_IPC_LOCK or raise LimitMEMLOCK)"
  }
  return RealTimeOutcome(scheduling: scheduling, memoryLocked: memoryLocked)
}

/// Whether a descriptor is a terminal.
public func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

/// What kind of file `path` is, for choosing how to write frames to it.
public enum PathKind: Sendable {
  case missing, characterDevice, regularFile, namedPipe, directory, other
}

public func pathKind(_ path: String) -> PathKind {
  var status = stat()
  guard stat(path, &status) == 0 else { return .missing }
  switch status.st_mode & S_IFMT {
  case S_IFCHR: return .characterDevice
  case S_IFREG: return .regularFile
  case S_IFIFO: return .namedPipe
  case S_IFDIR: return .directory
  default: return .other
  }
}

/// Whether `path` opens as a terminal.
public func isTerminalPath(_ path: String) -> Bool {
  let descriptor = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
  guard descriptor >= 0 else { return false }
  defer { close(descriptor) }
  return isatty(descriptor) == 1
}
