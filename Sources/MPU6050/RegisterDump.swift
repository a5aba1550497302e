import ByteFormats
import HardwareAbstraction

/// The registers the driver uses, read from a chip and decoded for a person: what a probe prints.
public struct MPU6050RegisterDump: Hashable, Sendable, CustomStringConvertible {
  /// One register.
  public struct Entry: Hashable, Sendable, CustomStringConvertible {
    public var address: UInt8
    public var name: String
    public var value: UInt8
    /// The fields, decoded: `DLPF_CFG 3 (44 Hz accel / 42 Hz gyro), EXT_SYNC_SET 0 (off)`.
    public var meaning: String

    /// `0x1A CONFIG          0x03  DLPF_CFG 3 (44 Hz accel / 42 Hz gyro), FSYNC off`.
    public var description: String {
      let padded = name + String(repeating: " ", count: max(0, 18 - name.count))
      return "\(hexByte(address)) \(padded) \(hexByte(value))  \(meaning)"
    }
  }

  public var entries: [Entry]

  public init(entries: [Entry]) { self.entries = entries }

  /// The entry for `address`, if it was read.
  public subscript(address: UInt8) -> Entry? { entries.first { $0.address == address } }

  public var description: String { entries.map(\.description).joined(separator: "\n") }

  /// The registers a dump reads, in address order, as (first address, count) blocks.
  /// INT_STATUS is left out: reading it clears it.
  static func blocks(family: RegisterMapFamily) -> [(UInt8, Int)] {
    [
      (SelfTestRegisters.x, 4),  // SELF_TEST_X … SELF_TEST_A
      (SampleRateDividerRegister.address, family == .mpu6500 ? 5 : 4),  // … ACCEL_CONFIG(2)
      (FIFOEnableRegister.address, 1),
      (InterruptPinConfigRegister.address, 2),  // INT_PIN_CFG, INT_ENABLE
      (MeasurementRegisters.accelXHigh, MeasurementRegisters.burstLength),
      (SignalPathResetRegister.address, 1),
      (UserControlRegister.address, 3),  // USER_CTRL, PWR_MGMT_1, PWR_MGMT_2
      (FIFORegisters.countHigh, 2),
      (WhoAmIRegister.address, 1),
    ]
  }

