import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// What `plumb-probe` builds on: identify, self-test, a decoded register dump, samples.
@Suite("Probe functions")
struct ProbeTests {
  @Test("the register dump decodes the configured chip")
  func dump() throws {
    let rig = try Rig(unit: .ideal, policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    try rig.start()
    rig.clock.advance(by: .milliseconds(100))
    let dump = try rig.driver.readRegisterDump()
    #expect(dump[0x75]?.meaning == "MPU-6050")
    #expect(dump[0x19]?.value == 0x09)
    #expect(dump[0x1A]?.meaning.hasPrefix("DLPF_CFG 3 (44 Hz accel / 42 Hz gyro)") == true)
    #expect(dump[0x1B]?.meaning.contains("±500 °/s") == true)
    #expect(dump[0x1C]?.meaning.contains("±4 g") == true)
    #expect(dump[0x37]?.meaning.contains("active high, push-pull, 50 µs pulse") == true)
    #expect(dump[0x38]?.meaning.hasPrefix("DATA_RDY_EN on") == true)
    #expect(dump[0x6B]?.meaning.hasPrefix("awake, clock gyroXPLL") == true)
    #expect(dump[0x3F]?.meaning == "8192 counts = 9.807 m/s² (±4 g)")
    #expect(dump[0x41]?.meaning == "-3920 counts = 25 °C")
    #expect(dump[0x3A] == nil)
    #expect(dump.description.split(separator: "\n").count == dump.entries.count)
  }

  @Test("decoding a sleeping chip's PWR_MGMT_1 and unknown identities")
  func decode() {
    #expect(MPU6050RegisterDump.decode(register: 0x6B, value: 0x40).meaning.hasPrefix("ASLEEP"))
    #expect(MPU6050RegisterDump.decode(register: 0x75, value: 0x98).meaning == "ICM-20689")
    #expect(MPU6050RegisterDump.decode(register: 0x75, value: 0x00).meaning == "unknown part")
    #expect(
      MPU6050RegisterDump.decode(register: 0x1A, value: 0x07).meaning.hasPrefix(
        "DLPF_CFG 7 (reserved)"))
  }
}
