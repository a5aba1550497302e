import Geometry
import Glibc
import HardwareAbstraction
import Monitoring
import SimulatedHardware
import Telemetry
import TestSupport

/// The frames a board would send: 100 Hz from 5 s, a slow roll, latency and temperature that
/// vary so percentiles and printing have something to show.
func boardFrame(_ k: Int, start: Int64 = 5_000_000_000, periodNanoseconds: Int64 = 10_000_000)
  -> TelemetryFrame
{
  let angle = 0.002 * Double(k)
  return TelemetryFrame(
    sequence: UInt32(k), sampleTimeNanoseconds: start + Int64(k) * periodNanoseconds,
    attitude: Quaternion(axis: .unitX, angle: angle),
    gyroBiasRadiansPerSecond: Vector3(0.001, 0, 0),
    temperatureCelsius: 25 + 0.01 * Double(k), flags: [.rest, .calibrationLoaded],
    missedSamples: 0, latencyMicroseconds: UInt32(700 + (k * 37) % 500),
    calibrationID: 0x1234_5678)
}

/// One encoded unit per frame (binary, text) or per packet (MAVLink), with the frame index it
/// belongs to and whether it carries an attitude.
struct StreamUnit {
  var bytes: [UInt8]
  var frame: Int
  var isTelemetry: Bool
}

func encodedUnits(_ format: TelemetryFormat, frames: Int) -> [StreamUnit] {
  var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
  var units: [StreamUnit] = []
  for k in 0..<frames {
    let bytes = encoder.encode(boardFrame(k))
    guard format == .mavlink else {
      units.append(StreamUnit(bytes: bytes, frame: k, isTelemetry: true))
      continue
    }
    // MAVLink v2: 10-byte header (length at offset 1, message id at 7…9), payload, 2-byte CRC.
    var offset = 0
    while offset < bytes.count {
      let length = 12 + Int(bytes[offset + 1])
      let id = Int(bytes[offset + 7]) | Int(bytes[offset + 8]) << 8 | Int(bytes[offset + 9]) << 16
      units.append(
        StreamUnit(bytes: Array(bytes[offset..<offset + length]), frame: k, isTelemetry: id == 31))
      offset += length
    }
  }
  return units
}

/// A stream with corruption injected at known places, and exactly what a monitor must count.
struct CorruptedStream {
  var bytes: [UInt8] = []
  /// Telemetry frames left intact.
  var intactTelemetry = 0
  /// Units (frames, MAVLink packets) destroyed.
  var destroyedUnits = 0
  /// Damage events: each costs one resync.
  var events = 0
  var bitFlips = 0
  var droppedBytes = 0
  var garbageRuns = 0
  /// Bytes a decoder must skip.
  var skippedBytes = 0
}

