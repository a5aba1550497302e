import CLibGPIOD
import Glibc
import HardwareAbstraction

// Everything that touches libgpiod lives in this file. Importing CLibGPIOD brings its own copy
// of `struct timespec` (gpiod.h includes <time.h>), which hides POSIXSupport's conversions
// on Glibc's `timespec`; so the seam (`EdgeEventCalls`) speaks nanoseconds and `Timestamp`,
// and the conversions here are written out field by field.

/// libgpiod v1 calls for `LinuxDataReadyLine`.
enum Libgpiod {
  /// An open chip and a line requested for events on it.
  struct Handles {
    var chip: OpaquePointer
    var line: OpaquePointer
  }

  /// Opens the chip, finds the line and requests rising-edge events, releasing what was
  /// acquired when a later step fails. Errors name the chip and line as given.
  static func requestRisingEdges(
    chip: GPIOChipSelector, line: GPIOLineSelector, consumer: String
  ) throws(DataReadyError) -> Handles {
    func failure(_ stage: LinuxDataReadyLine.GPIOStage) -> DataReadyError {
      let code = Errno.current
      return DataReadyError(
        LinuxDataReadyLine.faultKind(for: code, during: stage), errno: code,
        chip: chip.description, line: line.description)
    }

    Glibc.errno = 0
    let opened: OpaquePointer? =
      switch chip {
      case .path(let path): gpiod_chip_open(path)
      case .name(let name): gpiod_chip_open_by_name(name)
      // Scans every /dev/gpiochip* (gpiod_chip_iter) for the label; ENOENT when none has it.
      case .label(let label): gpiod_chip_open_by_label(label)
      }
    guard let chipHandle = opened else { throw failure(.openChip) }

    Glibc.errno = 0
    let found: OpaquePointer? =
      switch line {
      case .offset(let offset): gpiod_chip_get_line(chipHandle, offset)
      case .name(let name): gpiod_chip_find_line(chipHandle, name)
      }
    guard let lineHandle = found else {
      let error = failure(.findLine)
      gpiod_chip_close(chipHandle)
      throw error
    }

    Glibc.errno = 0
    if gpiod_line_request_rising_edge_events(lineHandle, consumer) != 0 {
      let error = failure(.requestEvents)
      gpiod_chip_close(chipHandle)
      throw error
    }
    return Handles(chip: chipHandle, line: lineHandle)
  }

  /// Releases the line request and closes the chip.
  static func release(_ handles: Handles) {
    gpiod_line_release(handles.line)
    gpiod_chip_close(handles.chip)
  }

  /// The waiting calls for a requested line. None of them allocates.
  static func eventCalls(line: OpaquePointer) -> EdgeEventCalls {
    EdgeEventCalls(
      wait: { timeoutNanoseconds in
        var timeout = timespec(
          tv_sec: Int(timeoutNanoseconds / 1_000_000_000),
          tv_nsec: Int(timeoutNanoseconds % 1_000_000_000))
        return gpiod_line_event_wait(line, &timeout)
      },
      read: { stamp in
        var event = gpiod_line_event()
        let result = gpiod_line_event_read(line, &event)
        if result == 0 {
          stamp = Timestamp(
            nanoseconds: Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec))
        }
        return result
      },
      monotonicNow: { LinuxClocks.read(CLOCK_MONOTONIC) },
      realtimeNow: { LinuxClocks.read(CLOCK_REALTIME) })
  }
}
