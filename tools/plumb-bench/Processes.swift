import ByteFormats

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Item 6: `plumb run` for `seconds` of real time (frames to /dev/null), twice.
///
/// - On the simulated board: its peak resident set (`rss_mb`) and its CPU time per second
///   (`cpu_percent_at_100hz_simulated_board`), which includes the simulated chip's physics
///   (motion truth, noise, DLPF at 1 kHz): about five times the firmware's own work per sample.
/// - On a recording of that board replayed at its own pace (`plumb run --replay REC
///   --realtime`): the firmware — driver, loop, estimator, encoder, serial writes, command poll,
///   one wake-up per sample — with recorded register bytes in place of the chip:
///   `cpu_percent_at_100hz`, the figure with the target. On a board the chip is hardware; the
///   replay leaves out the I2C and GPIO system calls a board adds (an ioctl for the burst, a
///   read for the edge), so a board costs that much more.
func processBenchmark(plumb: String, board: String, seconds: Int) throws -> GroupResult {
  try requireBuilt(plumb, product: "plumb")
  let arguments = [
    "run", "--board", board, "--duration", String(seconds), "--format", "binary", "--serial",
    "/dev/null",
  ]
  let child = try runChild(plumb, arguments)
  guard child.exitedNormally else {
    throw BenchError(
      "plumb run exited with \(child.status): \(child.standardError.suffix(600))")
  }
  let wall = Double(child.wallNanoseconds) * 1e-9
  guard child.peakHWMKilobytes > 0 else {
    throw BenchError("plumb run's memory could not be read from /proc while it ran")
  }
  let rssKiB = child.peakHWMKilobytes
  var result = GroupResult()
  let command = "plumb " + arguments.joined(separator: " ")
  result.figures.append(
    Figure(
      "rss_mb", Double(rssKiB) / 1024, "MiB",
      method:
        "one \(seconds) s run of `\(command)`: its peak resident set, VmHWM in /proc/PID/status read every second (getrusage's ru_maxrss is not used: after posix_spawn it holds plumb-bench's own peak)"
    ))
  result.figures.append(
    Figure(
      "cpu_percent_at_100hz_simulated_board",
      Double(child.cpuNanoseconds) * 1e-9 / wall * 100, "%", decimals: 2,
      method:
        "the same run: user + system CPU time (getrusage of the reaped child) over \(NumberText.fixed(wall, 1)) s of wall time, start-up included; the simulated chip's physics runs in the process too"
    ))
  result.figures.append(try pacedReplayCPU(plumb: plumb, board: board, seconds: seconds))
  // The steady state, from /proc/PID/stat after the first 5 s (10 ms tick resolution).
  if let first = child.cpuSamples.first(where: { $0.seconds >= 5 }),
    let last = child.cpuSamples.last, last.seconds > first.seconds + 10
  {
    let share =
      Double(last.cpuNanoseconds - first.cpuNanoseconds) * 1e-9 / (last.seconds - first.seconds)
    result.notes.append(
      "plumb run: steady state \(NumberText.fixed(share * 100, 2)) % of a core between \(NumberText.fixed(first.seconds, 0)) s and \(NumberText.fixed(last.seconds, 0)) s (/proc/PID/stat, 10 ms ticks)"
    )
  }
  return result
}

/// `cpu_percent_at_100hz`: records `seconds` + 2 of the board on the manual clock (fast), then
/// replays the recording at its own pace and takes the replay's CPU time per second.
func pacedReplayCPU(plumb: String, board: String, seconds: Int) throws -> Figure {
  let recording = "/tmp/plumb-bench-\(getpid())-paced.plumbraw"
  defer { unlink(recording) }
  let record = try runChild(
    plumb,
    [
      "run", "--board", board, "--fast", "--duration", String(seconds + 2), "--format", "binary",
      "--serial", "/dev/null", "--record", recording,
    ])
  guard record.exitedNormally else {
    throw BenchError(
      "plumb run --record exited with \(record.status): \(record.standardError.suffix(600))")
  }
  let arguments = ["run", "--replay", recording, "--realtime", "--serial", "/dev/null"]
  let child = try runChild(plumb, arguments)
  guard child.exitedNormally else {
    throw BenchError(
      "plumb run --replay exited with \(child.status): \(child.standardError.suffix(600))")
  }
  let wall = Double(child.wallNanoseconds) * 1e-9
  return Figure(
    "cpu_percent_at_100hz", Double(child.cpuNanoseconds) * 1e-9 / wall * 100, "%",
    decimals: 2,
    method:
      "`plumb \(arguments.joined(separator: " "))` of a \(seconds + 2) s recording of the simulated board: user + system CPU time over \(NumberText.fixed(wall, 1)) s of wall time, loading and start-up included. The firmware with recorded register bytes in place of the chip (no simulated physics; a board adds an I2C ioctl and a GPIO read per sample)"
  )
}