  /// The name and decoded meaning of `value` in `register` (the measurement registers are
  /// decoded in pairs by the dump; alone, each byte is shown raw).
  public static func decode(register: UInt8, value: UInt8) -> (name: String, meaning: String) {
    func onOff(_ flag: Bool) -> String { flag ? "on" : "off" }
    func axes(_ set: AxisSet) -> String {
      set.isEmpty
        ? "none"
        : [(AxisSet.x, "X"), (.y, "Y"), (.z, "Z")].filter { set.contains($0.0) }.map(\.1).joined(
          separator: "")
    }
    switch register {
    case SelfTestRegisters.x, SelfTestRegisters.y, SelfTestRegisters.z:
      let axis = ["X", "Y", "Z"][Int(register - SelfTestRegisters.x)]
      let trim = SelfTestAxisRegister(bits: value)
      return (
        "SELF_TEST_\(axis)",
        "\(axis)G_TEST \(trim.gyroTrimCode), \(axis)A_TEST[4:2] \(trim.accelerometerTrimCodeHigh)"
      )
    case SelfTestAccelerometerRegister.address:
      let low = SelfTestAccelerometerRegister(bits: value).accelerometerTrimCodeLow
      return (
        SelfTestAccelerometerRegister.name,
        "XA_TEST[1:0] \(low.x), YA_TEST[1:0] \(low.y), ZA_TEST[1:0] \(low.z)"
      )
    case SampleRateDividerRegister.address:
      return (
        SampleRateDividerRegister.name,
        "SMPLRT_DIV \(value): sample rate = gyro output rate / \(Int(value) + 1)"
      )
    case ConfigRegister.address:
      let config = ConfigRegister(bits: value)
      let filter = config.lowPassFilter.map(\.description) ?? "DLPF_CFG 7 (reserved)"
      return (ConfigRegister.name, "\(filter), EXT_SYNC_SET \(config.externalSync.rawValue)")
    case GyroConfigRegister.address:
      let config = GyroConfigRegister(bits: value)
      return (
        GyroConfigRegister.name,
        "FS_SEL \(config.fullScale.rawValue) (\(config.fullScale)), self-test \(axes(config.selfTest))"
      )
    case AccelConfigRegister.address:
      let config = AccelConfigRegister(bits: value)
      return (
        AccelConfigRegister.name,
        "AFS_SEL \(config.fullScale.rawValue) (\(config.fullScale)), self-test \(axes(config.selfTest))"
      )
    case AccelConfig2Register.address:
      let config = AccelConfig2Register(bits: value)
      return (
        AccelConfig2Register.name,
        "A_DLPF_CFG \(config.lowPassFilterCode), filter \(config.filterBypassed ? "bypassed" : "on")"
          + " (MPU-6500 family)"
      )
    case FIFOEnableRegister.address:
      let fifo = FIFOEnableRegister(bits: value)
      return (
        FIFOEnableRegister.name,
        "accel \(onOff(fifo.accelerometer)), temp \(onOff(fifo.temperature)), gyro "
          + "\(axes(fifo.gyro)), external \(fifo.externalSensors): \(fifo.recordLength) bytes/record"
      )
    case InterruptPinConfigRegister.address:
      let pin = InterruptPinConfigRegister(bits: value)
      return (
        InterruptPinConfigRegister.name,
        "active \(pin.activeLow ? "low" : "high"), \(pin.openDrain ? "open drain" : "push-pull"), "
          + "\(pin.latched ? "latched" : "50 µs pulse"), status cleared by "
          + "\(pin.clearOnAnyRead ? "any read" : "reading INT_STATUS"), bypass "
          + onOff(pin.auxiliaryBypass)
      )
    case InterruptEnableRegister.address:
      let enable = InterruptEnableRegister(bits: value)
      return (
        InterruptEnableRegister.name,
        "DATA_RDY_EN \(onOff(enable.dataReady)), FIFO_OFLOW_EN \(onOff(enable.fifoOverflow)), "
          + "I2C_MST_INT_EN \(onOff(enable.auxiliaryMaster))"
      )
    case InterruptStatusRegister.address:
      let status = InterruptStatusRegister(bits: value)
      return (
        InterruptStatusRegister.name,
        "DATA_RDY_INT \(status.dataReady ? 1 : 0), FIFO_OFLOW_INT \(status.fifoOverflow ? 1 : 0)"
      )
    case MeasurementRegisters.accelXHigh...MeasurementRegisters.gyroZLow:
      let names = [
        "ACCEL_XOUT", "ACCEL_YOUT", "ACCEL_ZOUT", "TEMP_OUT", "GYRO_XOUT", "GYRO_YOUT",
        "GYRO_ZOUT",
      ]
      let index = Int(register - MeasurementRegisters.accelXHigh)
      return (names[index / 2] + (index % 2 == 0 ? "_H" : "_L"), "")
    case SignalPathResetRegister.address:
      return (SignalPathResetRegister.name, "write-only resets")
    case UserControlRegister.address:
      let control = UserControlRegister(bits: value)
      return (
        UserControlRegister.name,
        "FIFO_EN \(onOff(control.fifoEnabled)), I2C_MST_EN \(onOff(control.auxiliaryMasterEnabled))"
      )
    case PowerManagement1Register.address:
      let power = PowerManagement1Register(bits: value)
      return (
        PowerManagement1Register.name,
        "\(power.sleep ? "ASLEEP" : "awake"), clock \(power.clockSource), cycle "
          + "\(onOff(power.cycle)), temperature sensor \(power.temperatureDisabled ? "off" : "on")"
          + (power.deviceReset ? ", DEVICE_RESET in progress" : "")
      )
    case PowerManagement2Register.address:
      let power = PowerManagement2Register(bits: value)
      return (
        PowerManagement2Register.name,
        "standby accel \(axes(power.accelerometerStandby)), gyro \(axes(power.gyroStandby))"
      )
    case FIFORegisters.countHigh: return ("FIFO_COUNTH", "")
    case FIFORegisters.countLow: return ("FIFO_COUNTL", "")
    case WhoAmIRegister.address:
      let model = ChipModel.identify(whoAmI: value)
      return (WhoAmIRegister.name, model.map(\.name) ?? "unknown part")
    default:
      return (hexByte(register), "")
    }
  }
}

