import HardwareAbstraction
import LinuxHardware
import SimulatedHardware

/// The serial port `plumb run` writes to: a tty through termios, a pseudo-terminal's host end,
/// standard output, or a file. An enum rather than an existential so the loop stays generic
/// over a concrete type and its calls are direct.
public enum SelectedPort: SerialPort {
  case termios(TermiosSerialPort)
  case descriptor(DescriptorSerialPort)
  case memory(MemorySerialPort)

  public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    switch self {
    case .termios(let port): try port.write(bytes)
    case .descriptor(let port): try port.write(bytes)
    case .memory(let port): try port.write(bytes)
    }
  }

  public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int {
    switch self {
    case .termios(let port): try port.read(into: buffer)
    case .descriptor(let port): try port.read(into: buffer)
    case .memory(let port): try port.read(into: buffer)
    }
  }

  public mutating func close() {
    switch self {
    case .termios(let port): port.close()
    case .descriptor(let port): port.close()
    case .memory(let port): port.close()
    }
  }

  public mutating func reopen() throws(SerialError) {
    switch self {
    case .termios(let port): try port.reopen()
    case .descriptor(let port): try port.reopen()
    case .memory(let port): try port.reopen()
    }
  }

  public var isOpen: Bool {
    switch self {
    case .termios(let port): port.isOpen
    case .descriptor(let port): port.isOpen
    case .memory(let port): port.isOpen
    }
  }

  /// Whether this is standard output and it has closed (its reader went away): unlike a
  /// device or a file, it can never be reopened.
  public var isStandardOutputGone: Bool {
    guard case .descriptor(let port) = self, port.name == "stdout" else { return false }
    return !port.isOpen && port.writeFailure == nil
  }

  /// Why the file the frames go to stopped taking them (a full disk, a size limit), once it
  /// has: a file does not come back, unlike a device.
  public var writeFailure: SerialError? {
    guard case .descriptor(let port) = self else { return nil }
    return port.writeFailure
  }

  /// The bytes of whole frames in the file the frames go to (nil for a device or a pipe).
  public var fileLength: Int64? {
    guard case .descriptor(let port) = self, port.writeFailure != nil || port.fileLength > 0
    else { return nil }
    return port.fileLength
  }

  public var statistics: SerialStatistics {
    switch self {
    case .termios(let port): port.statistics
    case .descriptor(let port): port.statistics
    case .memory(let port): port.statistics
    }
  }
}

/// The data-ready line of a real board: the GPIO, or none when the INT pin is not wired (the
/// loop then drains the FIFO on a timer and never waits on the line).
public enum SelectedLine: DataReadyLine {
  case gpio(LinuxDataReadyLine)
  case notWired

  public mutating func waitForEdge(until deadline: Timestamp) throws(DataReadyError) -> EdgeWait {
    switch self {
    case .gpio(let line): try line.waitForEdge(until: deadline)
    case .notWired: .timedOut
    }
  }
}
