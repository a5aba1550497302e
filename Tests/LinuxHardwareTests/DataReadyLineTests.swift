import Glibc
import HardwareAbstraction
import LinuxHardware
import Testing

@Suite struct GPIOSelectorTests {
  @Test func chipsAreReadAsPathNameOrLabel() {
    #expect(GPIOChipSelector("/dev/gpiochip0") == .path("/dev/gpiochip0"))
    #expect(GPIOChipSelector("gpiochip4") == .name("gpiochip4"))
    #expect(GPIOChipSelector("4") == .name("gpiochip4"))
    #expect(GPIOChipSelector("pinctrl-bcm2711") == .label("pinctrl-bcm2711"))
    #expect(GPIOChipSelector("pinctrl-rp1") == .label("pinctrl-rp1"))
    #expect(GPIOChipSelector("gpiochipX") == .label("gpiochipX"))
    #expect(GPIOChipSelector("pinctrl-bcm2711").description == "pinctrl-bcm2711")
  }

  @Test func linesAreReadAsOffsetOrName() {
    #expect(GPIOLineSelector("17") == .offset(17))
    #expect(GPIOLineSelector("MPU_INT") == .name("MPU_INT"))
    #expect(GPIOLineSelector("GPIO17") == .name("GPIO17"))
    #expect(GPIOLineSelector("-1") == .name("-1"))
    #expect(GPIOLineSelector.offset(17).description == "17")
  }
}

@Suite struct GPIOFaultCodeTests {
  typealias Stage = LinuxDataReadyLine.GPIOStage
  static let rows: [(CInt, Stage, DataReadyError.Kind)] = [
    (ENOENT, .openChip, .chipMissing),
    (ENOTTY, .openChip, .chipMissing),
    (ENODEV, .openChip, .chipMissing),
    (ENXIO, .openChip, .chipMissing),
    (EACCES, .openChip, .permissionDenied),
    (EPERM, .openChip, .permissionDenied),
    (EINVAL, .findLine, .lineMissing),
    (ENOENT, .findLine, .lineMissing),
    (EBUSY, .requestEvents, .lineBusy),
    (EACCES, .requestEvents, .permissionDenied),
    (ENXIO, .requestEvents, .edgeEventsUnsupported),
    (ENODEV, .requestEvents, .edgeEventsUnsupported),
    (EINVAL, .requestEvents, .edgeEventsUnsupported),
    (EOPNOTSUPP, .requestEvents, .edgeEventsUnsupported),
    (EIO, .requestEvents, .ioError),
    (EIO, .waitForEvent, .ioError),
    (ENODEV, .waitForEvent, .ioError),
    (EIO, .readEvent, .ioError),
    (ENOMEM, .openChip, .other),
    (EPERM, .waitForEvent, .other),
  ]

  @Test(arguments: 0..<rows.count)
  func errnoMapsToTheFault(row index: Int) {
    let (code, stage, kind) = Self.rows[index]
    #expect(
      LinuxDataReadyLine.faultKind(for: Errno(rawValue: code), during: stage) == kind,
      "\(Errno(rawValue: code)) during \(stage)")
  }

  @Test func aBusyLineSaysWhoToAsk() {
    let error = DataReadyError(
      LinuxDataReadyLine.faultKind(for: .busy, during: .requestEvents), errno: .busy,
      chip: "pinctrl-bcm2711", line: "17")
    #expect(error.description.contains("chip pinctrl-bcm2711"))
    #expect(error.description.contains("line 17"))
    #expect(error.description.contains("gpioinfo"))
  }
}

/// Opening lines that cannot be opened, through the real libgpiod (v1 or v2, whichever this
/// build uses): the same error, errno and message on both. This machine needs no GPIO chip; a
/// real chip's missing line, busy line and edge events are the kernel test's
/// (tools/kernel-test).
@Suite struct LinuxDataReadyLineOpeningTests {
  /// `DataReadyError.remedy` for `.chipMissing`, restated.
  static let chipRemedy =
    "no such GPIO chip: list the chips and their labels with `gpiodetect` (package gpiod) and "
    + "name one by path (/dev/gpiochip0), name (gpiochip0) or label (pinctrl-bcm2711)"

