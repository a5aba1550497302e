import ByteFormats
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The process's memory, from `/proc/self/status` (Linux): the resident set now and its peak.
public struct MemoryUsage: Hashable, Sendable {
  /// `VmRSS`, KiB.
  public var residentKilobytes: Int
  /// `VmHWM` (the resident set's high-water mark), KiB.
  public var peakResidentKilobytes: Int

  /// Reads `/proc/self/status`; `nil` where there is none.
  public static func current() -> MemoryUsage? {
    guard let bytes = readBytes("/proc/self/status") else { return nil }
    var rss: Int?
    var hwm: Int?
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      func kilobytes() -> Int? {
        line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap {
          Int($0.filter { $0 != "\t" })
        }
      }
      if line.hasPrefix("VmRSS:") { rss = kilobytes() }
      if line.hasPrefix("VmHWM:") { hwm = kilobytes() }
    }
    guard let rss, let hwm else { return nil }
    return MemoryUsage(residentKilobytes: rss, peakResidentKilobytes: hwm)
  }
}

/// One memory reading during a soak.
public struct MemorySample: Hashable, Sendable {
  /// Simulated time, seconds.
  public var seconds: Double
  public var usage: MemoryUsage

  public init(seconds: Double, usage: MemoryUsage) {
    self.seconds = seconds
    self.usage = usage
  }
}

/// The soak: hours of simulated time at full speed through the real driver and loop, with the
/// `soak` fault plan (random NACKs and EIO on the bus, lost, late, duplicated and jittered edges,
/// a brown-out every ten minutes), serial unplugs, garbage on the command input and a `status`
/// command now and then — all seeded.
public enum Soak {
  /// The options for a soak of `seconds` from `seed`: the handheld scenario (rotations and
  /// irregular rests, a warming die) with the random stresses spread over the whole run — an
  /// unplug (0.5–8 s) in every 40 minutes and a burst of garbage (1–5 s at 300–3000 bytes/s)
  /// in every 20 minutes, at seeded moments; a short soak has at least three of each.
  public static func options(seconds: Double, seed: UInt64 = 1) -> HILOptions {
    var options = HILOptions(scenario: "handheld", faults: "soak", seconds: seconds, seed: seed)
    options.faultStartSeconds = 5
    var random = SeededGenerator(seed: seed, stream: 901)
    let scale = min(1, seconds / 86_400)
    func uniform(_ range: ClosedRange<Double>) -> Double {
      range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    // The run is cut into equal windows, one stress at a seeded time in each.
    let unplugs = max(3, Int(seconds / 2400))
    var window = (seconds - 20) / Double(unplugs)
    for k in 0..<unplugs {
      let length = uniform(0.5...min(8, max(0.5, window / 4)))
      let at = 10 + Double(k) * window + uniform(0...max(0, window - length - 5))
      options.serialUnplugs.append(SerialUnplug(atSeconds: at, forSeconds: length))
    }
    let bursts = max(3, Int(seconds / 1200))
    window = (seconds - 20) / Double(bursts)
    for k in 0..<bursts {
      let length = uniform(1...min(5, max(1, window / 4)))
      let at = 8 + Double(k) * window + uniform(0...max(0, window - length - 5))
      options.commandGarbage.append(
        GarbageBurst(atSeconds: at, forSeconds: length, bytesPerSecond: Int(uniform(300...3000))))
    }
    var t = 10.0
    while t < seconds - 2 {
      options.hostCommands.append(ScheduledCommand(atSeconds: t, line: "status"))
      t += max(30, 900 * scale)
    }
    options.plotPoints = 1440
    return options
  }

  /// How much the resident set may grow after the first simulated hour (or the first tenth of a
  /// shorter soak), KiB: 2 MiB. Everything a run keeps is allocated up front or bounded (binned
  /// plots, a histogram, the ledger's window of production times, at most 1000 fault
  /// episodes); what remains is the allocator's own noise.
  public static let memoryGrowthBoundKilobytes = 2048
}

/// Whether a soak passed, and the lines that say what it did.
public struct SoakVerdict: Sendable {
  /// Every check, in order, passed or failed with why (`plumb-hil soak --junit` writes each as
  /// a test case).
  public var checks: [HILCheck] = []
  public let result: HILResult
  public let memory: [MemorySample]
  /// The resident set's growth after the first simulated hour (the first reading of a shorter
  /// soak), KiB.
  public var residentGrowthKilobytes: Int?

  /// Why the checks that failed did, in order.
  public var failures: [String] {
    checks.compactMap { if case .failed(let why) = $0.outcome { why } else { nil } }
  }
  public var passed: Bool { failures.isEmpty }

