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

@Suite struct LinuxDataReadyLineOpeningTests {
  func expectChipMissing(_ chip: GPIOChipSelector, named name: String) {
    #expect {
      try LinuxDataReadyLine(chip: chip, line: .offset(17))
    } throws: { error in
      guard let error = error as? DataReadyError else { return false }
      return error.kind == .chipMissing && error.chip == name && error.line == "17"
        && error.description.contains(name) && error.description.contains("gpiodetect")
    }
  }

  @Test func aMissingChipPathIsNamed() {
    expectChipMissing(.path("/dev/gpiochip99"), named: "/dev/gpiochip99")
  }

  @Test func aMissingChipNameIsNamed() {
    expectChipMissing(.name("gpiochip99"), named: "gpiochip99")
  }

  @Test func aLabelNoChipHasIsNamed() {
    expectChipMissing(.label("plumb-no-such-chip"), named: "plumb-no-such-chip")
  }

  @Test func aPathThatIsNotAGPIOChipIsAMissingChip() {
    expectChipMissing(.path("/dev/null"), named: "/dev/null")
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