extension MPU6050Driver {
  /// Reads the registers the driver uses (not INT_STATUS, whose read clears it) and decodes
  /// them; the measurement registers are also shown as counts and in SI units with the ranges
  /// the chip holds. For probes and diagnostics, not the sample path (it allocates).
  public mutating func readRegisterDump() throws(MPU6050Error) -> MPU6050RegisterDump {
    var entries: [MPU6050RegisterDump.Entry] = []
    var values = [UInt8](repeating: 0, count: 128)
    for (start, count) in MPU6050RegisterDump.blocks(family: identity?.family ?? .mpu6050) {
      var block = Block()
      if let error = readBlock(start, count: count, into: &block) { throw .bus(error) }
      block.withBytes { bytes in
        for offset in 0..<count { values[Int(start) + offset] = bytes[offset] }
      }
      for offset in 0..<count {
        let register = start + UInt8(offset)
        let (name, meaning) = MPU6050RegisterDump.decode(
          register: register, value: values[Int(register)])
        entries.append(
          .init(address: register, name: name, value: values[Int(register)], meaning: meaning))
      }
    }
    // The measurements, decoded in pairs with the ranges the chip holds now.
    let gyro = GyroConfigRegister(bits: values[Int(GyroConfigRegister.address)]).fullScale
    let accel = AccelConfigRegister(bits: values[Int(AccelConfigRegister.address)]).fullScale
    let burst = Int(MeasurementRegisters.accelXHigh)
    let raw = values.withUnsafeBytes {
      MPU6050RawSample(
        validated: UnsafeRawBufferPointer(
          rebasing: $0[burst..<(burst + MeasurementRegisters.burstLength)]))
    }
    let sample = MPU6050Conversion.convert(
      raw,
      scale: MPU6050Scale(
        gyroFullScale: gyro, accelerometerFullScale: accel,
        temperature: identity?.temperature ?? .mpu6050))
    let count =
      Int(values[Int(FIFORegisters.countHigh)]) << 8 | Int(values[Int(FIFORegisters.countLow)])
    for index in entries.indices {
      switch entries[index].address {
      case MeasurementRegisters.accelXHigh, MeasurementRegisters.accelYHigh,
        MeasurementRegisters.accelZHigh:
        let axis = Int(entries[index].address - MeasurementRegisters.accelXHigh) / 2
        entries[index].meaning =
          "\(raw.accelerometer[axis]) counts = "
          + "\(decimal(sample.specificForceMetersPerSecondSquared[axis])) m/s² (\(accel))"
      case MeasurementRegisters.temperatureHigh:
        entries[index].meaning =
          "\(raw.temperature) counts = \(decimal(sample.temperatureCelsius, fractionDigits: 2)) °C"
      case MeasurementRegisters.gyroXHigh, MeasurementRegisters.gyroYHigh,
        MeasurementRegisters.gyroZHigh:
        let axis = Int(entries[index].address - MeasurementRegisters.gyroXHigh) / 2
        entries[index].meaning =
          "\(raw.gyro[axis]) counts = \(decimal(sample.angularRateRadiansPerSecond[axis], fractionDigits: 4)) rad/s (\(gyro))"
      case FIFORegisters.countHigh:
        entries[index].meaning = "\(count) bytes in the FIFO"
      default:
        break
      }
    }
    return MPU6050RegisterDump(entries: entries)
  }
}