  func openingError(_ chip: GPIOChipSelector, _ line: GPIOLineSelector) -> DataReadyError? {
    do {
      _ = try LinuxDataReadyLine(chip: chip, line: line)
      return nil
    } catch {
      return error
    }
  }

  @Test func aMissingChipPathIsNamed() {
    let error = openingError(.path("/dev/gpiochip99"), .offset(17))
    #expect(
      error
        == DataReadyError(
          .chipMissing, errno: .noSuchFileOrDirectory, chip: "/dev/gpiochip99", line: "17"))
    #expect(
      error?.description
        == "data-ready line: chipMissing (chip /dev/gpiochip99, line 17) [ENOENT (2)] — "
        + Self.chipRemedy)
  }

  @Test func aMissingChipNameIsNamed() {
    let error = openingError(.name("gpiochip99"), .name("MPU_INT"))
    #expect(
      error
        == DataReadyError(
          .chipMissing, errno: .noSuchFileOrDirectory, chip: "gpiochip99", line: "MPU_INT"))
    #expect(
      error?.description
        == "data-ready line: chipMissing (chip gpiochip99, line MPU_INT) [ENOENT (2)] — "
        + Self.chipRemedy)
  }

  @Test func aLabelNoChipHasIsNamed() {
    let error = openingError(.label("plumb-no-such-chip"), .offset(17))
    #expect(
      error
        == DataReadyError(
          .chipMissing, errno: .noSuchFileOrDirectory, chip: "plumb-no-such-chip", line: "17"))
    #expect(
      error?.description
        == "data-ready line: chipMissing (chip plumb-no-such-chip, line 17) [ENOENT (2)] — "
        + Self.chipRemedy)
  }

  /// v1 says ENOTTY for a character device of another kind, v2 ENODEV: both builds say ENOTTY.
  @Test func aDeviceThatIsNotAGPIOChipIsAMissingChip() {
    #expect(
      openingError(.path("/dev/null"), .offset(0))
        == DataReadyError(.chipMissing, errno: .notATerminal, chip: "/dev/null", line: "0"))
  }

  /// A chip's name is its device under /dev.
  @Test func aNameIsTheDeviceUnderDev() {
    #expect(
      openingError(.name("null"), .offset(0))
        == DataReadyError(.chipMissing, errno: .notATerminal, chip: "null", line: "0"))
  }

  /// A board file naming a folder or a file as its chip: v1 opened a folder and failed with
  /// EISDIR, reported as "an unexpected GPIO error".
  @Test func aFolderOrAFileIsAMissingChip() throws {
    let directory = try TemporaryDirectory.make()
    let file = directory.path + "/gpiochip0"
    let descriptor = open(file, O_CREAT | O_WRONLY, 0o600)
    #expect(descriptor >= 0)
    close(descriptor)
    for path in [directory.path, file] {
      #expect(
        openingError(.path(path), .offset(0))
          == DataReadyError(.chipMissing, errno: .notATerminal, chip: path, line: "0"))
    }
  }

  /// The API this build uses and the library linked in agree (a v2 header with a v1 library, or
  /// the reverse, would be a broken installation).
  @Test func theLibgpiodAPIIsNamedAndMatchesTheLibrary() {
    let api = LinuxDataReadyLine.libgpiodAPI
    let library = LinuxDataReadyLine.libgpiodVersion
    #expect(api == "v1" || api == "v2")
    #expect(library.hasPrefix(api == "v1" ? "1." : "2."), "API \(api), library \(library)")
  }
}

@Suite struct EdgeClockDomainTests {
  // From a run under QEMU (notes/kernel-level-tests.md): the first event's stamp, and the two
  // clocks read just after it.
  static let stamp = Timestamp(nanoseconds: 2_856_403_700)
  static let monotonicNow = Timestamp(nanoseconds: 2_858_051_269)
  static let realtimeNow = Timestamp(nanoseconds: 1_796_204_137_605_597_867)

