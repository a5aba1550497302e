import MPU6050
import Testing

/// Every address and bit the driver uses, restated from RM-MPU-6000A-00 rev 4.2 (§3 table and
/// §4.x) as literals, independently of the source.
@Suite("Register map")
struct RegisterMapTests {
  @Test("addresses match RM §3")
  func addresses() {
    #expect(SelfTestRegisters.x == 0x0D)
    #expect(SelfTestRegisters.y == 0x0E)
    #expect(SelfTestRegisters.z == 0x0F)
    #expect(SelfTestRegisters.a == 0x10)
    #expect(SelfTestAccelerometerRegister.address == 0x10)
    #expect(SampleRateDividerRegister.address == 0x19)
    #expect(ConfigRegister.address == 0x1A)
    #expect(GyroConfigRegister.address == 0x1B)
    #expect(AccelConfigRegister.address == 0x1C)
    #expect(AccelConfig2Register.address == 0x1D)
    #expect(FIFOEnableRegister.address == 0x23)
    #expect(InterruptPinConfigRegister.address == 0x37)
    #expect(InterruptEnableRegister.address == 0x38)
    #expect(InterruptStatusRegister.address == 0x3A)
    #expect(MeasurementRegisters.accelXHigh == 0x3B)
    #expect(MeasurementRegisters.accelYHigh == 0x3D)
    #expect(MeasurementRegisters.accelZHigh == 0x3F)
    #expect(MeasurementRegisters.temperatureHigh == 0x41)
    #expect(MeasurementRegisters.gyroXHigh == 0x43)
    #expect(MeasurementRegisters.gyroYHigh == 0x45)
    #expect(MeasurementRegisters.gyroZHigh == 0x47)
    #expect(MeasurementRegisters.gyroZLow == 0x48)
    #expect(MeasurementRegisters.burstLength == 14)
    #expect(SignalPathResetRegister.address == 0x68)
    #expect(UserControlRegister.address == 0x6A)
    #expect(PowerManagement1Register.address == 0x6B)
    #expect(PowerManagement2Register.address == 0x6C)
    #expect(FIFORegisters.countHigh == 0x72)
    #expect(FIFORegisters.countLow == 0x73)
    #expect(FIFORegisters.readWrite == 0x74)
    #expect(WhoAmIRegister.address == 0x75)
    #expect(WhoAmIRegister.mpu6050 == 0x68)
    #expect(PowerManagement1Register.resetValue == 0x40)
    #expect(FIFORegisters.capacityBytes == 1024)
  }

  @Test("CONFIG: EXT_SYNC_SET bits 5:3, DLPF_CFG bits 2:0")
  func config() {
    var register = ConfigRegister(bits: 0)
    register.lowPassFilter = .bandwidth44Hz
    #expect(register.bits == 0x03)
    register.externalSync = .accelZOutLow
    #expect(register.bits == 0x3B)
    #expect(ConfigRegister(bits: 0x07).lowPassFilter == nil)
    #expect(ConfigRegister(bits: 0x07).lowPassFilterCode == 7)
    #expect(ConfigRegister(bits: 0x28).externalSync == .accelXOutLow)
  }

