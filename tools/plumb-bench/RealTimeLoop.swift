import ByteFormats
import Firmware
import HardwareAbstraction
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Wake-up lateness of each edge, ns, in memory allocated once (the loop must not allocate).
final class LatenessLog {
  let values: UnsafeMutableBufferPointer<Int64>
  private(set) var count = 0

  init(capacity: Int) {
    values = .allocate(capacity: capacity)
    values.initialize(repeating: 0)
  }

  deinit { values.deallocate() }

  func append(_ value: Int64) {
    guard count < values.count else { return }
    values[count] = value
    count += 1
  }

  var sorted: [Int64] { Array(values[0..<count]).sorted() }
}

/// Where the simulated world stands against the wall clock (set once start-up is over).
final class Pacing {
  var armed = false
  var simulatedStart = Timestamp.zero
  var realStart: Int64 = 0
  let log: LatenessLog

  init(log: LatenessLog) { self.log = log }
}

/// The simulated data-ready line held to the wall: each wait lets the simulated world run to
/// its next edge on the manual clock (instantly), then sleeps on CLOCK_MONOTONIC until that
/// edge's place in real time (`clock_nanosleep`, absolute, as cyclictest does) and logs how
/// late the thread actually woke. The loop then reads, estimates, encodes and writes as on a
/// board, where the kernel would have woken it at the edge. Before `pacing.armed` (start-up)
/// it passes the waits straight through.
struct PacedLine: DataReadyLine {
  let base: SimulatedDataReadyLine
  let pacing: Pacing

  mutating func waitForEdge(until deadline: Timestamp) throws(DataReadyError) -> EdgeWait {
    let wait = try base.waitForEdge(until: deadline)
    guard pacing.armed else { return wait }
    let scheduled = pacing.realStart + base.clock.now().nanoseconds(since: pacing.simulatedStart)
    Clock.sleep(untilMonotonic: scheduled)
    let woke = Clock.monotonic()
    if case .edge = wait { pacing.log.append(woke - scheduled) }
    return wait
  }
}

/// Which scheduling the real-time run asks for.
enum LoopPolicy: String {
  /// SCHED_FIFO priority 80, memory locked, /dev/cpu_dma_latency held at 0 (as cyclictest).
  case fifo
  /// The default: SCHED_OTHER, default timer slack, nothing held.
  case other
}

/// Item 5: the firmware loop on the simulated data-ready line with the real clock for
/// `seconds`: the simulated board (handheld motion) paced against CLOCK_MONOTONIC, frames
/// written to /dev/null (one write() per frame, as to a UART), wake lateness of every edge.
func realTimeLoop(policy: LoopPolicy, seconds: Double) throws -> GroupResult {
  var setup: [String] = []
  var latencyHold: Int32 = -1
  if policy == .fifo {
    var parameters = sched_param()
    parameters.sched_priority = 80
    guard sched_setscheduler(0, SCHED_FIFO, &parameters) == 0 else {
      throw BenchError(
        "SCHED_FIFO refused (\(String(cString: strerror(errno)))): run as root or with CAP_SYS_NICE"
      )
    }
    setup.append("SCHED_FIFO priority 80")
    if mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 {
      setup.append("mlockall")
    } else {
      setup.append("mlockall refused")
    }
    // As cyclictest does by default: a PM QoS request of 0 µs keeps idle CPUs out of deep
    // C-states for as long as the file stays open.
    latencyHold = open("/dev/cpu_dma_latency", O_RDWR | O_CLOEXEC)
    var zero: Int32 = 0
    if latencyHold >= 0, write(latencyHold, &zero, 4) == 4 {
      setup.append("/dev/cpu_dma_latency held at 0")
    } else {
      setup.append("/dev/cpu_dma_latency not available (\(String(cString: strerror(errno))))")
    }
  } else {
    setup.append("SCHED_OTHER, default timer slack, /dev/cpu_dma_latency not held")
  }
  defer { if latencyHold >= 0 { close(latencyHold) } }

  let clock = ManualClock()
  let board = SimulatedMPU6050Board(
    motion: HandheldMotion(seconds: seconds + 60, seed: 1), unit: .typical(seed: 1),
    clock: clock)
  let log = LatenessLog(capacity: Int(seconds * 150) + 1000)
  let pacing = Pacing(log: log)
  let port = try DescriptorSink(path: "/dev/null")
  var settings = FirmwareSettings()
  settings.selfTest = false
  var loop = try FirmwareLoop(
    bus: board.bus, line: PacedLine(base: board.line, pacing: pacing), port: port, clock: clock,
    settings: settings)
  try loop.start()
  pacing.simulatedStart = clock.now()
  pacing.realStart = Clock.monotonic()
  pacing.armed = true
  let end = pacing.realStart + Int64(seconds * 1e9)
  let cpuBegin = Clock.threadCPU()
  while Clock.monotonic() < end {
    loop.step()
  }
  let cpu = Double(Clock.threadCPU() - cpuBegin) * 1e-9
  loop.finish()
  guard log.count > 0 else { throw BenchError("the paced loop saw no edges") }
  let sorted = log.sorted
  let prefix = policy == .fifo ? "loop_lateness_" : "loop_lateness_other_"
  let method =
    "\(sorted.count) edges in one \(Int(seconds)) s run, \(setup.joined(separator: ", ")); nearest-rank percentiles"
  var result = GroupResult()
  for (label, p) in [("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9)] {
    result.figures.append(
      Figure(prefix + label + "_us", Double(percentile(sorted, p)) * 1e-3, "us", method: method))
  }
  result.figures.append(
    Figure(prefix + "max_us", Double(sorted.last!) * 1e-3, "us", method: method))
  let late = sorted.filter { $0 > 10_000_000 }.count
  result.notes.append(
    "loop (\(policy.rawValue)): \(loop.status.samples) samples, \(loop.status.missedSamples) missed, \(late) wake-ups more than one period late, \(NumberText.fixed(cpu / seconds * 100, 2)) % of a core for the loop thread (simulated chip included)"
  )
  return result
}