  @Test func aStampWithinTheUptimeIsMonotonic() {
    #expect(
      EdgeClockDomain.detect(
        eventStamp: Self.stamp, monotonicNow: Self.monotonicNow, realtimeNow: Self.realtimeNow)
        == .monotonic)
  }

  @Test func aStampNearTheDateIsRealtime() {
    let realtimeStamp = Self.realtimeNow - .microseconds(1648)
    #expect(
      EdgeClockDomain.detect(
        eventStamp: realtimeStamp, monotonicNow: Self.monotonicNow,
        realtimeNow: Self.realtimeNow) == .realtime)
  }

  @Test func eventsThatWaitedInTheKernelQueueAreStillRecognised() {
    // Uptime 3 h; an edge queued 10 minutes before the first read.
    let monotonicNow = Timestamp(nanoseconds: 10_800_000_000_000)
    let realtimeNow = Self.realtimeNow
    #expect(
      EdgeClockDomain.detect(
        eventStamp: monotonicNow - .seconds(600), monotonicNow: monotonicNow,
        realtimeNow: realtimeNow) == .monotonic)
    #expect(
      EdgeClockDomain.detect(
        eventStamp: realtimeNow - .seconds(600), monotonicNow: monotonicNow,
        realtimeNow: realtimeNow) == .realtime)
  }

  @Test func anUnsetRealtimeClockIsAmbiguous() {
    // No RTC, no network: CLOCK_REALTIME counts from 1970 a moment behind the uptime.
    let monotonicNow = Timestamp(nanoseconds: 30_000_000_000)
    let realtimeNow = Timestamp(nanoseconds: 30_200_000_000)
    #expect(
      EdgeClockDomain.detect(
        eventStamp: monotonicNow - .milliseconds(2), monotonicNow: monotonicNow,
        realtimeNow: realtimeNow) == nil)
  }

  @Test func stampsOnNeitherClockAreUnknown() {
    // From the future on both clocks.
    #expect(
      EdgeClockDomain.detect(
        eventStamp: Self.monotonicNow + .seconds(5), monotonicNow: Self.monotonicNow,
        realtimeNow: Self.realtimeNow) == nil)
    #expect(
      EdgeClockDomain.detect(
        eventStamp: Self.realtimeNow + .seconds(5), monotonicNow: Self.monotonicNow,
        realtimeNow: Self.realtimeNow) == nil)
    // Before boot on both.
    #expect(
      EdgeClockDomain.detect(
        eventStamp: Timestamp(nanoseconds: -1), monotonicNow: Self.monotonicNow,
        realtimeNow: Self.realtimeNow) == nil)
    // Between the uptime and the boot date: a garbage stamp.
    #expect(
      EdgeClockDomain.detect(
        eventStamp: Timestamp(nanoseconds: 1_000_000_000_000_000), monotonicNow: Self.monotonicNow,
        realtimeNow: Self.realtimeNow) == nil)
  }

  @Test func realtimeStampsMoveByTheOffsetBetweenTheClocks() {
    let converted = EdgeClockDomain.monotonicInstant(
      ofRealtimeStamp: Self.realtimeNow - .microseconds(1648), monotonicNow: Self.monotonicNow,
      realtimeNow: Self.realtimeNow)
    #expect(converted == Self.monotonicNow - .microseconds(1648))
  }
}

/// The line over a fake kernel: the event seam below `LinuxDataReadyLine`.
@Suite struct LinuxDataReadyLineWaitTests {
  final class FakeKernel {
    var monotonic = Timestamp(nanoseconds: 2_858_051_269)
    /// CLOCK_REALTIME − CLOCK_MONOTONIC.
    var realtimeOffsetNanoseconds: Int64 = 1_796_204_134_747_546_598
    /// Event stamps waiting in the kernel's queue, on whatever clock the kernel uses.
    var queued: [Timestamp] = []
    var timeouts: [Int64] = []
    /// Signals that interrupt the next waits, each after this long.
    var interruptions: [Duration] = []
    var waitErrors: [CInt] = []

    var realtime: Timestamp { monotonic.advanced(byNanoseconds: realtimeOffsetNanoseconds) }

    var calls: EdgeEventCalls {
      EdgeEventCalls(
        wait: { timeout in
          self.timeouts.append(timeout)
          if !self.waitErrors.isEmpty {
            Glibc.errno = self.waitErrors.removeFirst()
            return -1
          }
          if !self.interruptions.isEmpty {
            self.monotonic = self.monotonic + self.interruptions.removeFirst()
            Glibc.errno = EINTR
            return -1
          }
          if !self.queued.isEmpty { return 1 }
          self.monotonic = self.monotonic.advanced(byNanoseconds: timeout)
          return 0
        },
        read: { stamp in
          stamp = self.queued.removeFirst()
          return 0
        },
        monotonicNow: { self.monotonic },
        realtimeNow: { self.realtime })
    }
  }

