import HardwareAbstraction
import POSIXSupport

/// The sensor's data-ready interrupt on a Linux GPIO line, through libgpiod's rising-edge
/// events (the GPIO character device; never sysfs). libgpiod v1 (Debian 12) or v2 (Debian 13,
/// current Raspberry Pi OS), whichever the build found (`libgpiodAPI`): one code path over
/// CLibGPIOD's shim, with the same errors and messages on both.
///
/// Opening requests the line as an input with rising-edge events under the consumer name
/// `plumb` (what `gpioinfo` shows). `waitForEdge(until:)` waits until an absolute
/// `CLOCK_MONOTONIC` deadline: it computes the time left from `clock_gettime`, waits with
/// `gpiod_line_event_wait` (v1) or `gpiod_line_request_wait_edge_events` (v2), both ppoll, and
/// after a signal waits again for what remains. It returns the kernel's timestamp of the edge,
/// moved to `CLOCK_MONOTONIC` when this kernel stamps `CLOCK_REALTIME` (decided at the first
/// event: `EdgeClockDomain`). Waiting and reading do not allocate (v2's event buffer is made
/// once, at the request).
///
/// Errors name the chip and line as given and say what to do: chip missing, line missing, line
/// busy (`EBUSY`: another consumer holds it), permission denied, edge events unsupported.
///
/// A class because it owns the chip handle and the line request (released in `deinit`); it
/// belongs to the loop's thread, so it is deliberately not `Sendable`.
public final class LinuxDataReadyLine: DataReadyLine {
  /// The consumer name the kernel records for the requested line.
  public static let defaultConsumer = "plumb"

  /// The libgpiod API this build was compiled against: `"v1"` (libgpiod 1.x) or `"v2"` (2.x),
  /// decided by the installed `<gpiod.h>`.
  public static var libgpiodAPI: String { Libgpiod.api }

  /// The version of the libgpiod library linked in, as it reports itself (e.g. `"1.6.3"`).
  public static var libgpiodVersion: String { Libgpiod.libraryVersion }

  public let chip: GPIOChipSelector
  public let line: GPIOLineSelector
  /// The clock this kernel stamps edges with, once the first edge has been read.
  public private(set) var clockDomain: EdgeClockDomain?

  private let calls: EdgeEventCalls
  private let handle: Libgpiod.Handle?

  /// Opens `chip`, finds `line` and requests rising-edge events on it.
  public init(
    chip: GPIOChipSelector, line: GPIOLineSelector, consumer: String = defaultConsumer
  ) throws(DataReadyError) {
    let handle = try Libgpiod.requestRisingEdges(chip: chip, line: line, consumer: consumer)
    self.chip = chip
    self.line = line
    self.handle = handle
    self.calls = Libgpiod.eventCalls(handle)
  }

  /// A line whose kernel calls are `calls`: the seam below which tests fake the kernel.
  package init(chip: GPIOChipSelector, line: GPIOLineSelector, calls: EdgeEventCalls) {
    self.chip = chip
    self.line = line
    self.handle = nil
    self.calls = calls
  }

  deinit {
    if let handle { Libgpiod.release(handle) }
  }

  public func waitForEdge(until deadline: Timestamp) throws(DataReadyError) -> EdgeWait {
    let pending: CInt
    do throws(SystemCallError) {
      pending = try retryingOnInterrupt {
        // Recomputed on every attempt, so a signal does not restart the full timeout. A
        // deadline that has passed polls (timeout 0).
        let now = calls.monotonicNow()
        return calls.wait(deadline > now ? deadline.nanoseconds(since: now) : 0)
      }
    } catch {
      throw failure(.waitForEvent, error.errno)
    }
    if pending == 0 { return .timedOut }

    var stamp = Timestamp.zero
    do throws(SystemCallError) {
      _ = try retryingOnInterrupt { calls.read(&stamp) }
    } catch {
      throw failure(.readEvent, error.errno)
    }
    return .edge(try monotonicInstant(of: stamp))
  }

  /// The event stamp on `CLOCK_MONOTONIC`, deciding the kernel's clock at the first event.
  private func monotonicInstant(of stamp: Timestamp) throws(DataReadyError) -> Timestamp {
    if clockDomain == .monotonic { return stamp }
    let monotonicNow = calls.monotonicNow()
    let realtimeNow = calls.realtimeNow()
    if clockDomain == nil {
      guard
        let detected = EdgeClockDomain.detect(
          eventStamp: stamp, monotonicNow: monotonicNow, realtimeNow: realtimeNow)
      else {
        throw DataReadyError(.unknownClockDomain, chip: chip.description, line: line.description)
      }
      clockDomain = detected
      if detected == .monotonic { return stamp }
    }
    return EdgeClockDomain.monotonicInstant(
      ofRealtimeStamp: stamp, monotonicNow: monotonicNow, realtimeNow: realtimeNow)
  }

