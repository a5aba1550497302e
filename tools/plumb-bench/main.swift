// plumb-bench: Plumb's benchmarks (issue 9). `make bench` builds it in release mode and runs
// `plumb-bench all`, which prints one `name value unit` line per figure and rewrites
// BENCHMARKS.md. Each group can also run alone (`plumb-bench replay`, …). Speed is measured
// here, never in tests.

import ByteFormats
import CommandLineSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Prints a group's figures (stdout) and what it could not measure (stderr).
func emit(_ result: GroupResult) {
  for figure in result.figures { say(figure.line) }
  for missing in result.missing {
    log("plumb-bench: \(missing.name) not measured: \(missing.reason)")
  }
}

/// Prints a group run in a child process: figures on stdout, notes and methods on stderr
/// (`plumb-bench: note: …`, `plumb-bench: method NAME: …`) for the parent to read back.
func emitForParent(_ result: GroupResult) {
  emit(result)
  for figure in result.figures { log("plumb-bench: method \(figure.name): \(figure.method)") }
  for note in result.notes { log("plumb-bench: note: \(note)") }
}

/// Reads back what `emitForParent` printed in a child.
func parseChild(_ child: ChildOutcome) -> GroupResult {
  var result = GroupResult()
  var methods: [String: String] = [:]
  for line in child.standardError.split(separator: "\n") {
    if line.hasPrefix("plumb-bench: note: ") {
      result.notes.append(String(line.dropFirst("plumb-bench: note: ".count)))
    } else if line.hasPrefix("plumb-bench: method ") {
      let rest = line.dropFirst("plumb-bench: method ".count)
      if let colon = rest.firstIndex(of: ":") {
        methods[String(rest[..<colon])] = String(rest[rest.index(after: colon)...]).trimmingSpaces
      }
    }
  }
  for line in child.standardOutput.split(separator: "\n") {
    let parts = line.split(separator: " ")
    guard parts.count == 3, let value = Double(parts[1]) else { continue }
    let decimals = parts[1].split(separator: ".").dropFirst().first?.count ?? 0
    let name = String(parts[0])
    result.figures.append(
      Figure(name, value, String(parts[2]), decimals: decimals, method: methods[name] ?? ""))
  }
  return result
}

let passesOption = OptionSpec.option(
  "passes", value: "N", help: "passes per throughput figure; the median is quoted", default: "7")
let replaySecondsOption = OptionSpec.option(
  "replay-seconds", value: "S", help: "simulated seconds recorded for the replay benchmark",
  default: "1800")
let realSecondsOption = OptionSpec.option(
  "seconds", value: "S", help: "length of each real-time run", default: "60")
let plumbOption = OptionSpec.option(
  "plumb", value: "PATH", help: "the plumb executable (release build)",
  default: ".build/release/plumb")
let boardOption = OptionSpec.option(
  "board", value: "PATH", help: "the simulated board file", default: "Boards/simulated.json")
let estimatorOption = OptionSpec.option(
  "estimator", value: "PATH", help: "tools/bench-estimator's executable (release build)",
  default: ".build/release/bench-estimator")

func passes(_ arguments: ParsedArguments) throws -> Int {
  try arguments.integer("passes", in: 1...101) ?? 7
}

func workload(_ arguments: ParsedArguments) throws -> Workload {
  let seconds = try arguments.double("replay-seconds", in: 20...86_400) ?? 1800
  log("plumb-bench: recording \(Int(seconds)) s of the simulated board for the replay")
  return try Workload.record(seconds: seconds, keepFrames: 20_000)
}

let replayCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench replay",
    abstract: "replay_samples_per_second: a recording through the replay chip, driver and loop",
    options: [passesOption, replaySecondsOption])
) { arguments in
  emit(try replayBenchmark(try workload(arguments), passes: try passes(arguments)))
}

let simulationCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench simulation",
    abstract: "simulation_samples_per_second: the physical chip model through driver and loop",
    options: [passesOption])
) { arguments in
  emit(try simulationBenchmark(seconds: 600, passes: try passes(arguments)))
}

let codecCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench codec",
    abstract: "encode and decode ns per frame for binary, text and MAVLink",
    options: [passesOption])
) { arguments in
  let frames = try Workload.record(seconds: 200, keepFrames: 20_000).frames
  emit(try codecBenchmark(frames, passes: try passes(arguments)))
}

let allanCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench allan", abstract: "allan_2h_ms: Allan deviation of 2 h at 100 Hz, six axes",
    options: [
      .option("passes", value: "N", help: "runs; the median is quoted", default: "3")
    ])
) { arguments in
  emit(try allanBenchmark(passes: try arguments.integer("passes", in: 1...101) ?? 3))
}

