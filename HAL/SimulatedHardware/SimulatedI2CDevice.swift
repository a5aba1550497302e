import HardwareAbstraction

/// A device that answers on a simulated I2C bus at an address: the simulated MPU-6050, or any
/// register file a test needs.
///
/// The bus calls these for transfers addressed to the device after consulting its fault plan;
/// a device can fail a transfer itself (a chip in reset NACKs) by throwing.
public protocol SimulatedI2CDevice: AnyObject {
  /// An SMBus write-byte-data transfer to `register`.
  func writeRegister(_ register: UInt8, value: UInt8) throws(I2CError)

  /// An SMBus I2C-block read of `buffer.count` bytes starting at `register`, in one transaction
  /// (the device decides how its register pointer advances, e.g. the MPU-6050's FIFO_R_W does not).
  func readRegisters(startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer)
    throws(I2CError)
}

/// Something that raises rising edges on a simulated data-ready line: a simulated chip's INT pin.
///
/// The line asks for the next edge after the current time, then moves the `ManualClock` there
/// (or to the caller's deadline, when that comes first). Everything runs on one thread, so the
/// source's configuration cannot change while the line waits.
///
/// **History.** `SimulatedDataReadyLine` asks for the edge after the *last edge it took*,
/// which lies in the past when the loop was late (edges that happened while nobody waited
/// are queued, as the kernel queues them). A source should therefore answer for past instants
/// with what happened then, and must never invent an edge the pin did not raise: remember when
/// the pin was last (re)armed (wake-up, reset, new sample rate, interrupt enabled) and answer
/// no edge before that instant. Edges the old configuration raised between the line's last
/// wait and a reconfiguration may be forgotten (they are then never produced, not lost).
/// Answers must be strictly after `instant`; the line counts any other answer as a source bug
/// (`EdgeStatistics.rejectedSourceEdges`) and treats it as "no edge".
public protocol EdgeSource: AnyObject {
  /// The first rising edge strictly after `instant`, or `nil` when the pin will not rise (the
  /// interrupt is disabled, the chip is asleep).
  func nextRisingEdge(after instant: Timestamp) -> Timestamp?
}