  public init(result: HILResult, memory: [MemorySample], requestedSeconds: Double) {
    self.result = result
    self.memory = memory
    let a = result.accounting
    func check(_ name: String, _ failure: String?) {
      checks.append(HILCheck(name: name, outcome: failure.map { .failed($0) } ?? .passed))
    }
    check(
      "the run reached its length",
      result.seconds < requestedSeconds - 1
        ? "the run stopped at \(NumberText.fixed(result.seconds, 1)) s of \(requestedSeconds)" : nil
    )
    let last = result.lastFrameSeconds
    check(
      "frames reached the host to the end",
      last == nil
        ? "no frame reached the host"
        : last! < result.seconds - 60
          ? "no frame reached the host after \(NumberText.fixed(last!, 1)) s" : nil
    )
    check(
      "no sample lost silently",
      a.silentLosses > 0 ? "\(a.silentLosses) samples lost silently" : nil)
    check(
      "every sample reconciled", a.isBalanced ? nil : "the reconciliation does not balance")
    check(
      "every data-ready edge reconciled",
      result.injected.edges.isReconciled ? nil : "the data-ready line's edges do not reconcile")
    // Pulling the cable can cut the frame the UART is sending: the host gets its head, and the
    // decoder rejects it (a CRC error or a malformed frame). At most one per unplug; any other
    // damage is a fault.
    let damaged = result.link.crcErrors + result.link.malformed
    check(
      "no frame damaged but by a serial unplug",
      damaged > result.status.serialDisconnects
        ? "\(damaged) frames arrived damaged, more than the \(result.status.serialDisconnects) "
          + "serial unplugs can cut" : nil)
    let baseline =
      memory.first { $0.seconds >= 3600 - 61 } ?? (requestedSeconds < 3600 ? memory.first : nil)
    if let baseline {
      let later = memory.filter { $0.seconds > baseline.seconds }
      let peak = later.map(\.usage.residentKilobytes).max() ?? baseline.usage.residentKilobytes
      residentGrowthKilobytes = peak - baseline.usage.residentKilobytes
      check(
        "resident memory grew by at most \(Soak.memoryGrowthBoundKilobytes) KiB",
        peak - baseline.usage.residentKilobytes > Soak.memoryGrowthBoundKilobytes
          ? "VmRSS grew by \(peak - baseline.usage.residentKilobytes) KiB after "
            + "\(NumberText.fixed(baseline.seconds / 3600, 2)) h (bound \(Soak.memoryGrowthBoundKilobytes) KiB)"
          : nil)
    }
  }

  /// The summary a person reads.
  public func lines(wallSeconds: Double) -> [String] {
    let r = result
    let a = r.accounting
    let i = r.injected
    var lines = [
      "soak: \(NumberText.fixed(r.seconds / 3600, 3)) h simulated in \(NumberText.fixed(wallSeconds, 1)) s "
        + "(\(NumberText.fixed(r.seconds / max(wallSeconds, 1e-9), 0))× real time), seed \(r.seed)",
      "soak: frames \(r.telemetryFrames); samples produced \(a.produced), delivered "
        + "\(a.delivered), counted missed \(a.countedMissed) (of which the chip never produced "
        + "\(a.countedButNotProduced)), lost in the link \(a.lostInLink), start-up \(a.startUp), "
        + "warm-up \(a.warmUp), in flight \(a.inFlightAtEnd), silent \(a.silentLosses); frames "
        + "damaged by unplugs \(r.link.crcErrors + r.link.malformed)",
      "soak: injected bus NACK \(i.busFaults.notAcknowledged), EIO \(i.busFaults.ioError), "
        + "edges missing \(i.edgeFaults.missing), late \(i.edgeFaults.late), duplicated "
        + "\(i.edgeFaults.duplicated), brown-outs \(i.chip.brownOuts); driver retries "
        + "\(r.driver.retries), re-initialisations \(r.driver.reinitializationsCompleted); "
        + "serial unplugs \(r.status.serialDisconnects), reopens \(r.status.serialReopens); "
        + "garbage bytes \(r.garbageBytesSent), error replies \(r.repliesError), OK replies "
        + "\(r.repliesOK); fault episodes \(r.episodeCount)",
    ]
    if let first = memory.first, let last = memory.last {
      let peak = memory.map(\.usage.residentKilobytes).max() ?? 0
      lines.append(
        "soak: memory VmRSS \(first.usage.residentKilobytes) KiB at "
          + "\(NumberText.fixed(first.seconds / 3600, 2)) h, \(last.usage.residentKilobytes) KiB at "
          + "\(NumberText.fixed(last.seconds / 3600, 2)) h, peak \(peak) KiB; VmHWM "
          + "\(last.usage.peakResidentKilobytes) KiB; growth after the first hour "
          + "\(residentGrowthKilobytes.map { "\($0) KiB" } ?? "n/a") "
          + "(bound \(Soak.memoryGrowthBoundKilobytes) KiB)")
    }
    lines.append(
      "soak: accuracy inclination RMS \(NumberText.fixed(r.accuracy.inclinationRMSDegrees, 3))°, max "
        + "\(NumberText.fixed(r.accuracy.inclinationMaximumDegrees, 2))°")
    lines.append(passed ? "soak: PASS" : "soak: FAIL: " + failures.joined(separator: "; "))
    return lines
  }
}