let plumbCalOption = OptionSpec.option(
  "plumb-cal", value: "PATH", help: "the plumb-cal executable (release build)",
  default: ".build/release/plumb-cal")
let allanMemoryCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench allan-memory",
    abstract:
      "allan_rss_mb, allan_gyro_rss_mb: peak memory of plumb-cal allan and gyro on 2 h at 1 kHz",
    discussion: """
      Makes the recording once (plumb record --fast, the simulated board lying still at 1 kHz,
      7.2 M samples) in ${XDG_CACHE_HOME:-$HOME/.cache}/plumb, then runs plumb-cal allan and
      plumb-cal gyro on it under /usr/bin/time -v.
      """,
    options: [plumbCalOption, plumbOption, boardOption])
) { arguments in
  emit(try allanMemoryBenchmark(arguments))
}

/// `allanMemoryBenchmark` with the executables and board the options name.
func allanMemoryBenchmark(_ arguments: ParsedArguments) throws -> GroupResult {
  try allanMemoryBenchmark(
    plumbCal: arguments.value("plumb-cal") ?? ".build/release/plumb-cal",
    plumb: arguments.value("plumb") ?? ".build/release/plumb",
    board: arguments.value("board") ?? "Boards/simulated.json")
}

let loopCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench loop",
    abstract: "wake lateness of the firmware loop held to the real clock",
    discussion: """
      The simulated board's world runs on its manual clock; each data-ready wait sleeps on
      CLOCK_MONOTONIC until the edge's place in real time and logs how late the loop woke.
      --policy fifo asks for SCHED_FIFO 80, mlockall and /dev/cpu_dma_latency = 0 (root or
      CAP_SYS_NICE); --policy other runs with the defaults.
      """,
    options: [
      .option("policy", value: "fifo|other", help: "scheduling", default: "fifo"),
      realSecondsOption,
    ])
) { arguments in
  let policy = LoopPolicy(
    rawValue: try arguments.choice("policy", from: ["fifo", "other"]) ?? "fifo")!
  let seconds = try arguments.double("seconds", in: 1...3600) ?? 60
  emitForParent(try realTimeLoop(policy: policy, seconds: seconds))
}

let processCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench process",
    abstract:
      "rss_mb and CPU at 100 Hz of `plumb run`: the simulated board, and a paced replay of it",
    options: [plumbOption, boardOption, realSecondsOption])
) { arguments in
  emit(
    try processBenchmark(
      plumb: arguments.value("plumb") ?? ".build/release/plumb",
      board: arguments.value("board") ?? "Boards/simulated.json",
      seconds: try arguments.integer("seconds", in: 1...3600) ?? 60))
}

let cyclictestCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench cyclictest",
    abstract: "cyclictest_p99_us: cyclictest -m -p 80 -i 10000 on this machine",
    options: [realSecondsOption])
) { arguments in
  emit(try cyclictestBenchmark(seconds: try arguments.integer("seconds", in: 1...3600) ?? 60))
}

let idleCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench idle",
    abstract: "idle_loop_cpu_percent_at_100hz: what sleeping at 100 Hz costs, for reference",
    options: [
      .option("seconds", value: "S", help: "length of the run", default: "20")
    ])
) { arguments in
  emit(idleLoopBenchmark(seconds: try arguments.integer("seconds", in: 1...3600) ?? 20))
}

let estimatorCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench estimator",
    abstract: "estimator_update_ns and friends, from tools/bench-estimator",
    options: [estimatorOption])
) { arguments in
  emit(
    try estimatorBenchmark(
      executable: arguments.value("estimator") ?? ".build/release/bench-estimator"))
}

/// One replay, for `valgrind --tool=callgrind --toggle-collect='*profiledReplayPass*'`: the
/// instruction counts of the replay path alone, exact on any machine.
@inline(never)
func profiledReplayPass(_ workload: Workload, into sink: MemorySink) throws -> ReplayOutcome {
  try replay(workload.recording, into: sink)
}

let profileCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench profile-replay",
    abstract: "one replay pass, for callgrind (see tools/plumb-bench/README.md)",
    options: [
      .option(
        "replay-seconds", value: "S", help: "simulated seconds recorded", default: "600")
    ])
) { arguments in
  let seconds = try arguments.double("replay-seconds", in: 20...86_400) ?? 600
  let workload = try Workload.record(seconds: seconds, keepFrames: 0)
  let sink = MemorySink(capacity: workload.liveOutput.count + 1 << 20)
  let outcome = try profiledReplayPass(workload, into: sink)
  guard sink.bytes.elementsEqual(workload.liveOutput), outcome.divergences == 0 else {
    throw BenchError("the replay's output differs from the live run's")
  }
  say("profile_replay_samples \(outcome.samples) samples")
  log("plumb-bench: \(outcome.ticks) loop iterations, \(outcome.frames) frames")
}