  func line(_ kernel: FakeKernel) -> LinuxDataReadyLine {
    LinuxDataReadyLine(chip: .label("hil-imu"), line: .name("MPU_INT"), calls: kernel.calls)
  }

  @Test func waitsForTheTimeLeftUntilTheDeadline() throws {
    let kernel = FakeKernel()
    let line = line(kernel)
    let deadline = kernel.monotonic + .milliseconds(15)
    #expect(try line.waitForEdge(until: deadline) == .timedOut)
    #expect(kernel.timeouts == [15_000_000])
  }

  @Test func aDeadlineInThePastPolls() throws {
    let kernel = FakeKernel()
    let line = line(kernel)
    #expect(try line.waitForEdge(until: kernel.monotonic - .seconds(1)) == .timedOut)
    kernel.queued = [kernel.monotonic - .milliseconds(3)]
    #expect(try line.waitForEdge(until: .zero) == .edge(kernel.monotonic - .milliseconds(3)))
    #expect(kernel.timeouts == [0, 0])
  }

  @Test func aSignalWaitsAgainOnlyForWhatRemains() throws {
    let kernel = FakeKernel()
    let line = line(kernel)
    let deadline = kernel.monotonic + .milliseconds(10)
    kernel.interruptions = [.milliseconds(3), .milliseconds(4)]
    #expect(try line.waitForEdge(until: deadline) == .timedOut)
    #expect(kernel.timeouts == [10_000_000, 7_000_000, 3_000_000])
    #expect(kernel.monotonic == deadline)
  }

  @Test func monotonicStampsAreReturnedAsTheKernelGaveThem() throws {
    let kernel = FakeKernel()
    let line = line(kernel)
    let first = Timestamp(nanoseconds: 2_856_403_700)
    kernel.queued = [first, first + .milliseconds(10)]
    #expect(try line.waitForEdge(until: kernel.monotonic + .seconds(1)) == .edge(first))
    #expect(line.clockDomain == .monotonic)
    #expect(
      try line.waitForEdge(until: kernel.monotonic + .seconds(1))
        == .edge(first + .milliseconds(10)))
  }

  /// Kernels before 5.7 stamp CLOCK_REALTIME.
  @Test func realtimeStampsAreMovedToTheMonotonicClock() throws {
    let kernel = FakeKernel()
    let line = line(kernel)
    let edge = kernel.monotonic - .microseconds(1648)
    kernel.queued = [edge.advanced(byNanoseconds: kernel.realtimeOffsetNanoseconds)]
    #expect(try line.waitForEdge(until: kernel.monotonic + .seconds(1)) == .edge(edge))
    #expect(line.clockDomain == .realtime)

    // The date is set an hour forward between two edges: the offset is measured per event.
    kernel.monotonic = kernel.monotonic + .milliseconds(10)
    kernel.realtimeOffsetNanoseconds += 3_600_000_000_000
    let next = kernel.monotonic - .microseconds(500)
    kernel.queued = [next.advanced(byNanoseconds: kernel.realtimeOffsetNanoseconds)]
    #expect(try line.waitForEdge(until: kernel.monotonic + .seconds(1)) == .edge(next))
  }

  @Test func aStampOnNoKnownClockIsAnErrorNamingTheLine() {
    let kernel = FakeKernel()
    let line = line(kernel)
    kernel.queued = [kernel.monotonic + .seconds(3600)]
    #expect(throws: DataReadyError(.unknownClockDomain, chip: "hil-imu", line: "MPU_INT")) {
      try line.waitForEdge(until: kernel.monotonic + .seconds(1))
    }
  }

  @Test func aFailedWaitNamesTheChipAndLine() {
    let kernel = FakeKernel()
    let line = line(kernel)
    kernel.waitErrors = [EIO]
    #expect(
      throws: DataReadyError(.ioError, errno: .ioError, chip: "hil-imu", line: "MPU_INT")
    ) {
      try line.waitForEdge(until: kernel.monotonic + .seconds(1))
    }
  }
}