  @Test("GYRO_CONFIG: XG_ST 7, YG_ST 6, ZG_ST 5, FS_SEL 4:3")
  func gyroConfig() {
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond250).bits == 0x00)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond500).bits == 0x08)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond1000).bits == 0x10)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond2000).bits == 0x18)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond250, selfTest: .x).bits == 0x80)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond250, selfTest: .y).bits == 0x40)
    #expect(GyroConfigRegister(fullScale: .degreesPerSecond250, selfTest: .z).bits == 0x20)
    #expect(GyroConfigRegister(bits: 0xF8).selfTest == .all)
    #expect(GyroConfigRegister(bits: 0xF8).fullScale == .degreesPerSecond2000)
  }

  @Test("ACCEL_CONFIG: XA_ST 7, YA_ST 6, ZA_ST 5, AFS_SEL 4:3")
  func accelConfig() {
    #expect(AccelConfigRegister(fullScale: .standardGravities2).bits == 0x00)
    #expect(AccelConfigRegister(fullScale: .standardGravities4).bits == 0x08)
    #expect(AccelConfigRegister(fullScale: .standardGravities8).bits == 0x10)
    #expect(AccelConfigRegister(fullScale: .standardGravities16).bits == 0x18)
    #expect(AccelConfigRegister(fullScale: .standardGravities8, selfTest: .all).bits == 0xF0)
  }

  @Test("ACCEL_CONFIG2 (MPU-6500 family): A_DLPF_CFG 2:0, ACCEL_FCHOICE_B 3")
  func accelConfig2() {
    #expect(AccelConfig2Register(lowPassFilterCode: 3).bits == 0x03)
    var register = AccelConfig2Register(bits: 0)
    register.filterBypassed = true
    #expect(register.bits == 0x08)
  }

  @Test("FIFO_EN: TEMP 7, XG 6, YG 5, ZG 4, ACCEL 3")
  func fifoEnable() {
    var register = FIFOEnableRegister(bits: 0)
    register.temperature = true
    #expect(register.bits == 0x80)
    register.gyro = .x
    #expect(register.bits == 0xC0)
    register.gyro = .y
    #expect(register.bits == 0xA0)
    register.gyro = .z
    #expect(register.bits == 0x90)
    register.accelerometer = true
    #expect(register.bits == 0x98)
    #expect(FIFOEnableRegister(bits: 0xF8).recordLength == 14)
    #expect(FIFOEnableRegister(bits: 0x78).recordLength == 12)
  }

  @Test("INT_PIN_CFG: INT_LEVEL 7, INT_OPEN 6, LATCH_INT_EN 5, INT_RD_CLEAR 4")
  func interruptPinConfig() {
    let bits: [(UInt8, InterruptPinConfigRegister)] = [
      (
        0x80,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.activeLow = true
          return r
        }()
      ),
      (
        0x40,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.openDrain = true
          return r
        }()
      ),
      (
        0x20,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.latched = true
          return r
        }()
      ),
      (
        0x10,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.clearOnAnyRead = true
          return r
        }()
      ),
      (
        0x08,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.fsyncActiveLow = true
          return r
        }()
      ),
      (
        0x04,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.fsyncInterrupt = true
          return r
        }()
      ),
      (
        0x02,
        {
          var r = InterruptPinConfigRegister(bits: 0)
          r.auxiliaryBypass = true
          return r
        }()
      ),
    ]
    for (expected, register) in bits { #expect(register.bits == expected) }
  }

  @Test("INT_ENABLE: FIFO_OFLOW_EN 4, I2C_MST_INT_EN 3, DATA_RDY_EN 0; INT_STATUS the same bits")
  func interrupts() {
    var enable = InterruptEnableRegister(bits: 0)
    enable.dataReady = true
    #expect(enable.bits == 0x01)
    enable.fifoOverflow = true
    #expect(enable.bits == 0x11)
    enable.auxiliaryMaster = true
    #expect(enable.bits == 0x19)
    #expect(InterruptStatusRegister(bits: 0x01).dataReady)
    #expect(InterruptStatusRegister(bits: 0x10).fifoOverflow)
    #expect(InterruptStatusRegister(bits: 0x08).auxiliaryMaster)
    #expect(!InterruptStatusRegister(bits: 0x10).dataReady)
  }

  @Test(
    "USER_CTRL: FIFO_EN 6, I2C_MST_EN 5, I2C_IF_DIS 4, FIFO_RESET 2, I2C_MST_RESET 1, SIG_COND_RESET 0"
  )
  func userControl() {
    let cases: [(UInt8, (inout UserControlRegister) -> Void)] = [
      (0x40, { $0.fifoEnabled = true }), (0x20, { $0.auxiliaryMasterEnabled = true }),
      (0x10, { $0.primaryInterfaceDisabled = true }), (0x04, { $0.fifoReset = true }),
      (0x02, { $0.auxiliaryMasterReset = true }), (0x01, { $0.signalConditionReset = true }),
    ]
    for (expected, set) in cases {
      var register = UserControlRegister(bits: 0)
      set(&register)
      #expect(register.bits == expected)
    }
  }

  @Test("PWR_MGMT_1: DEVICE_RESET 7, SLEEP 6, CYCLE 5, TEMP_DIS 3, CLKSEL 2:0")
  func powerManagement1() {
    #expect(PowerManagement1Register(clockSource: .gyroXPLL).bits == 0x01)
    #expect(PowerManagement1Register(clockSource: .internal8MHz, sleep: true).bits == 0x40)
    var register = PowerManagement1Register(bits: 0)
    register.deviceReset = true
    #expect(register.bits == 0x80)
    register = PowerManagement1Register(bits: 0)
    register.cycle = true
    #expect(register.bits == 0x20)
    register = PowerManagement1Register(bits: 0)
    register.temperatureDisabled = true
    #expect(register.bits == 0x08)
    #expect(PowerManagement1Register(bits: 0x07).clockSource == .stopped)
    #expect(PowerManagement1Register(bits: 0x03).clockSource == .gyroZPLL)
  }

  @Test("PWR_MGMT_2: LP_WAKE_CTRL 7:6, STBY_XA 5 … STBY_ZG 0")
  func powerManagement2() {
    #expect(PowerManagement2Register(bits: 0xC0).wakeControl == 3)
    #expect(PowerManagement2Register(bits: 0x20).accelerometerStandby == .x)
    #expect(PowerManagement2Register(bits: 0x08).accelerometerStandby == .z)
    #expect(PowerManagement2Register(bits: 0x04).gyroStandby == .x)
    #expect(PowerManagement2Register(bits: 0x01).gyroStandby == .z)
  }

  @Test("SIGNAL_PATH_RESET: GYRO 2, ACCEL 1, TEMP 0")
  func signalPathReset() {
    var register = SignalPathResetRegister(bits: 0)
    register.gyro = true
    register.accelerometer = true
    register.temperature = true
    #expect(register.bits == 0x07)
  }

  @Test("SELF_TEST_X/Y/Z: XA_TEST[4:2] 7:5, XG_TEST 4:0; SELF_TEST_A: XA 5:4, YA 3:2, ZA 1:0")
  func selfTestRegisters() {
    #expect(SelfTestAxisRegister(bits: 0xE1).accelerometerTrimCodeHigh == 0b111)
    #expect(SelfTestAxisRegister(bits: 0xE1).gyroTrimCode == 1)
    #expect(SelfTestAxisRegister(bits: 0x1F).gyroTrimCode == 31)
    #expect(SelfTestAccelerometerRegister(bits: 0x30).accelerometerTrimCodeLow == SIMD3(3, 0, 0))
    #expect(SelfTestAccelerometerRegister(bits: 0x0C).accelerometerTrimCodeLow == SIMD3(0, 3, 0))
    #expect(SelfTestAccelerometerRegister(bits: 0x03).accelerometerTrimCodeLow == SIMD3(0, 0, 3))
    #expect(SelfTestAccelerometerRegister(bits: 0x24).accelerometerTrimCodeLow == SIMD3(2, 1, 0))
  }

  @Test("a register prints its name, address and value")
  func description() {
    #expect(PowerManagement1Register(bits: 0x40).description == "PWR_MGMT_1 (0x6B) = 0x40")
  }
}
