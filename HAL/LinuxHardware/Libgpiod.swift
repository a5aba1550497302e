import CLibGPIOD
import Glibc
import HardwareAbstraction

// Everything that touches libgpiod lives in this file, and it calls libgpiod only through
// CLibGPIOD's shim (HAL/CLibGPIOD/shim.h): one small API over libgpiod v1 and v2, chosen when
// the shim is compiled, with v1's errno answers on both. Importing CLibGPIOD brings its own copy
// of `struct timespec` (gpiod.h includes <time.h>), which hides POSIXSupport's conversions on
// Glibc's `timespec`; so the seam (`EdgeEventCalls`) speaks nanoseconds and `Timestamp`.

/// libgpiod calls (v1 or v2) for `LinuxDataReadyLine`.
enum Libgpiod {
  /// An open chip with one line requested for rising-edge events on it.
  typealias Handle = UnsafeMutablePointer<plumb_gpio_line>

  /// The libgpiod API this build was compiled against: "v1" or "v2".
  static let api = PLUMB_LIBGPIOD_API

  /// The version of the libgpiod library linked in, e.g. "1.6.3" or "2.2.1".
  static var libraryVersion: String { String(cString: plumb_gpio_library_version()) }

  /// Opens the chip, finds the line and requests rising-edge events, releasing what was
  /// acquired when a later step fails. Errors name the chip and line as given.
  static func requestRisingEdges(
    chip: GPIOChipSelector, line: GPIOLineSelector, consumer: String
  ) throws(DataReadyError) -> Handle {
    func failure(_ stage: LinuxDataReadyLine.GPIOStage) -> DataReadyError {
      let code = Errno.current
      return DataReadyError(
        LinuxDataReadyLine.faultKind(for: code, during: stage), errno: code,
        chip: chip.description, line: line.description)
    }

    Glibc.errno = 0
    let opened: Handle? =
      switch chip {
      case .path(let path): plumb_gpio_open_chip_by_path(path)
      // The device /dev/NAME.
      case .name(let name): plumb_gpio_open_chip_by_name(name)
      // Opens every /dev/gpiochip* to read its label; ENOENT when none has it.
      case .label(let label): plumb_gpio_open_chip_by_label(label)
      }
    guard let handle = opened else { throw failure(.openChip) }

    Glibc.errno = 0
    let found: CInt =
      switch line {
      case .offset(let offset): plumb_gpio_find_line_by_offset(handle, offset)
      case .name(let name): plumb_gpio_find_line_by_name(handle, name)
      }
    if found != 0 {
      let error = failure(.findLine)
      plumb_gpio_release(handle)
      throw error
    }

    Glibc.errno = 0
    if plumb_gpio_request_rising_edges(handle, consumer) != 0 {
      let error = failure(.requestEvents)
      plumb_gpio_release(handle)
      throw error
    }
    return handle
  }

  /// Releases the line request and closes the chip.
  static func release(_ handle: Handle) {
    plumb_gpio_release(handle)
  }

  /// The waiting calls for a requested line. None of them allocates.
  static func eventCalls(_ handle: Handle) -> EdgeEventCalls {
    EdgeEventCalls(
      wait: { timeoutNanoseconds in plumb_gpio_wait(handle, timeoutNanoseconds) },
      read: { stamp in
        var nanoseconds: Int64 = 0
        let result = plumb_gpio_read_event(handle, &nanoseconds)
        if result == 0 { stamp = Timestamp(nanoseconds: nanoseconds) }
        return result
      },
      monotonicNow: { LinuxClocks.read(CLOCK_MONOTONIC) },
      realtimeNow: { LinuxClocks.read(CLOCK_REALTIME) })
  }
}