/// `idle_loop_cpu_percent_at_100hz` (a reference for `cpu_percent_at_100hz`): a thread that
/// does nothing but sleep to the next 10 ms deadline on CLOCK_MONOTONIC (absolute
/// `clock_nanosleep`, as the loop and cyclictest do) for `seconds`: its CPU time per second.
/// What one wake-up a period costs on this machine before any work is done (on a VM, the
/// timer's exits to the hypervisor are most of it).
func idleLoopBenchmark(seconds: Int) -> GroupResult {
  let periods = seconds * 100
  var deadline = Clock.monotonic()
  let begin = Clock.threadCPU()
  for _ in 0..<periods {
    deadline += 10_000_000
    Clock.sleep(untilMonotonic: deadline)
  }
  let cpu = Double(Clock.threadCPU() - begin) * 1e-9
  var result = GroupResult()
  result.figures.append(
    Figure(
      "idle_loop_cpu_percent_at_100hz", cpu / Double(seconds) * 100, "%", decimals: 2,
      method:
        "one \(seconds) s run of a thread that only sleeps to the next 10 ms deadline (absolute clock_nanosleep on CLOCK_MONOTONIC, SCHED_OTHER): its CPU time (CLOCK_THREAD_CPUTIME_ID) per second, \(NumberText.fixed(cpu / Double(periods) * 1e6, 1)) µs per wake-up"
    ))
  return result
}

/// `cyclictest -m -p 80 -i 10000 -D <seconds>` with a 1 µs histogram: p50/p99/p99.9/max.
func cyclictestBenchmark(seconds: Int) throws -> GroupResult {
  var result = GroupResult()
  guard let cyclictest = findOnPath("cyclictest") else {
    result.missing.append(
      Missing(
        name: "cyclictest_p99_us",
        reason: "cyclictest is not installed (apt-get install rt-tests; `make bench` tries to)"))
    return result
  }
  let histogramMicroseconds = 100_000
  let child = try runChild(
    cyclictest,
    [
      "-m", "-p", "80", "-i", "10000", "-D", String(seconds), "-q", "-h",
      String(histogramMicroseconds),
    ])
  guard child.exitedNormally else {
    result.missing.append(
      Missing(
        name: "cyclictest_p99_us",
        reason:
          "cyclictest exited with \(child.status): \(child.standardError.split(separator: "\n").last ?? "")"
      ))
    return result
  }
  var counts: [(latency: Int, count: Int)] = []
  var maximum = 0
  var overflows = 0
  var dmaNote = ""
  for line in child.standardOutput.split(separator: "\n") {
    if line.hasPrefix("# /dev/cpu_dma_latency") { dmaNote = String(line.dropFirst(2)) }
    if line.hasPrefix("# Max Latencies:") {
      maximum = Int(line.split(separator: " ").last ?? "") ?? 0
    }
    if line.hasPrefix("# Histogram Overflows:") {
      overflows = Int(line.split(separator: " ").last ?? "") ?? 0
    }
    guard !line.hasPrefix("#") else { continue }
    let parts = line.split(separator: " ")
    if parts.count >= 2, let latency = Int(parts[0]), let count = Int(parts[1]), count > 0 {
      counts.append((latency, count))
    }
  }
  let total = counts.reduce(0) { $0 + $1.count } + overflows
  guard total > 0 else {
    result.missing.append(
      Missing(name: "cyclictest_p99_us", reason: "cyclictest printed no histogram"))
    return result
  }
  func percentile(_ p: Double) -> Int {
    let rank = Int((p / 100 * Double(total)).rounded(.up))
    var seen = 0
    for (latency, count) in counts {
      seen += count
      if seen >= rank { return latency }
    }
    return maximum  // in the overflow: at least the histogram's end, at most the maximum
  }
  let method =
    "one \(seconds) s run of `cyclictest -m -p 80 -i 10000 -D \(seconds) -q -h \(histogramMicroseconds)` (\(total) wake-ups; \(dmaNote.isEmpty ? "cpu_dma_latency as cyclictest sets it" : dmaNote)); nearest-rank percentiles of its 1 µs histogram"
  result.figures.append(
    Figure("cyclictest_p50_us", Double(percentile(50)), "us", decimals: 0, method: method))
  result.figures.append(
    Figure("cyclictest_p99_us", Double(percentile(99)), "us", decimals: 0, method: method))
  result.figures.append(
    Figure("cyclictest_p99_9_us", Double(percentile(99.9)), "us", decimals: 0, method: method))
  result.figures.append(
    Figure("cyclictest_max_us", Double(maximum), "us", decimals: 0, method: method))
  return result
}

/// Item 1, measured by `tools/bench-estimator` (another part of issue 9): runs it when built
/// and takes its `name value unit` lines.
func estimatorBenchmark(executable: String?) throws -> GroupResult {
  var result = GroupResult()
  let names = ["estimator_update_ns", "reference_cf_update_ns", "estimator_cost_ratio"]
  guard let executable, access(executable, X_OK) == 0 else {
    for name in names {
      result.missing.append(
        Missing(
          name: name,
          reason:
            "tools/bench-estimator is not in this tree or not built (swift build -c release --product bench-estimator)"
        ))
    }
    return result
  }
  let child = try runChild(executable, [])
  guard child.exitedNormally else {
    throw BenchError(
      "\(executable) exited with \(child.status): \(child.standardError.suffix(400))")
  }
  var found: Set<String> = []
  for line in child.standardOutput.split(separator: "\n") {
    let parts = line.split(separator: " ")
    guard parts.count == 3, let value = Double(parts[1]) else { continue }
    let name = String(parts[0])
    let decimals = parts[1].split(separator: ".").dropFirst().first?.count ?? 0
    result.figures.append(
      Figure(
        name, value, String(parts[2]), decimals: decimals,
        method: "tools/bench-estimator (its own medians; see tools/bench-estimator/README.md)"))
    found.insert(name)
  }
  for name in names where !found.contains(name) {
    result.missing.append(Missing(name: name, reason: "\(executable) did not print it"))
  }
  return result
}