  private func failure(_ stage: GPIOStage, _ errno: Errno) -> DataReadyError {
    DataReadyError(
      Self.faultKind(for: errno, during: stage), errno: errno, chip: chip.description,
      line: line.description)
  }

  /// The steps of opening and using a line, for error mapping.
  public enum GPIOStage: Hashable, Sendable {
    case openChip, findLine, requestEvents, waitForEvent, readEvent
  }

  /// The fault an errno stands for at each step (Linux
  /// `Documentation/userspace-api/gpio/error-codes.rst`, and libgpiod 1.6's own codes, which
  /// the shim gives on v2 as well).
  ///
  /// Opening a chip: `ENOENT` (no such node, or no chip with that label), `ENOTTY` (the shim's
  /// answer for a path that is not a GPIO chip's device), `ENODEV` and `ENXIO` mean no such
  /// chip. Finding a line: `EINVAL` for an offset past the chip's last line and `ENOENT` for
  /// an unknown name. Requesting events: `EBUSY` is another consumer; `ENXIO` (v2 uAPI) or
  /// `ENODEV` (v1 uAPI) when the line has no interrupt, `EINVAL` and `EOPNOTSUPP` mean the
  /// line cannot deliver edge events. `EACCES`/`EPERM` anywhere before waiting are
  /// permissions.
  public static func faultKind(for errno: Errno, during stage: GPIOStage) -> DataReadyError.Kind {
    switch (stage, errno) {
    case (.openChip, .permissionDenied), (.openChip, .operationNotPermitted),
      (.findLine, .permissionDenied), (.findLine, .operationNotPermitted),
      (.requestEvents, .permissionDenied), (.requestEvents, .operationNotPermitted):
      return .permissionDenied
    case (.openChip, .noSuchFileOrDirectory), (.openChip, .notATerminal),
      (.openChip, .noSuchDevice), (.openChip, .noSuchDeviceOrAddress):
      return .chipMissing
    case (.findLine, .noSuchFileOrDirectory), (.findLine, .invalidArgument):
      return .lineMissing
    case (.requestEvents, .busy):
      return .lineBusy
    case (.requestEvents, .noSuchDeviceOrAddress), (.requestEvents, .noSuchDevice),
      (.requestEvents, .invalidArgument), (.requestEvents, .notSupported):
      return .edgeEventsUnsupported
    case (_, .ioError), (.waitForEvent, .noSuchDevice), (.readEvent, .noSuchDevice):
      return .ioError
    default:
      return .other
    }
  }
}

/// The kernel calls `LinuxDataReadyLine` makes while waiting, as replaceable closures: the seam
/// below which tests fake a line and the clocks.
package struct EdgeEventCalls {
  /// `plumb_gpio_wait` (libgpiod v1 `gpiod_line_event_wait`, v2
  /// `gpiod_line_request_wait_edge_events`) for at most `timeoutNanoseconds` (≥ 0): 1 when an
  /// event is pending, 0 on timeout, -1 with `errno`.
  package var wait: (_ timeoutNanoseconds: Int64) -> CInt
  /// `plumb_gpio_read_event` (v1 `gpiod_line_event_read`, v2
  /// `gpiod_line_request_read_edge_events` into the request's buffer): 0 after storing the
  /// event's kernel timestamp (on whatever clock the kernel uses), -1 with `errno`.
  package var read: (_ stamp: inout Timestamp) -> CInt
  /// `clock_gettime(CLOCK_MONOTONIC)`.
  package var monotonicNow: () -> Timestamp
  /// `clock_gettime(CLOCK_REALTIME)`.
  package var realtimeNow: () -> Timestamp

  package init(
    wait: @escaping (_ timeoutNanoseconds: Int64) -> CInt,
    read: @escaping (_ stamp: inout Timestamp) -> CInt,
    monotonicNow: @escaping () -> Timestamp,
    realtimeNow: @escaping () -> Timestamp
  ) {
    self.wait = wait
    self.read = read
    self.monotonicNow = monotonicNow
    self.realtimeNow = realtimeNow
  }
}
