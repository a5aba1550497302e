import ByteFormats
import Calibration
import Firmware
import HardwareAbstraction
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware
import Telemetry

/// `replay_samples_per_second`: the recording through the replay chip, the simulated bus and
/// line, the real driver, loop, estimator and binary encoder, on the manual clock, frames into
/// memory. Each pass reads the recording from memory (header and every record's CRC), builds
/// the replay board, starts the loop (the recorded start-up and self-test) and replays to the
/// end; the figure is samples over that pass's thread CPU time, the median of `passes`. Every
/// pass must give the live run's bytes exactly, or the benchmark fails.
func replayBenchmark(_ workload: Workload, passes: Int) throws -> GroupResult {
  let sink = MemorySink(capacity: workload.liveOutput.count + 1 << 20)
  var rates: [Double] = []
  var loopRates: [Double] = []
  var loadShares: [Double] = []
  for _ in 0..<passes {
    sink.reset()
    let outcome = try replay(workload.recording, into: sink)
    guard outcome.divergences == 0 else {
      throw BenchError(
        "the replay diverged from the recording \(outcome.divergences) times; first: \(outcome.firstDivergence ?? "?")"
      )
    }
    guard sink.bytes.elementsEqual(workload.liveOutput) else {
      throw BenchError(
        "the replay wrote \(sink.count) bytes that differ from the live run's \(workload.liveOutput.count): determinism is broken"
      )
    }
    let total = Double(outcome.loadNanoseconds + outcome.runNanoseconds) * 1e-9
    rates.append(Double(outcome.samples) / total)
    loopRates.append(Double(outcome.samples) / (Double(outcome.runNanoseconds) * 1e-9))
    loadShares.append(Double(outcome.loadNanoseconds) * 1e-9 / total)
  }
  let samples = workload.samples
  var result = GroupResult()
  result.figures.append(
    Figure(
      "replay_samples_per_second", median(rates), "samples/s", decimals: 0,
      method:
        "median of \(passes) passes over a \(Int(workload.seconds)) s recording (\(samples) samples, \(workload.recording.count / 1024) KiB), thread CPU time, load + start-up + replay; output checked byte-identical to the live run"
    ))
  result.notes.append(
    "replay: \(NumberText.fixed(median(loopRates), 0)) samples/s once the recording is loaded and the loop started; loading (header, every record's CRC-32C, the replay chip's pass that prepares its edges and bursts) is \(NumberText.fixed(median(loadShares) * 100, 1)) % of a pass"
  )
  return result
}

/// `simulation_samples_per_second` (for information): the physical chip model (handheld
/// motion, noise, the chip's own oscillator) → simulated bus and line → driver → loop →
/// estimator → binary frames in memory, on the manual clock.
func simulationBenchmark(seconds: Double, passes: Int) throws -> GroupResult {
  let sink = MemorySink(capacity: Int(seconds * 100 + 1000) * TelemetryEncoder.maximumFrameBytes)
  var rates: [Double] = []
  for _ in 0..<passes {
    sink.reset()
    let begin = Clock.threadCPU()
    let clock = ManualClock()
    let board = SimulatedMPU6050Board(
      motion: HandheldMotion(seconds: seconds + 10, seed: 1), unit: .typical(seed: 1),
      clock: clock)
    var loop = try FirmwareLoop(
      bus: board.bus, line: board.line, port: sink, clock: clock, settings: FirmwareSettings())
    try loop.start()
    let end = clock.now() + .nanoseconds(Int64(seconds * 1e9))
    while clock.now() < end { loop.step() }
    loop.finish()
    let elapsed = Double(Clock.threadCPU() - begin) * 1e-9
    rates.append(Double(loop.status.samples) / elapsed)
  }
  var result = GroupResult()
  result.figures.append(
    Figure(
      "simulation_samples_per_second", median(rates), "samples/s", decimals: 0,
      method:
        "median of \(passes) passes of \(Int(seconds)) s simulated (handheld motion, start-up included), thread CPU time"
    ))
  return result
}

/// Encode and decode ns per frame, each format: the live run's frames (realistic values and
/// flags), encoded into one buffer, and the encoded stream decoded by `StreamDecoder` with the
/// format given. Median of `passes`; each pass covers at least `minimumFrames` frames.
func codecBenchmark(_ frames: [TelemetryFrame], passes: Int, minimumFrames: Int = 200_000)
  throws -> GroupResult
{
  guard !frames.isEmpty else { throw BenchError("no frames to encode") }
  let repeats = max(1, (minimumFrames + frames.count - 1) / frames.count)
  var result = GroupResult()
  let buffer = UnsafeMutableRawBufferPointer.allocate(
    byteCount: TelemetryEncoder.maximumFrameBytes, alignment: 16)
  defer { buffer.deallocate() }
  for format in [TelemetryFormat.binary, .text, .mavlink] {
    var encodeTimes: [Double] = []
    var checksum = 0
    for _ in 0..<passes {
      var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
      let begin = Clock.threadCPU()
      for _ in 0..<repeats {
        for frame in frames {
          let count = encoder.encode(frame, into: buffer)
          checksum &+= count &+ Int(buffer[count - 1])
        }
      }
      encodeTimes.append(Double(Clock.threadCPU() - begin) / Double(repeats * frames.count))
    }
    // The stream a host receives for these frames.
    var stream: [UInt8] = []
    var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
    for frame in frames { stream += encoder.encode(frame) }
    var decodeTimes: [Double] = []
    for _ in 0..<passes {
      var decoded = 0
      let begin = Clock.threadCPU()
      for _ in 0..<repeats {
        var decoder = StreamDecoder(format: format)
        stream.withUnsafeBytes { bytes in
          decoder.decode(bytes) { message in
            if message.attitudeSample != nil { decoded += 1 }
          }
        }
      }
      decodeTimes.append(Double(Clock.threadCPU() - begin) / Double(repeats * frames.count))
      guard decoded == repeats * frames.count else {
        throw BenchError(
          "\(format.rawValue): decoded \(decoded) attitude samples from \(repeats * frames.count) frames"
        )
      }
    }
    let method =
      "median of \(passes) passes of \(repeats * frames.count) frames (\(frames.count) frames of the simulated run, repeated), thread CPU time per frame"
    result.figures.append(
      Figure("encode_\(format.rawValue)_ns", median(encodeTimes), "ns", method: method))
    result.figures.append(
      Figure("decode_\(format.rawValue)_ns", median(decodeTimes), "ns", method: method))
    result.notes.append(
      "\(format.rawValue): \(NumberText.fixed(Double(stream.count) / Double(frames.count), 1)) bytes per frame on average (checksum \(checksum & 0xFFFF))"
    )
  }
  return result
}

/// `allan_2h_ms`: `AllanAnalysis.analyze` on 2 h of a still sensor at 100 Hz (720 000 samples,
/// six axes, overlapping Allan deviation on the τ grid), median of `passes`; generating the
/// data is not timed.
func allanBenchmark(passes: Int) throws -> GroupResult {
  let recording = StillSensorSimulation.twoHourBenchmarkRecording()
  var times: [Double] = []
  var points = 0
  for _ in 0..<passes {
    let begin = Clock.threadCPU()
    let analysis = try AllanAnalysis.analyze(recording)
    times.append(Double(Clock.threadCPU() - begin) * 1e-6)
    points = analysis.clusterSizes.count
  }
  var result = GroupResult()
  result.figures.append(
    Figure(
      "allan_2h_ms", median(times), "ms",
      method:
        "median of \(passes) runs, 720 000 samples × 6 axes, \(points) τ values, thread CPU time"
    ))
  return result
}
