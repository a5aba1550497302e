import HardwareAbstraction
import MPU6050
import SimulatedHardware
import Testing

/// The register dump a probe prints: which blocks it reads, in order, and the decoded text,
/// pinned whole.
@Suite("Register dump")
struct RegisterDumpTests {
  let chip = I2CAddress(rawValue: 0x68)!

  @Test("reads nine blocks in address order (not INT_STATUS) and decodes every register")
  func dump() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      [
        .read(0x0D, at: chip, returning: [0xE1, 0x42, 0x7F, 0x24]),  // SELF_TEST_X/Y/Z/A
        .read(0x19, at: chip, returning: [0x09, 0x03, 0x08, 0x08]),  // SMPLRT_DIV … ACCEL_CONFIG
        .read(0x23, at: chip, returning: [0xF8]),  // FIFO_EN
        .read(0x37, at: chip, returning: [0x00, 0x11]),  // INT_PIN_CFG, INT_ENABLE
        .read(
          0x3B, at: chip,
          returning: [
            0x00, 0x10, 0xFF, 0xF0, 0x20, 0x00, 0xFD, 0xF7, 0x00, 0x05, 0xFF, 0xFB, 0x00, 0x02,
          ]
        ),
        .read(0x68, at: chip, returning: [0x00]),  // SIGNAL_PATH_RESET
        .read(0x6A, at: chip, returning: [0x40, 0x01, 0x00]),  // USER_CTRL, PWR_MGMT_1, _2
        .read(0x72, at: chip, returning: [0x01, 0x18]),  // FIFO_COUNT: 280
        .read(0x75, at: chip, returning: [0x68]),  // WHO_AM_I
      ], clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    let dump = try driver.readRegisterDump()
    #expect(bus.finish() == [])
    #expect(dump.description == Self.expected)
  }

  static let expected = [
    "0x0D SELF_TEST_X        0xE1  XG_TEST 1, XA_TEST[4:2] 7",
    "0x0E SELF_TEST_Y        0x42  YG_TEST 2, YA_TEST[4:2] 2",
    "0x0F SELF_TEST_Z        0x7F  ZG_TEST 31, ZA_TEST[4:2] 3",
    "0x10 SELF_TEST_A        0x24  XA_TEST[1:0] 2, YA_TEST[1:0] 1, ZA_TEST[1:0] 0",
    "0x19 SMPLRT_DIV         0x09  SMPLRT_DIV 9: sample rate = gyro output rate / 10",
    "0x1A CONFIG             0x03  DLPF_CFG 3 (44 Hz accel / 42 Hz gyro), EXT_SYNC_SET 0",
    "0x1B GYRO_CONFIG        0x08  FS_SEL 1 (±500 °/s), self-test none",
    "0x1C ACCEL_CONFIG       0x08  AFS_SEL 1 (±4 g), self-test none",
    "0x23 FIFO_EN            0xF8  accel on, temp on, gyro XYZ, external 0: 14 bytes/record",
    "0x37 INT_PIN_CFG        0x00  active high, push-pull, 50 µs pulse, status cleared by reading INT_STATUS, bypass off",
    "0x38 INT_ENABLE         0x11  DATA_RDY_EN on, FIFO_OFLOW_EN on, I2C_MST_INT_EN off",
    "0x3B ACCEL_XOUT_H       0x00  16 counts = 0.019 m/s² (±4 g)",
    "0x3C ACCEL_XOUT_L       0x10  ",
    "0x3D ACCEL_YOUT_H       0xFF  -16 counts = -0.019 m/s² (±4 g)",
    "0x3E ACCEL_YOUT_L       0xF0  ",
    "0x3F ACCEL_ZOUT_H       0x20  8192 counts = 9.807 m/s² (±4 g)",
    "0x40 ACCEL_ZOUT_L       0x00  ",
    "0x41 TEMP_OUT_H         0xFD  -521 counts = 35 °C",
    "0x42 TEMP_OUT_L         0xF7  ",
    "0x43 GYRO_XOUT_H        0x00  5 counts = 0.0013 rad/s (±500 °/s)",
    "0x44 GYRO_XOUT_L        0x05  ",
    "0x45 GYRO_YOUT_H        0xFF  -5 counts = -0.0013 rad/s (±500 °/s)",
    "0x46 GYRO_YOUT_L        0xFB  ",
    "0x47 GYRO_ZOUT_H        0x00  2 counts = 0.0005 rad/s (±500 °/s)",
    "0x48 GYRO_ZOUT_L        0x02  ",
    "0x68 SIGNAL_PATH_RESET  0x00  write-only resets",
    "0x6A USER_CTRL          0x40  FIFO_EN on, I2C_MST_EN off",
    "0x6B PWR_MGMT_1         0x01  awake, clock gyroXPLL, cycle off, temperature sensor on",
    "0x6C PWR_MGMT_2         0x00  standby accel none, gyro none",
    "0x72 FIFO_COUNTH        0x01  280 bytes in the FIFO",
    "0x73 FIFO_COUNTL        0x18  ",
    "0x75 WHO_AM_I           0x68  MPU-6050",
  ].joined(separator: "\n")
}
