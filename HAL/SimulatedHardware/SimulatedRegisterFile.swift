import HardwareAbstraction

/// The simplest simulated device: 256 byte-wide registers that read back what was written,
/// with the register pointer incrementing through a block read and wrapping from 0xFF to 0x00
/// (as Linux's `i2c-stub` behaves). For bus tests and tools that need something at an address;
/// the MPU-6050 has its own model.
public final class SimulatedRegisterFile: SimulatedI2CDevice {
  /// The register contents, indexed by register address.
  public private(set) var registers: [UInt8]
  /// Register writes received.
  public private(set) var writeCount: UInt64 = 0
  /// Block reads received.
  public private(set) var readCount: UInt64 = 0

  /// A register file holding `initial` (register → value); every other register reads 0.
  public init(_ initial: [UInt8: UInt8] = [:]) {
    registers = Array(repeating: 0, count: 256)
    for (register, value) in initial { registers[Int(register)] = value }
  }

  /// One register's value; setting it does not count as a bus write.
  public subscript(register: UInt8) -> UInt8 {
    get { registers[Int(register)] }
    set { registers[Int(register)] = newValue }
  }

  public func writeRegister(_ register: UInt8, value: UInt8) throws(I2CError) {
    writeCount += 1
    registers[Int(register)] = value
  }

  public func readRegisters(startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer)
    throws(I2CError)
  {
    readCount += 1
    for offset in 0..<buffer.count {
      buffer[offset] = registers[(Int(register) + offset) & 0xFF]
    }
  }
}
