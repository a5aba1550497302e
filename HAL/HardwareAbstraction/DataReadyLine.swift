/// The sensor's data-ready interrupt line, seen as a stream of rising edges with kernel timestamps.
///
/// **Contract for the loop.** `waitForEdge(until:)` blocks until the next rising edge or until
/// `deadline`, whichever comes first. The returned timestamp is the time of the *edge* as the
/// kernel stamped it in its interrupt path, on `CLOCK_MONOTONIC`, not the time the call
/// returned; it is the sample time. Edges that occur while nobody waits are queued (the kernel
/// keeps a small FIFO per line) and returned in order by later calls, so a late loop sees every
/// edge, each with its true time, until that queue overflows.
///
/// **Contract for implementers.** Timestamps must be `CLOCK_MONOTONIC` nanoseconds, whatever the
/// underlying API provides (libgpiod v1 on kernels before 5.7 stamps `CLOCK_REALTIME`: detect
/// and convert; libgpiod v2 can ask for `CLOCK_MONOTONIC`). A deadline in the past polls: it returns a queued edge if there is one, else
/// `.timedOut` at once. `EINTR` is retried internally with the remaining time. Implementations
/// must not allocate per call.
public protocol DataReadyLine {
  /// Waits for the next rising edge until the absolute `deadline` on `CLOCK_MONOTONIC`.
  mutating func waitForEdge(until deadline: Timestamp) throws(DataReadyError) -> EdgeWait
}

/// The outcome of waiting for an edge.
public enum EdgeWait: Hashable, Sendable {
  /// A rising edge occurred at this instant (kernel timestamp, `CLOCK_MONOTONIC`).
  case edge(Timestamp)
  /// The deadline passed without an edge.
  case timedOut
}

/// What went wrong with the data-ready line: the kind, the errno when the kernel gave one, and
/// which chip and line.
public struct DataReadyError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// No GPIO chip matches the path, name or label (`ENOENT`).
    case chipMissing
    /// The chip has no line with that offset or name.
    case lineMissing
    /// Another consumer holds the line (`EBUSY`), e.g. a sysfs export or another program.
    case lineBusy
    /// The process may not open the chip (`EACCES`, `EPERM`): not in the `gpio` group.
    case permissionDenied
    /// The kernel refused edge events on this line (`EINVAL`, `EOPNOTSUPP`): it has no IRQ.
    case edgeEventsUnsupported
    /// The event's timestamp is not on a clock Plumb can convert to `CLOCK_MONOTONIC`.
    case unknownClockDomain
    /// Reading or waiting failed (`EIO` and others).
    case ioError
    /// Anything else; the errno says what.
    case other
  }

  public var kind: Kind
  public var errno: Errno?
  /// The chip as given (path, name or label), when known.
  public var chip: String?
  /// The line as given (offset or name), when known.
  public var line: String?

  public init(_ kind: Kind, errno: Errno? = nil, chip: String? = nil, line: String? = nil) {
    self.kind = kind
    self.errno = errno
    self.chip = chip
    self.line = line
  }

  /// What to do about it, for a person.
  public var remedy: String {
    switch kind {
    case .chipMissing:
      "no such GPIO chip: list the chips and their labels with `gpiodetect` (package gpiod) and name one by path (/dev/gpiochip0), name (gpiochip0) or label (pinctrl-bcm2711)"
    case .lineMissing:
      "the chip has no such line: list its lines with `gpioinfo CHIP` and give an offset (e.g. 17 for GPIO17 on a Raspberry Pi) or a line name"
    case .lineBusy:
      "another program or driver holds the line: check `gpioinfo` for its consumer, unexport it from /sys/class/gpio, or stop the other program"
    case .permissionDenied:
      "permission denied: add the user to the gpio group (`sudo usermod -aG gpio $USER`, then log in again)"
    case .edgeEventsUnsupported:
      "the kernel cannot deliver edge events for this line (it has no interrupt); choose another GPIO"
    case .unknownClockDomain:
      "the kernel's edge timestamps are on neither CLOCK_MONOTONIC nor CLOCK_REALTIME"
    case .ioError: "reading edge events failed"
    case .other: "an unexpected GPIO error"
    }
  }

  public var description: String {
    var text = "data-ready line: \(kind.rawValue)"
    var place: [String] = []
    if let chip { place.append("chip \(chip)") }
    if let line { place.append("line \(line)") }
    if !place.isEmpty { text += " (" + place.joined(separator: ", ") + ")" }
    if let errno { text += " [\(errno)]" }
    return text + " — " + remedy
  }
}
