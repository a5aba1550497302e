import Firmware
import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware
import Telemetry

typealias SimulatedLoop = FirmwareLoop<
  SimulatedI2CBus, SimulatedDataReadyLine, MemorySerialPort, ManualClock
>

/// A simulated board, a memory serial port at 115200 baud, and the firmware loop over them, on
/// one manual clock: what a host on the other end of the cable would receive.
final class Rig {
  let board: SimulatedMPU6050Board
  let port: MemorySerialPort
  var loop: SimulatedLoop
  var received: [UInt8] = []
  var consumed: [ConsumedSample] = []

  init(
    motion: any MotionSource = RestingMotion(), plan: String = "none", seed: UInt64 = 1,
    unit: SimulatedMPU6050Unit? = nil,
    settings: FirmwareSettings = FirmwareSettings(selfTest: false),
    serialFaults: SerialFaultPlan = .none, interruptWired: Bool? = nil
  ) throws {
    let clock = ManualClock()
    let faultPlan = SimulatedMPU6050FaultPlan.named(
      plan, start: clock.now() + .seconds(3), seed: seed)!
    board = SimulatedMPU6050Board(
      motion: motion, unit: unit ?? .typical(seed: seed), faultPlan: faultPlan, clock: clock)
    port = MemorySerialPort(
      clock: clock, capacity: .uart(baud: 115_200), faultPlan: serialFaults)
    var settings = settings
    settings.interruptWired = interruptWired ?? faultPlan.interruptWired
    loop = try SimulatedLoop(
      bus: board.bus, line: board.line, port: port, clock: clock, settings: settings)
    _ = motionStart
  }

  var clock: ManualClock { board.clock }

  /// Seconds since the motion's time 0 (the board's creation) for a sample time.
  func motionSeconds(_ sampleTimeNanoseconds: Int64) -> Double {
    Double(sampleTimeNanoseconds - motionStart.nanoseconds) * 1e-9
  }

  private(set) lazy var motionStart: Timestamp = board.clock.now()

  /// Starts the loop and runs it for `seconds` of simulated time, collecting what the host
  /// receives (and every sample the loop consumed).
  func run(seconds: Double, recordSamples: Bool = false) throws {
    if recordSamples {
      loop.onSample = { [unowned self] sample in self.consumed.append(sample) }
    }
    try loop.start()
    let end = clock.now() + .nanoseconds(Int64(seconds * 1e9))
    var stallIndex = 0
    while clock.now() < end {
      let stalls = board.faultPlan.hostStalls
      if stallIndex < stalls.count, stalls[stallIndex].at <= clock.now() {
        clock.advance(by: stalls[stallIndex].duration)
        stallIndex += 1
      }
      loop.step()
      received += port.takeWritten()
    }
    loop.finish()
    received += port.takeWritten()
  }

  /// Ends a run stepped by the test, which collected `received`: the loop flushes and closes,
  /// and what the UART still holds reaches the host (`received`).
  func finish(after received: [UInt8]) {
    loop.finish()
    clock.advance(by: .seconds(1))
    self.received = received + port.takeWritten()
  }

  /// Decodes everything received as a host would.
  func decode(format: TelemetryFormat? = .binary) -> (
    samples: [AttitudeSample], replies: [HostReply], statistics: LinkStatistics
  ) {
    var decoder = StreamDecoder(format: format)
    var samples: [AttitudeSample] = []
    var replies: [HostReply] = []
    decoder.decode(received) { message in
      if let sample = message.attitudeSample { samples.append(sample) }
      if let reply = message.hostReply { replies.append(reply) }
    }
    decoder.finish()
    return (samples, replies, decoder.statistics)
  }
}

/// The smallest angle between two attitudes, degrees.
func degrees(between a: Quaternion, _ b: Quaternion) -> Double {
  a.angle(to: b) * degreesPerRadian
}

/// The angle between the estimated and true gravity directions (the inclination error), degrees.
func inclinationError(_ estimate: Quaternion, truth: Quaternion) -> Double {
  let down = Vector3(0, 0, -1)
  return estimate.inverseRotate(down).angle(to: truth.inverseRotate(down)) * degreesPerRadian
}