extension SeededGenerator {
  /// A whole number in 0 ..< n, for test corruption.
  mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// Positions of the COBS code bytes in one binary frame on the wire (`00 code … 00`): a flip
/// anywhere else changes one payload byte, which the CRC must catch.
func cobsCodePositions(_ frame: [UInt8]) -> Set<Int> {
  var positions: Set<Int> = []
  var index = 1
  while index < frame.count - 1 {
    positions.insert(index)
    index += Int(frame[index])
  }
  return positions
}

/// Damages every `every`-th unit in turn with a bit flip, a dropped byte or garbage inserted
/// after it (never the last unit, so a run can stop on an intact frame). Binary: flips hit
/// payload bytes only and never make a 0x00; garbage has no 0x00 and is longer than any frame,
/// so each run is one overlong block. Text and MAVLink: flips only (`kinds`), never turning a
/// byte into a framing character, plus garbage made of lowercase letters, which no framer
/// starts on.
func corrupt(
  _ units: [StreamUnit], format: TelemetryFormat, every: Int = 7, seed: UInt64,
  includeDrops: Bool = true
) -> CorruptedStream {
  var random = SeededGenerator(seed: seed)
  var result = CorruptedStream()
  var event = 0
  for (index, unit) in units.enumerated() {
    var bytes = unit.bytes
    guard index % every == every - 1, index + 1 < units.count else {
      result.bytes += bytes
      if unit.isTelemetry { result.intactTelemetry += 1 }
      continue
    }
    let kinds = includeDrops ? 3 : 2
    switch event % kinds {
    case 0:  // a bit flip inside the unit
      let codes = format.isBinary ? cobsCodePositions(bytes) : []
      while true {
        let position =
          format.isBinary ? 1 + random.below(bytes.count - 2) : random.below(bytes.count)
        let flipped = bytes[position] ^ (1 << UInt8(random.below(8)))
        if codes.contains(position) || flipped == 0 { continue }
        if format == .text {
          // Keep the line's framing (`$`, `\r`, `\n`) and the checksum's letters' case.
          let framing: Set<UInt8> = [0x24, 0x0D, 0x0A]
          if framing.contains(bytes[position]) || framing.contains(flipped) { continue }
          if position >= bytes.count - 4 { continue }
        }
        if format == .mavlink && (position < 10 || flipped == 0xFD || bytes[position] == 0xFD) {
          continue
        }
        bytes[position] = flipped
        break
      }
      result.bitFlips += 1
      result.destroyedUnits += 1
      result.skippedBytes += format.isBinary ? bytes.count - 2 : bytes.count
      result.bytes += bytes
    case 1:  // garbage between this unit and the next
      result.bytes += bytes
      if unit.isTelemetry { result.intactTelemetry += 1 }
      let count = format.isBinary ? 90 + random.below(30) : 5 + random.below(30)
      let garbage = (0..<count).map { _ -> UInt8 in
        format.isBinary
          ? UInt8(truncatingIfNeeded: random.next()) | 1
          : UInt8(ascii: "a") + UInt8(random.below(26))
      }
      result.bytes += garbage
      result.garbageRuns += 1
      result.skippedBytes += garbage.count
    default:  // a dropped byte inside a binary frame
      let position = 2 + random.below(bytes.count - 4)
      bytes.remove(at: position)
      result.droppedBytes += 1
      result.destroyedUnits += 1
      result.skippedBytes += bytes.count - 2
      result.bytes += bytes
    }
    event += 1
    result.events += 1
  }
  return result
}

// MARK: - Files

/// A fresh directory under /tmp, removed with its files when the value goes away.
final class TemporaryDirectory {
  let path: String

  init() {
    var template = Array("\(Scratch.root)/plumb-monitor-test-XXXXXX".utf8CString)
    path = String(cString: mkdtemp(&template)!)
  }

  func file(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o644) -> String {
    let filePath = path + "/" + name
    let descriptor = open(filePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    precondition(descriptor >= 0, "cannot create \(filePath)")
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes {
        write(descriptor, $0.baseAddress! + offset, $0.count - offset)
      }
      precondition(written > 0)
      offset += written
    }
    close(descriptor)
    return filePath
  }

  deinit {
    if let directory = opendir(path) {
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
          String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { _ = unlink(path + "/" + name) }
      }
      closedir(directory)
    }
    _ = rmdir(path)
  }
}

// MARK: - Clocks

/// A clock for tests: time moves only when the session pauses, and each pause first runs
/// `onPause` (which plays the other end of the cable: writes the next bytes, hangs up, answers
/// commands). With `realPauseNanoseconds` it also really waits that long, for a
/// pseudo-terminal's kernel work queue to pass bytes on (100 µs: well inside the "few ms per
/// step" budget).
final class PausingClock: MonotonicClock {
  private(set) var current: Timestamp
  private(set) var pauses = 0
  var onPause: (PausingClock) -> Void
  let realPauseNanoseconds: Int

  init(
    start: Timestamp = Timestamp(nanoseconds: 1_000_000_000), realPauseNanoseconds: Int = 0,
    onPause: @escaping (PausingClock) -> Void = { _ in }
  ) {
    current = start
    self.realPauseNanoseconds = realPauseNanoseconds
    self.onPause = onPause
  }

  func now() -> Timestamp { current }

  func sleep(until deadline: Timestamp) {
    pauses += 1
    onPause(self)
    if realPauseNanoseconds > 0 {
      var pause = timespec(tv_sec: 0, tv_nsec: realPauseNanoseconds)
      _ = nanosleep(&pause, nil)
    }
    if deadline > current { current = deadline }
  }
}

/// Collects a session's events.
final class EventLog {
  var events: [MonitorEvent] = []

  var frames: [MonitorFrame] {
    events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
  }
  var replies: [HostReply] {
    events.compactMap { if case .reply(let reply) = $0 { reply } else { nil } }
  }
  var notices: [MonitorNotice] {
    events.compactMap { if case .notice(let notice) = $0 { notice } else { nil } }
  }
  var periodicStatistics: [MonitorStatistics] {
    events.compactMap {
      if case .statistics(let statistics, false) = $0 { statistics } else { nil }
    }
  }
}