let allCommand = CommandGroup.Subcommand(
  CommandSpec(
    name: "plumb-bench all",
    abstract: "every benchmark, then BENCHMARKS.md",
    discussion: """
      What `make bench` runs. The throughput figures come first; then the real-time runs, one
      after the other (SCHED_FIFO loop, SCHED_OTHER loop, cyclictest, `plumb run`), each
      --seconds long.
      """,
    options: [
      passesOption, replaySecondsOption, realSecondsOption, plumbOption, boardOption,
      estimatorOption, plumbCalOption,
      .option("markdown", value: "PATH", help: "the report to write", default: "BENCHMARKS.md"),
      .option(
        "notes", value: "PATH", help: "prose appended to the report",
        default: "tools/plumb-bench/NOTES.md"),
      .option("swift-version", value: "TEXT", help: "the toolchain, for the report"),
    ])
) { arguments in
  let started = Clock.monotonic()
  let machine = Machine.describe(swiftVersion: arguments.value("swift-version"))
  log("plumb-bench: \(machine.cpu), \(machine.cores) cores, load \(machine.loadAverage)")
  let passes = try passes(arguments)
  let seconds = try arguments.integer("seconds", in: 1...3600) ?? 60
  var results: [GroupResult] = []
  func run(_ title: String, _ body: () throws -> GroupResult) throws {
    log("plumb-bench: \(title)")
    let result = try body()
    emit(result)
    results.append(result)
  }
  try run("estimator (tools/bench-estimator)") {
    try estimatorBenchmark(
      executable: arguments.value("estimator") ?? ".build/release/bench-estimator")
  }
  let work = try workload(arguments)
  try run("replay, \(passes) passes") { try replayBenchmark(work, passes: passes) }
  try run("simulation, \(passes) passes") { try simulationBenchmark(seconds: 600, passes: passes) }
  try run("encode and decode") { try codecBenchmark(work.frames, passes: passes) }
  try run("Allan deviation, 3 runs") { try allanBenchmark(passes: 3) }
  try run("plumb-cal allan and gyro on 2 h at 1 kHz, peak memory") {
    try allanMemoryBenchmark(arguments)
  }
  let me = currentExecutable()
  for policy in ["fifo", "other"] {
    try run("firmware loop on the real clock, \(policy), \(seconds) s") {
      let child = try runChild(me, ["loop", "--policy", policy, "--seconds", String(seconds)])
      guard child.exitedNormally else {
        let reason = child.standardError.split(separator: "\n").last.map(String.init) ?? "?"
        var result = GroupResult()
        let prefix = policy == "fifo" ? "loop_lateness_" : "loop_lateness_other_"
        for label in ["p50", "p99", "p99_9", "max"] {
          result.missing.append(Missing(name: prefix + label + "_us", reason: reason))
        }
        return result
      }
      return parseChild(child)
    }
  }
  try run("cyclictest, \(seconds) s") { try cyclictestBenchmark(seconds: seconds) }
  try run("idle 100 Hz loop, 20 s") { idleLoopBenchmark(seconds: 20) }
  try run("plumb run, \(seconds) s") {
    try processBenchmark(
      plumb: arguments.value("plumb") ?? ".build/release/plumb",
      board: arguments.value("board") ?? "Boards/simulated.json", seconds: seconds)
  }
  let elapsed = Double(Clock.monotonic() - started) * 1e-9
  let path = arguments.value("markdown") ?? "BENCHMARKS.md"
  try writeFile(
    path,
    renderReport(
      results: results, machine: machine, loadAfter: Machine.loadAverage(), date: utcNow(),
      elapsedSeconds: elapsed, notesFile: arguments.value("notes") ?? "tools/plumb-bench/NOTES.md"))
  log("plumb-bench: wrote \(path) (\(NumberText.fixed(elapsed / 60, 1)) minutes)")
}

let bench = CommandGroup(
  name: "plumb-bench", abstract: "Plumb's benchmarks (issue 9); `make bench` runs `all`",
  subcommands: [
    allCommand, replayCommand, simulationCommand, codecCommand, allanCommand, allanMemoryCommand,
    loopCommand,
    processCommand, idleCommand, cyclictestCommand, estimatorCommand, profileCommand,
  ])

exit(bench.run(Array(CommandLine.arguments.dropFirst())))
